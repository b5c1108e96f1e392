//! Arbitrary bytes decoded as each request message and run through the whole handler
//! path (validation, rule, reply): a decoded message must get a reply or a status, never
//! a panic.
#![no_main]

use arbiter::proto::arbiter_service_server::ArbiterService;
use arbiter::proto::{
    CheckConnectFourRequest, CheckOthelloMoveRequest, JudgeTicTacToeRequest,
    ListOthelloMovesRequest, PlayTicTacToeRequest,
};
use arbiter::service::play::{self, LiveGames, StreamLimits};
use arbiter::service::Arbiter;
use futures_util::StreamExt;
use tokio_util::sync::CancellationToken;
use libfuzzer_sys::fuzz_target;
use prost::Message;
use tonic::Request;

fuzz_target!(|data: &[u8]| {
    let Some((&kind, body)) = data.split_first() else {
        return;
    };
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .expect("a runtime");
    let service = Arbiter::default();
    runtime.block_on(async {
        match kind % 5 {
            0 => {
                if let Ok(request) = CheckOthelloMoveRequest::decode(body) {
                    let _ = service.check_othello_move(Request::new(request)).await;
                }
            }
            1 => {
                if let Ok(request) = ListOthelloMovesRequest::decode(body) {
                    let _ = service.list_othello_moves(Request::new(request)).await;
                }
            }
            2 => {
                if let Ok(request) = CheckConnectFourRequest::decode(body) {
                    let _ = service.check_connect_four(Request::new(request)).await;
                }
            }
            3 => {
                if let Ok(request) = JudgeTicTacToeRequest::decode(body) {
                    let _ = service.judge_tic_tac_toe(Request::new(request)).await;
                }
            }
            _ => {
                // A live game: each length-delimited message is one move, played through
                // the service's stream with a small move limit.
                let mut moves = Vec::new();
                let mut rest = body;
                while !rest.is_empty() {
                    match PlayTicTacToeRequest::decode_length_delimited(&mut rest) {
                        Ok(request) => moves.push(Ok(request)),
                        Err(_) => break,
                    }
                }
                let limits = StreamLimits {
                    max_moves: 12,
                    ..StreamLimits::default()
                };
                let replies: Vec<_> = play::open(
                    futures_util::stream::iter(moves),
                    limits,
                    &LiveGames::default(),
                    CancellationToken::new(),
                )
                .expect("room for one game")
                .collect()
                .await;
                assert!(replies.len() <= 13);
            }
        }
    });
});
