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
