//! Scripted scenarios against the real server.
//!
//! Each scenario gets its own mock and a fresh server and runs a short sequence of steps. The
//! client side is written with the typed crate: requests are `ClientRequest` values, answers
//! to server requests are typed response structs, and waits match typed `ServerMessage`s. The
//! only raw lines are the deliberately malformed ones of `protocol_errors` (marked `bad`) and
//! the one well-formed line the typed crate never writes (a request with `"jsonrpc": "2.0"`).

use std::time::Duration;

use anyhow::{bail, ensure, Context as _, Result};
use codex_app_protocol::jsonrpc::ErrorObject;
use codex_app_protocol::{
    request, AskForApproval, ClientInfo, ClientNotification, ClientRequest, CommandExecutionApprovalDecision,
    CommandExecutionRequestApprovalResponse, CommandExecutionStatus, ConfigReadParams, DynamicToolCallOutputContentItem,
    DynamicToolCallResponse, DynamicToolSpec, FunctionDynamicToolSpec, InitializeCapabilities, InitializeParams,
    InputTextDynamicToolCallOutputContentItem, Message, MockExperimentalMethodParams, ModelListParams, RequestId,
    ServerNotification, ServerRequest, TextUserInput, ThreadArchiveParams, ThreadItem, ThreadListParams,
    ThreadReadParams, ThreadSetNameParams, ThreadStartParams, Turn, TurnInterruptParams, TurnStartParams, TurnStatus,
    UserInput,
};
use serde_json::json;

use super::mock::{ev, MockBody, MockServer, Outcome as MockOutcome};
use super::server::{AppServer, Outcome};

/// Per-wait timeout.
pub const T: Duration = Duration::from_secs(10);
/// Quiet period that ends a drain (late notifications after `turn/completed`).
const QUIET: Duration = Duration::from_millis(300);

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
fn text_turn(thread_id: &str, text: &str) -> TurnStartParams {
    let input = vec![UserInput::Text(TextUserInput { text: text.to_owned(), text_elements: None })];
    TurnStartParams::new(input, thread_id.to_owned())
}

fn expect_invalid_request(what: &str, outcome: Outcome) -> Result<()> {
    match outcome {
        Err(e) if e.error.code == ErrorObject::INVALID_REQUEST => Ok(()),
        Err(e) => bail!("{what}: expected error {}, got {} {}", ErrorObject::INVALID_REQUEST, e.error.code, e.error.message),
        Ok(r) => bail!("{what}: expected an error, got the result {}", r.result.get()),
    }
}

fn expect_result(what: &str, outcome: Outcome) -> Result<()> {
    match outcome {
        Ok(_) => Ok(()),
        Err(e) => bail!("{what}: expected a result, got error {} {}", e.error.code, e.error.message),
    }
}

impl Session {
    /// `initialize` + `initialized`; `experimental` opts into the experimental API.
    fn initialize(&mut self, experimental: bool) -> Result<()> {
        let params = InitializeParams {
            client_info: ClientInfo {
                name: "codex-recorder".into(),
                title: Some("Codex traffic recorder".into()),
                version: "0.1.0".into(),
            },
            capabilities: experimental.then(|| InitializeCapabilities { experimental_api: Some(true), ..Default::default() }),
        };
        self.srv.call_ok::<request::Initialize>(|id| ClientRequest::Initialize { id, params: Box::new(params) }, T)?;
        self.srv.notify(ClientNotification::Initialized {})?;
        // Sent on its own shortly after `initialize` (with any `configWarning`); waiting for
        // it keeps it from landing between later steps at random.
        self.srv.wait_notification("remoteControl/status/changed", T, |n| {
            matches!(n, ServerNotification::RemoteControlStatusChanged { .. }).then_some(())
        })
    }

    /// `thread/start`, then `thread/started`; returns the thread id.
    fn thread_start(&mut self, params: ThreadStartParams) -> Result<String> {
        let started = self.srv.call_ok::<request::ThreadStart>(|id| ClientRequest::ThreadStart { id, params: Box::new(params) }, T)?;
        let id = started.thread.id;
        self.srv.wait_notification("thread/started", T, |n| match n {
            ServerNotification::ThreadStarted { params, .. } if params.thread.id == id => Some(()),
            _ => None,
        })?;
        Ok(id)
    }

    /// `turn/start` with one text input; returns the turn id.
    fn turn_start(&mut self, thread_id: &str, text: &str) -> Result<String> {
        let params = text_turn(thread_id, text);
        let started = self.srv.call_ok::<request::TurnStart>(|id| ClientRequest::TurnStart { id, params: Box::new(params) }, T)?;
        Ok(started.turn.id)
    }

    /// Waits for `turn/completed` with `status`, then reads late notifications until quiet.
    fn turn_completed(&mut self, status: TurnStatus) -> Result<Turn> {
        let turn = self.srv.wait_notification("turn/completed", T, |n| match n {
            ServerNotification::TurnCompleted { params, .. } => Some(params.turn.clone()),
            _ => None,
        })?;
        self.srv.drain(QUIET, T);
        ensure!(turn.status == status, "turn ended with status {:?}, expected {status:?}", turn.status);
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
        let approval = self.srv.wait_server_request("item/commandExecution/requestApproval", T, |r| match r {
            ServerRequest::ItemCommandExecutionRequestApproval { id, params } => Some((id.clone(), params.command.clone())),
            _ => None,
        })?;
        ensure!(approval.1.as_deref().is_some_and(|c| c.contains(cmd)), "approval asked for {:?}, expected {cmd:?}", approval.1);
        let accept = CommandExecutionRequestApprovalResponse { decision: CommandExecutionApprovalDecision::Accept };
        self.srv.respond(approval.0, &accept)?;
        self.turn_completed(TurnStatus::Completed)?;

        let requests = self.mock.wait_for_requests(2 * n, T)?;
        let output = requests[2 * n - 1].function_output(&call_id).context("the model got no tool output")?;
        let note = format!("`{cmd}` -> model: {}", truncate(&output.to_string(), 140));
        self.notes.push(note);
        Ok(())
    }

    /// Waits for `item/completed` of the command execution `call_id`; returns its status and
    /// exit code.
    fn command_completed(&mut self, call_id: &str) -> Result<(CommandExecutionStatus, Option<i32>)> {
        self.srv.wait_notification(&format!("item/completed of {call_id}"), T, |n| match n {
            ServerNotification::ItemCompleted { params, .. } => match &params.item {
                ThreadItem::CommandExecution(c) if c.id == call_id => Some((c.status.clone(), c.exit_code)),
                _ => None,
            },
            _ => None,
        })
    }
}

fn truncate(s: &str, max: usize) -> String {
    codex_app_traffic::drift::truncate(s, max)
}

// ---------------------------------------------------------------------------------------
// Scenarios.

/// Handshake and thread lifecycle, model list and config.
fn lifecycle(s: &mut Session) -> Result<()> {
    s.initialize(false)?;
    let thread = s.thread_start(ThreadStartParams::default())?;
    let list = s.srv.call_ok::<request::ThreadList>(|id| ClientRequest::ThreadList { id, params: Box::new(ThreadListParams::default()) }, T)?;
    s.notes.push(format!("thread/list: {} threads", list.data.len()));
    let read = ThreadReadParams { thread_id: thread.clone(), include_turns: None };
    s.srv.call_ok::<request::ThreadRead>(|id| ClientRequest::ThreadRead { id, params: Box::new(read) }, T)?;
    let name = ThreadSetNameParams { thread_id: thread.clone(), name: "recorded thread".into() };
    s.srv.call_ok::<request::ThreadNameSet>(|id| ClientRequest::ThreadNameSet { id, params: Box::new(name) }, T)?;
    let archive = ThreadArchiveParams { thread_id: thread };
    s.srv.call_ok::<request::ThreadArchive>(|id| ClientRequest::ThreadArchive { id, params: Box::new(archive) }, T)?;
    let models = s.srv.call_ok::<request::ModelList>(|id| ClientRequest::ModelList { id, params: Box::new(ModelListParams::default()) }, T)?;
    s.notes.push(format!("model/list: {} models", models.data.len()));
    s.srv.call_ok::<request::ConfigRead>(|id| ClientRequest::ConfigRead { id, params: Box::new(ConfigReadParams::default()) }, T)?;
    s.srv.drain(QUIET, T);
    Ok(())
}

/// Two turns, each an assistant message streamed in deltas.
fn streaming(s: &mut Session) -> Result<()> {
    s.mock.push_events(ev::assistant_message("resp-1", "msg-1", &["Hel", "lo ", "there"]));
    s.mock.push_events(ev::assistant_message("resp-2", "msg-2", &["Second ", "answer"]));
    s.initialize(false)?;
    let thread = s.thread_start(ThreadStartParams::default())?;
    s.turn_start(&thread, "Say hello")?;
    s.turn_completed(TurnStatus::Completed)?;
    s.turn_start(&thread, "Say something else")?;
    s.turn_completed(TurnStatus::Completed)?;

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
    let thread = s.thread_start(ThreadStartParams::default())?;
    s.turn_start(&thread, "Think, then answer")?;
    s.turn_completed(TurnStatus::Completed)?;
    Ok(())
}

/// `exec_command` under `approvalPolicy: "untrusted"`, each command approved: one that
/// succeeds (its second line streams as an output delta), one that fails (exit code 3), and
/// one that outlives its `yield_time_ms`, so its output delta and `item/completed` arrive
/// after `turn/completed`.
fn command_approval(s: &mut Session) -> Result<()> {
    s.initialize(false)?;
    let params = ThreadStartParams { approval_policy: Some(AskForApproval::Untrusted), ..Default::default() };
    let thread = s.thread_start(params)?;
    // Output that comes at once can beat the server's output streaming and then shows only
    // in `aggregatedOutput`, not as a delta; the sleeps make the deltas dependable.
    s.approved_command_turn(&thread, 1, "sleep 0.2; echo hello; sleep 0.2; echo world", 1000)?;
    let (status, code) = s.command_completed("call-1")?;
    ensure!(status == CommandExecutionStatus::Completed && code == Some(0), "call-1 ended {status:?} with exit code {code:?}");
    s.approved_command_turn(&thread, 2, "sleep 0.2; echo oops >&2; exit 3", 1000)?;
    let (status, code) = s.command_completed("call-2")?;
    ensure!(status == CommandExecutionStatus::Failed && code == Some(3), "call-2 ended {status:?} with exit code {code:?}");
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
    let tool = DynamicToolSpec::Function(FunctionDynamicToolSpec {
        name: "lookup_weather".into(),
        description: "Current weather for a city.".into(),
        input_schema: json!({"type": "object", "properties": {"city": {"type": "string"}},
                             "required": ["city"], "additionalProperties": false}),
        defer_loading: None,
    });
    let thread = s.thread_start(ThreadStartParams { dynamic_tools: Some(vec![tool]), ..Default::default() })?;
    s.turn_start(&thread, "Weather in Paris?")?;
    let (id, arguments) = s.srv.wait_server_request("item/tool/call", T, |r| match r {
        ServerRequest::ItemToolCall { id, params } if params.tool == "lookup_weather" => Some((id.clone(), params.arguments.clone())),
        _ => None,
    })?;
    ensure!(arguments == args, "unexpected tool arguments: {arguments}");
    let answer = DynamicToolCallResponse {
        success: true,
        content_items: vec![DynamicToolCallOutputContentItem::InputText(InputTextDynamicToolCallOutputContentItem {
            text: "sunny, 24 C".into(),
        })],
    };
    s.srv.respond(id, &answer)?;
    s.turn_completed(TurnStatus::Completed)?;

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
    let thread = s.thread_start(ThreadStartParams::default())?;
    s.turn_start(&thread, "This will fail")?;
    let message = s.srv.wait_notification("error", T, |n| match n {
        ServerNotification::Error { params, .. } => Some(params.error.message.clone()),
        _ => None,
    })?;
    s.notes.push(format!("error notification: {message}"));
    s.turn_completed(TurnStatus::Failed)?;
    Ok(())
}

/// What the server does with requests it must refuse and lines it cannot read.
fn protocol_errors(s: &mut Session) -> Result<()> {
    let list = |id| ClientRequest::ThreadList { id, params: Box::new(ThreadListParams::default()) };
    expect_invalid_request("before initialize", s.srv.call(list, T)?)?;
    s.initialize(false)?;
    let again = InitializeParams {
        client_info: ClientInfo { name: "again".into(), title: None, version: "0".into() },
        capabilities: None,
    };
    expect_invalid_request("second initialize", s.srv.call(|id| ClientRequest::Initialize { id, params: Box::new(again) }, T)?)?;

    // Lines no conforming client writes: an unknown method, a param of the wrong type.
    s.srv.send_bad_line(r#"{"id":"unknown","method":"no/such/method","params":{}}"#)?;
    expect_invalid_request("unknown method", s.srv.wait_response(&RequestId::String("unknown".into()), T)?)?;
    s.srv.send_bad_line(r#"{"id":"bad-params","method":"thread/read","params":{"threadId":42}}"#)?;
    expect_invalid_request("invalid params", s.srv.wait_response(&RequestId::String("bad-params".into()), T)?)?;

    // Experimental use without the opt-in: typed (the crate is built with `experimental`).
    let field = ThreadStartParams { mock_experimental_field: Some("x".into()), ..Default::default() };
    expect_invalid_request("experimental field", s.srv.call(|id| ClientRequest::ThreadStart { id, params: Box::new(field) }, T)?)?;
    let method = |id| ClientRequest::MockExperimentalMethod { id, params: Box::new(MockExperimentalMethodParams::default()) };
    expect_invalid_request("experimental method", s.srv.call(method, T)?)?;

    s.srv.send_bad_line("this is not JSON")?; // no reply; the next request still works
    // Accepted by the server and not drift: the typed crate drops `jsonrpc` by design.
    s.srv.send_raw_line(r#"{"jsonrpc":"2.0","id":"with-jsonrpc","method":"thread/list","params":{}}"#)?;
    expect_result("request with jsonrpc", s.srv.wait_response(&RequestId::String("with-jsonrpc".into()), T)?)?;
    let id = RequestId::String("string-id".into());
    s.srv.send(&Message::Request(list(id.clone())))?;
    expect_result("string id", s.srv.wait_response(&id, T)?)?;
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
    let thread = s.thread_start(ThreadStartParams::default())?;
    let turn = s.turn_start(&thread, "Take your time")?;
    // The turn is streaming once the first delta is out.
    s.srv.wait_notification("item/agentMessage/delta", T, |n| {
        matches!(n, ServerNotification::ItemAgentMessageDelta { .. }).then_some(())
    })?;
    let params = TurnInterruptParams { thread_id: thread, turn_id: turn };
    s.srv.call_ok::<request::TurnInterrupt>(|id| ClientRequest::TurnInterrupt { id, params: Box::new(params) }, T)?;
    s.turn_completed(TurnStatus::Interrupted)?;
    let outcome = s.mock.wait_for_outcome(0, T)?;
    ensure!(outcome == MockOutcome::ClientGone, "the model stream ended with {outcome:?}, expected the client to hang up");
    Ok(())
}
