//! `wss://` (feature `tls`): the real codex behind a TLS proxy on loopback that the test starts
//! (tokio-rustls, with the self-signed certificate of `tests/certificates/`), trusted through
//! `TlsOptions::root_certificate`: the handshake, a thread and a turn (the mock model); a wrong
//! token and a certificate the client does not trust, each a clear error; and a token that would
//! go over plain `ws://` to a host that is not loopback, refused before anything is sent.
//!
//! Written against the types of the vendored codex release; after a regen from a release out
//! of the range these tests are left out and one test says so (see `written_for_codex!`).

codex_app_client::protocol::__test_support::written_for_codex! { "0.171.0",

use std::sync::Arc;
use std::time::{Duration, Instant};

use codex_app_client::transport::ws::TlsOptions;
use codex_app_client::*;
use codex_app_mock::ev;
use crate::common::*;
use tokio_rustls::rustls;
use rustls::pki_types::pem::PemObject;

/// The proxy's certificate for `127.0.0.1` and `localhost` (`tests/certificates/make.sh`):
/// (its DER, its key's PKCS#8 DER).
fn certificate() -> (Vec<u8>, Vec<u8>) {
    let key = include_bytes!("certificates/proxy.key.pem");
    let key = rustls::pki_types::PrivatePkcs8KeyDer::from_pem_slice(key).expect("a PKCS#8 key");
    (der(include_bytes!("certificates/proxy.pem")), key.secret_pkcs8_der().to_vec())
}

/// Another self-signed certificate of the same name, whose key did not sign the proxy's.
fn other_certificate() -> Vec<u8> {
    der(include_bytes!("certificates/other.pem"))
}

fn der(pem: &[u8]) -> Vec<u8> {
    rustls::pki_types::CertificateDer::from_pem_slice(pem).expect("a PEM certificate").to_vec()
}

/// A TLS proxy on loopback in front of `upstream` (`127.0.0.1:PORT`); returns its port.
async fn tls_proxy(upstream: String, (cert, key): (Vec<u8>, Vec<u8>)) -> u16 {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let key = rustls::pki_types::PrivateKeyDer::Pkcs8(key.into());
    let config = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_no_client_auth()
        .with_single_cert(vec![cert.into()], key)
        .unwrap();
    let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(config));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    tokio::spawn(async move {
        loop {
            let Ok((socket, _)) = listener.accept().await else { return };
            let (acceptor, upstream) = (acceptor.clone(), upstream.clone());
            tokio::spawn(async move {
                let Ok(mut tls) = acceptor.accept(socket).await else { return };
                let Ok(mut server) = tokio::net::TcpStream::connect(&upstream).await else { return };
                let _ = tokio::io::copy_bidirectional(&mut tls, &mut server).await;
            });
        }
    });
    port
}

/// `codex app-server --listen ws://127.0.0.1:PORT` with a capability token, in its own
/// process group, killed on drop.
struct Listening(std::process::Child);

impl Drop for Listening {
    fn drop(&mut self) {
        let _ = std::process::Command::new("kill").args(["-KILL", "--", &format!("-{}", self.0.id())]).status();
        let _ = self.0.wait();
    }
}

fn listen(setup: &Setup, codex: &std::path::Path, token: &str) -> (Listening, String) {
    use std::os::unix::process::CommandExt as _;
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let token_file = setup.home.path().join("ws-token");
    std::fs::write(&token_file, token).unwrap();
    let url = format!("ws://127.0.0.1:{port}");
    let mut cmd = std::process::Command::new(codex);
    cmd.arg("app-server").args(["--listen", &url, "--ws-auth", "capability-token", "--ws-token-file"]).arg(&token_file);
    cmd.stdin(std::process::Stdio::null()).stdout(std::process::Stdio::null()).stderr(std::process::Stdio::null());
    cmd.process_group(0);
    setup.home.configure(&mut cmd);
    (Listening(cmd.spawn().unwrap()), format!("127.0.0.1:{port}"))
}

/// Connects until the server behind the proxy listens (at most `T`); a refusal (HTTP, TLS) is
/// returned at once.
async fn connect_when_ready(builder: impl Fn() -> ClientBuilder, url: &str, token: Option<&str>) -> Result<Client, ClientError> {
    let deadline = Instant::now() + T;
    loop {
        match builder().connect_ws(url, token).await {
            Err(ClientError::Transport(e))
                if e.http_status.is_none() && e.kind != TransportErrorKind::Tls && Instant::now() < deadline =>
            {
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
            other => return other,
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs the codex binary (the pinned release, installed with npm on first use)"]
async fn wss_through_a_tls_proxy_in_front_of_the_real_codex() {
    let codex = codex();
    let setup = Setup::new(codex.clone());
    let (_server, upstream) = listen(&setup, &codex, "right-token");
    let proxied = certificate();
    let trusted = proxied.0.clone();
    let port = tls_proxy(upstream, proxied).await;
    let url = format!("wss://127.0.0.1:{port}");
    let builder = || Client::builder().tls(TlsOptions::new().root_certificate(trusted.clone()));

    // The handshake, a thread and a turn.
    let client = connect_when_ready(builder, &url, Some("right-token")).await.expect("wss:// with the right token");
    assert!(client.version_check().unwrap().matches());
    setup.mock.push_events(ev::assistant_message("resp-1", "msg-1", &["over TLS"]));
    let thread = client.thread_start(Default::default()).await.expect("thread/start");
    let answer = tokio::time::timeout(T, thread.run("hi")).await.expect("in time").expect("the turn");
    assert_eq!(answer.final_response, "over TLS");
    client.shutdown(Duration::from_secs(2)).await;

    // The token in the URL's user info is sent as the bearer token.
    let client = builder().connect_ws(&format!("wss://:right-token@127.0.0.1:{port}"), None).await.expect("token in the URL");
    client.shutdown(Duration::from_secs(2)).await;

    // A wrong token: HTTP 401 at the upgrade.
    let error = builder().connect_ws(&url, Some("wrong-token")).await.expect_err("a wrong token");
    let ClientError::Transport(e) = &error else { panic!("{error:?}") };
    assert_eq!(e.http_status, Some(401), "{e}");
    assert_eq!(e.to_string(), format!("connecting to {url}: the server refused the WebSocket upgrade with HTTP 401 Unauthorized: wrong or missing token"));

    // A certificate the client does not trust: the bundled roots only (no issuer), or another
    // self-signed certificate of the same name, whose key did not sign it.
    let other = other_certificate();
    for (options, why) in [(TlsOptions::new(), "UnknownIssuer"), (TlsOptions::new().root_certificate(other), "BadSignature")] {
        let error = Client::builder().tls(options).connect_ws(&url, Some("right-token")).await.expect_err("an untrusted certificate");
        let ClientError::Transport(e) = &error else { panic!("{error:?}") };
        assert_eq!(e.kind, TransportErrorKind::Tls, "{e}");
        assert_eq!(e.to_string(), format!("connecting to {url}: the TLS handshake with 127.0.0.1 failed: invalid peer certificate: {why}"));
        assert!(std::error::Error::source(e).is_some());
    }
}

/// A token never goes over plain `ws://` to a host that is not loopback: refused before
/// anything is sent (192.0.2.1 is a documentation address nobody answers).
#[tokio::test]
async fn a_token_is_not_sent_over_plain_ws_to_another_host() {
    for url in ["ws://192.0.2.1:4500", "ws://:t@192.0.2.1:4500/x", "ws://codex.example:4500"] {
        let started = Instant::now();
        let error = Client::builder().connect_ws(url, if url.contains('@') { None } else { Some("t") }).await.expect_err("refused");
        assert!(started.elapsed() < Duration::from_secs(1), "{url}: something was tried");
        let message = error.to_string();
        assert!(message.contains("refusing to send the token over plain ws://") && message.contains("use wss://"), "{message}");
        assert!(!message.contains(":t@"), "the token is in the message: {message}");
    }
}

/// Settings that cannot be used are errors, not panics.
#[test]
fn pem_roots() {
    TlsOptions::new().root_certificates_pem(include_bytes!("certificates/other.pem")).expect("a PEM certificate");
    let error = TlsOptions::new().root_certificates_pem(b"not pem").expect_err("no certificate");
    assert_eq!(error.kind, TransportErrorKind::Tls);
}
}
