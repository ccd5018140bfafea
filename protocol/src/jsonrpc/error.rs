//! Why a line did not decode: line, id, method and the JSON path of the error.

use super::*;

/// Why a line did not decode.
#[derive(Debug)]
pub struct DecodeError {
    /// 1-based line number, when the line came from a stream.
    pub line: Option<u64>,
    /// The message's `id`, when it had one: a request whose params do not decode can still be
    /// answered (`-32602`), a response whose result does not decode still fails its request.
    pub id: Option<RequestId>,
    /// The message's method, when it had one (for a response: the method of its request,
    /// when the caller said it).
    pub method: Option<String>,
    pub kind: DecodeErrorKind,
}

#[derive(Debug)]
pub enum DecodeErrorKind {
    /// The line could not be read (too long, not UTF-8, I/O).
    Framing(FramingError),
    /// Not JSON, or not an object with a valid envelope (`id`, `method`, `jsonrpc`).
    Envelope(serde_json::Error),
    /// A JSON object that is no JSON-RPC message (the reason says what is missing or extra).
    NotAMessage(&'static str),
    /// The envelope is fine but a member does not match its type. `member` is `params`,
    /// `result` or `error`, and `error.path` is inside it; for a notification's envelope
    /// member (`emittedAtMs`) `member` is empty and `error.path` starts with the member's name.
    /// [`DecodeError::path`] joins them.
    Member { member: &'static str, error: ParamsError },
}

/// The `member` of a [`DecodeErrorKind::Member`] error in an envelope member (the error's
/// path starts with the member's name).
pub(super) const ENVELOPE_MEMBER: &str = "";

impl DecodeError {
    pub(super) fn new(kind: DecodeErrorKind) -> Self {
        DecodeError { line: None, id: None, method: None, kind }
    }

    /// Where in the message a member error is: the member, then the path inside it
    /// (`params.thread.id`, `params[0]`, `emittedAtMs`).
    pub fn path(&self) -> Option<JsonPath> {
        match &self.kind {
            DecodeErrorKind::Member { member: ENVELOPE_MEMBER, error } => Some(error.path.clone()),
            DecodeErrorKind::Member { member, error } => Some(JsonPath::root().key(member).join(&error.path)),
            _ => None,
        }
    }
}

impl fmt::Display for DecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // A framing error names its line itself.
        if let (Some(line), false) = (self.line, matches!(self.kind, DecodeErrorKind::Framing(_))) {
            write!(f, "line {line}: ")?;
        }
        if let Some(method) = &self.method {
            write!(f, "`{method}`: ")?;
        }
        match &self.kind {
            DecodeErrorKind::Framing(e) => write!(f, "{e}"),
            DecodeErrorKind::Envelope(e) => write!(f, "not a JSON-RPC message: {e}"),
            DecodeErrorKind::NotAMessage(why) => write!(f, "not a JSON-RPC message: {why}"),
            DecodeErrorKind::Member { error, .. } => {
                write!(f, "`{}` does not match its type: {}", self.path().unwrap_or_default(), error.source)
            }
        }
    }
}

impl std::error::Error for DecodeError {}
