//! What can go wrong: [`ClientError`] and the values it carries.

use std::error::Error;
use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use codex_app_protocol::framing::excerpt;
use codex_app_protocol::jsonrpc::{DecodeError, ErrorObject};
use codex_app_protocol::path::JsonPath;

// Read from the server at the handshake (`version`); also here, where it was first.
pub use crate::version::VersionCheck;

/// Why a request (or the connection, or a turn) failed.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum ClientError {
    /// The transport failed (spawning the server, writing, reading, the WebSocket handshake).
    /// [`source`](std::error::Error::source) is the underlying I/O or WebSocket error.
    Transport(TransportError),
    /// There is no codex binary to run: none was given, `$CODEX_BIN` is not set and there is
    /// no `codex` on `PATH`, or the binary given does not exist
    /// ([`TransportErrorKind::CodexNotFound`]).
    CodexNotFound(TransportError),
    /// The server went away: why ([`ServerExit::reason`]), its exit status (when it was a
    /// child process) and the tail of its stderr.
    ServerExited(ServerExit),
    /// The server answered with a JSON-RPC error. [`ErrorObject::is_retryable`] tells whether
    /// the same request may succeed later (the server was overloaded); the client already
    /// retried it as its [`RetryPolicy`](crate::RetryPolicy) allows.
    Server(ErrorObject),
    /// The server is shutting down and takes no new requests (`-32600` with
    /// `data.reason: "serverShuttingDown"`): connect again, to this server once it is back or
    /// to another.
    ServerShuttingDown(ErrorObject),
    /// A line or a result did not decode into its type.
    Decode(DecodeReport),
    /// No answer within the time allowed. A late answer is reported as
    /// [`Event::Orphan`](crate::Event::Orphan).
    Timeout(Duration),
    /// Refused by the client before anything was sent (an experimental request while the
    /// session did not opt in, a message that cannot be encoded).
    Refused(String),
    /// The server answered, but not with what the client needs to go on (a `turn/start`
    /// result without a turn id, a thread without an id): the request was sent and may have
    /// had its effect.
    UnusableAnswer {
        /// The method of the request.
        method: String,
        /// What is missing or wrong.
        why: String,
    },
    /// The server's codex release is outside the range the crate supports and the client was
    /// configured to treat that as an error ([`VersionPolicy::Error`](crate::VersionPolicy)).
    VersionMismatch(VersionCheck),
    /// The server's codex release does not have this method: nothing was sent.
    Unavailable {
        /// The method, as its wire name.
        method: String,
        /// Which releases have it.
        availability: codex_app_protocol::availability::Availability,
        /// The server's release.
        server: String,
    },
    /// The params use members, enum values or union arms the server's release does not have
    /// (it would silently ignore such a member, or refuse such a value): nothing was sent. See
    /// [`ClientBuilder::unknown_to_server`](crate::ClientBuilder::unknown_to_server).
    UnknownToServer {
        /// The method, as its wire name.
        method: String,
        /// The server's release.
        server: String,
        /// Each with its path and the releases that have it.
        items: Vec<codex_app_protocol::availability::Unknown>,
    },
    /// The server reported the turn failed (`turn/completed` with status `failed`).
    TurnFailed(Box<TurnFailure>),
    /// The turn did not end by the deadline it was run with
    /// ([`RunOptions::deadline`](crate::RunOptions::deadline)): what it was waiting for, and
    /// whether it was interrupted.
    TurnDeadline(Box<TurnDeadline>),
    /// The thread of the turn was closed (`thread/closed`) before the turn completed.
    ThreadClosed {
        /// The thread.
        thread_id: String,
    },
    /// A login ended without success (`account/login/completed` with `success: false`): the
    /// server's message.
    LoginFailed(String),
    /// The connection dropped before the answer came and the client reconnects
    /// ([`ClientBuilder::reconnect`](crate::ClientBuilder::reconnect)): send the request
    /// again ([`is_retryable`](Self::is_retryable)). Also a request checked against the
    /// server's release before a reconnect to another release, and not sent: sent again, it
    /// is checked against the new one.
    Disconnected,
    /// The client was shut down (or dropped) before the answer came.
    Closed,
    /// [`ThreadHandle::run`](crate::ThreadHandle::run) read the turn to its end, but its
    /// stream fell behind and dropped items the turn completed (`item/completed`), so the
    /// items it would return are not all of them. Raise
    /// [`turn_buffer`](crate::ClientBuilder::turn_buffer), or read
    /// [`ThreadHandle::read`](crate::ThreadHandle::read) with turns for the whole list.
    ItemsLost {
        /// The thread.
        thread_id: String,
        /// The turn.
        turn_id: String,
        /// How many `item/completed` notifications the stream dropped.
        lost: u64,
        /// The turn as `turn/completed` reported it, as JSON.
        turn: serde_json::Value,
    },
    /// After a reconnect the server refused to resume the thread (`thread/resume` answered
    /// an error): the connection no longer receives its events. Its open turns end with this
    /// error, and new turns on it fail at once until it is resumed again
    /// ([`Client::thread_resume`](crate::Client::thread_resume)).
    ThreadDetached {
        /// The thread.
        thread_id: String,
        /// The server's message.
        message: String,
    },
}

impl ClientError {
    /// Whether the same request may succeed if sent again later (a server error marked
    /// retryable, such as "Server overloaded; retry later.", that was still refused after the
    /// retries of the [`RetryPolicy`](crate::RetryPolicy)).
    pub fn is_retryable(&self) -> bool {
        matches!(self, ClientError::Server(e) if e.is_retryable()) || matches!(self, ClientError::Disconnected)
    }

    /// The error for a JSON-RPC error answer: [`ClientError::ServerShuttingDown`] when the
    /// server says it is draining, [`ClientError::Server`] otherwise.
    pub fn from_server(error: ErrorObject) -> Self {
        let draining = error.code == ErrorObject::INVALID_REQUEST
            && error.data.as_ref().and_then(|d| d.get("reason")).and_then(|r| r.as_str()) == Some(SERVER_SHUTTING_DOWN);
        if draining {
            ClientError::ServerShuttingDown(error)
        } else {
            ClientError::Server(error)
        }
    }
}

/// `data.reason` of the error a draining server answers new requests with.
pub const SERVER_SHUTTING_DOWN: &str = "serverShuttingDown";

/// A turn that the server reported failed.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct TurnFailure {
    /// The thread of the turn.
    pub thread_id: String,
    /// The turn.
    pub turn_id: String,
    /// The error's message (`turn.error.message`), when there is one.
    pub message: Option<String>,
    /// The turn as `turn/completed` carried it, as JSON (its type differs between releases).
    pub turn: serde_json::Value,
}

impl fmt::Display for ClientError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ClientError::Transport(e) => write!(f, "transport error: {e}"),
            ClientError::CodexNotFound(e) => write!(f, "{e}"),
            ClientError::ServerExited(exit) => write!(f, "{exit}"),
            ClientError::Server(e) => write!(f, "server error {}: {}", e.code, e.message),
            ClientError::ServerShuttingDown(e) => write!(f, "the server is shutting down: {}", e.message),
            ClientError::Decode(report) => write!(f, "{report}"),
            ClientError::Timeout(after) => write!(f, "no answer within {after:?}"),
            ClientError::Refused(why) => write!(f, "refused before sending: {why}"),
            ClientError::UnusableAnswer { method, why } => write!(f, "the answer to `{method}` cannot be used: {why}"),
            ClientError::VersionMismatch(check) => write!(f, "{check}"),
            ClientError::Unavailable { method, availability, server } => write!(
                f,
                "`{method}` is not in codex {server}, the server's release (it is in {availability}); nothing was sent"
            ),
            ClientError::UnknownToServer { method, server, items } => {
                write!(f, "`{method}` uses what codex {server}, the server's release, does not have (it would ignore a member and refuse a value): ")?;
                for (i, item) in items.iter().enumerate() {
                    write!(f, "{}{item}", if i == 0 { "" } else { "; " })?;
                }
                write!(f, "; nothing was sent")
            }
            ClientError::TurnFailed(failure) => {
                write!(f, "turn {} of thread {} failed", failure.turn_id, failure.thread_id)?;
                match &failure.message {
                    Some(message) => write!(f, ": {message}"),
                    None => Ok(()),
                }
            }
            ClientError::TurnDeadline(deadline) => write!(f, "{deadline}"),
            ClientError::ThreadClosed { thread_id } => {
                write!(f, "thread {thread_id} was closed before its turn completed")
            }
            ClientError::LoginFailed(why) => write!(f, "the login failed: {why}"),
            ClientError::Disconnected => {
                f.write_str("the connection dropped before the answer came; the client reconnects")
            }
            ClientError::Closed => f.write_str("the client was shut down"),
            ClientError::ItemsLost { thread_id, turn_id, lost, .. } => write!(
                f,
                "turn {turn_id} of thread {thread_id} completed, but its stream fell behind and lost {lost} completed items"
            ),
            ClientError::ThreadDetached { thread_id, message } => {
                write!(f, "the server did not resume thread {thread_id} after a reconnect: {message}")
            }
        }
    }
}

/// A turn that did not end by its deadline; see [`ClientError::TurnDeadline`].
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct TurnDeadline {
    /// The thread.
    pub thread_id: String,
    /// The turn.
    pub turn_id: String,
    /// The deadline that passed.
    pub deadline: Duration,
    /// What codex last reported while retrying, when that is what the turn was waiting for
    /// (no other event of the turn came after it).
    pub retrying: Option<crate::events::Retrying>,
    /// The method of the turn's last notification, if one came.
    pub last_event: Option<String>,
    /// What was done with the turn.
    pub at_deadline: crate::thread::AtDeadline,
    /// Whether the server answered the `turn/interrupt` (it then ends the turn as interrupted).
    pub interrupted: bool,
    /// Why the `turn/interrupt` failed, when it was sent and did.
    pub interrupt_error: Option<String>,
}

impl fmt::Display for TurnDeadline {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "turn {} of thread {} did not end within {:?}: ", self.turn_id, self.thread_id, self.deadline)?;
        match (&self.retrying, &self.last_event) {
            (Some(retrying), _) => write!(f, "it was waiting for the model while codex retried: {retrying}")?,
            (None, Some(method)) => write!(f, "it was waiting for the server's next event after `{method}`")?,
            (None, None) => f.write_str("it was waiting for its first event")?,
        }
        match (self.at_deadline, self.interrupted, &self.interrupt_error) {
            (crate::thread::AtDeadline::Leave, ..) => f.write_str("; it was left running"),
            (_, true, _) => f.write_str("; it was interrupted"),
            (_, false, Some(why)) => write!(f, "; interrupting it failed: {why}"),
            (_, false, None) => f.write_str("; it was not interrupted"),
        }
    }
}

impl Error for ClientError {
    /// The [`TransportError`] of [`Transport`](ClientError::Transport) and
    /// [`CodexNotFound`](ClientError::CodexNotFound) (whose own source is the I/O or WebSocket
    /// error, when there is one).
    fn source(&self) -> Option<&(dyn Error + 'static)> {
        match self {
            ClientError::Transport(e) | ClientError::CodexNotFound(e) => Some(e),
            _ => None,
        }
    }
}

impl From<TransportError> for ClientError {
    /// [`ClientError::CodexNotFound`] for a missing binary, [`ClientError::Transport`] otherwise.
    fn from(e: TransportError) -> Self {
        match e.kind {
            TransportErrorKind::CodexNotFound => ClientError::CodexNotFound(e),
            _ => ClientError::Transport(e),
        }
    }
}

/// A transport failure: what was being done, what kind of failure, and the underlying error
/// ([`source`](std::error::Error::source); its text is also in [`message`](Self::message)
/// and in this error's `Display`).
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct TransportError {
    /// What the client was doing (`spawning /usr/bin/codex app-server`, `writing`, ...).
    pub context: String,
    /// The underlying error's text.
    pub message: String,
    /// The HTTP status of a refused WebSocket upgrade (401 for a wrong token).
    pub http_status: Option<u16>,
    /// What kind of failure it is.
    pub kind: TransportErrorKind,
    source: Option<Arc<dyn Error + Send + Sync + 'static>>,
}

/// What kind of failure a [`TransportError`] is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum TransportErrorKind {
    /// There is no codex binary to run (none given, none found, or the one given does not
    /// exist).
    CodexNotFound,
    /// An I/O error: starting the server, connecting, reading, writing.
    Io,
    /// The TLS handshake of a `wss://` connection failed (a certificate the client does not
    /// trust, a name that does not match), or the TLS settings are unusable (feature `tls`).
    Tls,
    /// The WebSocket handshake or protocol failed ([`TransportError::http_status`] says what a
    /// refused upgrade answered).
    WebSocket,
    /// Anything else: an address the transport cannot use, a transport of your own.
    Other,
}

impl TransportError {
    /// An error with its context and the underlying error's text, of the kind
    /// [`Other`](TransportErrorKind::Other) and without a [`source`](Error::source).
    pub fn new(context: impl Into<String>, error: impl fmt::Display) -> Self {
        TransportError {
            context: context.into(),
            message: error.to_string(),
            http_status: None,
            kind: TransportErrorKind::Other,
            source: None,
        }
    }

    /// An error of `kind` whose [`source`](Error::source) is `error`.
    pub fn with_source(
        kind: TransportErrorKind,
        context: impl Into<String>,
        error: impl Error + Send + Sync + 'static,
    ) -> Self {
        TransportError {
            context: context.into(),
            message: error.to_string(),
            http_status: None,
            kind,
            source: Some(Arc::new(error)),
        }
    }

    /// An I/O error ([`TransportErrorKind::Io`]) with its context.
    pub fn io(context: impl Into<String>, error: std::io::Error) -> Self {
        Self::with_source(TransportErrorKind::Io, context, error)
    }

    /// This error with another message (its source stays).
    #[cfg(feature = "tls")]
    pub(crate) fn with_message(mut self, message: impl Into<String>) -> Self {
        self.message = message.into();
        self
    }

    /// This error with another kind.
    pub fn with_kind(mut self, kind: TransportErrorKind) -> Self {
        self.kind = kind;
        self
    }
}

impl fmt::Display for TransportError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.context, self.message)
    }
}

impl Error for TransportError {
    fn source(&self) -> Option<&(dyn Error + 'static)> {
        self.source.as_deref().map(|e| e as &(dyn Error + 'static))
    }
}

/// How the connection ended. (A transport of your own makes one in
/// [`LineReceiver::exit`](crate::transport::LineReceiver::exit) from `ServerExit::default()`,
/// then sets its fields: more may come.)
#[derive(Debug, Clone, Default)]
#[non_exhaustive]
pub struct ServerExit {
    /// What ended it.
    pub reason: ExitReason,
    /// The exit status of the server process (`exit status: 1`, `signal: 9 (SIGKILL)`), when
    /// the client started it and it has exited.
    pub status: Option<String>,
    /// The client killed the server after waiting this long for it to exit (from the start of
    /// [`Client::shutdown`](crate::Client::shutdown), or from the end of the stream).
    pub killed_after: Option<Duration>,
    /// The last lines the server wrote on stderr (bounded, ANSI escapes removed), oldest first.
    pub stderr_tail: Vec<String>,
}

/// What ended a connection.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum ExitReason {
    /// The server ended the stream cleanly (end of its stdout, a WebSocket close) without
    /// the client asking.
    #[default]
    EndOfStream,
    /// [`Client::shutdown`](crate::Client::shutdown) closed the connection and the server
    /// ended its side.
    Shutdown,
    /// [`Client::shutdown`](crate::Client::shutdown) closed the connection and the server did
    /// not end its side in time.
    ShutdownTimedOut,
    /// Every handle of the client was dropped.
    Dropped,
    /// Reading from the server failed.
    ReadError(String),
    /// Writing to the server failed and its stream did not end soon after.
    WriteError(String),
    /// A task of the client's connection (its loop or its writer) panicked: a bug of the
    /// client (or of a transport's code); every handle ended with this.
    Panicked(String),
}

impl fmt::Display for ExitReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ExitReason::EndOfStream => f.write_str("end of stream"),
            ExitReason::Shutdown => f.write_str("shut down by the client"),
            ExitReason::ShutdownTimedOut => f.write_str("shutdown timed out"),
            ExitReason::Dropped => f.write_str("the client was dropped"),
            ExitReason::ReadError(e) => write!(f, "read error: {e}"),
            ExitReason::WriteError(e) => write!(f, "write error: {e}"),
            ExitReason::Panicked(why) => f.write_str(why),
        }
    }
}

impl ServerExit {
    /// Whether the connection ended cleanly: the stream ended (by the server or at the
    /// client's shutdown) and the server, when the client started it, was not killed.
    pub fn is_clean(&self) -> bool {
        matches!(self.reason, ExitReason::EndOfStream | ExitReason::Shutdown) && self.killed_after.is_none()
    }
}

impl fmt::Display for ServerExit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "server exited ({}", self.reason)?;
        if let Some(waited) = self.killed_after {
            write!(f, ", killed after waiting {waited:.1?}")?;
        }
        if let Some(status) = &self.status {
            write!(f, ", {status}")?;
        }
        f.write_str(")")?;
        if !self.stderr_tail.is_empty() {
            write!(f, "; stderr tail:\n  {}", self.stderr_tail.join("\n  "))?;
        }
        Ok(())
    }
}

/// A server line or result that did not decode: where, which method, the serde path.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct DecodeReport {
    /// 1-based number of the server line (counted over the connection), when known.
    pub line_number: Option<u64>,
    /// The method of the message (or of the request a response answers).
    pub method: Option<String>,
    /// Where in the message (`params.thread.id`), when known.
    pub path: Option<JsonPath>,
    /// What went wrong.
    pub message: String,
    /// The start of the line (at most 300 bytes).
    pub line: String,
}

impl DecodeReport {
    /// A report of what the client decodes itself (a result, a value the turn carried), which
    /// no line of its own stands for: `method` and `path` name it.
    pub(crate) fn decoded(method: Option<&str>, path: Option<JsonPath>, message: String) -> DecodeReport {
        DecodeReport { line_number: None, method: method.map(str::to_owned), path, message, line: String::new() }
    }

    /// The report of server line `number`, `line`, that did not decode with `error`.
    pub(crate) fn of_line(number: u64, line: &str, error: &DecodeError) -> DecodeReport {
        DecodeReport {
            line_number: Some(number),
            method: error.method.clone(),
            path: error.path(),
            message: error.to_string(),
            line: excerpt(line, 300).into_owned(),
        }
    }

    /// The report of a `result` of `method` that the client decodes itself and that did not
    /// decode (or encode) with `error`.
    pub(crate) fn result(method: &str, error: &serde_json::Error) -> DecodeReport {
        DecodeReport::decoded(Some(method), Some(JsonPath::root().key("result")), error.to_string())
    }
}

impl fmt::Display for DecodeReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("undecodable server line")?;
        if let Some(n) = self.line_number {
            write!(f, " {n}")?;
        }
        if let Some(method) = &self.method {
            write!(f, " (`{method}`)")?;
        }
        if let Some(path) = &self.path {
            write!(f, " at `{path}`")?;
        }
        write!(f, ": {}", self.message)
    }
}
