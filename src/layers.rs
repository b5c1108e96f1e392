//! Tower layers of Arbiter's own around the transport (the call metrics layer lives in
//! [`crate::telemetry`]).

use tonic::codegen::http;
use tonic::Status;

use crate::service::error::ServiceError;

/// Rewrites a trailers-only error reply of the transport into Arbiter's status for it
/// (see [`ServiceError::from_transport`]); every other reply passes unchanged.
pub(crate) fn rewrite_transport_error<B>(mut response: http::Response<B>) -> http::Response<B> {
    let rewritten = Status::from_header_map(response.headers())
        .as_ref()
        .and_then(ServiceError::from_transport)
        .map(Status::from);
    if let Some(status) = rewritten {
        let headers = response.headers_mut();
        headers.remove("grpc-message");
        headers.remove("grpc-status-details-bin");
        if let Err(error) = status.add_header(headers) {
            tracing::warn!(%error, "cannot rewrite a transport error");
        }
    }
    response
}

#[cfg(test)]
mod tests {
    use bytes::Bytes;
    use tonic::codec::Codec;
    use tonic::Code;

    use super::*;
    use crate::proto;

    /// Tonic's own decoder, fed a frame longer than the limit: the status it raises must
    /// still be the one [`ServiceError::from_transport`] recognises. If tonic's wording
    /// changes, this fails, and the rewrite to RESOURCE_EXHAUSTED would silently stop.
    #[tokio::test]
    async fn tonics_refusal_of_an_oversized_message_is_recognised() {
        let mut codec = tonic_prost::ProstCodec::<proto::Board, proto::Board>::default();
        // A frame header announcing 100 bytes, against a limit of 10.
        let frame = Bytes::from_static(&[0, 0, 0, 0, 100]);
        let body = tonic::body::Body::new(http_body_util::Full::new(frame));
        let mut messages = tonic::Streaming::new_request(codec.decoder(), body, None, Some(10));
        let status = messages.message().await.unwrap_err();
        let error = ServiceError::from_transport(&status);
        assert!(
            matches!(error, Some(ServiceError::RequestTooLarge { .. })),
            "tonic now refuses an oversized message with {status:?}: update \
             ServiceError::from_transport"
        );

        let mut headers = http::HeaderMap::new();
        status.add_header(&mut headers).unwrap();
        let mut response = http::Response::new(());
        *response.headers_mut() = headers;
        let rewritten = rewrite_transport_error(response);
        let status = Status::from_header_map(rewritten.headers()).unwrap();
        assert_eq!(status.code(), Code::ResourceExhausted, "{status:?}");
    }
}
