package arbiter.examples;

import arbiter.v1.JudgeTicTacToeRequest;
import arbiter.v1.PlayConnectFourResponse;
import arbiter.v1.TicTacToeMove;
import arbiter.v1.Verdict;
import arbiter.v1.ArbiterServiceGrpc;
import arbiter.v1.ArbiterServiceGrpc.ArbiterServiceBlockingStub;
import io.grpc.CallOptions;
import io.grpc.Channel;
import io.grpc.ClientCall;
import io.grpc.ClientInterceptor;
import io.grpc.ForwardingClientCall;
import io.grpc.LoadBalancerRegistry;
import io.grpc.ManagedChannel;
import io.grpc.MethodDescriptor;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Balancing over three running replicas from grpc-java, as {@link Channels#forReplicas} does
 * it: a resolver that lists the three addresses, round robin, client-side health checking.
 * Each replica is given as {@code ADDRESS,METRICS_URL,PID} (run.sh starts them):
 *
 * <ol>
 *   <li>Without {@code overrideAuthority} the channel sends the address list as
 *       {@code :authority}, which the server's HTTP/2 layer (h2) refuses: every call fails.
 *       If a call gets through, h2 accepts it now and the README's advice can go.
 *   <li>With it, 300 calls spread over all three replicas (read from their metrics).
 *   <li>A game whose replica dies (SIGKILL) goes on from its history on another replica.
 *   <li>A replica that drains (SIGTERM: health NOT_SERVING, calls still served) leaves the
 *       rotation, and no call is lost: grpc-java's client-side health checking, which
 *       grpc-services brings. The check fails if it is not on the classpath (with Maven
 *       Central, the grpc-services dependency; with Debian's packages, run.sh compiles it
 *       from Debian's grpc-java source).
 * </ol>
 *
 * <pre>
 * mvn compile exec:java -Dexec.mainClass=arbiter.examples.ReplicasCheck \
 *     -Dexec.args="ADDR,METRICS,PID ADDR,METRICS,PID ADDR,METRICS,PID"
 * </pre>
 */
public final class ReplicasCheck {
  private static final String JUDGE = Channels.SERVICE + "/JudgeTicTacToe";
  private static final HttpClient HTTP =
      HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

  /** One running replica. */
  record Replica(String address, URI metrics, long pid) {
    static Replica parse(String spec) {
      String[] parts = spec.split(",");
      if (parts.length != 3) {
        throw new IllegalArgumentException("not ADDRESS,METRICS_URL,PID: " + spec);
      }
      return new Replica(parts[0], URI.create(parts[1]), Long.parseLong(parts[2]));
    }

    /** How many JudgeTicTacToe calls this replica has answered OK. */
    long judged() throws IOException, InterruptedException {
      HttpRequest request = HttpRequest.newBuilder(metrics).timeout(Duration.ofSeconds(5)).build();
      String text = HTTP.send(request, HttpResponse.BodyHandlers.ofString()).body();
      return text.lines()
          .filter(line -> line.startsWith("arbiter_calls_total{")
              && line.contains("rpc=\"" + JUDGE + "\"") && line.contains("code=\"Ok\""))
          .mapToLong(line -> (long) Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1)))
          .sum();
    }

    /** How many live Connect Four games this replica holds. */
    long liveConnectFourGames() throws IOException, InterruptedException {
      HttpRequest request = HttpRequest.newBuilder(metrics).timeout(Duration.ofSeconds(5)).build();
      String text = HTTP.send(request, HttpResponse.BodyHandlers.ofString()).body();
      return text.lines()
          .filter(line -> line.startsWith("arbiter_live_games{game=\"connect_four\"}"))
          .mapToLong(line -> (long) Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1)))
          .sum();
    }

    void signal(boolean kill) {
      ProcessHandle process = ProcessHandle.of(pid)
          .orElseThrow(() -> new IllegalStateException("no process " + pid));
      if (kill) {
        process.destroyForcibly();
      } else {
        process.destroy();
      }
    }

    boolean alive() {
      return ProcessHandle.of(pid).map(ProcessHandle::isAlive).orElse(false);
    }
  }

  public static void main(String[] args) throws Exception {
    List<Replica> replicas = new ArrayList<>();
    for (String spec : args) {
      replicas.add(Replica.parse(spec));
    }
    if (replicas.size() != 3) {
      throw new IllegalArgumentException("three replicas: ADDRESS,METRICS_URL,PID each");
    }
    List<String> addresses = replicas.stream().map(Replica::address).toList();
    // grpc-services registers a round_robin that honours the service config's
    // healthCheckConfig, in place of grpc-core's; without it the check below cannot hold.
    String roundRobin =
        LoadBalancerRegistry.getDefaultRegistry().getProvider("round_robin").getClass().getName();
    boolean healthChecking = roundRobin.contains("HealthChecking");
    System.out.println("client-side health checking: " + (healthChecking
        ? "on (grpc-services, " + roundRobin + ")" : "off (" + roundRobin + ")"));
    expect(healthChecking, "client-side health checking needs grpc-services on the classpath;"
        + " round_robin is " + roundRobin);

    withoutTheAuthority(addresses, healthChecking);

    ManagedChannel channel = Channels.forReplicas(addresses);
    try {
      ArbiterServiceBlockingStub stub = ArbiterServiceGrpc.newBlockingStub(channel);
      List<Long> counts = spread(replicas, stub, 300);
      expect(counts.stream().allMatch(n -> n >= 50),
          "300 calls spread over all three replicas: " + counts);
      System.out.println("ok   round robin over three replicas: " + counts);

      List<Replica> alive = aGameOutlivesItsReplica(replicas, channel);

      aDrainingReplicaLeavesTheRotation(alive, stub);
    } finally {
      channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
    }
    System.out.println("replicas: all checks passed");
  }

  /** 1. The address list as :authority: refused before the server sees the call. */
  private static void withoutTheAuthority(List<String> addresses, boolean healthChecking)
      throws InterruptedException {
    ManagedChannel channel = Channels.replicasBuilder(addresses).build();
    try {
      judge(ArbiterServiceGrpc.newBlockingStub(channel));
      throw new IllegalStateException("a call with the address list as :authority succeeded: h2"
          + " accepts it now, so overrideAuthority can go from Channels.forReplicas");
    } catch (StatusRuntimeException error) {
      Status status = error.getStatus();
      // Without health checking the call itself is reset (RST_STREAM, PROTOCOL_ERROR); with it,
      // the health watch is, and every replica is marked down.
      boolean refused = healthChecking
          ? status.getCode() == Status.Code.UNAVAILABLE
          : status.getCode() == Status.Code.INTERNAL
              && String.valueOf(status.getDescription()).contains("RST_STREAM");
      expect(refused, "the address list as :authority is refused, got " + status);
      System.out.println("ok   without overrideAuthority: " + status.getCode() + " ("
          + status.getDescription() + ")");
    } finally {
      channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
    }
  }

  /**
   * 3. A Connect Four game is played half way; the replica that holds it is killed, and
   * {@link ArbiterClient#playConnectFourResumably} finishes it on another from its history.
   * Returns the replicas left.
   */
  private static List<Replica> aGameOutlivesItsReplica(List<Replica> replicas, ManagedChannel channel)
      throws Exception {
    List<Integer> drops = List.of(0, 1, 1, 2, 2, 3, 2, 3, 3, 6, 3);
    Replica[] holder = new Replica[1];
    // Before the fifth drop (the sixth message, after the setup), the replica that holds the
    // game is found from the replicas' metrics and killed.
    PlayConnectFourResponse last = ArbiterClient.playConnectFourResumably(
        ArbiterServiceGrpc.newStub(channel).withInterceptors(new BeforeMessage(6, () -> {
          for (Replica replica : replicas) {
            if (replica.liveConnectFourGames() == 1) {
              holder[0] = replica;
              replica.signal(true);
              waitForExit(replica);
              return;
            }
          }
          throw new IllegalStateException("no replica holds the game");
        })),
        6, 7, drops);
    expect(holder[0] != null, "the game's replica was killed");
    expect(last.getVerdict() == Verdict.VERDICT_A_WINS && last.getMovesPlayed() == 11,
        "the game goes on after its replica died, and player 1 wins on a diagonal");
    System.out.println("ok   a game whose replica died went on from its history on another: "
        + last.getVerdict() + " after " + last.getMovesPlayed() + " drops");
    return replicas.stream().filter(replica -> replica != holder[0]).toList();
  }

  /** 4. SIGTERM: the health watch takes the replica out, and no call fails. */
  private static void aDrainingReplicaLeavesTheRotation(
      List<Replica> alive, ArbiterServiceBlockingStub stub) throws Exception {
    Replica draining = alive.get(1);
    draining.signal(false);
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    while (spread(alive, stub, 30).get(1) != 0) {
      expect(System.nanoTime() < deadline, "the draining replica kept getting calls");
    }
    List<Long> counts = spread(alive, stub, 200);
    expect(counts.get(1) == 0 && counts.get(0) == 200, "every call to the replica left: " + counts);
    expect(draining.alive(), "the draining replica is still up");
    System.out.println("ok   a draining replica leaves the rotation, no call lost: " + counts);
  }

  /** Makes {@code count} calls and returns how many each replica answered. */
  private static List<Long> spread(List<Replica> replicas, ArbiterServiceBlockingStub stub,
      int count) throws IOException, InterruptedException {
    List<Long> before = new ArrayList<>();
    for (Replica replica : replicas) {
      before.add(replica.judged());
    }
    for (int i = 0; i < count; i++) {
      judge(stub);
    }
    List<Long> counts = new ArrayList<>();
    for (int i = 0; i < replicas.size(); i++) {
      counts.add(replicas.get(i).judged() - before.get(i));
    }
    expect(counts.stream().mapToLong(Long::longValue).sum() == count,
        "every call answered once: " + counts);
    return counts;
  }

  private static void judge(ArbiterServiceBlockingStub stub) {
    var reply = stub.withDeadlineAfter(5, TimeUnit.SECONDS).judgeTicTacToe(JudgeTicTacToeRequest
        .newBuilder().addMoves(TicTacToeMove.newBuilder().setRow(1).setCol(1)).build());
    expect(reply.getMovesPlayed() == 1, "one move played");
  }

  /** Waits until the replica's metrics stop answering: it is gone. */
  private static void waitForExit(Replica replica) throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    while (true) {
      try {
        replica.judged();
      } catch (IOException gone) {
        return;
      }
      expect(System.nanoTime() < deadline, "the killed replica exited");
      Thread.sleep(20);
    }
  }

  /** A step that may fail. */
  private interface Step {
    void run() throws Exception;
  }

  /** Runs a step once, just before the {@code n}th message that calls through it send. */
  private static final class BeforeMessage implements ClientInterceptor {
    private final int n;
    private final Step step;
    private final AtomicInteger sent = new AtomicInteger();

    BeforeMessage(int n, Step step) {
      this.n = n;
      this.step = step;
    }

    @Override
    public <ReqT, RespT> ClientCall<ReqT, RespT> interceptCall(
        MethodDescriptor<ReqT, RespT> method, CallOptions options, Channel next) {
      return new ForwardingClientCall.SimpleForwardingClientCall<>(next.newCall(method, options)) {
        @Override
        public void sendMessage(ReqT message) {
          if (sent.incrementAndGet() == n) {
            try {
              step.run();
            } catch (Exception e) {
              throw new IllegalStateException(e);
            }
          }
          super.sendMessage(message);
        }
      };
    }
  }

  private static void expect(boolean holds, String what) {
    if (!holds) {
      throw new ArbiterClient.WrongAnswer(what);
    }
  }
}
