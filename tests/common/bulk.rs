//! The bulk RPCs as the tests call them: PlayMany actions, streams and exchanges, a
//! CheckBatch call, and the byte budget of their replies.

use std::time::Duration;

use arbiter::proto::arbiter_service_client::ArbiterServiceClient;
use arbiter::proto::game_action::Action;
use arbiter::proto::{
    play_connect_four_request, play_othello_request, Cell, Check, CheckBatchRequest,
    CheckBatchResponse, FieldViolation, GameAction, GameState, PlayConnectFourRequest,
    PlayManyRequest, PlayManyResponse, PlayOthelloRequest,
};
use tokio::sync::mpsc;
use tonic::transport::Channel;
use tonic::Streaming;

use super::messages::{open_stream, tic_tac_toe_move};

/// `action` for game number `game`.
pub fn game_action(game: u64, action: Action) -> GameAction {
    GameAction {
        game,
        action: Some(action),
    }
}

/// An Othello move at (`row`, `col`) in game `game`.
pub fn othello(game: u64, row: i32, col: i32) -> GameAction {
    game_action(
        game,
        Action::Othello(PlayOthelloRequest {
            action: Some(play_othello_request::Action::Move(Cell { row, col })),
        }),
    )
}

/// A Connect Four drop into column `col` in game `game`.
pub fn drop(game: u64, col: i32) -> GameAction {
    game_action(
        game,
        Action::ConnectFour(PlayConnectFourRequest {
            action: Some(play_connect_four_request::Action::Drop(col)),
        }),
    )
}

/// A Tic-Tac-Toe move at (`row`, `col`) in game `game`.
pub fn tic_tac_toe(game: u64, row: i32, col: i32) -> GameAction {
    game_action(game, Action::TicTacToe(tic_tac_toe_move(row, col)))
}

/// The close of game `game`.
pub fn close(game: u64) -> GameAction {
    game_action(game, Action::Close(true))
}

pub fn message(actions: Vec<GameAction>) -> PlayManyRequest {
    PlayManyRequest { actions }
}

/// A PlayMany stream: where its messages go, and its replies. Its games stay live until
/// it is dropped.
pub type ManyStream = (mpsc::Sender<PlayManyRequest>, Streaming<PlayManyResponse>);

/// A new PlayMany stream of `client`.
pub async fn open_many(client: &mut ArbiterServiceClient<Channel>) -> ManyStream {
    open_stream(|stream| client.play_many(stream)).await
}

/// Sends one message of `actions` on `stream` and returns the states its reply holds,
/// which must come within a minute.
pub async fn exchange(stream: &mut ManyStream, actions: Vec<GameAction>) -> Vec<GameState> {
    stream.0.send(message(actions)).await.unwrap();
    tokio::time::timeout(Duration::from_secs(60), stream.1.message())
        .await
        .expect("no reply in 60 s")
        .unwrap()
        .expect("a reply, not the stream's end")
        .states
}

/// The one violation of a state that holds no game state.
pub fn only_violation(state: &GameState) -> &FieldViolation {
    assert!(state.state.is_none(), "{state:?}");
    assert_eq!(state.invalid.len(), 1, "{state:?}");
    &state.invalid[0]
}

/// The reply to a CheckBatch of `checks`, which must be OK.
pub async fn check_batch(
    client: &mut ArbiterServiceClient<Channel>,
    checks: Vec<Check>,
) -> CheckBatchResponse {
    client
        .check_batch(CheckBatchRequest { checks })
        .await
        .unwrap()
        .into_inner()
}

/// Checks that a bulk `reply` kept to its byte budget: MAX_REPLY_BYTES, passed by one
/// item at the most, under 4 MiB in all.
pub fn assert_within_budget(reply: &impl prost::Message) {
    assert!(
        reply.encoded_len() < 4 * 1024 * 1024,
        "{}",
        reply.encoded_len()
    );
}

/// Checks that a bulk `reply` kept to its byte budget, and returns how many of its
/// `items` come before the first that is not `answered`.
pub fn answered_within_budget<T>(
    reply: &impl prost::Message,
    items: &[T],
    answered: impl Fn(&T) -> bool,
) -> usize {
    assert_within_budget(reply);
    items.iter().take_while(|item| answered(item)).count()
}
