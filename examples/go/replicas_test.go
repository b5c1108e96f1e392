package main

// The balancing check: three replicas of the server, started by run.sh (port 0, with
// metrics), driven through dialReplicas. It holds that
//   - without grpc.WithAuthority the address list goes out as :authority, which the
//     server's HTTP/2 layer refuses, so no call succeeds (the day it is accepted, this
//     fails, and dialReplicas' comment can go);
//   - with it, round robin spreads the calls over all three replicas;
//   - a replica draining (SIGTERM: health NOT_SERVING, calls still served) leaves the
//     rotation through client-side health checking, and no call is lost;
//   - a Connect Four game whose replica stops resumes on another from its history;
//   - a malformed request's google.rpc.BadRequest names its fields, through the replicas.
//
//	go test -run TestReplicas -args -replicas A,B,C -metrics URL,URL,URL -pids P,P,P

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	pb "github.com/arbiter-rules/arbiter/examples/go/arbiterv1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/peer"
	"google.golang.org/grpc/status"
)

var (
	replicasFlag = flag.String("replicas", "", "three replicas' addresses: host:port,host:port,host:port")
	metricsFlag  = flag.String("metrics", "", "the replicas' metrics URLs, in the same order")
	pidsFlag     = flag.String("pids", "", "the replicas' process ids, in the same order; the test stops them")
)

type replica struct {
	address, metrics string
	pid              int
}

func replicas(t *testing.T) []replica {
	if *replicasFlag == "" {
		t.Skip("needs three running replicas: -replicas, -metrics and -pids (run.sh starts them)")
	}
	addresses := strings.Split(*replicasFlag, ",")
	metrics := strings.Split(*metricsFlag, ",")
	pids := strings.Split(*pidsFlag, ",")
	if len(addresses) != 3 || len(metrics) != 3 || len(pids) != 3 {
		t.Fatalf("-replicas, -metrics and -pids must each list three replicas")
	}
	var out []replica
	for i := range addresses {
		pid, err := strconv.Atoi(pids[i])
		if err != nil {
			t.Fatalf("-pids: %v", err)
		}
		out = append(out, replica{addresses[i], metrics[i], pid})
	}
	return out
}

const judgeMethod = serviceName + "/JudgeTicTacToe"

// judged is how many JudgeTicTacToe calls the replica has answered OK, from its metrics.
func (r replica) judged(t *testing.T) int {
	t.Helper()
	response, err := http.Get(r.metrics)
	if err != nil {
		t.Fatalf("metrics of %s: %v", r.address, err)
	}
	defer response.Body.Close()
	total := 0
	lines := bufio.NewScanner(response.Body)
	for lines.Scan() {
		line := lines.Text()
		if strings.HasPrefix(line, "arbiter_calls_total{") &&
			strings.Contains(line, `rpc="`+judgeMethod+`"`) && strings.Contains(line, `code="Ok"`) {
			value, err := strconv.ParseFloat(line[strings.LastIndexByte(line, ' ')+1:], 64)
			if err != nil {
				t.Fatalf("metrics of %s: %q: %v", r.address, line, err)
			}
			total += int(value)
		}
	}
	return total
}

func judgedBy(t *testing.T, rs []replica) []int {
	counts := make([]int, len(rs))
	for i, r := range rs {
		counts[i] = r.judged(t)
	}
	return counts
}

func judge(ctx context.Context, client pb.ArbiterServiceClient, calls int) error {
	for i := 0; i < calls; i++ {
		ctx, cancel := context.WithTimeout(ctx, callTimeout)
		reply, err := client.JudgeTicTacToe(ctx, &pb.JudgeTicTacToeRequest{Moves: ticTacToeMoves([2]int32{1, 1})})
		cancel()
		if err != nil {
			return err
		}
		if reply.GetMovesPlayed() != 1 {
			return fmt.Errorf("unexpected answer: %v", reply)
		}
	}
	return nil
}

// spread is how many JudgeTicTacToe calls each replica answered while calls ran.
func spread(t *testing.T, rs []replica, client pb.ArbiterServiceClient, calls int) []int {
	t.Helper()
	before := judgedBy(t, rs)
	if err := judge(t.Context(), client, calls); err != nil {
		t.Fatalf("a call failed: %v", err)
	}
	after := judgedBy(t, rs)
	for i := range after {
		after[i] -= before[i]
	}
	return after
}

func addresses(rs []replica) []string {
	var out []string
	for _, r := range rs {
		out = append(out, r.address)
	}
	return out
}

func TestReplicas(t *testing.T) {
	rs := replicas(t)

	// grpc-go sends the target's endpoint, here the address list, as :authority: the
	// server's HTTP/2 layer resets the stream (PROTOCOL_ERROR) before the server sees it.
	t.Run("the address list as :authority is refused", func(t *testing.T) {
		roundRobin := `{"loadBalancingConfig": [{"round_robin": {}}]}`
		for _, c := range []struct {
			name    string
			options []grpc.DialOption
			code    codes.Code
		}{
			// Every call reset.
			{"round robin", []grpc.DialOption{grpc.WithDefaultServiceConfig(roundRobin)}, codes.Internal},
			// Every replica's health check reset: none becomes ready.
			{"round robin with health checking", nil, codes.Unavailable},
		} {
			target, options := replicasTarget(addresses(rs))
			conn, err := grpc.NewClient(target, append(options, c.options...)...)
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
			_, err = pb.NewArbiterServiceClient(conn).JudgeTicTacToe(ctx, &pb.JudgeTicTacToeRequest{})
			cancel()
			conn.Close()
			if err == nil {
				t.Fatal("a call with the address list as :authority succeeded: the server accepts it " +
					"now, so dialReplicas needs grpc.WithAuthority no more")
			}
			if status.Code(err) != c.code || !strings.Contains(err.Error(), "RST_STREAM") {
				t.Fatalf("%s without grpc.WithAuthority: %v, not %s with a stream reset", c.name, err, c.code)
			}
			t.Logf("%s without grpc.WithAuthority: %v", c.name, err)
		}
	})

	conn, err := dialReplicas(addresses(rs), grpc.WithStreamInterceptor(stopper.intercept))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	client := pb.NewArbiterServiceClient(conn)

	t.Run("a malformed request's BadRequest names its fields", func(t *testing.T) {
		if err := malformedRequest(t.Context(), client); err != nil {
			t.Fatal(err)
		}
	})

	t.Run("round robin over three replicas", func(t *testing.T) {
		counts := spread(t, rs, client, 300)
		if counts[0]+counts[1]+counts[2] != 300 || counts[0] < 50 || counts[1] < 50 || counts[2] < 50 {
			t.Fatalf("300 calls spread as %v", counts)
		}
		t.Logf("300 calls spread as %v", counts)
	})

	t.Run("a draining replica leaves the rotation", func(t *testing.T) {
		draining := rs[2]
		if err := syscall.Kill(draining.pid, syscall.SIGTERM); err != nil {
			t.Fatal(err)
		}
		deadline := time.Now().Add(10 * time.Second)
		for spread(t, rs, client, 30)[2] != 0 {
			if time.Now().After(deadline) {
				t.Fatal("the draining replica kept getting calls")
			}
		}
		counts := spread(t, rs, client, 300)
		if counts[2] != 0 || counts[0] < 50 || counts[1] < 50 {
			t.Fatalf("300 calls spread as %v", counts)
		}
		if err := syscall.Kill(draining.pid, 0); err != nil {
			t.Fatalf("the draining replica exited early: %v", err)
		}
		t.Logf("300 calls spread as %v, none lost", counts)
	})

	t.Run("a game resumes on another replica", func(t *testing.T) {
		// Two rows of ten columns, no run of four: the game outlives the replica it
		// starts on, which is killed (SIGKILL, as a crash or a lost node) after the
		// game's third reply: the stream cannot be served a moment longer.
		var drops []int32
		for i := int32(0); i < 20; i++ {
			drops = append(drops, i%10)
		}
		stopper.arm(rs[:2], 3)
		last, err := playConnectFourResumably(t.Context(), client, 6, 10, drops)
		if err != nil {
			t.Fatal(err)
		}
		stopped, streams := stopper.result()
		if stopped == "" {
			t.Fatal("no replica was stopped under the game")
		}
		rows := strings.Join(last.GetBoard().GetRows(), "/")
		want := strings.Repeat("0000000000/", 4) + "1212121212/1212121212"
		if last.GetMovesPlayed() != 20 || rows != want || streams < 2 {
			t.Fatalf("after %s stopped, %d streams: %d drops played, board %s", stopped, streams,
				last.GetMovesPlayed(), rows)
		}
		t.Logf("%s stopped under the game; resumed, it ended on %d streams with every drop played",
			stopped, streams)
	})
}

// stopper kills the replica that serves a PlayConnectFour stream once the stream has
// received a given number of replies, and waits until the replica refuses connections:
// the stream then fails, and the game must resume on another replica. (A graceful stop
// would let the stream run on for a moment, and the game could end on it.)
var stopper = &replicaStopper{}

type replicaStopper struct {
	mu       sync.Mutex
	replicas []replica
	after    int
	stopped  string
	streams  int
}

func (s *replicaStopper) arm(rs []replica, after int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.replicas, s.after = rs, after
}

func (s *replicaStopper) result() (string, int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.stopped, s.streams
}

func (s *replicaStopper) intercept(ctx context.Context, desc *grpc.StreamDesc, cc *grpc.ClientConn,
	method string, streamer grpc.Streamer, opts ...grpc.CallOption) (grpc.ClientStream, error) {
	stream, err := streamer(ctx, desc, cc, method, opts...)
	if err != nil || method != "/"+serviceName+"/PlayConnectFour" {
		return stream, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.replicas == nil {
		return stream, nil
	}
	s.streams++
	return &stoppingStream{ClientStream: stream, stopper: s}, nil
}

type stoppingStream struct {
	grpc.ClientStream
	stopper  *replicaStopper
	received int
}

func (s *stoppingStream) RecvMsg(m any) error {
	if err := s.ClientStream.RecvMsg(m); err != nil {
		return err
	}
	s.received++
	if s.received == s.stopper.after {
		s.stopper.stop(s.ClientStream.Context())
	}
	return nil
}

func (s *replicaStopper) stop(ctx context.Context) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p, ok := peer.FromContext(ctx)
	if !ok || s.stopped != "" {
		return
	}
	for _, r := range s.replicas {
		if r.address != p.Addr.String() {
			continue
		}
		if syscall.Kill(r.pid, syscall.SIGKILL) != nil {
			return
		}
		s.stopped = r.address
		for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); {
			connection, err := net.DialTimeout("tcp", r.address, time.Second)
			if err != nil {
				return
			}
			connection.Close()
			time.Sleep(50 * time.Millisecond)
		}
	}
}
