//! What one bulk reply may hold: CheckBatch's and PlayMany's budget, the limit both
//! keep to.

/// The most bytes of results one CheckBatch reply or PlayMany message's reply holds
/// before the items left in its request are answered without being run or applied
/// (`invalid` on `check` or `action`, in a few dozen bytes each): 2 MiB, so that a
/// reply, which passes it by one item and those short answers, stays under 4 MiB even
/// for the most items a message may carry: the default receive limit of the gRPC
/// clients of grpc-go, grpc-java, tonic and the C core: every reply can be read by a
/// client as it comes configured.
pub const MAX_REPLY_BYTES: usize = 2 * 1024 * 1024;
