package main

// Tests of the channel and the resume loop against fake servers in the test process:
// they need no Arbiter server, so `go test ./...` runs them anywhere.

import (
	"context"
	"encoding/json"
	"net"
	"sync/atomic"
	"testing"
	"time"

	pb "github.com/arbiter-rules/arbiter/examples/go/arbiterv1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// fakeArbiter answers JudgeTicTacToe UNAVAILABLE twice, then as the rules do, and
// holds every PlayConnectFour stream open without answering until its client leaves.
type fakeArbiter struct {
	pb.UnimplementedArbiterServiceServer
	attempts int32
	streams  int32
}

func (f *fakeArbiter) JudgeTicTacToe(_ context.Context, request *pb.JudgeTicTacToeRequest) (*pb.JudgeTicTacToeResponse, error) {
	if atomic.AddInt32(&f.attempts, 1) <= 2 {
		return nil, status.Error(codes.Unavailable, "not yet")
	}
	return &pb.JudgeTicTacToeResponse{Verdict: pb.Verdict_VERDICT_PENDING, MovesPlayed: int32(len(request.GetMoves()))}, nil
}

func (f *fakeArbiter) PlayConnectFour(stream pb.ArbiterService_PlayConnectFourServer) error {
	atomic.AddInt32(&f.streams, 1)
	<-stream.Context().Done()
	return status.Error(codes.Unavailable, "gone")
}

// serveFake starts a fakeArbiter on loopback port 0 and a client channel to it (dial's).
func serveFake(t *testing.T) (*fakeArbiter, pb.ArbiterServiceClient) {
	t.Helper()
	listener, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	server := grpc.NewServer()
	fake := &fakeArbiter{}
	pb.RegisterArbiterServiceServer(server, fake)
	go server.Serve(listener)
	t.Cleanup(server.Stop)

	conn, err := dial(listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return fake, pb.NewArbiterServiceClient(conn)
}

// TestRetryPolicy holds that dial's service config retries a one-shot call on
// UNAVAILABLE (by default since grpc-go 1.40; no environment variable needed).
func TestRetryPolicy(t *testing.T) {
	fake, client := serveFake(t)
	ctx, cancel := context.WithTimeout(t.Context(), callTimeout)
	defer cancel()
	reply, err := client.JudgeTicTacToe(ctx, &pb.JudgeTicTacToeRequest{Moves: ticTacToeMoves([2]int32{1, 1})})
	if err != nil {
		t.Fatalf("not retried: %v", err)
	}
	if reply.GetMovesPlayed() != 1 || atomic.LoadInt32(&fake.attempts) != 3 {
		t.Fatalf("%d attempts, reply %v", atomic.LoadInt32(&fake.attempts), reply)
	}
}

// TestRetryPolicyNamesEveryOneShotRPC holds that the embedded retry policy names exactly
// the one-shot RPCs of the stubs this module compiles, so a contract grown by a one-shot
// RPC, stubs regenerated and retry_policy.json not written again (or the other way
// round), fails here as well as in the repository's tests/clients.rs.
func TestRetryPolicyNamesEveryOneShotRPC(t *testing.T) {
	var policy struct {
		Name []struct{ Service, Method string }
	}
	if err := json.Unmarshal(retryPolicy, &policy); err != nil {
		t.Fatalf("retry_policy.json: %v", err)
	}
	if pb.ArbiterService_ServiceDesc.ServiceName != serviceName {
		t.Fatalf("the stubs' service is %s, not %s", pb.ArbiterService_ServiceDesc.ServiceName, serviceName)
	}
	named := map[string]bool{}
	for _, name := range policy.Name {
		if name.Service != serviceName {
			t.Errorf("the policy names %s/%s, not a method of %s", name.Service, name.Method, serviceName)
		}
		named[name.Method] = true
	}
	for _, method := range pb.ArbiterService_ServiceDesc.Methods {
		if !named[method.MethodName] {
			t.Errorf("the one-shot RPC %s is not retried", method.MethodName)
		}
		delete(named, method.MethodName)
	}
	for method := range named {
		t.Errorf("the policy names %s, which is no one-shot RPC of the stubs", method)
	}
}

// TestResumeLoopIsCancelledByItsCaller holds that playConnectFourResumably's streams
// derive from the caller's context: cancelling it ends the game at once, CANCELED, and
// no new stream is opened to resume it.
func TestResumeLoopIsCancelledByItsCaller(t *testing.T) {
	fake, client := serveFake(t)
	ctx, cancel := context.WithCancel(t.Context())
	time.AfterFunc(200*time.Millisecond, cancel)
	start := time.Now()
	_, err := playConnectFourResumably(ctx, client, 6, 7, []int32{3})
	if status.Code(err) != codes.Canceled {
		t.Fatalf("the game ended %v, not CANCELED", err)
	}
	if waited := time.Since(start); waited > 5*time.Second {
		t.Fatalf("the game ended %v after its context was cancelled", waited)
	}
	if streams := atomic.LoadInt32(&fake.streams); streams != 1 {
		t.Fatalf("%d streams opened, not 1: a cancelled game was resumed", streams)
	}
}
