//! The client against the real `codex app-server` (the pinned release), whose model is the
//! loopback Responses mock. Each test is `#[ignore]`d with the reason "needs the codex binary":
//! README's test command runs them (`--include-ignored`), and without codex they fail.
//!
//! Written against the types of the vendored codex release; after a regen from a release out
//! of the range these tests are left out and one test says so (see `written_for_codex!`).

codex_app_client::protocol::__test_support::written_for_codex! { "0.171.0",


use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use codex_app_client::protocol::roundtrip::reencode;
use codex_app_client::protocol::*;
use codex_app_client::*;
use codex_app_mock::{ev, MockBody, Outcome};
use crate::common::*;
use serde_json::json;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs the codex binary (the pinned release, installed with npm on first use)"]
async fn streamed_turn() {
    let codex = codex();
    let setup = Setup::new(codex);
    setup.mock.push_events(ev::assistant_message("resp-1", "msg-1", &["Hel", "lo ", "there"]));
    let client = setup.connect(Client::builder()).await;
    let check = client.version_check().unwrap();
    assert!(check.matches(), "{check}");
    let thread = start_thread(&client, ThreadStartParams::default()).await;
    let mut turn = client.start_turn(text_turn(&thread, "Say hello")).await.unwrap();
    let (text, methods) = drain_turn(&mut turn).await;
    assert_eq!(text, "Hello there");
    assert!(methods.contains(&"turn/started".to_owned()), "{methods:?}");
    assert_eq!(turn.completed().unwrap().status, TurnStatus::Completed);
    let exit = client.shutdown(Duration::from_secs(5)).await;
    assert_eq!(exit.reason, ExitReason::Shutdown, "{exit}");
    assert!(exit.is_clean(), "{exit}");
}

/// Answers command approvals with `decision`, counting them.
struct Decide {
    decision: CommandExecutionApprovalDecision,
    asked: Arc<AtomicUsize>,
}

impl ServerRequestHandler for Decide {
    async fn item_command_execution_request_approval(&self, params: CommandExecutionRequestApprovalParams) -> HandlerResult<CommandExecutionRequestApprovalResponse> {
        assert!(params.command.unwrap_or_default().contains("echo approved-output"));
        self.asked.fetch_add(1, Ordering::SeqCst);
        Ok(CommandExecutionRequestApprovalResponse { decision: self.decision.clone() })
    }
}

/// One turn in which the model runs `echo approved-output` under `approvalPolicy: untrusted`;
/// returns the command item's final status and the tool output the model saw.
async fn command_turn(builder: ClientBuilder) -> (CommandExecutionStatus, String) {
    let codex = codex();
    let setup = Setup::new(codex);
    let args = json!({"cmd": "echo approved-output", "login": false, "yield_time_ms": 1000});
    setup.mock.push_events(ev::tool_call("resp-1", "call-1", "exec_command", &args));
    setup.mock.push_events(ev::assistant_message("resp-2", "msg-1", &["Done."]));
    let client = setup.connect(builder).await;
    let params = ThreadStartParams { approval_policy: Some(AskForApproval::Untrusted), ..Default::default() };
    let thread = start_thread(&client, params).await;
    let mut turn = client.start_turn(text_turn(&thread, "Run it")).await.unwrap();
    let mut status = None;
    while let Some(event) = tokio::time::timeout(T, turn.next()).await.unwrap() {
        if let Event::Notification(n) = event {
            if let ServerNotification::ItemCompleted { params, .. } = &*n {
                if let ThreadItem::CommandExecution(item) = &params.item {
                    status = Some(item.status.clone());
                }
            }
        }
    }
    let requests = setup.mock.wait_for_requests(2, T).unwrap();
    let output = requests[1].function_output("call-1").expect("the model got the tool output").to_string();
    client.shutdown(Duration::from_secs(5)).await;
    (status.expect("the command item completed"), output)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs the codex binary (the pinned release, installed with npm on first use)"]
async fn command_approval_accepted_by_the_handler() {
    let asked = Arc::new(AtomicUsize::new(0));
    let handler = Decide { decision: CommandExecutionApprovalDecision::Accept, asked: asked.clone() };
    let (status, output) = command_turn(Client::builder().handler(handler)).await;
    assert_eq!(asked.load(Ordering::SeqCst), 1);
    assert_eq!(status, CommandExecutionStatus::Completed);
    assert!(output.contains("approved-output"), "{output}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs the codex binary (the pinned release, installed with npm on first use)"]
async fn command_approval_declined_by_the_handler() {
    let asked = Arc::new(AtomicUsize::new(0));
    let handler = Decide { decision: CommandExecutionApprovalDecision::Decline, asked: asked.clone() };
    let (status, output) = command_turn(Client::builder().handler(handler)).await;
    assert_eq!(asked.load(Ordering::SeqCst), 1);
    assert_eq!(status, CommandExecutionStatus::Declined);
    assert!(!output.contains("approved-output\\n"), "the command ran: {output}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs the codex binary (the pinned release, installed with npm on first use)"]
async fn the_default_handler_declines() {
    let (status, output) = command_turn(Client::builder()).await;
    assert_eq!(status, CommandExecutionStatus::Declined);
    assert!(!output.contains("approved-output\\n"), "the command ran: {output}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs the codex binary (the pinned release, installed with npm on first use)"]
async fn two_concurrent_turns_on_two_threads() {
    let codex = codex();
    let setup = Setup::new(codex);
    setup.mock.push_events(ev::assistant_message("resp-1", "msg-1", &["First ", "answer"]));
    setup.mock.push_events(ev::assistant_message("resp-2", "msg-2", &["Second ", "answer"]));
    let client = setup.connect(Client::builder()).await;
    let (a, b) = tokio::join!(start_thread(&client, ThreadStartParams::default()), start_thread(&client, ThreadStartParams::default()));
    assert_ne!(a, b);
    let (ta, tb) = tokio::join!(client.start_turn(text_turn(&a, "one")), client.start_turn(text_turn(&b, "two")));
    let (mut ta, mut tb) = (ta.unwrap(), tb.unwrap());
    let ((text_a, _), (text_b, _)) = tokio::join!(drain_turn(&mut ta), drain_turn(&mut tb));
    // Which model answer each turn got depends on the order of its model request; each got
    // one whole answer and not a mix.
    let mut texts = [text_a, text_b];
    texts.sort();
    assert_eq!(texts, ["First answer", "Second answer"]);
    client.shutdown(Duration::from_secs(5)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs the codex binary (the pinned release, installed with npm on first use)"]
async fn interrupt_from_the_turn_handle() {
    let codex = codex();
    let setup = Setup::new(codex);
    setup.mock.push(MockBody::Slow {
        head: vec![ev::created("resp-1"), ev::message_added("msg-1"), ev::text_delta("msg-1", "Working on it")],
        tail: vec![ev::message_done("msg-1", "Working on it"), ev::completed("resp-1")],
        max_hold: Duration::from_secs(15),
    });
    let client = setup.connect(Client::builder()).await;
    let thread = start_thread(&client, ThreadStartParams::default()).await;
    let mut turn = client.start_turn(text_turn(&thread, "Take your time")).await.unwrap();
    loop {
        let event = tokio::time::timeout(T, turn.next()).await.unwrap().expect("the turn streams");
        if matches!(event.notification(), Some(ServerNotification::ItemAgentMessageDelta { .. })) {
            break;
        }
    }
    turn.interrupt().await.unwrap();
    let completed = tokio::time::timeout(T, turn.wait()).await.unwrap().unwrap();
    assert_eq!(completed.status, TurnStatus::Interrupted);
    assert_eq!(setup.mock.wait_for_outcome(0, T).unwrap(), Outcome::ClientGone);
    client.shutdown(Duration::from_secs(5)).await;
}

/// Whether every thread of every process in the process group `pgid` is stopped (Linux's
/// `/proc`; elsewhere the stop is taken as done once `kill` returned).
fn group_stopped(pgid: &str) -> bool {
    if !cfg!(target_os = "linux") {
        return true;
    }
    // `/proc/<pid>/stat`: `pid (comm) state ppid pgrp ...`, where `comm` may hold spaces and
    // parentheses: the fields are those after its last `)`.
    let fields = |path: std::path::PathBuf| -> Option<Vec<String>> {
        let stat = std::fs::read_to_string(path).ok()?;
        Some(stat.rsplit_once(')')?.1.split_whitespace().map(str::to_owned).collect())
    };
    let mut members = 0;
    for process in std::fs::read_dir("/proc").unwrap().flatten() {
        let Some(stat) = fields(process.path().join("stat")) else { continue };
        if stat.get(2).map(String::as_str) != Some(pgid) {
            continue;
        }
        members += 1;
        for task in std::fs::read_dir(process.path().join("task")).into_iter().flatten().flatten() {
            let state = fields(task.path().join("stat")).and_then(|f| f.first().cloned());
            // Stopped (`T`, or `t` under a tracer), or gone.
            if !matches!(state.as_deref(), None | Some("T" | "t" | "Z" | "X")) {
                return false;
            }
        }
    }
    members > 0
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs the codex binary (the pinned release, installed with npm on first use)"]
async fn server_killed_mid_request() {
    let codex = codex();
    let setup = Setup::new(codex);
    let transport = setup.command.spawn().unwrap();
    let pid = transport.id().unwrap().to_string();
    let client = tokio::time::timeout(T, Client::builder().connect(transport)).await.unwrap().unwrap();
    let mut notifications = client.notifications();
    // Frozen, the server cannot answer: the request stays pending until the kill. (The
    // server runs in its own process group, whose id is the child's pid: the npm `codex` is
    // a node script whose child is the native binary.)
    let group = format!("-{pid}");
    let signal = |sig: &str| assert!(std::process::Command::new("kill").args([sig, "--", &group]).status().unwrap().success());
    signal("-STOP");
    // `kill` returns once the signal is sent; each thread of the group stops when it next takes
    // it. Sent before then, the request could still be read and answered.
    let stopped = tokio::time::timeout(T, async {
        while !group_stopped(&pid) {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    });
    stopped.await.expect("the server's process group never stopped");
    let pending = tokio::spawn({
        let client = client.clone();
        async move { client.request::<request::ThreadList>(ThreadListParams::default()).await }
    });
    // The request is pending once the spawned task has sent it (on a loaded machine, that can
    // take longer than any fixed pause).
    let sent = tokio::time::timeout(T, async {
        while client.pending_requests() == 0 {
            assert!(!pending.is_finished(), "the request ended before the kill: {:?}", client.closed());
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    });
    sent.await.expect("the request was never sent");
    assert_eq!(client.pending_requests(), 1);
    signal("-KILL");
    // A real process on a loaded machine: a generous bound on the wall clock that only guards
    // against waiting for something that never comes (no request timeout is set here).
    let outcome = tokio::time::timeout(Duration::from_secs(5), pending).await.expect("failed within 5 s").unwrap();
    match outcome {
        Err(ClientError::ServerExited(exit)) => {
            let status = exit.status.unwrap_or_default();
            assert!(status.contains("9") || status.contains("KILL"), "{status}");
        }
        other => panic!("expected server exited, got {other:?}"),
    }
    // The notification stream ends; nothing hangs.
    loop {
        match tokio::time::timeout(T, notifications.next()).await.unwrap() {
            None => break,
            Some(_) => continue,
        }
    }
    assert_eq!(client.pending_requests(), 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs the codex binary (the pinned release, installed with npm on first use)"]
async fn the_tap_of_a_real_session_is_a_transcript_without_drift() {
    let codex = codex();
    let setup = Setup::new(codex);
    setup.mock.push_events(ev::assistant_message("resp-1", "msg-1", &["Hi"]));
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("session.ndjson");
    let client = setup.connect(Client::builder().tap(Tap::create(&path).unwrap())).await;
    let thread = start_thread(&client, ThreadStartParams::default()).await;
    let mut turn = client.start_turn(text_turn(&thread, "hi")).await.unwrap();
    drain_turn(&mut turn).await;
    client.shutdown(Duration::from_secs(5)).await;
    let text = std::fs::read_to_string(&path).unwrap();
    let entries: Vec<serde_json::Value> = text.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert!(entries.len() > 10);
    assert_eq!(entries[0]["dir"], "c2s");
    assert!(entries[0]["line"].as_str().unwrap().contains("\"initialize\""));
    assert!(entries.iter().any(|e| e["dir"] == "s2c" && e["line"].as_str().unwrap().contains("turn/completed")));
}

/// `codex app-server --listen URL ...` in its own process group, killed on drop.
struct Listening {
    child: std::process::Child,
}

impl Listening {
    fn start(setup: &Setup, codex: &std::path::Path, args: &[&str]) -> Listening {
        use std::os::unix::process::CommandExt as _;
        let mut cmd = std::process::Command::new(codex);
        cmd.arg("app-server").args(args).stdin(std::process::Stdio::null()).stdout(std::process::Stdio::null());
        cmd.stderr(std::process::Stdio::null()).process_group(0);
        setup.home.configure(&mut cmd);
        Listening { child: cmd.spawn().unwrap() }
    }
}

impl Drop for Listening {
    fn drop(&mut self) {
        let _ = std::process::Command::new("kill").args(["-KILL", "--", &format!("-{}", self.child.id())]).status();
        let _ = self.child.wait();
    }
}

/// Retries `connect` until the server listens (at most `T`).
async fn connect_when_ready(url: &str, token: Option<&str>) -> Result<Client, ClientError> {
    let deadline = Instant::now() + T;
    loop {
        match Client::builder().connect_ws(url, token).await {
            Err(ClientError::Transport(e)) if e.http_status.is_none() && Instant::now() < deadline => {
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
            other => return other,
        }
    }
}

async fn one_turn(client: &Client, setup: &Setup, text: &str) {
    setup.mock.push_events(ev::assistant_message("resp-1", "msg-1", &[text]));
    let thread = start_thread(client, ThreadStartParams::default()).await;
    let mut turn = client.start_turn(text_turn(&thread, "hi")).await.unwrap();
    assert_eq!(drain_turn(&mut turn).await.0, text);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs the codex binary (the pinned release, installed with npm on first use)"]
async fn websocket_with_the_right_and_a_wrong_token() {
    let codex = codex();
    let setup = Setup::new(codex.clone());
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let token_file = setup.home.path().join("ws-token");
    std::fs::write(&token_file, "right-token").unwrap();
    let url = format!("ws://127.0.0.1:{port}");
    let _server = Listening::start(
        &setup,
        &codex,
        &["--listen", &url, "--ws-auth", "capability-token", "--ws-token-file", token_file.to_str().unwrap()],
    );
    let client = tokio::time::timeout(T, connect_when_ready(&url, Some("right-token"))).await.unwrap().unwrap();
    assert!(client.version_check().unwrap().matches());
    one_turn(&client, &setup, "over websocket").await;

    let started = Instant::now();
    for token in [Some("wrong-token"), None] {
        match tokio::time::timeout(T, Client::builder().connect_ws(&url, token)).await.expect("no hang") {
            Err(ClientError::Transport(e)) => {
                assert_eq!(e.http_status, Some(401), "{e}");
                assert!(e.to_string().contains("401"), "{e}");
            }
            other => panic!("expected HTTP 401, got {other:?}"),
        }
    }
    // A generous bound on the wall clock (a real server on a loaded machine): it guards against
    // a refused connection being retried or waited on, not a speed claim.
    assert!(started.elapsed() < Duration::from_secs(10), "{:?}", started.elapsed());
    // A clean close of the WebSocket is a clean end.
    let exit = client.shutdown(Duration::from_secs(2)).await;
    assert_eq!(exit.reason, ExitReason::Shutdown, "{exit}");
    assert!(exit.is_clean(), "{exit}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs the codex binary (the pinned release, installed with npm on first use)"]
async fn unix_socket() {
    let codex = codex();
    let setup = Setup::new(codex.clone());
    let socket = setup.home.path().join("app-server.sock");
    let url = format!("unix://{}", socket.display());
    let _server = Listening::start(&setup, &codex, &["--listen", &url]);
    let client = tokio::time::timeout(T, connect_when_ready(&url, None)).await.unwrap().unwrap();
    assert!(client.version_check().unwrap().matches());
    one_turn(&client, &setup, "over a unix socket").await;
    let exit = client.shutdown(Duration::from_secs(2)).await;
    assert_eq!(exit.reason, ExitReason::Shutdown, "{exit}");
    assert!(exit.is_clean(), "{exit}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs the codex binary (the pinned release, installed with npm on first use)"]
async fn dropping_the_client_kills_the_server() {
    let codex = codex();
    let setup = Setup::new(codex);
    let transport = setup.command.spawn().unwrap();
    let pid = transport.id().unwrap();
    let client = tokio::time::timeout(T, Client::builder().connect(transport)).await.unwrap().unwrap();
    drop(client);
    let alive = || std::process::Command::new("kill").args(["-0", "--", &format!("-{pid}")]).stderr(std::process::Stdio::null()).status().unwrap().success();
    let deadline = Instant::now() + T;
    while alive() && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(!alive(), "the server's process group is still alive");
}


#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs the codex binary (the pinned release, installed with npm on first use)"]
async fn thread_handles_run_read_name_fork_archive_and_list() {
    let codex = codex();
    let setup = Setup::new(codex);
    let client = setup.connect(Client::builder()).await;
    setup.mock.push_events(ev::assistant_message("resp-1", "msg-1", &["Four", "."]));
    let mut thread = tokio::time::timeout(T, client.thread_start(ThreadStartParams::default())).await.unwrap().unwrap();
    let answer = tokio::time::timeout(T, thread.run("What is 2 + 2?")).await.unwrap().unwrap();
    assert_eq!(answer.final_response, "Four.");
    assert!(!answer.items.is_empty());
    assert_eq!(answer.turn.status, TurnStatus::Completed);

    thread.set_name("arithmetic").await.unwrap();
    let read = tokio::time::timeout(T, thread.read(true)).await.unwrap().unwrap().clone();
    assert_eq!(read.id, thread.id());
    assert_eq!(read.name.as_deref(), Some("arithmetic"));

    let fork = tokio::time::timeout(T, client.thread_fork(thread.id())).await.unwrap().unwrap();
    assert_ne!(fork.id(), thread.id());
    thread.archive().await.unwrap();
    let unarchived = tokio::time::timeout(T, client.thread_unarchive(thread.id())).await.unwrap().unwrap();
    assert_eq!(unarchived.id(), thread.id());
    let listed = client.thread_list(ThreadListParams::default()).await.unwrap();
    assert!(listed.data.iter().any(|t| t.id == thread.id()), "{listed:?}");
    let resumed = tokio::time::timeout(T, client.thread_resume(fork.id())).await.unwrap().unwrap();
    assert_eq!(resumed.id(), fork.id());
    client.shutdown(Duration::from_secs(5)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs the codex binary (the pinned release, installed with npm on first use)"]
async fn login_with_an_api_key_account_models_and_logout() {
    let codex = codex();
    let setup = Setup::new(codex);
    let client = setup.connect(Client::builder()).await;
    let mut events = client.notifications();
    client.login_api_key("sk-test-key").await.unwrap();
    // The server confirms the login with `account/login/completed`.
    loop {
        let event = tokio::time::timeout(T, events.next()).await.unwrap().unwrap();
        if let Some(n) = event.notification() {
            if n.method() == "account/login/completed" {
                assert_eq!(reencode(n).unwrap()["params"]["success"], true);
                break;
            }
        }
    }
    // The test's CODEX_HOME uses the loopback mock as its model provider, which needs no
    // OpenAI account: `account/read` says so.
    let account = reencode(client.account().await.unwrap()).unwrap();
    assert_eq!(account["requiresOpenaiAuth"], false, "{account}");
    let models = client.models().await.unwrap();
    assert!(!models.data.is_empty());
    client.logout().await.unwrap();
    // The browser login needs no network to start: the server listens for the callback and
    // gives the URL; cancelling it ends the handle's wait with the failure.
    let login = tokio::time::timeout(T, client.login_chatgpt()).await.unwrap().unwrap();
    let url = login.auth_url().expect("an auth URL").to_owned();
    assert!(url.starts_with("https://"), "{url}");
    assert!(!login.login_id().is_empty());
    let events = client.notifications();
    let id = login.login_id().to_owned();
    login.cancel().await.unwrap();
    let completed = tokio::time::timeout(T, async {
        let mut events = events;
        while let Some(event) = events.next().await {
            if let Some(n) = event.notification() {
                if n.method() == "account/login/completed" {
                    return reencode(n).unwrap()["params"].clone();
                }
            }
        }
        panic!("no account/login/completed")
    })
    .await
    .unwrap();
    assert_eq!((completed["loginId"].as_str(), completed["success"].as_bool()), (Some(id.as_str()), Some(false)), "{completed}");
    // The device-code login asks auth.openai.com for a code first: offline, that is where it
    // stops (an error answer, or a handle whose wait ends with the failure).
    match tokio::time::timeout(T, client.login_device_code()).await.unwrap() {
        Err(ClientError::Server(e)) => assert!(e.message.contains("device code"), "{}", e.message),
        Ok(login) => {
            let outcome = tokio::time::timeout(Duration::from_secs(60), login.wait()).await.unwrap();
            assert!(matches!(outcome, Err(ClientError::LoginFailed(_))), "{outcome:?}");
        }
        Err(other) => panic!("{other:?}"),
    }
    client.shutdown(Duration::from_secs(5)).await;
}

/// A connection that the test can cut: `cut` ends it as a dropped socket would (both halves
/// go away; the server sees the client disconnect), without touching the server.
mod cuttable {
    use codex_app_client::transport::ws::WsTransport;
    use codex_app_client::transport::{LineReceiver, LineSender, Transport};
    use tokio::sync::watch;

    pub struct Cuttable {
        pub inner: WsTransport,
        pub cut: watch::Receiver<u32>,
    }

    pub struct Sender(Option<<WsTransport as Transport>::Sender>, watch::Receiver<u32>);
    pub struct Receiver(Option<<WsTransport as Transport>::Receiver>, watch::Receiver<u32>);

    impl Transport for Cuttable {
        type Sender = Sender;
        type Receiver = Receiver;
        fn split(mut self) -> (Sender, Receiver) {
            self.cut.mark_unchanged();
            let (s, r) = self.inner.split();
            (Sender(Some(s), self.cut.clone()), Receiver(Some(r), self.cut))
        }
    }

    impl LineSender for Sender {
        async fn send(&mut self, line: String) -> std::io::Result<()> {
            if self.1.has_changed().unwrap_or(true) {
                self.0 = None;
            }
            match &mut self.0 {
                Some(s) => s.send(line).await,
                None => Err(std::io::ErrorKind::BrokenPipe.into()),
            }
        }
        async fn close(&mut self) -> std::io::Result<()> {
            match &mut self.0 {
                Some(s) => s.close().await,
                None => Ok(()),
            }
        }
    }

    impl LineReceiver for Receiver {
        async fn recv(&mut self) -> std::io::Result<Option<String>> {
            let Some(inner) = &mut self.0 else { return Ok(None) };
            // The cut first: a line the server sent after it (the test sends it, then lets the
            // server go on) is not read from the old connection.
            tokio::select! {
                biased;
                _ = self.1.changed() => {
                    self.0 = None; // the socket's reading half goes away
                    Ok(None)
                }
                line = inner.recv() => line,
            }
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs the codex binary (the pinned release, installed with npm on first use)"]
async fn a_fresh_thread_survives_a_reconnect_and_twenty_cuts_mid_turn_leave_no_handle_waiting() {
    let codex = codex();
    // Over TCP with a bearer token, and over a Unix socket.
    let setup = Setup::new(codex.clone());
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let token_file = setup.home.path().join("ws-token");
    std::fs::write(&token_file, "reconnect-token").unwrap();
    let url = format!("ws://127.0.0.1:{port}");
    let listen = ["--listen", &url, "--ws-auth", "capability-token", "--ws-token-file", token_file.to_str().unwrap()];
    cut_mid_turn(&setup, &codex, &listen, &url, Some("reconnect-token")).await;

    let setup = Setup::new(codex.clone());
    let url = format!("unix://{}", setup.home.path().join("reconnect.sock").display());
    cut_mid_turn(&setup, &codex, &["--listen", &url], &url, None).await;
}

async fn cut_mid_turn(setup: &Setup, codex: &std::path::Path, listen: &[&str], url: &str, token: Option<&str>) {
    let _server = Listening::start(setup, codex, listen);
    // Ready to accept connections.
    drop(tokio::time::timeout(T, connect_when_ready(url, token)).await.unwrap().unwrap());
    let (cut, cuts) = tokio::sync::watch::channel(0u32);
    // Closed, it holds the client's reconnect back.
    let (gate, gates) = tokio::sync::watch::channel(true);
    let connect = {
        let (url, token) = (url.to_owned(), token.map(str::to_owned));
        move || {
            let (url, token, cuts, mut gates) = (url.clone(), token.clone(), cuts.clone(), gates.clone());
            async move {
                let _ = gates.wait_for(|open| *open).await;
                Ok(cuttable::Cuttable { inner: transport::ws::WsTransport::connect(&url, token.as_deref()).await?, cut: cuts })
            }
        }
    };
    let policy = RetryPolicy::default().max_retries(10).initial_delay(Duration::from_millis(50));
    let client = tokio::time::timeout(T, Client::builder().reconnect(policy).connect_with(connect)).await.unwrap().unwrap();
    let mut events = client.notifications();

    // A fresh thread (no turns: the server refuses to resume it, "no rollout found") survives
    // a reconnect: it stays attached and its next turn runs on the same handle.
    let fresh = tokio::time::timeout(T, client.thread_start(ThreadStartParams::default())).await.unwrap().unwrap();
    cut.send_modify(|n| *n += 1);
    reconnected(&mut events).await;
    assert!(fresh.is_attached());
    setup.mock.push_events(ev::assistant_message("resp-0", "msg-0", &["still here"]));
    let run = tokio::time::timeout(T, fresh.run("Are you there?")).await.expect("the turn ends").unwrap();
    assert_eq!(run.final_response, "still here");

    // The connection cut mid-turn 20 times in a row: each turn ends on the same handle, no
    // handle is left waiting, nothing is left held, memory stays flat. On odd cuts the turn
    // goes on after the reconnect (its events flow again); on even ones it completes while
    // the connection is down, and the resume's answer ends it (with its items).
    let thread = tokio::time::timeout(T, client.thread_start(ThreadStartParams::default())).await.unwrap().unwrap();
    let (started, rss_before, mut rss_half, mut reconciled) = (Instant::now(), rss_kb(), 0, 0);
    let (heap_before, mut heap_half) = (heap_kb(), 0);
    // `CUTS=N` for a longer run (each cut's RSS is printed then).
    let cuts = std::env::var("CUTS").ok().and_then(|c| c.parse().ok()).unwrap_or(20);
    for n in 1..=cuts {
        let (resp, msg) = (format!("resp-{n}"), format!("msg-{n}"));
        setup.mock.hold();
        setup.mock.push(MockBody::Slow {
            head: vec![ev::created(&resp), ev::message_added(&msg), ev::text_delta(&msg, "Hel")],
            tail: vec![ev::text_delta(&msg, "lo"), ev::message_done(&msg, "Hello"), ev::completed(&resp)],
            max_hold: Duration::from_secs(20),
        });
        let mut turn = tokio::time::timeout(T, thread.turn("Say hello")).await.unwrap().unwrap();
        let mut text = String::new();
        while text.is_empty() {
            let event = tokio::time::timeout(T, turn.next()).await.unwrap().expect("the turn streams");
            if let Some(ServerNotification::ItemAgentMessageDelta { params, .. }) = event.notification() {
                text.push_str(&params.delta);
            }
        }
        assert_eq!(text, "Hel");
        let down = n % 2 == 0;
        if down {
            gate.send_replace(false);
        }
        cut.send_modify(|n| *n += 1);
        if down {
            // The turn completes at the server while the client is not connected (the mock
            // records a request once its body is sent; codex then ends the turn).
            setup.mock.release();
            setup.mock.wait_for_requests(1, T).unwrap();
            turn_ended_at_the_server(setup, turn.turn_id()).await;
            gate.send_replace(true);
        }
        reconnected(&mut events).await;
        setup.mock.release();
        let rest = tokio::time::timeout(T, async {
            let mut rest = String::new();
            while let Some(event) = turn.next().await {
                if let Some(ServerNotification::ItemAgentMessageDelta { params, .. }) = event.notification() {
                    rest.push_str(&params.delta);
                }
            }
            rest
        })
        .await
        .unwrap_or_else(|_| panic!("cut {n}: the turn ends on the same handle"));
        let completed = tokio::time::timeout(T, turn.wait()).await.unwrap().unwrap();
        // codex interrupts a running turn when it finds no connection subscribed to its thread
        // (it saw the cut before the client's resume; on a busy machine, it may): the handle
        // ends as the server recorded the turn.
        assert!(matches!(completed.status, TurnStatus::Completed | TurnStatus::Interrupted), "cut {n}: {:?}", completed.status);
        assert_eq!(completed.status, server_status(&client, thread.id(), turn.turn_id()).await, "cut {n}");
        let text = completed.items.iter().find_map(|item| match item {
            ThreadItem::AgentMessage(message) => Some(message.text.as_str()),
            _ => None,
        });
        if down {
            // It ended at the server while the client was away: nothing more streamed, the
            // resume's answer ended it, with its items.
            assert_eq!(rest, "", "cut {n}");
            if completed.status == TurnStatus::Completed {
                assert_eq!(text, Some("Hello"), "cut {n}");
            }
            reconciled += 1;
        } else if completed.status == TurnStatus::Completed {
            // The mock held the rest of the answer until the client was back.
            assert_eq!(rest, "lo", "cut {n}");
        } else {
            assert!(rest.is_empty() || rest == "lo", "cut {n}: {rest:?}");
        }
        if n == 10 {
            (rss_half, heap_half) = (rss_kb(), heap_kb());
        }
        if std::env::var_os("CUTS").is_some() {
            println!("cut {n}: RSS {} kB, heap {} kB", rss_kb(), heap_kb());
        }
        // What the test itself keeps (the mock's requests, each with the whole conversation,
        // and the events of its stream) does not count.
        setup.mock.forget_requests();
        while events.try_next().is_some() {}
    }
    let (elapsed, rss_after, heap_after) = (started.elapsed(), rss_kb(), heap_kb());
    println!(
        "{url}: {cuts} cuts mid-turn in {elapsed:.1?}, {reconciled} turns ended by the resume's answer; \
         heap in use {heap_before} kB before, {heap_half} kB after 10, {heap_after} kB after {cuts}; \
         RSS {rss_before} kB, {rss_half} kB, {rss_after} kB"
    );
    assert!(reconciled > 0, "no turn completed while the connection was down");
    let stats = client.connection_stats().await.unwrap();
    assert_eq!((stats.pending_requests, stats.routed_turns, stats.turn_starts, stats.internal_requests), (0, 0, 0, 0), "{stats:?}");
    assert!(heap_after < heap_before + 2 * 1024, "the heap grew from {heap_before} kB to {heap_after} kB");
    client.shutdown(Duration::from_secs(5)).await;
}

/// Waits until the server recorded the end of `turn` (its rollout under `CODEX_HOME` has the
/// turn's `task_complete` or `turn_aborted`), while no client is connected to see it.
async fn turn_ended_at_the_server(setup: &Setup, turn: &str) {
    fn ended(dir: &std::path::Path, turn: &str) -> bool {
        let Ok(entries) = std::fs::read_dir(dir) else { return false };
        entries.flatten().any(|entry| {
            let path = entry.path();
            if path.is_dir() {
                return ended(&path, turn);
            }
            let name = path.file_name().and_then(|n| n.to_str()).unwrap_or_default();
            name.starts_with("rollout-")
                && std::fs::read_to_string(&path).is_ok_and(|text| {
                    text.lines().any(|l| l.contains(turn) && (l.contains("\"task_complete\"") || l.contains("\"turn_aborted\"")))
                })
        })
    }
    let sessions = setup.home.path().to_owned();
    tokio::time::timeout(T, async {
        while !ended(&sessions, turn) {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    })
    .await
    .unwrap_or_else(|_| panic!("the server did not record the end of turn {turn}"));
}

/// The status the server recorded for `turn` (`thread/read` with its turns).
async fn server_status(client: &Client, thread: &str, turn: &str) -> TurnStatus {
    let read = client.request_raw("thread/read", serde_json::json!({"threadId": thread, "includeTurns": true}));
    let read = tokio::time::timeout(T, read).await.unwrap().expect("thread/read");
    let turns = read["thread"]["turns"].as_array().cloned().unwrap_or_default();
    let recorded = turns.iter().find(|t| t["id"] == turn).unwrap_or_else(|| panic!("turn {turn} not in {read}"));
    serde_json::from_value(recorded["status"].clone()).unwrap()
}

/// Waits for the next reconnect; a detached thread fails the test.
async fn reconnected(events: &mut Notifications) {
    loop {
        match tokio::time::timeout(T, events.next()).await.unwrap().expect("open") {
            Event::Reconnected(_) => return,
            Event::ThreadDetached { thread_id, message } => panic!("{thread_id} detached: {message}"),
            _ => {}
        }
    }
}

/// The heap bytes in use by this test binary, in kB (see `HEAP_IN_USE`).
fn heap_kb() -> usize {
    crate::HEAP_IN_USE.load(std::sync::atomic::Ordering::Relaxed) / 1024
}

/// The resident set of this process, in kB.
fn rss_kb() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let line = status.lines().find(|l| l.starts_with("VmRSS:")).unwrap();
    line.split_whitespace().nth(1).unwrap().parse().unwrap()
}
}
