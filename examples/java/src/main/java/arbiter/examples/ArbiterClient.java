package arbiter.examples;

import arbiter.v1.Board;
import arbiter.v1.Cell;
import arbiter.v1.Check;
import arbiter.v1.CheckBatchRequest;
import arbiter.v1.CheckBatchResponse;
import arbiter.v1.CheckChessMoveRequest;
import arbiter.v1.CheckChessMoveResponse;
import arbiter.v1.CheckConnectFourRequest;
import arbiter.v1.CheckConnectFourResponse;
import arbiter.v1.CheckGomokuMoveRequest;
import arbiter.v1.CheckGomokuMoveResponse;
import arbiter.v1.CheckOthelloMoveRequest;
import arbiter.v1.CheckOthelloMoveResponse;
import arbiter.v1.CheckResult;
import arbiter.v1.ChessSetup;
import arbiter.v1.ChessTermination;
import arbiter.v1.ConnectFourSetup;
import arbiter.v1.Ending;
import arbiter.v1.FieldViolation;
import arbiter.v1.GameAction;
import arbiter.v1.GameState;
import arbiter.v1.GomokuSetup;
import arbiter.v1.JudgeChessGameRequest;
import arbiter.v1.JudgeChessGameResponse;
import arbiter.v1.JudgeTicTacToeRequest;
import arbiter.v1.JudgeTicTacToeResponse;
import arbiter.v1.ListChessMovesRequest;
import arbiter.v1.ListChessMovesResponse;
import arbiter.v1.ListOthelloMovesRequest;
import arbiter.v1.ListOthelloMovesResponse;
import arbiter.v1.OthelloSetup;
import arbiter.v1.PlayChessRequest;
import arbiter.v1.PlayChessResponse;
import arbiter.v1.PlayConnectFourRequest;
import arbiter.v1.PlayConnectFourResponse;
import arbiter.v1.PlayGomokuRequest;
import arbiter.v1.PlayGomokuResponse;
import arbiter.v1.PlayManyRequest;
import arbiter.v1.PlayManyResponse;
import arbiter.v1.PlayOthelloRequest;
import arbiter.v1.PlayOthelloResponse;
import arbiter.v1.PlayTicTacToeRequest;
import arbiter.v1.PlayTicTacToeResponse;
import arbiter.v1.TicTacToeMove;
import arbiter.v1.TicTacToeSetup;
import arbiter.v1.TimeControl;
import arbiter.v1.Verdict;
import arbiter.v1.ArbiterServiceGrpc;
import arbiter.v1.ArbiterServiceGrpc.ArbiterServiceBlockingStub;
import arbiter.v1.ArbiterServiceGrpc.ArbiterServiceStub;
import com.google.protobuf.Any;
import com.google.protobuf.InvalidProtocolBufferException;
import com.google.rpc.BadRequest;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.protobuf.StatusProto;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

/**
 * A Java client of every Arbiter RPC, in the manner of grpc-java's examples: the code a Java
 * backend starts from.
 *
 * <p>It makes one call of each one-shot RPC (Othello, Connect Four, Tic-Tac-Toe, Gomoku and
 * chess, a chess move given in SAN), reads the {@code google.rpc.BadRequest} of a malformed
 * one, plays a live game of each kind (each with a message the server rejects, the stream
 * going on after it; the chess game drawn by a claim of threefold repetition) and a game on
 * the clock that A loses on time, sends a CheckBatch and a PlayMany, and resumes a game on a
 * new stream from its history, as a game server does after a deploy or a lost connection. It fails (exit status 1) if any answer is not the one
 * the rules give.
 *
 * <pre>
 * mvn compile exec:java                                        # localhost:50051
 * mvn compile exec:java -Dexec.args=arbiter.internal:50051
 * mvn compile exec:java -Dexec.args=10.0.0.1:50051,10.0.0.2:50051,10.0.0.3:50051
 * </pre>
 *
 * <p>Several addresses separated by commas balance the calls over those replicas from the
 * client ({@link Channels#forReplicas}).
 */
public final class ArbiterClient {
  private final ArbiterServiceBlockingStub blocking;
  private final ArbiterServiceStub async;

  ArbiterClient(ManagedChannel channel) {
    blocking = ArbiterServiceGrpc.newBlockingStub(channel);
    async = ArbiterServiceGrpc.newStub(channel);
  }

  public static void main(String[] args) throws Exception {
    String target = args.length > 0 ? args[0] : "localhost:50051";
    // One channel for the whole program: stubs on it are cheap and share its connections.
    ManagedChannel channel = target.contains(",")
        ? Channels.forReplicas(Arrays.asList(target.split(",")))
        : Channels.forTarget(target);
    try {
      System.out.println("connected to " + target);
      ArbiterClient client = new ArbiterClient(channel);
      client.checkOthelloMove();
      client.listOthelloMoves();
      client.checkConnectFour();
      client.judgeTicTacToe();
      client.checkGomokuMove();
      client.checkChessMove();
      client.listChessMoves();
      client.judgeChessGame();
      client.aMalformedRequest();
      client.playTicTacToe();
      client.playTicTacToeOnTheClock();
      client.playOthello();
      client.playConnectFour();
      client.playGomoku();
      client.playChess();
      client.checkBatch();
      client.playMany();
      client.resumeFromHistory();
      System.out.println("\nevery answer was the one the rules give");
    } finally {
      channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
    }
  }

  /** An answer that is not the one the rules give. */
  static final class WrongAnswer extends RuntimeException {
    WrongAnswer(String what) {
      super("unexpected answer: " + what);
    }
  }

  static void expect(boolean holds, String what) {
    if (!holds) {
      throw new WrongAnswer(what);
    }
  }

  static Board board(String... rows) {
    return Board.newBuilder().addAllRows(Arrays.asList(rows)).build();
  }

  static Cell cell(int row, int col) {
    return Cell.newBuilder().setRow(row).setCol(col).build();
  }

  /** Cells as "[(row, col), ...]". */
  static String cells(List<Cell> cells) {
    return cells.stream()
        .map(c -> "(" + c.getRow() + ", " + c.getCol() + ")")
        .collect(Collectors.joining(", ", "[", "]"));
  }

  private static final Board OPENING = board(
      "........", "........", "........", "...WB...",
      "...BW...", "........", "........", "........");

  /** CheckOthelloMove of a disc of {@code color} at (2, 3) on the opening board. */
  private static CheckOthelloMoveRequest at2x3(String color) {
    return CheckOthelloMoveRequest.newBuilder()
        .setBoard(OPENING).setRow(2).setCol(3).setColor(color).build();
  }

  void checkOthelloMove() {
    System.out.println("\n*** CheckOthelloMove");
    CheckOthelloMoveResponse reply = blocking.checkOthelloMove(at2x3("B"));
    System.out.printf("Black at (2, 3): legal %s, flips %s%n",
        reply.getLegal(), cells(reply.getFlipsList()));
    expect(reply.getLegal() && cells(reply.getFlipsList()).equals("[(3, 3)]"),
        "Black at (2, 3) turns over (3, 3)");
  }

  void listOthelloMoves() {
    System.out.println("\n*** ListOthelloMoves");
    ListOthelloMovesResponse reply = blocking.listOthelloMoves(
        ListOthelloMovesRequest.newBuilder().setBoard(OPENING).setColor("B").build());
    List<Cell> moves = new ArrayList<>();
    for (var move : reply.getMovesList()) {
      System.out.printf("Black may play (%d, %d), turning over %s%n",
          move.getCell().getRow(), move.getCell().getCol(), cells(move.getFlipsList()));
      moves.add(move.getCell());
    }
    expect(cells(moves).equals("[(2, 3), (3, 2), (4, 5), (5, 4)]"),
        "Black's four opening moves, row-major");
  }

  void checkConnectFour() {
    System.out.println("\n*** CheckConnectFour");
    CheckConnectFourResponse reply = blocking.checkConnectFour(CheckConnectFourRequest.newBuilder()
        .setBoard(board("0000000", "0000000", "0000000", "0000000", "0000000", "2221000"))
        .setRow(5).setCol(2).setPlayer(2).setRunLength(3)
        .build());
    System.out.printf("player 2 at (5, 2), runs of 3: wins %s, run %s%n",
        reply.getWins(), cells(reply.getRunList()));
    expect(reply.getWins() && cells(reply.getRunList()).equals("[(5, 0), (5, 1), (5, 2)]"),
        "2 2 2 on the bottom row is a run of 3");
  }

  static List<TicTacToeMove> ticTacToeMoves(int[][] moves) {
    return Arrays.stream(moves)
        .map(m -> TicTacToeMove.newBuilder().setRow(m[0]).setCol(m[1]).build())
        .toList();
  }

  void judgeTicTacToe() {
    System.out.println("\n*** JudgeTicTacToe");
    int[][] moves = {{0, 0}, {1, 1}, {0, 1}, {2, 2}, {0, 2}};
    JudgeTicTacToeResponse reply = blocking.judgeTicTacToe(
        JudgeTicTacToeRequest.newBuilder().addAllMoves(ticTacToeMoves(moves)).build());
    System.out.printf("%s after %d moves, line %s, board %s%n", reply.getVerdict(),
        reply.getMovesPlayed(), cells(reply.getLineList()), reply.getBoard().getRowsList());
    expect(reply.getVerdict() == Verdict.VERDICT_A_WINS
            && cells(reply.getLineList()).equals("[(0, 0), (0, 1), (0, 2)]")
            && reply.getBoard().getRowsList().equals(List.of("XXX", ".O.", "..O"))
            && reply.getMovesPlayed() == 5,
        "A wins along row 0");
  }


  /**
   * CheckGomokuMove: Black at (1, 3) joins two pairs into five in a row (freestyle, the
   * default); on a board where that stone makes six, standard Gomoku ({@code exact}) does not
   * count the overline.
   */
  void checkGomokuMove() {
    System.out.println("\n*** CheckGomokuMove");
    CheckGomokuMoveResponse five = blocking.checkGomokuMove(CheckGomokuMoveRequest.newBuilder()
        .setBoard(board("..W.W..", ".BB.BB.", "...W.W.")).setRow(1).setCol(3).setColor("B")
        .build());
    System.out.printf("Black at (1, 3): legal %s, wins %s, run %s%n",
        five.getLegal(), five.getWins(), cells(five.getRunList()));
    expect(five.getLegal() && five.getWins()
            && cells(five.getRunList()).equals("[(1, 1), (1, 2), (1, 3), (1, 4), (1, 5)]"),
        "Black at (1, 3) makes five along row 1");
    CheckGomokuMoveResponse six = blocking.checkGomokuMove(CheckGomokuMoveRequest.newBuilder()
        .setBoard(board("BBB.BB.", "WWWW...")).setRow(0).setCol(3).setColor("B").setExact(true)
        .build());
    System.out.printf("Black at (0, 3) making six, exactly five to win: legal %s, wins %s%n",
        six.getLegal(), six.getWins());
    expect(six.getLegal() && !six.getWins() && six.getRunCount() == 0,
        "an overline does not win standard Gomoku");
  }

  /** The position after 1. f3 e5 2. g4, Black to move. */
  private static final String FOOLS_MATE =
      "rnbqkbnr/pppp1ppp/8/4p3/6P1/5P2/PPPPP2P/RNBQKBNR b KQkq g3 0 2";

  /**
   * CheckChessMove with a move in SAN: Black's Qh4 is legal and mates, the reply giving it in
   * UCI and in SAN (with its mark) and the position after it; Qh5, which no black piece can
   * reach, is not legal.
   */
  void checkChessMove() {
    System.out.println("\n*** CheckChessMove");
    CheckChessMoveResponse mate = blocking.checkChessMove(
        CheckChessMoveRequest.newBuilder().setFen(FOOLS_MATE).setMove("Qh4").build());
    System.out.printf("Qh4: legal %s, %s (%s), check %s, %s, then %s%n", mate.getLegal(),
        mate.getMove().getSan(), mate.getMove().getUci(), mate.getCheck(), mate.getTermination(),
        mate.getFen());
    expect(mate.getLegal() && mate.getMove().getUci().equals("d8h4")
            && mate.getMove().getSan().equals("Qh4#") && mate.getCheck()
            && mate.getTermination() == ChessTermination.CHESS_TERMINATION_CHECKMATE
            && mate.getFen().equals("rnb1kbnr/pppp1ppp/8/4p3/6Pq/5P2/PPPPP2P/RNBQKBNR w KQkq - 1 3"),
        "Qh4 is d8h4, and mates");
    CheckChessMoveResponse unreachable = blocking.checkChessMove(
        CheckChessMoveRequest.newBuilder().setFen(FOOLS_MATE).setMove("Qh5").build());
    System.out.printf("Qh5: legal %s%n", unreachable.getLegal());
    expect(!unreachable.getLegal() && !unreachable.hasMove() && unreachable.getFen().isEmpty(),
        "Qh5 names no legal move");
  }

  /** ListChessMoves: the king and pawn of a king and pawn ending, sorted by UCI. */
  void listChessMoves() {
    System.out.println("\n*** ListChessMoves");
    ListChessMovesResponse reply = blocking.listChessMoves(
        ListChessMovesRequest.newBuilder().setFen("4k3/8/8/8/8/8/4P3/4K3 w - - 0 1").build());
    List<String> moves = reply.getMovesList().stream()
        .map(move -> move.getUci() + " " + move.getSan())
        .toList();
    System.out.printf("White may play %s; check %s, %s%n", moves, reply.getCheck(),
        reply.getTermination());
    expect(moves.equals(List.of("e1d1 Kd1", "e1d2 Kd2", "e1f1 Kf1", "e1f2 Kf2", "e2e3 e3",
                "e2e4 e4"))
            && !reply.getCheck()
            && reply.getTermination() == ChessTermination.CHESS_TERMINATION_UNSPECIFIED,
        "four king moves and two pawn moves, in UCI order");
  }

  /** JudgeChessGame: the scholar's mate, written in SAN, judged as a whole. */
  void judgeChessGame() {
    System.out.println("\n*** JudgeChessGame");
    List<String> moves = List.of("e4", "e5", "Bc4", "Nc6", "Qh5", "Nf6", "Qxf7");
    JudgeChessGameResponse reply = blocking.judgeChessGame(
        JudgeChessGameRequest.newBuilder().addAllMoves(moves).build());
    System.out.printf("%s by %s after %d plies: %s, %s%n", reply.getVerdict(),
        reply.getTermination(), reply.getMovesPlayed(), String.join(" ", reply.getSanList()),
        reply.getFen());
    expect(reply.getVerdict() == Verdict.VERDICT_A_WINS
            && reply.getTermination() == ChessTermination.CHESS_TERMINATION_CHECKMATE
            && reply.getMovesPlayed() == 7 && reply.getCheck() && !reply.getDrawClaimable()
            && reply.getSanList().equals(List.of("e4", "e5", "Bc4", "Nc6", "Qh5", "Nf6", "Qxf7#"))
            && reply.getFen().equals(
                "r1bqkb1r/pppp1Qpp/2n2n2/4p3/2B1P3/8/PPPP1PPP/RNB1K1NR b KQkq - 0 4"),
        "White mates on f7");
  }

  /**
   * A malformed request: INVALID_ARGUMENT, with a {@code google.rpc.BadRequest} detail naming
   * every field at fault, read with {@link StatusProto#fromThrowable}.
   */
  void aMalformedRequest() throws InvalidProtocolBufferException {
    System.out.println("\n*** a malformed request");
    try {
      blocking.checkConnectFour(CheckConnectFourRequest.newBuilder()
          .setBoard(board("000", "00", "0000")).setRow(9).setCol(0).setPlayer(3).build());
      throw new WrongAnswer("a ragged board was accepted");
    } catch (StatusRuntimeException error) {
      System.out.println(error.getStatus().getCode() + ": " + error.getStatus().getDescription());
      com.google.rpc.Status status = StatusProto.fromThrowable(error);
      expect(status != null, "the status carries details");
      List<String> fields = new ArrayList<>();
      for (Any detail : status.getDetailsList()) {
        if (detail.is(BadRequest.class)) {
          for (var violation : detail.unpack(BadRequest.class).getFieldViolationsList()) {
            System.out.printf("  %s: %s%n", violation.getField(), violation.getDescription());
            fields.add(violation.getField());
          }
        }
      }
      expect(error.getStatus().getCode() == Status.Code.INVALID_ARGUMENT
              && fields.equals(List.of("board.rows[1]", "board.rows[2]", "row", "player")),
          "two ragged rows, a row off the board and a bad player");
    }
  }

  /**
   * A live game: send a move, read its reply, choose the next. The second move is refused
   * (the square is taken) and the game goes on.
   */
  void playTicTacToe() throws InterruptedException {
    System.out.println("\n*** PlayTicTacToe");
    LiveStream<PlayTicTacToeRequest, PlayTicTacToeResponse> game =
        LiveStream.open(async::playTicTacToe);
    int rejected = 0;
    PlayTicTacToeResponse reply = null;
    for (int[] move : new int[][] {{1, 1}, {1, 1}, {0, 0}, {0, 1}, {2, 2}, {2, 1}}) {
      game.send(PlayTicTacToeRequest.newBuilder().setRow(move[0]).setCol(move[1]).build());
      reply = game.next();
      expect(reply != null, "a reply to every move");
      if (reply.getRejected().isEmpty()) {
        System.out.printf("(%d, %d): %s, %d moves played%n",
            move[0], move[1], reply.getVerdict(), reply.getMovesPlayed());
      } else {
        rejected++;
        System.out.printf("(%d, %d): rejected: %s%n", move[0], move[1], reply.getRejected());
      }
    }
    game.closeSend();
    expect(game.next() == null, "the stream ends after the client's");
    expect(rejected == 1 && reply.getVerdict() == Verdict.VERDICT_A_WINS
            && cells(reply.getLineList()).equals("[(0, 1), (1, 1), (2, 1)]"),
        "one taken square, then A completes the middle column");
  }

  /**
   * A clock runs out on its own: with 300 ms each and no move sent, the server announces, in a
   * reply marked unprompted, that A (X) lost on time with 0 left and B's 300 ms untouched, then
   * ends the stream. The client half-closes right after the setup: a running clock keeps the
   * stream open until the announcement, which comes well within the call's deadline.
   */
  void playTicTacToeOnTheClock() throws InterruptedException {
    System.out.println("\n*** PlayTicTacToe on the clock");
    LiveStream<PlayTicTacToeRequest, PlayTicTacToeResponse> game =
        LiveStream.open(async::playTicTacToe);
    Duration initial = Duration.ofMillis(300);
    game.send(PlayTicTacToeRequest.newBuilder()
        .setSetup(TicTacToeSetup.newBuilder()
            .setTimeControl(TimeControl.newBuilder().setInitial(proto(initial))))
        .build());
    long sent = System.nanoTime();
    game.closeSend();
    PlayTicTacToeResponse start = game.next();
    PlayTicTacToeResponse flag = game.next(); // sent by the server on its own
    long waited = System.nanoTime() - sent;
    expect(start != null && flag != null, "the setup's reply, then the announcement");
    expect(game.next() == null, "the stream ends after the announcement");
    for (PlayTicTacToeResponse reply : List.of(start, flag)) {
      System.out.printf("%s, %s, unprompted %s, time left A %s, B %s%n", reply.getVerdict(),
          reply.getEnding(), reply.getUnprompted(), duration(reply.getClock().getALeft()),
          duration(reply.getClock().getBLeft()));
    }
    System.out.printf("the announcement came %d ms after the setup%n", waited / 1_000_000);
    expect(start.hasClock() && duration(start.getClock().getALeft()).equals(initial)
            && duration(start.getClock().getBLeft()).equals(initial)
            && start.getEnding() == Ending.ENDING_UNSPECIFIED && !start.getUnprompted(),
        "the setup's reply: 300 ms each, the game going on");
    expect(flag.getUnprompted() && flag.getEnding() == Ending.ENDING_TIME
            && flag.getVerdict() == Verdict.VERDICT_B_WINS && flag.hasClock()
            && duration(flag.getClock().getALeft()).isZero()
            && duration(flag.getClock().getBLeft()).equals(initial),
        "an unprompted reply: A out of time with 0 left, B winning with 300 ms");
  }

  /** A {@link Duration} as a {@code google.protobuf.Duration}. */
  static com.google.protobuf.Duration proto(Duration duration) {
    return com.google.protobuf.Duration.newBuilder()
        .setSeconds(duration.getSeconds()).setNanos(duration.getNano()).build();
  }

  /** A {@code google.protobuf.Duration} as a {@link Duration}. */
  static Duration duration(com.google.protobuf.Duration proto) {
    return Duration.ofSeconds(proto.getSeconds(), proto.getNanos());
  }

  /**
   * A live Othello game from a custom start: after Black's first disc White has no legal move,
   * so White passes and Black plays again; a disc on an occupied cell is rejected.
   */
  void playOthello() throws InterruptedException {
    System.out.println("\n*** PlayOthello");
    LiveStream<PlayOthelloRequest, PlayOthelloResponse> game = LiveStream.open(async::playOthello);
    List<PlayOthelloRequest> messages = List.of(
        PlayOthelloRequest.newBuilder()
            .setSetup(OthelloSetup.newBuilder().setBoard(board(".WB.WB")).setToMove("B"))
            .build(),
        PlayOthelloRequest.newBuilder().setMove(cell(0, 0)).build(),
        PlayOthelloRequest.newBuilder().setMove(cell(0, 0)).build(),
        PlayOthelloRequest.newBuilder().setMove(cell(0, 3)).build());
    List<PlayOthelloResponse> replies = new ArrayList<>();
    for (PlayOthelloRequest message : messages) {
      game.send(message);
      PlayOthelloResponse reply = game.next();
      expect(reply != null, "a reply to every message");
      if (reply.getRejected().isEmpty()) {
        System.out.printf("%s %s: flipped %s, %s to move%s, legal %s, %d black, %d white%n",
            reply.getVerdict(), reply.getBoard().getRowsList(), cells(reply.getFlipsList()),
            reply.getToMove().isEmpty() ? "nobody" : reply.getToMove(),
            reply.getPassed() ? " (White passed)" : "", cells(reply.getLegalMovesList()),
            reply.getBlackDiscs(), reply.getWhiteDiscs());
      } else {
        System.out.println("rejected: " + reply.getRejected());
      }
      replies.add(reply);
    }
    game.closeSend();
    expect(game.next() == null, "the stream ends after the client's");
    expect(replies.get(1).getPassed() && replies.get(1).getToMove().equals("B"),
        "White has no move after (0, 0): Black plays again");
    expect(!replies.get(2).getRejected().isEmpty() && replies.get(2).getMovesPlayed() == 1,
        "a disc on an occupied cell is rejected, the game unchanged");
    PlayOthelloResponse last = replies.get(3);
    expect(last.getVerdict() == Verdict.VERDICT_A_WINS
            && last.getBoard().getRowsList().equals(List.of("BBBBBB"))
            && last.getToMove().isEmpty(),
        "Black fills the board and wins");
  }

  /** Player 1 wins along the bottom row; a drop off the board (column 7) is rejected. */
  void playConnectFour() throws InterruptedException {
    System.out.println("\n*** PlayConnectFour");
    PlayConnectFourResponse last =
        playConnectFourResumably(async, 6, 7, List.of(3, 3, 4, 4, 5, 5, 7, 6));
    System.out.printf("%s at (%d, %d), run %s%n", last.getVerdict(),
        last.getPlaced().getRow(), last.getPlaced().getCol(), cells(last.getRunList()));
    expect(last.getVerdict() == Verdict.VERDICT_A_WINS && last.getMovesPlayed() == 7
            && cells(last.getRunList()).equals("[(5, 3), (5, 4), (5, 5), (5, 6)]"),
        "player 1 wins along the bottom row");
  }

  /**
   * Plays {@code drops} on a board of {@code rows} x {@code cols}, resuming from the history on
   * a new stream whenever the stream is lost: the loop a game server copies. What it keeps is
   * the list of drops the server applied; the reply to the resuming setup is the game as it
   * stood, so play goes on as if the stream had never ended, on any replica. Returns the last
   * reply.
   */
  static PlayConnectFourResponse playConnectFourResumably(
      ArbiterServiceStub stub, int rows, int cols, List<Integer> drops)
      throws InterruptedException {
    ResumableGame game = new ResumableGame(rows, cols);
    for (int attempt = 0; attempt < 5; attempt++) {
      try {
        game.play(stub, drops);
        return game.last;
      } catch (StatusRuntimeException error) {
        if (!isResumable(error.getStatus())) {
          throw error;
        }
        System.out.printf("stream lost (%s: %s); resuming after %d drops%n",
            error.getStatus().getCode(), error.getStatus().getDescription(), game.applied.size());
      }
    }
    throw new IllegalStateException("the game could not be resumed");
  }

  /**
   * Whether a lost stream is resumed: on UNAVAILABLE (a server shutting down, a connection
   * lost), and on a stream reset (INTERNAL, "RST_STREAM"), which is how a proxy such as nginx
   * ends a stream whose upstream died. A resume replays a history, so it is always safe.
   */
  static boolean isResumable(Status status) {
    return status.getCode() == Status.Code.UNAVAILABLE
        || (status.getCode() == Status.Code.INTERNAL
            && String.valueOf(status.getDescription()).contains("RST_STREAM"));
  }

  /** What {@link #playConnectFourResumably} keeps between streams. */
  private static final class ResumableGame {
    final int rows;
    final int cols;
    /** The drops the server applied: the history a new stream starts from. */
    final List<Integer> applied = new ArrayList<>();
    /** How many of the drops have been answered (applied or rejected). */
    int answered;
    PlayConnectFourResponse last;

    ResumableGame(int rows, int cols) {
      this.rows = rows;
      this.cols = cols;
    }

    /**
     * One stream: a setup with the drops applied so far, then the drops not yet answered, one
     * by one. A drop whose reply never came is sent again on the next stream.
     */
    void play(ArbiterServiceStub stub, List<Integer> drops) throws InterruptedException {
      LiveStream<PlayConnectFourRequest, PlayConnectFourResponse> stream =
          LiveStream.open(stub::playConnectFour);
      stream.send(PlayConnectFourRequest.newBuilder()
          .setSetup(ConnectFourSetup.newBuilder().setRows(rows).setCols(cols).addAllHistory(applied))
          .build());
      nextOf(stream); // the game as it stood
      for (int column : drops.subList(answered, drops.size())) {
        stream.send(PlayConnectFourRequest.newBuilder().setDrop(column).build());
        PlayConnectFourResponse reply = nextOf(stream);
        answered++;
        if (reply.getRejected().isEmpty()) {
          applied.add(column);
          System.out.printf("column %d: %d drops played%n", column, reply.getMovesPlayed());
        } else {
          System.out.printf("column %d: rejected: %s%n", column, reply.getRejected());
        }
        last = reply;
      }
      stream.closeSend();
    }

    private static PlayConnectFourResponse nextOf(
        LiveStream<PlayConnectFourRequest, PlayConnectFourResponse> stream)
        throws InterruptedException {
      PlayConnectFourResponse reply = stream.next();
      if (reply == null) {
        throw Status.UNAVAILABLE.withDescription("the stream ended early").asRuntimeException();
      }
      return reply;
    }
  }

  /**
   * A live Gomoku game on a 6x6 board, four in a row to win, resumed after four stones (the
   * setup's history): a stone on a taken cell is rejected, Black wins along row 2, and a stone
   * after the end is rejected.
   */
  void playGomoku() throws InterruptedException {
    System.out.println("\n*** PlayGomoku");
    LiveStream<PlayGomokuRequest, PlayGomokuResponse> game = LiveStream.open(async::playGomoku);
    List<PlayGomokuRequest> messages = new ArrayList<>();
    messages.add(PlayGomokuRequest.newBuilder()
        .setSetup(GomokuSetup.newBuilder().setRows(6).setCols(6).setRunLength(4)
            .addAllHistory(List.of(cell(2, 2), cell(3, 3), cell(2, 3), cell(3, 4))))
        .build());
    for (int[] move : new int[][] {{2, 2}, {2, 4}, {2, 5}, {2, 1}, {0, 0}}) {
      messages.add(PlayGomokuRequest.newBuilder().setMove(cell(move[0], move[1])).build());
    }
    List<PlayGomokuResponse> replies = new ArrayList<>();
    for (PlayGomokuRequest message : messages) {
      game.send(message);
      PlayGomokuResponse reply = game.next();
      expect(reply != null, "a reply to every message");
      if (reply.getRejected().isEmpty()) {
        System.out.printf("%s %s: %s to move, %d stones%n", reply.getVerdict(),
            reply.getBoard().getRowsList(),
            reply.getToMove().isEmpty() ? "nobody" : reply.getToMove(), reply.getMovesPlayed());
      } else {
        System.out.println("rejected: " + reply.getRejected());
      }
      replies.add(reply);
    }
    game.closeSend();
    expect(game.next() == null, "the stream ends after the client's");
    expect(replies.get(0).getMovesPlayed() == 4 && replies.get(0).getToMove().equals("B"),
        "the setup's four stones, Black to move");
    expect(!replies.get(1).getRejected().isEmpty() && replies.get(1).getMovesPlayed() == 4,
        "a stone on a taken cell is rejected, the game unchanged");
    PlayGomokuResponse win = replies.get(4);
    expect(win.getVerdict() == Verdict.VERDICT_A_WINS
            && win.getEnding() == Ending.ENDING_BOARD && win.getMovesPlayed() == 7
            && cells(win.getRunList()).equals("[(2, 1), (2, 2), (2, 3), (2, 4)]")
            && win.getToMove().isEmpty(),
        "Black wins along row 2");
    expect(!replies.get(5).getRejected().isEmpty() && replies.get(5).getMovesPlayed() == 7,
        "no stone after the end");
  }

  /**
   * A live chess game from the standard position, moves in SAN (and one in UCI): the knights
   * go out and back. A claim of a draw when the start position has stood twice is rejected;
   * after the second round it has stood three times, the reply says a draw may be claimed, and
   * the claim ends the game drawn by threefold repetition.
   */
  void playChess() throws InterruptedException {
    System.out.println("\n*** PlayChess");
    LiveStream<PlayChessRequest, PlayChessResponse> game = LiveStream.open(async::playChess);
    List<PlayChessRequest> messages = new ArrayList<>();
    messages.add(PlayChessRequest.newBuilder().setSetup(ChessSetup.getDefaultInstance()).build());
    for (String move : List.of("Nf3", "Nf6", "Ng1", "Ng8")) {
      messages.add(PlayChessRequest.newBuilder().setMove(move).build());
    }
    messages.add(PlayChessRequest.newBuilder().setClaimDraw(true).build()); // twice: rejected
    for (String move : List.of("g1f3", "Nf6", "Ng1", "Ng8")) {
      messages.add(PlayChessRequest.newBuilder().setMove(move).build());
    }
    messages.add(PlayChessRequest.newBuilder().setClaimDraw(true).build()); // three times
    List<PlayChessResponse> replies = new ArrayList<>();
    for (PlayChessRequest message : messages) {
      game.send(message);
      PlayChessResponse reply = game.next();
      expect(reply != null, "a reply to every message");
      if (!reply.getRejected().isEmpty()) {
        System.out.println("rejected: " + reply.getRejected());
      } else if (reply.hasMove()) {
        System.out.printf("%s (%s): %d plies, %s to move, draw claimable %s%n",
            reply.getMove().getSan(), reply.getMove().getUci(), reply.getMovesPlayed(),
            reply.getToMove(), reply.getDrawClaimable());
      } else {
        System.out.printf("%s, %s, %s: %s%n", reply.getVerdict(), reply.getTermination(),
            reply.getEnding(), reply.getFen());
      }
      replies.add(reply);
    }
    game.closeSend();
    expect(game.next() == null, "the stream ends after the client's");
    expect(replies.size() == 11 && replies.get(0).getToMove().equals("w")
            && replies.get(0).getMovesPlayed() == 0,
        "the setup's reply: the standard position, White to move");
    PlayChessResponse early = replies.get(5);
    expect(!early.getRejected().isEmpty() && early.getVerdict() == Verdict.VERDICT_PENDING
            && early.getMovesPlayed() == 4,
        "a claim on a position that has stood twice is rejected, the game going on");
    PlayChessResponse uci = replies.get(6);
    expect(uci.getMove().getSan().equals("Nf3") && uci.getMove().getUci().equals("g1f3"),
        "a move in UCI is the same move as in SAN");
    PlayChessResponse third = replies.get(9);
    expect(third.getDrawClaimable() && third.getMovesPlayed() == 8
            && position(third.getFen()).equals(position(replies.get(0).getFen())),
        "the start position stands a third time: a draw may be claimed");
    PlayChessResponse drawn = replies.get(10);
    expect(drawn.getRejected().isEmpty() && drawn.getVerdict() == Verdict.VERDICT_DRAW
            && drawn.getTermination() == ChessTermination.CHESS_TERMINATION_THREEFOLD_REPETITION
            && drawn.getEnding() == Ending.ENDING_CLAIM && drawn.getToMove().isEmpty()
            && !drawn.getDrawClaimable(),
        "the claim ends the game drawn by threefold repetition");
  }

  /**
   * A FEN's first four fields (placement, side to move, castling, en passant): two positions
   * are the same exactly when these are, whatever the move counters say.
   */
  static String position(String fen) {
    return String.join(" ", Arrays.asList(fen.split(" ")).subList(0, 4));
  }

  /**
   * Many checks of any kind in one call, each answered as its own RPC answers it, in order; a
   * malformed one (a colour that is not "B" or "W") is answered in place with its violations.
   * Among them a Gomoku stone on a taken cell and a chess move in UCI from the start position.
   */
  void checkBatch() {
    System.out.println("\n*** CheckBatch");
    CheckBatchRequest request = CheckBatchRequest.newBuilder()
        .addChecks(Check.newBuilder().setCheckOthelloMove(at2x3("B")))
        .addChecks(Check.newBuilder().setListOthelloMoves(
            ListOthelloMovesRequest.newBuilder().setBoard(board(".WB")).setColor("G")))
        .addChecks(Check.newBuilder().setCheckConnectFour(CheckConnectFourRequest.newBuilder()
            .setBoard(board("0000", "2220", "1111")).setRow(2).setCol(3).setPlayer(1)))
        .addChecks(Check.newBuilder().setJudgeTicTacToe(JudgeTicTacToeRequest.newBuilder()
            .addAllMoves(ticTacToeMoves(new int[][] {{1, 1}, {0, 0}}))))
        .addChecks(Check.newBuilder().setCheckGomokuMove(CheckGomokuMoveRequest.newBuilder()
            .setBoard(board("B..", ".W.", "...")).setRow(1).setCol(1).setColor("B")))
        .addChecks(Check.newBuilder().setCheckChessMove(
            CheckChessMoveRequest.newBuilder().setMove("e2e4")))
        .build();
    CheckBatchResponse reply = blocking.checkBatch(request);
    for (int i = 0; i < reply.getResultsCount(); i++) {
      CheckResult result = reply.getResults(i);
      switch (result.getResultCase()) {
        case CHECK_OTHELLO_MOVE -> System.out.printf("check %d: legal %s, flips %s%n", i,
            result.getCheckOthelloMove().getLegal(),
            cells(result.getCheckOthelloMove().getFlipsList()));
        case CHECK_CONNECT_FOUR -> System.out.printf("check %d: wins %s, run %s%n", i,
            result.getCheckConnectFour().getWins(),
            cells(result.getCheckConnectFour().getRunList()));
        case JUDGE_TIC_TAC_TOE -> System.out.printf("check %d: %s, board %s%n", i,
            result.getJudgeTicTacToe().getVerdict(),
            result.getJudgeTicTacToe().getBoard().getRowsList());
        case CHECK_GOMOKU_MOVE -> System.out.printf("check %d: legal %s, wins %s%n", i,
            result.getCheckGomokuMove().getLegal(), result.getCheckGomokuMove().getWins());
        case CHECK_CHESS_MOVE -> System.out.printf("check %d: legal %s, %s, then %s%n", i,
            result.getCheckChessMove().getLegal(), result.getCheckChessMove().getMove().getSan(),
            result.getCheckChessMove().getFen());
        default -> {
          for (FieldViolation violation : result.getInvalidList()) {
            System.out.printf("check %d: invalid %s: %s%n",
                i, violation.getField(), violation.getDescription());
          }
        }
      }
    }
    List<CheckResult> results = reply.getResultsList();
    expect(results.size() == 6, "one result per check");
    expect(cells(results.get(0).getCheckOthelloMove().getFlipsList()).equals("[(3, 3)]"),
        "check 0: Black at (2, 3) turns over (3, 3)");
    expect(results.get(1).getResultCase() == CheckResult.ResultCase.RESULT_NOT_SET
            && results.get(1).getInvalidCount() == 1
            && results.get(1).getInvalid(0).getField().equals("color"),
        "check 1: invalid on its colour alone");
    expect(results.get(2).getCheckConnectFour().getWins()
            && cells(results.get(2).getCheckConnectFour().getRunList())
                .equals("[(2, 0), (2, 1), (2, 2), (2, 3)]"),
        "check 2: 1 1 1 1 wins");
    JudgeTicTacToeResponse judged = results.get(3).getJudgeTicTacToe();
    expect(judged.getVerdict() == Verdict.VERDICT_PENDING
            && judged.getBoard().getRowsList().equals(List.of("O..", ".X.", "...")),
        "check 3: a game under way");
    expect(results.get(4).hasCheckGomokuMove() && !results.get(4).getCheckGomokuMove().getLegal(),
        "check 4: a taken cell is no Gomoku move");
    CheckChessMoveResponse opening = results.get(5).getCheckChessMove();
    expect(opening.getLegal() && opening.getMove().getSan().equals("e4")
            && opening.getFen().equals(
                "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1"),
        "check 5: e2e4 is 1. e4");
  }

  /**
   * Many live games in one stream: each message carries actions for any games, numbered by the
   * client; a number that holds no game starts one of the action's kind. Two Othello games and
   * a Tic-Tac-Toe game, then a rejected move and a close.
   */
  void playMany() throws InterruptedException {
    System.out.println("\n*** PlayMany");
    LiveStream<PlayManyRequest, PlayManyResponse> stream = LiveStream.open(async::playMany);
    List<List<GameAction>> messages = List.of(
        List.of(othello(1, 2, 3), ticTacToe(2, 1, 1), othello(3, 5, 4)),
        List.of(othello(1, 2, 2), ticTacToe(2, 1, 1), // taken: rejected, the game goes on
            GameAction.newBuilder().setGame(3).setClose(true).build()));
    List<GameState> states = new ArrayList<>();
    for (List<GameAction> actions : messages) {
      stream.send(PlayManyRequest.newBuilder().addAllActions(actions).build());
      PlayManyResponse reply = stream.next();
      expect(reply != null, "a reply to every message");
      for (GameState state : reply.getStatesList()) {
        long game = state.getGame();
        switch (state.getStateCase()) {
          case OTHELLO -> System.out.printf("game %d (Othello): %s to move, rejected \"%s\"%n",
              game, state.getOthello().getToMove(), state.getOthello().getRejected());
          case TIC_TAC_TOE -> System.out.printf(
              "game %d (Tic-Tac-Toe): %d moves played, rejected \"%s\"%n", game,
              state.getTicTacToe().getMovesPlayed(), state.getTicTacToe().getRejected());
          case CONNECT_FOUR -> System.out.printf("game %d (Connect Four): %d to move%n",
              game, state.getConnectFour().getToMove());
          default -> System.out.printf("game %d: %s%n", game,
              state.getInvalidCount() == 0 ? "closed" : "invalid " + state.getInvalidList());
        }
        states.add(state);
      }
    }
    stream.closeSend();
    expect(stream.next() == null, "the stream ends after the client's");
    expect(states.size() == 6, "one state per action");
    expect(states.get(0).getOthello().getToMove().equals("W")
            && states.get(2).getOthello().getToMove().equals("W")
            && states.get(3).getOthello().getToMove().equals("B")
            && states.get(3).getOthello().getRejected().isEmpty(),
        "games 1 and 3 play Othello from the standard start");
    expect(states.get(1).getTicTacToe().getMovesPlayed() == 1
            && !states.get(4).getTicTacToe().getRejected().isEmpty()
            && states.get(4).getTicTacToe().getMovesPlayed() == 1,
        "game 2's second move is rejected, the game unchanged");
    expect(states.get(5).getGame() == 3
            && states.get(5).getStateCase() == GameState.StateCase.STATE_NOT_SET
            && states.get(5).getInvalidCount() == 0,
        "game 3 is closed");
  }

  private static GameAction othello(long game, int row, int col) {
    return GameAction.newBuilder().setGame(game)
        .setOthello(PlayOthelloRequest.newBuilder().setMove(cell(row, col)))
        .build();
  }

  private static GameAction ticTacToe(long game, int row, int col) {
    return GameAction.newBuilder().setGame(game)
        .setTicTacToe(PlayTicTacToeRequest.newBuilder().setRow(row).setCol(col))
        .build();
  }

  /**
   * A game moved to a new stream (on this server or any other) from its history alone: the
   * setup's reply is the game as the old stream left it.
   */
  void resumeFromHistory() throws InterruptedException {
    System.out.println("\n*** resuming from a history");
    List<Integer> drops = List.of(3, 4, 3, 4);
    LiveStream<PlayConnectFourRequest, PlayConnectFourResponse> first =
        LiveStream.open(async::playConnectFour);
    PlayConnectFourResponse before = null;
    for (int column : drops) {
      first.send(PlayConnectFourRequest.newBuilder().setDrop(column).build());
      before = first.next();
    }
    first.closeSend();
    LiveStream<PlayConnectFourRequest, PlayConnectFourResponse> second =
        LiveStream.open(async::playConnectFour);
    second.send(PlayConnectFourRequest.newBuilder()
        .setSetup(ConnectFourSetup.newBuilder().addAllHistory(drops))
        .build());
    PlayConnectFourResponse after = second.next();
    second.closeSend();
    expect(before != null && after != null, "a reply to every message");
    System.out.println("old stream left " + before.getBoard().getRowsList());
    System.out.println("new stream holds " + after.getBoard().getRowsList());
    expect(before.getBoard().equals(after.getBoard())
            && before.getToMove() == after.getToMove()
            && before.getMovesPlayed() == after.getMovesPlayed()
            && after.getMovesPlayed() == 4,
        "the resumed game is the game");
  }
}
