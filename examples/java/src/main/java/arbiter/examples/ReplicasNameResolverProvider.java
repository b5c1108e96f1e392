package arbiter.examples;

import io.grpc.EquivalentAddressGroup;
import io.grpc.NameResolver;
import io.grpc.NameResolverProvider;
import java.net.InetSocketAddress;
import java.net.URI;
import java.util.Arrays;
import java.util.List;

/**
 * Resolves a fixed list of replicas, {@code replicas:///HOST:PORT,HOST:PORT,...}, to one
 * address group per replica, so that round robin balances over them all (grpc-java has no
 * built-in target for a static address list).
 *
 * <p>As with grpc-java's own DNS resolver, the service authority is the name the target
 * gives, here the address list, so a channel over it must set {@code overrideAuthority}: see
 * {@link Channels#forReplicas}.
 */
final class ReplicasNameResolverProvider extends NameResolverProvider {
  static final String SCHEME = "replicas";

  /** The target that names these replicas. */
  static String target(List<String> addresses) {
    return SCHEME + ":///" + String.join(",", addresses);
  }

  @Override
  public NameResolver newNameResolver(URI target, NameResolver.Args args) {
    if (!SCHEME.equals(target.getScheme())) {
      return null;
    }
    String addresses = target.getPath().substring(1);
    List<EquivalentAddressGroup> groups = Arrays.stream(addresses.split(","))
        .map(ReplicasNameResolverProvider::socketAddress)
        .map(EquivalentAddressGroup::new)
        .toList();
    return new NameResolver() {
      private Listener2 listener;

      @Override
      public String getServiceAuthority() {
        return addresses;
      }

      @Override
      public void start(Listener2 listener) {
        this.listener = listener;
        refresh();
      }

      @Override
      public void refresh() {
        listener.onResult(ResolutionResult.newBuilder().setAddresses(groups).build());
      }

      @Override
      public void shutdown() {}
    };
  }

  /** HOST:PORT, the host an IP address (IPv6 in brackets) or a name. */
  private static InetSocketAddress socketAddress(String address) {
    int colon = address.lastIndexOf(':');
    if (colon < 0) {
      throw new IllegalArgumentException("not HOST:PORT: " + address);
    }
    String host = address.substring(0, colon).replace("[", "").replace("]", "");
    return new InetSocketAddress(host, Integer.parseInt(address.substring(colon + 1)));
  }

  @Override
  public String getDefaultScheme() {
    return SCHEME;
  }

  @Override
  protected boolean isAvailable() {
    return true;
  }

  @Override
  protected int priority() {
    return 5;
  }
}
