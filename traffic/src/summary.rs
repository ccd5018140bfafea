//! A compact typed summary of a transcript: one line per message with its direction, method,
//! typed variant and a few key fields. Snapshots of it make a codex upgrade reviewable: a new
//! notification, a renamed variant or a changed status shows as a one-line diff.
//!
//! ```text
//! c2s request      thread/start    ClientRequest::ThreadStart id=2 approvalPolicy=untrusted
//! s2c response     thread/start    ClientResponse::ThreadStart id=2 thread.status=idle
//! s2c notification item/started    ServerNotification::ItemStarted item=commandExecution status=inProgress
//! ```
//!
//! The summary is canonical (`canonical`): what the server's timing changes from one run to
//! the next (a response's place among the notifications written at the same time, a repeated
//! notification) is put in one form, so re-recording with the same codex gives the same
//! summary.
//!
//! The variant comes from the typed decode (reported by the protocol crate's generated walk,
//! [`codex_app_protocol::inspect`]); both directions go through one function, generic over
//! the protocol crate's [`codex_app_protocol::side::Side`]. The key fields are read from the message's JSON
//! by the table `KEYS` (method, member path), so this module works with the crate generated
//! from any codex release: a method or member a release does not have is simply not shown.

use codex_app_protocol::framing::excerpt;
use std::collections::HashMap;
use std::fmt::Write as _;

use codex_app_protocol::inspect::{Inspect, Step};
use codex_app_protocol::jsonrpc::Parts;
use codex_app_protocol::side::{self, MessageOf, MethodEnum, ResultEnum, Side};
use codex_app_protocol::{Message, RequestId};
use serde_json::Value;

use super::transcript::{Dir, Entry};
use super::unrecognized;

/// `Type::Variant` of a decoded value at `root` in its message, from the walk the protocol
/// crate generates (`ClientRequest::ThreadStart`, `ClientResponse::Unrecognized`).
fn variant_name<T: Inspect + ?Sized>(value: &T, root: &[Step<'_>]) -> String {
    let found = unrecognized::inspect(value, root, None);
    let root_path = codex_app_protocol::path::JsonPath::from_steps(root);
    match (found.root_variant, found.unrecognized.first()) {
        (Some((ty, rust)), _) => format!("{ty}::{rust}"),
        (None, Some((path, ty, _))) if *path == root_path => format!("{ty}::Unrecognized"),
        _ => "?".to_owned(),
    }
}

/// Which kind of message a key applies to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum On {
    /// A client request's or notification's params.
    ClientParams,
    /// A server request's or notification's params.
    ServerParams,
    /// The result of a client request (sent by the server).
    ClientResult,
    /// The result of a server request (sent by the client).
    ServerResult,
}

/// How a key's value is shown.
#[derive(Debug, Clone, Copy)]
enum Show {
    /// A string as it is, a tagged object by its `type`, anything else as compact JSON.
    Plain,
    /// A string quoted and cut to 40 characters.
    Text,
    /// The length of an array.
    Len,
    /// The key's name alone, when the member is present and not `null`.
    Flag,
    /// A boolean that is `false` when absent.
    Bool,
    /// Each element of an array of user inputs: `text="..."`, or `input=<type>`.
    Inputs,
    /// A thread item: `item=<type>` and its `status`, `exitCode`, `tool` and `text`.
    Item,
}

/// The key fields shown per method: (kind of message, method, label, JSON pointer, display).
/// Members that are absent or `null` are left out (except [`Show::Bool`]).
const KEYS: &[(On, &str, &str, &str, Show)] = &[
    (On::ClientParams, "initialize", "client", "/clientInfo/name", Show::Plain),
    (On::ClientParams, "initialize", "experimentalApi", "/capabilities/experimentalApi", Show::Bool),
    (On::ClientParams, "thread/start", "approvalPolicy", "/approvalPolicy", Show::Plain),
    (On::ClientParams, "thread/start", "dynamicTools", "/dynamicTools", Show::Len),
    (On::ClientParams, "thread/start", "mockExperimentalField", "/mockExperimentalField", Show::Flag),
    (On::ClientParams, "turn/start", "input", "/input", Show::Inputs),
    (On::ClientParams, "thread/name/set", "name", "/name", Show::Text),
    (On::ServerParams, "item/started", "item", "/item", Show::Item),
    (On::ServerParams, "item/completed", "item", "/item", Show::Item),
    (On::ServerParams, "turn/started", "turn.status", "/turn/status", Show::Plain),
    (On::ServerParams, "turn/completed", "turn.status", "/turn/status", Show::Plain),
    (On::ServerParams, "turn/completed", "error", "/turn/error/message", Show::Text),
    (On::ServerParams, "thread/status/changed", "status", "/status", Show::Plain),
    (On::ServerParams, "item/agentMessage/delta", "delta", "/delta", Show::Text),
    (On::ServerParams, "item/commandExecution/outputDelta", "delta", "/delta", Show::Text),
    (On::ServerParams, "item/reasoning/summaryTextDelta", "summaryIndex", "/summaryIndex", Show::Plain),
    (On::ServerParams, "item/reasoning/summaryTextDelta", "delta", "/delta", Show::Text),
    (On::ServerParams, "error", "willRetry", "/willRetry", Show::Plain),
    (On::ServerParams, "error", "message", "/error/message", Show::Text),
    (On::ServerParams, "remoteControl/status/changed", "status", "/status", Show::Plain),
    (On::ServerParams, "warning", "message", "/message", Show::Text),
    (On::ServerParams, "configWarning", "summary", "/summary", Show::Text),
    (On::ServerParams, "item/commandExecution/requestApproval", "command", "/command", Show::Text),
    (On::ServerParams, "item/tool/call", "tool", "/tool", Show::Plain),
    (On::ServerParams, "item/tool/call", "arguments", "/arguments", Show::Plain),
    (On::ClientResult, "thread/start", "thread.status", "/thread/status", Show::Plain),
    (On::ClientResult, "thread/read", "thread.status", "/thread/status", Show::Plain),
    (On::ClientResult, "thread/read", "turns", "/thread/turns", Show::Len),
    (On::ClientResult, "thread/list", "threads", "/data", Show::Len),
    (On::ClientResult, "turn/start", "turn.status", "/turn/status", Show::Plain),
    (On::ClientResult, "model/list", "models", "/data", Show::Len),
    (On::ServerResult, "item/commandExecution/requestApproval", "decision", "/decision", Show::Plain),
    (On::ServerResult, "item/tool/call", "success", "/success", Show::Plain),
    (On::ServerResult, "item/tool/call", "contentItems", "/contentItems", Show::Len),
];

/// The key fields of a message of `method` whose params or result is `raw`.
fn keys(on: On, method: &str, raw: Option<&serde_json::value::RawValue>) -> String {
    let value: Value = raw.and_then(|r| serde_json::from_str(r.get()).ok()).unwrap_or(Value::Null);
    let mut out = String::new();
    for &(_, _, label, pointer, show) in KEYS.iter().filter(|k| k.0 == on && k.1 == method) {
        let found = value.pointer(pointer).filter(|v| !v.is_null());
        match (show, found) {
            (Show::Bool, found) => {
                let _ = write!(out, " {label}={}", found.and_then(Value::as_bool).unwrap_or(false));
            }
            (_, None) => {}
            (Show::Plain, Some(v)) => {
                let _ = write!(out, " {label}={}", plain(v));
            }
            (Show::Text, Some(v)) => {
                let _ = write!(out, " {label}={}", quoted(v.as_str().unwrap_or(&v.to_string())));
            }
            (Show::Len, Some(v)) => {
                let _ = write!(out, " {label}={}", v.as_array().map_or(0, Vec::len));
            }
            (Show::Flag, Some(_)) => {
                let _ = write!(out, " {label}");
            }
            (Show::Inputs, Some(v)) => {
                for input in v.as_array().into_iter().flatten() {
                    match input.get("text").and_then(Value::as_str) {
                        Some(text) => {
                            let _ = write!(out, " text={}", quoted(text));
                        }
                        None => {
                            let _ = write!(out, " {label}={}", plain(&input["type"]));
                        }
                    }
                }
            }
            (Show::Item, Some(item)) => {
                let _ = write!(out, " {label}={}", plain(&item["type"]));
                for member in ["status", "exitCode", "tool"] {
                    if let Some(v) = item.get(member).filter(|v| !v.is_null()) {
                        let _ = write!(out, " {member}={}", plain(v));
                    }
                }
                if let Some(text) = item.get("text").and_then(Value::as_str) {
                    let _ = write!(out, " text={}", quoted(text));
                }
            }
        }
    }
    out
}

/// A string as it is, a tagged object (`{"type": "idle"}`) by its tag, else compact JSON.
fn plain(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Object(o) if o.get("type").is_some_and(Value::is_string) => {
            o["type"].as_str().unwrap_or_default().to_owned()
        }
        other => other.to_string(),
    }
}

fn id_text(id: &RequestId) -> String {
    serde_json::to_string(id).unwrap_or_else(|_| format!("{id:?}"))
}

fn quoted(s: &str) -> String {
    serde_json::to_string(&excerpt(s, 40)).unwrap_or_default()
}

/// Summarizes every entry, one line each.
pub fn summarize(entries: &[Entry]) -> String {
    let mut pending: [HashMap<String, String>; 2] = Default::default();
    let slot = |dir: Dir| if dir == Dir::C2s { 0 } else { 1 };
    let mut lines = Vec::new();
    for e in entries {
        let mut line = format!("{} ", e.dir);
        let parts = match Parts::parse(&e.line) {
            Ok(parts) => parts,
            Err(_) if serde_json::from_str::<serde_json::Value>(&e.line).is_err() => {
                line.push_str(&format!("not-json     {}", quoted(&e.line)));
                lines.push(Line { dir: e.dir, response: false, text: line, bad: e.bad });
                continue;
            }
            Err(err) => {
                line.push_str(&format!("not-a-message {err}"));
                lines.push(Line { dir: e.dir, response: false, text: line, bad: e.bad });
                continue;
            }
        };
        if let (Some(id), Some(method), None, None) = (&parts.id, &parts.method, parts.result, parts.error) {
            pending[slot(e.dir)].insert(id_text(id), method.to_string());
        }
        let response = parts.method.is_none() && (parts.result.is_some() || parts.error.is_some());
        let method_of = |pending: &mut [HashMap<String, String>; 2], id: &RequestId| {
            pending[slot(e.dir.opposite())].remove(&id_text(id)).unwrap_or_else(|| "?".to_owned())
        };
        let text = match e.dir {
            Dir::C2s => line_text::<side::Client>(parts, &mut |id| method_of(&mut pending, id)),
            Dir::S2c => line_text::<side::Server>(parts, &mut |id| method_of(&mut pending, id)),
        };
        line.push_str(&text);
        lines.push(Line { dir: e.dir, response, text: line, bad: e.bad });
    }
    let mut out = String::new();
    for line in canonical(lines) {
        push(&mut out, line.text, line.bad);
    }
    out
}

/// One line of the summary, before [`canonical`] orders it.
struct Line {
    dir: Dir,
    /// A response or error response (answers a request).
    response: bool,
    text: String,
    bad: bool,
}

/// The summary in a form that two recordings of the same scenario with the same codex share,
/// although the server's timing differs between runs. Nothing is dropped but repeats:
/// - within a burst of server messages (between two lines of the client), the responses come
///   first, then the notifications and server requests in the order they came: the server
///   writes a response and the notifications of other tasks in whichever order they finish
///   (a `warning` before or after the `turn/start` response);
/// - a run of identical server messages (same summary line) is shown once: the server may
///   repeat a notification whose content did not change (`thread/status/changed` to the same
///   status, once or twice).
///
/// The order of the client's lines, of the notifications among themselves and every line's
/// content are compared as they are.
fn canonical(lines: Vec<Line>) -> Vec<Line> {
    let mut out: Vec<Line> = Vec::new();
    let mut burst: Vec<Line> = Vec::new();
    let flush = |burst: &mut Vec<Line>, out: &mut Vec<Line>| {
        let (responses, others): (Vec<Line>, Vec<Line>) = std::mem::take(burst).into_iter().partition(|l| l.response);
        let start = out.len();
        for line in responses.into_iter().chain(others) {
            let repeat = out.len() > start
                && out.last().is_some_and(|last: &Line| last.text == line.text && last.bad == line.bad);
            if !repeat {
                out.push(line);
            }
        }
    };
    for line in lines {
        if line.dir == Dir::S2c {
            burst.push(line);
        } else {
            flush(&mut burst, &mut out);
            out.push(line);
        }
    }
    flush(&mut burst, &mut out);
    out
}

/// The summary of a message sent by side `S`; `method_of` gives the method of the request a
/// response answers.
fn line_text<S: Side>(parts: Parts<'_>, method_of: &mut dyn FnMut(&RequestId) -> String) -> String
where
    S::Request: Inspect,
    S::Notification: Inspect,
    S::Response: Inspect,
{
    let client = S::NAME == "client";
    let (params_on, result_on) =
        if client { (On::ClientParams, On::ServerResult) } else { (On::ServerParams, On::ClientResult) };
    let (params, result) = (parts.params, parts.result);
    match MessageOf::<S>::from_envelope(parts) {
        Err(err) => format!("undecodable  {}", err),
        Ok(Message::Request(r)) => format!(
            "request      {:<40} {} id={}{}",
            r.method(),
            variant_name(&r, &[]),
            r.id().map(id_text).unwrap_or_default(),
            keys(params_on, r.method(), params)
        ),
        Ok(Message::Notification(n)) => {
            format!("notification {:<40} {}{}", n.method(), variant_name(&n, &[]), keys(params_on, n.method(), params))
        }
        Ok(Message::Response(resp)) => {
            let method = method_of(&resp.id);
            match S::Response::decode(&method, &resp.result) {
                Ok(t) => format!(
                    "response     {method:<40} {} id={}{}",
                    variant_name(&t, &[Step::Key("result")]),
                    id_text(&resp.id),
                    keys(result_on, &method, result)
                ),
                Err(err) => format!("response     {method:<40} undecodable: {err}"),
            }
        }
        Ok(Message::Error(err)) => error_text(err, method_of),
    }
}

fn push(out: &mut String, line: String, bad: bool) {
    out.push_str(line.trim_end());
    if bad {
        out.push_str(" [bad]");
    }
    out.push('\n');
}

fn error_text(err: codex_app_protocol::ErrorResponse, method_of: &mut dyn FnMut(&RequestId) -> String) -> String {
    let method = err.id.as_ref().map(method_of).unwrap_or_else(|| "?".to_owned());
    let id = err.id.as_ref().map(id_text).unwrap_or_else(|| "none".to_owned());
    format!(
        "error        {method:<40} ErrorResponse id={id} code={} message={}",
        err.error.code,
        quoted(&err.error.message)
    )
}
