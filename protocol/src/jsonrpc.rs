//! The JSON-RPC envelope, written by hand.
//!
//! codex speaks JSON-RPC 2.0 without the `"jsonrpc"` member. Input that carries
//! `"jsonrpc": "2.0"` is accepted; output never carries it. Request ids are kept exactly as
//! they came (an integer stays an integer, a string stays a string).
//!
//! A line is decoded in one pass over the envelope: `params` and `result` are kept as raw
//! text and decoded once, by the method's own type.

use std::borrow::Cow;
use std::fmt;
use std::io::BufRead;

use serde::de::{self, Deserializer, MapAccess, Visitor};
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use serde_json::Value;

use crate::codec::{self, ParamsError};
use crate::framing::{FramingError, LineReader};
use crate::{ClientNotification, ClientRequest, Request, RequestId, ServerNotification, ServerRequest};

/// The `error` member of an error response.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ErrorObject {
    pub code: i64,
    pub message: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data: Option<Value>,
}

impl ErrorObject {
    /// The request was not valid. codex uses it for most rejections: "Not initialized",
    /// "Already initialized", unknown methods, bad params, experimental use without opt-in.
    pub const INVALID_REQUEST: i64 = -32600;
    pub const METHOD_NOT_FOUND: i64 = -32601;
    pub const INVALID_PARAMS: i64 = -32602;
    pub const INTERNAL_ERROR: i64 = -32603;
    /// "Server overloaded; retry later.": the request queue was full. Retry with backoff.
    pub const SERVER_OVERLOADED: i64 = -32001;

    pub fn new(code: i64, message: impl Into<String>) -> Self {
        ErrorObject { code, message: message.into(), data: None }
    }

    /// Whether the same request may succeed if sent again later.
    pub fn is_retryable(&self) -> bool {
        self.code == Self::SERVER_OVERLOADED
    }
}

/// A successful response. `result` is kept raw until the caller, who knows which method the
/// id belongs to, decodes it ([`Response::decode`], or `ClientResponse::decode`).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Response {
    pub id: RequestId,
    pub result: Box<RawValue>,
}

impl Response {
    /// A response carrying `result`.
    pub fn new<T: Serialize>(id: RequestId, result: &T) -> serde_json::Result<Self> {
        Ok(Response { id, result: serde_json::value::to_raw_value(result)? })
    }

    /// Decodes `result` as the response type of `R`.
    pub fn decode<R: Request>(&self) -> Result<R::Response, ParamsError> {
        codec::params(Some(&self.result))
    }
}

impl PartialEq for Response {
    fn eq(&self, other: &Self) -> bool {
        self.id == other.id && self.result.get() == other.result.get()
    }
}

/// An error response. `id` is `None` when the server could not tell which request failed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ErrorResponse {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<RequestId>,
    pub error: ErrorObject,
}

/// Any message of one side of the connection.
#[derive(Debug, Clone, PartialEq)]
pub enum Message<Req, Notif> {
    Request(Req),
    Notification(Notif),
    /// A response to a request of the other side.
    Response(Response),
    Error(ErrorResponse),
}

/// A message the server sends.
pub type ServerMessage = Message<ServerRequest, ServerNotification>;
/// A message the client sends.
pub type ClientMessage = Message<ClientRequest, ClientNotification>;

/// A message that can be decoded from an envelope's parts. Implemented for the four
/// generated method enums.
pub trait FromParts: Sized {
    fn from_parts(parts: &Parts<'_>) -> Result<Self, ParamsError>;
}

/// The members of one message, with `params` and `result` still raw.
#[derive(Debug, Default)]
pub struct Parts<'a> {
    pub id: Option<RequestId>,
    pub method: Option<Cow<'a, str>>,
    pub params: Option<&'a RawValue>,
    pub result: Option<&'a RawValue>,
    pub error: Option<&'a RawValue>,
    /// Members other than `id`, `method`, `params`, `result`, `error` and `jsonrpc`.
    pub extra: Vec<(Cow<'a, str>, &'a RawValue)>,
}

impl<'a> Parts<'a> {
    /// Reads the envelope of one line.
    pub fn parse(line: &'a str) -> Result<Self, serde_json::Error> {
        serde_json::from_str(line)
    }
}

impl<'de: 'a, 'a> Deserialize<'de> for Parts<'a> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct PartsVisitor<'a>(std::marker::PhantomData<&'a ()>);

        impl<'de: 'a, 'a> Visitor<'de> for PartsVisitor<'a> {
            type Value = Parts<'a>;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a JSON-RPC message object")
            }

            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Parts<'a>, A::Error> {
                let mut parts = Parts::default();
                while let Some(BorrowedStr(key)) = map.next_key::<BorrowedStr<'de>>()? {
                    match key.as_ref() {
                        "id" => parts.id = map.next_value::<Option<RequestId>>()?,
                        "method" => parts.method = Some(map.next_value::<BorrowedStr<'de>>()?.0),
                        "params" => parts.params = Some(map.next_value()?),
                        "result" => parts.result = Some(map.next_value()?),
                        "error" => parts.error = Some(map.next_value()?),
                        "jsonrpc" => {
                            let version = map.next_value::<BorrowedStr<'de>>()?.0;
                            if version != "2.0" {
                                return Err(de::Error::invalid_value(de::Unexpected::Str(&version), &"\"2.0\""));
                            }
                        }
                        _ => parts.extra.push((key, map.next_value()?)),
                    }
                }
                Ok(parts)
            }
        }

        deserializer.deserialize_map(PartsVisitor(std::marker::PhantomData))
    }
}

/// A string that borrows from the input when it has no escapes.
struct BorrowedStr<'a>(Cow<'a, str>);

impl<'de> Deserialize<'de> for BorrowedStr<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = BorrowedStr<'de>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a string")
            }
            fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Self::Value, E> {
                Ok(BorrowedStr(Cow::Borrowed(v)))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
                Ok(BorrowedStr(Cow::Owned(v.to_owned())))
            }
        }
        deserializer.deserialize_str(V)
    }
}

fn request_id(p: &Parts<'_>) -> Result<RequestId, ParamsError> {
    p.id.clone().ok_or_else(|| ParamsError { path: String::new(), source: de::Error::missing_field("id") })
}

impl FromParts for ClientRequest {
    fn from_parts(p: &Parts<'_>) -> Result<Self, ParamsError> {
        ClientRequest::from_parts(request_id(p)?, p.method.as_deref().unwrap_or_default(), p.params)
    }
}

impl FromParts for ServerRequest {
    fn from_parts(p: &Parts<'_>) -> Result<Self, ParamsError> {
        ServerRequest::from_parts(request_id(p)?, p.method.as_deref().unwrap_or_default(), p.params)
    }
}

impl FromParts for ServerNotification {
    fn from_parts(p: &Parts<'_>) -> Result<Self, ParamsError> {
        ServerNotification::from_parts(p.method.as_deref().unwrap_or_default(), p.params, &p.extra)
    }
}

impl FromParts for ClientNotification {
    fn from_parts(p: &Parts<'_>) -> Result<Self, ParamsError> {
        ClientNotification::from_parts(p.method.as_deref().unwrap_or_default(), p.params, &p.extra)
    }
}

/// Why a line did not decode.
#[derive(Debug)]
pub struct DecodeError {
    /// 1-based line number, when the line came from a stream.
    pub line: Option<u64>,
    /// The message's method, when it had one.
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
    /// `result`, `error` or an envelope member; `path` is inside it.
    Member { member: &'static str, error: ParamsError },
}

impl DecodeError {
    fn new(kind: DecodeErrorKind) -> Self {
        DecodeError { line: None, method: None, kind }
    }

    /// The serde path of a member error, prefixed by the member (`params.thread.id`).
    pub fn path(&self) -> Option<String> {
        match &self.kind {
            DecodeErrorKind::Member { member, error } if error.path.is_empty() || error.path == "." => {
                Some((*member).to_owned())
            }
            DecodeErrorKind::Member { member, error } => Some(format!("{member}.{}", error.path)),
            _ => None,
        }
    }
}

impl fmt::Display for DecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(line) = self.line {
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

impl<Req: FromParts + Serialize, Notif: FromParts + Serialize> Message<Req, Notif> {
    /// Decodes one line (without its newline).
    pub fn from_line(line: &str) -> Result<Self, DecodeError> {
        let parts = Parts::parse(line).map_err(|e| DecodeError::new(DecodeErrorKind::Envelope(e)))?;
        Self::from_envelope(parts)
    }

    /// Decodes a message from envelope parts already read.
    pub fn from_envelope(parts: Parts<'_>) -> Result<Self, DecodeError> {
        let member = |member, error| {
            let mut e = DecodeError::new(DecodeErrorKind::Member { member, error });
            e.method = parts.method.as_deref().map(str::to_owned);
            e
        };
        let not = |why| DecodeError::new(DecodeErrorKind::NotAMessage(why));
        match (&parts.method, &parts.result, &parts.error) {
            (Some(_), None, None) if parts.id.is_some() => Req::from_parts(&parts).map(Message::Request).map_err(|e| member("params", e)),
            (Some(_), None, None) => Notif::from_parts(&parts).map(Message::Notification).map_err(|e| member("params", e)),
            (None, Some(result), None) => {
                let id = parts.id.clone().ok_or_else(|| not("a response without `id`"))?;
                Ok(Message::Response(Response { id, result: (*result).to_owned() }))
            }
            (None, None, Some(error)) => {
                let error = codec::params::<ErrorObject>(Some(error)).map_err(|e| member("error", e))?;
                Ok(Message::Error(ErrorResponse { id: parts.id.clone(), error }))
            }
            (None, None, None) => Err(not("no `method`, `result` or `error`")),
            _ => Err(not("more than one of `method`, `result` and `error`")),
        }
    }

    /// Encodes the message as one line (without a newline).
    pub fn to_line(&self) -> String {
        serde_json::to_string(self).expect("messages always serialize")
    }

    /// The method of a request or notification.
    pub fn method(&self) -> Option<&str>
    where
        Req: HasMethod,
        Notif: HasMethod,
    {
        match self {
            Message::Request(r) => Some(r.method()),
            Message::Notification(n) => Some(n.method()),
            Message::Response(_) | Message::Error(_) => None,
        }
    }

    /// Reads messages from an NDJSON stream; see [`MessageReader`].
    pub fn reader<R: BufRead>(input: R) -> MessageReader<R, Self> {
        MessageReader { lines: LineReader::new(input), _message: std::marker::PhantomData }
    }
}

/// The method of a request or notification enum.
pub trait HasMethod {
    fn method(&self) -> &str;
}

macro_rules! has_method {
    ($($t:ty),*) => {$(
        impl HasMethod for $t {
            fn method(&self) -> &str {
                <$t>::method(self)
            }
        }
    )*};
}
has_method!(ClientRequest, ServerRequest, ServerNotification, ClientNotification);

impl<Req: Serialize, Notif: Serialize> Serialize for Message<Req, Notif> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            Message::Request(r) => r.serialize(serializer),
            Message::Notification(n) => n.serialize(serializer),
            Message::Response(r) => r.serialize(serializer),
            Message::Error(e) => e.serialize(serializer),
        }
    }
}

/// Decoded messages of an NDJSON stream, each error with its line number; an error in one
/// line does not end the stream.
#[derive(Debug)]
pub struct MessageReader<R, M> {
    lines: LineReader<R>,
    _message: std::marker::PhantomData<fn() -> M>,
}

impl<R: BufRead, M> MessageReader<R, M> {
    /// Sets the maximum line length in bytes.
    pub fn with_max_line_len(mut self, max: usize) -> Self {
        self.lines = self.lines.with_max_line_len(max);
        self
    }
}

impl<R: BufRead, Req: FromParts + Serialize, Notif: FromParts + Serialize> Iterator for MessageReader<R, Message<Req, Notif>> {
    type Item = Result<(u64, Message<Req, Notif>), DecodeError>;

    fn next(&mut self) -> Option<Self::Item> {
        Some(match self.lines.next()? {
            Err(e) => Err(DecodeError { line: e.line(), method: None, kind: DecodeErrorKind::Framing(e) }),
            Ok(line) => Message::from_line(&line.text).map(|m| (line.number, m)).map_err(|mut e| {
                e.line = Some(line.number);
                e
            }),
        })
    }
}
