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
//!
//! The files: this one the envelope's types and their encoding, `parts` the envelope with
//! `params` and `result` raw (the two-step decode), `decode` the one-pass decode, `error` a
//! line's decode error, `reader` the decode of a stream of lines.

use std::borrow::Cow;
use std::fmt;
use std::io::BufRead;

use serde::de::{self, Deserializer, MapAccess, Visitor};
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use serde_json::Value;

pub use crate::codec::ParamsError;
use crate::codec::{self, Decode as _};
use crate::framing::{FramingError, LineReader};
use crate::path::JsonPath;
use crate::side::{MethodEnum, ResultEnum};
use crate::{
    ClientNotification, ClientRequest, ClientResponse, Request, RequestId, ServerNotification, ServerRequest,
    ServerResponse,
};

mod decode;
mod error;
mod parts;
mod reader;
#[cfg(test)]
mod tests;

use crate::codec::Str;
use error::ENVELOPE_MEMBER;
pub use error::{DecodeError, DecodeErrorKind};
pub use parts::{Parts, RawRoute, RoutePaths};
pub use reader::MessageReader;

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

impl codec::Decode for RawJson {
    fn decode(reader: &mut codec::Reader<'_>) -> codec::Result<Self> {
        codec::Decode::decode(reader).map(RawJson)
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

/// Read through its text, by the decoder below.
impl<'de> Deserialize<'de> for ErrorObject {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        codec::deserialize_via_text(deserializer)
    }
}

/// By hand, not derived: the derive with `flatten` refuses a member given twice, where every
/// other object of the crate keeps the last value.
impl codec::Decode for ErrorObject {
    fn decode(reader: &mut codec::Reader<'_>) -> codec::Result<Self> {
        let mut object = reader.begin_object("a JSON-RPC error object")?;
        let (mut code, mut message, mut data) = (None, None, None);
        let mut extra = serde_json::Map::new();
        while let Some(key) = reader.next_key(&mut object)? {
            match key.as_ref() {
                "code" => code = Some(i64::decode(reader)?),
                "message" => message = Some(String::decode(reader)?),
                "data" => data = Option::<Value>::decode(reader)?,
                _ => {
                    let value = Value::decode(reader)?;
                    extra.insert(key.into_owned(), value);
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

crate::wire_macros::wire_struct! {
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
    #[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
    pub struct TraceContext {
        /// The `traceparent` header's value: `version-traceid-parentid-flags`.
        pub traceparent: Option<String> = "traceparent" (optional),
        /// The `tracestate` header's value: vendors' entries.
        pub tracestate: Option<String> = "tracestate" (optional),
    }
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

/// The encoders of the four message types (`to_line`, and with it every type's `Serialize` for
/// serde_json's writer into a `Vec<u8>`), compiled here in the unoptimized builds with
/// `inspect`: the drift check's builds. The crates above that encode with the same writer (the
/// traffic crate's re-encoding, the client's requests, a test suite's round trips) then link
/// these copies instead of compiling their own, as rustc shares the generic functions a
/// dependency compiled in unoptimized builds (`share-generics`). Without `inspect`, or
/// optimized, each crate compiles what it encodes itself (docs/build-cost.md, "In the test
/// builds"). Not API.
#[cfg(all(feature = "inspect", debug_assertions))]
#[doc(hidden)]
pub fn __encoders(
    server: &ServerMessage,
    client: &ClientMessage,
    typed_server: &TypedServerMessage,
    typed_client: &TypedClientMessage,
) -> [String; 4] {
    [server.to_line(), client.to_line(), typed_server.to_line(), typed_client.to_line()]
}

/// A request or notification enum that can be decoded from an envelope. Implemented for the
/// four generated method enums; plumbing of [`Message::from_line`], sealed.
#[doc(hidden)]
pub trait FromParts: Sized + private::Sealed {
    /// Decodes the message from envelope parts already read.
    fn from_parts(parts: &Parts<'_>) -> Result<Self, ParamsError>;

    /// Decodes the message of `method` (and `id`, for a request) with its `params` read
    /// straight from `params`.
    fn decode_params(id: Option<RequestId>, method: &str, params: &mut codec::Reader<'_>) -> codec::Result<Self>;

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
    fn decode_result(id: RequestId, method: Option<&str>, result: &mut codec::Reader<'_>) -> codec::Result<Self>;
}

impl FromResult for Response {
    fn decode_result(id: RequestId, _method: Option<&str>, result: &mut codec::Reader<'_>) -> codec::Result<Self> {
        Ok(Response { id, result: codec::Decode::decode(result)? })
    }
}

/// Without the method (no pending request has this id) the result is kept as `Unrecognized`.
impl<R: ResultEnum> FromResult for TypedResponse<R> {
    fn decode_result(id: RequestId, method: Option<&str>, result: &mut codec::Reader<'_>) -> codec::Result<Self> {
        let result = match method {
            Some(method) => R::decode_result(method, result)?,
            None => R::unrecognized(codec::Decode::decode(result)?),
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
