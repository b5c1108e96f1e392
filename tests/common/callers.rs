//! Clients from a chosen loopback address: each address is a caller of its own to the
//! server (its shares and quota), so a test can be two callers from one machine.

use std::net::{IpAddr, Ipv4Addr, SocketAddr};

use bytes::Bytes;
use hyper_util::rt::TokioIo;
use tokio::net::{TcpSocket, TcpStream};
use tonic::codegen::http;
use tonic::transport::{Channel, Endpoint, Uri};

/// The address every other test calls from.
pub const HERE: IpAddr = IpAddr::V4(Ipv4Addr::LOCALHOST);
/// Another caller on this machine: any 127.0.0.0/8 address reaches the loopback.
pub const ELSEWHERE: IpAddr = IpAddr::V4(Ipv4Addr::new(127, 0, 0, 2));

/// A TCP connection to `server` from `from`.
pub async fn connect_from(server: SocketAddr, from: IpAddr) -> std::io::Result<TcpStream> {
    let socket = TcpSocket::new_v4()?;
    socket.bind(SocketAddr::new(from, 0))?;
    socket.connect(server).await
}

/// A channel (one connection) to `server` from `from`.
pub async fn channel_from(
    server: SocketAddr,
    from: IpAddr,
) -> Result<Channel, tonic::transport::Error> {
    Endpoint::from_shared(format!("http://{server}"))
        .unwrap()
        .connect_with_connector(tower::service_fn(move |_: Uri| async move {
            connect_from(server, from).await.map(TokioIo::new)
        }))
        .await
}

/// A raw HTTP/2 connection to `server` from `from` whose streams' windows start at zero
/// (its client reads no reply's DATA), and its task: aborting it closes the connection.
pub async fn h2_not_reading(
    server: SocketAddr,
    from: IpAddr,
) -> (h2::client::SendRequest<Bytes>, tokio::task::JoinHandle<()>) {
    let tcp = connect_from(server, from).await.unwrap();
    let (sender, connection) = h2::client::Builder::new()
        .initial_window_size(0)
        .handshake::<_, Bytes>(tcp)
        .await
        .unwrap();
    let task = tokio::spawn(async move {
        let _ = connection.await;
    });
    (sender.ready().await.unwrap(), task)
}

/// A raw HTTP/2 connection to `server` from `from`.
pub async fn h2_from(server: SocketAddr, from: IpAddr) -> h2::client::SendRequest<Bytes> {
    let tcp = connect_from(server, from).await.unwrap();
    let (sender, connection) = h2::client::handshake(tcp).await.unwrap();
    tokio::spawn(async move {
        let _ = connection.await;
    });
    sender.ready().await.unwrap()
}

/// The start of a unary call's message and no more: a gRPC frame's prefix announcing 100
/// bytes, and one of them. A unary call takes its place among those in flight with its
/// first message's bytes, so a stalled call sends these and waits.
pub fn first_part_of_a_message() -> bytes::Bytes {
    bytes::Bytes::from_static(&[0, 0, 0, 0, 100, 0x08])
}

/// Sends a unary call of ArbiterService's `rpc` to `server` on a raw HTTP/2 client: its
/// headers, with a bearer token if given, and [`first_part_of_a_message`], never the rest.
/// Returns its reply to come and its body's sender (dropping it would end the body).
pub fn stall_a_call(
    sender: &mut h2::client::SendRequest<bytes::Bytes>,
    server: SocketAddr,
    rpc: &str,
    token: Option<&str>,
) -> Result<(h2::client::ResponseFuture, h2::SendStream<bytes::Bytes>), h2::Error> {
    let (reply, mut body) = sender.send_request(call_headers(server, rpc, token), false)?;
    body.send_data(first_part_of_a_message(), false)?;
    Ok((reply, body))
}

/// The headers of a call of ArbiterService's `rpc` to `server`, for a raw HTTP/2 client,
/// with a bearer token if given.
pub fn call_headers(server: SocketAddr, rpc: &str, token: Option<&str>) -> http::Request<()> {
    let mut request =
        http::Request::post(format!("http://{server}/arbiter.v1.ArbiterService/{rpc}"))
            .header("content-type", "application/grpc")
            .header("te", "trailers");
    if let Some(token) = token {
        request = request.header("authorization", format!("Bearer {token}"));
    }
    request.body(()).unwrap()
}
