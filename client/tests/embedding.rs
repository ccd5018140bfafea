//! Safe to embed: the library runs only the binary it was given, `$CODEX_BIN` or `codex` on
//! `PATH` (never one it finds in the current directory or its parents), connecting never
//! waits forever, and its errors say what failed through `source()`.

use std::error::Error;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use codex_app_client::transport::memory::MemoryTransport;
use codex_app_client::transport::stdio::find_codex;
use codex_app_client::{Client, ClientError, CodexCommand, TransportErrorKind};

/// Set in the child process of [`a_codex_bin_planted_in_a_parent_directory_is_never_run`]: the
/// directory of the plant.
const PLANTED_CHILD: &str = "CODEX_APP_TEST_PLANTED_CHILD";
const PLANTED_TEST: &str = "embedding::a_codex_bin_planted_in_a_parent_directory_is_never_run";

/// An executable `codex` at `path` that writes `marker` when it runs (and then fails).
fn plant(path: &Path, marker: &Path) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    crate::executable::write(path, &format!("#!/bin/sh\necho ran > '{}'\nexit 7\n", marker.display()));
}

/// A repository that ships `.codex-bin/node_modules/.bin/codex` (where the workspace's
/// install script puts codex) at its root and one level down, and an application started two
/// levels below it, with no `$CODEX_BIN` and a `PATH` without codex: the library finds no
/// codex, `spawn` fails with [`ClientError::CodexNotFound`], and the planted binaries never
/// ran. The application runs in a child process (the current directory belongs to the whole
/// process; the other tests run beside this one).
#[test]
fn a_codex_bin_planted_in_a_parent_directory_is_never_run() {
    if let Some(dir) = std::env::var_os(PLANTED_CHILD) {
        return planted_child(Path::new(&dir));
    }
    let repo = tempfile::tempdir().unwrap();
    let marker = repo.path().join("ran");
    let planted = [
        repo.path().join(".codex-bin/node_modules/.bin/codex"),
        repo.path().join("a/.codex-bin/node_modules/.bin/codex"),
    ];
    for path in &planted {
        plant(path, &marker);
    }
    let cwd = repo.path().join("a/b");
    std::fs::create_dir_all(&cwd).unwrap();
    let empty_path = repo.path().join("empty-bin");
    std::fs::create_dir_all(&empty_path).unwrap();
    // `PATH` also has a relative entry (the empty one is the current directory in a shell),
    // with an executable `codex` in the current directory: skipped as well.
    plant(&cwd.join("codex"), &marker);
    let path_var = format!("{}::.", empty_path.display());

    let output = Command::new(std::env::current_exe().unwrap())
        .args([PLANTED_TEST, "--exact", "--nocapture", "--include-ignored", "--test-threads=1"])
        .current_dir(&cwd)
        .env(PLANTED_CHILD, repo.path())
        .env("PATH", &path_var)
        .env_remove("CODEX_BIN")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "the child failed:\n{stdout}\n{stderr}");
    // It ran this very test (a filter that matched nothing would pass too).
    assert!(stdout.contains(&format!("test {PLANTED_TEST} ... ok")), "{stdout}");
    assert!(!marker.exists(), "a planted codex ran");

    // The plant is a real, runnable codex stand-in: named explicitly, it runs.
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let outcome = rt.block_on(async {
        Client::builder()
            .handshake_timeout(Duration::from_secs(20))
            .spawn(&CodexCommand::new().program(&planted[0]))
            .await
    });
    assert!(outcome.is_err(), "the stand-in answers nothing");
    assert!(marker.exists(), "the planted script did not run when named explicitly");
}

/// The application's side of the test above, in the planted directory.
fn planted_child(repo: &Path) {
    assert!(std::env::var_os("CODEX_BIN").is_none());
    assert_eq!(find_codex(None), None, "the library found a codex");
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let outcome = rt.block_on(Client::spawn(&CodexCommand::new()));
    match outcome {
        Err(ClientError::CodexNotFound(e)) => {
            assert_eq!(e.kind, TransportErrorKind::CodexNotFound);
            assert!(e.to_string().contains("$CODEX_BIN"), "{e}");
        }
        other => panic!("expected CodexNotFound, got {other:?}"),
    }
    assert!(!repo.join("ran").exists(), "a planted codex ran");
}

/// `$CODEX_BIN` and an explicit path are run as given; one that does not exist is a missing
/// codex, whose `source()` is the I/O error of the spawn.
#[tokio::test]
async fn a_binary_that_does_not_exist_is_codex_not_found_with_the_io_error_as_source() {
    let dir = tempfile::tempdir().unwrap();
    let missing: PathBuf = dir.path().join("no-such-codex");
    let error = Client::spawn(&CodexCommand::new().program(&missing)).await.unwrap_err();
    let ClientError::CodexNotFound(transport) = &error else { panic!("expected CodexNotFound, got {error:?}") };
    assert!(transport.context.contains("no-such-codex"), "{transport}");
    let io = error
        .source()
        .and_then(|e| e.source())
        .and_then(|e| e.downcast_ref::<std::io::Error>())
        .unwrap_or_else(|| panic!("no I/O error in the chain of {error:?}"));
    assert_eq!(io.kind(), std::io::ErrorKind::NotFound);
}

/// A working directory that does not exist is an I/O error of the spawn, not a missing codex.
#[tokio::test]
async fn a_spawn_that_fails_for_another_reason_is_a_transport_error() {
    let dir = tempfile::tempdir().unwrap();
    let program = dir.path().join("codex");
    plant(&program, &dir.path().join("ran"));
    let command = CodexCommand::new().program(&program).current_dir(dir.path().join("gone"));
    let error = Client::spawn(&command).await.unwrap_err();
    let ClientError::Transport(transport) = &error else { panic!("expected Transport, got {error:?}") };
    assert_eq!(transport.kind, TransportErrorKind::Io, "{transport}");
    assert!(error.source().and_then(|e| e.source()).is_some_and(|e| e.is::<std::io::Error>()), "{error:?}");
}

/// Without the `tls` feature nothing of TLS is compiled: `wss://` is refused, naming the
/// feature, before anything is opened.
#[cfg(not(feature = "tls"))]
#[tokio::test]
async fn wss_without_the_tls_feature_is_refused_naming_it() {
    let error = Client::builder().connect_ws("wss://127.0.0.1:9", Some("t")).await.unwrap_err();
    assert_eq!(
        error.to_string(),
        "transport error: connecting to wss://127.0.0.1:9: wss:// needs the client's `tls` feature (codex-app-client = { features = [\"tls\"] })"
    );
}

/// A WebSocket address nobody listens on: the connect error's source is the I/O error.
#[tokio::test]
async fn a_refused_websocket_connection_chains_to_its_io_error() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("ws://{}", listener.local_addr().unwrap());
    drop(listener);
    let error = Client::builder().connect_ws(&url, None).await.unwrap_err();
    let ClientError::Transport(transport) = &error else { panic!("expected Transport, got {error:?}") };
    assert_eq!(transport.kind, TransportErrorKind::Io, "{transport}");
    let io = error.source().and_then(|e| e.source()).and_then(|e| e.downcast_ref::<std::io::Error>());
    assert_eq!(io.map(std::io::Error::kind), Some(std::io::ErrorKind::ConnectionRefused), "{error:?}");
}

/// A server that never answers `initialize` (a spawned one, one over a transport, one that
/// accepts the TCP connection but never the WebSocket upgrade): connecting fails with
/// [`ClientError::Timeout`] at the handshake deadline instead of waiting forever.
#[tokio::test]
async fn connecting_to_a_server_that_never_answers_times_out() {
    let limit = Duration::from_millis(300);

    let dir = tempfile::tempdir().unwrap();
    let silent = dir.path().join("silent-codex");
    crate::executable::write(&silent, "#!/bin/sh\nexec sleep 60 < /dev/null\n");
    let started = Instant::now();
    let outcome = Client::builder().handshake_timeout(limit).spawn(&CodexCommand::new().program(&silent)).await;
    assert!(matches!(outcome, Err(ClientError::Timeout(t)) if t == limit), "{outcome:?}");
    assert!(started.elapsed() < Duration::from_secs(10), "{:?}", started.elapsed());

    let (transport, _server) = MemoryTransport::pair(8);
    let outcome = Client::builder().handshake_timeout(limit).connect(transport).await;
    assert!(matches!(outcome, Err(ClientError::Timeout(t)) if t == limit), "{outcome:?}");

    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("ws://{}", listener.local_addr().unwrap());
    let _accepting = tokio::spawn(async move {
        let (stream, _) = listener.accept().await.unwrap();
        tokio::time::sleep(Duration::from_secs(60)).await;
        drop(stream);
    });
    let outcome = Client::builder().handshake_timeout(limit).connect_ws(&url, None).await;
    assert!(matches!(outcome, Err(ClientError::Timeout(t)) if t == limit), "{outcome:?}");
}

/// The default deadline is documented and finite.
#[test]
fn the_default_handshake_timeout_is_a_minute() {
    assert_eq!(codex_app_client::DEFAULT_HANDSHAKE_TIMEOUT, Duration::from_secs(60));
    assert!(format!("{:?}", Client::builder()).contains("handshake_timeout: 60s"));
}
