package main

import (
	_ "embed" // retry_policy.json
	"encoding/json"
	"strings"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/encoding/gzip"
	_ "google.golang.org/grpc/health" // client-side health checking (healthCheckConfig)
	"google.golang.org/grpc/resolver"
	"google.golang.org/grpc/resolver/manual"
)

const serviceName = "arbiter.v1.ArbiterService"

// retryPolicy is the standard retry policy on every one-shot RPC of the contract, which
// are pure and so safe to send again: the `methodConfig` entry of a service config, read
// from retry_policy.json, which is written from the contract itself (the repository's
// tests/clients.rs writes it and fails when it lacks an RPC), and embedded in the binary.
// Live games are not retried: a lost game is resumed from its history
// (playConnectFourResumably).
//
//go:embed retry_policy.json
var retryPolicy []byte

// serviceConfig is the channel's service config: retryPolicy, and when balanced, round
// robin with client-side health checking, so that a replica draining for a deploy (its
// health says NOT_SERVING) leaves the rotation before it stops.
func serviceConfig(balanced bool) string {
	config := map[string]any{"methodConfig": []json.RawMessage{retryPolicy}}
	if balanced {
		config["loadBalancingConfig"] = []any{map[string]any{"round_robin": map[string]any{}}}
		config["healthCheckConfig"] = map[string]string{"serviceName": serviceName}
	}
	text, err := json.Marshal(config)
	if err != nil {
		panic(err) // retry_policy.json is not JSON: the build embedded a broken file
	}
	return string(text)
}

// dialOptions are the options of every connection: plaintext, gzip on every call.
func dialOptions() []grpc.DialOption {
	return []grpc.DialOption{
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithDefaultCallOptions(grpc.UseCompressor(gzip.Name)),
	}
}

// dial makes the client's channel to one server (host:port, resolved by DNS), or to
// several replicas given as host:port,host:port, balanced over. grpc.NewClient connects
// lazily, on the first call, and reconnects by itself: the channel is made once and
// shared by every call.
func dial(address string) (*grpc.ClientConn, error) {
	if strings.Contains(address, ",") {
		return dialReplicas(strings.Split(address, ","))
	}
	options := append(dialOptions(), grpc.WithDefaultServiceConfig(serviceConfig(false)))
	return grpc.NewClient(address, options...)
}

// dialReplicas balances calls over several replicas without a proxy: a resolver that
// holds their addresses, round robin, and client-side health checking. Further options
// (interceptors, say) may be added.
//
// grpc.WithAuthority is required: the :authority of every call is otherwise the
// target's endpoint, here the address list, which the server's HTTP/2 layer refuses as
// malformed before the server sees the call (every call fails INTERNAL, "stream
// terminated by RST_STREAM", or with health checking on, no replica becomes ready).
func dialReplicas(addresses []string, extra ...grpc.DialOption) (*grpc.ClientConn, error) {
	target, options := replicasTarget(addresses)
	options = append(options, grpc.WithAuthority("arbiter"))
	return grpc.NewClient(target, append(options, extra...)...)
}

// replicasTarget is dialReplicas' target and options, without the authority.
func replicasTarget(addresses []string) (string, []grpc.DialOption) {
	replicas := manual.NewBuilderWithScheme("arbiter")
	var state resolver.State
	for _, address := range addresses {
		state.Addresses = append(state.Addresses, resolver.Address{Addr: address})
	}
	replicas.InitialState(state)
	options := append(dialOptions(),
		grpc.WithResolvers(replicas),
		grpc.WithDefaultServiceConfig(serviceConfig(true)))
	return replicas.Scheme() + ":///" + strings.Join(addresses, ","), options
}
