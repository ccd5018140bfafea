//! Cancellation and lag, on the public API against a server played in memory.
//!
//! - Every public future of the client is dropped at each of its await points (polled N
//!   times, N = 0, 1, 2, ... until it completes), and each time the connection must hold
//!   nothing for it ([`Client::connection_stats`]: no pending request, no routed turn, no
//!   early event, no stream, no queued event or line) and still answer a request.
//! - A handle that waits for a terminal event gets it however far its stream fell behind:
//!   `LoginHandle::wait`, `TurnHandle::wait`, `ThreadHandle::run` (which says when completed
//!   items were lost).
//! - A panic in the connection's loop or writer ends every handle at once; a slow tap never
//!   holds up the connection.
//!
//! Written against the types of the vendored codex release (see `written_for_codex!`).

codex_app_client::protocol::__test_support::written_for_codex! { "0.171.0",

use std::future::Future;
use std::pin::Pin;
use std::task::Poll;
use std::time::Duration;

use codex_app_client::protocol::*;
use codex_app_client::transport::memory::{MemoryTransport, ServerEnd};
use codex_app_client::*;
use serde_json::{json, Value};

const T: Duration = Duration::from_secs(5);

/// The results the pinned release gave in the recorded sessions, by method.
fn recorded(method: &str) -> Value {
    let sessions = [
        include_str!("../../traffic/fixtures/0.171.0/lifecycle.ndjson"),
        include_str!("../../traffic/fixtures/0.171.0/streaming.ndjson"),
    ];
    for session in sessions {
        let mut methods = std::collections::HashMap::new();
        for entry in session.lines() {
            let entry: Value = serde_json::from_str(entry).unwrap();
            let line: Value = serde_json::from_str(entry["line"].as_str().unwrap()).unwrap();
            match (entry["dir"].as_str(), line.get("method")) {
                (Some("c2s"), Some(m)) if line.get("id").is_some() => {
                    methods.insert(line["id"].to_string(), m.as_str().unwrap().to_owned());
                }
                (Some("s2c"), None) if methods.get(&line["id"].to_string()).is_some_and(|m| m == method) => {
                    return line["result"].clone();
                }
                _ => {}
            }
        }
    }
    panic!("no recorded result of {method}")
}

fn turn_json(id: &str, status: &str) -> Value {
    json!({"id": id, "rootTurnId": id, "items": [], "itemsView": "notLoaded", "status": status, "error": null,
           "startedAt": null, "completedAt": null, "durationMs": null})
}

fn agent_message(thread: &str, turn: &str, item: &str, text: &str) -> String {
    let item = json!({"type": "agentMessage", "moderation": null, "id": item, "text": text, "phase": null,
                      "memoryCitation": null, "delivery": null, "questions": null, "startedAtMs": 0, "completedAtMs": 0});
    json!({"method": "item/completed", "params": {"item": item, "threadId": thread, "turnId": turn, "completedAtMs": 0}}).to_string()
}

fn delta(thread: &str, turn: &str, item: &str, text: &str) -> String {
    json!({"method": "item/agentMessage/delta", "params": {"threadId": thread, "turnId": turn, "itemId": item, "delta": text}}).to_string()
}

fn output_delta(thread: &str, turn: &str, item: &str) -> String {
    json!({"method": "item/commandExecution/outputDelta", "params": {"threadId": thread, "turnId": turn, "itemId": item, "delta": "x"}}).to_string()
}

fn command_started(thread: &str, turn: &str, item: &str) -> String {
    let item = json!({"type": "commandExecution", "id": item, "pluginId": null, "scriptPath": null, "command": "sleep 1",
                      "cwd": "/w", "processId": null, "source": "agent", "status": "inProgress", "commandActions": [],
                      "aggregatedOutput": null, "exitCode": null, "durationMs": null, "startedAtMs": 0, "completedAtMs": null});
    json!({"method": "item/started", "params": {"item": item, "threadId": thread, "turnId": turn, "startedAtMs": 0}}).to_string()
}

fn turn_completed(thread: &str, turn: &str) -> String {
    json!({"method": "turn/completed", "params": {"threadId": thread, "turn": turn_json(turn, "completed")}}).to_string()
}

fn login_completed(login: &str) -> String {
    json!({"method": "account/login/completed", "params": {"loginId": login, "success": true, "error": null}}).to_string()
}

async fn handshake(server: &mut ServerEnd) {
    let init = server.recv_json().await.expect("initialize");
    server.send(json!({"id": init["id"], "result": recorded("initialize")}).to_string()).await.unwrap();
    assert_eq!(server.recv_json().await.expect("initialized")["method"], "initialized");
}

async fn connect_with(builder: ClientBuilder) -> (Client, ServerEnd) {
    let (transport, mut server) = MemoryTransport::pair(64);
    let (client, ()) = tokio::join!(builder.connect(transport), handshake(&mut server));
    (client.expect("connect"), server)
}

/// The thread whose turns [`serve`] starts and never plays.
const SILENT: &str = "silent";

/// A server that answers every request: a `turn/start` with the whole turn after its answer
/// (a delta, an agent message and `turn/completed`; nothing on the thread [`SILENT`]), a login
/// with its completion. It sends one
/// line per `steps` message, so each line reaches the client at a poll of its own; once `steps`
/// is closed, it answers without waiting, and no longer sends the rest of what it was playing
/// (so a turn whose future was dropped never completes: only the client can release it).
async fn serve(mut server: ServerEnd, mut steps: tokio::sync::mpsc::UnboundedReceiver<()>) {
    let mut turns = 0;
    while let Some(request) = server.recv_json().await {
        let Some(id) = request.get("id").cloned() else { continue };
        let method = request["method"].as_str().unwrap_or_default().to_owned();
        let thread = request["params"]["threadId"].as_str().unwrap_or("t").to_owned();
        let mut then = Vec::new();
        let result = match method.as_str() {
            "thread/start" | "thread/resume" | "thread/fork" | "thread/unarchive" => recorded("thread/start"),
            "thread/read" => recorded("thread/read"),
            "thread/list" => recorded("thread/list"),
            "model/list" => recorded("model/list"),
            "account/read" => json!({"account": null, "requiresOpenaiAuth": true}),
            "turn/start" => {
                turns += 1;
                let turn = format!("turn-{turns}");
                if thread != SILENT {
                    then.push(delta(&thread, &turn, "m", "Hel"));
                    then.push(agent_message(&thread, &turn, "m", "Hello"));
                    then.push(turn_completed(&thread, &turn));
                }
                json!({"turn": turn_json(&turn, "inProgress")})
            }
            "turn/steer" => json!({"turnId": request["params"]["expectedTurnId"]}),
            "account/login/start" => {
                then.push(login_completed("login-1"));
                json!({"type": "chatgpt", "loginId": "login-1", "authUrl": "http://localhost/auth"})
            }
            _ => json!({}),
        };
        for (n, line) in std::iter::once(json!({"id": id, "result": result}).to_string()).chain(then).enumerate() {
            if steps.recv().await.is_none() && n > 0 {
                break;
            }
            if server.send(line).await.is_err() {
                return;
            }
        }
    }
}

/// Lets the connection, its writer and the server run until nothing moves.
async fn settle() {
    for _ in 0..64 {
        tokio::task::yield_now().await;
    }
}

type Make = fn(Client) -> Pin<Box<dyn Future<Output = ()>>>;

/// Every public future of the client, each made from a connected client (a future of a handle
/// starts with what makes the handle, so its await points include theirs).
fn futures() -> Vec<(&'static str, Make)> {
    async fn thread(client: &Client) -> ThreadHandle {
        client.thread_start(ThreadStartParams::default()).await.unwrap()
    }
    fn params() -> TurnStartParams {
        TurnStartParams::new(vec![UserInput::Text(TextUserInput::new("hi".into()))], "t".into())
    }
    #[allow(unused_mut)]
    let mut futures: Vec<(&'static str, Make)> = vec![
        ("Client::request", |c| Box::pin(async move { c.request::<request::ThreadStart>(ThreadStartParams::default()).await.unwrap(); })),
        ("Client::request_raw", |c| Box::pin(async move { c.request_raw("x/y", json!({})).await.unwrap(); })),
        ("Client::notify", |c| Box::pin(async move { c.notify::<client_notification::Initialized>(()).await.unwrap() })),
        ("Client::start_turn", |c| Box::pin(async move { drop(c.start_turn(params()).await.unwrap()) })),
        ("Client::connection_stats", |c| Box::pin(async move { c.connection_stats().await.unwrap(); })),
        ("Client::thread_start", |c| Box::pin(async move { drop(thread(&c).await) })),
        ("Client::thread_resume", |c| Box::pin(async move { c.thread_resume("t").await.unwrap(); })),
        ("Client::thread_resume_with", |c| Box::pin(async move { c.thread_resume_with(ThreadResumeParams::new("t".into())).await.unwrap(); })),
        ("Client::thread_fork", |c| Box::pin(async move { c.thread_fork("t").await.unwrap(); })),
        ("Client::thread_fork_with", |c| Box::pin(async move { c.thread_fork_with(ThreadForkParams::new("t".into())).await.unwrap(); })),
        ("Client::thread_list", |c| Box::pin(async move { c.thread_list(ThreadListParams::default()).await.unwrap(); })),
        ("Client::thread_archive", |c| Box::pin(async move { c.thread_archive("t").await.unwrap() })),
        ("Client::thread_unarchive", |c| Box::pin(async move { c.thread_unarchive("t").await.unwrap(); })),
        ("Client::login_api_key", |c| Box::pin(async move { c.login_api_key("sk-test").await.unwrap() })),
        ("Client::login_chatgpt", |c| Box::pin(async move { drop(c.login_chatgpt().await.unwrap()) })),
        ("Client::login_device_code", |c| Box::pin(async move { drop(c.login_device_code().await.unwrap()) })),
        ("Client::account", |c| Box::pin(async move { c.account().await.unwrap(); })),
        ("Client::logout", |c| Box::pin(async move { c.logout().await.unwrap() })),
        ("Client::models", |c| Box::pin(async move { c.models().await.unwrap(); })),
        ("ThreadHandle::turn", |c| Box::pin(async move { drop(thread(&c).await.turn("hi").await.unwrap()) })),
        ("ThreadHandle::turn_with", |c| Box::pin(async move { let t = thread(&c).await; drop(t.turn_with(t.turn_params("hi")).await.unwrap()) })),
        ("ThreadHandle::run", |c| Box::pin(async move { assert_eq!(thread(&c).await.run("hi").await.unwrap().final_response, "Hello") })),
        ("ThreadHandle::run_with", |c| Box::pin(async move { let t = thread(&c).await; assert_eq!(t.run_with(t.turn_params("hi")).await.unwrap().final_response, "Hello") })),
        ("ThreadHandle::run_with_options", |c| Box::pin(async move {
            let options = RunOptions::new().deadline(Duration::from_secs(60)).on_event(|_| {});
            assert_eq!(thread(&c).await.run_with_options("hi", options).await.unwrap().final_response, "Hello")
        })),
        // A turn of which nothing comes, run with a deadline that has passed: it is
        // interrupted (`turn/interrupt` awaited) and the run fails with the deadline.
        ("RunOptions::deadline", |c| Box::pin(async move {
            let silent = TurnStartParams { thread_id: SILENT.into(), ..params() };
            let result = c.start_turn(silent).await.unwrap().run(RunOptions::new().deadline(Duration::ZERO)).await;
            let Err(ClientError::TurnDeadline(deadline)) = result else { panic!("{result:?}") };
            assert!(deadline.interrupted, "{deadline}");
        })),
        ("TurnHandle::run", |c| Box::pin(async move {
            assert_eq!(c.start_turn(params()).await.unwrap().run(RunOptions::new()).await.unwrap().final_response, "Hello")
        })),
        ("trace::with_trace", |c| Box::pin(async move {
            let context = trace::TraceContext::new("00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01");
            trace::with_trace(context, c.request_raw("x/y", json!({}))).await.unwrap();
        })),
        ("ThreadHandle::read", |c| Box::pin(async move { thread(&c).await.read(true).await.unwrap(); })),
        ("ThreadHandle::set_name", |c| Box::pin(async move { thread(&c).await.set_name("n").await.unwrap() })),
        ("ThreadHandle::compact", |c| Box::pin(async move { thread(&c).await.compact().await.unwrap() })),
        ("ThreadHandle::archive", |c| Box::pin(async move { thread(&c).await.archive().await.unwrap() })),
        ("TurnHandle::next", |c| Box::pin(async move {
            let mut turn = c.start_turn(params()).await.unwrap();
            while turn.next().await.is_some() {}
        })),
        ("TurnHandle::wait", |c| Box::pin(async move { c.start_turn(params()).await.unwrap().wait().await.unwrap(); })),
        ("TurnHandle::interrupt", |c| Box::pin(async move { c.start_turn(params()).await.unwrap().interrupt().await.unwrap(); })),
        ("TurnHandle::steer", |c| Box::pin(async move { c.start_turn(params()).await.unwrap().steer(vec![]).await.unwrap(); })),
        ("LoginHandle::wait", |c| Box::pin(async move { c.login_chatgpt().await.unwrap().wait().await.unwrap() })),
        ("LoginHandle::cancel", |c| Box::pin(async move { c.login_chatgpt().await.unwrap().cancel().await.unwrap() })),
        ("Notifications::next", |c| Box::pin(async move {
            let mut events = c.notifications();
            c.request_raw("x/y", json!({})).await.unwrap();
            let _ = c.start_turn(params()).await.unwrap();
            events.next().await.unwrap();
        })),
    ];
    #[cfg(feature = "schemars")]
    futures.extend([
        ("Client::start_structured_turn", (|c| Box::pin(async move { drop(c.start_structured_turn::<Value>(params()).await.unwrap()) })) as Make),
        // The final message is not JSON: `result` says so; what matters is that it returns.
        ("StructuredTurn::result", |c| Box::pin(async move { let _ = c.start_structured_turn::<Value>(params()).await.unwrap().result().await; })),
    ]);
    futures
}

/// Polls `future` once.
async fn poll_once(future: &mut Pin<Box<dyn Future<Output = ()>>>) -> Poll<()> {
    std::future::poll_fn(|cx| Poll::Ready(future.as_mut().poll(cx))).await
}

/// Everything the connection holds for what was dropped is released, and it still answers.
async fn assert_released(client: &Client, what: &str) {
    // The commands the drop sent go before this request; the server's lines for what was
    // dropped come before its answer.
    let answered = tokio::time::timeout(T, client.request_raw("sync", json!({}))).await;
    assert!(matches!(answered, Ok(Ok(_))), "{what}: the connection no longer answers: {answered:?}");
    let stats = client.connection_stats().await.unwrap();
    let ConnectionStats { pending_requests, routed_turns, turn_starts, early_events, streams, queued_events,
                          queued_turn_events, queued_lines, server_requests, internal_requests, .. } = stats;
    assert_eq!(
        [pending_requests, routed_turns, turn_starts, early_events, streams, queued_events, queued_turn_events,
         queued_lines, server_requests, internal_requests],
        [0; 10],
        "{what}: {stats:?}"
    );
    assert_eq!(client.pending_requests(), 0, "{what}");
}

#[tokio::test]
async fn every_public_future_dropped_at_each_of_its_await_points_releases_everything() {
    let mut report = Vec::new();
    let (mut futures_covered, mut await_points, mut drops) = (0, 0, 0);
    for (name, make) in futures() {
        let mut points = None;
        for n in 0.. {
            let (client, server) = connect_with(Client::builder()).await;
            let (step, steps) = tokio::sync::mpsc::unbounded_channel();
            let serving = tokio::spawn(serve(server, steps));
            let mut future = make(client.clone());
            let mut ready = false;
            for _ in 0..n {
                if poll_once(&mut future).await.is_ready() {
                    ready = true;
                    break;
                }
                // The server's next line, handled by the connection before the next poll.
                step.send(()).unwrap();
                settle().await;
            }
            drop(future);
            drop(step);
            settle().await;
            assert_released(&client, &format!("{name} dropped after {n} polls")).await;
            drop(client);
            tokio::time::timeout(T, serving).await.expect("the server sees the end").unwrap();
            drops += 1;
            if ready {
                points = Some(n - 1);
                break;
            }
            assert!(n < 100, "{name} does not complete");
        }
        let points = points.unwrap();
        futures_covered += 1;
        await_points += points;
        report.push(format!("{name}: {points}"));
    }
    println!("{futures_covered} futures, {await_points} await points, {drops} drops: {}", report.join(", "));
    assert!(futures_covered >= 32 && await_points >= 60, "{futures_covered} futures, {await_points} await points");
}

#[tokio::test]
async fn a_turn_start_dropped_in_the_wake_up_of_its_answer_holds_nothing_while_its_turn_goes_on() {
    let (client, mut server) = connect_with(Client::builder()).await;
    let mut future = Box::pin(client.start_turn(TurnStartParams::new(vec![], "t".into())));
    assert!(std::future::poll_fn(|cx| Poll::Ready(future.as_mut().poll(cx).is_pending())).await);
    let request = server.recv_json().await.unwrap();
    server.send(json!({"id": request["id"], "result": {"turn": turn_json("u", "inProgress")}}).to_string()).await.unwrap();
    // The answer is handed over, and the future dropped before it reads it.
    settle().await;
    drop(future);
    for n in 0..10_000 {
        server.send(delta("t", "u", "m", &n.to_string())).await.unwrap();
    }
    let stats = client.connection_stats().await.unwrap();
    assert_eq!((stats.routed_turns, stats.queued_turn_events), (0, 0), "{stats:?}");
}

#[tokio::test]
async fn login_wait_gets_its_completion_however_far_its_stream_fell_behind() {
    let (client, mut server) = connect_with(Client::builder().notification_buffer(4)).await;
    let (login, ()) = tokio::join!(client.login_chatgpt(), async {
        let request = server.recv_json().await.unwrap();
        server.send(json!({"id": request["id"], "result": {"type": "chatgpt", "loginId": "l", "authUrl": "u"}}).to_string()).await.unwrap();
        server.send(login_completed("other")).await.unwrap();
        server.send(login_completed("l")).await.unwrap();
        for n in 0..100 {
            server.send(delta("t", "u", "m", &n.to_string())).await.unwrap();
        }
        for _ in 0..20 {
            server.send(login_completed("other")).await.unwrap();
        }
    });
    let login = login.unwrap();
    // Everything above was read before `wait` is called.
    assert_eq!(client.connection_stats().await.unwrap().streams, 1);
    let outcome = tokio::time::timeout(T, login.wait()).await.expect("wait resolves");
    assert!(outcome.is_ok(), "{outcome:?}");
}

#[tokio::test]
async fn turn_wait_returns_at_once_when_its_completion_was_pushed_out_of_the_stream() {
    let builder = Client::builder().turn_buffer(4).late_grace(Duration::from_secs(600));
    let (client, mut server) = connect_with(builder).await;
    let (turn, ()) = tokio::join!(client.start_turn(TurnStartParams::new(vec![], "t".into())), async {
        let request = server.recv_json().await.unwrap();
        server.send(json!({"id": request["id"], "result": {"turn": turn_json("u", "inProgress")}}).to_string()).await.unwrap();
        // A command that outlives the turn: its output comes after `turn/completed`.
        server.send(command_started("t", "u", "c")).await.unwrap();
        server.send(turn_completed("t", "u")).await.unwrap();
        for _ in 0..20 {
            server.send(output_delta("t", "u", "c")).await.unwrap();
        }
    });
    let mut turn = turn.unwrap();
    assert_eq!(client.connection_stats().await.unwrap().queued_turn_events, 4, "the stream fell behind");
    let completed = tokio::time::timeout(Duration::from_secs(1), turn.wait()).await.expect("wait returns at once");
    assert_eq!(completed.unwrap().status, TurnStatus::Completed);
    // What was not read is still there: the lag, then the newest output.
    assert!(matches!(turn.next().await, Some(Event::Lagged(18))));
}

#[tokio::test]
async fn run_keeps_every_item_through_lost_deltas_and_says_when_items_were_lost() {
    let (client, mut server) = connect_with(Client::builder().turn_buffer(4)).await;
    let (thread, ()) = tokio::join!(client.thread_start(ThreadStartParams::default()), async {
        let request = server.recv_json().await.unwrap();
        server.send(json!({"id": request["id"], "result": recorded("thread/start")}).to_string()).await.unwrap();
    });
    let thread = thread.unwrap();
    let id = thread.id().to_owned();
    // 60 deltas the reader falls behind on: nothing `run` returns is lost.
    let (run, ()) = tokio::join!(thread.run("hi"), async {
        let request = server.recv_json().await.unwrap();
        server.send(json!({"id": request["id"], "result": {"turn": turn_json("a", "inProgress")}}).to_string()).await.unwrap();
        for n in 0..60 {
            server.send(delta(&id, "a", "m", &n.to_string())).await.unwrap();
        }
        server.send(agent_message(&id, "a", "m", "the answer")).await.unwrap();
        server.send(turn_completed(&id, "a")).await.unwrap();
    });
    assert_eq!(run.unwrap().final_response, "the answer");
    // Ten completed items for a buffer of four: `run` says so rather than return six.
    let (run, ()) = tokio::join!(thread.run("hi"), async {
        let request = server.recv_json().await.unwrap();
        server.send(json!({"id": request["id"], "result": {"turn": turn_json("b", "inProgress")}}).to_string()).await.unwrap();
        for n in 0..10 {
            server.send(agent_message(&id, "b", &format!("m{n}"), "part")).await.unwrap();
        }
        server.send(turn_completed(&id, "b")).await.unwrap();
    });
    match run {
        Err(ClientError::ItemsLost { turn_id, lost, turn, .. }) => {
            assert_eq!((turn_id.as_str(), turn["status"].as_str()), ("b", Some("completed")));
            assert!(lost >= 6, "{lost}");
        }
        other => panic!("{other:?}"),
    }
}
/// A transport whose receiving or sending half panics once the client sends `x/panic`: a bug
/// in a transport's code, run on the connection's tasks.
mod panicking {
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::Arc;

    use codex_app_client::transport::memory::{MemorySender, MemoryReceiver, MemoryTransport};
    use codex_app_client::transport::{LineReceiver, LineSender, Transport};

    pub struct Panicking {
        pub inner: MemoryTransport,
        /// `true`: the reading half panics; `false`: the writing half.
        pub reader: bool,
    }

    pub struct Sender(MemorySender, bool, Arc<AtomicBool>);
    pub struct Receiver(MemoryReceiver, Arc<AtomicBool>);

    impl Transport for Panicking {
        type Sender = Sender;
        type Receiver = Receiver;
        fn split(self) -> (Sender, Receiver) {
            let (s, r) = self.inner.split();
            let armed = Arc::new(AtomicBool::new(false));
            (Sender(s, self.reader, armed.clone()), Receiver(r, armed))
        }
    }

    impl LineSender for Sender {
        async fn send(&mut self, line: String) -> std::io::Result<()> {
            if line.contains("x/panic") {
                assert!(self.1, "a bug in the transport's writing half");
                self.2.store(true, Ordering::Relaxed);
            }
            self.0.send(line).await
        }
        async fn close(&mut self) -> std::io::Result<()> {
            self.0.close().await
        }
    }

    impl LineReceiver for Receiver {
        async fn recv(&mut self) -> std::io::Result<Option<String>> {
            let line = self.0.recv().await?;
            assert!(!self.1.load(Ordering::Relaxed), "a bug in the transport's reading half");
            Ok(line)
        }
    }
}

#[tokio::test]
async fn a_panic_in_the_connection_loop_or_its_writer_ends_every_handle_at_once_with_the_reason() {
    for reader in [true, false] {
        let (transport, mut server) = MemoryTransport::pair(64);
        let transport = panicking::Panicking { inner: transport, reader };
        let (client, ()) = tokio::join!(Client::builder().connect(transport), handshake(&mut server));
        let client = client.unwrap();
        let thread_params = TurnStartParams::new(vec![], "t".into());
        let (turn, ()) = tokio::join!(client.start_turn(thread_params), async {
            let request = server.recv_json().await.unwrap();
            server.send(json!({"id": request["id"], "result": {"turn": turn_json("u", "inProgress")}}).to_string()).await.unwrap();
        });
        let mut turn = turn.unwrap();
        let waiting = tokio::spawn({
            let client = client.clone();
            async move { client.request_raw("x/wait", json!({})).await }
        });
        assert_eq!(server.recv_json().await.unwrap()["method"], "x/wait");
        // The request that makes the transport panic; the server's next line reaches the reader.
        let panicked = client.request_raw("x/panic", json!({}));
        let (outcome, ()) = tokio::join!(tokio::time::timeout(T, panicked), async {
            if reader {
                assert_eq!(server.recv_json().await.unwrap()["method"], "x/panic");
                server.send(delta("t", "u", "m", "x")).await.unwrap();
            }
        });
        let is_panic = |e: &ClientError| matches!(e, ClientError::ServerExited(exit) if matches!(&exit.reason, ExitReason::Panicked(why) if why.contains("panicked") && why.contains("a bug in the transport")));
        let outcome = outcome.expect("the request ends at once");
        assert!(outcome.as_ref().is_err_and(is_panic), "reader {reader}: {outcome:?}");
        let outcome = tokio::time::timeout(T, waiting).await.unwrap().unwrap();
        assert!(outcome.as_ref().is_err_and(is_panic), "reader {reader}: {outcome:?}");
        let ended = tokio::time::timeout(T, turn.wait()).await.expect("the turn ends at once");
        assert!(ended.as_ref().is_err_and(is_panic), "reader {reader}: {ended:?}");
        let exit = tokio::time::timeout(T, client.shutdown(Duration::from_secs(60))).await.expect("shutdown returns at once");
        assert!(matches!(&exit.reason, ExitReason::Panicked(_)), "reader {reader}: {exit:?}");
    }
}
#[tokio::test]
async fn a_slow_tap_never_holds_up_the_connection_and_what_it_drops_is_counted() {
    // A sink that does not write until the session is over: however fast or slow the machine
    // runs the session, the tap's queue fills.
    let stuck = std::sync::Arc::new((std::sync::Mutex::new(true), std::sync::Condvar::new()));
    let tap = Tap::new(StuckDisk(stuck.clone()));
    let (client, mut server) = connect_with(Client::builder().tap(tap.clone())).await;
    let started = std::time::Instant::now();
    let (answer, ()) = tokio::join!(client.request_raw("x/y", json!({})), async {
        let request = server.recv_json().await.unwrap();
        for n in 0..10_000 {
            server.send(delta("t", "u", "m", &n.to_string())).await.unwrap();
        }
        server.send(json!({"id": request["id"], "result": {}}).to_string()).await.unwrap();
    });
    answer.unwrap();
    // The loop never waits for the sink.
    assert!(started.elapsed() < Duration::from_secs(10), "{:?}", started.elapsed());
    let stats = client.connection_stats().await.unwrap();
    assert!(stats.tap_dropped > 0, "{stats:?}");
    assert_eq!(stats.tap_dropped, tap.dropped());
    *stuck.0.lock().unwrap() = false;
    stuck.1.notify_all();
}

/// A sink whose writes wait while its flag is set: a disk that stopped.
struct StuckDisk(std::sync::Arc<(std::sync::Mutex<bool>, std::sync::Condvar)>);

impl std::io::Write for StuckDisk {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let (stuck, changed) = &*self.0;
        let _open = changed.wait_while(stuck.lock().unwrap(), |stuck| *stuck).unwrap();
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}
}
