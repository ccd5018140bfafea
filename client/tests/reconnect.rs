//! Reconnect, in memory: what a refused `thread/resume` does to the thread and its turns, how
//! the resume's answer reconciles the turns that ended while the connection was down, and what
//! becomes of a thread without turns that the server cannot resume. Public API only.
//!
//! Written against the types of the vendored codex release (see `written_for_codex!`).

codex_app_client::protocol::__test_support::written_for_codex! { "0.171.0",

use std::sync::{Arc, Mutex};
use std::time::Duration;

use codex_app_client::protocol::*;
use codex_app_client::transport::memory::{MemoryTransport, ServerEnd};
use codex_app_client::*;
use serde_json::{json, Value};

const T: Duration = Duration::from_secs(5);

async fn recv(server: &mut ServerEnd) -> Value {
    tokio::time::timeout(T, server.recv_json()).await.expect("the client sends").expect("open")
}

async fn answer(server: &mut ServerEnd, request: &Value, result: Value) {
    server.send(json!({"id": request["id"], "result": result}).to_string()).await.unwrap();
}

async fn handshake(server: &mut ServerEnd) {
    let init = recv(server).await;
    assert_eq!(init["method"], "initialize");
    let result = json!({"userAgent": format!("test/{CODEX_VERSION} (test)"), "codexHome": "/tmp/h", "platformFamily": "unix", "platformOs": "linux"});
    answer(server, &init, result).await;
    assert_eq!(recv(server).await["method"], "initialized");
}

/// The `thread/start` result the pinned release gave in a recorded session, for thread `id`
/// with `turns`.
fn thread_result(id: &str, turns: Value) -> Value {
    let session = include_str!("../../traffic/fixtures/0.171.0/lifecycle.ndjson");
    let line = session
        .lines()
        .map(|entry| serde_json::from_str::<Value>(entry).unwrap())
        .filter(|entry| entry["dir"] == "s2c")
        .map(|entry| serde_json::from_str::<Value>(entry["line"].as_str().unwrap()).unwrap())
        .find(|line| line["result"]["thread"]["cliVersion"].is_string())
        .unwrap();
    let mut result = line["result"].clone();
    result["thread"]["id"] = id.into();
    result["thread"]["turns"] = turns;
    result
}

fn turn_json(id: &str, status: &str, items: Value) -> Value {
    json!({"id": id, "rootTurnId": id, "items": items, "itemsView": "full", "status": status, "error": null,
           "startedAt": null, "completedAt": null, "durationMs": null})
}

fn agent_message(id: &str, text: &str) -> Value {
    json!({"type": "agentMessage", "moderation": null, "id": id, "text": text, "phase": null, "memoryCitation": null,
           "delivery": null, "questions": null, "startedAtMs": 0, "completedAtMs": 0})
}

fn delta(thread: &str, turn: &str, text: &str) -> String {
    json!({"method": "item/agentMessage/delta", "params": {"threadId": thread, "turnId": turn, "itemId": "m", "delta": text}}).to_string()
}

fn turn_completed(thread: &str, turn: &str) -> String {
    json!({"method": "turn/completed", "params": {"threadId": thread, "turn": turn_json(turn, "completed", json!([]))}}).to_string()
}

/// A client that reconnects, its first server and the server of its reconnect.
async fn connect() -> (Client, ServerEnd, ServerEnd, Notifications) {
    let (first, mut server1) = MemoryTransport::pair(64);
    let (second, server2) = MemoryTransport::pair(64);
    let transports = Arc::new(Mutex::new(vec![second, first]));
    let connect = move || {
        let next = transports.lock().unwrap().pop();
        async move { next.ok_or_else(|| TransportError::new("connecting", "no more connections")) }
    };
    let policy = RetryPolicy::default().max_retries(3).initial_delay(Duration::from_millis(5));
    let mut builder = Client::builder().reconnect(policy);
    let events = builder.notifications();
    let (client, ()) = tokio::join!(builder.connect_with(connect), handshake(&mut server1));
    (client.unwrap(), server1, server2, events)
}

/// `thread/start` of thread `id` (without turns).
async fn start_thread(client: &Client, server: &mut ServerEnd, id: &str) -> ThreadHandle {
    let (thread, ()) = tokio::join!(client.thread_start(ThreadStartParams::default()), async {
        let request = recv(server).await;
        answer(server, &request, thread_result(id, json!([]))).await;
    });
    thread.unwrap()
}

/// Cuts the first connection; plays the second's handshake; returns the resume request.
async fn cut(server1: ServerEnd, server2: &mut ServerEnd, thread: &str) -> Value {
    drop(server1);
    handshake(server2).await;
    let resume = recv(server2).await;
    assert_eq!((resume["method"].as_str(), &resume["params"]), (Some("thread/resume"), &json!({"threadId": thread})));
    resume
}

async fn next_reconnect_event(events: &mut Notifications) -> Event {
    loop {
        let event = tokio::time::timeout(T, events.next()).await.unwrap().expect("open");
        if matches!(event, Event::Reconnected(_) | Event::ThreadDetached { .. }) {
            return event;
        }
    }
}

#[tokio::test]
async fn a_refused_resume_ends_the_threads_turns_detaches_it_and_new_turns_fail_at_once() {
    let (client, mut server1, mut server2, mut events) = connect().await;
    let thread = start_thread(&client, &mut server1, "t").await;
    let (turn, ()) = tokio::join!(thread.turn("hi"), async {
        let request = recv(&mut server1).await;
        answer(&mut server1, &request, json!({"turn": turn_json("u", "inProgress", json!([]))})).await;
    });
    let mut turn = turn.unwrap();
    server1.send(delta("t", "u", "Hel")).await.unwrap();
    let resume = cut(server1, &mut server2, "t").await;
    let refusal = json!({"code": -32600, "message": "no rollout found for thread id t"});
    server2.send(json!({"id": resume["id"], "error": refusal}).to_string()).await.unwrap();

    let outcome = tokio::time::timeout(T, turn.wait()).await.expect("the turn ends");
    match outcome {
        Err(ClientError::ThreadDetached { thread_id, message }) => {
            assert_eq!((thread_id.as_str(), message.as_str()), ("t", "no rollout found for thread id t"));
        }
        other => panic!("{other:?}"),
    }
    match next_reconnect_event(&mut events).await {
        Event::ThreadDetached { thread_id, message } => assert_eq!((thread_id.as_str(), message.as_str()), ("t", "no rollout found for thread id t")),
        other => panic!("{other:?}"),
    }
    assert!(matches!(next_reconnect_event(&mut events).await, Event::Reconnected(1)));
    assert!(!thread.is_attached());
    assert_eq!(thread.detached().as_deref(), Some("no rollout found for thread id t"));
    // A new turn fails at once, without a request: the next line the server sees is this one.
    let again = tokio::time::timeout(T, thread.turn("again")).await.expect("at once");
    assert!(matches!(again, Err(ClientError::ThreadDetached { .. })), "{again:?}");
    let typed = client.start_turn(TurnStartParams::new(vec![], "t".into())).await;
    assert!(matches!(typed, Err(ClientError::ThreadDetached { .. })), "{typed:?}");
    // Resumed by the caller, it is attached again.
    let (resumed, ()) = tokio::join!(client.thread_resume("t"), async {
        let request = recv(&mut server2).await;
        assert_eq!(request["method"], "thread/resume");
        answer(&mut server2, &request, thread_result("t", json!([turn_json("u", "interrupted", json!([]))]))).await;
    });
    assert!(resumed.unwrap().is_attached());
    assert!(thread.is_attached());
    let stats = client.connection_stats().await.unwrap();
    assert_eq!((stats.internal_requests, stats.routed_turns, stats.pending_requests), (0, 0, 0), "{stats:?}");
}

#[tokio::test]
async fn a_turn_that_ended_while_the_connection_was_down_ends_with_the_status_and_items_of_the_resume_answer() {
    let (client, mut server1, mut server2, mut events) = connect().await;
    let thread = start_thread(&client, &mut server1, "t").await;
    let running = tokio::spawn({
        let thread = thread.clone();
        async move { thread.run("hi").await }
    });
    let request = recv(&mut server1).await;
    answer(&mut server1, &request, json!({"turn": turn_json("u", "inProgress", json!([]))})).await;
    server1.send(delta("t", "u", "Hel")).await.unwrap();
    let resume = cut(server1, &mut server2, "t").await;
    let user = json!({"type": "userMessage", "id": "q", "clientId": null, "content": [{"type": "text", "text": "hi", "text_elements": []}], "startedAtMs": 0, "completedAtMs": 0});
    let items = json!([user, agent_message("m", "Hello")]);
    answer(&mut server2, &resume, thread_result("t", json!([turn_json("u", "completed", items)]))).await;
    assert!(matches!(next_reconnect_event(&mut events).await, Event::Reconnected(1)));
    let run = tokio::time::timeout(T, running).await.expect("run ends").unwrap().unwrap();
    assert_eq!(run.final_response, "Hello");
    assert_eq!(run.items.len(), 2);
    assert_eq!(run.turn.status, TurnStatus::Completed);
    assert!(thread.is_attached());
    // A turn the answer reports still running goes on with the events that follow.
    let (turn, ()) = tokio::join!(thread.turn("more"), async {
        let request = recv(&mut server2).await;
        answer(&mut server2, &request, json!({"turn": turn_json("v", "inProgress", json!([]))})).await;
    });
    let mut turn = turn.unwrap();
    server2.send(turn_completed("t", "v")).await.unwrap();
    assert_eq!(tokio::time::timeout(T, turn.wait()).await.unwrap().unwrap().status, TurnStatus::Completed);
}

#[tokio::test]
async fn a_failed_turn_reported_by_the_resume_answer_fails_its_handle() {
    let (client, mut server1, mut server2, _events) = connect().await;
    let thread = start_thread(&client, &mut server1, "t").await;
    let (turn, ()) = tokio::join!(thread.turn("hi"), async {
        let request = recv(&mut server1).await;
        answer(&mut server1, &request, json!({"turn": turn_json("u", "inProgress", json!([]))})).await;
    });
    let mut turn = turn.unwrap();
    let resume = cut(server1, &mut server2, "t").await;
    let mut failed = turn_json("u", "failed", json!([]));
    failed["error"] = json!({"message": "upstream failed", "codexErrorInfo": null, "additionalDetails": null});
    answer(&mut server2, &resume, thread_result("t", json!([failed]))).await;
    match tokio::time::timeout(T, turn.wait()).await.expect("the turn ends") {
        Err(ClientError::TurnFailed(failure)) => assert_eq!(failure.message.as_deref(), Some("upstream failed")),
        other => panic!("{other:?}"),
    }
}

#[tokio::test]
async fn a_thread_without_turns_that_the_server_cannot_resume_stays_usable_and_is_resumed_after_its_next_turn() {
    let (client, server1, mut server2, mut events) = connect().await;
    let mut server1 = server1;
    let thread = start_thread(&client, &mut server1, "t").await;
    let resume = cut(server1, &mut server2, "t").await;
    let refusal = json!({"code": -32600, "message": "no rollout found for thread id t"});
    server2.send(json!({"id": resume["id"], "error": refusal}).to_string()).await.unwrap();
    // Nothing of it was lost: not detached.
    assert!(matches!(next_reconnect_event(&mut events).await, Event::Reconnected(1)));
    assert!(thread.is_attached());
    let (turn, ()) = tokio::join!(thread.turn("hi"), async {
        let request = recv(&mut server2).await;
        assert_eq!(request["method"], "turn/start");
        answer(&mut server2, &request, json!({"turn": turn_json("u", "inProgress", json!([]))})).await;
    });
    let mut turn = turn.unwrap();
    // Now that it has a turn, the client resumes it; the answer says the turn still runs.
    let resume = recv(&mut server2).await;
    assert_eq!((resume["method"].as_str(), &resume["params"]), (Some("thread/resume"), &json!({"threadId": "t"})));
    answer(&mut server2, &resume, thread_result("t", json!([turn_json("u", "inProgress", json!([]))]))).await;
    server2.send(delta("t", "u", "Hello")).await.unwrap();
    server2.send(turn_completed("t", "u")).await.unwrap();
    let mut text = String::new();
    while let Some(event) = tokio::time::timeout(T, turn.next()).await.unwrap() {
        if let Some(ServerNotification::ItemAgentMessageDelta { params, .. }) = event.notification() {
            text.push_str(&params.delta);
        }
    }
    assert_eq!(text, "Hello");
    assert_eq!(turn.wait().await.unwrap().status, TurnStatus::Completed);
    drop(turn);
    let stats = client.connection_stats().await.unwrap();
    assert_eq!((stats.internal_requests, stats.routed_turns, stats.subscribed_threads), (0, 0, 1), "{stats:?}");
}
/// A fresh thread whose connection was cut before its first turn (its resume refused: nothing
/// was written for it yet), then a turn started on it, answered in progress: the thread, the
/// new server end, the running turn and the `thread/resume` the client then sends.
async fn first_turn_after_a_reconnect(
    text: &'static str,
) -> (Client, ThreadHandle, ServerEnd, tokio::task::JoinHandle<Result<RunResult, ClientError>>, Value) {
    let (client, mut server1, mut server2, mut events) = connect().await;
    let thread = start_thread(&client, &mut server1, "t").await;
    let resume = cut(server1, &mut server2, "t").await;
    server2.send(json!({"id": resume["id"], "error": {"code": -32600, "message": "no rollout found"}}).to_string()).await.unwrap();
    assert!(matches!(next_reconnect_event(&mut events).await, Event::Reconnected(1)));
    let running = tokio::spawn({
        let thread = thread.clone();
        async move { thread.run(text).await }
    });
    let request = recv(&mut server2).await;
    assert_eq!(request["method"], "turn/start");
    answer(&mut server2, &request, json!({"turn": turn_json("u", "inProgress", json!([]))})).await;
    let resume = recv(&mut server2).await;
    assert_eq!(resume["method"], "thread/resume");
    (client, thread, server2, running, resume)
}

#[tokio::test]
async fn a_first_turn_whose_resume_is_refused_while_it_runs_is_ended_by_the_resume_sent_when_its_thread_is_idle() {
    let (_client, thread, mut server2, running, resume) = first_turn_after_a_reconnect("hi").await;
    // Refused while the turn runs: the client waits for the thread to be idle.
    server2.send(json!({"id": resume["id"], "error": {"code": -32600, "message": "list_turns is not supported yet"}}).to_string()).await.unwrap();
    let status = |status: &str| json!({"method": "thread/status/changed", "params": {"threadId": "t", "status": {"type": status, "activeFlags": []}}}).to_string();
    server2.send(status("active")).await.unwrap();
    server2.send(status("idle")).await.unwrap();
    let resume = recv(&mut server2).await;
    assert_eq!((resume["method"].as_str(), &resume["params"]), (Some("thread/resume"), &json!({"threadId": "t"})));
    answer(&mut server2, &resume, thread_result("t", json!([turn_json("u", "completed", json!([agent_message("m", "Hello")]))]))).await;
    let run = tokio::time::timeout(T, running).await.expect("run ends").unwrap().unwrap();
    assert_eq!(run.final_response, "Hello");
    assert!(thread.is_attached());
}

/// The flake of `real::a_fresh_thread_survives_a_reconnect_...`, in memory: after a reconnect a
/// fresh thread's first turn starts while the connection is not subscribed to the thread; the
/// client resumes the thread once `turn/start` is answered, and the real codex, on a busy
/// machine, answers that resume after the turn's agent message completed (sent to no
/// connection) but before the turn ended: the answer lists the turn in progress, with that
/// message among its items. Its handle gets the items the answer lists that its stream did not
/// have, each once (also when the server sends the item's `item/completed` after all).
#[tokio::test]
async fn a_turn_in_progress_in_the_resume_answer_gets_the_items_it_completed_before_it() {
    for completed_again in [false, true] {
        let (_client, _thread, mut server2, running, resume) = first_turn_after_a_reconnect("Are you there?").await;
        let user = json!({"type": "userMessage", "id": "q", "clientId": null, "content": [{"type": "text", "text": "Are you there?", "text_elements": []}], "startedAtMs": 0, "completedAtMs": 0});
        let items = json!([user, agent_message("m", "still here")]);
        answer(&mut server2, &resume, thread_result("t", json!([turn_json("u", "inProgress", items)]))).await;
        if completed_again {
            let params = json!({"threadId": "t", "turnId": "u", "item": agent_message("m", "still here"), "completedAtMs": 0});
            server2.send(json!({"method": "item/completed", "params": params}).to_string()).await.unwrap();
        }
        server2.send(turn_completed("t", "u")).await.unwrap();
        let run = tokio::time::timeout(T, running).await.expect("run ends").unwrap().unwrap();
        assert_eq!(run.final_response, "still here", "completed again: {completed_again}");
        assert_eq!(run.items.len(), 2, "each item once: {:?}", run.items);
        assert_eq!(run.turn.status, TurnStatus::Completed);
    }
}

/// codex may answer the `thread/resume` the client sends after a fresh thread's first
/// `turn/start` before it begins the turn: the answer lists the turn `interrupted` without
/// `completedAt`, then `turn/started` and the turn's events follow. The turn goes on with them
/// (it used to end at once, empty and interrupted, while the server ran it: recorded from codex
/// 0.171.0 on a busy machine).
#[tokio::test]
async fn a_turn_a_resume_answer_reports_interrupted_before_it_began_goes_on_with_its_events() {
    let (_client, _thread, mut server2, running, resume) = first_turn_after_a_reconnect("Are you there?").await;
    answer(&mut server2, &resume, thread_result("t", json!([turn_json("u", "interrupted", json!([]))]))).await;
    let started = json!({"method": "turn/started", "params": {"threadId": "t", "turn": turn_json("u", "inProgress", json!([]))}});
    server2.send(started.to_string()).await.unwrap();
    let params = json!({"threadId": "t", "turnId": "u", "item": agent_message("m", "still here"), "completedAtMs": 0});
    server2.send(json!({"method": "item/completed", "params": params}).to_string()).await.unwrap();
    server2.send(turn_completed("t", "u")).await.unwrap();
    let run = tokio::time::timeout(T, running).await.expect("run ends").unwrap().unwrap();
    assert_eq!((run.final_response.as_str(), run.turn.status), ("still here", TurnStatus::Completed));
}

/// A turn a resume's answer reports `interrupted` without `completedAt`, of which no event
/// comes (its server went away before it ended), ends as reported once the late grace period
/// is over (time is paused: the wait takes none).
#[tokio::test(start_paused = true)]
async fn a_turn_a_resume_answer_reports_interrupted_without_an_end_ends_so_when_nothing_of_it_follows() {
    let (_client, _thread, mut server2, running, resume) = first_turn_after_a_reconnect("Are you there?").await;
    let items = json!([agent_message("m", "half")]);
    answer(&mut server2, &resume, thread_result("t", json!([turn_json("u", "interrupted", items)]))).await;
    let run = tokio::time::timeout(Duration::from_secs(60), running).await.expect("run ends").unwrap().unwrap();
    assert_eq!((run.final_response.as_str(), run.turn.status), ("half", TurnStatus::Interrupted));
}

/// Sends on its channel when dropped.
struct DropSignal(tokio::sync::mpsc::UnboundedSender<&'static str>);

impl Drop for DropSignal {
    fn drop(&mut self) {
        let _ = self.0.send("dropped");
    }
}

/// A client whose connection dropped and whose reconnect's connect never completes, once it is
/// connecting; the channel says "connecting", then "dropped" when the connect future is dropped.
async fn reconnecting_forever() -> (Client, tokio::sync::mpsc::UnboundedReceiver<&'static str>) {
    let (first, mut server1) = MemoryTransport::pair(64);
    let first = Arc::new(Mutex::new(Some(first)));
    let (said, mut says) = tokio::sync::mpsc::unbounded_channel();
    let connect = move || {
        let (next, said) = (first.lock().unwrap().take(), said.clone());
        async move {
            match next {
                Some(transport) => Ok(transport),
                None => {
                    let _ = said.send("connecting");
                    let _dropped = DropSignal(said);
                    std::future::pending().await
                }
            }
        }
    };
    let policy = RetryPolicy::default().max_retries(3).initial_delay(Duration::from_millis(5));
    let (client, ()) = tokio::join!(Client::builder().reconnect(policy).connect_with(connect), handshake(&mut server1));
    drop(server1);
    assert_eq!(tokio::time::timeout(T, says.recv()).await.expect("the reconnect connects"), Some("connecting"));
    (client.unwrap(), says)
}

/// A shutdown while a reconnect's connect does not complete ends the connection at once: the
/// attempt is dropped, nothing waits for it, and what is asked afterwards fails as closed.
#[tokio::test]
async fn a_shutdown_while_a_reconnect_cannot_connect_ends_at_once() {
    let (client, mut says) = reconnecting_forever().await;
    // A minute allowed: only an attempt that holds the shutdown up would take it.
    let exit = tokio::time::timeout(T, client.shutdown(Duration::from_secs(60))).await.expect("ends at once");
    assert_eq!(exit.reason, ExitReason::EndOfStream, "why the connection had dropped");
    assert_eq!(says.recv().await, Some("dropped"), "the attempt is dropped");
    let after = client.thread_start(ThreadStartParams::default()).await;
    assert!(matches!(after, Err(ClientError::Closed)), "{after:?}");
}

/// Every handle dropped while a reconnect's connect does not complete: the connection ends
/// and drops the attempt (nothing of it is left running).
#[tokio::test]
async fn dropping_the_client_while_a_reconnect_cannot_connect_drops_the_attempt() {
    let (client, mut says) = reconnecting_forever().await;
    drop(client);
    let said = tokio::time::timeout(T, says.recv()).await.expect("the attempt is dropped");
    assert_eq!(said, Some("dropped"));
}

/// A reconnect's server that never answers `initialize` is given up on after the handshake's
/// time, and the next attempt connects (time is paused: the wait takes none).
#[tokio::test(start_paused = true)]
async fn a_reconnect_whose_initialize_is_not_answered_is_given_up_and_the_next_attempt_connects() {
    let (first, mut server1) = MemoryTransport::pair(64);
    let (second, mut server2) = MemoryTransport::pair(64);
    let (third, mut server3) = MemoryTransport::pair(64);
    let transports = Arc::new(Mutex::new(vec![third, second, first]));
    let connect = move || {
        let next = transports.lock().unwrap().pop();
        async move { next.ok_or_else(|| TransportError::new("connecting", "no more connections")) }
    };
    let policy = RetryPolicy::default().max_retries(3).initial_delay(Duration::from_millis(5));
    let mut builder = Client::builder().reconnect(policy);
    let mut events = builder.notifications();
    let (client, ()) = tokio::join!(builder.connect_with(connect), handshake(&mut server1));
    let client = client.unwrap();
    drop(server1);
    assert_eq!(recv(&mut server2).await["method"], "initialize");
    // Unanswered: the client ends that connection once the handshake's time is up.
    let long = Duration::from_secs(60);
    assert_eq!(tokio::time::timeout(long, server2.recv()).await.expect("the client ends it"), None);
    let init = tokio::time::timeout(long, server3.recv_json()).await.expect("the next attempt").unwrap();
    assert_eq!(init["id"], "reconnect-2-initialize");
    let result = json!({"userAgent": format!("test/{CODEX_VERSION} (test)"), "codexHome": "/tmp/h", "platformFamily": "unix", "platformOs": "linux"});
    answer(&mut server3, &init, result).await;
    assert_eq!(recv(&mut server3).await["method"], "initialized");
    assert!(matches!(next_reconnect_event(&mut events).await, Event::Reconnected(2)));
    let (listed, ()) = tokio::join!(client.request_raw("thread/list", json!({})), async {
        let request = recv(&mut server3).await;
        answer(&mut server3, &request, json!({"data": [], "nextCursor": null})).await;
    });
    assert!(listed.is_ok(), "{listed:?}");
}
}
