//! Everything the client knows about the protocol crate's envelope, in one place: how a line
//! is decoded and encoded, how a request is checked against the experimental opt-in, and how
//! a notification's thread and turn are found.

use codex_app_protocol::jsonrpc::{ErrorObject, ErrorResponse, Parts, TraceContext};
use codex_app_protocol::roundtrip::reencode;
use codex_app_protocol::{
    ClientMessage, ClientNotification, ClientRequest, RawJson, RequestId, Response, ServerNotification,
    TypedServerMessage,
};
use std::borrow::Cow;

use serde::Serialize;
use serde_json::value::RawValue;

use crate::error::{ClientError, DecodeReport};

/// A server line that did not decode.
pub(crate) struct Undecodable {
    pub report: DecodeReport,
    /// The id of a response (`result` or `error`, no `method`): its request fails with the
    /// report.
    pub response: Option<RequestId>,
}

/// Decodes one server line in one pass: requests and notifications by their method, a
/// response's `result` by the method of the request it answers (`method_of`; kept raw when
/// that gives `None`).
pub(crate) fn decode_server_line<M: AsRef<str>>(
    line: &str,
    number: u64,
    method_of: impl Fn(&RequestId) -> Option<M>,
) -> Result<TypedServerMessage, Box<Undecodable>> {
    TypedServerMessage::from_line_with(line, method_of).map_err(|e| {
        let response = Parts::parse(line)
            .ok()
            .filter(|p| p.method.is_none() && (p.result.is_some() || p.error.is_some()))
            .and_then(|p| p.id);
        Box::new(Undecodable { report: DecodeReport::of_line(number, line, &e), response })
    })
}

/// Whether a server line that did not decode is a request the client must still answer:
/// `Some(Some(id))` for a request with a valid id, `Some(None)` for one whose `id` is `null`
/// or not a valid id (JSON-RPC answers those with `"id": null`), `None` for anything else (a
/// notification, a response, a line that is not a JSON object).
pub(crate) fn undecodable_request(line: &str) -> Option<Option<RequestId>> {
    if let Ok(parts) = Parts::parse(line) {
        parts.method.as_ref()?;
        return match parts.id {
            Some(id) => Some(Some(id)),
            None if parts.null_id => Some(None),
            None => None,
        };
    }
    // The envelope itself did not read (an `id` of the wrong type, a `method` that is not a
    // string): a request if it has both members.
    let members: serde_json::Map<String, serde_json::Value> = serde_json::from_str(line).ok()?;
    (members.contains_key("method") && members.contains_key("id")).then_some(None)
}

/// What routes a line that did not decode: its method and the thread and turn its params
/// name (read from the raw JSON, whatever else in it is wrong).
pub(crate) struct RawRoute {
    pub method: Option<String>,
    pub key: RouteKey<'static>,
}

/// Reads the method and the route of a server line that did not decode as its type.
pub(crate) fn raw_route(line: &str) -> Option<RawRoute> {
    let parts = Parts::parse(line).ok()?;
    let key = parts.params.map(|p| raw_key(p.get())).unwrap_or_default();
    Some(RawRoute { method: parts.method.map(Cow::into_owned), key })
}

/// The line of a request, `{"id":..,"method":..,"params":..}`, from its params already
/// encoded (a retry sends the same params with a new id), written by the protocol crate's
/// encoder (as the request of a method the crate does not type: the params are sent as they
/// are); `params` is left out when it is `null` (methods without params).
pub(crate) fn request_line(id: &RequestId, method: &str, params: &RawValue) -> String {
    traced_request_line(id, method, params, None)
}

/// [`request_line`] with the envelope's `trace` when `trace` is given.
pub(crate) fn traced_request_line(
    id: &RequestId,
    method: &str,
    params: &RawValue,
    trace: Option<TraceContext>,
) -> String {
    let request = ClientRequest::Unrecognized {
        id: id.clone(),
        method: method.to_owned(),
        params: raw_params(params),
        trace: trace.map(Box::new),
    };
    ClientMessage::Request(request).to_line()
}

/// The line of a notification the client sends, written by the protocol crate's encoder.
pub(crate) fn notification_line<P: Serialize + ?Sized>(method: &str, params: &P) -> Result<String, serde_json::Error> {
    let params = serde_json::value::to_raw_value(params)?;
    let notification = ClientNotification::Unrecognized { method: method.to_owned(), params: raw_params(&params) };
    Ok(ClientMessage::Notification(notification).to_line())
}

/// `params` as the encoder takes them: `None` (not written) for `null`.
fn raw_params(params: &RawValue) -> Option<RawJson> {
    (params.get() != "null").then(|| RawJson::from(params.to_owned()))
}

/// The `initialized` notification.
pub(crate) fn initialized_line() -> String {
    ClientMessage::Notification(ClientNotification::Initialized {}).to_line()
}

/// A successful answer to a server request.
pub(crate) fn response_line(id: RequestId, result: &RawValue) -> String {
    ClientMessage::Response(Response { id, result: result.to_owned() }).to_line()
}

/// An error answer to a server request (`id: None`: a request whose id could not be read;
/// the line says `"id": null`, as JSON-RPC asks).
pub(crate) fn error_line(id: Option<RequestId>, error: ErrorObject) -> String {
    ClientMessage::Error(ErrorResponse { id, error }).to_line()
}

/// The server's descriptor of the experimental surface a request line uses
/// (`thread/start.dynamicTools`), or `None`. A line that does not decode as a client request
/// (a method newer than the crate) uses none that the crate knows of.
#[cfg(feature = "experimental")]
pub(crate) fn experimental_reason(line: &str) -> Option<codex_app_protocol::ExperimentalReason> {
    use codex_app_protocol::{ExperimentalApi, Message};
    match ClientMessage::from_line(line) {
        Ok(Message::Request(request)) => request.experimental_reason(),
        _ => None,
    }
}

/// The id of a turn (`Turn`, as `turn/start` and `turn/completed` carry it), read from its
/// JSON: a struct in most releases, a union of statuses in others (0.60.1), always with an `id`.
pub(crate) fn turn_id(turn: &impl Serialize) -> Option<String> {
    reencode(turn).ok()?.get("id")?.as_str().map(str::to_owned)
}

/// The failure of a completed turn (`status: "failed"`), read from its JSON (the type of a
/// turn differs between releases).
pub(crate) fn turn_failure(thread_id: &str, turn: &impl Serialize) -> Option<crate::error::TurnFailure> {
    let turn = reencode(turn).ok()?;
    if turn.get("status")?.as_str()? != "failed" {
        return None;
    }
    let message = turn.get("error").and_then(|e| e.get("message")).and_then(|m| m.as_str()).map(str::to_owned);
    let turn_id = turn.get("id").and_then(|i| i.as_str()).unwrap_or_default().to_owned();
    Some(crate::error::TurnFailure { thread_id: thread_id.to_owned(), turn_id, message, turn })
}

/// What codex reports while it retries: an `error` notification with `willRetry: true`, read
/// from its JSON (only the members every release with the notification has).
pub(crate) fn retrying(notification: &ServerNotification) -> Option<crate::events::Retrying> {
    if notification.method() != "error" {
        return None;
    }
    let value = reencode(notification).ok()?;
    let params = value.get("params")?;
    if params.get("willRetry").and_then(|w| w.as_bool()) != Some(true) {
        return None;
    }
    let text = |v: Option<&serde_json::Value>| v.and_then(|v| v.as_str()).map(str::to_owned);
    let error = params.get("error");
    let key = route_key(notification);
    Some(crate::events::Retrying {
        thread_id: key.thread.map(String::from).unwrap_or_default(),
        turn_id: key.turn.map(String::from).unwrap_or_default(),
        message: text(error.and_then(|e| e.get("message"))).unwrap_or_default(),
        details: text(error.and_then(|e| e.get("additionalDetails"))),
        error_info: error.and_then(|e| e.get("codexErrorInfo")).filter(|i| !i.is_null()).cloned(),
    })
}

/// Whether a `thread/status/changed` notification says the thread is active (`status.type`).
pub(crate) fn thread_active(notification: &codex_app_protocol::ServerNotification) -> bool {
    let value = reencode(notification).unwrap_or_default();
    value.pointer("/params/status/type").and_then(|t| t.as_str()) == Some("active")
}

/// `result.thread.id` of an answer (`thread/start`, `thread/resume`, ...), and whether it lists
/// turns (`result.thread.turns`).
pub(crate) fn result_thread(result: &codex_app_protocol::ClientResponse) -> Option<(String, bool)> {
    let value = match result {
        codex_app_protocol::ClientResponse::Unrecognized(raw) => raw.to_value().ok()?,
        typed => reencode(typed).ok()?,
    };
    let turns = value.pointer("/thread/turns").and_then(|t| t.as_array()).is_some_and(|t| !t.is_empty());
    Some((value.pointer("/thread/id")?.as_str()?.to_owned(), turns))
}

/// A result received by method name, decoded into the release's response type of `M`.
pub(crate) fn result<M: codex_app_protocol::Request>(value: serde_json::Value) -> Result<M::Response, ClientError> {
    serde_json::from_value(value).map_err(|e| ClientError::Decode(DecodeReport::result(M::METHOD, &e)))
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

// ---------------------------------------------------------------------------------------
// Where a notification belongs: its `params.threadId` and `params.turnId` (or
// `params.turn.id`), read through the accessors the generator writes for every notification
// type. A method this crate does not know keeps its params as exact text: those members are
// read from it.

/// The thread and turn a notification names, borrowed from it where it can be.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub(crate) struct RouteKey<'a> {
    pub thread: Option<Cow<'a, str>>,
    pub turn: Option<Cow<'a, str>>,
    /// `params.item.id` (item lifecycle notifications).
    pub item: Option<Cow<'a, str>>,
}

/// Finds the thread and turn of a notification.
pub(crate) fn route_key(notification: &ServerNotification) -> RouteKey<'_> {
    match notification {
        ServerNotification::Unrecognized { params, .. } => {
            params.as_ref().map(|p| raw_key(p.get())).unwrap_or_default()
        }
        known => RouteKey {
            thread: known.thread_id().map(Cow::Borrowed),
            turn: known.turn_id().map(Cow::Borrowed),
            item: known.item_id().map(Cow::Borrowed),
        },
    }
}

/// The route of raw params, by the members that route every typed notification.
fn raw_key(params: &str) -> RouteKey<'static> {
    let route = codex_app_protocol::jsonrpc::RawRoute::of_params(params);
    RouteKey {
        thread: route.thread.map(Cow::Owned),
        turn: route.turn.map(Cow::Owned),
        item: route.item.map(Cow::Owned),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use codex_app_protocol::Message;

    fn key(line: &str) -> RouteKey<'static> {
        let owned = |s: Option<Cow<'_, str>>| s.map(|s| Cow::Owned(s.into_owned()));
        match decode_server_line(line, 1, |_| None::<&str>).ok().unwrap() {
            Message::Notification(n) => {
                let key = route_key(&n);
                RouteKey { thread: owned(key.thread), turn: owned(key.turn), item: owned(key.item) }
            }
            other => panic!("not a notification: {other:?}"),
        }
    }

    #[test]
    fn route_keys_of_notifications() {
        let delta = r#"{"method":"item/commandExecution/outputDelta","params":{"threadId":"t","turnId":"u","itemId":"c","delta":"x"},"emittedAtMs":0}"#;
        assert_eq!(key(delta), RouteKey { thread: Some("t".into()), turn: Some("u".into()), item: None });
        let started = r#"{"method":"item/started","params":{"threadId":"t","turnId":"u","startedAtMs":1,"item":{"type":"agentMessage","id":"a","text":""}}}"#;
        assert_eq!(key(started), RouteKey { thread: Some("t".into()), turn: Some("u".into()), item: Some("a".into()) });
        let unknown_item = r#"{"method":"item/started","params":{"threadId":"t","turnId":"u","startedAtMs":1,"item":{"type":"someFutureItem","id":"f"}}}"#;
        assert_eq!(
            key(unknown_item),
            RouteKey { thread: Some("t".into()), turn: Some("u".into()), item: Some("f".into()) }
        );
        let completed = r#"{"method":"turn/completed","params":{"threadId":"t","turn":{"id":"u","items":[],"status":"completed","error":null}}}"#;
        assert_eq!(key(completed), RouteKey { thread: Some("t".into()), turn: Some("u".into()), item: None });
        let warning = r#"{"method":"warning","params":{"threadId":"t","message":"m"}}"#;
        assert_eq!(key(warning), RouteKey { thread: Some("t".into()), turn: None, item: None });
        let unknown = r#"{"method":"some/future","params":{"threadId":"t","turnId":"u","deep":{"turnId":"no"}}}"#;
        assert_eq!(key(unknown), RouteKey { thread: Some("t".into()), turn: Some("u".into()), item: None });
        let item = r#"{"method":"some/future","params":{"threadId":"t","turnId":"u","item":{"type":"x","id":"i"}}}"#;
        assert_eq!(key(item), RouteKey { thread: Some("t".into()), turn: Some("u".into()), item: Some("i".into()) });
        let odd = r#"{"method":"some/future","params":{"threadId":7,"turn":{"id":"u"},"item":null}}"#;
        assert_eq!(key(odd), RouteKey { thread: None, turn: Some("u".into()), item: None });
        let none = r#"{"method":"some/future"}"#;
        assert_eq!(key(none), RouteKey::default());
    }

    #[test]
    fn request_lines() {
        let id = RequestId::Integer(3);
        let raw = |text: &str| RawValue::from_string(text.to_owned()).unwrap();
        assert_eq!(request_line(&id, "a/b", &raw("null")), r#"{"id":3,"method":"a/b"}"#);
        assert_eq!(request_line(&id, "a/b", &raw(r#"{"x":1}"#)), r#"{"id":3,"method":"a/b","params":{"x":1}}"#);
        assert_eq!(request_line(&id, "thread/start", &raw("{}")), r#"{"id":3,"method":"thread/start","params":{}}"#);
        let trace = TraceContext { traceparent: Some("00-1-2-01".into()), tracestate: Some("k=v".into()) };
        assert_eq!(
            traced_request_line(&id, "a/b", &raw("{}"), Some(trace)),
            r#"{"id":3,"method":"a/b","params":{},"trace":{"traceparent":"00-1-2-01","tracestate":"k=v"}}"#
        );
        assert_eq!(notification_line("initialized", &()).unwrap(), r#"{"method":"initialized"}"#);
        assert_eq!(initialized_line(), r#"{"method":"initialized"}"#);
        assert_eq!(
            error_line(None, ErrorObject::new(-32600, "x")),
            r#"{"id":null,"error":{"code":-32600,"message":"x"}}"#
        );
    }

    #[test]
    fn undecodable_requests_are_told_from_other_lines() {
        let id = |n| Some(Some(RequestId::Integer(n)));
        assert_eq!(undecodable_request(r#"{"id":4,"method":"item/tool/call","params":{"bad":1}}"#), id(4));
        assert_eq!(undecodable_request(r#"{"id":null,"method":"item/tool/call","params":{}}"#), Some(None));
        assert_eq!(undecodable_request(r#"{"id":{"x":1},"method":"item/tool/call"}"#), Some(None));
        assert_eq!(undecodable_request(r#"{"id":1.5,"method":"m"}"#), Some(None));
        assert_eq!(undecodable_request(r#"{"method":"turn/completed","params":{"turn":5}}"#), None);
        assert_eq!(undecodable_request(r#"{"id":3,"result":{"x":"y"}}"#), None);
        assert_eq!(undecodable_request("not json"), None);
    }

    #[test]
    fn raw_routes_of_lines_that_do_not_decode() {
        let route =
            raw_route(r#"{"method":"turn/completed","params":{"threadId":"t","turn":{"id":"u","items":7}}}"#).unwrap();
        assert_eq!(route.method.as_deref(), Some("turn/completed"));
        assert_eq!(route.key, RouteKey { thread: Some("t".into()), turn: Some("u".into()), item: None });
        assert!(raw_route("[1,2").is_none());
    }
}
