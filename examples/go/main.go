// Command arbiter-client is a Go client of every Arbiter RPC, in the manner of
// grpc-go's route_guide client: the code a Go backend starts from.
//
// The stubs are the module's package arbiterv1, generated from the repository's proto/
// and committed (buf.gen.yaml says how; README.md which plugin versions). Start a server
// (`cargo run --release`), then
//
//	go run .                                   # the server on localhost:50051
//	go run . arbiter.internal:50051            # another server
//	go run . 127.0.0.1:50051,127.0.0.1:50052   # balanced over replicas (dialReplicas)
//
// It makes one call of each one-shot RPC (chess's with a move in SAN, a game judged from
// UCI and SAN moves), reads the google.rpc.BadRequest of a malformed one, plays a live
// game of each kind with a move the server rejects (in chess, a draw claimed too early,
// then one by threefold repetition) and a game on the clock that A loses on time, sends
// a CheckBatch with a malformed check and a PlayMany with games of two kinds, and
// resumes a game on a new stream from its history. It exits non-zero if any answer is
// not the one the rules give.
//
// Every call has a deadline, derived from the context its caller passes in (here one
// that Ctrl-C cancels), the channel compresses requests with gzip, and the one-shot
// RPCs, which are pure, are retried on UNAVAILABLE by the standard retry policy of the
// service config, read from retry_policy.json (the contract's one-shot RPCs).
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"os"
	"os/signal"
	"sort"
	"strings"
	"time"

	pb "github.com/arbiter-rules/arbiter/examples/go/arbiterv1"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/durationpb"
)

// callTimeout bounds every call, a live game's whole stream included.
const callTimeout = 10 * time.Second

func main() {
	log.SetFlags(0)
	address := "localhost:50051"
	if len(os.Args) > 1 {
		address = os.Args[1]
	}
	// Every call's context derives from this one: Ctrl-C cancels whatever is running.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, address); err != nil {
		stop()
		log.Fatal(err)
	}
	fmt.Println("\nevery answer was the one the rules give")
}

// run makes every call through one channel to address.
func run(ctx context.Context, address string) error {
	// One channel for the whole program: it is safe for concurrent use, and every call
	// shares it (or, balanced, the connections to the replicas).
	conn, err := dial(address)
	if err != nil {
		return fmt.Errorf("the channel to %s: %w", address, err)
	}
	defer conn.Close()
	client := pb.NewArbiterServiceClient(conn)
	fmt.Printf("talking to %s\n", address)

	steps := []struct {
		name string
		run  func(context.Context, pb.ArbiterServiceClient) error
	}{
		{"CheckOthelloMove", checkOthelloMove},
		{"ListOthelloMoves", listOthelloMoves},
		{"CheckConnectFour", checkConnectFour},
		{"JudgeTicTacToe", judgeTicTacToe},
		{"CheckGomokuMove", checkGomokuMove},
		{"CheckChessMove", checkChessMove},
		{"ListChessMoves", listChessMoves},
		{"JudgeChessGame", judgeChessGame},
		{"a malformed request", malformedRequest},
		{"PlayTicTacToe", playTicTacToe},
		{"PlayTicTacToe on the clock", playTicTacToeOnTheClock},
		{"PlayOthello", playOthello},
		{"PlayConnectFour", playConnectFour},
		{"PlayGomoku", playGomoku},
		{"PlayChess", playChess},
		{"CheckBatch", checkBatch},
		{"PlayMany", playMany},
		{"resuming from a history", resumeFromHistory},
	}
	for _, step := range steps {
		fmt.Printf("\n*** %s\n", step.name)
		if err := step.run(ctx, client); err != nil {
			return fmt.Errorf("%s: %w", step.name, err)
		}
	}
	return nil
}

// expect fails the example with what was expected unless holds.
func expect(holds bool, format string, args ...any) error {
	if holds {
		return nil
	}
	return fmt.Errorf("unexpected answer: "+format, args...)
}

func cells(cs []*pb.Cell) string {
	parts := make([]string, len(cs))
	for i, c := range cs {
		parts[i] = fmt.Sprintf("(%d, %d)", c.GetRow(), c.GetCol())
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

func board(rows ...string) *pb.Board { return &pb.Board{Rows: rows} }

// othelloBoard is the README's position: a black disc at (4, 3) turns over six discs.
func othelloBoard() *pb.Board {
	return board("...B....", "...W....", "...W....", "...W....",
		"WBB.WWWB", "...B....", "...B....", "...W....")
}

func openingBoard() *pb.Board {
	return board("........", "........", "........", "...WB...",
		"...BW...", "........", "........", "........")
}

func checkOthelloMove(ctx context.Context, client pb.ArbiterServiceClient) error {
	ctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	reply, err := client.CheckOthelloMove(ctx, &pb.CheckOthelloMoveRequest{
		Board: othelloBoard(), Row: 4, Col: 3, Color: "B",
	})
	if err != nil {
		return err
	}
	fmt.Printf("Black at (4, 3): legal %t, flips %s\n", reply.GetLegal(), cells(reply.GetFlips()))
	return expect(reply.GetLegal() &&
		cells(reply.GetFlips()) == "[(1, 3), (2, 3), (3, 3), (4, 4), (4, 5), (4, 6)]",
		"Black at (4, 3) turns over three discs up and three to the right")
}

func listOthelloMoves(ctx context.Context, client pb.ArbiterServiceClient) error {
	ctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	reply, err := client.ListOthelloMoves(ctx, &pb.ListOthelloMovesRequest{
		Board: openingBoard(), Color: "W",
	})
	if err != nil {
		return err
	}
	var moves []*pb.Cell
	for _, move := range reply.GetMoves() {
		fmt.Printf("White may play (%d, %d), turning over %s\n",
			move.GetCell().GetRow(), move.GetCell().GetCol(), cells(move.GetFlips()))
		moves = append(moves, move.GetCell())
	}
	return expect(cells(moves) == "[(2, 4), (3, 5), (4, 2), (5, 3)]",
		"White's four opening moves, row-major")
}

func checkConnectFour(ctx context.Context, client pb.ArbiterServiceClient) error {
	ctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	reply, err := client.CheckConnectFour(ctx, &pb.CheckConnectFourRequest{
		Board: board("0000000", "0000000", "0000000", "0000000", "0222000", "0111100"),
		Row:   5, Col: 4, Player: 1, // RunLength 0: four in a row
	})
	if err != nil {
		return err
	}
	fmt.Printf("player 1 at (5, 4): wins %t, run %s\n", reply.GetWins(), cells(reply.GetRun()))
	return expect(reply.GetWins() && cells(reply.GetRun()) == "[(5, 1), (5, 2), (5, 3), (5, 4)]",
		"1 1 1 1 on the bottom row")
}

func ticTacToeMoves(moves ...[2]int32) []*pb.TicTacToeMove {
	out := make([]*pb.TicTacToeMove, len(moves))
	for i, m := range moves {
		out[i] = &pb.TicTacToeMove{Row: m[0], Col: m[1]}
	}
	return out
}

func judgeTicTacToe(ctx context.Context, client pb.ArbiterServiceClient) error {
	ctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	reply, err := client.JudgeTicTacToe(ctx, &pb.JudgeTicTacToeRequest{
		Moves: ticTacToeMoves([2]int32{0, 0}, [2]int32{2, 0}, [2]int32{1, 1}, [2]int32{2, 1}, [2]int32{2, 2}),
	})
	if err != nil {
		return err
	}
	rows := reply.GetBoard().GetRows()
	fmt.Printf("%s after %d moves, line %s, board %q\n",
		reply.GetVerdict(), reply.GetMovesPlayed(), cells(reply.GetLine()), rows)
	return expect(reply.GetVerdict() == pb.Verdict_VERDICT_A_WINS &&
		cells(reply.GetLine()) == "[(0, 0), (1, 1), (2, 2)]" &&
		strings.Join(rows, "/") == "X../.X./OOX" && reply.GetMovesPlayed() == 5,
		"A wins on the diagonal after 5 moves")
}

// gomokuBoard is a 15x15 board with Black's four stones on row 7, from (7, 3) to (7, 6),
// and the stones given as extra placed too.
func gomokuBoard(extra ...[3]int) *pb.Board {
	rows := make([][]byte, 15)
	for r := range rows {
		rows[r] = []byte(strings.Repeat(".", 15))
	}
	for col := 3; col <= 6; col++ {
		rows[7][col] = 'B'
	}
	for _, stone := range extra {
		rows[stone[0]][stone[1]] = byte(stone[2])
	}
	out := make([]string, len(rows))
	for r, row := range rows {
		out[r] = string(row)
	}
	return board(out...)
}

// checkGomokuMove asks twice about Black's stone at (7, 7), after four in a row: it makes
// five, a win in freestyle (five or more); with a Black stone already at (7, 8) it makes
// six, which standard Gomoku (`exact`) does not count.
func checkGomokuMove(ctx context.Context, client pb.ArbiterServiceClient) error {
	ctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	five, err := client.CheckGomokuMove(ctx, &pb.CheckGomokuMoveRequest{
		Board: gomokuBoard(), Row: 7, Col: 7, Color: "B", // RunLength 0: five
	})
	if err != nil {
		return err
	}
	fmt.Printf("Black at (7, 7): legal %t, wins %t, run %s\n", five.GetLegal(), five.GetWins(), cells(five.GetRun()))
	overline, err := client.CheckGomokuMove(ctx, &pb.CheckGomokuMoveRequest{
		Board: gomokuBoard([3]int{7, 8, 'B'}), Row: 7, Col: 7, Color: "B", Exact: true,
	})
	if err != nil {
		return err
	}
	fmt.Printf("Black at (7, 7) beside (7, 8), exactly five: legal %t, wins %t\n", overline.GetLegal(), overline.GetWins())
	return expect(five.GetLegal() && five.GetWins() &&
		cells(five.GetRun()) == "[(7, 3), (7, 4), (7, 5), (7, 6), (7, 7)]" &&
		overline.GetLegal() && !overline.GetWins() && len(overline.GetRun()) == 0,
		"five in a row wins; six does not when exactly five are asked for")
}

// scholarsMate is the position after 1. e4 e5 2. Bc4 Nc6 3. Qh5 Nf6??, White to move.
const scholarsMate = "r1bqkb1r/pppp1ppp/2n2n2/4p2Q/2B1P3/8/PPPP1PPP/RNB1K1NR w KQkq - 4 4"

// checkChessMove asks about a move written in SAN, as a PGN or a person writes it: the
// reply gives it back in UCI and in SAN (with its mate mark), and the position after it.
func checkChessMove(ctx context.Context, client pb.ArbiterServiceClient) error {
	ctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	reply, err := client.CheckChessMove(ctx, &pb.CheckChessMoveRequest{Fen: scholarsMate, Move: "Qxf7"})
	if err != nil {
		return err
	}
	fmt.Printf("Qxf7: legal %t, uci %s, san %s, check %t, %s, then %s\n", reply.GetLegal(),
		reply.GetMove().GetUci(), reply.GetMove().GetSan(), reply.GetCheck(), reply.GetTermination(), reply.GetFen())
	return expect(reply.GetLegal() && reply.GetMove().GetUci() == "h5f7" && reply.GetMove().GetSan() == "Qxf7#" &&
		reply.GetCheck() && reply.GetTermination() == pb.ChessTermination_CHESS_TERMINATION_CHECKMATE &&
		reply.GetFen() == "r1bqkb1r/pppp1Qpp/2n2n2/4p3/2B1P3/8/PPPP1PPP/RNB1K1NR b KQkq - 0 4",
		"the queen takes on f7 and mates")
}

// listChessMoves lists Black's moves after 1. e4 f5 2. Qh5+: in check, with one way out.
func listChessMoves(ctx context.Context, client pb.ArbiterServiceClient) error {
	ctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	reply, err := client.ListChessMoves(ctx, &pb.ListChessMovesRequest{
		Fen: "rnbqkbnr/ppppp1pp/8/5p1Q/4P3/8/PPPP1PPP/RNB1KBNR b KQkq - 1 2",
	})
	if err != nil {
		return err
	}
	var moves []string
	for _, move := range reply.GetMoves() {
		moves = append(moves, move.GetUci()+" "+move.GetSan())
	}
	fmt.Printf("Black, check %t, %s: moves %q\n", reply.GetCheck(), reply.GetTermination(), moves)
	return expect(reply.GetCheck() && strings.Join(moves, ", ") == "g7g6 g6" &&
		reply.GetTermination() == pb.ChessTermination_CHESS_TERMINATION_UNSPECIFIED,
		"Black in check, g6 the only move")
}

// judgeChessGame judges a whole game from its moves, UCI and SAN mixed: the fool's mate,
// written back in SAN as PGN's movetext has it.
func judgeChessGame(ctx context.Context, client pb.ArbiterServiceClient) error {
	ctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	reply, err := client.JudgeChessGame(ctx, &pb.JudgeChessGameRequest{Moves: []string{"f2f3", "e5", "g2g4", "Qh4"}})
	if err != nil {
		return err
	}
	fmt.Printf("%s by %s after %d plies: %s, final %s\n", reply.GetVerdict(), reply.GetTermination(),
		reply.GetMovesPlayed(), strings.Join(reply.GetSan(), " "), reply.GetFen())
	return expect(reply.GetVerdict() == pb.Verdict_VERDICT_B_WINS &&
		reply.GetTermination() == pb.ChessTermination_CHESS_TERMINATION_CHECKMATE &&
		strings.Join(reply.GetSan(), " ") == "f3 e5 g4 Qh4#" && reply.GetMovesPlayed() == 4 &&
		reply.GetCheck() && !reply.GetDrawClaimable() &&
		reply.GetFen() == "rnb1kbnr/pppp1ppp/8/4p3/6Pq/5P2/PPPPP2P/RNBQKBNR w KQkq - 1 3",
		"Black mates on the fourth ply")
}

// malformedRequest reads the google.rpc.BadRequest detail of an INVALID_ARGUMENT
// status: one violation per problem, each naming its field.
func malformedRequest(ctx context.Context, client pb.ArbiterServiceClient) error {
	ctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	_, err := client.CheckConnectFour(ctx, &pb.CheckConnectFourRequest{
		Board: board("000", "00", "0000"), Row: 9, Col: -1, Player: 3,
	})
	if err == nil {
		return errors.New("unexpected answer: a ragged board was accepted")
	}
	st, _ := status.FromError(err)
	fmt.Printf("%s: %s\n", st.Code(), st.Message())
	var fields []string
	for _, detail := range st.Details() {
		if badRequest, ok := detail.(*errdetails.BadRequest); ok {
			for _, violation := range badRequest.GetFieldViolations() {
				fmt.Printf("  %s: %s\n", violation.GetField(), violation.GetDescription())
				fields = append(fields, violation.GetField())
			}
		}
	}
	return expect(st.Code() == codes.InvalidArgument &&
		strings.Join(fields, " ") == "board.rows[1] board.rows[2] row col player",
		"two ragged rows, a row off the board, a negative column and a bad player")
}

// playTicTacToe plays a live game move by move: each move is sent after the last reply,
// as a game server or a bot does. The second move is refused (the square is taken) and
// the game goes on; B wins on the top row.
func playTicTacToe(ctx context.Context, client pb.ArbiterServiceClient) error {
	ctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	stream, err := client.PlayTicTacToe(ctx)
	if err != nil {
		return err
	}
	rejected := 0
	var last *pb.PlayTicTacToeResponse
	for _, m := range [][2]int32{{1, 1}, {1, 1}, {0, 0}, {2, 2}, {0, 2}, {2, 0}, {0, 1}} {
		if err := stream.Send(&pb.PlayTicTacToeRequest{Row: m[0], Col: m[1]}); err != nil {
			return err
		}
		if last, err = stream.Recv(); err != nil {
			return err
		}
		if last.GetRejected() != "" {
			rejected++
			fmt.Printf("(%d, %d): rejected: %s\n", m[0], m[1], last.GetRejected())
		} else {
			fmt.Printf("(%d, %d): %s, %d moves played\n", m[0], m[1], last.GetVerdict(), last.GetMovesPlayed())
		}
	}
	// Closing the sending side ends the game; the server then ends its replies.
	if err := stream.CloseSend(); err != nil {
		return err
	}
	if _, err := stream.Recv(); err != io.EOF {
		return fmt.Errorf("the stream did not end after the client's: %v", err)
	}
	return expect(rejected == 1 && last.GetVerdict() == pb.Verdict_VERDICT_B_WINS &&
		cells(last.GetLine()) == "[(0, 0), (0, 1), (0, 2)]",
		"one move rejected, then B wins on the top row")
}

// playTicTacToeOnTheClock holds that a clock runs out on its own: with 300 ms each and no
// move sent, the server announces, in a reply marked unprompted, that A (X) lost on
// time with 0 left and B's 300 ms untouched, then ends the stream. The client
// half-closes right after the setup: a running clock keeps the stream open until the
// announcement, which comes well within the call's deadline.
func playTicTacToeOnTheClock(ctx context.Context, client pb.ArbiterServiceClient) error {
	ctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	stream, err := client.PlayTicTacToe(ctx)
	if err != nil {
		return err
	}
	initial := 300 * time.Millisecond
	setup := &pb.TicTacToeSetup{TimeControl: &pb.TimeControl{Initial: durationpb.New(initial)}}
	if err := stream.Send(&pb.PlayTicTacToeRequest{Setup: setup}); err != nil {
		return err
	}
	sent := time.Now()
	if err := stream.CloseSend(); err != nil {
		return err
	}
	start, err := stream.Recv()
	if err != nil {
		return err
	}
	flag, err := stream.Recv() // sent by the server on its own
	if err != nil {
		return err
	}
	waited := time.Since(sent)
	if _, err := stream.Recv(); err != io.EOF {
		return fmt.Errorf("the stream did not end after the announcement: %v", err)
	}
	for _, reply := range []*pb.PlayTicTacToeResponse{start, flag} {
		fmt.Printf("%s, %s, unprompted %t, time left A %v, B %v\n", reply.GetVerdict(), reply.GetEnding(),
			reply.GetUnprompted(), reply.GetClock().GetALeft().AsDuration(), reply.GetClock().GetBLeft().AsDuration())
	}
	fmt.Printf("the announcement came %v after the setup\n", waited.Round(time.Millisecond))
	if err := expect(start.GetClock().GetALeft().AsDuration() == initial &&
		start.GetClock().GetBLeft().AsDuration() == initial &&
		start.GetEnding() == pb.Ending_ENDING_UNSPECIFIED && !start.GetUnprompted(),
		"the setup's reply: 300 ms each, the game going on"); err != nil {
		return err
	}
	return expect(flag.GetUnprompted() && flag.GetEnding() == pb.Ending_ENDING_TIME &&
		flag.GetVerdict() == pb.Verdict_VERDICT_B_WINS && flag.GetClock() != nil &&
		flag.GetClock().GetALeft().AsDuration() == 0 && flag.GetClock().GetBLeft().AsDuration() == initial,
		"an unprompted reply: A out of time with 0 left, B winning with 300 ms")
}

// playGomoku plays a live Gomoku game on the default 15x15 board, five or more to win,
// move by move: White's second stone on a taken cell is rejected and White plays again;
// Black's fifth stone in a row wins.
func playGomoku(ctx context.Context, client pb.ArbiterServiceClient) error {
	ctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	stream, err := client.PlayGomoku(ctx)
	if err != nil {
		return err
	}
	rejected := 0
	var last *pb.PlayGomokuResponse
	for _, m := range [][2]int32{{7, 3}, {0, 0}, {7, 4}, {0, 0}, {0, 1}, {7, 5}, {0, 2}, {7, 6}, {0, 3}, {7, 7}} {
		move := &pb.PlayGomokuRequest{Action: &pb.PlayGomokuRequest_Move{Move: &pb.Cell{Row: m[0], Col: m[1]}}}
		if err := stream.Send(move); err != nil {
			return recvGomokuError(stream.Recv())
		}
		if last, err = stream.Recv(); err != nil {
			return err
		}
		if last.GetRejected() != "" {
			rejected++
			fmt.Printf("(%d, %d): rejected: %s\n", m[0], m[1], last.GetRejected())
		} else {
			fmt.Printf("(%d, %d): %s, %d stones, %q to move\n", m[0], m[1], last.GetVerdict(), last.GetMovesPlayed(), last.GetToMove())
		}
	}
	if err := stream.CloseSend(); err != nil {
		return err
	}
	if _, err := stream.Recv(); err != io.EOF {
		return fmt.Errorf("the stream did not end after the client's: %v", err)
	}
	fmt.Printf("run %s\n", cells(last.GetRun()))
	return expect(rejected == 1 && last.GetVerdict() == pb.Verdict_VERDICT_A_WINS &&
		last.GetEnding() == pb.Ending_ENDING_BOARD && last.GetMovesPlayed() == 9 && last.GetToMove() == "" &&
		cells(last.GetRun()) == "[(7, 3), (7, 4), (7, 5), (7, 6), (7, 7)]",
		"the taken cell rejected, Black winning with five on row 7")
}

// recvGomokuError is the status that ended a Gomoku stream whose Send failed.
func recvGomokuError(_ *pb.PlayGomokuResponse, err error) error {
	if err == nil || err == io.EOF {
		return status.Error(codes.Unavailable, "the stream ended early")
	}
	return err
}

func chessMove(move string) *pb.PlayChessRequest {
	return &pb.PlayChessRequest{Action: &pb.PlayChessRequest_Move{Move: move}}
}

func chessClaim() *pb.PlayChessRequest {
	return &pb.PlayChessRequest{Action: &pb.PlayChessRequest_ClaimDraw{ClaimDraw: true}}
}

// playChess plays a live chess game from the standard position, in SAN, as a bot does:
// the knights go out and back twice. A draw claimed when the start position has stood
// twice does not hold (rejected, the game goes on); after the second return it has stood
// three times, the reply says a draw may be claimed, and White claims it: a draw by
// threefold repetition.
func playChess(ctx context.Context, client pb.ArbiterServiceClient) error {
	ctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	stream, err := client.PlayChess(ctx)
	if err != nil {
		return err
	}
	knights := []string{"Nf3", "Nf6", "Ng1", "Ng8"}
	var messages []*pb.PlayChessRequest
	for _, move := range knights {
		messages = append(messages, chessMove(move))
	}
	messages = append(messages, chessClaim()) // too early: twice only
	for _, move := range knights {
		messages = append(messages, chessMove(move))
	}
	messages = append(messages, chessClaim())
	var replies []*pb.PlayChessResponse
	for _, message := range messages {
		if err := stream.Send(message); err != nil {
			return recvChessError(stream.Recv())
		}
		reply, err := stream.Recv()
		if err != nil {
			return err
		}
		replies = append(replies, reply)
		switch {
		case reply.GetRejected() != "":
			fmt.Printf("rejected: %s\n", reply.GetRejected())
		case reply.GetMove() != nil:
			fmt.Printf("%s (%s): %s, %q to move, draw claimable %t\n", reply.GetMove().GetSan(),
				reply.GetMove().GetUci(), reply.GetVerdict(), reply.GetToMove(), reply.GetDrawClaimable())
		default:
			fmt.Printf("claimed: %s by %s (%s), %d plies\n", reply.GetVerdict(), reply.GetTermination(),
				reply.GetEnding(), reply.GetMovesPlayed())
		}
	}
	if err := stream.CloseSend(); err != nil {
		return err
	}
	if _, err := stream.Recv(); err != io.EOF {
		return fmt.Errorf("the stream did not end after the client's: %v", err)
	}
	early, claimable, draw := replies[4], replies[8], replies[9]
	return expect(early.GetRejected() != "" && early.GetVerdict() == pb.Verdict_VERDICT_PENDING &&
		!replies[3].GetDrawClaimable() && claimable.GetDrawClaimable() &&
		claimable.GetMove().GetUci() == "f6g8" && draw.GetRejected() == "" &&
		draw.GetVerdict() == pb.Verdict_VERDICT_DRAW && draw.GetEnding() == pb.Ending_ENDING_CLAIM &&
		draw.GetTermination() == pb.ChessTermination_CHESS_TERMINATION_THREEFOLD_REPETITION &&
		draw.GetMovesPlayed() == 8 && draw.GetToMove() == "" && !draw.GetDrawClaimable(),
		"the early claim rejected, then a draw by threefold repetition, claimed after the eighth ply")
}

// recvChessError is the status that ended a chess stream whose Send failed.
func recvChessError(_ *pb.PlayChessResponse, err error) error {
	if err == nil || err == io.EOF {
		return status.Error(codes.Unavailable, "the stream ended early")
	}
	return err
}

func othelloMove(row, col int32) *pb.PlayOthelloRequest {
	return &pb.PlayOthelloRequest{Action: &pb.PlayOthelloRequest_Move{Move: &pb.Cell{Row: row, Col: col}}}
}

// playOthello sends a whole game at once, as one may when the moves are known up front,
// then reads the replies: from a custom start, a move on a taken square is rejected,
// White has no move after Black's first disc and passes, and Black fills the row.
func playOthello(ctx context.Context, client pb.ArbiterServiceClient) error {
	ctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	stream, err := client.PlayOthello(ctx)
	if err != nil {
		return err
	}
	messages := []*pb.PlayOthelloRequest{
		{Action: &pb.PlayOthelloRequest_Setup{Setup: &pb.OthelloSetup{Board: board(".WB.WB"), ToMove: "B"}}},
		othelloMove(0, 2), // taken: rejected
		othelloMove(0, 0),
		othelloMove(0, 3),
	}
	for _, message := range messages {
		if err := stream.Send(message); err != nil {
			return err
		}
	}
	if err := stream.CloseSend(); err != nil {
		return err
	}
	var replies []*pb.PlayOthelloResponse
	for {
		reply, err := stream.Recv()
		if err == io.EOF {
			break
		}
		if err != nil {
			return err
		}
		replies = append(replies, reply)
		if reply.GetRejected() != "" {
			fmt.Printf("rejected: %s\n", reply.GetRejected())
			continue
		}
		fmt.Printf("%s: board %q, flipped %s, to move %q (passed %t), legal %s, discs %d/%d\n",
			reply.GetVerdict(), reply.GetBoard().GetRows(), cells(reply.GetFlips()), reply.GetToMove(),
			reply.GetPassed(), cells(reply.GetLegalMoves()), reply.GetBlackDiscs(), reply.GetWhiteDiscs())
	}
	if len(replies) != len(messages) {
		return fmt.Errorf("unexpected answer: %d replies to %d messages", len(replies), len(messages))
	}
	last := replies[3]
	return expect(replies[1].GetRejected() != "" && replies[2].GetPassed() &&
		replies[2].GetToMove() == "B" && last.GetVerdict() == pb.Verdict_VERDICT_A_WINS &&
		last.GetBlackDiscs() == 6 && last.GetWhiteDiscs() == 0,
		"the taken square rejected, White passing, Black winning 6 to 0")
}

// playConnectFour plays a game on the default 6x7 board with play_connect_four_resumably's
// loop; column 7 is off the board and rejected. Player 1 wins on a diagonal.
func playConnectFour(ctx context.Context, client pb.ArbiterServiceClient) error {
	drops := []int32{0, 1, 1, 2, 2, 3, 7, 2, 3, 3, 6, 3}
	last, err := playConnectFourResumably(ctx, client, 6, 7, drops)
	if err != nil {
		return err
	}
	fmt.Printf("%s after %d drops, placed (%d, %d), run %s\n", last.GetVerdict(), last.GetMovesPlayed(),
		last.GetPlaced().GetRow(), last.GetPlaced().GetCol(), cells(last.GetRun()))
	run := append([]*pb.Cell(nil), last.GetRun()...)
	sort.Slice(run, func(i, j int) bool { return run[i].GetRow() < run[j].GetRow() })
	return expect(last.GetVerdict() == pb.Verdict_VERDICT_A_WINS && last.GetMovesPlayed() == 11 &&
		cells(run) == "[(2, 3), (3, 2), (4, 1), (5, 0)]",
		"player 1 wins on the diagonal from (5, 0), column 7 rejected")
}

// resumable reports whether a live game's stream that failed with err can be resumed on
// a new stream: UNAVAILABLE (a server shutting down, a lost connection), and a stream
// reset (INTERNAL, RST_STREAM), as a proxy resets a stream whose upstream died. A resume
// replays the history, so it is always safe.
func resumable(err error) bool {
	st, _ := status.FromError(err)
	return st.Code() == codes.Unavailable ||
		st.Code() == codes.Internal && strings.Contains(st.Message(), "RST_STREAM")
}

// playConnectFourResumably plays drops on a rows x cols board, resuming on a new stream
// from the history whenever the stream is lost: the loop a game server copies. What it
// keeps is the list of drops the server applied; the reply to the resuming setup is the
// game as it stood, so play goes on as if the stream had never ended, on any replica.
// Each stream's deadline derives from ctx, and cancelling ctx ends the game at once:
// a cancelled stream is not resumed. It returns the last reply.
func playConnectFourResumably(ctx context.Context, client pb.ArbiterServiceClient, rows, cols int32, drops []int32) (*pb.PlayConnectFourResponse, error) {
	game := resumableGame{rows: rows, cols: cols}
	for attempt := 0; attempt < 5; attempt++ {
		err := game.play(ctx, client, drops)
		if err == nil {
			return game.last, nil
		}
		if ctx.Err() != nil || !resumable(err) {
			return nil, err
		}
		fmt.Printf("stream lost (%v); resuming after %d drops\n", err, len(game.applied))
	}
	return nil, errors.New("the game could not be resumed")
}

// resumableGame is what playConnectFourResumably keeps between streams.
type resumableGame struct {
	rows, cols int32
	applied    []int32 // the drops the server applied: the history a new stream starts from
	answered   int     // how many drops have been answered, applied or rejected
	last       *pb.PlayConnectFourResponse
}

// play runs one stream: a setup with the drops applied so far, then the drops not yet
// answered, one by one. A drop whose reply never came is sent again on the next stream.
func (g *resumableGame) play(ctx context.Context, client pb.ArbiterServiceClient, drops []int32) error {
	ctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	stream, err := client.PlayConnectFour(ctx)
	if err != nil {
		return err
	}
	setup := &pb.ConnectFourSetup{Rows: g.rows, Cols: g.cols, History: g.applied}
	if err := stream.Send(&pb.PlayConnectFourRequest{Action: &pb.PlayConnectFourRequest_Setup{Setup: setup}}); err != nil {
		return recvError(stream.Recv())
	}
	if _, err := stream.Recv(); err != nil { // the game as it stood
		return err
	}
	for _, column := range drops[g.answered:] {
		if err := stream.Send(&pb.PlayConnectFourRequest{Action: &pb.PlayConnectFourRequest_Drop{Drop: column}}); err != nil {
			// A failed Send is io.EOF: the stream's status comes from Recv.
			return recvError(stream.Recv())
		}
		reply, err := stream.Recv()
		if err != nil {
			return err
		}
		g.answered++
		if reply.GetRejected() == "" {
			g.applied = append(g.applied, column)
			fmt.Printf("column %d: %d drops played\n", column, reply.GetMovesPlayed())
		} else {
			fmt.Printf("column %d: rejected: %s\n", column, reply.GetRejected())
		}
		g.last = reply
	}
	return stream.CloseSend()
}

// recvError is the status that ended a stream whose Send failed.
func recvError(_ *pb.PlayConnectFourResponse, err error) error {
	if err == nil || err == io.EOF {
		return status.Error(codes.Unavailable, "the stream ended early")
	}
	return err
}

// checkBatch sends many checks of any kind in one call; each is answered as its own RPC
// answers it, in order, and a malformed one in place with its field violations.
func checkBatch(ctx context.Context, client pb.ArbiterServiceClient) error {
	ctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	reply, err := client.CheckBatch(ctx, &pb.CheckBatchRequest{Checks: []*pb.Check{
		{Check: &pb.Check_CheckOthelloMove{CheckOthelloMove: &pb.CheckOthelloMoveRequest{
			Board: othelloBoard(), Row: 4, Col: 3, Color: "B"}}},
		{Check: &pb.Check_ListOthelloMoves{ListOthelloMoves: &pb.ListOthelloMovesRequest{
			Board: board(".WB"), Color: "G"}}}, // not "B" or "W": answered in place
		{Check: &pb.Check_CheckConnectFour{CheckConnectFour: &pb.CheckConnectFourRequest{
			Board: board("0000", "2220", "1111"), Row: 2, Col: 3, Player: 1}}},
		{Check: &pb.Check_JudgeTicTacToe{JudgeTicTacToe: &pb.JudgeTicTacToeRequest{
			Moves: ticTacToeMoves([2]int32{1, 1}, [2]int32{0, 0})}}},
	}})
	if err != nil {
		return err
	}
	results := reply.GetResults()
	for i, result := range results {
		switch {
		case len(result.GetInvalid()) > 0:
			for _, violation := range result.GetInvalid() {
				fmt.Printf("check %d: invalid %s: %s\n", i, violation.GetField(), violation.GetDescription())
			}
		case result.GetCheckOthelloMove() != nil:
			fmt.Printf("check %d: legal %t, flips %s\n", i, result.GetCheckOthelloMove().GetLegal(),
				cells(result.GetCheckOthelloMove().GetFlips()))
		case result.GetCheckConnectFour() != nil:
			fmt.Printf("check %d: wins %t, run %s\n", i, result.GetCheckConnectFour().GetWins(),
				cells(result.GetCheckConnectFour().GetRun()))
		case result.GetJudgeTicTacToe() != nil:
			fmt.Printf("check %d: %s\n", i, result.GetJudgeTicTacToe().GetVerdict())
		default:
			fmt.Printf("check %d: %v\n", i, result)
		}
	}
	return expect(len(results) == 4 &&
		results[0].GetCheckOthelloMove().GetLegal() && len(results[0].GetCheckOthelloMove().GetFlips()) == 6 &&
		len(results[1].GetInvalid()) == 1 && results[1].GetInvalid()[0].GetField() == "color" &&
		results[2].GetCheckConnectFour().GetWins() &&
		results[3].GetJudgeTicTacToe().GetVerdict() == pb.Verdict_VERDICT_PENDING,
		"four results in order, the second invalid on its colour")
}

func ticTacToeAction(game uint64, row, col int32) *pb.GameAction {
	return &pb.GameAction{Game: game, Action: &pb.GameAction_TicTacToe{
		TicTacToe: &pb.PlayTicTacToeRequest{Row: row, Col: col}}}
}

func connectFourAction(game uint64, request *pb.PlayConnectFourRequest) *pb.GameAction {
	return &pb.GameAction{Game: game, Action: &pb.GameAction_ConnectFour{ConnectFour: request}}
}

func closeAction(game uint64) *pb.GameAction {
	return &pb.GameAction{Game: game, Action: &pb.GameAction_Close{Close: true}}
}

// playMany plays many live games in one stream, numbered by the client: a number that
// holds no game starts one of the action's kind, and close ends a game and frees its
// number. Here a Tic-Tac-Toe game and a 2x3 Connect Four game with runs of 2; game 2 is
// closed, then its number starts a new game on the default board.
func playMany(ctx context.Context, client pb.ArbiterServiceClient) error {
	ctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	stream, err := client.PlayMany(ctx)
	if err != nil {
		return err
	}
	drop := func(column int32) *pb.PlayConnectFourRequest {
		return &pb.PlayConnectFourRequest{Action: &pb.PlayConnectFourRequest_Drop{Drop: column}}
	}
	setup := &pb.PlayConnectFourRequest{Action: &pb.PlayConnectFourRequest_Setup{
		Setup: &pb.ConnectFourSetup{Rows: 2, Cols: 3, RunLength: 2}}}
	messages := [][]*pb.GameAction{
		{ticTacToeAction(1, 1, 1), connectFourAction(2, setup)},
		{connectFourAction(2, drop(0)), ticTacToeAction(1, 1, 1), connectFourAction(2, drop(2))},
		{connectFourAction(2, drop(1)), closeAction(2), ticTacToeAction(1, 0, 0)},
		{connectFourAction(2, drop(6)), closeAction(1), closeAction(2)},
	}
	var states []*pb.GameState
	for _, actions := range messages {
		if err := stream.Send(&pb.PlayManyRequest{Actions: actions}); err != nil {
			return recvManyError(stream.Recv())
		}
		reply, err := stream.Recv()
		if err != nil {
			return err
		}
		for _, state := range reply.GetStates() {
			states = append(states, state)
			switch {
			case len(state.GetInvalid()) > 0:
				fmt.Printf("game %d: invalid %v\n", state.GetGame(), state.GetInvalid())
			case state.GetTicTacToe() != nil:
				s := state.GetTicTacToe()
				fmt.Printf("game %d (Tic-Tac-Toe): %s, %d moves played, rejected %q\n",
					state.GetGame(), s.GetVerdict(), s.GetMovesPlayed(), s.GetRejected())
			case state.GetConnectFour() != nil:
				s := state.GetConnectFour()
				fmt.Printf("game %d (Connect Four): %s, board %q, rejected %q\n",
					state.GetGame(), s.GetVerdict(), s.GetBoard().GetRows(), s.GetRejected())
			default:
				fmt.Printf("game %d: closed\n", state.GetGame())
			}
		}
	}
	if err := stream.CloseSend(); err != nil {
		return err
	}
	if _, err := stream.Recv(); err != io.EOF {
		return fmt.Errorf("the stream did not end after the client's: %v", err)
	}
	if len(states) != 11 {
		return fmt.Errorf("unexpected answer: %d states for 11 actions", len(states))
	}
	won, restarted := states[5].GetConnectFour(), states[8].GetConnectFour()
	closed := func(state *pb.GameState) bool { return state.GetState() == nil && len(state.GetInvalid()) == 0 }
	return expect(states[3].GetTicTacToe().GetRejected() != "" &&
		won.GetVerdict() == pb.Verdict_VERDICT_A_WINS && strings.Join(won.GetBoard().GetRows(), "/") == "000/112" &&
		closed(states[6]) && states[7].GetTicTacToe().GetMovesPlayed() == 2 &&
		restarted.GetMovesPlayed() == 1 && len(restarted.GetBoard().GetRows()) == 6 &&
		closed(states[9]) && closed(states[10]),
		"a move on a taken square rejected, player 1 winning game 2 with a run of 2, "+
			"game 2 closed and its number starting a 6x7 game, both games closed")
}

// recvManyError is the status that ended a PlayMany stream whose Send failed.
func recvManyError(_ *pb.PlayManyResponse, err error) error {
	if err == nil || err == io.EOF {
		return status.Error(codes.Unavailable, "the stream ended early")
	}
	return err
}

// resumeFromHistory moves a game to a new stream (on this server or any other) from its
// history alone: the setup's reply is the game as the old stream left it.
func resumeFromHistory(ctx context.Context, client pb.ArbiterServiceClient) error {
	ctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	history := []int32{3, 4, 3, 4}
	first, err := client.PlayConnectFour(ctx)
	if err != nil {
		return err
	}
	var before *pb.PlayConnectFourResponse
	for _, column := range history {
		if err := first.Send(&pb.PlayConnectFourRequest{Action: &pb.PlayConnectFourRequest_Drop{Drop: column}}); err != nil {
			return recvError(first.Recv())
		}
		if before, err = first.Recv(); err != nil {
			return err
		}
	}
	if err := first.CloseSend(); err != nil {
		return err
	}
	second, err := client.PlayConnectFour(ctx)
	if err != nil {
		return err
	}
	setup := &pb.ConnectFourSetup{History: history}
	if err := second.Send(&pb.PlayConnectFourRequest{Action: &pb.PlayConnectFourRequest_Setup{Setup: setup}}); err != nil {
		return recvError(second.Recv())
	}
	after, err := second.Recv()
	if err != nil {
		return err
	}
	if err := second.CloseSend(); err != nil {
		return err
	}
	fmt.Printf("old stream left %q, %d to move\n", before.GetBoard().GetRows(), before.GetToMove())
	fmt.Printf("new stream holds %q, %d to move\n", after.GetBoard().GetRows(), after.GetToMove())
	return expect(strings.Join(before.GetBoard().GetRows(), "/") == strings.Join(after.GetBoard().GetRows(), "/") &&
		before.GetToMove() == after.GetToMove() && after.GetMovesPlayed() == 4,
		"the resumed game is the game")
}
