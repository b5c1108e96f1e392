//! Building the service's messages, and opening a live game, the same way in every test.

use arbiter::proto::arbiter_service_client::ArbiterServiceClient;
use arbiter::proto::{Board, Cell, PlayTicTacToeRequest, PlayTicTacToeResponse, TicTacToeMove};
use std::future::Future;

use tokio::sync::mpsc;
use tokio_stream::wrappers::ReceiverStream;
use tonic::transport::Channel;
use tonic::Streaming;

/// A board message of `rows`.
pub fn board(rows: &[&str]) -> Option<Board> {
    Some(Board::from_rows(rows))
}

pub fn cell(row: i32, col: i32) -> Cell {
    Cell { row, col }
}

pub fn cells(list: &[(i32, i32)]) -> Vec<Cell> {
    list.iter().map(|&(row, col)| cell(row, col)).collect()
}

/// Tic-Tac-Toe moves of (row, col) pairs.
pub fn moves(list: &[(i32, i32)]) -> Vec<TicTacToeMove> {
    list.iter()
        .map(|&(row, col)| TicTacToeMove { row, col })
        .collect()
}

/// A PlayTicTacToe message: the move at (`row`, `col`).
pub fn tic_tac_toe_move(row: i32, col: i32) -> PlayTicTacToeRequest {
    PlayTicTacToeRequest {
        row,
        col,
        setup: None,
    }
}

/// Opens a live game with `call` (a Play RPC of the client, given the stream of
/// messages), which must answer OK: returns where to send the game's messages, and its
/// replies.
pub async fn open_stream<Req, Resp, F, Fut>(call: F) -> (mpsc::Sender<Req>, Streaming<Resp>)
where
    F: FnOnce(ReceiverStream<Req>) -> Fut,
    Fut: Future<Output = Result<tonic::Response<Streaming<Resp>>, tonic::Status>>,
{
    let (sender, outgoing) = mpsc::channel(4);
    let replies = call(ReceiverStream::new(outgoing))
        .await
        .unwrap()
        .into_inner();
    (sender, replies)
}

/// A PlayTicTacToe stream with the centre played and its reply read: a live game that
/// stays open as long as the returned sender does.
pub async fn live_tic_tac_toe(
    client: &mut ArbiterServiceClient<Channel>,
) -> (
    mpsc::Sender<PlayTicTacToeRequest>,
    Streaming<PlayTicTacToeResponse>,
) {
    let (moves, mut replies) = open_stream(|stream| client.play_tic_tac_toe(stream)).await;
    moves.send(tic_tac_toe_move(1, 1)).await.unwrap();
    assert_eq!(replies.message().await.unwrap().unwrap().moves_played, 1);
    (moves, replies)
}

/// `message` as a gRPC message frame: the uncompressed flag, the big-endian length, the
/// message (for raw HTTP/2 clients).
pub fn grpc_frame(message: &impl prost::Message) -> bytes::Bytes {
    let body = message.encode_to_vec();
    let mut framed = vec![0];
    framed.extend_from_slice(&(body.len() as u32).to_be_bytes());
    framed.extend_from_slice(&body);
    framed.into()
}

/// A gRPC frame holding a gzip-compressed CheckConnectFourRequest that inflates to
/// `inflated` bytes, nearly all of them one board row: about a thousandth of that on the
/// wire. It is compressed in pieces, so that the test never holds the inflated message.
pub fn gzip_bomb(inflated: usize) -> bytes::Bytes {
    compression_bomb("gzip", inflated)
}

/// The same bomb in `encoding`: `gzip`, `deflate` (zlib, as gRPC names it) or `zstd`.
pub fn compression_bomb(encoding: &str, inflated: usize) -> bytes::Bytes {
    use std::io::Write;
    /// A protobuf varint.
    fn varint(mut value: usize, out: &mut Vec<u8>) {
        while value >= 0x80 {
            out.push((value as u8 & 0x7f) | 0x80);
            value >>= 7;
        }
        out.push(value as u8);
    }
    let row = inflated - 16;
    let mut board = vec![0x0a]; // Board.rows, field 1
    varint(row, &mut board);
    let mut head = vec![0x0a]; // CheckConnectFourRequest.board, field 1
    varint(board.len() + row, &mut head);
    head.extend_from_slice(&board);

    /// `head`, then `row` bytes of `1`, written in pieces into `encoder`.
    fn fill<W: Write>(mut encoder: W, head: &[u8], row: usize) -> W {
        encoder.write_all(head).unwrap();
        let piece = vec![b'1'; 1 << 16];
        let mut left = row;
        while left > 0 {
            let n = left.min(piece.len());
            encoder.write_all(&piece[..n]).unwrap();
            left -= n;
        }
        encoder
    }
    let best = flate2::Compression::best();
    let compressed = match encoding {
        "gzip" => fill(flate2::write::GzEncoder::new(Vec::new(), best), &head, row)
            .finish()
            .unwrap(),
        "deflate" => fill(
            flate2::write::ZlibEncoder::new(Vec::new(), best),
            &head,
            row,
        )
        .finish()
        .unwrap(),
        "zstd" => fill(
            zstd::stream::write::Encoder::new(Vec::new(), 19).unwrap(),
            &head,
            row,
        )
        .finish()
        .unwrap(),
        other => panic!("no bomb in {other}"),
    };
    let mut frame = vec![1]; // compressed
    frame.extend_from_slice(&(compressed.len() as u32).to_be_bytes());
    frame.extend_from_slice(&compressed);
    frame.into()
}
