//! A real `codex app-server` in an isolated, throw-away `CODEX_HOME`, driven with JSON messages
//! that the typed crate checks before they are sent.
//!
//! [`AppServer::spawn`] writes a `config.toml` that points the model provider at the mock,
//! starts the server (own process group, `RUST_LOG=warn`, a clean `HOME`, stderr to a log file)
//! and reads its stdout on a thread. Every line written and every line consumed is appended to
//! the transcript in the order the client saw them: a server line that was already on its way
//! when the client wrote can come after that client line. Reading in the client's order
//! (rather than time-stamping on arrival) keeps transcripts repeatable.
//!
//! The scenarios write their messages as JSON, so that xtask compiles against the crate
//! generated from any codex release. Before a message goes out, [`AppServer::typed_line`] runs
//! the drift check on it: a method, member or value that the generated crate does not know (a
//! scenario that no longer fits the schema) is an error naming the method, the serde or JSON
//! path and the codex version, and nothing is sent. What is sent is the typed crate's own
//! encoding of the message (members in schema order). Only deliberately malformed lines are
//! raw ([`AppServer::send_bad_line`], plus the one well-formed line the typed crate never
//! writes: a request carrying `"jsonrpc": "2.0"`).
//!
//! Server lines are kept as JSON values; the `wait_*` helpers read until a wanted message
//! arrives and keep the others in a backlog that later waits search first. Whether they fit the
//! types is the drift check's business, run over the whole recording afterwards.
//!
//! Nothing waits forever: every read has a deadline, and [`AppServer::finish`] (or drop) kills
//! the process group if the server does not exit after stdin is closed.

use codex_app_protocol::framing::excerpt;
use std::collections::VecDeque;
use std::fs::File;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, ExitStatus, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use anyhow::{anyhow, ensure, Context as _, Result};
use codex_app_mock::CodexHome;
use codex_app_protocol::{ClientMessage, ClientResponse, Message, Response, ServerResponse, CODEX_VERSION};
use codex_app_traffic::{drift, Dir, Entry, Format};
use serde_json::{json, Value};

/// The outcome of a request: its `result`, or its `error` object.
pub type Outcome = std::result::Result<Value, Value>;

/// A running `codex app-server`.
pub struct AppServer {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Receiver<String>,
    reader: Option<JoinHandle<()>>,
    home: CodexHome,
    log_path: PathBuf,
    transcript: Vec<Entry>,
    backlog: VecDeque<Value>,
    /// Server lines that are not JSON (they stay in the transcript; the drift check reports
    /// them).
    not_json: Vec<String>,
    next_id: i64,
    eof: bool,
}

impl AppServer {
    /// Creates a fresh `CODEX_HOME` (with `config.toml` for `mock_base_url`) and starts
    /// `codex app-server` in `<CODEX_HOME>/work` with `HOME=<CODEX_HOME>/home`; stderr goes to
    /// `log_path`.
    pub fn spawn(codex: &Path, mock_base_url: &str, log_path: &Path) -> Result<AppServer> {
        let home = CodexHome::new(mock_base_url)?;
        if let Some(dir) = log_path.parent() {
            std::fs::create_dir_all(dir)?;
        }
        let log = File::create(log_path).with_context(|| format!("cannot create {}", log_path.display()))?;

        let mut cmd = Command::new(codex);
        cmd.arg("app-server");
        home.configure(&mut cmd);
        cmd.stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::from(log));
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
            not_json: Vec::new(),
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

    /// The line the typed crate writes for the client message `message`, after checking that
    /// it fits the generated types: the drift check must find nothing (no unknown method,
    /// member or value, nothing undecodable, nothing lost in the round trip). `answering` is
    /// the server request a response answers (its result is typed by that request's method).
    pub fn typed_line(message: &Value, answering: Option<&Value>) -> Result<String> {
        let line = message.to_string();
        let mut entries = Vec::new();
        if let Some(request) = answering {
            entries.push(Entry { number: 0, dir: Dir::S2c, line: request.to_string(), bad: false });
        }
        entries.push(Entry { number: entries.len() + 1, dir: Dir::C2s, line: line.clone(), bad: false });
        let report = drift::check(&entries, Format::Transcript);
        let findings: Vec<String> = report.drift().filter(|f| f.dir == Dir::C2s).map(|f| f.to_string()).collect();
        ensure!(
            findings.is_empty(),
            "this message does not fit the types generated from codex {CODEX_VERSION}:\n  {}\n  message: {}",
            findings.join("\n  "),
            excerpt(&line, 300)
        );
        let decoded = ClientMessage::from_line(&line).context("the checked message does not decode")?;
        Ok(match (decoded, answering) {
            (Message::Response(response), Some(request)) => {
                let method = request["method"].as_str().context("the answered request has no method")?;
                let typed =
                    ServerResponse::decode(method, &response.result).context("the checked result does not decode")?;
                ClientMessage::Response(Response::new(response.id, &typed)?).to_line()
            }
            (decoded, _) => decoded.to_line(),
        })
    }

    /// Checks a client message (see [`AppServer::typed_line`]) and sends the typed encoding.
    fn send_checked(&mut self, message: &Value, answering: Option<&Value>) -> Result<()> {
        let line = Self::typed_line(message, answering)?;
        self.write_line(&line, false)
    }

    /// Sends a line as it is, marked as deliberately malformed.
    pub fn send_bad_line(&mut self, line: &str) -> Result<()> {
        self.write_line(line, true)
    }

    /// Sends a well-formed line the typed crate does not write (`"jsonrpc"`, `"params": {}` for
    /// a method without params).
    pub fn send_raw_line(&mut self, line: &str) -> Result<()> {
        self.write_line(line, false)
    }

    /// The next integer request id (1, 2, ...).
    pub fn next_id(&mut self) -> Value {
        self.next_id += 1;
        json!(self.next_id)
    }

    /// Sends the request `method` with `params` (checked first) under the next id; returns
    /// the id.
    pub fn request(&mut self, method: &str, params: Value) -> Result<Value> {
        let id = self.next_id();
        self.send_checked(&json!({"id": id, "method": method, "params": params}), None)
            .with_context(|| format!("request `{method}`"))?;
        Ok(id)
    }

    /// Sends a request and waits for its response or error.
    pub fn call(&mut self, method: &str, params: Value, timeout: Duration) -> Result<Outcome> {
        let id = self.request(method, params)?;
        self.wait_response(&id, timeout)
    }

    /// Sends a request and waits for its response or error, after checking that a result
    /// decodes as the method's response type.
    pub fn call_checked(&mut self, method: &str, params: Value, timeout: Duration) -> Result<Outcome> {
        let outcome = self.call(method, params, timeout)?;
        if let Ok(result) = &outcome {
            let raw = serde_json::value::to_raw_value(result)?;
            ClientResponse::decode(method, &raw).with_context(|| format!("{method}: the result does not decode"))?;
        }
        Ok(outcome)
    }

    /// Sends a request and waits for a successful response; returns its result, after
    /// checking that it decodes as the method's response type.
    pub fn call_ok(&mut self, method: &str, params: Value, timeout: Duration) -> Result<Value> {
        self.call_checked(method, params, timeout)?.map_err(|error| anyhow!("{method} failed: {error}"))
    }

    /// Sends a notification (`params` `None`: no `params` member).
    pub fn notify(&mut self, method: &str, params: Option<Value>) -> Result<()> {
        let mut message = json!({"method": method});
        if let Some(params) = params {
            message["params"] = params;
        }
        self.send_checked(&message, None).with_context(|| format!("notification `{method}`"))
    }

    /// Answers the server request `request` (the whole message) with `result` (checked first,
    /// typed by the request's method).
    pub fn respond(&mut self, request: &Value, result: Value) -> Result<()> {
        let method = request["method"].as_str().unwrap_or("?").to_owned();
        self.send_checked(&json!({"id": request["id"], "result": result}), Some(request))
            .with_context(|| format!("the response to `{method}`"))
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

    /// Reads one line and, if it is JSON, appends it to the backlog.
    fn pump(&mut self, timeout: Duration) -> bool {
        match self.recv_line(timeout) {
            Some(line) => {
                match serde_json::from_str::<Value>(&line) {
                    Ok(message) => self.backlog.push_back(message),
                    Err(e) => self.not_json.push(format!("{e}: {line}")),
                }
                true
            }
            None => false,
        }
    }

    /// Returns what `pick` extracts from the first message (backlog first, then new lines) it
    /// accepts; that message is removed, everything else read on the way stays in the backlog.
    pub fn wait_for<T>(
        &mut self,
        what: &str,
        timeout: Duration,
        mut pick: impl FnMut(&Value) -> Option<T>,
    ) -> Result<T> {
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
    pub fn wait_response(&mut self, id: &Value, timeout: Duration) -> Result<Outcome> {
        self.wait_for(&format!("the response to request {id}"), timeout, |m| {
            if m.get("method").is_some() || m.get("id") != Some(id) {
                return None;
            }
            match (m.get("result"), m.get("error")) {
                (Some(result), None) => Some(Ok(result.clone())),
                (None, Some(error)) => Some(Err(error.clone())),
                _ => None,
            }
        })
    }

    /// Waits for a notification `method` whose params `pick` accepts (`Value::Null` when it
    /// has none).
    pub fn wait_notification<T>(
        &mut self,
        method: &str,
        timeout: Duration,
        mut pick: impl FnMut(&Value) -> Option<T>,
    ) -> Result<T> {
        self.wait_for(&format!("notification `{method}`"), timeout, |m| {
            (m.get("id").is_none() && m["method"] == method).then(|| pick(&m["params"])).flatten()
        })
    }

    /// Waits for a server request `method` whose params `pick` accepts; returns the whole
    /// request (to answer with [`AppServer::respond`]) and what `pick` extracted.
    pub fn wait_server_request<T>(
        &mut self,
        method: &str,
        timeout: Duration,
        mut pick: impl FnMut(&Value) -> Option<T>,
    ) -> Result<(Value, T)> {
        self.wait_for(&format!("server request `{method}`"), timeout, |m| {
            (m.get("id").is_some() && m["method"] == method)
                .then(|| pick(&m["params"]).map(|t| (m.clone(), t)))
                .flatten()
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

    /// Server lines that are not JSON.
    pub fn not_json(&self) -> &[String] {
        &self.not_json
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
            let _ = Command::new("kill")
                .args(["-KILL", "--", &format!("-{}", self.child.id())])
                .stderr(Stdio::null())
                .status();
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
