//! Calls by path with their messages as bytes (tonic's client with a codec that keeps
//! bytes as they are): how the load tools call Arbiter without naming a game.

use futures_util::{stream, TryStreamExt};
use tonic::transport::Channel;
use tonic::{Request, Status};

use super::requests::LoadCall;

#[path = "raw_codec.rs"]
mod codec;
pub use self::codec::Raw;

/// Makes `call` on `channel`: its reply messages' bytes (one for a unary call, one per
/// message for a stream), or the status that refused it.
pub async fn call(channel: Channel, call: &LoadCall) -> Result<Vec<Vec<u8>>, Status> {
    let mut grpc = tonic::client::Grpc::new(channel);
    grpc.ready()
        .await
        .map_err(|error| Status::unavailable(error.to_string()))?;
    let path = call
        .path()
        .parse()
        .map_err(|_| Status::internal("not a path"))?;
    let mut messages = call.messages();
    if call.is_stream() {
        let request = Request::new(stream::iter(messages));
        let replies = grpc.streaming(request, path, Raw).await?.into_inner();
        replies.try_collect().await
    } else {
        let message = messages.pop().unwrap_or_default();
        let reply = grpc.unary(Request::new(message), path, Raw).await?;
        Ok(vec![reply.into_inner()])
    }
}
