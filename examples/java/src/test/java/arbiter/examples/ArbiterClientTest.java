package arbiter.examples;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import arbiter.v1.ArbiterServiceGrpc;
import arbiter.v1.ArbiterServiceGrpc.ArbiterServiceBlockingStub;
import arbiter.v1.CheckConnectFourRequest;
import arbiter.v1.CheckConnectFourResponse;
import arbiter.v1.JudgeTicTacToeRequest;
import arbiter.v1.JudgeTicTacToeResponse;
import arbiter.v1.PlayConnectFourRequest;
import arbiter.v1.PlayConnectFourResponse;
import arbiter.v1.TicTacToeMove;
import io.grpc.Context;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.grpc.Server;
import io.grpc.ServerBuilder;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import io.grpc.ServerInterceptors;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.stub.StreamObserver;
import java.io.IOException;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The client's own behaviour, against a scripted server on loopback (no Arbiter needed): every
 * call gzipped and with a deadline, the one-shot RPCs retried on UNAVAILABLE by the service
 * config's retry policy and on nothing else, and a live game resumed from its history on the
 * statuses the README names and on no other.
 */
class ArbiterClientTest {
  private static final Metadata.Key<String> ENCODING =
      Metadata.Key.of("grpc-encoding", Metadata.ASCII_STRING_MARSHALLER);

  /** What the server saw of each call: its method, its grpc-encoding, whether it had a deadline. */
  record Seen(String method, String encoding, boolean deadline) {}

  private final List<Seen> seen = new CopyOnWriteArrayList<>();
  private final Scripted service = new Scripted();
  private Server server;
  private ManagedChannel channel;

  @BeforeEach
  void start() throws IOException {
    ServerInterceptor record = new ServerInterceptor() {
      @Override
      public <Q, R> ServerCall.Listener<Q> interceptCall(
          ServerCall<Q, R> call, Metadata headers, ServerCallHandler<Q, R> next) {
        seen.add(new Seen(call.getMethodDescriptor().getFullMethodName(), headers.get(ENCODING),
            Context.current().getDeadline() != null));
        return next.startCall(call, headers);
      }
    };
    server = ServerBuilder.forPort(0)
        .addService(ServerInterceptors.intercept(service, record))
        .build()
        .start();
    channel = Channels.forTarget("127.0.0.1:" + server.getPort());
  }

  @AfterEach
  void stop() throws InterruptedException {
    channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
    server.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
  }

  private static JudgeTicTacToeRequest oneMove() {
    return JudgeTicTacToeRequest.newBuilder()
        .addMoves(TicTacToeMove.newBuilder().setRow(1).setCol(1)).build();
  }

  @Test
  void everyCallIsGzippedAndHasADeadline() throws InterruptedException {
    ArbiterServiceBlockingStub stub = ArbiterServiceGrpc.newBlockingStub(channel);
    assertEquals(1, stub.judgeTicTacToe(oneMove()).getMovesPlayed());
    ArbiterClient.playConnectFourResumably(ArbiterServiceGrpc.newStub(channel), 6, 7, List.of(3));
    assertEquals(2, seen.size(), "one unary call and one stream: " + seen);
    for (Seen call : seen) {
      assertEquals("gzip", call.encoding(), call.method() + " is gzipped");
      assertTrue(call.deadline(), call.method() + " has a deadline");
    }
  }

  @Test
  void aUnaryCallIsRetriedOnUnavailable() {
    service.unavailableFor.set(2);
    JudgeTicTacToeResponse reply =
        ArbiterServiceGrpc.newBlockingStub(channel).judgeTicTacToe(oneMove());
    assertEquals(1, reply.getMovesPlayed());
    assertEquals(3, service.judgeCalls.get(), "two UNAVAILABLE attempts, then the answer");
  }

  @Test
  void aUnaryCallGivesUpAfterFourAttempts() {
    service.unavailableFor.set(10);
    StatusRuntimeException error = assertThrows(StatusRuntimeException.class,
        () -> ArbiterServiceGrpc.newBlockingStub(channel).judgeTicTacToe(oneMove()));
    assertEquals(Status.Code.UNAVAILABLE, error.getStatus().getCode());
    assertEquals(4, service.judgeCalls.get(), "maxAttempts of the retry policy");
  }

  @Test
  void anAnswerIsNotRetried() {
    StatusRuntimeException error = assertThrows(StatusRuntimeException.class,
        () -> ArbiterServiceGrpc.newBlockingStub(channel)
            .checkConnectFour(CheckConnectFourRequest.getDefaultInstance()));
    assertEquals(Status.Code.INVALID_ARGUMENT, error.getStatus().getCode());
    assertEquals(1, service.checkCalls.get(), "INVALID_ARGUMENT is the answer: one attempt");
  }

  @Test
  void aLostGameIsResumedFromItsHistory() throws InterruptedException {
    service.failThirdDrop = Status.UNAVAILABLE.withDescription("server shutting down");
    // 7 is off the board: rejected, so not in the history.
    PlayConnectFourResponse last = ArbiterClient.playConnectFourResumably(
        ArbiterServiceGrpc.newStub(channel), 6, 7, List.of(3, 7, 4, 4, 5));
    assertEquals(2, service.setups.size(), "a second stream after the first was lost");
    assertEquals(List.of(), service.setups.get(0));
    assertEquals(List.of(3), service.setups.get(1), "the drops applied, and only those");
    assertEquals(List.of(4, 4, 5), service.dropsOf.get(1), "the unanswered drop is sent again");
    assertEquals(4, last.getMovesPlayed());
  }

  @Test
  void aResetStreamIsResumed() throws InterruptedException {
    service.failThirdDrop = Status.INTERNAL.withDescription(
        "RST_STREAM closed stream. HTTP/2 error code: INTERNAL_ERROR");
    PlayConnectFourResponse last = ArbiterClient.playConnectFourResumably(
        ArbiterServiceGrpc.newStub(channel), 6, 7, List.of(3, 4, 5, 6));
    assertEquals(2, service.setups.size());
    assertEquals(List.of(3, 4), service.setups.get(1));
    assertEquals(4, last.getMovesPlayed());
  }

  @Test
  void anyOtherStatusIsTheAnswer() {
    service.failThirdDrop = Status.DEADLINE_EXCEEDED.withDescription("idle");
    StatusRuntimeException error = assertThrows(StatusRuntimeException.class,
        () -> ArbiterClient.playConnectFourResumably(
            ArbiterServiceGrpc.newStub(channel), 6, 7, List.of(3, 4, 5, 6)));
    assertEquals(Status.Code.DEADLINE_EXCEEDED, error.getStatus().getCode());
    assertEquals(1, service.setups.size(), "not resumed");
  }

  @Test
  void resumableStatuses() {
    assertTrue(ArbiterClient.isResumable(Status.UNAVAILABLE));
    assertTrue(ArbiterClient.isResumable(Status.INTERNAL.withDescription(
        "Received Rst Stream: RST_STREAM closed stream. HTTP/2 error code: INTERNAL_ERROR")));
    assertFalse(ArbiterClient.isResumable(Status.INTERNAL.withDescription("a bug")));
    assertFalse(ArbiterClient.isResumable(Status.INTERNAL));
    assertFalse(ArbiterClient.isResumable(Status.DEADLINE_EXCEEDED));
    assertFalse(ArbiterClient.isResumable(Status.RESOURCE_EXHAUSTED));
    assertFalse(ArbiterClient.isResumable(Status.INVALID_ARGUMENT));
  }

  @Test
  void theReplicasServiceConfigBalancesWithHealthChecking() {
    Map<String, ?> config = Channels.serviceConfig(true);
    assertEquals(List.of(Map.of("round_robin", Map.of())), config.get("loadBalancingConfig"));
    assertEquals(Map.of("serviceName", Channels.SERVICE), config.get("healthCheckConfig"));
    assertNotNull(config.get("methodConfig"));
    assertFalse(Channels.serviceConfig(false).containsKey("loadBalancingConfig"));
    assertEquals("replicas:///10.0.0.1:50051,10.0.0.2:50051",
        ReplicasNameResolverProvider.target(List.of("10.0.0.1:50051", "10.0.0.2:50051")));
  }

  /**
   * The retry policy read from the jar (retry_policy.json, written from the contract by
   * tests/clients.rs) names every unary RPC of the stubs, and no stream: a stream is resumed
   * from its history, never sent again as it was.
   */
  @Test
  void theRetryPolicyNamesEveryUnaryRpcOfTheStubs() {
    Set<String> unary = ArbiterServiceGrpc.getServiceDescriptor().getMethods().stream()
        .filter(method -> method.getType() == MethodDescriptor.MethodType.UNARY)
        .map(MethodDescriptor::getFullMethodName)
        .collect(Collectors.toSet());
    Set<String> named = new HashSet<>();
    for (Object name : (List<?>) Channels.retryPolicy().get("name")) {
      Map<?, ?> method = (Map<?, ?>) name;
      named.add(method.get("service") + "/" + method.get("method"));
    }
    assertTrue(unary.contains("arbiter.v1.ArbiterService/CheckChessMove"), unary.toString());
    assertEquals(unary, named);
    Map<?, ?> policy = (Map<?, ?>) Channels.retryPolicy().get("retryPolicy");
    assertEquals(4.0, policy.get("maxAttempts"), "a number as grpc-java reads one: a double");
    assertEquals(List.of("UNAVAILABLE"), policy.get("retryableStatusCodes"));
    List<?> methodConfig = (List<?>) Channels.serviceConfig(false).get("methodConfig");
    assertEquals(List.of(Channels.retryPolicy()), methodConfig);
  }

  /** A scripted ArbiterService: only the calls the tests make. */
  static final class Scripted extends ArbiterServiceGrpc.ArbiterServiceImplBase {
    final AtomicInteger unavailableFor = new AtomicInteger();
    final AtomicInteger judgeCalls = new AtomicInteger();
    final AtomicInteger checkCalls = new AtomicInteger();
    /** How the first stream ends at its third drop; null: it does not. */
    volatile Status failThirdDrop;
    /** Each stream's setup history, and the drops it received. */
    final List<List<Integer>> setups = new CopyOnWriteArrayList<>();
    final List<List<Integer>> dropsOf = new CopyOnWriteArrayList<>();

    @Override
    public void judgeTicTacToe(
        JudgeTicTacToeRequest request, StreamObserver<JudgeTicTacToeResponse> replies) {
      judgeCalls.incrementAndGet();
      if (unavailableFor.getAndDecrement() > 0) {
        replies.onError(Status.UNAVAILABLE.withDescription("scripted").asRuntimeException());
        return;
      }
      replies.onNext(
          JudgeTicTacToeResponse.newBuilder().setMovesPlayed(request.getMovesCount()).build());
      replies.onCompleted();
    }

    @Override
    public void checkConnectFour(
        CheckConnectFourRequest request, StreamObserver<CheckConnectFourResponse> replies) {
      checkCalls.incrementAndGet();
      replies.onError(Status.INVALID_ARGUMENT.withDescription("scripted").asRuntimeException());
    }

    @Override
    public StreamObserver<PlayConnectFourRequest> playConnectFour(
        StreamObserver<PlayConnectFourResponse> replies) {
      int stream = setups.size();
      List<Integer> drops = new ArrayList<>();
      return new StreamObserver<>() {
        int played;
        boolean ended;

        @Override
        public void onNext(PlayConnectFourRequest message) {
          if (ended) {
            return;
          }
          PlayConnectFourResponse.Builder reply = PlayConnectFourResponse.newBuilder();
          if (message.getActionCase() == PlayConnectFourRequest.ActionCase.SETUP) {
            setups.add(List.copyOf(message.getSetup().getHistoryList()));
            dropsOf.add(drops);
            played = message.getSetup().getHistoryCount();
          } else {
            drops.add(message.getDrop());
            if (stream == 0 && drops.size() == 3 && failThirdDrop != null) {
              ended = true;
              replies.onError(failThirdDrop.asRuntimeException());
              return;
            }
            if (message.getDrop() >= 7) {
              reply.setRejected("column " + message.getDrop() + " is off the board");
            } else {
              played++;
            }
          }
          replies.onNext(reply.setMovesPlayed(played).build());
        }

        @Override
        public void onError(Throwable error) {}

        @Override
        public void onCompleted() {
          if (!ended) {
            replies.onCompleted();
          }
        }
      };
    }
  }
}
