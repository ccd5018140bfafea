//! Scripted scenarios against the real server.
//!
//! Each scenario gets its own mock and a fresh server and runs a short sequence of steps. The
//! client side is written as JSON and checked by the typed crate before it is sent
//! ([`AppServer::typed_line`]), so this file compiles whatever codex release the crate was
//! generated from: a scenario that no longer fits a new release fails at run time, naming the
//! method and the member, instead of breaking the build. The only raw lines are the
//! deliberately malformed ones of `protocol_errors` (marked `bad`) and two well-formed lines
//! the typed crate never writes (a request with `"jsonrpc": "2.0"`, and one with `"params": {}`
//! for a method without params).

use codex_app_protocol::framing::excerpt;
use std::time::Duration;

use anyhow::{bail, ensure, Context as _, Result};
use codex_app_mock::{ev, MockBody, MockServer, Outcome as MockOutcome};
use codex_app_protocol::jsonrpc::ErrorObject;
use serde_json::{json, Value};

use super::server::{AppServer, Outcome};

/// Per-wait timeout.
pub const T: Duration = Duration::from_secs(10);
/// Quiet period that ends a drain (late notifications after `turn/completed`).
const QUIET: Duration = Duration::from_millis(300);
/// How long to wait for `remoteControl/status/changed` after `initialize`; releases before
/// 0.16x do not send it.
const REMOTE_CONTROL_STATUS: Duration = Duration::from_secs(2);

type Scenario = fn(&mut Session) -> Result<()>;

/// Every scenario, in recording order.
pub const SCENARIOS: &[(&str, Scenario)] = &[
    ("lifecycle", lifecycle),
    ("streaming", streaming),
    ("reasoning", reasoning),
    ("command_approval", command_approval),
    ("dynamic_tool", dynamic_tool),
    ("upstream_failure", upstream_failure),
    ("protocol_errors", protocol_errors),
    ("interrupt", interrupt),
];

/// What a scenario works with.
pub struct Session {
    pub mock: MockServer,
    pub srv: AppServer,
    /// Observations worth printing (what the model saw, ...).
    pub notes: Vec<String>,
}

// ---------------------------------------------------------------------------------------
// Steps shared by the scenarios.

/// `turn/start` params with one text input and nothing else.
fn text_turn(thread_id: &str, text: &str) -> Value {
    json!({"input": [{"type": "text", "text": text}], "threadId": thread_id})
}

/// The string at `pointer` in `value`, or an error naming what was expected.
fn str_at<'a>(value: &'a Value, pointer: &str) -> Result<&'a str> {
    value.pointer(pointer).and_then(Value::as_str).with_context(|| format!("no string at {pointer} in {value}"))
}

fn expect_invalid_request(what: &str, outcome: Outcome) -> Result<()> {
    match outcome {
        Err(e) if e["code"] == ErrorObject::INVALID_REQUEST => Ok(()),
        Err(e) => bail!("{what}: expected error {}, got {e}", ErrorObject::INVALID_REQUEST),
        Ok(r) => bail!("{what}: expected an error, got the result {r}"),
    }
}

fn expect_result(what: &str, outcome: Outcome) -> Result<()> {
    match outcome {
        Ok(_) => Ok(()),
        Err(e) => bail!("{what}: expected a result, got error {e}"),
    }
}

impl Session {
    /// `initialize` + `initialized`; `experimental` opts into the experimental API.
    fn initialize(&mut self, experimental: bool) -> Result<()> {
        let mut params = json!({
            "clientInfo": {"name": "codex-recorder", "title": "Codex traffic recorder", "version": "0.1.0"},
        });
        if experimental {
            params["capabilities"] = json!({"experimentalApi": true});
        }
        self.srv.call_ok("initialize", params, T)?;
        self.srv.notify("initialized", None)?;
        // Sent on its own shortly after `initialize` (with any `configWarning`); waiting for
        // it keeps it from landing between later steps at random.
        let status = self.srv.wait_notification("remoteControl/status/changed", REMOTE_CONTROL_STATUS, |_| Some(()));
        if status.is_err() {
            self.notes.push(format!("no remoteControl/status/changed within {REMOTE_CONTROL_STATUS:?} of initialize"));
        }
        Ok(())
    }

    /// `thread/start`, then `thread/started`; returns the thread id.
    fn thread_start(&mut self, params: Value) -> Result<String> {
        let started = self.srv.call_ok("thread/start", params, T)?;
        let id = str_at(&started, "/thread/id")?.to_owned();
        self.srv.wait_notification("thread/started", T, |p| (p["thread"]["id"] == id.as_str()).then_some(()))?;
        Ok(id)
    }

    /// `turn/start` with one text input; returns the turn id.
    fn turn_start(&mut self, thread_id: &str, text: &str) -> Result<String> {
        let started = self.srv.call_ok("turn/start", text_turn(thread_id, text), T)?;
        Ok(str_at(&started, "/turn/id")?.to_owned())
    }

    /// Waits for `turn/completed` with `status` (its wire value), then reads late
    /// notifications until quiet. Returns the turn.
    fn turn_completed(&mut self, status: &str) -> Result<Value> {
        let turn = self.srv.wait_notification("turn/completed", T, |p| Some(p["turn"].clone()))?;
        self.srv.drain(QUIET, T);
        ensure!(turn["status"] == status, "turn ended with status {}, expected {status:?}", turn["status"]);
        Ok(turn)
    }

    /// One turn: the model calls `exec_command` (`call-<n>`), the client approves it, the
    /// model answers after seeing the output.
    fn approved_command_turn(&mut self, thread: &str, n: usize, cmd: &str, yield_ms: u64) -> Result<()> {
        let call_id = format!("call-{n}");
        // `login: false`: no login shell, so no output from the host's profile scripts.
        let args = json!({"cmd": cmd, "login": false, "yield_time_ms": yield_ms});
        let (first, second) = (format!("resp-{n}a"), format!("resp-{n}b"));
        self.mock.push_events(ev::tool_call(&first, &call_id, "exec_command", &args));
        self.mock.push_events(ev::assistant_message(&second, &format!("msg-{n}"), &["Done."]));

        self.turn_start(thread, &format!("Run `{cmd}`"))?;
        let (request, command) =
            self.srv.wait_server_request("item/commandExecution/requestApproval", T, |p| Some(p["command"].clone()))?;
        ensure!(command.as_str().is_some_and(|c| c.contains(cmd)), "approval asked for {command}, expected {cmd:?}");
        self.srv.respond(&request, json!({"decision": "accept"}))?;
        self.turn_completed("completed")?;

        let requests = self.mock.wait_for_requests(2 * n, T)?;
        let output = requests[2 * n - 1].function_output(&call_id).context("the model got no tool output")?;
        let note = format!("`{cmd}` -> model: {}", excerpt(&output.to_string(), 140));
        self.notes.push(note);
        Ok(())
    }

    /// Waits for `item/completed` of the command execution `call_id`; returns its status and
    /// exit code.
    fn command_completed(&mut self, call_id: &str) -> Result<(Value, Value)> {
        self.srv.wait_notification("item/completed", T, |p| {
            let item = &p["item"];
            (item["type"] == "commandExecution" && item["id"] == call_id)
                .then(|| (item["status"].clone(), item["exitCode"].clone()))
        })
    }
}

// ---------------------------------------------------------------------------------------
// Scenarios.

/// Handshake and thread lifecycle, model list and config.
fn lifecycle(s: &mut Session) -> Result<()> {
    s.initialize(false)?;
    let thread = s.thread_start(json!({}))?;
    let list = s.srv.call_ok("thread/list", json!({}), T)?;
    s.notes.push(format!("thread/list: {} threads", list["data"].as_array().map_or(0, Vec::len)));
    s.srv.call_ok("thread/read", json!({"threadId": thread}), T)?;
    s.srv.call_ok("thread/name/set", json!({"threadId": thread, "name": "recorded thread"}), T)?;
    match s.srv.call_checked("thread/archive", json!({"threadId": thread}), T)? {
        // codex sends `thread/archived` on its own after the response, racing the next
        // request's response: waited for here (the scenario has one thread), so that every
        // recording has the same order.
        Ok(_) => s.srv.wait_notification("thread/archived", T, |_| Some(()))?,
        // codex 0.151.0 to 0.158.0 refuse to archive a thread that has had no turn: nothing of it
        // is on disk yet (0.150.0 and 0.159.0 archive it). The refusal is that release's traffic.
        Err(e)
            if e["code"] == ErrorObject::INVALID_REQUEST
                && e["message"].as_str().is_some_and(|m| m.starts_with("no rollout found")) =>
        {
            s.notes.push(format!("thread/archive of a thread without turns: refused ({})", e["message"]));
        }
        Err(e) => bail!("thread/archive failed: {e}"),
    }
    let models = s.srv.call_ok("model/list", json!({}), T)?;
    s.notes.push(format!("model/list: {} models", models["data"].as_array().map_or(0, Vec::len)));
    s.srv.call_ok("config/read", json!({}), T)?;
    s.srv.drain(QUIET, T);
    Ok(())
}

/// Two turns, each an assistant message streamed in deltas.
fn streaming(s: &mut Session) -> Result<()> {
    s.mock.push_events(ev::assistant_message("resp-1", "msg-1", &["Hel", "lo ", "there"]));
    s.mock.push_events(ev::assistant_message("resp-2", "msg-2", &["Second ", "answer"]));
    s.initialize(false)?;
    let thread = s.thread_start(json!({}))?;
    s.turn_start(&thread, "Say hello")?;
    s.turn_completed("completed")?;
    s.turn_start(&thread, "Say something else")?;
    s.turn_completed("completed")?;

    let requests = s.mock.wait_for_requests(2, T)?;
    let tools = requests[0].tool_names().join(", ");
    s.notes.push(format!("tools offered to the model: {tools}"));
    Ok(())
}

/// A reasoning item with two summary parts streamed in deltas, then the answer.
fn reasoning(s: &mut Session) -> Result<()> {
    let mut body = vec![
        ev::created("resp-1"),
        ev::reasoning_added("rs-1"),
        ev::reasoning_summary_part_added("rs-1", 0),
        ev::reasoning_summary_delta("rs-1", 0, "Thinking about "),
        ev::reasoning_summary_delta("rs-1", 0, "the question"),
        ev::reasoning_summary_part_added("rs-1", 1),
        ev::reasoning_summary_delta("rs-1", 1, "Answering"),
        ev::reasoning_done("rs-1", &["Thinking about the question", "Answering"]),
    ];
    let answer = ev::assistant_message("resp-1", "msg-1", &["Forty", "-two"]);
    body.extend(answer.into_iter().skip(1)); // without its own `response.created`
    s.mock.push_events(body);
    s.initialize(false)?;
    let thread = s.thread_start(json!({}))?;
    s.turn_start(&thread, "Think, then answer")?;
    s.turn_completed("completed")?;
    Ok(())
}

/// `exec_command` under `approvalPolicy: "untrusted"`, each command approved: one that
/// succeeds (its second line streams as an output delta), one that fails (exit code 3), and
/// one that outlives its `yield_time_ms`, so its output delta and `item/completed` arrive
/// after `turn/completed`.
fn command_approval(s: &mut Session) -> Result<()> {
    s.initialize(false)?;
    let thread = s.thread_start(json!({"approvalPolicy": "untrusted"}))?;
    // Output that comes at once can beat the server's output streaming and then shows only
    // in `aggregatedOutput`, not as a delta; the sleeps make the deltas dependable.
    s.approved_command_turn(&thread, 1, "sleep 0.2; echo hello; sleep 0.2; echo world", 1000)?;
    let (status, code) = s.command_completed("call-1")?;
    ensure!(status == "completed" && code == 0, "call-1 ended {status} with exit code {code}");
    s.approved_command_turn(&thread, 2, "sleep 0.2; echo oops >&2; exit 3", 1000)?;
    let (status, code) = s.command_completed("call-2")?;
    ensure!(status == "failed" && code == 3, "call-2 ended {status} with exit code {code}");
    s.approved_command_turn(&thread, 3, "sleep 1; echo late", 100)?;
    s.command_completed("call-3")?;
    Ok(())
}

/// A dynamic tool (experimental API): the model calls it, the client answers `item/tool/call`.
fn dynamic_tool(s: &mut Session) -> Result<()> {
    let args = json!({"city": "Paris"});
    s.mock.push_events(ev::tool_call("resp-1", "call-weather", "lookup_weather", &args));
    s.mock.push_events(ev::assistant_message("resp-2", "msg-1", &["It is sunny in Paris."]));
    s.initialize(true)?;
    let tool = json!({
        "type": "function",
        "name": "lookup_weather",
        "description": "Current weather for a city.",
        "inputSchema": {"type": "object", "properties": {"city": {"type": "string"}},
                        "required": ["city"], "additionalProperties": false},
    });
    let thread = s.thread_start(json!({"dynamicTools": [tool]}))?;
    s.turn_start(&thread, "Weather in Paris?")?;
    let (request, arguments) = s.srv.wait_server_request("item/tool/call", T, |p| {
        (p["tool"] == "lookup_weather").then(|| p["arguments"].clone())
    })?;
    ensure!(arguments == args, "unexpected tool arguments: {arguments}");
    let answer = json!({"success": true, "contentItems": [{"type": "inputText", "text": "sunny, 24 C"}]});
    s.srv.respond(&request, answer)?;
    s.turn_completed("completed")?;

    let requests = s.mock.wait_for_requests(2, T)?;
    let tools = requests[0].tool_names().join(", ");
    s.notes.push(format!("tools offered to the model: {tools}"));
    let output = requests[1].function_output("call-weather").context("the model got no tool output")?;
    s.notes.push(format!("dynamic tool output sent to the model: {output}"));
    Ok(())
}

/// The model stream ends with `response.failed`: an `error` notification, a failed turn.
fn upstream_failure(s: &mut Session) -> Result<()> {
    let failed = ev::failed("resp-1", "server_error", "mock upstream failure");
    s.mock.push_events(vec![ev::created("resp-1"), failed]);
    s.initialize(false)?;
    let thread = s.thread_start(json!({}))?;
    s.turn_start(&thread, "This will fail")?;
    let message = s.srv.wait_notification("error", T, |p| Some(p["error"]["message"].clone()))?;
    s.notes.push(format!("error notification: {message}"));
    s.turn_completed("failed")?;
    Ok(())
}

/// What the server does with requests it must refuse and lines it cannot read.
fn protocol_errors(s: &mut Session) -> Result<()> {
    expect_invalid_request("before initialize", s.srv.call("thread/list", json!({}), T)?)?;
    s.initialize(false)?;
    let again = json!({"clientInfo": {"name": "again", "version": "0"}});
    expect_invalid_request("second initialize", s.srv.call("initialize", again, T)?)?;

    // Lines no conforming client writes: an unknown method, a param of the wrong type.
    s.srv.send_bad_line(r#"{"id":"unknown","method":"no/such/method","params":{}}"#)?;
    expect_invalid_request("unknown method", s.srv.wait_response(&json!("unknown"), T)?)?;
    s.srv.send_bad_line(r#"{"id":"bad-params","method":"thread/read","params":{"threadId":42}}"#)?;
    expect_invalid_request("invalid params", s.srv.wait_response(&json!("bad-params"), T)?)?;

    // Experimental use without the opt-in: typed (the crate is built with `experimental`).
    let field = json!({"mockExperimentalField": "x"});
    expect_invalid_request("experimental field", s.srv.call("thread/start", field, T)?)?;
    expect_invalid_request("experimental method", s.srv.call("mock/experimentalMethod", json!({}), T)?)?;

    // No reply to either; the next request still works.
    s.srv.send_bad_line("this is not JSON")?;
    // A member of the envelope given twice: codex does not read the message.
    s.srv.send_bad_line(r#"{"id":"twice","method":"thread/list","params":{},"params":{}}"#)?;
    // Accepted by the server and not drift: the typed crate drops `jsonrpc` by design.
    s.srv.send_raw_line(r#"{"jsonrpc":"2.0","id":"with-jsonrpc","method":"thread/list","params":{}}"#)?;
    expect_result("request with jsonrpc", s.srv.wait_response(&json!("with-jsonrpc"), T)?)?;
    let line = AppServer::typed_line(&json!({"id": "string-id", "method": "thread/list", "params": {}}), None)?;
    s.srv.send_raw_line(&line)?;
    expect_result("string id", s.srv.wait_response(&json!("string-id"), T)?)?;
    // Other clients write `"params": {}` for a method without params (the typed crate writes
    // none): codex answers it as it answers no params.
    s.srv.send_raw_line(r#"{"id":"empty-params","method":"configRequirements/read","params":{}}"#)?;
    expect_result("empty params of a method without params", s.srv.wait_response(&json!("empty-params"), T)?)?;
    s.srv.drain(QUIET, T);
    Ok(())
}

/// A turn whose model stream stays open is interrupted with `turn/interrupt`.
fn interrupt(s: &mut Session) -> Result<()> {
    s.mock.push(MockBody::Slow {
        head: vec![ev::created("resp-1"), ev::message_added("msg-1"), ev::text_delta("msg-1", "Working on it")],
        tail: vec![ev::message_done("msg-1", "Working on it"), ev::completed("resp-1")],
        max_hold: Duration::from_secs(15),
    });
    s.initialize(false)?;
    let thread = s.thread_start(json!({}))?;
    let turn = s.turn_start(&thread, "Take your time")?;
    // The turn is streaming once the first delta is out.
    s.srv.wait_notification("item/agentMessage/delta", T, |_| Some(()))?;
    s.srv.call_ok("turn/interrupt", json!({"threadId": thread, "turnId": turn}), T)?;
    s.turn_completed("interrupted")?;
    match s.mock.wait_for_outcome(0, T) {
        Ok(MockOutcome::ClientGone) => s.notes.push("model stream: closed by codex at the interrupt".to_owned()),
        Ok(outcome) => bail!("the model stream ended with {outcome:?}, expected the client to hang up"),
        // codex 0.153.0 and older end the turn but leave the model's stream open (0.154.0 and
        // later close it); the mock ends it with the session. The wire is the same.
        Err(_) if s.mock.requests().first().is_some_and(|r| r.outcome == MockOutcome::Streaming) => {
            s.notes.push(format!("model stream: still open {T:?} after the interrupted turn ended"));
        }
        Err(e) => return Err(e),
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use codex_app_protocol::ClientMessage;

    use super::*;

    // `initialize` is in the schema of every codex release, so these hold after any regen.
    fn initialize(client_info: Value) -> Value {
        json!({"id": 1, "method": "initialize", "params": {"clientInfo": client_info}})
    }

    #[test]
    fn a_message_that_does_not_fit_is_refused_with_its_path() {
        let err =
            AppServer::typed_line(&initialize(json!({"name": 42, "version": "1"})), None).unwrap_err().to_string();
        assert!(
            err.contains("undecodable") && err.contains("params.clientInfo.name") && err.contains("initialize"),
            "{err}"
        );
        let extra = initialize(json!({"name": "n", "version": "1", "noSuchMember": 1}));
        let err = AppServer::typed_line(&extra, None).unwrap_err().to_string();
        assert!(err.contains("unknown-field") && err.contains("params.clientInfo.noSuchMember"), "{err}");
        let unknown_method = json!({"id": 1, "method": "no/such/method", "params": {}});
        let err = AppServer::typed_line(&unknown_method, None).unwrap_err().to_string();
        assert!(err.contains("unknown-method") && err.contains("no/such/method"), "{err}");
    }

    #[test]
    fn a_message_that_fits_is_sent_in_the_typed_encoding() {
        let request = initialize(json!({"version": "1", "name": "n"}));
        let line = AppServer::typed_line(&request, None).unwrap();
        assert_eq!(serde_json::from_str::<Value>(&line).unwrap(), request);
        assert_eq!(ClientMessage::from_line(&line).unwrap().to_line(), line, "not the typed crate's own encoding");
    }
}
