package arbiter.examples;

import com.google.gson.Gson;
import com.google.gson.JsonParseException;
import io.grpc.CallOptions;
import io.grpc.Channel;
import io.grpc.ClientCall;
import io.grpc.ClientInterceptor;
import io.grpc.ManagedChannel;
import io.grpc.ManagedChannelBuilder;
import io.grpc.MethodDescriptor;
import io.grpc.NameResolverRegistry;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.Reader;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * The channels of the Arbiter client: to one server, or balanced over several replicas from
 * the client. Every call on them is gzip-compressed and has a deadline, and the one-shot
 * RPCs (all pure, so safe to send again) are retried on UNAVAILABLE by the standard gRPC
 * retry policy of the service config, read from the jar's {@code retry_policy.json}.
 */
public final class Channels {
  static final String SERVICE = "arbiter.v1.ArbiterService";

  /** The deadline of a call that does not set its own. */
  static final long DEFAULT_DEADLINE_SECONDS = 10;

  /**
   * The retry policy of the one-shot RPCs, the {@code methodConfig} entry of the service
   * config, as a classpath resource beside this class (src/main/resources, so in the jar). It
   * is not written by hand: tests/clients.rs writes it from the contract, naming every unary
   * RPC of {@code arbiter.v1.ArbiterService} (each answers from its request alone, so each is
   * safe to send again), and fails when it misses one.
   */
  static final String RETRY_POLICY = "retry_policy.json";

  private Channels() {}

  /** A channel to one server, such as "localhost:50051". */
  public static ManagedChannel forTarget(String target) {
    return configure(ManagedChannelBuilder.forTarget(target), serviceConfig(false)).build();
  }

  /**
   * A channel that balances calls over several replicas without a proxy: round robin, with
   * client-side health checking (where grpc-services is on the classpath), so that a replica
   * draining for a deploy (its health says NOT_SERVING) leaves the rotation before it stops.
   *
   * <p>The authority is set: without {@code overrideAuthority}, the channel would send the
   * resolver's service authority, here the whole address list, as {@code :authority}, which
   * the server's HTTP/2 layer refuses as malformed, so every call would fail.
   */
  public static ManagedChannel forReplicas(List<String> addresses) {
    return replicasBuilder(addresses).overrideAuthority("arbiter").build();
  }

  /** The builder of {@link #forReplicas}, before its authority is set. */
  static ManagedChannelBuilder<?> replicasBuilder(List<String> addresses) {
    NameResolverRegistry.getDefaultRegistry().register(new ReplicasNameResolverProvider());
    return configure(
        ManagedChannelBuilder.forTarget(ReplicasNameResolverProvider.target(addresses)),
        serviceConfig(true));
  }

  private static ManagedChannelBuilder<?> configure(
      ManagedChannelBuilder<?> builder, Map<String, ?> serviceConfig) {
    return builder
        .usePlaintext()
        .defaultServiceConfig(serviceConfig)
        .enableRetry()
        .intercept(new CallDefaults());
  }

  /**
   * The service config, as grpc-java takes it: the JSON document as maps and lists, numbers
   * as doubles.
   */
  static Map<String, ?> serviceConfig(boolean balanced) {
    Map<String, Object> config = new HashMap<>();
    config.put("methodConfig", List.of(retryPolicy()));
    if (balanced) {
      config.put("loadBalancingConfig", List.of(Map.of("round_robin", Map.of())));
      config.put("healthCheckConfig", Map.of("serviceName", SERVICE));
    }
    return config;
  }

  /**
   * The {@code methodConfig} entry of {@link #RETRY_POLICY}: {@code name} (every unary RPC)
   * and {@code retryPolicy}. Gson reads numbers as doubles, lists and objects as lists and
   * maps: the form grpc-java takes a service config in.
   */
  @SuppressWarnings("unchecked")
  static Map<String, ?> retryPolicy() {
    try (InputStream json = Channels.class.getResourceAsStream(RETRY_POLICY)) {
      if (json == null) {
        throw new IllegalStateException("no " + RETRY_POLICY + " beside " + Channels.class
            + " on the classpath");
      }
      try (Reader reader = new InputStreamReader(json, StandardCharsets.UTF_8)) {
        Object policy = new Gson().fromJson(reader, Object.class);
        if (!(policy instanceof Map<?, ?> entry) || !(entry.get("name") instanceof List<?>)
            || !(entry.get("retryPolicy") instanceof Map<?, ?>)) {
          throw new IllegalStateException(RETRY_POLICY + " is no methodConfig entry: " + policy);
        }
        return (Map<String, ?>) entry;
      }
    } catch (IOException | JsonParseException error) {
      throw new IllegalStateException("cannot read " + RETRY_POLICY, error);
    }
  }

  /** Gives every call gzip compression, and a deadline unless it has one. */
  private static final class CallDefaults implements ClientInterceptor {
    @Override
    public <ReqT, RespT> ClientCall<ReqT, RespT> interceptCall(
        MethodDescriptor<ReqT, RespT> method, CallOptions options, Channel next) {
      options = options.withCompression("gzip");
      if (options.getDeadline() == null) {
        options = options.withDeadlineAfter(DEFAULT_DEADLINE_SECONDS, TimeUnit.SECONDS);
      }
      return next.newCall(method, options);
    }
  }
}
