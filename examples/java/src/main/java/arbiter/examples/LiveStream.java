package arbiter.examples;

import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.stub.StreamObserver;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.function.Function;

/**
 * A bidirectional stream driven one message at a time, as a game server or a bot plays: send
 * a move, wait for its reply, choose the next. The replies arrive on gRPC's threads and wait
 * in a queue; {@link #next} takes them in order.
 *
 * @param <Q> the requests
 * @param <R> the replies
 */
final class LiveStream<Q, R> implements StreamObserver<R> {
  /** What the queue holds once the server has ended the stream without an error. */
  private static final Object END = new Object();

  private final BlockingQueue<Object> events = new LinkedBlockingQueue<>();
  private StreamObserver<Q> requests;

  private LiveStream() {}

  /** Opens a stream with an async stub's method, such as {@code stub::playTicTacToe}. */
  static <Q, R> LiveStream<Q, R> open(Function<StreamObserver<R>, StreamObserver<Q>> call) {
    LiveStream<Q, R> stream = new LiveStream<>();
    stream.requests = call.apply(stream);
    return stream;
  }

  void send(Q request) {
    requests.onNext(request);
  }

  /** Ends the requests: the server then ends its replies. */
  void closeSend() {
    requests.onCompleted();
  }

  /**
   * The next reply, or null once the server has ended the stream; throws the status the
   * stream ended with if it failed. It waits at most until the call's deadline.
   */
  @SuppressWarnings("unchecked")
  R next() throws InterruptedException {
    Object event = events.take();
    if (event == END || event instanceof StatusRuntimeException) {
      events.add(event); // every later call sees the end too
    }
    if (event == END) {
      return null;
    }
    if (event instanceof StatusRuntimeException error) {
      throw error;
    }
    return (R) event;
  }

  @Override
  public void onNext(R reply) {
    events.add(reply);
  }

  @Override
  public void onError(Throwable error) {
    events.add(error instanceof StatusRuntimeException
        ? error
        : Status.fromThrowable(error).asRuntimeException());
  }

  @Override
  public void onCompleted() {
    events.add(END);
  }
}
