//! The client's transcript tap (`codex_app_client::Tap`) writes the format this crate reads,
//! and a real session recorded through it has no drift: what a user runs in CI
//! (`cargo xtask drift` over their own sessions).
//!
//! Written against the types of the vendored codex release; after a regen from a release out
//! of the range these tests are left out and one test says so (see `written_for_codex!`).

codex_app_client::protocol::__test_support::written_for_codex! { "0.171.0",

use std::time::Duration;

use codex_app_client::protocol::*;
use codex_app_client::transport::memory::MemoryTransport;
use codex_app_client::{Client, CodexCommand, Tap};
use codex_app_mock::home::REMOVED_ENV;
use codex_app_mock::{ev, CodexHome, MockServer};
use codex_app_traffic::{drift, transcript, Dir, Entry, Format};
use serde_json::json;

const T: Duration = Duration::from_secs(20);

// A session recorded through the tap is checked by the traffic crate, as a user's CI does.

/// Lines that need escaping, a non-JSON server line, both directions: the tap's file is the
/// transcript of exactly what went over the wire.
#[tokio::test]
async fn the_tap_writes_what_transcript_parse_reads() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("tap.ndjson");
    let (transport, mut server) = MemoryTransport::pair(8);
    let client = Client::builder().tap(Tap::create(&path).unwrap()).start(transport);
    let tricky = json!({"text": "quote \" backslash \\ newline \n unicode é \u{1F600} tab \t"});
    let call = tokio::spawn({
        let client = client.clone();
        let tricky = tricky.clone();
        async move { client.request_raw("a/b", tricky).await }
    });
    let sent = server.recv().await.unwrap();
    server.send("not JSON at all").await.unwrap();
    let answer = json!({"id": 1, "result": tricky}).to_string();
    server.send(answer.clone()).await.unwrap();
    assert_eq!(call.await.unwrap().unwrap(), tricky);
    client.shutdown(Duration::from_secs(1)).await;

    let entries = transcript::read_file(&path, Format::Transcript).unwrap();
    let expected = [Entry::new(Dir::C2s, sent), Entry::new(Dir::S2c, "not JSON at all"), Entry::new(Dir::S2c, answer)];
    let got: Vec<(Dir, &str, bool)> = entries.iter().map(|e| (e.dir, e.line.as_str(), e.bad)).collect();
    let want: Vec<(Dir, &str, bool)> = expected.iter().map(|e| (e.dir, e.line.as_str(), e.bad)).collect();
    assert_eq!(got, want);
    // The two-member lines are exactly what this crate writes for them.
    let text = std::fs::read_to_string(&path).unwrap();
    assert_eq!(text, transcript::to_transcript(&expected));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs the codex binary (the pinned release, installed with npm on first use)"]
async fn a_real_session_through_the_tap_has_no_drift() {
    let codex = crate::common::codex();
    let mock = MockServer::start().unwrap();
    mock.push_events(ev::assistant_message("resp-1", "msg-1", &["Hel", "lo"]));
    let home = CodexHome::new(&mock.base_url()).unwrap();
    let mut command = CodexCommand::new().program(codex).current_dir(home.work_dir());
    for (key, value) in home.env() {
        command = command.env(key, value);
    }
    for key in REMOVED_ENV {
        command = command.env_remove(key);
    }
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("session.ndjson");
    let client = tokio::time::timeout(T, Client::builder().tap(Tap::create(&path).unwrap()).spawn(&command)).await.unwrap().unwrap();
    let thread = client.request::<request::ThreadStart>(ThreadStartParams::default()).await.unwrap().thread.id;
    let input = vec![UserInput::Text(TextUserInput::new("hi".into()))];
    let mut turn = client.start_turn(TurnStartParams::new(input, thread)).await.unwrap();
    tokio::time::timeout(T, turn.wait()).await.unwrap().unwrap();
    client.request::<request::ThreadList>(ThreadListParams::default()).await.unwrap();
    client.shutdown(Duration::from_secs(5)).await;

    let report = drift::check_file(&path, Format::Transcript).unwrap();
    let findings: Vec<String> = report.drift().map(|f| f.to_string()).collect();
    assert!(findings.is_empty(), "drift in the tapped session:\n{}", findings.join("\n"));
    let entries = transcript::read_file(&path, Format::Transcript).unwrap();
    assert!(entries.iter().any(|e| e.dir == Dir::S2c && e.line.contains("turn/completed")));
}

}
