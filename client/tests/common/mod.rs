//! Running the real `codex app-server` against the loopback Responses mock.

#![allow(dead_code)]

use std::path::PathBuf;
use std::time::Duration;

use codex_app_client::protocol::roundtrip::reencode;
use codex_app_client::protocol::*;
use codex_app_client::{Client, ClientBuilder, ClientError, CodexCommand, Event, TurnHandle};
use codex_app_mock::home::REMOVED_ENV;
use codex_app_mock::{CodexHome, MockServer};

/// Per-step timeout.
pub const T: Duration = Duration::from_secs(20);

/// The codex binary: `$CODEX_BIN`, else the pinned release, installed into the workspace's
/// `.codex-bin/` on first use (`codex_app_mock::codex::pinned`). The tests that call it are
/// `#[ignore]`d with the reason ("needs the codex binary"), so that a plain `cargo test`
/// reports them as not run; run (`-- --include-ignored`, as README's test command and CI do)
/// where codex cannot be installed (no npm), they fail with the reason: a test that needs codex
/// never passes without it.
pub fn codex() -> PathBuf {
    codex_app_mock::codex::pinned(CODEX_VERSION).unwrap_or_else(|e| panic!("no codex binary: {e}"))
}

/// A mock, an isolated `CODEX_HOME`, and the command that starts codex in it.
pub struct Setup {
    pub mock: MockServer,
    pub home: CodexHome,
    pub command: CodexCommand,
}

impl Setup {
    pub fn new(codex: PathBuf) -> Setup {
        let mock = MockServer::start().expect("mock");
        let home = CodexHome::new(&mock.base_url()).expect("CODEX_HOME");
        let mut command = CodexCommand::new().program(codex).current_dir(home.work_dir());
        for (key, value) in home.env() {
            command = command.env(key, value);
        }
        for key in REMOVED_ENV {
            command = command.env_remove(key);
        }
        Setup { mock, home, command }
    }

    pub async fn connect(&self, builder: ClientBuilder) -> Client {
        tokio::time::timeout(T, builder.spawn(&self.command)).await.expect("connect in time").expect("connect")
    }
}

/// `thread/start` with `params`; returns the thread id.
pub async fn start_thread(client: &Client, params: ThreadStartParams) -> String {
    let started = tokio::time::timeout(T, client.request::<request::ThreadStart>(params))
        .await
        .expect("in time")
        .expect("thread/start");
    started.thread.id
}

pub fn text_turn(thread: &str, text: &str) -> TurnStartParams {
    TurnStartParams::new(vec![UserInput::Text(TextUserInput::new(text.into()))], thread.into())
}

/// Reads a turn's stream to its end; returns the agent message deltas, and checks that every
/// notification that names a thread or turn names this one.
pub async fn drain_turn(turn: &mut TurnHandle) -> (String, Vec<String>) {
    let (thread, id) = (turn.thread_id().to_owned(), turn.turn_id().to_owned());
    let mut text = String::new();
    let mut methods = Vec::new();
    while let Some(event) = tokio::time::timeout(T, turn.next()).await.expect("the turn went on") {
        let Event::Notification(n) = event else { panic!("unexpected {event:?}") };
        let line = reencode(&*n).unwrap();
        let params = &line["params"];
        if let Some(t) = params["threadId"].as_str() {
            assert_eq!(t, thread, "{line}");
        }
        if let Some(t) = params["turnId"].as_str().or(params["turn"]["id"].as_str()) {
            assert_eq!(t, id, "{line}");
        }
        if let ServerNotification::ItemAgentMessageDelta { params, .. } = &*n {
            text.push_str(&params.delta);
        }
        methods.push(n.method().to_owned());
    }
    (text, methods)
}

pub fn is_exited(e: &ClientError) -> bool {
    matches!(e, ClientError::ServerExited(_))
}
