//! Every check's reply as written, unary and in a CheckBatch: the bytes prost writes of
//! what it reads from them, and the same answer both ways, on random checks made of the
//! registered checks' corpora (two of one kind merged, as prost merges a request given
//! twice: the fields of both, the later's scalars and strings winning). Driven by the
//! registration, so a check registered is a check covered.

use http_body_util::{BodyExt, Full};
use proptest::prelude::*;
use prost::bytes::Bytes;
use prost::Message;
use prost_types::FileDescriptorSet;
use tower::ServiceExt;

use crate::proto::arbiter_service_server::ArbiterServiceServer;
use crate::proto::requests::CheckBatchChecks;
use crate::proto::{Check, CheckBatchRequest, CheckBatchResponse, CheckResult};
use crate::service::batch::check_batch;
use crate::service::registration::check_corpus;
use crate::service::Arbiter;

/// A check's field number in `Check`'s oneof, and its request's bytes.
fn parts(check: &crate::proto::check::Check) -> (u32, Vec<u8>) {
    let encoded = Check {
        check: Some(check.clone()),
    }
    .encode_to_vec();
    let mut rest = &encoded[..];
    let (number, _) = prost::encoding::decode_key(&mut rest).unwrap();
    let len = prost::encoding::decode_varint(&mut rest).unwrap() as usize;
    (number, rest[..len].to_vec())
}

/// `payload` as field `number` of a message.
fn wrapped(number: u32, payload: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    prost::encoding::bytes::encode(number, &payload.to_vec(), &mut out);
    out
}

/// Each check's own RPC and its field in `CheckResult`, by its field in `Check`.
fn rpcs() -> Vec<(u32, String, u32)> {
    let set = FileDescriptorSet::decode(crate::proto::FILE_DESCRIPTOR_SET).unwrap();
    let file = set
        .file
        .iter()
        .find(|f| f.package() == "arbiter.v1")
        .unwrap();
    let message = |name: &str| file.message_type.iter().find(|m| m.name() == name).unwrap();
    let methods: Vec<_> = file.service.iter().flat_map(|s| &s.method).collect();
    message("Check")
        .field
        .iter()
        .map(|member| {
            let method = methods
                .iter()
                .find(|m| m.input_type() == member.type_name())
                .unwrap();
            let result = message("CheckResult")
                .field
                .iter()
                .find(|f| f.type_name() == method.output_type())
                .unwrap();
            (
                member.number() as u32,
                method.name().to_owned(),
                result.number() as u32,
            )
        })
        .collect()
}

/// The unary RPC `method` called in process with `request`'s bytes: its reply's bytes,
/// or `None` for an error status.
async fn unary(method: &str, request: &[u8]) -> Option<Vec<u8>> {
    let mut body = vec![0];
    body.extend_from_slice(&(request.len() as u32).to_be_bytes());
    body.extend_from_slice(request);
    let request = tonic::codegen::http::Request::builder()
        .method("POST")
        .uri(format!(
            "http://in-process/arbiter.v1.ArbiterService/{method}"
        ))
        .header("content-type", "application/grpc")
        .header("te", "trailers")
        .body(Full::new(Bytes::from(body)))
        .unwrap();
    let response = ArbiterServiceServer::new(Arbiter::default())
        .oneshot(request)
        .await
        .unwrap();
    let (parts, body) = response.into_parts();
    let collected = body.collect().await.unwrap();
    let status = collected
        .trailers()
        .and_then(|trailers| trailers.get("grpc-status"))
        .or_else(|| parts.headers.get("grpc-status"))
        .map(|status| status.as_bytes().to_vec());
    let bytes = collected.to_bytes();
    (status.as_deref() == Some(&b"0"[..])).then(|| bytes[5..].to_vec())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn every_check_reply_is_written_as_prost_writes_it(
        picks in prop::collection::vec((any::<usize>(), any::<usize>()), 1..16),
    ) {
        let corpus = check_corpus();
        let rpcs = rpcs();
        // Each pick one corpus check, or two of one kind merged.
        let checks: Vec<(u32, Vec<u8>)> = picks
            .iter()
            .map(|&(a, b)| {
                let (kind, mut request) = parts(&corpus[a % corpus.len()]);
                let (other, more) = parts(&corpus[b % corpus.len()]);
                if other == kind && b % 3 == 0 {
                    request.extend_from_slice(&more);
                }
                (kind, request)
            })
            .collect();
        let batch: Vec<u8> = checks
            .iter()
            .flat_map(|(kind, request)| wrapped(1, &wrapped(*kind, request)))
            .collect();
        let request = CheckBatchChecks::decode(&batch[..]).unwrap();
        let reply = check_batch(&request).unwrap();
        let bytes = reply.as_bytes();
        let decoded = CheckBatchResponse::decode(bytes).unwrap();
        prop_assert_eq!(&decoded.encode_to_vec()[..], bytes);
        prop_assert_eq!(
            CheckBatchRequest::decode(&batch[..]).unwrap().checks.len(),
            decoded.results.len()
        );
        let runtime = tokio::runtime::Builder::new_current_thread().build().unwrap();
        for ((kind, request), result) in checks.iter().zip(&decoded.results) {
            let (_, method, field) = rpcs.iter().find(|(number, ..)| number == kind).unwrap();
            match runtime.block_on(unary(method, request)) {
                Some(reply) => {
                    // The unary reply, as its result in a batch: prost's bytes, and the
                    // batch's answer.
                    let as_result = wrapped(*field, &reply);
                    let unary = CheckResult::decode(&as_result[..]).unwrap();
                    prop_assert_eq!(&unary.encode_to_vec(), &as_result, "{}", method);
                    prop_assert_eq!(&unary, result, "{}", method);
                }
                None => prop_assert!(!result.invalid.is_empty(), "{}: {:?}", method, result),
            }
        }
    }
}
