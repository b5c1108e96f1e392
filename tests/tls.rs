//! TLS and mutual TLS, with certificates made at test time.

mod common;

use std::path::PathBuf;

use arbiter::proto::arbiter_service_client::ArbiterServiceClient;
use arbiter::proto::JudgeTicTacToeRequest;
use common::{options, TestServer};
use rcgen::{BasicConstraints, CertificateParams, CertifiedIssuer, DnType, IsCa, KeyPair};
use tonic::transport::{Certificate, ClientTlsConfig, Endpoint, Identity};

/// A certificate authority made for one test.
fn authority(name: &str) -> CertifiedIssuer<'static, KeyPair> {
    let mut params = CertificateParams::new(Vec::<String>::new()).unwrap();
    params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    params.distinguished_name.push(DnType::CommonName, name);
    CertifiedIssuer::self_signed(params, KeyPair::generate().unwrap()).unwrap()
}

/// A certificate for `name` signed by `issuer`, as (certificate PEM, key PEM).
fn leaf(issuer: &CertifiedIssuer<'static, KeyPair>, name: &str) -> (String, String) {
    let key = KeyPair::generate().unwrap();
    let cert = CertificateParams::new(vec![name.to_string()])
        .unwrap()
        .signed_by(&key, issuer)
        .unwrap();
    (cert.pem(), key.serialize_pem())
}

/// Writes `contents` to a fresh file in a per-test folder and returns its path.
fn write(dir: &PathBuf, name: &str, contents: &str) -> String {
    std::fs::create_dir_all(dir).unwrap();
    let path = dir.join(name);
    std::fs::write(&path, contents).unwrap();
    path.to_string_lossy().into_owned()
}

fn test_dir(test: &str) -> PathBuf {
    std::env::temp_dir().join(format!("arbiter-tls-{test}-{}", std::process::id()))
}

/// How a call was refused.
#[derive(Debug)]
enum Refused {
    /// The client would not connect, with every error of the chain.
    Connect(String),
    /// The connection broke with no gRPC answer, with every error of the chain.
    Transport(String),
    /// The server answered with a status (read only by `Debug`, in a failure).
    #[allow(dead_code)]
    Status(tonic::Status),
}

/// The error and every error it came from, as one line.
fn chain(error: &(dyn std::error::Error + 'static)) -> String {
    let mut text = error.to_string();
    let mut next = error.source();
    while let Some(source) = next {
        text = format!("{text}: {source}");
        next = source.source();
    }
    text
}

/// Calls JudgeTicTacToe once over `endpoint`.
async fn call(endpoint: Endpoint) -> Result<(), Refused> {
    let channel = endpoint
        .connect()
        .await
        .map_err(|error| Refused::Connect(chain(&error)))?;
    ArbiterServiceClient::new(channel)
        .judge_tic_tac_toe(JudgeTicTacToeRequest { moves: vec![] })
        .await
        .map(drop)
        .map_err(|status| match std::error::Error::source(&status) {
            Some(source) => Refused::Transport(chain(source)),
            None => Refused::Status(status),
        })
}

/// A plaintext client's call to a TLS server: the server speaks no HTTP/2 in the clear,
/// so the connection breaks before any answer.
fn assert_plaintext_refused(refused: Result<(), Refused>) {
    assert!(
        matches!(refused, Err(Refused::Transport(_))),
        "a plaintext client got {refused:?}"
    );
}

fn tls_endpoint(server: &TestServer, ca: &str, identity: Option<&(String, String)>) -> Endpoint {
    let mut tls = ClientTlsConfig::new()
        .ca_certificate(Certificate::from_pem(ca))
        .domain_name("localhost");
    if let Some((cert, key)) = identity {
        tls = tls.identity(Identity::from_pem(cert, key));
    }
    Endpoint::from_shared(format!("https://{}", server.addr))
        .unwrap()
        .tls_config(tls)
        .unwrap()
}

/// A test's directory, its server CA, and the server's certificate and key written there
/// (for `localhost`), as paths.
struct ServerFiles {
    dir: PathBuf,
    server_ca: CertifiedIssuer<'static, KeyPair>,
    cert: String,
    key: String,
}

fn server_files(test: &str) -> ServerFiles {
    let dir = test_dir(test);
    let server_ca = authority("server CA");
    let (cert, key) = leaf(&server_ca, "localhost");
    let cert = write(&dir, "server.pem", &cert);
    let key = write(&dir, "server.key", &key);
    ServerFiles {
        dir,
        server_ca,
        cert,
        key,
    }
}

/// A server of mutual TLS: `cert` and `key`, `client_ca` written into `dir` as its client
/// CA, and `more` flags.
async fn mutual_tls_server(
    dir: &PathBuf,
    cert: &str,
    key: &str,
    client_ca: &CertifiedIssuer<'static, KeyPair>,
    more: &[&str],
) -> TestServer {
    let client_ca_path = write(dir, "client-ca.pem", &client_ca.pem());
    let mut args = vec![
        "--tls-cert",
        cert,
        "--tls-key",
        key,
        "--tls-client-ca",
        &client_ca_path,
    ];
    args.extend_from_slice(more);
    TestServer::start_with(options(&args)).await
}

fn plaintext_endpoint(server: &TestServer) -> Endpoint {
    Endpoint::from_shared(format!("http://{}", server.addr)).unwrap()
}

#[tokio::test]
async fn a_tls_server_refuses_plaintext() {
    let ServerFiles {
        dir: _,
        server_ca,
        cert,
        key,
    } = server_files("plain");
    let server = TestServer::start_with(options(&["--tls-cert", &cert, "--tls-key", &key])).await;

    assert_plaintext_refused(call(plaintext_endpoint(&server)).await);
    call(tls_endpoint(&server, &server_ca.pem(), None))
        .await
        .unwrap();
    // A client that trusts another CA does not accept the server's certificate.
    let other = authority("other CA");
    match call(tls_endpoint(&server, &other.pem(), None)).await {
        Err(Refused::Connect(error)) if error.contains("UnknownIssuer") => {}
        refused => panic!("a client of another CA got {refused:?}"),
    }
}

#[tokio::test]
async fn mutual_tls_lets_in_only_clients_of_the_client_ca() {
    let ServerFiles {
        dir,
        server_ca,
        cert,
        key,
    } = server_files("mutual");
    let client_ca = authority("client CA");
    let stranger_ca = authority("stranger CA");
    let server = mutual_tls_server(&dir, &cert, &key, &client_ca, &[]).await;
    let trusted = leaf(&client_ca, "game-server");
    let stranger = leaf(&stranger_ca, "game-server");

    // The server, not the client, ends these handshakes: with the alert that says why.
    match call(tls_endpoint(&server, &server_ca.pem(), None)).await {
        Err(Refused::Transport(error)) if error.contains("CertificateRequired") => {}
        refused => panic!("a client without a certificate got {refused:?}"),
    }
    match call(tls_endpoint(&server, &server_ca.pem(), Some(&stranger))).await {
        Err(Refused::Transport(error)) if error.contains("UnknownCA") => {}
        refused => panic!("a client of another CA got {refused:?}"),
    }
    assert_plaintext_refused(call(plaintext_endpoint(&server)).await);
    call(tls_endpoint(&server, &server_ca.pem(), Some(&trusted)))
        .await
        .unwrap();
}

#[test]
fn tls_options_go_together() {
    use clap::Parser;
    assert!(arbiter::config::Options::try_parse_from(["arbiter", "--tls-cert", "a.pem"]).is_err());
    assert!(
        arbiter::config::Options::try_parse_from(["arbiter", "--tls-client-ca", "a.pem"]).is_err()
    );
}

/// With `--handshake-timeout 1s`, a connection that never finishes its TLS handshake
/// (silent, or stopped inside its ClientHello) is closed when the second runs out, while
/// a client that calls at once is served. Fails against a server with no deadline on the
/// TLS handshake (tonic sets none by default): both stay open.
#[tokio::test]
async fn a_tls_handshake_that_never_comes_is_closed() {
    use std::time::Duration;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    let ServerFiles {
        dir: _,
        server_ca,
        cert,
        key,
    } = server_files("handshake");
    let server = TestServer::start_with(options(&[
        "--tls-cert",
        &cert,
        "--tls-key",
        &key,
        "--handshake-timeout",
        "1s",
    ]))
    .await;
    call(tls_endpoint(&server, &server_ca.pem(), None))
        .await
        .unwrap();

    let started = std::time::Instant::now();
    // A TLS record header announcing a 512-byte handshake message, of which 4 bytes come.
    let partial_hello: &[u8] = &[0x16, 0x03, 0x01, 0x02, 0x00, 0x01, 0x00, 0x01, 0xfc];
    let mut closing = Vec::new();
    for sent in [&[][..], partial_hello] {
        let mut tcp = tokio::net::TcpStream::connect(server.addr).await.unwrap();
        closing.push(async move {
            tcp.write_all(sent).await.unwrap();
            let mut buffer = [0; 1024];
            let reading = async { while let Ok(1..) = tcp.read(&mut buffer).await {} };
            tokio::time::timeout(Duration::from_secs(5), reading)
                .await
                .is_ok()
        });
    }
    let closed = futures_util::future::join_all(closing).await;
    assert_eq!(closed, [true, true], "silent, inside the ClientHello");
    assert!(
        started.elapsed() >= Duration::from_millis(900),
        "{:?}",
        started.elapsed()
    );
}

/// With `--tls-client-name game-server`, only client certificates valid for that name get
/// in: one of the client CA's certificates for another name is refused
/// PERMISSION_DENIED, saying why, and the same CA's `game-server` is answered. Fails
/// against a server that admits any certificate its client CA signed.
#[tokio::test]
async fn mutual_tls_admits_clients_by_name() {
    let ServerFiles {
        dir,
        server_ca,
        cert,
        key,
    } = server_files("named");
    let client_ca = authority("client CA");
    let server = mutual_tls_server(
        &dir,
        &cert,
        &key,
        &client_ca,
        &["--tls-client-name", "game-server"],
    )
    .await;
    let admitted = leaf(&client_ca, "game-server");
    let other = leaf(&client_ca, "bot-arena");
    match call(tls_endpoint(&server, &server_ca.pem(), Some(&other))).await {
        Err(Refused::Status(status)) => {
            assert_eq!(status.code(), tonic::Code::PermissionDenied, "{status:?}");
            assert!(status.message().contains("--tls-client-name"), "{status:?}");
        }
        refused => panic!("a certificate for another name got {refused:?}"),
    }
    call(tls_endpoint(&server, &server_ca.pem(), Some(&admitted)))
        .await
        .unwrap();
}

/// With `--health-listen`, a TLS server also answers health checks in plaintext on its
/// own port, as Kubernetes' gRPC probes (which cannot speak TLS) need: SERVING for the
/// server and for `arbiter.v1.ArbiterService`, NOT_SERVING once the drain begins, and
/// nothing but health there (ArbiterService is UNIMPLEMENTED). Fails against a server
/// with no such listener, or one whose listener keeps its own health (SERVING through
/// the drain), or serves everything in plaintext.
#[tokio::test]
async fn a_plaintext_health_listener_beside_tls_says_what_the_server_says() {
    use tonic_health::pb::health_check_response::ServingStatus;
    use tonic_health::pb::health_client::HealthClient;
    use tonic_health::pb::HealthCheckRequest;

    let ServerFiles {
        dir: _,
        server_ca,
        cert,
        key,
    } = server_files("health");
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let health_address = listener.local_addr().unwrap();
    let settings = options(&[
        "--tls-cert",
        &cert,
        "--tls-key",
        &key,
        "--shutdown-drain",
        "5s",
    ]);
    let server = arbiter::server::Server::new(settings).with_health_listeners(vec![listener]);
    let mut server = TestServer::start_server(server).await;
    call(tls_endpoint(&server, &server_ca.pem(), None))
        .await
        .unwrap();

    let channel = Endpoint::from_shared(format!("http://{health_address}"))
        .unwrap()
        .connect()
        .await
        .unwrap();
    let status = |service: &str| {
        let mut health = HealthClient::new(channel.clone());
        let request = HealthCheckRequest {
            service: service.to_owned(),
        };
        async move { health.check(request).await.unwrap().into_inner().status() }
    };
    assert_eq!(status("").await, ServingStatus::Serving);
    assert_eq!(
        status("arbiter.v1.ArbiterService").await,
        ServingStatus::Serving
    );
    let refused = ArbiterServiceClient::new(channel.clone())
        .judge_tic_tac_toe(JudgeTicTacToeRequest { moves: vec![] })
        .await
        .unwrap_err();
    assert_eq!(refused.code(), tonic::Code::Unimplemented, "{refused:?}");

    server.begin_shutdown();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(3);
    while status("arbiter.v1.ArbiterService").await != ServingStatus::NotServing {
        assert!(
            std::time::Instant::now() < deadline,
            "still SERVING in the drain"
        );
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
}

/// Over TLS, the server reads each connection's HTTP/2 frames in plaintext (it serves
/// TLS itself): replies read are counted off the budget of unread reply bytes as they
/// are sent, so 20 replies of about 1 MB go through a connection's share of 1.5 MB, and
/// a PING flood is ended with GOAWAY ENHANCE_YOUR_CALM. Fails against a server that
/// watches the encrypted bytes: the third reply is refused, and the flood goes on.
#[tokio::test]
async fn over_tls_replies_are_counted_off_and_floods_ended() {
    use arbiter::proto::{Check, CheckBatchRequest};

    let ServerFiles {
        dir: _,
        server_ca,
        cert,
        key,
    } = server_files("unread");
    let server = TestServer::start_with(options(&[
        "--tls-cert",
        &cert,
        "--tls-key",
        &key,
        "--max-unread-bytes-per-connection",
        "1500000",
        "--max-unread-bytes-per-caller",
        "1500000",
    ]))
    .await;
    let endpoint = tls_endpoint(&server, &server_ca.pem(), None);
    let mut client = ArbiterServiceClient::new(endpoint.connect().await.unwrap());
    let batch = CheckBatchRequest {
        checks: vec![Check { check: None }; 10_000],
    };
    for call in 0..20 {
        let reply = client.check_batch(batch.clone()).await;
        let reply = reply.unwrap_or_else(|status| panic!("call {call}: {status:?}"));
        assert_eq!(reply.into_inner().results.len(), 10_000);
    }

    // PINGs over TLS, with tokio-rustls as the client: h2's own client cannot be made
    // to flood, so the frames are written raw inside the TLS stream.
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let mut roots = tokio_rustls::rustls::RootCertStore::empty();
    let ca = rustls_pki_types::CertificateDer::from(server_ca.der().to_vec());
    roots.add(ca).unwrap();
    let mut config = tokio_rustls::rustls::ClientConfig::builder_with_provider(
        std::sync::Arc::new(tokio_rustls::rustls::crypto::ring::default_provider()),
    )
    .with_safe_default_protocol_versions()
    .unwrap()
    .with_root_certificates(roots)
    .with_no_client_auth();
    config.alpn_protocols = vec![b"h2".to_vec()];
    let connector = tokio_rustls::TlsConnector::from(std::sync::Arc::new(config));
    let tcp = tokio::net::TcpStream::connect(server.addr).await.unwrap();
    let name = rustls_pki_types::ServerName::try_from("localhost").unwrap();
    let mut tls = connector.connect(name, tcp).await.unwrap();
    let mut flood = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n\0\0\0\x04\0\0\0\0\0".to_vec();
    for _ in 0..10 {
        flood.extend_from_slice(&[0, 0, 8, 6, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]);
    }
    tls.write_all(&flood).await.unwrap();
    let mut received = Vec::new();
    let reading = tls.read_to_end(&mut received);
    let _ = tokio::time::timeout(std::time::Duration::from_secs(5), reading).await;
    let goaway = received
        .windows(4)
        .position(|window| window == [0, 0, 0, 0xb])
        .map(|at| &received[at + 4..]);
    assert!(
        goaway.is_some_and(|debug| debug.starts_with(b"too_many_pings")),
        "no GOAWAY ENHANCE_YOUR_CALM too_many_pings in {} bytes",
        received.len()
    );
}
