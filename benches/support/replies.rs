//! Arbiter's replies to a load call, from the real service called in-process by the
//! call's path with its messages' bytes (`arbiter::Arbiter` behind its generated
//! server): what `tools/h2load.rs` checks every reply against, and what the
//! same-bytes baseline (`tools/baseline_server.rs --same-bytes`) sends. No game is
//! named here.

use arbiter::proto::arbiter_service_server::ArbiterServiceServer;
use arbiter::Arbiter;
use http_body_util::{BodyExt, Full};
use prost::bytes::Bytes;
use tower::ServiceExt;

use super::requests::LoadCall;

/// Arbiter's reply messages to `call` (each without the gRPC frame prefix): one for a
/// unary call, one per request message for a stream. Panics unless the call succeeds.
pub async fn in_process(call: &LoadCall) -> Vec<Vec<u8>> {
    let body: Vec<u8> = call.messages().iter().flat_map(|m| frame(m)).collect();
    let request = tonic::codegen::http::Request::builder()
        .method("POST")
        .uri(format!("http://in-process{}", call.path()))
        .header("content-type", "application/grpc")
        .header("te", "trailers")
        .body(Full::new(Bytes::from(body)))
        .expect("a request");
    let response = ArbiterServiceServer::new(Arbiter::default())
        .oneshot(request)
        .await
        .expect("the service answers");
    let (parts, body) = response.into_parts();
    let collected = body.collect().await.expect("the reply's body");
    let status = collected
        .trailers()
        .and_then(|trailers| trailers.get("grpc-status"))
        .or_else(|| parts.headers.get("grpc-status"))
        .map(|status| status.as_bytes().to_vec());
    assert_eq!(
        status.as_deref(),
        Some(&b"0"[..]),
        "the workload's own request fails: {:?} {:?}",
        parts.headers,
        collected.trailers()
    );
    let mut bytes = &collected.to_bytes()[..];
    let mut messages = Vec::new();
    while bytes.len() >= 5 {
        let len = u32::from_be_bytes([bytes[1], bytes[2], bytes[3], bytes[4]]) as usize;
        messages.push(bytes[5..5 + len].to_vec());
        bytes = &bytes[5 + len..];
    }
    messages
}

/// `message` as an uncompressed gRPC frame.
pub fn frame(message: &[u8]) -> Vec<u8> {
    let mut framed = Vec::with_capacity(5 + message.len());
    framed.push(0);
    framed.extend_from_slice(&(message.len() as u32).to_be_bytes());
    framed.extend_from_slice(message);
    framed
}
