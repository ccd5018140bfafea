//! WebSocket: `ws://HOST:PORT` (with a bearer token) and `unix://PATH` (the same WebSocket
//! protocol over a Unix socket), one JSON-RPC message per text frame.
//!
//! `codex app-server --listen ws://127.0.0.1:PORT --ws-auth capability-token
//! --ws-token-file FILE` expects `Authorization: Bearer <token>`; a wrong or missing token
//! gets HTTP 401 at the upgrade, which [`WsTransport::connect`] reports as a
//! [`TransportError`] with `http_status: Some(401)`.

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

impl WsTransport {
    /// Connects to `url`: `ws://HOST:PORT[/PATH]` or `unix://PATH`. `token`, when given, is
    /// sent as `Authorization: Bearer <token>`.
    pub async fn connect(url: &str, token: Option<&str>) -> Result<WsTransport, TransportError> {
        let context = format!("connecting to {url}");
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
            let stream =
                tokio::net::TcpStream::connect(authority).await.map_err(|e| TransportError::io(&context, e))?;
            stream.set_nodelay(true).map_err(|e| TransportError::io(&context, e))?;
            (Box::pin(stream), url.to_owned())
        } else {
            return Err(TransportError::new(
                &context,
                "the URL must start with ws:// or unix:// (wss:// is not supported)",
            ));
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
