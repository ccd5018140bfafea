//! What can go wrong: [`ClientError`] and the values it carries.

use std::fmt;
use std::time::Duration;

use codex_app_protocol::jsonrpc::ErrorObject;

/// Why a request (or the connection) failed.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum ClientError {
    /// The transport failed (spawning the server, writing, reading, the WebSocket handshake).
    Transport(TransportError),
    /// The server went away: its exit status (when it was a child process) and the tail of
    /// its stderr.
    ServerExited(ServerExit),
    /// The server answered with a JSON-RPC error. [`ErrorObject::is_retryable`] tells whether
    /// the same request may succeed later (the server was overloaded).
    Server(ErrorObject),
    /// A line or a result did not decode into its type.
    Decode(DecodeReport),
    /// No answer within the time allowed.
    Timeout(Duration),
    /// Refused by the client before anything was sent (an experimental request while the
    /// session did not opt in, a message that cannot be encoded).
    Refused(String),
    /// The server's version differs from the one the crate was generated from and the
    /// client was configured to treat that as an error.
    VersionMismatch(VersionCheck),
    /// The client was shut down (or dropped) before the answer came.
    Closed,
}

impl ClientError {
    /// Whether the same request may succeed if sent again later (a server error marked
    /// retryable, such as "Server overloaded; retry later.").
    pub fn is_retryable(&self) -> bool {
        matches!(self, ClientError::Server(e) if e.is_retryable())
    }
}

impl fmt::Display for ClientError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ClientError::Transport(e) => write!(f, "transport error: {e}"),
            ClientError::ServerExited(exit) => write!(f, "{exit}"),
            ClientError::Server(e) => write!(f, "server error {}: {}", e.code, e.message),
            ClientError::Decode(report) => write!(f, "{report}"),
            ClientError::Timeout(after) => write!(f, "no answer within {after:?}"),
            ClientError::Refused(why) => write!(f, "refused before sending: {why}"),
            ClientError::VersionMismatch(check) => write!(f, "{check}"),
            ClientError::Closed => f.write_str("the client was shut down"),
        }
    }
}

impl std::error::Error for ClientError {}

impl From<TransportError> for ClientError {
    fn from(e: TransportError) -> Self {
        ClientError::Transport(e)
    }
}

/// A transport failure: what was being done, and the underlying error's text.
#[derive(Debug, Clone)]
pub struct TransportError {
    /// What the client was doing (`spawning /usr/bin/codex app-server`, `writing`, ...).
    pub context: String,
    /// The underlying error.
    pub message: String,
    /// The HTTP status of a refused WebSocket upgrade (401 for a wrong token).
    pub http_status: Option<u16>,
}

impl TransportError {
    /// An error with its context.
    pub fn new(context: impl Into<String>, error: impl fmt::Display) -> Self {
        TransportError { context: context.into(), message: error.to_string(), http_status: None }
    }
}

impl fmt::Display for TransportError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.context, self.message)
    }
}

impl std::error::Error for TransportError {}

/// How the server went away.
#[derive(Debug, Clone, Default)]
pub struct ServerExit {
    /// The exit status of the server process (`exit status: 1`, `signal: 9 (SIGKILL)`), when
    /// the client started it and it has exited.
    pub status: Option<String>,
    /// The last lines the server wrote on stderr (bounded), oldest first.
    pub stderr_tail: Vec<String>,
    /// What ended the connection (`end of stream`, a read error, ...).
    pub reason: String,
}

impl fmt::Display for ServerExit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "server exited ({}", self.reason)?;
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
pub struct DecodeReport {
    /// 1-based number of the server line (counted over the connection), when known.
    pub line_number: Option<u64>,
    /// The method of the message (or of the request a response answers).
    pub method: Option<String>,
    /// The serde path inside the message (`params.thread.id`), when known.
    pub path: Option<String>,
    /// What went wrong.
    pub message: String,
    /// The start of the line (at most 300 bytes).
    pub line: String,
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

/// The server's version (read from `initialize`'s `userAgent`) against
/// [`codex_app_protocol::CODEX_VERSION`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VersionCheck {
    /// The version the protocol crate was generated from.
    pub expected: &'static str,
    /// The version in the server's `userAgent`, when one could be read.
    pub server: Option<String>,
    /// The whole `userAgent`.
    pub user_agent: String,
}

impl VersionCheck {
    /// Reads the version from a `userAgent` (`<client name>/<codex version> (...)`).
    pub fn new(user_agent: &str) -> Self {
        let server = user_agent
            .split_whitespace()
            .next()
            .and_then(|first| first.rsplit_once('/'))
            .map(|(_, version)| version.to_owned())
            .filter(|v| !v.is_empty());
        VersionCheck { expected: codex_app_protocol::CODEX_VERSION, server, user_agent: user_agent.to_owned() }
    }

    /// Whether the server runs exactly the version the types were generated from.
    pub fn matches(&self) -> bool {
        self.server.as_deref() == Some(self.expected)
    }
}

impl fmt::Display for VersionCheck {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.server {
            Some(v) if v == self.expected => write!(f, "server runs codex {v}, as the types expect"),
            Some(v) => write!(
                f,
                "server runs codex {v} but the types were generated from codex {}; regenerate them (`cargo xtask regen`) or run codex {}",
                self.expected, self.expected
            ),
            None => write!(f, "cannot read the server's version from userAgent {:?} (types are for codex {})", self.user_agent, self.expected),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn version_from_user_agent() {
        let check = VersionCheck::new("p/0.169.0 (Debian 12.0.0; x86_64) xterm (p; 0)");
        assert_eq!(check.server.as_deref(), Some("0.169.0"));
        let other = VersionCheck::new("codex-app-client/0.100.0 (x)");
        assert_eq!(other.server.as_deref(), Some("0.100.0"));
        assert_eq!(other.matches(), codex_app_protocol::CODEX_VERSION == "0.100.0");
        assert!(other.to_string().contains("0.100.0"));
        assert_eq!(VersionCheck::new("garbage").server, None);
        assert_eq!(VersionCheck::new("").server, None);
    }
}
