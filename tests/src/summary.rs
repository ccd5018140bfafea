//! A compact typed summary of a transcript: one line per message with its direction, method,
//! typed variant and a few key fields. Snapshots of it make a codex upgrade reviewable: a new
//! notification, a renamed variant or a changed status shows as a one-line diff.
//!
//! ```text
//!    6 c2s request      thread/start    ClientRequest::ThreadStart id=2 approvalPolicy=Untrusted
//!    7 s2c response     thread/start    ClientResponse::ThreadStart id=2 thread.status=Idle
//!   12 s2c notification item/started    ServerNotification::ItemStarted item=CommandExecution status=InProgress
//! ```

use std::collections::HashMap;
use std::fmt::{Debug, Write as _};

use codex_app_protocol::jsonrpc::Parts;
use codex_app_protocol::{
    ClientMessage, ClientRequest, ClientResponse, Message, RequestId, ServerMessage, ServerNotification, ServerRequest,
    ServerResponse, ThreadItem, Turn, UserInput,
};

use crate::drift::truncate;
use crate::transcript::{Dir, Entry};

/// The leading variant name of a value's `Debug` text (`ThreadStart` for
/// `ThreadStart { id: .., params: .. }`).
pub fn variant_name(value: &impl Debug) -> String {
    let text = format!("{value:?}");
    let end = text.find(|c: char| !(c.is_alphanumeric() || c == '_')).unwrap_or(text.len());
    text[..end].to_owned()
}

fn id_text(id: &RequestId) -> String {
    serde_json::to_string(id).unwrap_or_else(|_| format!("{id:?}"))
}

fn quoted(s: &str) -> String {
    serde_json::to_string(&truncate(s, 40)).unwrap_or_default()
}

/// Summarizes every entry, one line each.
pub fn summarize(entries: &[Entry]) -> String {
    let mut pending: [HashMap<String, String>; 2] = Default::default();
    let slot = |dir: Dir| if dir == Dir::C2s { 0 } else { 1 };
    let mut out = String::new();
    for e in entries {
        let mut line = format!("{:>4} {} ", e.number, e.dir);
        let parts = match Parts::parse(&e.line) {
            Ok(parts) => parts,
            Err(_) if serde_json::from_str::<serde_json::Value>(&e.line).is_err() => {
                line.push_str(&format!("not-json     {}", quoted(&e.line)));
                push(&mut out, line, e.bad);
                continue;
            }
            Err(err) => {
                line.push_str(&format!("not-a-message {err}"));
                push(&mut out, line, e.bad);
                continue;
            }
        };
        if let (Some(id), Some(method), None, None) = (&parts.id, &parts.method, parts.result, parts.error) {
            pending[slot(e.dir)].insert(id_text(id), method.to_string());
        }
        let method_of = |pending: &mut [HashMap<String, String>; 2], id: &RequestId| {
            pending[slot(e.dir.opposite())].remove(&id_text(id)).unwrap_or_else(|| "?".to_owned())
        };
        let text = match e.dir {
            Dir::C2s => match ClientMessage::from_envelope(parts) {
                Err(err) => format!("undecodable  {}", err),
                Ok(Message::Request(r)) => {
                    format!("request      {:<40} ClientRequest::{} id={}{}", r.method(), variant_name(&r), id_text(r.id()), client_request_keys(&r))
                }
                Ok(Message::Notification(n)) => {
                    format!("notification {:<40} ClientNotification::{}", n.method(), variant_name(&n))
                }
                Ok(Message::Response(resp)) => {
                    let method = method_of(&mut pending, &resp.id);
                    match ServerResponse::decode(&method, &resp.result) {
                        Ok(t) => format!(
                            "response     {method:<40} ServerResponse::{} id={}{}",
                            variant_name(&t),
                            id_text(&resp.id),
                            server_response_keys(&t)
                        ),
                        Err(err) => format!("response     {method:<40} undecodable: {err}"),
                    }
                }
                Ok(Message::Error(err)) => error_text(err, |id| method_of(&mut pending, id)),
            },
            Dir::S2c => match ServerMessage::from_envelope(parts) {
                Err(err) => format!("undecodable  {}", err),
                Ok(Message::Request(r)) => {
                    format!("request      {:<40} ServerRequest::{} id={}{}", r.method(), variant_name(&r), id_text(r.id()), server_request_keys(&r))
                }
                Ok(Message::Notification(n)) => {
                    format!("notification {:<40} ServerNotification::{}{}", n.method(), variant_name(&n), notification_keys(&n))
                }
                Ok(Message::Response(resp)) => {
                    let method = method_of(&mut pending, &resp.id);
                    match ClientResponse::decode(&method, &resp.result) {
                        Ok(t) => format!(
                            "response     {method:<40} ClientResponse::{} id={}{}",
                            variant_name(&t),
                            id_text(&resp.id),
                            client_response_keys(&t)
                        ),
                        Err(err) => format!("response     {method:<40} undecodable: {err}"),
                    }
                }
                Ok(Message::Error(err)) => error_text(err, |id| method_of(&mut pending, id)),
            },
        };
        line.push_str(&text);
        push(&mut out, line, e.bad);
    }
    out
}

fn push(out: &mut String, line: String, bad: bool) {
    out.push_str(line.trim_end());
    if bad {
        out.push_str(" [bad]");
    }
    out.push('\n');
}

fn error_text(err: codex_app_protocol::ErrorResponse, mut method_of: impl FnMut(&RequestId) -> String) -> String {
    let method = err.id.as_ref().map(&mut method_of).unwrap_or_else(|| "?".to_owned());
    let id = err.id.as_ref().map(id_text).unwrap_or_else(|| "none".to_owned());
    format!("error        {method:<40} ErrorResponse id={id} code={} message={}", err.error.code, quoted(&err.error.message))
}

fn client_request_keys(r: &ClientRequest) -> String {
    let mut k = String::new();
    match r {
        ClientRequest::Initialize { params, .. } => {
            let experimental = params.capabilities.as_ref().and_then(|c| c.experimental_api).unwrap_or(false);
            let _ = write!(k, " client={} experimentalApi={experimental}", params.client_info.name);
        }
        ClientRequest::ThreadStart { params, .. } => {
            if let Some(policy) = &params.approval_policy {
                let _ = write!(k, " approvalPolicy={}", variant_name(policy));
            }
            if let Some(tools) = &params.dynamic_tools {
                let _ = write!(k, " dynamicTools={}", tools.len());
            }
            if params.mock_experimental_field.is_some() {
                k.push_str(" mockExperimentalField");
            }
        }
        ClientRequest::TurnStart { params, .. } => {
            for input in &params.input {
                match input {
                    UserInput::Text(t) => {
                        let _ = write!(k, " text={}", quoted(&t.text));
                    }
                    other => {
                        let _ = write!(k, " input={}", variant_name(other));
                    }
                }
            }
        }
        ClientRequest::ThreadNameSet { params, .. } => {
            let _ = write!(k, " name={}", quoted(&params.name));
        }
        _ => {}
    }
    k
}

fn thread_item_keys(item: &ThreadItem) -> String {
    let mut k = format!(" item={}", variant_name(item));
    match item {
        ThreadItem::CommandExecution(c) => {
            let _ = write!(k, " status={}", variant_name(&c.status));
            if let Some(code) = c.exit_code {
                let _ = write!(k, " exitCode={code}");
            }
        }
        ThreadItem::DynamicToolCall(t) => {
            let _ = write!(k, " tool={} status={}", t.tool, variant_name(&t.status));
        }
        ThreadItem::AgentMessage(m) => {
            let _ = write!(k, " text={}", quoted(&m.text));
        }
        _ => {}
    }
    k
}

fn notification_keys(n: &ServerNotification) -> String {
    match n {
        ServerNotification::ItemStarted { params, .. } => thread_item_keys(&params.item),
        ServerNotification::ItemCompleted { params, .. } => thread_item_keys(&params.item),
        ServerNotification::TurnStarted { params, .. } => turn_keys(&params.turn),
        ServerNotification::TurnCompleted { params, .. } => turn_keys(&params.turn),
        ServerNotification::ThreadStatusChanged { params, .. } => format!(" status={}", variant_name(&params.status)),
        ServerNotification::ItemAgentMessageDelta { params, .. } => format!(" delta={}", quoted(&params.delta)),
        ServerNotification::ItemCommandExecutionOutputDelta { params, .. } => format!(" delta={}", quoted(&params.delta)),
        ServerNotification::ItemReasoningSummaryTextDelta { params, .. } => {
            format!(" summaryIndex={} delta={}", params.summary_index, quoted(&params.delta))
        }
        ServerNotification::Error { params, .. } => {
            format!(" willRetry={} message={}", params.will_retry, quoted(&params.error.message))
        }
        ServerNotification::RemoteControlStatusChanged { params, .. } => format!(" status={}", variant_name(&params.status)),
        ServerNotification::Warning { params, .. } => format!(" message={}", quoted(&params.message)),
        ServerNotification::ConfigWarning { params, .. } => format!(" summary={}", quoted(&params.summary)),
        _ => String::new(),
    }
}

fn turn_keys(turn: &Turn) -> String {
    let mut k = format!(" turn.status={}", variant_name(&turn.status));
    if let Some(error) = &turn.error {
        let _ = write!(k, " error={}", quoted(&error.message));
    }
    k
}

fn server_request_keys(r: &ServerRequest) -> String {
    match r {
        ServerRequest::ItemCommandExecutionRequestApproval { params, .. } => {
            format!(" command={}", quoted(params.command.as_deref().unwrap_or("")))
        }
        ServerRequest::ItemToolCall { params, .. } => format!(" tool={} arguments={}", params.tool, params.arguments),
        _ => String::new(),
    }
}

fn client_response_keys(r: &ClientResponse) -> String {
    match r {
        ClientResponse::ThreadStart(t) => format!(" thread.status={}", variant_name(&t.thread.status)),
        ClientResponse::ThreadRead(t) => format!(" thread.status={} turns={}", variant_name(&t.thread.status), t.thread.turns.len()),
        ClientResponse::ThreadList(t) => format!(" threads={}", t.data.len()),
        ClientResponse::TurnStart(t) => format!(" turn.status={}", variant_name(&t.turn.status)),
        ClientResponse::ModelList(m) => format!(" models={}", m.data.len()),
        _ => String::new(),
    }
}

fn server_response_keys(r: &ServerResponse) -> String {
    match r {
        ServerResponse::ItemCommandExecutionRequestApproval(a) => format!(" decision={}", variant_name(&a.decision)),
        ServerResponse::ItemToolCall(t) => format!(" success={} contentItems={}", t.success, t.content_items.len()),
        _ => String::new(),
    }
}
