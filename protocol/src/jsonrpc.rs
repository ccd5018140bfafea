//! The JSON-RPC envelope, written by hand.
//!
//! codex speaks JSON-RPC 2.0 without the `"jsonrpc"` member. Input that carries
//! `"jsonrpc": "2.0"` is accepted; output never carries it. Request ids are kept exactly as
//! they came (an integer stays an integer, a string stays a string).
//!
//! A line is decoded in one pass: when `method` (and `id`) come before `params`, as codex
//! writes them, `params` is decoded by the method's own type straight from the line, and a
//! response's `result` likewise when its `id` comes first and the caller knows the method of
//! the request it answers ([`Message::from_line_with`]). A line in any other order, or one
//! that does not decode, goes through [`Parts`] (the envelope with `params` and `result` kept
//! raw), which gives the same message or the error with its path.

use std::borrow::Cow;
use std::fmt;
use std::io::BufRead;

use serde::de::{self, Deserializer, MapAccess, Visitor};
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use serde_json::Value;

use crate::codec;
pub use crate::codec::ParamsError;
use crate::framing::{FramingError, LineReader};
use crate::path::JsonPath;
use crate::side::{MethodEnum, ResultEnum};
use crate::{
    ClientNotification, ClientRequest, ClientResponse, Request, RequestId, ServerNotification, ServerRequest,
    ServerResponse,
};

/// JSON kept as its exact text: the `params` of a method this version of the crate does not
/// know and the `result` of a response it cannot type. Nothing in it is decoded, so it costs
/// the memory of its text (a `Value` of many small objects costs up to ~90 times that), and it
/// encodes back byte for byte (numbers beyond 64 bits included). Two are equal when their
/// texts are.
#[derive(Clone)]
pub struct RawJson(Box<RawValue>);

impl RawJson {
    /// The JSON text, as it came.
    pub fn get(&self) -> &str {
        self.0.get()
    }

    /// Decodes the text as `T` (`Value`, or a type of this crate).
    pub fn parse<T: serde::de::DeserializeOwned>(&self) -> serde_json::Result<T> {
        serde_json::from_str(self.0.get())
    }

    /// The text as a `Value`.
    pub fn to_value(&self) -> serde_json::Result<Value> {
        self.parse()
    }
}

impl From<Box<RawValue>> for RawJson {
    fn from(raw: Box<RawValue>) -> Self {
        RawJson(raw)
    }
}

impl From<&Value> for RawJson {
    fn from(value: &Value) -> Self {
        RawJson(serde_json::value::to_raw_value(value).expect("a Value always serializes"))
    }
}

impl PartialEq for RawJson {
    fn eq(&self, other: &Self) -> bool {
        self.get() == other.get()
    }
}

impl Eq for RawJson {}

impl fmt::Debug for RawJson {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("RawJson").field(&self.get()).finish()
    }
}

impl Serialize for RawJson {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.0.serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for RawJson {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        Box::<RawValue>::deserialize(deserializer).map(RawJson)
    }
}

/// The `error` member of an error response. Members other than `code`, `message` and `data`
/// are kept in `extra` and written back after them. A member given twice keeps its last
/// value.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ErrorObject {
    pub code: i64,
    pub message: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data: Option<Value>,
    /// Members the JSON-RPC error object does not define, kept as they came.
    #[serde(flatten)]
    pub extra: serde_json::Map<String, Value>,
}

impl<'de> Deserialize<'de> for ErrorObject {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct ErrorVisitor;

        impl<'de> Visitor<'de> for ErrorVisitor {
            type Value = ErrorObject;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a JSON-RPC error object")
            }

            // By hand, not derived: the derive with `flatten` refuses a member given twice,
            // where every other object of the crate keeps the last value.
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<ErrorObject, A::Error> {
                let (mut code, mut message, mut data) = (None, None, None);
                let mut extra = serde_json::Map::new();
                while let Some(BorrowedStr(key)) = map.next_key::<BorrowedStr<'de>>()? {
                    match key.as_ref() {
                        "code" => code = Some(map.next_value::<i64>()?),
                        "message" => message = Some(map.next_value::<String>()?),
                        "data" => data = map.next_value::<Option<Value>>()?,
                        _ => {
                            extra.insert(key.into_owned(), map.next_value()?);
                        }
                    }
                }
                Ok(ErrorObject {
                    code: code.ok_or_else(|| de::Error::missing_field("code"))?,
                    message: message.ok_or_else(|| de::Error::missing_field("message"))?,
                    data,
                    extra,
                })
            }
        }

        deserializer.deserialize_map(ErrorVisitor)
    }
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
        ErrorObject { code, message: message.into(), data: None, extra: serde_json::Map::new() }
    }

    /// Whether the same request may succeed if sent again later.
    pub fn is_retryable(&self) -> bool {
        self.code == Self::SERVER_OVERLOADED
    }
}

/// A W3C Trace Context (<https://www.w3.org/TR/trace-context/>), as a request carries it in
/// its envelope's `trace` member (codex's `W3cTraceContext`): codex joins the spans it makes for
/// the request to the trace it names. Both members are optional on the wire and written only
/// when set; a `null` reads as absent.
///
/// ```
/// use codex_app_protocol::jsonrpc::TraceContext;
/// use codex_app_protocol::{ClientMessage, Message};
///
/// let line = r#"{"id":1,"method":"thread/list","params":{},"trace":{"traceparent":"00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"}}"#;
/// let Message::Request(request) = ClientMessage::from_line(line)? else { unreachable!() };
/// assert_eq!(request.trace().and_then(|t| t.traceparent.as_deref()), Some("00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"));
/// assert_eq!(Message::<_, codex_app_protocol::ClientNotification>::Request(request).to_line(), line);
/// # Ok::<(), codex_app_protocol::jsonrpc::DecodeError>(())
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct TraceContext {
    /// The `traceparent` header's value: `version-traceid-parentid-flags`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub traceparent: Option<String>,
    /// The `tracestate` header's value: vendors' entries.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tracestate: Option<String>,
}

impl TraceContext {
    /// The envelope member a request carries it in.
    pub const MEMBER: &'static str = "trace";

    /// A context with `traceparent` and no `tracestate`.
    pub fn new(traceparent: impl Into<String>) -> TraceContext {
        TraceContext { traceparent: Some(traceparent.into()), tracestate: None }
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

/// An error response. `id` is `None` when the peer could not tell which request failed; it is
/// written as `"id": null`, as JSON-RPC asks (an absent `id` reads as `None` too).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ErrorResponse {
    #[serde(default)]
    pub id: Option<RequestId>,
    pub error: ErrorObject,
}

/// A successful response whose `result` was decoded by the method of the request it answers
/// (`R` is [`ClientResponse`] or [`ServerResponse`]).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TypedResponse<R> {
    pub id: RequestId,
    pub result: R,
}

/// Any message of one side of the connection. `Res` is how a successful response is kept:
/// [`Response`] (its `result` raw) or [`TypedResponse`].
#[derive(Debug, Clone, PartialEq)]
pub enum Message<Req, Notif, Res = Response> {
    Request(Req),
    Notification(Notif),
    /// A response to a request of the other side.
    Response(Res),
    Error(ErrorResponse),
}

/// A message the server sends.
pub type ServerMessage = Message<ServerRequest, ServerNotification>;
/// A message the client sends.
pub type ClientMessage = Message<ClientRequest, ClientNotification>;
/// A message the server sends, as a client reads it: a response's `result` is typed by the
/// method of the request it answers ([`Message::from_line_with`]).
pub type TypedServerMessage = Message<ServerRequest, ServerNotification, TypedResponse<ClientResponse>>;
/// A message the client sends, with a response's `result` typed by the method of the server
/// request it answers.
pub type TypedClientMessage = Message<ClientRequest, ClientNotification, TypedResponse<ServerResponse>>;

/// A request or notification enum that can be decoded from an envelope. Implemented for the
/// four generated method enums; plumbing of [`Message::from_line`], sealed.
#[doc(hidden)]
pub trait FromParts: Sized + private::Sealed {
    /// Decodes the message from envelope parts already read.
    fn from_parts(parts: &Parts<'_>) -> Result<Self, ParamsError>;

    /// Decodes the message of `method` (and `id`, for a request) with its `params` read
    /// straight from `params`.
    fn deserialize_params<'de, D: Deserializer<'de>>(
        id: Option<RequestId>,
        method: &str,
        params: D,
    ) -> Result<Self, D::Error>;

    /// Sets the envelope members (a notification's `emittedAtMs`, a request's `trace`) from the
    /// message's other members.
    fn set_envelope(&mut self, _extra: &[(Cow<'_, str>, &RawValue)]) -> Result<(), ParamsError> {
        Ok(())
    }
}

/// How a successful response is kept: [`Response`] or [`TypedResponse`]. Plumbing of
/// [`Message::from_line`]; sealed.
#[doc(hidden)]
pub trait FromResult: Sized + private::Sealed {
    /// Decodes the response `id` from its `result`; `method` is the method of the request it
    /// answers, when the caller knows it.
    fn deserialize_result<'de, D: Deserializer<'de>>(
        id: RequestId,
        method: Option<&str>,
        result: D,
    ) -> Result<Self, D::Error>;
}

impl FromResult for Response {
    fn deserialize_result<'de, D: Deserializer<'de>>(
        id: RequestId,
        _method: Option<&str>,
        result: D,
    ) -> Result<Self, D::Error> {
        Ok(Response { id, result: Box::<RawValue>::deserialize(result)? })
    }
}

/// Without the method (no pending request has this id) the result is kept as `Unrecognized`.
impl<R: ResultEnum> FromResult for TypedResponse<R> {
    fn deserialize_result<'de, D: Deserializer<'de>>(
        id: RequestId,
        method: Option<&str>,
        result: D,
    ) -> Result<Self, D::Error> {
        let result = match method {
            Some(method) => R::deserialize_result(method, result)?,
            None => R::unrecognized(RawJson::deserialize(result)?),
        };
        Ok(TypedResponse { id, result })
    }
}

impl<R: ResultEnum> private::Sealed for TypedResponse<R> {}
impl private::Sealed for Response {}
impl private::Sealed for ClientRequest {}
impl private::Sealed for ServerRequest {}
impl private::Sealed for ServerNotification {}
impl private::Sealed for ClientNotification {}

mod private {
    /// Implemented only by this crate's message types: the decoding traits are not meant to be
    /// implemented elsewhere.
    pub trait Sealed {}
}

/// Where a notification belongs (its thread, turn and item), read from its raw params by the
/// members that route every notification the crate types: for a notification of a method this
/// version of the crate does not know (`ServerNotification::Unrecognized`), or one whose
/// params did not decode. A typed notification says the same through
/// `ServerNotification::thread_id`, `turn_id` and `item_id`.
///
/// ```
/// use codex_app_protocol::jsonrpc::RawRoute;
///
/// let route = RawRoute::of_params(r#"{"threadId":"t","turn":{"id":"u"},"later":1}"#);
/// assert_eq!((route.thread.as_deref(), route.turn.as_deref(), route.item), (Some("t"), Some("u"), None));
/// ```
#[derive(Debug, Default, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct RawRoute {
    pub thread: Option<String>,
    pub turn: Option<String>,
    pub item: Option<String>,
}

impl RawRoute {
    /// The route of `params` (JSON text): for each of thread, turn and item, the first of its
    /// members that the params have as a string. A member of another type routes nothing, and
    /// neither does text that is not a JSON object.
    pub fn of_params(params: &str) -> RawRoute {
        let Ok(Value::Object(params)) = serde_json::from_str::<Value>(params) else { return RawRoute::default() };
        let params = Value::Object(params);
        let first = |paths: &[&[&str]]| {
            paths.iter().find_map(|path| {
                let at = path.iter().try_fold(&params, |value, member| value.get(member))?;
                at.as_str().map(str::to_owned)
            })
        };
        let paths = &crate::generated::access::ROUTES;
        RawRoute { thread: first(paths.thread), turn: first(paths.turn), item: first(paths.item) }
    }
}

/// The members of a notification's params that route it, per accessor: paths from the params
/// to a string, tried in order (written by the generator from its settings).
#[doc(hidden)]
pub struct RoutePaths {
    pub thread: &'static [&'static [&'static str]],
    pub turn: &'static [&'static [&'static str]],
    pub item: &'static [&'static [&'static str]],
}

/// The members of one message, with `params` and `result` still raw.
#[derive(Debug, Default)]
pub struct Parts<'a> {
    /// `None` when absent or `null` (`null_id` tells them apart).
    pub id: Option<RequestId>,
    /// `"id": null`: allowed on an error response (the server could not tell which request
    /// failed); a message with a method and a `null` id is no message.
    pub null_id: bool,
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
                        "id" => {
                            parts.id = map.next_value::<Option<RequestId>>()?;
                            parts.null_id = parts.id.is_none();
                        }
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
    p.id.clone().ok_or_else(|| ParamsError { path: JsonPath::root(), source: de::Error::missing_field("id") })
}

macro_rules! request_from_parts {
    ($($t:ty),*) => {$(
        impl FromParts for $t {
            /// The params only: the envelope members are set apart (`set_envelope`), so that
            /// their errors are not reported inside `params`.
            fn from_parts(p: &Parts<'_>) -> Result<Self, ParamsError> {
                <$t>::from_parts(request_id(p)?, p.method.as_deref().unwrap_or_default(), p.params)
            }

            fn deserialize_params<'de, D: Deserializer<'de>>(id: Option<RequestId>, method: &str, params: D) -> Result<Self, D::Error> {
                let id = id.ok_or_else(|| de::Error::missing_field("id"))?;
                <$t>::deserialize_params(id, method, params)
            }

            fn set_envelope(&mut self, extra: &[(Cow<'_, str>, &RawValue)]) -> Result<(), ParamsError> {
                <$t>::set_envelope(self, extra)
            }
        }
    )*};
}
request_from_parts!(ClientRequest, ServerRequest);

macro_rules! notification_from_parts {
    ($($t:ty),*) => {$(
        impl FromParts for $t {
            /// The params only: the envelope members are set apart (`set_envelope`), so that
            /// their errors are not reported inside `params`.
            fn from_parts(p: &Parts<'_>) -> Result<Self, ParamsError> {
                <$t>::from_parts(p.method.as_deref().unwrap_or_default(), p.params)
            }

            fn deserialize_params<'de, D: Deserializer<'de>>(_id: Option<RequestId>, method: &str, params: D) -> Result<Self, D::Error> {
                <$t>::deserialize_params(method, params)
            }

            fn set_envelope(&mut self, extra: &[(Cow<'_, str>, &RawValue)]) -> Result<(), ParamsError> {
                <$t>::set_envelope(self, extra)
            }
        }
    )*};
}
notification_from_parts!(ServerNotification, ClientNotification);

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
const ENVELOPE_MEMBER: &str = "";

impl DecodeError {
    fn new(kind: DecodeErrorKind) -> Self {
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

impl<Req: FromParts, Notif: FromParts, Res: FromResult> Message<Req, Notif, Res> {
    /// Decodes one line (without its newline). A response's `result` is kept raw
    /// ([`Response`]), or as `Unrecognized` in a [`TypedResponse`]: use
    /// [`from_line_with`](Self::from_line_with) to type it.
    pub fn from_line(line: &str) -> Result<Self, DecodeError> {
        Self::from_line_with(line, |_| None::<&str>)
    }

    /// Decodes one line (without its newline); `method_of` gives the method of the request a
    /// response answers (a client keeps `id -> method` for the requests it sent), so its
    /// `result` is decoded by that method's response type.
    pub fn from_line_with<M: AsRef<str>>(
        line: &str,
        method_of: impl Fn(&RequestId) -> Option<M>,
    ) -> Result<Self, DecodeError> {
        match Self::one_pass(line, &method_of) {
            Ok(message) => Ok(message),
            // Another member order, or an error: the two-step path gives the same message, or
            // the error with its path.
            Err(_) => {
                let parts = Parts::parse(line).map_err(|e| DecodeError::new(DecodeErrorKind::Envelope(e)))?;
                Self::from_envelope_with(parts, method_of)
            }
        }
    }

    /// The one-pass decode; an error means "take the two-step path".
    fn one_pass<M: AsRef<str>>(line: &str, method_of: &impl Fn(&RequestId) -> Option<M>) -> serde_json::Result<Self> {
        let mut deserializer = serde_json::Deserializer::from_str(line);
        let message = deserializer
            .deserialize_map(LineVisitor::<Req, Notif, Res, _, M> { method_of, _types: std::marker::PhantomData })?;
        deserializer.end()?;
        Ok(message)
    }

    /// Decodes a message from envelope parts already read.
    pub fn from_envelope(parts: Parts<'_>) -> Result<Self, DecodeError> {
        Self::from_envelope_with(parts, |_| None::<&str>)
    }

    /// Decodes a message from envelope parts already read; `method_of` as in
    /// [`from_line_with`](Self::from_line_with).
    pub fn from_envelope_with<M: AsRef<str>>(
        parts: Parts<'_>,
        method_of: impl Fn(&RequestId) -> Option<M>,
    ) -> Result<Self, DecodeError> {
        let member = |member, error| {
            let mut e = DecodeError::new(DecodeErrorKind::Member { member, error });
            e.method = parts.method.as_deref().map(str::to_owned);
            e.id = parts.id.clone();
            e
        };
        let not = |why| {
            let mut e = DecodeError::new(DecodeErrorKind::NotAMessage(why));
            e.method = parts.method.as_deref().map(str::to_owned);
            e.id = parts.id.clone();
            e
        };
        match (&parts.method, &parts.result, &parts.error) {
            (Some(_), None, None) if parts.null_id => {
                Err(not("a request with a `null` id (a notification has no `id`)"))
            }
            (Some(_), None, None) if parts.id.is_some() => {
                let mut request = Req::from_parts(&parts).map_err(|e| member("params", e))?;
                request.set_envelope(&parts.extra).map_err(|e| member(ENVELOPE_MEMBER, e))?;
                Ok(Message::Request(request))
            }
            (Some(_), None, None) => {
                let mut notification = Notif::from_parts(&parts).map_err(|e| member("params", e))?;
                // An envelope member's error: its path starts with the member's name.
                notification.set_envelope(&parts.extra).map_err(|e| member(ENVELOPE_MEMBER, e))?;
                Ok(Message::Notification(notification))
            }
            (None, Some(result), None) => {
                let id = parts.id.clone().ok_or_else(|| not("a response without `id`"))?;
                let method = method_of(&id);
                let method = method.as_ref().map(AsRef::as_ref);
                codec::decode_raw(Some(result), |result| Res::deserialize_result(id.clone(), method, result))
                    .map(Message::Response)
                    .map_err(|e| {
                        let mut e = member("result", e);
                        e.method = method.map(str::to_owned);
                        e
                    })
            }
            (None, None, Some(error)) => {
                let error = codec::params::<ErrorObject>(Some(error)).map_err(|e| member("error", e))?;
                Ok(Message::Error(ErrorResponse { id: parts.id.clone(), error }))
            }
            (None, None, None) => Err(not("no `method`, `result` or `error`")),
            _ => Err(not("more than one of `method`, `result` and `error`")),
        }
    }

    /// Reads messages from an NDJSON stream; see [`MessageReader`].
    pub fn reader<R: BufRead>(input: R) -> MessageReader<R, Self> {
        MessageReader { lines: LineReader::new(input), _message: std::marker::PhantomData }
    }
}

/// The one-pass decode of a line. Any member order it does not handle ends it with an error,
/// and the caller takes the two-step path.
struct LineVisitor<'f, Req, Notif, Res, F, M> {
    method_of: &'f F,
    _types: Decodes<Req, Notif, Res, M>,
}

/// What a [`LineVisitor`] decodes, and the type its `method_of` returns.
type Decodes<Req, Notif, Res, M> = std::marker::PhantomData<fn() -> (Message<Req, Notif, Res>, M)>;

/// What the one-pass decode has read of a message's body so far.
enum Body<Req, Notif, Res> {
    Request(Req),
    Notification(Notif),
    Response(Res),
    Error(ErrorObject),
}

/// Params decoded by the method's type, straight from the line.
struct ParamsSeed<'m, T> {
    id: Option<RequestId>,
    method: &'m str,
    _type: std::marker::PhantomData<fn() -> T>,
}

impl<'de, T: FromParts> de::DeserializeSeed<'de> for ParamsSeed<'_, T> {
    type Value = T;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<T, D::Error> {
        T::deserialize_params(self.id, self.method, deserializer)
    }
}

/// A result decoded by the type of its request's method, straight from the line.
struct ResultSeed<'m, T> {
    id: RequestId,
    method: Option<&'m str>,
    _type: std::marker::PhantomData<fn() -> T>,
}

impl<'de, T: FromResult> de::DeserializeSeed<'de> for ResultSeed<'_, T> {
    type Value = T;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<T, D::Error> {
        T::deserialize_result(self.id, self.method, deserializer)
    }
}

impl<'de, Req: FromParts, Notif: FromParts, Res: FromResult, F: Fn(&RequestId) -> Option<M>, M: AsRef<str>> Visitor<'de>
    for LineVisitor<'_, Req, Notif, Res, F, M>
{
    type Value = Message<Req, Notif, Res>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON-RPC message object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        fn two_step<E: de::Error>() -> E {
            E::custom("take the two-step path")
        }
        // `id` is `Some(None)` for `"id": null`.
        let mut id: Option<Option<RequestId>> = None;
        let mut method: Option<Cow<'de, str>> = None;
        let mut body: Option<Body<Req, Notif, Res>> = None;
        let mut extra: Vec<(Cow<'de, str>, &'de RawValue)> = Vec::new();
        while let Some(BorrowedStr(key)) = map.next_key::<BorrowedStr<'de>>()? {
            match key.as_ref() {
                // `params` and `result` take the id; one after them is another order.
                "id" if id.is_none() && matches!(body, None | Some(Body::Error(_))) => {
                    id = Some(map.next_value::<Option<RequestId>>()?)
                }
                "method" if method.is_none() && body.is_none() => {
                    method = Some(map.next_value::<BorrowedStr<'de>>()?.0)
                }
                "params" if body.is_none() => {
                    let Some(method) = method.as_deref() else { return Err(two_step()) };
                    body = Some(match id.take() {
                        Some(Some(id)) => Body::Request(map.next_value_seed(ParamsSeed {
                            id: Some(id),
                            method,
                            _type: std::marker::PhantomData,
                        })?),
                        None => Body::Notification(map.next_value_seed(ParamsSeed {
                            id: None,
                            method,
                            _type: std::marker::PhantomData,
                        })?),
                        Some(None) => return Err(two_step()),
                    });
                }
                "result" if body.is_none() && method.is_none() => {
                    let Some(Some(id)) = id.take() else { return Err(two_step()) };
                    let request_method = (self.method_of)(&id);
                    let seed = ResultSeed {
                        id,
                        method: request_method.as_ref().map(AsRef::as_ref),
                        _type: std::marker::PhantomData,
                    };
                    body = Some(Body::Response(map.next_value_seed(seed)?));
                }
                "error" if body.is_none() && method.is_none() => body = Some(Body::Error(map.next_value()?)),
                "jsonrpc" => {
                    if map.next_value::<BorrowedStr<'de>>()?.0 != "2.0" {
                        return Err(two_step());
                    }
                }
                "id" | "method" | "params" | "result" | "error" => return Err(two_step()),
                _ => extra.push((key, map.next_value()?)),
            }
        }
        let not_null = || serde_json::Deserializer::from_str("null");
        match (body, method) {
            (Some(Body::Request(mut request)), _) => {
                request.set_envelope(&extra).map_err(|_| two_step::<A::Error>())?;
                Ok(Message::Request(request))
            }
            (Some(Body::Notification(mut notification)), _) => {
                notification.set_envelope(&extra).map_err(|_| two_step::<A::Error>())?;
                Ok(Message::Notification(notification))
            }
            // A method without params: decoded from `null`, as if `"params": null`.
            (None, Some(method)) => match id {
                Some(Some(id)) => {
                    Req::deserialize_params(Some(id), &method, &mut not_null()).and_then(|mut request| {
                        request.set_envelope(&extra).map_err(de::Error::custom)?;
                        Ok(Message::Request(request))
                    })
                }
                Some(None) => Err(two_step()),
                None => Notif::deserialize_params(None, &method, &mut not_null()).and_then(|mut notification| {
                    notification.set_envelope(&extra).map_err(de::Error::custom)?;
                    Ok(Message::Notification(notification))
                }),
            }
            .map_err(|_| two_step()),
            (Some(Body::Response(response)), None) => Ok(Message::Response(response)),
            (Some(Body::Error(error)), None) => Ok(Message::Error(ErrorResponse { id: id.flatten(), error })),
            _ => Err(two_step()),
        }
    }
}

impl<Req: Serialize, Notif: Serialize, Res: Serialize> Message<Req, Notif, Res> {
    /// Encodes the message as one line (without a newline).
    pub fn to_line(&self) -> String {
        serde_json::to_string(self).expect("messages always serialize")
    }

    /// The method of a request or notification.
    pub fn method(&self) -> Option<&str>
    where
        Req: MethodEnum,
        Notif: MethodEnum,
    {
        match self {
            Message::Request(r) => Some(r.method()),
            Message::Notification(n) => Some(n.method()),
            Message::Response(_) | Message::Error(_) => None,
        }
    }
}

impl<Req: Serialize, Notif: Serialize, Res: Serialize> Serialize for Message<Req, Notif, Res> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            Message::Request(r) => r.serialize(serializer),
            Message::Notification(n) => n.serialize(serializer),
            Message::Response(r) => r.serialize(serializer),
            Message::Error(e) => e.serialize(serializer),
        }
    }
}

/// A message from any serde deserializer, decoded exactly as [`Message::from_line`] decodes
/// its text: the value is read as JSON text first (exact with `serde_json::from_str`,
/// `from_slice` and `from_reader`; from a `Value`, numbers are as the `Value` holds them),
/// then decoded in one pass. An error carries the [`DecodeError`]'s method and serde path.
impl<'de, Req: FromParts, Notif: FromParts, Res: FromResult> Deserialize<'de> for Message<Req, Notif, Res> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let raw = Box::<RawValue>::deserialize(deserializer)?;
        Message::from_line(raw.get()).map_err(de::Error::custom)
    }
}

/// `Deserialize` for a request or notification enum: the whole message object
/// (`{"id", "method", "params"}`), as [`Message::from_line`] reads it.
macro_rules! deserialize_message {
    ($($t:ident: $message:ty, $variant:ident, $what:literal;)*) => {$(
        impl<'de> Deserialize<'de> for $t {
            fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
                match <$message>::deserialize(deserializer)? {
                    Message::$variant(message) => Ok(message),
                    _ => Err(de::Error::custom(concat!("expected ", $what, " (a message with a `method`)"))),
                }
            }
        }
    )*};
}

deserialize_message! {
    ClientRequest: ClientMessage, Request, "a request";
    ClientNotification: ClientMessage, Notification, "a notification";
    ServerRequest: ServerMessage, Request, "a request";
    ServerNotification: ServerMessage, Notification, "a notification";
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

impl<R: BufRead, Req: FromParts, Notif: FromParts, Res: FromResult> Iterator
    for MessageReader<R, Message<Req, Notif, Res>>
{
    type Item = Result<(u64, Message<Req, Notif, Res>), DecodeError>;

    fn next(&mut self) -> Option<Self::Item> {
        Some(match self.lines.next()? {
            Err(e) => Err(DecodeError { line: e.line(), id: None, method: None, kind: DecodeErrorKind::Framing(e) }),
            Ok(line) => Message::from_line(&line.text).map(|m| (line.number, m)).map_err(|mut e| {
                e.line = Some(line.number);
                e
            }),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{ClientResponse, TypedServerMessage};

    fn method_of(id: &RequestId) -> Option<&'static str> {
        (*id == RequestId::Integer(1)).then_some("thread/archive")
    }

    /// Lines in the member order codex writes take the one-pass decode, and it gives what
    /// the two-step decode gives.
    #[test]
    fn codex_member_order_is_decoded_in_one_pass() {
        let lines = [
            r#"{"method":"thread/name/updated","params":{"threadId":"t","threadName":"n"},"emittedAtMs":7}"#,
            r#"{"method":"thread/archived","params":{"threadId":"t"}}"#,
            r#"{"method":"item/tool/call","id":0,"params":{"threadId":"t","turnId":"u","callId":"c","tool":"x","arguments":{}}}"#,
            r#"{"id":1,"result":{}}"#,
            r#"{"id":2,"result":{"anything":[1,2]}}"#,
            r#"{"error":{"code":-32600,"message":"Not initialized"},"id":3}"#,
            r#"{"method":"some/futureNotification","params":{"x":1},"emittedAtMs":1}"#,
            r#"{"jsonrpc":"2.0","method":"some/futureNotification"}"#,
        ];
        for line in lines {
            let one =
                TypedServerMessage::one_pass(line, &method_of).unwrap_or_else(|e| panic!("{line}: not one pass: {e}"));
            let two = TypedServerMessage::from_envelope_with(Parts::parse(line).unwrap(), method_of).unwrap();
            assert_eq!(one, two, "{line}");
        }
        let typed = TypedServerMessage::from_line_with(r#"{"id":1,"result":{}}"#, method_of).unwrap();
        assert!(matches!(typed, Message::Response(TypedResponse { result: ClientResponse::ThreadArchive(_), .. })));
        let unknown = TypedServerMessage::from_line_with(r#"{"id":2,"result":{}}"#, method_of).unwrap();
        assert!(matches!(unknown, Message::Response(TypedResponse { result: ClientResponse::Unrecognized(_), .. })));
    }

    /// Other member orders, and lines that do not decode, are handed to the two-step path,
    /// which decodes them (or reports the error with its path).
    #[test]
    fn other_orders_and_errors_take_the_two_step_path() {
        let cases = [
            // params before method; id after params; result before id; error and method.
            (r#"{"params":{"threadId":"t"},"method":"thread/archived"}"#, true),
            (
                r#"{"method":"item/tool/call","params":{"threadId":"t","turnId":"u","callId":"c","tool":"x","arguments":{}},"id":0}"#,
                true,
            ),
            (r#"{"result":{},"id":1}"#, true),
            (r#"{"id":1,"result":{},"id":2}"#, true),
            (r#"{"method":"thread/archived","params":{"threadId":7}}"#, false),
            (r#"{"method":"thread/archived","params":{"threadId":"t"},"emittedAtMs":"soon"}"#, false),
            (r#"{"method":"thread/archived","error":{"code":1,"message":"m"}}"#, false),
            (r#"{"jsonrpc":"1.0","method":"thread/archived","params":{"threadId":"t"}}"#, false),
        ];
        for (line, decodes) in cases {
            assert!(TypedServerMessage::one_pass(line, &method_of).is_err(), "{line}: expected the two-step path");
            let two = Parts::parse(line)
                .map_err(|e| e.to_string())
                .and_then(|parts| TypedServerMessage::from_envelope_with(parts, method_of).map_err(|e| e.to_string()));
            assert_eq!(two.is_ok(), decodes, "{line}: {two:?}");
            let via_line = TypedServerMessage::from_line_with(line, method_of);
            match (&via_line, &two) {
                (Ok(a), Ok(b)) => assert_eq!(a, b, "{line}"),
                (Err(a), Err(b)) => assert!(a.to_string().ends_with(b.as_str()), "{line}: {a} vs {b}"),
                _ => panic!("{line}: {via_line:?} vs {two:?}"),
            }
        }
        let error =
            TypedServerMessage::from_line_with(r#"{"method":"thread/archived","params":{"threadId":7}}"#, method_of)
                .unwrap_err();
        assert_eq!(error.path().map(|p| p.to_string()).as_deref(), Some("params.threadId"));
    }
}
