//! The client against a server played by the test over the in-memory transport: handshake,
//! requests, errors, routing, handlers, failure and load.
//!
//! Written against the types of the vendored codex release; after a regen from a release out
//! of the range these tests are left out and one test says so (see `written_for_codex!`).

codex_app_client::protocol::__test_support::written_for_codex! { "0.171.0",

use std::sync::Arc;
use std::time::Duration;

use tokio::time::Instant;

use codex_app_client::protocol::jsonrpc::ErrorObject;
use codex_app_client::protocol::*;
use codex_app_client::transport::memory::{MemoryTransport, ServerEnd};
use codex_app_client::*;
use serde_json::{json, Value};

const T: Duration = Duration::from_secs(5);

fn user_agent(version: &str) -> String {
    format!("test/{version} (Linux; x86_64) term (test; 0)")
}

/// Plays the server's side of the handshake; returns the `initialize` params.
async fn handshake(server: &mut ServerEnd, version: &str) -> Value {
    let init = server.recv_json().await.expect("initialize");
    assert_eq!(init["method"], "initialize");
    let result = json!({"userAgent": user_agent(version), "codexHome": "/tmp/h", "platformFamily": "unix", "platformOs": "linux"});
    server.send(json!({"id": init["id"], "result": result}).to_string()).await.unwrap();
    let initialized = server.recv_json().await.expect("initialized");
    assert_eq!(initialized, json!({"method": "initialized"}));
    init["params"].clone()
}

async fn connect_with(builder: ClientBuilder) -> (Client, ServerEnd) {
    let (transport, mut server) = MemoryTransport::pair(64);
    let (client, _) = tokio::join!(builder.connect(transport), handshake(&mut server, CODEX_VERSION));
    (client.expect("connect"), server)
}

async fn connect() -> (Client, ServerEnd) {
    connect_with(Client::builder()).await
}

fn turn_json(id: &str, status: &str) -> Value {
    json!({"id": id, "rootTurnId": id, "items": [], "itemsView": "notLoaded", "status": status, "error": null,
           "startedAt": null, "completedAt": null, "durationMs": null})
}

fn delta(thread: &str, turn: &str, method: &str, item: &str, text: &str) -> String {
    json!({"method": method, "params": {"threadId": thread, "turnId": turn, "itemId": item, "delta": text}, "emittedAtMs": 0}).to_string()
}

fn command_item(thread: &str, turn: &str, method: &str, item: &str, completed: bool) -> String {
    let status = if completed { "completed" } else { "inProgress" };
    let mut params = json!({
        "item": {"type": "commandExecution", "id": item, "pluginId": null, "scriptPath": null, "command": "sleep 1",
                 "cwd": "/w", "processId": null, "source": "agent", "status": status, "commandActions": [],
                 "aggregatedOutput": null, "exitCode": null, "durationMs": null, "startedAtMs": 0, "completedAtMs": null},
        "threadId": thread, "turnId": turn,
    });
    if completed {
        params["completedAtMs"] = json!(0);
    } else {
        params["startedAtMs"] = json!(0);
    }
    json!({"method": method, "params": params, "emittedAtMs": 0}).to_string()
}

fn turn_completed(thread: &str, turn: &str) -> String {
    json!({"method": "turn/completed", "params": {"threadId": thread, "turn": turn_json(turn, "completed")}, "emittedAtMs": 0}).to_string()
}

fn text_turn(thread: &str) -> TurnStartParams {
    TurnStartParams::new(vec![UserInput::Text(TextUserInput::new("hi".into()))], thread.into())
}

/// Answers the next `turn/start` with turn `turn`; returns the request.
async fn answer_turn_start(server: &mut ServerEnd, turn: &str) -> Value {
    let request = server.recv_json().await.expect("turn/start");
    assert_eq!(request["method"], "turn/start");
    server.send(json!({"id": request["id"], "result": {"turn": turn_json(turn, "inProgress")}}).to_string()).await.unwrap();
    request
}

fn method_of(event: &Event) -> String {
    match event {
        Event::Notification(n) => n.method().to_owned(),
        other => format!("{other:?}"),
    }
}

#[tokio::test]
async fn handshake_sends_client_info_and_reads_the_version() {
    let (transport, mut server) = MemoryTransport::pair(8);
    let builder = Client::builder().client_info("my-app", "1.2.3");
    let (client, params) = tokio::join!(builder.connect(transport), handshake(&mut server, CODEX_VERSION));
    let client = client.unwrap();
    assert_eq!(params["clientInfo"], json!({"name": "my-app", "version": "1.2.3"}));
    let experimental = params["capabilities"]["experimentalApi"].as_bool().unwrap_or(false);
    assert_eq!(experimental, cfg!(feature = "experimental"));
    assert_eq!(client.experimental_api(), cfg!(feature = "experimental"));
    assert!(client.version_check().unwrap().matches());
    assert_eq!(client.initialize_response().unwrap().platform_os, "linux");
}

#[tokio::test]
async fn experimental_opt_in_can_be_overridden() {
    for on in [false, true] {
        let (transport, mut server) = MemoryTransport::pair(8);
        let (client, params) = tokio::join!(Client::builder().experimental_api(on).connect(transport), handshake(&mut server, CODEX_VERSION));
        client.unwrap();
        assert_eq!(params["capabilities"]["experimentalApi"].as_bool().unwrap_or(false), on);
    }
}

/// Typed capabilities are sent as they encode; their `experimental_api`, when given, is the
/// opt-in (the last of it and `experimental_api()` counts), and when absent the feature's
/// default stays.
#[tokio::test]
async fn typed_capabilities_are_sent_and_their_opt_in_is_the_builders() {
    let opt_out = InitializeCapabilities {
        opt_out_notification_methods: Some(vec!["thread/started".into()]),
        request_attestation: Some(false),
        ..Default::default()
    };
    let cases = [
        (Client::builder().capabilities(opt_out.clone()), cfg!(feature = "experimental")),
        (Client::builder().experimental_api(false).capabilities(opt_out.clone()), false),
        (Client::builder().capabilities(InitializeCapabilities { experimental_api: Some(true), ..opt_out.clone() }), true),
        (Client::builder().capabilities(InitializeCapabilities { experimental_api: Some(false), ..opt_out.clone() }), false),
        (Client::builder().capabilities(InitializeCapabilities { experimental_api: Some(false), ..opt_out.clone() }).experimental_api(true), true),
    ];
    for (i, (builder, on)) in cases.into_iter().enumerate() {
        let (transport, mut server) = MemoryTransport::pair(8);
        let (client, params) = tokio::join!(builder.connect(transport), handshake(&mut server, CODEX_VERSION));
        let client = client.unwrap();
        let mut expected = json!({"optOutNotificationMethods": ["thread/started"], "requestAttestation": false});
        if on {
            expected["experimentalApi"] = json!(true);
        }
        assert_eq!(params["capabilities"], expected, "case {i}");
        assert_eq!(client.experimental_api(), on, "case {i}");
    }
}

#[tokio::test]
async fn version_mismatch_is_reported_or_an_error() {
    let (transport, mut server) = MemoryTransport::pair(8);
    let (client, _) = tokio::join!(
        Client::builder().version_policy(VersionPolicy::Ignore).connect(transport),
        handshake(&mut server, "0.1.0")
    );
    let check = client.unwrap().version_check().unwrap().clone();
    assert!(!check.matches());
    assert_eq!(check.server.as_deref(), Some("0.1.0"));
    assert_eq!(check.expected, CODEX_VERSION);

    let (transport, mut server) = MemoryTransport::pair(8);
    // Refused before `initialized`: the client only closes the connection.
    let refuse = async {
        let init = server.recv_json().await.expect("initialize");
        let result = json!({"userAgent": user_agent("0.1.0"), "codexHome": "/tmp/h", "platformFamily": "unix", "platformOs": "linux"});
        server.send(json!({"id": init["id"], "result": result}).to_string()).await.unwrap();
        assert_eq!(server.recv().await, None, "no `initialized`");
    };
    let (client, ()) = tokio::join!(Client::builder().version_policy(VersionPolicy::Error).connect(transport), refuse);
    match client {
        Err(ClientError::VersionMismatch(check)) => assert!(check.to_string().contains("0.1.0")),
        other => panic!("expected a version mismatch, got {other:?}"),
    }
}

#[tokio::test]
async fn typed_requests_raw_requests_and_server_errors() {
    let (client, mut server) = connect_with(Client::builder().retry(RetryPolicy::none())).await;
    let list = {
        let client = client.clone();
        tokio::spawn(async move { client.request::<request::ThreadList>(ThreadListParams::default()).await })
    };
    let raw = {
        let client = client.clone();
        tokio::spawn(async move { client.request_raw("some/newMethod", json!({"x": 1})).await })
    };
    let overloaded = {
        let client = client.clone();
        tokio::spawn(async move { client.request::<request::ModelList>(ModelListParams::default()).await })
    };
    let mut requests = Vec::new();
    for _ in 0..3 {
        requests.push(server.recv_json().await.unwrap());
    }
    let find = |method: &str| requests.iter().find(|r| r["method"] == method).unwrap_or_else(|| panic!("no {method}")).clone();
    // Answered out of order.
    let model_list = find("model/list");
    server.send(json!({"error": {"code": -32001, "message": "Server overloaded; retry later."}, "id": model_list["id"]}).to_string()).await.unwrap();
    let new_method = find("some/newMethod");
    assert_eq!(new_method["params"], json!({"x": 1}));
    server.send(json!({"id": new_method["id"], "result": {"anything": [1, 2]}}).to_string()).await.unwrap();
    let thread_list = find("thread/list");
    server.send(json!({"id": thread_list["id"], "result": {"data": [], "nextCursor": null}}).to_string()).await.unwrap();

    let list = list.await.unwrap().unwrap();
    assert!(list.data.is_empty());
    assert_eq!(raw.await.unwrap().unwrap(), json!({"anything": [1, 2]}));
    match overloaded.await.unwrap() {
        Err(e @ ClientError::Server(_)) => assert!(e.is_retryable(), "{e}"),
        other => panic!("expected a server error, got {other:?}"),
    }
    assert_eq!(client.pending_requests(), 0);
}

#[tokio::test]
async fn a_result_that_does_not_fit_its_type_is_a_decode_error_with_its_path() {
    let (client, mut server) = connect().await;
    let call = tokio::spawn({
        let client = client.clone();
        async move { client.request::<request::ThreadList>(ThreadListParams::default()).await }
    });
    let request = server.recv_json().await.unwrap();
    server.send(json!({"id": request["id"], "result": {"data": 7}}).to_string()).await.unwrap();
    match call.await.unwrap() {
        Err(ClientError::Decode(report)) => {
            assert_eq!(report.method.as_deref(), Some("thread/list"));
            assert_eq!(report.path.as_ref().map(ToString::to_string).as_deref(), Some("result.data"), "{report}");
        }
        other => panic!("expected a decode error, got {other:?}"),
    }
}

/// On paused tokio time (no wall clock): the pending request fails without waiting on any timer.
#[tokio::test(start_paused = true)]
async fn server_killed_mid_request_fails_pending_requests_fast() {
    let (client, mut server) = connect().await;
    let mut notifications = client.notifications();
    let call = tokio::spawn({
        let client = client.clone();
        async move { client.request::<request::ThreadList>(ThreadListParams::default()).await }
    });
    server.recv_json().await.unwrap();
    let killed = Instant::now();
    drop(server);
    let outcome = tokio::time::timeout(Duration::from_secs(1), call).await.expect("pending request failed within 1 s").unwrap();
    assert!(killed.elapsed() < Duration::from_secs(1));
    match outcome {
        Err(ClientError::ServerExited(exit)) => assert_eq!(exit.reason, ExitReason::EndOfStream),
        other => panic!("expected server exited, got {other:?}"),
    }
    // New requests fail at once; the streams end.
    let again = tokio::time::timeout(T, client.request::<request::ThreadList>(ThreadListParams::default())).await.unwrap();
    assert!(matches!(again, Err(ClientError::ServerExited(_))), "{again:?}");
    assert!(tokio::time::timeout(T, notifications.next()).await.unwrap().is_none());
    assert!(matches!(client.closed(), Some(ClientError::ServerExited(_))));
}

#[tokio::test]
async fn undecodable_lines_are_reported_and_the_client_goes_on() {
    let (client, mut server) = connect().await;
    let mut events = client.notifications();
    server.send("this is not JSON").await.unwrap();
    server.send(r#"{"method":"thread/archived","params":{"threadId":7}}"#).await.unwrap();
    // A server request that does not decode is answered with an error.
    server.send(r#"{"method":"item/tool/call","id":41,"params":{"threadId":5}}"#).await.unwrap();
    server.send(r#"{"method":"thread/archived","params":{"threadId":"t"}}"#).await.unwrap();

    let first = tokio::time::timeout(T, events.next()).await.unwrap().unwrap();
    let Event::Undecodable(report) = first else { panic!("expected undecodable, got {first:?}") };
    assert_eq!(report.line_number, Some(2), "{report}"); // line 1 was the initialize response
    let second = events.next().await.unwrap();
    let Event::Undecodable(report) = second else { panic!("expected undecodable, got {second:?}") };
    assert_eq!(report.line_number, Some(3));
    assert_eq!(report.method.as_deref(), Some("thread/archived"));
    assert_eq!(report.path.as_ref().map(ToString::to_string).as_deref(), Some("params.threadId"));
    let third = events.next().await.unwrap();
    let Event::Undecodable(report) = third else { panic!("expected undecodable, got {third:?}") };
    assert_eq!(report.method.as_deref(), Some("item/tool/call"));
    let answer = server.recv_json().await.unwrap();
    assert_eq!(answer["id"], 41);
    assert_eq!(answer["error"]["code"], ErrorObject::INVALID_PARAMS);
    let fourth = events.next().await.unwrap();
    assert_eq!(method_of(&fourth), "thread/archived");

    // And requests still work.
    let call = tokio::spawn({
        let client = client.clone();
        async move { client.request_raw("x/y", Value::Null).await }
    });
    let request = server.recv_json().await.unwrap();
    assert!(request.get("params").is_none());
    server.send(json!({"id": request["id"], "result": {}}).to_string()).await.unwrap();
    assert_eq!(call.await.unwrap().unwrap(), json!({}));
}

#[tokio::test]
async fn a_dropped_request_future_leaves_nothing_pending() {
    let (client, mut server) = connect().await;
    for _ in 0..100 {
        let call = client.request::<request::ThreadList>(ThreadListParams::default());
        // The request is sent, then its future dropped before the answer.
        let _ = tokio::time::timeout(Duration::from_millis(1), call).await;
    }
    assert_eq!(client.pending_requests(), 0);
    let mut ids = Vec::new();
    while ids.len() < 100 {
        ids.push(server.recv_json().await.unwrap()["id"].clone());
    }
    for id in ids {
        server.send(json!({"id": id, "result": {"data": [], "nextCursor": null}}).to_string()).await.unwrap();
    }
    // The late answers are discarded; the next request gets its own.
    let call = tokio::spawn({
        let client = client.clone();
        async move { client.request::<request::ThreadList>(ThreadListParams::default()).await }
    });
    let request = server.recv_json().await.unwrap();
    server.send(json!({"id": request["id"], "result": {"data": [], "nextCursor": "next"}}).to_string()).await.unwrap();
    assert_eq!(call.await.unwrap().unwrap().next_cursor.as_deref(), Some("next"));
    assert_eq!(client.pending_requests(), 0);
}

#[tokio::test]
async fn a_consumer_that_does_not_read_never_blocks_responses() {
    const N: usize = 100_000;
    let (transport, mut server) = MemoryTransport::pair(64);
    let builder = Client::builder().notification_buffer(256);
    let (client, _) = tokio::join!(builder.connect(transport), handshake(&mut server, CODEX_VERSION));
    let client = client.unwrap();
    let mut idle = client.notifications(); // never read until the end
    let call = tokio::spawn({
        let client = client.clone();
        async move { client.request::<request::ThreadList>(ThreadListParams::default()).await }
    });
    let request = server.recv_json().await.unwrap();
    let line = delta("t", "u", "item/agentMessage/delta", "m", "x");
    for _ in 0..N {
        server.send(line.clone()).await.unwrap();
    }
    server.send(json!({"id": request["id"], "result": {"data": [], "nextCursor": null}}).to_string()).await.unwrap();
    tokio::time::timeout(Duration::from_secs(30), call).await.expect("the response arrived").unwrap().unwrap();
    // The reader kept at most the buffer; it learns how many it lost, then reads the rest.
    let Some(Event::Lagged(lost)) = idle.next().await else { panic!("expected a lag report") };
    let mut kept = 0;
    while let Some(Event::Notification(_)) = idle.try_next() {
        kept += 1;
    }
    assert_eq!(lost as usize + kept, N);
    assert!(kept <= 256, "kept {kept}");
}

#[tokio::test]
async fn turns_on_two_threads_never_mix_and_late_output_reaches_the_turn() {
    let (client, mut server) = connect().await;
    let mut all = client.notifications();
    let (a, _) = tokio::join!(client.start_turn(text_turn("thread-a")), answer_turn_start(&mut server, "turn-a"));
    let (b, _) = tokio::join!(client.start_turn(text_turn("thread-b")), answer_turn_start(&mut server, "turn-b"));
    let (mut a, mut b) = (a.unwrap(), b.unwrap());
    assert_eq!((a.thread_id(), a.turn_id()), ("thread-a", "turn-a"));

    let lines = [
        command_item("thread-a", "turn-a", "item/started", "cmd-a", false),
        delta("thread-b", "turn-b", "item/agentMessage/delta", "msg-b", "B1"),
        delta("thread-a", "turn-a", "item/commandExecution/outputDelta", "cmd-a", "A1"),
        delta("thread-b", "turn-b", "item/agentMessage/delta", "msg-b", "B2"),
        turn_completed("thread-b", "turn-b"),
        turn_completed("thread-a", "turn-a"),
        // After turn/completed: the command's last output and its item/completed.
        delta("thread-a", "turn-a", "item/commandExecution/outputDelta", "cmd-a", "A2"),
        command_item("thread-a", "turn-a", "item/completed", "cmd-a", true),
        // After the stream ended: only the global stream has it.
        delta("thread-a", "turn-a", "item/commandExecution/outputDelta", "cmd-a", "A3"),
    ];
    for line in &lines[..8] {
        server.send(line.clone()).await.unwrap();
    }
    let mut seen_b = Vec::new();
    while let Some(event) = tokio::time::timeout(T, b.next()).await.unwrap() {
        seen_b.push(method_of(&event));
    }
    assert_eq!(seen_b, ["item/agentMessage/delta", "item/agentMessage/delta", "turn/completed"]);
    let mut seen_a = Vec::new();
    while let Some(event) = tokio::time::timeout(T, a.next()).await.unwrap() {
        if let Event::Notification(n) = &event {
            if let ServerNotification::ItemCommandExecutionOutputDelta { params, .. } = &**n {
                seen_a.push(params.delta.clone());
                continue;
            }
        }
        seen_a.push(method_of(&event));
    }
    assert_eq!(seen_a, ["item/started", "A1", "turn/completed", "A2", "item/completed"]);
    assert!(a.completed().is_some() && a.is_finished());
    server.send(lines[8].clone()).await.unwrap();
    let mut global = 0;
    while let Some(event) = tokio::time::timeout(T, all.next()).await.unwrap() {
        global += 1;
        if global == lines.len() {
            break;
        }
        assert!(matches!(event, Event::Notification(_)));
    }
    assert_eq!(global, lines.len());
}

/// On paused tokio time (no wall clock): the stream ends when the grace period has passed.
#[tokio::test(start_paused = true)]
async fn a_turn_stream_ends_after_the_grace_period_when_items_stay_open() {
    let (client, mut server) = {
        let (transport, mut server) = MemoryTransport::pair(8);
        let (client, _) = tokio::join!(Client::builder().late_grace(Duration::from_millis(200)).connect(transport), handshake(&mut server, CODEX_VERSION));
        (client.unwrap(), server)
    };
    let (turn, _) = tokio::join!(client.start_turn(text_turn("t")), answer_turn_start(&mut server, "u"));
    let mut turn = turn.unwrap();
    server.send(command_item("t", "u", "item/started", "c", false)).await.unwrap();
    server.send(turn_completed("t", "u")).await.unwrap();
    let completed = tokio::time::timeout(T, turn.wait()).await.unwrap().unwrap();
    assert_eq!(completed.id, "u");
    let started = Instant::now();
    assert!(tokio::time::timeout(T, turn.next()).await.unwrap().is_none());
    assert!(started.elapsed() >= Duration::from_millis(150), "{:?}", started.elapsed());
}

#[tokio::test]
async fn notifications_before_the_turn_start_response_reach_the_turn() {
    let (client, mut server) = connect().await;
    let start = tokio::spawn({
        let client = client.clone();
        async move { client.start_turn(text_turn("t")).await }
    });
    let request = server.recv_json().await.unwrap();
    server.send(delta("t", "u", "item/agentMessage/delta", "m", "early")).await.unwrap();
    server.send(json!({"id": request["id"], "result": {"turn": turn_json("u", "inProgress")}}).to_string()).await.unwrap();
    let mut turn = start.await.unwrap().unwrap();
    let first = tokio::time::timeout(T, turn.next()).await.unwrap().unwrap();
    assert_eq!(method_of(&first), "item/agentMessage/delta");
}

#[tokio::test]
async fn interrupt_and_steer_from_the_handle() {
    let (client, mut server) = connect().await;
    let (turn, _) = tokio::join!(client.start_turn(text_turn("t")), answer_turn_start(&mut server, "u"));
    let turn = turn.unwrap();
    let (interrupted, request) = tokio::join!(turn.interrupt(), async {
        let request = server.recv_json().await.unwrap();
        server.send(json!({"id": request["id"], "result": {}}).to_string()).await.unwrap();
        request
    });
    interrupted.unwrap();
    assert_eq!(request["method"], "turn/interrupt");
    assert_eq!(request["params"], json!({"threadId": "t", "turnId": "u"}));
    let (steered, request) = tokio::join!(turn.steer(vec![UserInput::Text(TextUserInput::new("more".into()))]), async {
        let request = server.recv_json().await.unwrap();
        server.send(json!({"id": request["id"], "result": {"turnId": "u"}}).to_string()).await.unwrap();
        request
    });
    steered.unwrap();
    assert_eq!(request["method"], "turn/steer");
    assert_eq!(request["params"]["expectedTurnId"], "u");
}

fn approval_request(id: i64) -> String {
    json!({"method": "item/commandExecution/requestApproval", "id": id,
           "params": {"threadId": "t", "turnId": "u", "itemId": "c", "startedAtMs": 0, "command": "echo hi"}})
    .to_string()
}

struct Approve;

impl ServerRequestHandler for Approve {
    async fn item_command_execution_request_approval(&self, params: CommandExecutionRequestApprovalParams) -> HandlerResult<CommandExecutionRequestApprovalResponse> {
        assert_eq!(params.command.as_deref(), Some("echo hi"));
        Ok(CommandExecutionRequestApprovalResponse { decision: CommandExecutionApprovalDecision::Accept })
    }
}

struct Panics;

impl ServerRequestHandler for Panics {
    async fn item_command_execution_request_approval(&self, _: CommandExecutionRequestApprovalParams) -> HandlerResult<CommandExecutionRequestApprovalResponse> {
        panic!("handler bug")
    }

    async fn item_tool_call(&self, _: DynamicToolCallParams) -> HandlerResult<DynamicToolCallResponse> {
        Err(ErrorObject::new(-32000, "tool failed"))
    }
}

#[tokio::test]
async fn the_default_handler_declines_and_errors() {
    let (_client, mut server) = connect().await;
    server.send(approval_request(0)).await.unwrap();
    assert_eq!(server.recv_json().await.unwrap(), json!({"id": 0, "result": {"decision": "decline"}}));
    server.send(r#"{"method":"item/fileChange/requestApproval","id":1,"params":{"threadId":"t","turnId":"u","itemId":"f","startedAtMs":0}}"#).await.unwrap();
    assert_eq!(server.recv_json().await.unwrap(), json!({"id": 1, "result": {"decision": "decline"}}));
    let tool = r#"{"method":"item/tool/call","id":2,"params":{"threadId":"t","turnId":"u","callId":"c","tool":"x","arguments":{}}}"#;
    server.send(tool).await.unwrap();
    let answer = server.recv_json().await.unwrap();
    assert_eq!(answer["id"], 2);
    assert_eq!(answer["error"]["code"], ErrorObject::METHOD_NOT_FOUND);
    server.send(r#"{"method":"some/futureRequest","id":3,"params":{}}"#).await.unwrap();
    let answer = server.recv_json().await.unwrap();
    assert_eq!(answer["id"], 3);
    assert!(answer["error"]["message"].as_str().unwrap().contains("some/futureRequest"));
}

/// Every default of the generated handler, as the server sees it: approvals refused (declined,
/// aborted, nothing granted), MCP elicitation declined, everything else an error.
#[tokio::test]
async fn the_default_answers_approve_nothing() {
    let (_client, mut server) = connect().await;
    let refused = [
        ("item/permissions/requestApproval", json!({"threadId": "t", "turnId": "u", "itemId": "p", "cwd": "/w", "startedAtMs": 0, "permissions": {"network": {"enabled": true}}}), json!({"permissions": {}})),
        ("mcpServer/elicitation/request", json!({"serverName": "s", "threadId": "t", "turnId": null, "mode": "url", "message": "m", "url": "https://example.com", "elicitationId": "e"}), json!({"action": "decline"})),
        ("execCommandApproval", json!({"callId": "c", "command": ["ls"], "conversationId": "t", "cwd": "/w", "parsedCmd": []}), json!({"decision": "abort"})),
        ("applyPatchApproval", json!({"callId": "c", "conversationId": "t", "fileChanges": {}}), json!({"decision": "abort"})),
    ];
    for (id, (method, params, result)) in refused.into_iter().enumerate() {
        server.send(json!({"method": method, "id": id, "params": params}).to_string()).await.unwrap();
        assert_eq!(server.recv_json().await.unwrap(), json!({"id": id, "result": result}), "{method}");
    }
    let errors = [
        ("item/tool/requestUserInput", json!({"isBlocking": true, "itemId": "i", "questions": [], "threadId": "t", "turnId": "u"})),
        ("account/chatgptAuthTokens/refresh", json!({"reason": "unauthorized"})),
    ];
    for (id, (method, params)) in errors.into_iter().enumerate() {
        server.send(json!({"method": method, "id": 10 + id, "params": params}).to_string()).await.unwrap();
        let answer = server.recv_json().await.unwrap();
        assert_eq!(answer["id"], 10 + id);
        assert_eq!(answer["error"]["code"], ErrorObject::METHOD_NOT_FOUND, "{method}: {answer}");
    }
}

/// A handler that wraps another through `handle`: it sees every request first and passes on
/// what it does not answer, without naming the other requests.
struct Counting<H> {
    seen: Arc<std::sync::Mutex<Vec<String>>>,
    inner: H,
}

impl<H: ServerRequestHandler> ServerRequestHandler for Counting<H> {
    async fn handle(&self, request: ServerRequest) -> HandlerResult<Box<serde_json::value::RawValue>> {
        self.seen.lock().unwrap().push(request.method().to_owned());
        if request.method() == "some/futureRequest" {
            return Ok(serde_json::value::to_raw_value(&json!({"handled": true})).unwrap());
        }
        self.inner.handle(request).await
    }
}

#[tokio::test]
async fn a_wrapping_handler_sees_every_request_and_passes_the_rest_on() {
    let seen = Arc::new(std::sync::Mutex::new(Vec::new()));
    let (_client, mut server) = connect_with(Client::builder().handler(Counting { seen: seen.clone(), inner: Approve })).await;
    server.send(approval_request(0)).await.unwrap();
    assert_eq!(server.recv_json().await.unwrap(), json!({"id": 0, "result": {"decision": "accept"}}));
    server.send(r#"{"method":"some/futureRequest","id":1,"params":{}}"#).await.unwrap();
    assert_eq!(server.recv_json().await.unwrap(), json!({"id": 1, "result": {"handled": true}}));
    assert_eq!(*seen.lock().unwrap(), ["item/commandExecution/requestApproval", "some/futureRequest"]);
}

#[tokio::test]
async fn a_handler_approves_and_a_panicking_or_failing_one_answers_an_error() {
    let (transport, mut server) = MemoryTransport::pair(8);
    let (client, _) = tokio::join!(Client::builder().handler(Approve).connect(transport), handshake(&mut server, CODEX_VERSION));
    let _client = client.unwrap();
    server.send(approval_request(7)).await.unwrap();
    assert_eq!(server.recv_json().await.unwrap(), json!({"id": 7, "result": {"decision": "accept"}}));

    let (transport, mut server) = MemoryTransport::pair(8);
    let (client, _) = tokio::join!(Client::builder().handler(Panics).connect(transport), handshake(&mut server, CODEX_VERSION));
    let client = client.unwrap();
    server.send(approval_request(8)).await.unwrap();
    let answer = server.recv_json().await.unwrap();
    assert_eq!(answer["id"], 8);
    assert_eq!(answer["error"]["code"], ErrorObject::INTERNAL_ERROR);
    assert!(answer["error"]["message"].as_str().unwrap().contains("handler bug"), "{answer}");
    server.send(r#"{"method":"item/tool/call","id":9,"params":{"threadId":"t","turnId":"u","callId":"c","tool":"x","arguments":{}}}"#).await.unwrap();
    assert_eq!(server.recv_json().await.unwrap(), json!({"id": 9, "error": {"code": -32000, "message": "tool failed"}}));
    // The client goes on.
    let call = tokio::spawn(async move { client.request_raw("a/b", json!({})).await });
    let request = server.recv_json().await.unwrap();
    server.send(json!({"id": request["id"], "result": 1}).to_string()).await.unwrap();
    assert_eq!(call.await.unwrap().unwrap(), json!(1));
}

#[cfg(feature = "experimental")]
#[tokio::test]
async fn experimental_requests_are_refused_without_the_opt_in() {
    let (client, mut server) = connect_with(Client::builder().experimental_api(false)).await;
    let params = ThreadStartParams { dynamic_tools: Some(Vec::new()), ..Default::default() };
    match client.request::<request::ThreadStart>(params).await {
        Err(ClientError::Refused(message)) => assert_eq!(message, "thread/start.dynamicTools requires experimentalApi capability"),
        other => panic!("expected a refusal, got {other:?}"),
    }
    match client.request_raw("mock/experimentalMethod", json!({})).await {
        Err(ClientError::Refused(message)) => assert_eq!(message, "mock/experimentalMethod requires experimentalApi capability"),
        other => panic!("expected a refusal, got {other:?}"),
    }
    // Nothing was sent.
    drop(client);
    assert!(server.recv().await.is_none());
}

#[tokio::test]
async fn the_tap_writes_both_directions_in_order() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("session.ndjson");
    let (client, mut server) = connect_with(Client::builder().tap(Tap::create(&path).unwrap())).await;
    server.send("not json").await.unwrap();
    let call = tokio::spawn({
        let client = client.clone();
        async move { client.request_raw("a/b", json!({"k": "v\n"})).await }
    });
    let request = server.recv_json().await.unwrap();
    server.send(json!({"id": request["id"], "result": {}}).to_string()).await.unwrap();
    call.await.unwrap().unwrap();
    client.shutdown(Duration::from_secs(1)).await;
    let text = std::fs::read_to_string(&path).unwrap();
    let entries: Vec<Value> = text.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    let dirs: Vec<&str> = entries.iter().map(|e| e["dir"].as_str().unwrap()).collect();
    assert_eq!(dirs, ["c2s", "s2c", "c2s", "s2c", "c2s", "s2c"]);
    assert!(entries.iter().all(|e| e.as_object().unwrap().len() == 2 && e["line"].is_string()));
    assert_eq!(entries[3]["line"], "not json");
    assert_eq!(serde_json::from_str::<Value>(entries[4]["line"].as_str().unwrap()).unwrap()["params"], json!({"k": "v\n"}));
}

#[tokio::test]
async fn shutdown_closes_the_connection_and_dropping_the_client_too() {
    let (client, mut server) = connect().await;
    let exit = tokio::time::timeout(T, async {
        let shutdown = client.shutdown(Duration::from_secs(2));
        let end = async {
            assert!(server.recv().await.is_none(), "the client's side closed");
            drop(server);
        };
        tokio::join!(shutdown, end).0
    })
    .await
    .unwrap();
    assert_eq!(exit.reason, ExitReason::Shutdown);
    assert!(exit.is_clean(), "{exit}");
    assert!(matches!(client.request_raw("a", Value::Null).await, Err(ClientError::Closed)));

    let (client, mut server) = connect().await;
    drop(client);
    assert!(tokio::time::timeout(T, server.recv()).await.unwrap().is_none());
}

/// `shutdown` dropped after each of its polls (the first one joins the connection task): the
/// shutdown goes on, and the next `shutdown` returns how the connection ended.
#[tokio::test]
async fn a_dropped_shutdown_future_leaves_the_shutdown_going_on() {
    for polls in 0..4 {
        let (client, mut server) = connect().await;
        {
            let mut shutdown = Box::pin(client.shutdown(Duration::from_secs(2)));
            for _ in 0..polls {
                let _ = std::future::Future::poll(shutdown.as_mut(), &mut std::task::Context::from_waker(std::task::Waker::noop()));
                tokio::task::yield_now().await;
            }
        }
        let end = async {
            while server.recv().await.is_some() {}
            drop(server);
        };
        let (exit, ()) = tokio::time::timeout(T, async { tokio::join!(client.shutdown(Duration::from_secs(2)), end) })
            .await
            .unwrap();
        // Dropped before its first poll, the future never asked for the shutdown.
        assert_eq!(exit.reason, ExitReason::Shutdown, "after {polls} polls: {exit}");
    }
}

#[tokio::test]
async fn arc_notifications_are_shared_between_streams() {
    let (client, server) = connect().await;
    let mut one = client.notifications();
    let mut two = client.notifications();
    server.send(delta("t", "u", "item/agentMessage/delta", "m", "x")).await.unwrap();
    let (Some(Event::Notification(a)), Some(Event::Notification(b))) = (one.next().await, two.next().await) else { panic!() };
    assert!(Arc::ptr_eq(&a, &b));
}

/// On paused tokio time (no wall clock): the request fails at its timeout, not later.
#[tokio::test(start_paused = true)]
async fn a_request_without_an_answer_times_out_and_leaves_nothing_pending() {
    let (client, mut server) = connect_with(Client::builder().request_timeout(Duration::from_millis(100))).await;
    let started = Instant::now();
    match client.request::<request::ThreadList>(ThreadListParams::default()).await {
        Err(ClientError::Timeout(after)) => assert_eq!(after, Duration::from_millis(100)),
        other => panic!("expected a timeout, got {other:?}"),
    }
    assert!(started.elapsed() < Duration::from_millis(200), "{:?}", started.elapsed());
    assert_eq!(client.pending_requests(), 0);
    // The late answer is discarded.
    let request = server.recv_json().await.unwrap();
    server.send(json!({"id": request["id"], "result": {"data": [], "nextCursor": null}}).to_string()).await.unwrap();
    assert_eq!(client.pending_requests(), 0);
}

#[tokio::test]
async fn notifications_and_turns_are_streams_for_the_futures_combinators() {
    use futures_util::StreamExt;
    let (client, mut server) = connect().await;
    let methods = client.notifications().filter_map(|event| async move { event.notification().map(|n| n.method().to_owned()) }).take(2);
    let turn = {
        let start = client.start_turn(text_turn("t"));
        let (turn, _) = tokio::join!(start, answer_turn_start(&mut server, "u"));
        turn.unwrap()
    };
    server.send(delta("t", "u", "item/agentMessage/delta", "m", "Hel")).await.unwrap();
    server.send(delta("t", "u", "item/agentMessage/delta", "m", "lo")).await.unwrap();
    server.send(turn_completed("t", "u")).await.unwrap();
    let text: Vec<String> = turn
        .filter_map(|event| async move {
            match event.notification()? {
                ServerNotification::ItemAgentMessageDelta { params, .. } => Some(params.delta.clone()),
                _ => None,
            }
        })
        .collect()
        .await;
    assert_eq!(text.concat(), "Hello");
    assert_eq!(methods.collect::<Vec<_>>().await, ["item/agentMessage/delta", "item/agentMessage/delta"]);
}

#[tokio::test]
async fn every_stream_gets_every_notification_and_a_dropped_stream_costs_nothing() {
    let (client, server) = connect().await;
    let (mut first, mut second) = (client.notifications(), client.notifications());
    for n in 0..3 {
        server.send(delta("t", "u", "item/agentMessage/delta", "m", &n.to_string())).await.unwrap();
    }
    let text = |event: Option<Event>| match event {
        Some(Event::Notification(n)) => match &*n {
            ServerNotification::ItemAgentMessageDelta { params, .. } => params.delta.clone(),
            other => panic!("unexpected {other:?}"),
        },
        other => panic!("expected a notification, got {other:?}"),
    };
    for n in 0..3 {
        assert_eq!(text(first.next().await), n.to_string());
        assert_eq!(text(second.next().await), n.to_string());
    }
    drop(second); // the connection stops queueing for it
    server.send(delta("t", "u", "item/agentMessage/delta", "m", "3")).await.unwrap();
    assert_eq!(text(first.next().await), "3");
    // The end of the connection ends the stream after what was queued; a stream made after
    // that ends at once.
    server.send(delta("t", "u", "item/agentMessage/delta", "m", "4")).await.unwrap();
    drop(server);
    assert_eq!(text(first.next().await), "4");
    assert!(tokio::time::timeout(Duration::from_secs(2), first.next()).await.expect("the stream ended").is_none());
    assert!(client.notifications().next().await.is_none());
}

/// A transport of the user's that implements only `LineReceiver::recv`: the client reads it
/// through the default `recv_many` (one line per call).
struct OneAtATime(MemoryTransport);

struct OneAtATimeReceiver(transport::memory::MemoryReceiver);

impl transport::Transport for OneAtATime {
    type Sender = transport::memory::MemorySender;
    type Receiver = OneAtATimeReceiver;

    fn split(self) -> (Self::Sender, Self::Receiver) {
        let (sender, receiver) = self.0.split();
        (sender, OneAtATimeReceiver(receiver))
    }
}

impl transport::LineReceiver for OneAtATimeReceiver {
    async fn recv(&mut self) -> std::io::Result<Option<String>> {
        self.0.recv().await
    }
}

#[tokio::test]
async fn a_transport_with_only_recv_works_and_batches_keep_order_and_line_numbers() {
    for one_at_a_time in [true, false] {
        let (memory, mut server) = MemoryTransport::pair(1024);
        let builder = Client::builder();
        let (client, _) = if one_at_a_time {
            tokio::join!(builder.connect(OneAtATime(memory)), handshake(&mut server, CODEX_VERSION))
        } else {
            tokio::join!(builder.connect(memory), handshake(&mut server, CODEX_VERSION))
        };
        let client = client.expect("connect");
        let mut events = client.notifications();
        // Many lines queued before the client reads: the batched reader takes them together.
        for n in 0..300 {
            if n == 150 {
                server.send("not JSON").await.unwrap();
            }
            server.send(json!({"method": "thread/archived", "params": {"threadId": format!("t{n}")}}).to_string()).await.unwrap();
        }
        let mut seen = Vec::new();
        while seen.len() < 301 {
            match tokio::time::timeout(T, events.next()).await.unwrap().unwrap() {
                Event::Notification(n) => match &*n {
                    ServerNotification::ThreadArchived { params, .. } => seen.push(params.thread_id.clone()),
                    other => panic!("unexpected {other:?}"),
                },
                Event::Undecodable(report) => {
                    // Line 1 was the initialize response; 151 lines came before this one.
                    assert_eq!(report.line_number, Some(152), "{report}");
                    seen.push("undecodable".into());
                }
                other => panic!("unexpected {other:?}"),
            }
        }
        let expected: Vec<String> =
            (0..300).map(|n| format!("t{n}")).flat_map(|t| if t == "t150" { vec!["undecodable".to_owned(), t] } else { vec![t] }).collect();
        assert_eq!(seen, expected, "one_at_a_time={one_at_a_time}");
        drop(server);
        let ended = tokio::time::timeout(T, events.next()).await.unwrap();
        assert!(ended.is_none(), "the stream ends with the connection: {ended:?}");
    }
}


/// Plays a server of `version`; the client connects with `builder`.
async fn connect_to(version: &str, builder: ClientBuilder) -> (Client, ServerEnd) {
    let (transport, mut server) = MemoryTransport::pair(64);
    let (client, _) = tokio::join!(builder.connect(transport), handshake(&mut server, version));
    (client.expect("connect"), server)
}

fn listing_by_ids() -> ThreadListParams {
    ThreadListParams { included_thread_ids: Some(vec!["t1".into()]), limit: Some(5), ..Default::default() }
}

/// What codex 0.169.0 lacks (`includedThreadIds`, since 0.171.0) is refused before sending by
/// default, left out with `Strip`, sent with `Send`; a method it lacks is never sent.
#[tokio::test]
async fn what_an_older_server_lacks_is_refused_stripped_or_sent() {
    let (client, mut server) = connect_to("0.169.0", Client::builder()).await;
    let refused = client.request::<request::ThreadList>(listing_by_ids()).await;
    let Err(ClientError::UnknownToServer { method, server: release, items }) = refused else {
        panic!("expected a refusal, got {refused:?}")
    };
    assert_eq!((method.as_str(), release.as_str()), ("thread/list", "0.169.0"));
    assert_eq!(items.iter().map(|i| (i.path.to_string(), i.availability.since)).collect::<Vec<_>>(), [("params.includedThreadIds".to_owned(), "0.171.0")]);
    let unavailable = client.request::<request::ModelProviderDefaultSet>(ModelProviderDefaultSetParams { provider_id: "p".into() }).await;
    assert!(matches!(unavailable, Err(ClientError::Unavailable { .. })), "{unavailable:?}");
    // Nothing was sent: the next line the server reads is the next request's.
    let call = tokio::spawn({
        let client = client.clone();
        async move { client.request::<request::ThreadList>(ThreadListParams::default()).await }
    });
    let request = server.recv_json().await.unwrap();
    assert_eq!((request["method"].as_str(), &request["params"]), (Some("thread/list"), &json!({})));
    server.send(json!({"id": request["id"], "result": {"data": [], "nextCursor": null}}).to_string()).await.unwrap();
    call.await.unwrap().unwrap();

    for (policy, kept) in [(UnknownItemPolicy::Strip, false), (UnknownItemPolicy::Send, true)] {
        let (client, mut server) = connect_to("0.169.0", Client::builder().unknown_to_server(policy)).await;
        let call = tokio::spawn(async move { client.request::<request::ThreadList>(listing_by_ids()).await });
        let request = server.recv_json().await.unwrap();
        assert_eq!(request["params"]["limit"], 5, "{policy:?}");
        assert_eq!(request["params"].get("includedThreadIds").is_some(), kept, "{policy:?}: {request}");
        server.send(json!({"id": request["id"], "result": {"data": [], "nextCursor": null}}).to_string()).await.unwrap();
        call.await.unwrap().unwrap();
    }
    // The crate's own release lacks nothing: sent as it is.
    let (client, mut server) = connect_to(CODEX_VERSION, Client::builder()).await;
    let call = tokio::spawn(async move { client.request::<request::ThreadList>(listing_by_ids()).await });
    let request = server.recv_json().await.unwrap();
    assert_eq!(request["params"]["includedThreadIds"], json!(["t1"]));
    server.send(json!({"id": request["id"], "result": {"data": [], "nextCursor": null}}).to_string()).await.unwrap();
    call.await.unwrap().unwrap();
}

struct AudioTool;

impl ServerRequestHandler for AudioTool {
    async fn item_tool_call(&self, _: DynamicToolCallParams) -> HandlerResult<DynamicToolCallResponse> {
        let audio = DynamicToolCallOutputContentItem::InputAudio(InputAudioDynamicToolCallOutputContentItem { audio_url: "a".into() });
        Ok(DynamicToolCallResponse { content_items: vec![audio], success: true })
    }
}

/// An answer to a server request is checked as a request is: an audio item (since 0.145.0)
/// sent to codex 0.140.0 becomes an error answer by default, and is left out with `Strip`.
#[tokio::test]
async fn an_answer_an_older_server_lacks_is_refused_or_stripped() {
    let tool = r#"{"method":"item/tool/call","id":2,"params":{"threadId":"t","turnId":"u","callId":"c","tool":"x","arguments":{}}}"#;
    let (_client, mut server) = connect_to("0.140.0", Client::builder().handler(AudioTool)).await;
    server.send(tool).await.unwrap();
    let answer = server.recv_json().await.unwrap();
    let message = answer["error"]["message"].as_str().unwrap_or_default();
    assert!(message.contains("result.contentItems[0]") && message.contains("0.140.0"), "{answer}");

    let (_client, mut server) = connect_to("0.140.0", Client::builder().handler(AudioTool).unknown_to_server(UnknownItemPolicy::Strip)).await;
    server.send(tool).await.unwrap();
    assert_eq!(server.recv_json().await.unwrap(), json!({"id": 2, "result": {"contentItems": [], "success": true}}));
}

/// The paths the version handling had before it was one module still name it: the policy's
/// former name (deprecated) and `error::VersionCheck`.
#[test]
#[allow(deprecated)]
fn the_former_paths_of_the_version_handling_still_name_it() {
    use codex_app_client::negotiate::Unknown;
    assert_eq!(Unknown::default(), UnknownItemPolicy::Refuse);
    let _: ClientBuilder = Client::builder().unknown_to_server(Unknown::Strip);
    let check: error::VersionCheck = version::VersionCheck::new("x/0.100.0 (y)");
    assert_eq!(check, VersionCheck::new("x/0.100.0 (y)"));
    let _: version::VersionPolicy = VersionPolicy::Error;
}
}
