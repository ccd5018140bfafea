//! A real `codex app-server` in an isolated, throw-away `CODEX_HOME`, driven with typed
//! messages.
//!
//! [`AppServer::spawn`] writes a `config.toml` that points the model provider at the mock,
//! starts the server (own process group, `RUST_LOG=warn`, a clean `HOME`, stderr to a log file)
//! and reads its stdout on a thread. Every line written and every line consumed is appended to
//! the transcript in the order the client saw them: a server line that was already on its way
//! when the client wrote can come after that client line. Reading in the client's order
//! (rather than time-stamping on arrival) keeps transcripts repeatable.
//!
//! Client lines are typed messages encoded with `ClientMessage::to_line`; only deliberately
//! malformed lines are raw ([`AppServer::send_bad_line`], plus the one well-formed line the
//! typed crate never writes: a request carrying `"jsonrpc": "2.0"`). Server lines are decoded
//! with `ServerMessage::from_line`; the `wait_*` helpers read until a wanted message arrives
//! and keep the others in a backlog that later waits search first.
//!
//! Nothing waits forever: every read has a deadline, and [`AppServer::finish`] (or drop) kills
//! the process group if the server does not exit after stdin is closed.

use std::collections::VecDeque;
use std::fs::File;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, ExitStatus, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use anyhow::{anyhow, bail, ensure, Context as _, Result};
use codex_app_protocol::{
    ClientMessage, ClientNotification, ClientRequest, ErrorResponse, Message, Request, RequestId, Response,
    ServerMessage, ServerNotification, ServerRequest,
};
use codex_app_traffic::{Dir, Entry};
use serde::Serialize;

/// The `config.toml` written into the fresh `CODEX_HOME`: the model provider is the mock (no
/// retries, so a failure shows at once). The rest keeps the server off the network beyond
/// loopback: no update check, no analytics, no plugin sync (which otherwise tries github.com
/// and chatgpt.com at start-up); none of it changes what the model or the client sees, apart
/// from `config/read` echoing these settings.
pub fn config_toml(mock_base_url: &str) -> String {
    format!(
        r#"model = "mock-model"
approval_policy = "never"
sandbox_mode = "workspace-write"
model_provider = "mock_provider"
check_for_update_on_startup = false

[model_providers.mock_provider]
name = "Mock provider"
base_url = "{mock_base_url}"
wire_api = "responses"
request_max_retries = 0
stream_max_retries = 0

[analytics]
enabled = false

[features]
plugins = false
remote_plugin = false
"#
    )
}

/// The outcome of a request: its response or its error response.
pub type Outcome = std::result::Result<Response, ErrorResponse>;

/// A running `codex app-server`.
pub struct AppServer {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Receiver<String>,
    reader: Option<JoinHandle<()>>,
    home: tempfile::TempDir,
    log_path: PathBuf,
    transcript: Vec<Entry>,
    backlog: VecDeque<ServerMessage>,
    /// Server lines that did not decode (they stay in the transcript; the drift check reports
    /// them).
    undecoded: Vec<String>,
    next_id: i64,
    eof: bool,
}

impl AppServer {
    /// Creates a fresh `CODEX_HOME` (with `config.toml` for `mock_base_url`) and starts
    /// `codex app-server` in `<CODEX_HOME>/work` with `HOME=<CODEX_HOME>/home`; stderr goes to
    /// `log_path`.
    pub fn spawn(codex: &Path, mock_base_url: &str, log_path: &Path) -> Result<AppServer> {
        let home = tempfile::Builder::new().prefix("codex-home-").tempdir()?;
        std::fs::write(home.path().join("config.toml"), config_toml(mock_base_url))?;
        let cwd = home.path().join("work");
        std::fs::create_dir_all(&cwd)?;
        // A clean $HOME too: the user's shell start-up files (which codex's shell snapshot
        // runs) must not leak output or timing into recorded commands.
        let user_home = home.path().join("home");
        std::fs::create_dir_all(&user_home)?;
        if let Some(dir) = log_path.parent() {
            std::fs::create_dir_all(dir)?;
        }
        let log = File::create(log_path).with_context(|| format!("cannot create {}", log_path.display()))?;

        let mut cmd = Command::new(codex);
        cmd.arg("app-server")
            .current_dir(&cwd)
            .env("CODEX_HOME", home.path())
            .env("HOME", &user_home)
            .env("RUST_LOG", "warn")
            .env_remove("OPENAI_API_KEY")
            .env_remove("OPENAI_BASE_URL")
            .env_remove("CODEX_API_KEY")
            .env_remove("XDG_CONFIG_HOME")
            .env_remove("XDG_DATA_HOME")
            .env_remove("XDG_STATE_HOME")
            .env_remove("XDG_CACHE_HOME")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::from(log));
        #[cfg(unix)]
        {
            // Own process group, so a hung server and everything it started can be killed.
            use std::os::unix::process::CommandExt as _;
            cmd.process_group(0);
        }
        let mut child = cmd.spawn().with_context(|| format!("cannot start `{} app-server`", codex.display()))?;
        let stdin = child.stdin.take();
        let stdout = child.stdout.take().context("no stdout pipe")?;

        let (tx, lines) = mpsc::channel();
        let reader = std::thread::Builder::new().name("app-server-stdout".into()).spawn(move || {
            let mut stdout = BufReader::new(stdout);
            let mut buf = Vec::new();
            loop {
                buf.clear();
                match stdout.read_until(b'\n', &mut buf) {
                    Ok(0) | Err(_) => break,
                    Ok(_) => {
                        if buf.last() == Some(&b'\n') {
                            buf.pop();
                        }
                        if buf.last() == Some(&b'\r') {
                            buf.pop();
                        }
                        if tx.send(String::from_utf8_lossy(&buf).into_owned()).is_err() {
                            break;
                        }
                    }
                }
            }
        })?;

        Ok(AppServer {
            child,
            stdin,
            lines,
            reader: Some(reader),
            home,
            log_path: log_path.to_owned(),
            transcript: Vec::new(),
            backlog: VecDeque::new(),
            undecoded: Vec::new(),
            next_id: 0,
            eof: false,
        })
    }

    /// The temporary `CODEX_HOME`.
    pub fn home(&self) -> &Path {
        self.home.path()
    }

    fn pid(&self) -> u32 {
        self.child.id()
    }

    fn write_line(&mut self, line: &str, bad: bool) -> Result<()> {
        ensure!(!line.contains('\n'), "a wire line cannot contain a newline: {line:?}");
        self.transcript.push(Entry { number: 0, dir: Dir::C2s, line: line.to_owned(), bad });
        let stdin = self.stdin.as_mut().context("stdin already closed")?;
        stdin.write_all(format!("{line}\n").as_bytes())?;
        stdin.flush()?;
        Ok(())
    }

    /// Sends a typed message.
    pub fn send(&mut self, message: &ClientMessage) -> Result<()> {
        self.write_line(&message.to_line(), false)
    }

    /// Sends a line as it is, marked as deliberately malformed.
    pub fn send_bad_line(&mut self, line: &str) -> Result<()> {
        self.write_line(line, true)
    }

    /// Sends a well-formed line the typed crate cannot produce (it never writes `"jsonrpc"`).
    pub fn send_raw_line(&mut self, line: &str) -> Result<()> {
        self.write_line(line, false)
    }

    /// The next integer request id (1, 2, ...).
    pub fn next_id(&mut self) -> RequestId {
        self.next_id += 1;
        RequestId::Integer(self.next_id)
    }

    /// Sends the request `make` builds with the next id; returns the id.
    pub fn request(&mut self, make: impl FnOnce(RequestId) -> ClientRequest) -> Result<RequestId> {
        let id = self.next_id();
        self.send(&Message::Request(make(id.clone())))?;
        Ok(id)
    }

    /// Sends a request and waits for its response or error.
    pub fn call(&mut self, make: impl FnOnce(RequestId) -> ClientRequest, timeout: Duration) -> Result<Outcome> {
        let id = self.request(make)?;
        self.wait_response(&id, timeout)
    }

    /// Sends a request of method `R` and waits for a successful response, decoded as
    /// `R::Response`.
    pub fn call_ok<R: Request>(&mut self, make: impl FnOnce(RequestId) -> ClientRequest, timeout: Duration) -> Result<R::Response> {
        match self.call(make, timeout)? {
            Ok(response) => response.decode::<R>().with_context(|| format!("{}: the result does not decode", R::METHOD)),
            Err(error) => bail!("{} failed: {} {}", R::METHOD, error.error.code, error.error.message),
        }
    }

    /// Sends a notification.
    pub fn notify(&mut self, notification: ClientNotification) -> Result<()> {
        self.send(&Message::Notification(notification))
    }

    /// Answers a server request with `result`.
    pub fn respond<T: Serialize>(&mut self, id: RequestId, result: &T) -> Result<()> {
        let response = Response::new(id, result).context("cannot encode the result")?;
        self.send(&Message::Response(response))
    }

    /// Reads one line (recorded in the transcript); `None` on timeout or end of output.
    fn recv_line(&mut self, timeout: Duration) -> Option<String> {
        if self.eof {
            return None;
        }
        match self.lines.recv_timeout(timeout) {
            Ok(line) => {
                self.transcript.push(Entry { number: 0, dir: Dir::S2c, line: line.clone(), bad: false });
                Some(line)
            }
            Err(RecvTimeoutError::Timeout) => None,
            Err(RecvTimeoutError::Disconnected) => {
                self.eof = true;
                None
            }
        }
    }

    /// Reads one line and, if it decodes, appends it to the backlog.
    fn pump(&mut self, timeout: Duration) -> bool {
        match self.recv_line(timeout) {
            Some(line) => {
                match ServerMessage::from_line(&line) {
                    Ok(message) => self.backlog.push_back(message),
                    Err(e) => self.undecoded.push(format!("{e}: {line}")),
                }
                true
            }
            None => false,
        }
    }

    /// Returns what `pick` extracts from the first message (backlog first, then new lines) it
    /// accepts; that message is removed, everything else read on the way stays in the backlog.
    pub fn wait_for<T>(&mut self, what: &str, timeout: Duration, mut pick: impl FnMut(&ServerMessage) -> Option<T>) -> Result<T> {
        let deadline = Instant::now() + timeout;
        let mut searched = 0;
        loop {
            for i in searched..self.backlog.len() {
                if let Some(found) = pick(&self.backlog[i]) {
                    self.backlog.remove(i);
                    return Ok(found);
                }
            }
            searched = self.backlog.len();
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() || (!self.pump(left) && self.eof) {
                return Err(self.wait_error(what, timeout));
            }
        }
    }

    /// Waits for the response or error answering request `id`.
    pub fn wait_response(&mut self, id: &RequestId, timeout: Duration) -> Result<Outcome> {
        self.wait_for(&format!("the response to request {}", serde_json::to_string(id)?), timeout, |m| match m {
            Message::Response(r) if &r.id == id => Some(Ok(r.clone())),
            Message::Error(e) if e.id.as_ref() == Some(id) => Some(Err(e.clone())),
            _ => None,
        })
    }

    /// Waits for a notification that `pick` accepts.
    pub fn wait_notification<T>(&mut self, what: &str, timeout: Duration, mut pick: impl FnMut(&ServerNotification) -> Option<T>) -> Result<T> {
        self.wait_for(what, timeout, |m| match m {
            Message::Notification(n) => pick(n),
            _ => None,
        })
    }

    /// Waits for a server request that `pick` accepts.
    pub fn wait_server_request<T>(&mut self, what: &str, timeout: Duration, mut pick: impl FnMut(&ServerRequest) -> Option<T>) -> Result<T> {
        self.wait_for(what, timeout, |m| match m {
            Message::Request(r) => pick(r),
            _ => None,
        })
    }

    /// Reads until no line arrived for `quiet`, at most for `max`; returns the number read.
    /// Catches late notifications (e.g. output deltas after `turn/completed`).
    pub fn drain(&mut self, quiet: Duration, max: Duration) -> usize {
        let deadline = Instant::now() + max;
        let mut n = 0;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() || !self.pump(quiet.min(left)) {
                return n;
            }
            n += 1;
        }
    }

    /// Server lines that did not decode with the typed crate.
    pub fn undecoded(&self) -> &[String] {
        &self.undecoded
    }

    fn wait_error(&self, what: &str, timeout: Duration) -> anyhow::Error {
        let recent: Vec<&str> = self.transcript.iter().rev().take(5).map(|e| e.line.as_str()).collect();
        let log = std::fs::read_to_string(&self.log_path).unwrap_or_default();
        let log_tail: Vec<&str> = log.lines().rev().take(10).collect();
        anyhow!(
            "waited {timeout:?} for {what} (server output {}); last lines read or written (newest first):\n  {}\n\
             stderr tail (newest first, {}):\n  {}",
            if self.eof { "ended" } else { "still open" },
            recent.join("\n  "),
            self.log_path.display(),
            log_tail.join("\n  ")
        )
    }

    /// Closes stdin, reads the remaining output until the server exits, and kills the process
    /// group if it does not exit within `timeout`. Returns the transcript.
    pub fn finish(mut self, timeout: Duration) -> Result<(Vec<Entry>, ExitStatus)> {
        self.stdin = None;
        let deadline = Instant::now() + timeout;
        while !self.eof && Instant::now() < deadline {
            self.pump(deadline.saturating_duration_since(Instant::now()));
        }
        let status = loop {
            if let Some(status) = self.child.try_wait()? {
                break status;
            }
            if Instant::now() >= deadline {
                eprintln!("app-server {} did not exit within {timeout:?}; killing it", self.pid());
                self.kill_group();
                break self.child.wait()?;
            }
            std::thread::sleep(Duration::from_millis(20));
        };
        // Leftover children (if any) share the process group; they must not outlive us.
        self.kill_group();
        self.join_reader();
        Ok((std::mem::take(&mut self.transcript), status))
    }

    fn kill_group(&mut self) {
        #[cfg(unix)]
        {
            // Signal the process group we created (its id is the child's pid), nothing else.
            let _ = Command::new("kill").args(["-KILL", "--", &format!("-{}", self.child.id())]).stderr(Stdio::null()).status();
        }
        let _ = self.child.kill();
    }

    fn join_reader(&mut self) {
        // The reader ends at EOF; do not block on it if a stray process still holds stdout.
        let deadline = Instant::now() + Duration::from_secs(2);
        while let Some(reader) = self.reader.take() {
            if reader.is_finished() {
                let _ = reader.join();
            } else if Instant::now() < deadline {
                self.reader = Some(reader);
                std::thread::sleep(Duration::from_millis(10));
            }
        }
    }
}

impl Drop for AppServer {
    fn drop(&mut self) {
        if matches!(self.child.try_wait(), Ok(None)) {
            self.stdin = None;
            self.kill_group();
            let _ = self.child.wait();
        }
    }
}
