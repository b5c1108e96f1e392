//! Checking the status a call or a stream ends with, the same way in every test.

use tonic::{Code, Status, Streaming};

/// Checks that `status` has `code` and a message containing `text`, showing the whole
/// status when it does not.
pub fn assert_status(status: &Status, code: Code, text: &str) {
    assert_eq!(status.code(), code, "{status:?}");
    assert!(
        status.message().contains(text),
        "{:?} should say {text:?}: {status:?}",
        status.message()
    );
}

/// Reads the next message of `replies`, which must be the stream's end with `code` and a
/// message containing `text`; returns that status.
pub async fn assert_stream_ends<T: std::fmt::Debug>(
    replies: &mut Streaming<T>,
    code: Code,
    text: &str,
) -> Status {
    let status = match replies.message().await {
        Ok(reply) => panic!("the stream went on with {reply:?} instead of ending with {code:?}"),
        Err(status) => status,
    };
    assert_status(&status, code, text);
    status
}

/// Opens a health Watch of the whole server (`""`) over `channel`, checks that its first
/// message says SERVING, and returns the stream for the messages after it.
pub async fn watch_serving(
    channel: tonic::transport::Channel,
) -> Streaming<tonic_health::pb::HealthCheckResponse> {
    use tonic_health::pb::health_check_response::ServingStatus;
    use tonic_health::pb::{health_client::HealthClient, HealthCheckRequest};
    let mut watch = HealthClient::new(channel)
        .watch(HealthCheckRequest {
            service: String::new(),
        })
        .await
        .unwrap()
        .into_inner();
    let first = watch.message().await.unwrap().unwrap();
    assert_eq!(first.status(), ServingStatus::Serving);
    watch
}

/// Checks that health checks over `channel` say SERVING for the whole server (`""`) and
/// for `arbiter.v1.ArbiterService`.
pub async fn assert_serving(channel: tonic::transport::Channel) {
    use tonic_health::pb::health_check_response::ServingStatus;
    use tonic_health::pb::{health_client::HealthClient, HealthCheckRequest};
    let mut health = HealthClient::new(channel);
    for service in ["", "arbiter.v1.ArbiterService"] {
        let reply = health
            .check(HealthCheckRequest {
                service: service.into(),
            })
            .await
            .unwrap_or_else(|status| panic!("health of {service:?}: {status:?}"));
        assert_eq!(
            reply.into_inner().status(),
            ServingStatus::Serving,
            "{service:?}"
        );
    }
}
