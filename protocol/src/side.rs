//! The two sides of the connection as types, so that code about either direction of the
//! protocol is written once.
//!
//! Each side sends its own requests and notifications and answers the other side's requests:
//!
//! | | [`Client`] | [`Server`] |
//! |---|---|---|
//! | [`Side::Request`] | [`ClientRequest`] | [`ServerRequest`] |
//! | [`Side::Notification`] | [`ClientNotification`] | [`ServerNotification`] |
//! | [`Side::Response`] (results it sends) | [`ServerResponse`] | [`ClientResponse`] |
//! | [`Side::Peer`] | [`Server`] | [`Client`] |
//!
//! ```
//! use codex_app_protocol::side::{self, MethodEnum, Side};
//!
//! /// The method of a line sent by `S`, when it is a request or notification this crate knows.
//! fn known_method<S: Side>(line: &str) -> Option<String> {
//!     match side::MessageOf::<S>::from_line(line).ok()? {
//!         codex_app_protocol::Message::Request(r) if !r.is_unrecognized() => Some(r.method().to_owned()),
//!         codex_app_protocol::Message::Notification(n) if !n.is_unrecognized() => Some(n.method().to_owned()),
//!         _ => None,
//!     }
//! }
//!
//! let line = r#"{"method":"turn/started","params":{"threadId":"t","turn":{"id":"u","items":[],"status":"inProgress"}}}"#;
//! assert_eq!(known_method::<side::Server>(line).as_deref(), Some("turn/started"));
//! assert_eq!(known_method::<side::Client>(line), None);
//! ```

use serde::Serialize;
use serde_json::value::RawValue;

use crate::jsonrpc::{FromParts, Message, ParamsError, TypedResponse};
use crate::{
    ClientNotification, ClientRequest, ClientResponse, NotificationVisitor, RequestId, RequestVisitor,
    ServerNotification, ServerRequest, ServerResponse,
};

/// One side of the connection: what it sends.
pub trait Side: private::Sealed + Sized + 'static {
    /// `"client"` or `"server"`.
    const NAME: &'static str;
    /// The requests this side sends.
    type Request: MethodEnum;
    /// The notifications this side sends.
    type Notification: MethodEnum;
    /// The typed results of the responses this side sends: answers to the requests of the
    /// [`Peer`](Side::Peer).
    type Response: ResultEnum;
    /// The other side.
    type Peer: Side<Peer = Self>;

    /// Calls `visitor` with the marker type of this side's request `method` (or its
    /// `unrecognized`).
    fn visit_request<V: RequestVisitor>(method: &str, visitor: V) -> V::Output;

    /// Calls `visitor` with the marker type of this side's notification `method` (or its
    /// `unrecognized`).
    fn visit_notification<V: NotificationVisitor>(method: &str, visitor: V) -> V::Output;
}

/// A message sent by side `S`, with a response's `result` raw.
pub type MessageOf<S> = Message<<S as Side>::Request, <S as Side>::Notification>;

/// A message sent by side `S`, with a response's `result` typed by the method of the request
/// it answers.
pub type TypedMessageOf<S> =
    Message<<S as Side>::Request, <S as Side>::Notification, TypedResponse<<S as Side>::Response>>;

/// A request or notification enum of one side.
pub trait MethodEnum: Serialize + FromParts + Clone + PartialEq + std::fmt::Debug {
    /// The method on the wire.
    fn method(&self) -> &str;
    /// The request id (`None` for a notification).
    fn id(&self) -> Option<&RequestId>;
    /// Whether the method is one this version of the crate does not know (the `Unrecognized`
    /// variant, params kept raw).
    fn is_unrecognized(&self) -> bool;
}

/// A typed response enum of one side (`ClientResponse`: the results of client requests).
pub trait ResultEnum: Serialize + Clone + PartialEq + std::fmt::Debug + Sized {
    /// Decodes the `result` of a response to a request of `method`.
    fn decode(method: &str, result: &RawValue) -> Result<Self, ParamsError>;
    /// Whether the result is kept raw (`Unrecognized`: a method this crate does not know).
    fn is_unrecognized(&self) -> bool;
    /// Decodes the `result` of a response to a request of `method` straight from `result`.
    #[doc(hidden)]
    fn decode_result(method: &str, result: &mut crate::codec::Reader<'_>) -> crate::codec::Result<Self>;
    /// A result kept raw.
    #[doc(hidden)]
    fn unrecognized(raw: crate::RawJson) -> Self;
}

/// The client side: sends [`ClientRequest`] and [`ClientNotification`], answers with
/// [`ServerResponse`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Client {}

/// The server side: sends [`ServerRequest`] and [`ServerNotification`], answers with
/// [`ClientResponse`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Server {}

macro_rules! side {
    ($side:ty, $name:literal, $req:ident, $notif:ident, $resp:ident, $peer:ty) => {
        impl private::Sealed for $side {}

        impl Side for $side {
            const NAME: &'static str = $name;
            type Request = $req;
            type Notification = $notif;
            type Response = $resp;
            type Peer = $peer;

            fn visit_request<V: RequestVisitor>(method: &str, visitor: V) -> V::Output {
                $req::visit_method(method, visitor)
            }

            fn visit_notification<V: NotificationVisitor>(method: &str, visitor: V) -> V::Output {
                $notif::visit_method(method, visitor)
            }
        }
    };
}

side!(Client, "client", ClientRequest, ClientNotification, ServerResponse, Server);
side!(Server, "server", ServerRequest, ServerNotification, ClientResponse, Client);

macro_rules! method_enum {
    ($($t:ident: $id:expr),*) => {$(
        impl MethodEnum for $t {
            fn method(&self) -> &str {
                $t::method(self)
            }

            fn id(&self) -> Option<&RequestId> {
                let id: fn(&Self) -> Option<&RequestId> = $id;
                id(self)
            }

            fn is_unrecognized(&self) -> bool {
                matches!(self, $t::Unrecognized { .. })
            }
        }
    )*};
}

method_enum!(
    ClientRequest: |r| Some(r.id()),
    ServerRequest: |r| Some(r.id()),
    ServerNotification: |_| None,
    ClientNotification: |_| None
);

macro_rules! result_enum {
    ($($t:ident),*) => {$(
        impl ResultEnum for $t {
            fn decode(method: &str, result: &RawValue) -> Result<Self, ParamsError> {
                $t::decode(method, result)
            }

            fn is_unrecognized(&self) -> bool {
                matches!(self, $t::Unrecognized(_))
            }

            fn decode_result(method: &str, result: &mut crate::codec::Reader<'_>) -> crate::codec::Result<Self> {
                $t::decode_result(method, result)
            }

            fn unrecognized(raw: crate::RawJson) -> Self {
                $t::Unrecognized(raw)
            }
        }
    )*};
}

result_enum!(ClientResponse, ServerResponse);

mod private {
    pub trait Sealed {}
}
