//! What a turn waits for: codex's reports while it retries (`error` with `willRetry: true`)
//! reach the turn's reader, the log and `run`'s callback, and a deadline given to `run` ends
//! the wait with an error that names them. Against a server played in memory.
//!
//! Written against the types of the vendored codex release; after a regen from a release out
//! of the range these tests are left out and one test says so (see `written_for_codex!`).

codex_app_client::protocol::__test_support::written_for_codex! { "0.171.0",

use std::sync::{Arc, Mutex};
use std::time::Duration;

use codex_app_client::transport::memory::ServerEnd;
use codex_app_client::*;
use serde_json::json;

use crate::scripted::{answer, connect, thread_json, turn_json, T};

/// Thread `t1` with turn `u1` started.
async fn started(server: &mut ServerEnd) {
    answer(server, "thread/resume", json!({"thread": thread_json("t1")})).await;
    answer(server, "turn/start", json!({"turn": turn_json("u1", "inProgress")})).await;
    let started = json!({"method": "turn/started", "params": {"threadId": "t1", "turn": turn_json("u1", "inProgress")}, "emittedAtMs": 0});
    server.send(started.to_string()).await.unwrap();
}

/// codex's report of a retry (as codex 0.171.0 sends it offline).
fn retry(message: &str, will_retry: bool) -> String {
    json!({"method": "error", "params": {"error": {"message": message, "codexErrorInfo": "other",
           "additionalDetails": "error sending request for url (http://127.0.0.1:9/v1/responses)", "misalignment": null},
           "willRetry": will_retry, "threadId": "t1", "turnId": "u1"}, "emittedAtMs": 0}).to_string()
}

/// A writer that keeps what the `tracing` subscriber writes.
#[derive(Clone, Default)]
struct Log(Arc<Mutex<Vec<u8>>>);

impl std::io::Write for Log {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl Log {
    fn text(&self) -> String {
        String::from_utf8_lossy(&self.0.lock().unwrap()).into_owned()
    }
}

/// Two retries, then nothing: the callback sees both, the log warns of both, the deadline
/// interrupts the turn and its error names the last report.
#[tokio::test]
async fn a_deadline_names_the_retry_the_turn_waits_for_and_interrupts_it() {
    let log = Log::default();
    let writer = log.clone();
    let subscriber = tracing_subscriber::fmt().with_writer(move || writer.clone()).with_ansi(false).finish();
    let _guard = tracing::subscriber::set_default(subscriber);

    let (client, mut server) = connect().await;
    let seen = Arc::new(Mutex::new(Vec::new()));
    let run = async {
        let thread = client.thread_resume("t1").await.expect("thread/resume");
        let seen = seen.clone();
        let options = RunOptions::new().deadline(Duration::from_millis(400)).on_event(move |event| {
            if let Some(retrying) = event.retrying() {
                seen.lock().unwrap().push(retrying.to_string());
            }
        });
        thread.run_with_options("What is 2+2?", options).await
    };
    let play = async {
        started(&mut server).await;
        server.send(retry("Reconnecting... 2/5", true)).await.unwrap();
        server.send(retry("Reconnecting... waiting for network", true)).await.unwrap();
        let interrupt = answer(&mut server, "turn/interrupt", json!({})).await;
        assert_eq!(interrupt, json!({"threadId": "t1", "turnId": "u1"}));
    };
    let (result, ()) = tokio::time::timeout(T, async { tokio::join!(run, play) }).await.expect("in time");
    let Err(ClientError::TurnDeadline(deadline)) = result else { panic!("not a deadline: {result:?}") };
    let retrying = deadline.retrying.as_ref().expect("it waited for a retry");
    assert_eq!((retrying.thread_id.as_str(), retrying.turn_id.as_str()), ("t1", "u1"));
    assert_eq!(retrying.message, "Reconnecting... waiting for network");
    assert_eq!(retrying.error_info, Some(json!("other")));
    assert!(deadline.interrupted);
    assert_eq!(
        deadline.to_string(),
        "turn u1 of thread t1 did not end within 400ms: it was waiting for the model while codex retried: \
         Reconnecting... waiting for network (error sending request for url (http://127.0.0.1:9/v1/responses)); \
         it was interrupted"
    );
    assert_eq!(
        *seen.lock().unwrap(),
        [
            "Reconnecting... 2/5 (error sending request for url (http://127.0.0.1:9/v1/responses))",
            "Reconnecting... waiting for network (error sending request for url (http://127.0.0.1:9/v1/responses))"
        ]
    );
    let log = log.text();
    let warnings: Vec<&str> = log.lines().filter(|l| l.contains("WARN") && l.contains("codex retries")).collect();
    assert_eq!(warnings.len(), 2, "{log}");
    assert!(warnings[1].contains("Reconnecting... waiting for network"), "{log}");
}

/// `AtDeadline::Leave`: nothing is sent; a deadline before any event says so.
#[tokio::test]
async fn a_deadline_can_leave_the_turn_running() {
    let (client, mut server) = connect().await;
    let run = async {
        let thread = client.thread_resume("t1").await.expect("thread/resume");
        let turn = thread.turn("hi").await.expect("turn/start");
        turn.run(RunOptions::new().deadline(Duration::from_millis(200)).at_deadline(AtDeadline::Leave)).await
    };
    let play = async {
        answer(&mut server, "thread/resume", json!({"thread": thread_json("t1")})).await;
        answer(&mut server, "turn/start", json!({"turn": turn_json("u1", "inProgress")})).await;
    };
    let (result, ()) = tokio::join!(run, play);
    let Err(ClientError::TurnDeadline(deadline)) = result else { panic!("not a deadline: {result:?}") };
    assert!(!deadline.interrupted && deadline.retrying.is_none() && deadline.last_event.is_none());
    assert_eq!(deadline.to_string(), "turn u1 of thread t1 did not end within 200ms: it was waiting for its first event; it was left running");
    // Nothing was sent after `turn/start`.
    assert!(tokio::time::timeout(Duration::from_millis(100), server.recv()).await.is_err());
}

/// A retry that ends: the turn goes on, the handle no longer waits, the run gets its answer;
/// an `error` without `willRetry` is no retry.
#[tokio::test]
async fn a_turn_that_goes_on_after_a_retry_no_longer_waits_for_it() {
    let (client, mut server) = connect().await;
    let thread_task = {
        let client = client.clone();
        tokio::spawn(async move { client.thread_resume("t1").await.expect("thread/resume") })
    };
    answer(&mut server, "thread/resume", json!({"thread": thread_json("t1")})).await;
    let thread = thread_task.await.unwrap();
    let turn_task = tokio::spawn(async move { thread.turn("hi").await.expect("turn/start") });
    answer(&mut server, "turn/start", json!({"turn": turn_json("u1", "inProgress")})).await;
    let mut turn = turn_task.await.unwrap();
    assert!(turn.waiting_for().is_none());
    server.send(retry("Reconnecting... 1/5", true)).await.unwrap();
    let event = tokio::time::timeout(T, turn.next()).await.unwrap().unwrap();
    assert_eq!(event.retrying().map(|r| r.message), Some("Reconnecting... 1/5".to_owned()));
    assert_eq!(turn.waiting_for().map(|r| r.message.as_str()), Some("Reconnecting... 1/5"));
    server.send(retry("stream disconnected", false)).await.unwrap();
    let event = tokio::time::timeout(T, turn.next()).await.unwrap().unwrap();
    assert!(event.notification().is_some() && event.retrying().is_none());
    assert!(turn.waiting_for().is_none());
    assert_eq!(turn.last_event(), Some("error"));

    let message = json!({"type": "agentMessage", "id": "m", "text": "4", "phase": null, "memoryCitation": null,
                         "moderation": null, "delivery": null, "questions": null, "startedAtMs": 0, "completedAtMs": 0});
    let completed = json!({"method": "item/completed", "params": {"threadId": "t1", "turnId": "u1", "item": message, "completedAtMs": 0}});
    server.send(completed.to_string()).await.unwrap();
    let end = json!({"method": "turn/completed", "params": {"threadId": "t1", "turn": turn_json("u1", "completed")}});
    server.send(end.to_string()).await.unwrap();
    let result = tokio::time::timeout(T, turn.run(RunOptions::new().deadline(T))).await.unwrap().expect("the run");
    assert_eq!(result.final_response, "4");
}

/// The real codex whose model provider cannot be reached (a closed loopback port) with two
/// retries allowed: what codex reports while it retries reaches the run's callback, and the
/// deadline ends the wait naming the retry. (codex 0.171.0 does not give up: after its
/// retries it reports "Reconnecting... waiting for network" again and again.) Its first report
/// comes within a second of the turn's start: the deadline leaves several times that.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs the codex binary (the pinned release, installed with npm on first use)"]
async fn the_real_codex_reports_its_retries_to_the_run() {
    let setup = crate::common::Setup::new(crate::common::codex());
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://127.0.0.1:{}/v1", closed.local_addr().unwrap().port());
    drop(closed);
    let config = codex_app_mock::home::config_toml(&url)
        .replace("request_max_retries = 0", "request_max_retries = 2")
        .replace("stream_max_retries = 0", "stream_max_retries = 2");
    std::fs::write(setup.home.path().join("config.toml"), config).unwrap();
    let client = setup.connect(Client::builder()).await;
    let thread = client.thread_start(Default::default()).await.expect("thread/start");
    let seen = Arc::new(Mutex::new(Vec::new()));
    let options = {
        let seen = seen.clone();
        RunOptions::new().deadline(Duration::from_secs(5)).on_event(move |event| {
            if let Some(retrying) = event.retrying() {
                seen.lock().unwrap().push(retrying);
            }
        })
    };
    let result = thread.run_with_options("What is 2+2?", options).await;
    let seen = seen.lock().unwrap().clone();
    assert!(!seen.is_empty(), "no retry was reported: {result:?}");
    assert!(seen.iter().all(|r| r.thread_id == thread.id() && r.message.contains("Reconnecting")), "{seen:?}");
    let Err(ClientError::TurnDeadline(deadline)) = result else { panic!("not a deadline: {result:?}") };
    let retrying = deadline.retrying.as_ref().expect("the turn waited for a retry");
    assert_eq!(retrying, seen.last().unwrap());
    assert!(deadline.interrupted, "{deadline}");
    assert!(deadline.to_string().contains("it was waiting for the model while codex retried: Reconnecting..."), "{deadline}");
    client.shutdown(Duration::from_secs(5)).await;
}

/// The real codex whose model never answers (the mock holds its stream open): the deadline
/// interrupts the turn, and codex ends it as interrupted.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs the codex binary (the pinned release, installed with npm on first use)"]
async fn a_deadline_interrupts_a_real_turn_whose_model_never_answers() {
    let setup = crate::common::Setup::new(crate::common::codex());
    let head = vec![codex_app_mock::ev::created("resp-1")];
    setup.mock.push(codex_app_mock::MockBody::Slow { head, tail: vec![], max_hold: Duration::from_secs(60) });
    let client = setup.connect(Client::builder()).await;
    let mut notifications = client.notifications();
    let thread = client.thread_start(Default::default()).await.expect("thread/start");
    let started = std::time::Instant::now();
    let result = thread.run_with_options("hi", RunOptions::new().deadline(Duration::from_secs(3))).await;
    let Err(ClientError::TurnDeadline(deadline)) = result else { panic!("not a deadline: {result:?}") };
    assert!(started.elapsed() < Duration::from_secs(10), "{:?}", started.elapsed());
    assert!(deadline.interrupted && deadline.retrying.is_none(), "{deadline}");
    assert!(deadline.last_event.is_some(), "{deadline}");
    assert!(deadline.to_string().contains("it was waiting for the server's next event after"), "{deadline}");
    // codex ends the turn as interrupted.
    let status = tokio::time::timeout(crate::common::T, async {
        while let Some(event) = notifications.next().await {
            if let Some(protocol::ServerNotification::TurnCompleted { params, .. }) = event.notification() {
                return params.turn.status.clone();
            }
        }
        panic!("no turn/completed");
    })
    .await
    .expect("turn/completed in time");
    assert_eq!(status, protocol::TurnStatus::Interrupted);
    client.shutdown(Duration::from_secs(5)).await;
}
}
