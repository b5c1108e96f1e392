package main

import (
	"context"
	"net"
	"sync/atomic"
	"testing"

	pb "example.com/arbiter-client/arbiterv1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// flakyArbiter answers JudgeTicTacToe UNAVAILABLE twice, then as the rules do.
type flakyArbiter struct {
	pb.UnimplementedArbiterServiceServer
	attempts int32
}

func (f *flakyArbiter) JudgeTicTacToe(_ context.Context, request *pb.JudgeTicTacToeRequest) (*pb.JudgeTicTacToeResponse, error) {
	if atomic.AddInt32(&f.attempts, 1) <= 2 {
		return nil, status.Error(codes.Unavailable, "not yet")
	}
	return &pb.JudgeTicTacToeResponse{Verdict: pb.Verdict_VERDICT_PENDING, MovesPlayed: int32(len(request.GetMoves()))}, nil
}

// TestRetryPolicy holds that dial's service config retries a one-shot call on
// UNAVAILABLE (grpc-go before 1.40 needs GRPC_GO_RETRY=on for it).
func TestRetryPolicy(t *testing.T) {
	listener, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	server := grpc.NewServer()
	flaky := &flakyArbiter{}
	pb.RegisterArbiterServiceServer(server, flaky)
	go server.Serve(listener)
	defer server.Stop()

	conn, err := dial(listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	ctx, cancel := withDeadline()
	defer cancel()
	reply, err := pb.NewArbiterServiceClient(conn).JudgeTicTacToe(ctx,
		&pb.JudgeTicTacToeRequest{Moves: ticTacToeMoves([2]int32{1, 1})})
	if err != nil {
		t.Fatalf("not retried (with grpc-go before 1.40, set GRPC_GO_RETRY=on): %v", err)
	}
	if reply.GetMovesPlayed() != 1 || atomic.LoadInt32(&flaky.attempts) != 3 {
		t.Fatalf("%d attempts, reply %v", flaky.attempts, reply)
	}
}
