//! WebSocket: `ws://HOST:PORT` (with a bearer token), `wss://HOST:PORT` (feature `tls`) and
//! `unix://PATH` (the same WebSocket protocol over a Unix socket), one JSON-RPC message per
//! text frame.
//!
//! `codex app-server --listen ws://127.0.0.1:PORT --ws-auth capability-token
//! --ws-token-file FILE` expects `Authorization: Bearer <token>`; a wrong or missing token
//! gets HTTP 401 at the upgrade, which [`WsTransport::connect`] reports as a
//! [`TransportError`] with `http_status: Some(401)`.
//!
//! **Tokens.** A token is sent as `Authorization: Bearer <token>` in the upgrade request, never
//! in the request line. It may be given as the argument or in the URL's user info
//! (`wss://:TOKEN@HOST:PORT`, as a configuration string would carry it): the client takes it out
//! of the URL and sends it as the bearer token (codex 0.171.0 accepts no other form: a token in
//! the query, `?token=` or `?access_token=`, gets 401). A token is never sent over plain
//! `ws://` to a host that is not loopback (`127.0.0.0/8`, `::1`, `localhost`): that connection
//! is refused before anything is sent (codex itself listens on a non-loopback address only with
//! authentication, and is reached there through a TLS proxy: `wss://`).
//!
//! **TLS** (feature `tls`): rustls, trusting the bundled webpki roots (Mozilla's), the platform's
//! roots with the feature `tls-native-roots`, and the roots given in `TlsOptions` (a
//! self-signed certificate of your own proxy, say). Without the feature nothing of TLS is
//! compiled and `wss://` is refused with a message that names the feature.

use std::io;
use std::pin::Pin;

use futures_util::stream::{SplitSink, SplitStream};
use futures_util::{FutureExt, SinkExt, StreamExt};
use tokio::io::{AsyncRead, AsyncWrite};
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::tungstenite::http::HeaderValue;
use tokio_tungstenite::tungstenite::{self, Message};
use tokio_tungstenite::WebSocketStream;

use super::{LineReceiver, LineSender, Transport};
use crate::error::{TransportError, TransportErrorKind};

/// A byte stream a WebSocket can run over (TCP, a Unix socket, ...).
pub trait Io: AsyncRead + AsyncWrite + Send + Unpin + 'static {}

impl<T: AsyncRead + AsyncWrite + Send + Unpin + 'static> Io for T {}

type Socket = WebSocketStream<Pin<Box<dyn Io>>>;

/// A WebSocket connection to `codex app-server --listen ws://...` or `unix://...`.
pub struct WsTransport {
    socket: Socket,
}

/// How a `wss://` connection is verified (feature `tls`): the roots it trusts besides the
/// bundled ones. Give it to [`WsTransport::connect_tls`] or
/// [`ClientBuilder::tls`](crate::ClientBuilder::tls).
#[cfg(feature = "tls")]
#[derive(Debug, Clone, Default)]
pub struct TlsOptions {
    roots: Vec<rustls::pki_types::CertificateDer<'static>>,
}

#[cfg(feature = "tls")]
impl TlsOptions {
    /// The bundled webpki roots (and the platform's, with `tls-native-roots`) only.
    pub fn new() -> Self {
        TlsOptions::default()
    }

    /// Also trusts this root certificate (DER).
    pub fn root_certificate(mut self, der: impl Into<Vec<u8>>) -> Self {
        self.roots.push(rustls::pki_types::CertificateDer::from(der.into()));
        self
    }

    /// Also trusts every certificate of this PEM text (`-----BEGIN CERTIFICATE-----`).
    pub fn root_certificates_pem(mut self, pem: &[u8]) -> Result<Self, TransportError> {
        use rustls::pki_types::pem::PemObject;
        let context = "reading PEM root certificates";
        for cert in rustls::pki_types::CertificateDer::pem_slice_iter(pem) {
            let cert =
                cert.map_err(|e| TransportError::new(context, format!("{e:?}")).with_kind(TransportErrorKind::Tls))?;
            self.roots.push(cert);
        }
        if self.roots.is_empty() {
            return Err(
                TransportError::new(context, "no certificate in the PEM text").with_kind(TransportErrorKind::Tls)
            );
        }
        Ok(self)
    }

    /// The rustls client configuration: ring, the bundled roots, the platform's (with
    /// `tls-native-roots`), these.
    fn client_config(&self, context: &str) -> Result<rustls::ClientConfig, TransportError> {
        let tls_error = |e: &dyn std::fmt::Display| TransportError::new(context, e).with_kind(TransportErrorKind::Tls);
        let mut roots = rustls::RootCertStore::empty();
        roots.extend(webpki_roots::TLS_SERVER_ROOTS.iter().cloned());
        #[cfg(feature = "tls-native-roots")]
        {
            let native = rustls_native_certs::load_native_certs();
            for error in &native.errors {
                tracing::warn!("a platform root certificate could not be read: {error}");
            }
            let (added, ignored) = roots.add_parsable_certificates(native.certs);
            tracing::debug!(added, ignored, "platform root certificates");
        }
        for root in &self.roots {
            roots.add(root.clone()).map_err(|e| tls_error(&format!("a root certificate given is unusable: {e}")))?;
        }
        let provider = std::sync::Arc::new(rustls::crypto::ring::default_provider());
        let config = rustls::ClientConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .map_err(|e| tls_error(&e))?
            .with_root_certificates(roots)
            .with_no_client_auth();
        Ok(config)
    }
}

/// `url` without a token in its user info, and that token: `scheme://[:]TOKEN@HOST...`.
fn token_from_url(url: &str) -> (String, Option<String>) {
    let Some((scheme, rest)) = url.split_once("://") else { return (url.to_owned(), None) };
    let (authority, path) = match rest.find('/') {
        Some(i) => rest.split_at(i),
        None => (rest, ""),
    };
    match authority.rsplit_once('@') {
        Some((userinfo, host)) => {
            let token = userinfo.strip_prefix(':').unwrap_or(userinfo);
            (format!("{scheme}://{host}{path}"), (!token.is_empty()).then(|| token.to_owned()))
        }
        None => (url.to_owned(), None),
    }
}

/// The host of an authority (`HOST:PORT`, `[V6]:PORT`).
fn host_of(authority: &str) -> &str {
    if let Some(v6) = authority.strip_prefix('[') {
        return v6.split(']').next().unwrap_or_default();
    }
    authority.rsplit_once(':').map_or(authority, |(host, _)| host)
}

/// Whether `host` is this machine's loopback.
fn is_loopback(host: &str) -> bool {
    host.eq_ignore_ascii_case("localhost") || host.parse::<std::net::IpAddr>().is_ok_and(|ip| ip.is_loopback())
}

impl WsTransport {
    /// Connects to `url`: `ws://HOST:PORT[/PATH]`, `wss://HOST:PORT[/PATH]` (feature `tls`,
    /// with the default `TlsOptions`) or `unix://PATH`. `token` (or one in the URL's user
    /// info, see the [module docs](self)) is sent as `Authorization: Bearer <token>`; never
    /// over plain `ws://` to a host that is not loopback.
    pub async fn connect(url: &str, token: Option<&str>) -> Result<WsTransport, TransportError> {
        #[cfg(feature = "tls")]
        return Self::connect_tls(url, token, &TlsOptions::default()).await;
        #[cfg(not(feature = "tls"))]
        return Self::open(url, token).await;
    }

    /// [`connect`](Self::connect) with the roots of `tls` trusted for `wss://`.
    #[cfg(feature = "tls")]
    pub async fn connect_tls(url: &str, token: Option<&str>, tls: &TlsOptions) -> Result<WsTransport, TransportError> {
        let (plain_url, url_token) = token_from_url(url);
        let Some(rest) = plain_url.strip_prefix("wss://") else { return Self::open(url, token).await };
        let context = format!("connecting to {plain_url}");
        let token = Self::one_token(token, url_token, &context)?;
        let authority = rest.split('/').next().unwrap_or_default();
        let host = host_of(authority).to_owned();
        let config = tls.client_config(&context)?;
        let name = rustls::pki_types::ServerName::try_from(host.clone())
            .map_err(|e| TransportError::new(&context, e).with_kind(TransportErrorKind::Tls))?;
        let tcp = tokio::net::TcpStream::connect(authority).await.map_err(|e| TransportError::io(&context, e))?;
        tcp.set_nodelay(true).map_err(|e| TransportError::io(&context, e))?;
        let connector = tokio_rustls::TlsConnector::from(std::sync::Arc::new(config));
        let stream = connector.connect(name, tcp).await.map_err(|e| {
            let message = format!("the TLS handshake with {host} failed: {e}");
            TransportError::with_source(TransportErrorKind::Tls, &context, e).with_message(message)
        })?;
        Self::handshake(Box::pin(stream), &plain_url, token.as_deref(), &context).await
    }

    /// The one token of the argument and the URL.
    fn one_token(
        token: Option<&str>,
        url_token: Option<String>,
        context: &str,
    ) -> Result<Option<String>, TransportError> {
        match (token, url_token) {
            (Some(_), Some(_)) => {
                Err(TransportError::new(context, "a token is given both as an argument and in the URL"))
            }
            (Some(token), None) => Ok(Some(token.to_owned())),
            (None, url_token) => Ok(url_token),
        }
    }

    /// `ws://` and `unix://` (and, without the `tls` feature, the refusal of `wss://`).
    async fn open(url: &str, token: Option<&str>) -> Result<WsTransport, TransportError> {
        let (url, url_token) = token_from_url(url);
        let url = url.as_str();
        let context = format!("connecting to {url}");
        let token = Self::one_token(token, url_token, &context)?;
        let token = token.as_deref();
        let (stream, ws_url): (Pin<Box<dyn Io>>, String) = if let Some(path) = url.strip_prefix("unix://") {
            #[cfg(unix)]
            {
                let stream =
                    tokio::net::UnixStream::connect(path).await.map_err(|e| TransportError::io(&context, e))?;
                (Box::pin(stream), "ws://localhost/".to_owned())
            }
            #[cfg(not(unix))]
            {
                let _ = path;
                return Err(TransportError::new(&context, "Unix sockets need a Unix system"));
            }
        } else if let Some(rest) = url.strip_prefix("ws://") {
            let authority = rest.split('/').next().unwrap_or_default();
            let host = host_of(authority);
            if token.is_some() && !is_loopback(host) {
                return Err(TransportError::new(
                    &context,
                    format!(
                        "refusing to send the token over plain ws:// to {host}, which is not this machine's \
                         loopback: use wss:// (feature `tls`)"
                    ),
                ));
            }
            let stream =
                tokio::net::TcpStream::connect(authority).await.map_err(|e| TransportError::io(&context, e))?;
            stream.set_nodelay(true).map_err(|e| TransportError::io(&context, e))?;
            (Box::pin(stream), url.to_owned())
        } else if url.starts_with("wss://") {
            return Err(TransportError::new(
                &context,
                "wss:// needs the client's `tls` feature (codex-app-client = { features = [\"tls\"] })",
            ));
        } else {
            let schemes = if cfg!(feature = "tls") { "ws://, wss:// or unix://" } else { "ws:// or unix://" };
            return Err(TransportError::new(&context, format!("the URL must start with {schemes}")));
        };
        Self::handshake(stream, &ws_url, token, &context).await
    }

    /// Runs the WebSocket handshake for `url` over a stream you opened yourself.
    pub async fn handshake(
        stream: Pin<Box<dyn Io>>,
        url: &str,
        token: Option<&str>,
        context: &str,
    ) -> Result<WsTransport, TransportError> {
        let mut request = url
            .into_client_request()
            .map_err(|e| TransportError::with_source(TransportErrorKind::WebSocket, context, e))?;
        if let Some(token) = token {
            let value = HeaderValue::from_str(&format!("Bearer {token}"))
                .map_err(|e| TransportError::with_source(TransportErrorKind::Other, context, e))?;
            request.headers_mut().insert("Authorization", value);
        }
        match tokio_tungstenite::client_async(request, stream).await {
            Ok((socket, _response)) => Ok(WsTransport { socket }),
            Err(tungstenite::Error::Http(response)) => {
                let status = response.status();
                let why = if status.as_u16() == 401 { ": wrong or missing token" } else { "" };
                let mut error = TransportError::new(
                    context,
                    format!("the server refused the WebSocket upgrade with HTTP {status}{why}"),
                )
                .with_kind(TransportErrorKind::WebSocket);
                error.http_status = Some(status.as_u16());
                Err(error)
            }
            Err(tungstenite::Error::Io(e)) => Err(TransportError::io(context, e)),
            Err(e) => Err(TransportError::with_source(TransportErrorKind::WebSocket, context, e)),
        }
    }
}

/// The sending half of a [`WsTransport`].
pub struct WsSender(SplitSink<Socket, Message>);

/// The receiving half of a [`WsTransport`].
pub struct WsReceiver {
    stream: SplitStream<Socket>,
    /// What ended a batch of [`LineReceiver::recv_many`] after some messages: returned by the
    /// next call.
    held: Option<io::Result<Option<String>>>,
}

impl Transport for WsTransport {
    type Sender = WsSender;
    type Receiver = WsReceiver;

    fn split(self) -> (WsSender, WsReceiver) {
        let (sink, stream) = self.socket.split();
        (WsSender(sink), WsReceiver { stream, held: None })
    }
}

macro_rules! opaque_debug {
    ($($t:ident),*) => {$(
        impl std::fmt::Debug for $t {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(stringify!($t))
            }
        }
    )*};
}
opaque_debug!(WsTransport, WsSender, WsReceiver);

fn io_error(e: tungstenite::Error) -> io::Error {
    match e {
        tungstenite::Error::Io(e) => e,
        other => io::Error::other(other),
    }
}

impl LineSender for WsSender {
    async fn send(&mut self, line: String) -> io::Result<()> {
        self.0.send(Message::text(line)).await.map_err(io_error)
    }

    async fn close(&mut self) -> io::Result<()> {
        self.0.close().await.map_err(io_error)
    }
}

impl WsReceiver {
    /// What one frame means: a message, the end, an error, or nothing (`None`: ping, pong).
    fn frame(frame: Option<Result<Message, tungstenite::Error>>) -> Option<io::Result<Option<String>>> {
        match frame {
            None | Some(Ok(Message::Close(_))) => Some(Ok(None)),
            Some(Ok(Message::Text(text))) => Some(Ok(Some(text.as_str().to_owned()))),
            Some(Ok(Message::Binary(bytes))) => Some(
                String::from_utf8(bytes.to_vec()).map(Some).map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e)),
            ),
            Some(Ok(_)) => None, // ping, pong, raw frames
            Some(Err(tungstenite::Error::ConnectionClosed | tungstenite::Error::AlreadyClosed)) => Some(Ok(None)),
            // The peer closed the socket without a close frame (a server that exits, or one
            // that answers the client's close by closing the socket): the end of the stream,
            // as the end of a pipe is.
            Some(Err(tungstenite::Error::Protocol(
                tungstenite::error::ProtocolError::ResetWithoutClosingHandshake,
            ))) => {
                tracing::debug!("the server closed the socket without a WebSocket close frame");
                Some(Ok(None))
            }
            Some(Err(e)) => Some(Err(io_error(e))),
        }
    }
}

impl LineReceiver for WsReceiver {
    async fn recv(&mut self) -> io::Result<Option<String>> {
        if let Some(held) = self.held.take() {
            return held;
        }
        loop {
            // `StreamExt::next` is cancel safe.
            if let Some(message) = Self::frame(self.stream.next().await) {
                return message;
            }
        }
    }

    async fn recv_many(&mut self, lines: &mut Vec<String>, max: usize) -> io::Result<usize> {
        let Some(first) = self.recv().await? else { return Ok(0) };
        lines.push(first);
        let mut n = 1;
        // The frames already received, without waiting for more.
        while n < max {
            let Some(frame) = self.stream.next().now_or_never() else { break };
            match Self::frame(frame) {
                None => {}
                Some(Ok(Some(line))) => {
                    lines.push(line);
                    n += 1;
                }
                Some(end) => {
                    self.held = Some(end);
                    break;
                }
            }
        }
        Ok(n)
    }
}
