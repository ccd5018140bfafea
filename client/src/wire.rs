//! Everything the client knows about the protocol crate's envelope, in one place: how a line
//! is decoded and encoded, how a request is checked against the experimental opt-in, and how
//! a notification's thread and turn are found.

use codex_app_protocol::jsonrpc::{ErrorObject, ErrorResponse, Parts};
use codex_app_protocol::{ClientMessage, ClientNotification, RequestId, Response, ServerMessage, ServerNotification};
use serde::ser::{self, Serialize};
use serde_json::value::RawValue;

use crate::error::DecodeReport;

/// Decodes one server line. Requests and notifications are typed in one pass; a response's
/// `result` is kept raw, to be decoded by the type of the method of its request (in the task
/// that awaits it).
pub(crate) fn decode_server_line(line: &str, number: u64) -> Result<ServerMessage, DecodeReport> {
    ServerMessage::from_line(line).map_err(|e| DecodeReport {
        line_number: Some(number),
        method: e.method.clone(),
        path: e.path(),
        message: e.to_string(),
        line: truncate(line, 300),
    })
}

/// The id of a server line that did not decode, if it has one and a method (a request the
/// client must still answer).
pub(crate) fn undecodable_request_id(line: &str) -> Option<RequestId> {
    let parts = Parts::parse(line).ok()?;
    parts.method.as_ref()?;
    parts.id
}

/// The line of a request: `{"id":..,"method":..,"params":..}`; `params` is left out when it
/// encodes as `null` (methods without params).
pub(crate) fn request_line<P: Serialize + ?Sized>(id: &RequestId, method: &str, params: &P) -> Result<String, serde_json::Error> {
    let params = serde_json::to_string(params)?;
    let id = serde_json::to_string(id)?;
    let method = serde_json::to_string(method)?;
    Ok(if params == "null" {
        format!(r#"{{"id":{id},"method":{method}}}"#)
    } else {
        format!(r#"{{"id":{id},"method":{method},"params":{params}}}"#)
    })
}

/// The line of a notification the client sends.
pub(crate) fn notification_line<P: Serialize + ?Sized>(method: &str, params: &P) -> Result<String, serde_json::Error> {
    let params = serde_json::to_string(params)?;
    let method = serde_json::to_string(method)?;
    Ok(if params == "null" { format!(r#"{{"method":{method}}}"#) } else { format!(r#"{{"method":{method},"params":{params}}}"#) })
}

/// The `initialized` notification.
pub(crate) fn initialized_line() -> String {
    ClientMessage::Notification(ClientNotification::Initialized {}).to_line()
}

/// A successful answer to a server request.
pub(crate) fn response_line(id: RequestId, result: &RawValue) -> String {
    ClientMessage::Response(Response { id, result: result.to_owned() }).to_line()
}

/// An error answer to a server request.
pub(crate) fn error_line(id: RequestId, error: ErrorObject) -> String {
    ClientMessage::Error(ErrorResponse { id: Some(id), error }).to_line()
}

/// The server's descriptor of the experimental surface a request line uses
/// (`thread/start.dynamicTools`), or `None`. A line that does not decode as a client request
/// (a method newer than the crate) uses none that the crate knows of.
#[cfg(feature = "experimental")]
pub(crate) fn experimental_reason(line: &str) -> Option<&'static str> {
    use codex_app_protocol::{ExperimentalApi, Message};
    match ClientMessage::from_line(line) {
        Ok(Message::Request(request)) => request.experimental_reason(),
        _ => None,
    }
}

/// The error message the server gives for experimental use without the opt-in.
#[cfg(feature = "experimental")]
pub(crate) fn experimental_error_message(reason: &str) -> String {
    codex_app_protocol::experimental_error_message(reason)
}

/// The start of a line, for messages.
pub(crate) fn truncate(line: &str, max: usize) -> String {
    if line.len() <= max {
        return line.to_owned();
    }
    let mut cut = max;
    while !line.is_char_boundary(cut) {
        cut -= 1;
    }
    format!("{}...", &line[..cut])
}

/// What a notification means for the life of its turn.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Lifecycle {
    ItemStarted,
    ItemCompleted,
    TurnCompleted,
    Other,
}

/// The lifecycle meaning of a notification.
pub(crate) fn lifecycle(notification: &ServerNotification) -> Lifecycle {
    match notification {
        ServerNotification::ItemStarted { .. } => Lifecycle::ItemStarted,
        ServerNotification::ItemCompleted { .. } => Lifecycle::ItemCompleted,
        ServerNotification::TurnCompleted { .. } => Lifecycle::TurnCompleted,
        _ => Lifecycle::Other,
    }
}

/// The turn id in a `turn/start` result (`{"turn":{"id":..}}`), read without decoding the
/// rest.
pub(crate) fn started_turn_id(result: &RawValue) -> Option<String> {
    #[derive(serde::Deserialize)]
    struct Started {
        turn: TurnId,
    }
    #[derive(serde::Deserialize)]
    struct TurnId {
        id: String,
    }
    serde_json::from_str::<Started>(result.get()).ok().map(|s| s.turn.id)
}

// ---------------------------------------------------------------------------------------
// Where a notification belongs: its `params.threadId` and `params.turnId` (or
// `params.turn.id`), found by serializing it into a probe that looks at nothing else. This
// works for every notification type, present and future, without a table of variants.

/// The thread and turn a notification names.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub(crate) struct RouteKey {
    pub thread: Option<String>,
    pub turn: Option<String>,
    /// `params.item.id` (item lifecycle notifications).
    pub item: Option<String>,
}

/// Finds the thread and turn of a notification.
pub(crate) fn route_key(notification: &ServerNotification) -> RouteKey {
    let mut found = Found::default();
    // The probe never fails on a value it does not look at; an error leaves what was found.
    match notification {
        // A method this crate does not know keeps its params as exact text (`RawJson`), which
        // serializes as an opaque token: probe the parsed value instead.
        ServerNotification::Unrecognized { params, .. } => {
            let params = params.as_ref().and_then(|p| p.parse::<serde_json::Value>().ok());
            let _ = serde_json::json!({ "params": params }).serialize(Probe { mode: Mode::Top, found: &mut found });
        }
        known => {
            let _ = known.serialize(Probe { mode: Mode::Top, found: &mut found });
        }
    }
    RouteKey { thread: found.thread, turn: found.turn_id.or(found.turn_dot_id), item: found.item_id }
}

#[derive(Default)]
struct Found {
    key: Key,
    thread: Option<String>,
    turn_id: Option<String>,
    turn_dot_id: Option<String>,
    item_id: Option<String>,
}

#[derive(Default, Clone, Copy, PartialEq)]
enum Key {
    #[default]
    Other,
    Params,
    ThreadId,
    TurnId,
    Turn,
    Item,
    Id,
}

impl Key {
    fn of(name: &str) -> Key {
        match name {
            "params" => Key::Params,
            "threadId" => Key::ThreadId,
            "turnId" => Key::TurnId,
            "turn" => Key::Turn,
            "item" => Key::Item,
            "id" => Key::Id,
            _ => Key::Other,
        }
    }
}

#[derive(Clone, Copy, PartialEq)]
enum Mode {
    /// The message: look into `params`.
    Top,
    /// `params`: take `threadId`, `turnId`, look into `turn`.
    Params,
    /// `params.turn`: take `id`.
    Turn,
    /// `params.item`: take `id`.
    Item,
    /// A map key: remember which one.
    Key,
    /// A string to keep.
    Thread,
    TurnId,
    TurnDotId,
    ItemDotId,
    /// Anything else: ignored.
    Skip,
}

struct Probe<'a> {
    mode: Mode,
    found: &'a mut Found,
}

#[derive(Debug)]
struct ProbeError;

impl std::fmt::Display for ProbeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("probe")
    }
}

impl std::error::Error for ProbeError {}

impl ser::Error for ProbeError {
    fn custom<T: std::fmt::Display>(_msg: T) -> Self {
        ProbeError
    }
}

struct Compound<'a> {
    mode: Mode,
    found: &'a mut Found,
}

impl Compound<'_> {
    fn member<T: Serialize + ?Sized>(&mut self, key: Key, value: &T) -> Result<(), ProbeError> {
        let mode = match (self.mode, key) {
            (Mode::Top, Key::Params) => Mode::Params,
            (Mode::Params, Key::ThreadId) => Mode::Thread,
            (Mode::Params, Key::TurnId) => Mode::TurnId,
            (Mode::Params, Key::Turn) => Mode::Turn,
            (Mode::Params, Key::Item) => Mode::Item,
            (Mode::Turn, Key::Id) => Mode::TurnDotId,
            (Mode::Item, Key::Id) => Mode::ItemDotId,
            _ => return Ok(()),
        };
        value.serialize(Probe { mode, found: self.found })
    }
}

macro_rules! ignore {
    ($($name:ident($($ty:ty),*);)*) => {$(
        fn $name(self, $(_: $ty),*) -> Result<(), ProbeError> { Ok(()) }
    )*};
}

impl<'a> ser::Serializer for Probe<'a> {
    type Ok = ();
    type Error = ProbeError;
    type SerializeSeq = Compound<'a>;
    type SerializeTuple = Compound<'a>;
    type SerializeTupleStruct = Compound<'a>;
    type SerializeTupleVariant = Compound<'a>;
    type SerializeMap = Compound<'a>;
    type SerializeStruct = Compound<'a>;
    type SerializeStructVariant = Compound<'a>;

    ignore! {
        serialize_bool(bool); serialize_i8(i8); serialize_i16(i16); serialize_i32(i32); serialize_i64(i64);
        serialize_u8(u8); serialize_u16(u16); serialize_u32(u32); serialize_u64(u64);
        serialize_f32(f32); serialize_f64(f64); serialize_char(char); serialize_bytes(&[u8]);
        serialize_none(); serialize_unit(); serialize_unit_struct(&'static str);
        serialize_unit_variant(&'static str, u32, &'static str);
    }

    fn serialize_str(self, v: &str) -> Result<(), ProbeError> {
        match self.mode {
            Mode::Key => self.found.key = Key::of(v),
            Mode::Thread => self.found.thread = Some(v.to_owned()),
            Mode::TurnId => self.found.turn_id = Some(v.to_owned()),
            Mode::TurnDotId => self.found.turn_dot_id = Some(v.to_owned()),
            Mode::ItemDotId => self.found.item_id = Some(v.to_owned()),
            _ => {}
        }
        Ok(())
    }

    fn serialize_some<T: Serialize + ?Sized>(self, value: &T) -> Result<(), ProbeError> {
        value.serialize(self)
    }

    fn serialize_newtype_struct<T: Serialize + ?Sized>(self, _name: &'static str, value: &T) -> Result<(), ProbeError> {
        value.serialize(self)
    }

    fn serialize_newtype_variant<T: Serialize + ?Sized>(self, _: &'static str, _: u32, _: &'static str, _: &T) -> Result<(), ProbeError> {
        Ok(())
    }

    fn serialize_seq(self, _len: Option<usize>) -> Result<Compound<'a>, ProbeError> {
        Ok(Compound { mode: Mode::Skip, found: self.found })
    }

    fn serialize_tuple(self, _len: usize) -> Result<Compound<'a>, ProbeError> {
        Ok(Compound { mode: Mode::Skip, found: self.found })
    }

    fn serialize_tuple_struct(self, _: &'static str, _: usize) -> Result<Compound<'a>, ProbeError> {
        Ok(Compound { mode: Mode::Skip, found: self.found })
    }

    fn serialize_tuple_variant(self, _: &'static str, _: u32, _: &'static str, _: usize) -> Result<Compound<'a>, ProbeError> {
        Ok(Compound { mode: Mode::Skip, found: self.found })
    }

    fn serialize_map(self, _len: Option<usize>) -> Result<Compound<'a>, ProbeError> {
        let mode = if matches!(self.mode, Mode::Top | Mode::Params | Mode::Turn | Mode::Item) { self.mode } else { Mode::Skip };
        Ok(Compound { mode, found: self.found })
    }

    fn serialize_struct(self, _: &'static str, len: usize) -> Result<Compound<'a>, ProbeError> {
        self.serialize_map(Some(len))
    }

    fn serialize_struct_variant(self, _: &'static str, _: u32, _: &'static str, _: usize) -> Result<Compound<'a>, ProbeError> {
        Ok(Compound { mode: Mode::Skip, found: self.found })
    }
}

impl ser::SerializeMap for Compound<'_> {
    type Ok = ();
    type Error = ProbeError;

    fn serialize_key<T: Serialize + ?Sized>(&mut self, key: &T) -> Result<(), ProbeError> {
        self.found.key = Key::Other;
        if self.mode != Mode::Skip {
            key.serialize(Probe { mode: Mode::Key, found: self.found })?;
        }
        Ok(())
    }

    fn serialize_value<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), ProbeError> {
        let key = self.found.key;
        self.member(key, value)
    }

    fn end(self) -> Result<(), ProbeError> {
        Ok(())
    }
}

impl ser::SerializeStruct for Compound<'_> {
    type Ok = ();
    type Error = ProbeError;

    fn serialize_field<T: Serialize + ?Sized>(&mut self, key: &'static str, value: &T) -> Result<(), ProbeError> {
        self.member(Key::of(key), value)
    }

    fn end(self) -> Result<(), ProbeError> {
        Ok(())
    }
}

macro_rules! skip_compound {
    ($($trait:ident::$method:ident;)*) => {$(
        impl ser::$trait for Compound<'_> {
            type Ok = ();
            type Error = ProbeError;
            fn $method<T: Serialize + ?Sized>(&mut self, _value: &T) -> Result<(), ProbeError> {
                Ok(())
            }
            fn end(self) -> Result<(), ProbeError> {
                Ok(())
            }
        }
    )*};
}

skip_compound! {
    SerializeSeq::serialize_element;
    SerializeTuple::serialize_element;
    SerializeTupleStruct::serialize_field;
    SerializeTupleVariant::serialize_field;
}

impl ser::SerializeStructVariant for Compound<'_> {
    type Ok = ();
    type Error = ProbeError;

    fn serialize_field<T: Serialize + ?Sized>(&mut self, _key: &'static str, _value: &T) -> Result<(), ProbeError> {
        Ok(())
    }

    fn end(self) -> Result<(), ProbeError> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use codex_app_protocol::Message;

    fn key(line: &str) -> RouteKey {
        match decode_server_line(line, 1).unwrap() {
            Message::Notification(n) => route_key(&n),
            other => panic!("not a notification: {other:?}"),
        }
    }

    #[test]
    fn route_keys_of_notifications() {
        let delta = r#"{"method":"item/commandExecution/outputDelta","params":{"threadId":"t","turnId":"u","itemId":"c","delta":"x"},"emittedAtMs":0}"#;
        assert_eq!(key(delta), RouteKey { thread: Some("t".into()), turn: Some("u".into()), item: None });
        let completed = r#"{"method":"turn/completed","params":{"threadId":"t","turn":{"id":"u","items":[],"status":"completed","error":null}}}"#;
        assert_eq!(key(completed), RouteKey { thread: Some("t".into()), turn: Some("u".into()), item: None });
        let warning = r#"{"method":"warning","params":{"threadId":"t","message":"m"}}"#;
        assert_eq!(key(warning), RouteKey { thread: Some("t".into()), turn: None, item: None });
        let unknown = r#"{"method":"some/future","params":{"threadId":"t","turnId":"u","deep":{"turnId":"no"}}}"#;
        assert_eq!(key(unknown), RouteKey { thread: Some("t".into()), turn: Some("u".into()), item: None });
        let item = r#"{"method":"some/future","params":{"threadId":"t","turnId":"u","item":{"type":"x","id":"i"}}}"#;
        assert_eq!(key(item), RouteKey { thread: Some("t".into()), turn: Some("u".into()), item: Some("i".into()) });
        let none = r#"{"method":"some/future"}"#;
        assert_eq!(key(none), RouteKey::default());
    }

    #[test]
    fn request_lines() {
        let id = RequestId::Integer(3);
        assert_eq!(request_line(&id, "a/b", &()).unwrap(), r#"{"id":3,"method":"a/b"}"#);
        assert_eq!(request_line(&id, "a/b", &serde_json::json!({"x":1})).unwrap(), r#"{"id":3,"method":"a/b","params":{"x":1}}"#);
        assert_eq!(notification_line("initialized", &()).unwrap(), r#"{"method":"initialized"}"#);
        assert_eq!(initialized_line(), r#"{"method":"initialized"}"#);
    }
}
