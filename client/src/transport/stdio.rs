//! `codex app-server` as a child process, NDJSON over its stdin and stdout.

use std::collections::VecDeque;
use std::ffi::{OsStr, OsString};
use std::io;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures_util::FutureExt;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, Lines};
use tokio::process::{Child, ChildStdin, ChildStdout, Command};

use super::find_codex::{find_codex_from, Found};
use super::{LineReceiver, LineSender, Transport};
use crate::error::{ServerExit, TransportError, TransportErrorKind};

/// Finds the codex binary: `explicit`, else `$CODEX_BIN` (when set and not empty), else
/// `codex` in one of the absolute directories of `PATH`.
///
/// Nothing else: the library never runs a binary because it lies in the current directory or
/// one of its parents (an application started inside a cloned repository would otherwise run
/// whatever that repository ships, such as a `.codex-bin/` of its own).
pub fn find_codex(explicit: Option<&Path>) -> Option<PathBuf> {
    find_codex_from(explicit, None).map(|(path, _)| path)
}

/// How to start `codex app-server`: the binary, `-c key=value` overrides, environment,
/// working directory, and how much of its stderr to keep.
#[derive(Debug, Clone)]
pub struct CodexCommand {
    program: Option<PathBuf>,
    overrides: Vec<(String, String)>,
    args: Vec<OsString>,
    env: Vec<(OsString, Option<OsString>)>,
    cwd: Option<PathBuf>,
    stderr_tail_lines: usize,
    exit_timeout: Duration,
}

impl Default for CodexCommand {
    fn default() -> Self {
        CodexCommand {
            program: None,
            overrides: Vec::new(),
            args: Vec::new(),
            env: Vec::new(),
            cwd: None,
            stderr_tail_lines: 50,
            exit_timeout: Duration::from_secs(5),
        }
    }
}

impl CodexCommand {
    /// `codex app-server`, the binary found by [`find_codex`] (`$CODEX_BIN`, else `codex` on
    /// `PATH`) unless [`program`](Self::program) names one.
    pub fn new() -> Self {
        Self::default()
    }

    /// Uses this binary instead of searching for one.
    pub fn program(mut self, path: impl Into<PathBuf>) -> Self {
        self.program = Some(path.into());
        self
    }

    /// Adds `-c key=value` (a configuration override; `value` is parsed as TOML by codex).
    pub fn config(mut self, key: impl Into<String>, value: impl Into<String>) -> Self {
        self.overrides.push((key.into(), value.into()));
        self
    }

    /// Adds an argument after `app-server` and the overrides (`--enable FEATURE`, ...).
    pub fn arg(mut self, arg: impl AsRef<OsStr>) -> Self {
        self.args.push(arg.as_ref().to_owned());
        self
    }

    /// Sets an environment variable for the server.
    pub fn env(mut self, key: impl AsRef<OsStr>, value: impl AsRef<OsStr>) -> Self {
        self.env.push((key.as_ref().to_owned(), Some(value.as_ref().to_owned())));
        self
    }

    /// Removes an environment variable the server would otherwise inherit.
    pub fn env_remove(mut self, key: impl AsRef<OsStr>) -> Self {
        self.env.push((key.as_ref().to_owned(), None));
        self
    }

    /// Starts the server in `dir`.
    pub fn current_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.cwd = Some(dir.into());
        self
    }

    /// How many of the server's last stderr lines to keep for error messages (default 50;
    /// each line is cut at 1,000 bytes).
    pub fn stderr_tail_lines(mut self, lines: usize) -> Self {
        self.stderr_tail_lines = lines;
        self
    }

    /// How long a shutdown waits for the server to exit after its stdin is closed before it
    /// kills it (default 5 s).
    pub fn exit_timeout(mut self, timeout: Duration) -> Self {
        self.exit_timeout = timeout;
        self
    }

    /// The program and arguments that [`spawn`](Self::spawn) runs. Without a binary to run,
    /// an error of the kind [`TransportErrorKind::CodexNotFound`].
    pub fn command_line(&self) -> Result<(PathBuf, Vec<OsString>), TransportError> {
        self.resolve().map(|(program, args, _)| (program, args))
    }

    fn resolve(&self) -> Result<(PathBuf, Vec<OsString>, Found), TransportError> {
        let (program, found) = find_codex_from(self.program.as_deref(), None).ok_or_else(|| {
            TransportError::new(
                "finding codex",
                "no codex binary: pass one with CodexCommand::program, set $CODEX_BIN, or put `codex` on PATH \
                 (npm install -g @openai/codex)",
            )
            .with_kind(TransportErrorKind::CodexNotFound)
        })?;
        let mut args = vec![OsString::from("app-server")];
        for (key, value) in &self.overrides {
            args.push("-c".into());
            args.push(format!("{key}={value}").into());
        }
        args.extend(self.args.iter().cloned());
        Ok((program, args, found))
    }

    /// Spawns the server with piped stdin, stdout and stderr. The child is killed when the
    /// transport (that is, the client) is dropped. The program, how it was found and its
    /// arguments are logged (a `tracing` event at `INFO`) before it is started.
    pub fn spawn(&self) -> Result<StdioTransport, TransportError> {
        let (program, args, found) = self.resolve()?;
        let found = match found {
            Found::Explicit => "CodexCommand::program",
            Found::Env => "$CODEX_BIN",
            Found::Pinned => "the workspace's pinned install",
            Found::Path => "PATH",
        };
        tracing::info!(program = %program.display(), found, ?args, cwd = ?self.cwd, "starting codex app-server");
        let mut cmd = Command::new(&program);
        cmd.args(&args).stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped()).kill_on_drop(true);
        // Plain text on stderr (its lines are logged and shown in errors); `env` can undo it.
        cmd.env("NO_COLOR", "1");
        for (key, value) in &self.env {
            match value {
                Some(value) => cmd.env(key, value),
                None => cmd.env_remove(key),
            };
        }
        if let Some(dir) = &self.cwd {
            cmd.current_dir(dir);
        }
        // Its own process group: the npm `codex` is a node script that starts the native
        // binary as its child, and killing the server must kill both.
        #[cfg(unix)]
        cmd.process_group(0);
        let mut child = cmd.spawn().map_err(|e| {
            // A program that does not exist is a missing codex; any other failure (a working
            // directory that does not exist, no permission) is an I/O error.
            let missing = e.kind() == io::ErrorKind::NotFound && !program.is_file();
            let error = TransportError::io(format!("spawning {} app-server", program.display()), e);
            match missing {
                true => error.with_kind(TransportErrorKind::CodexNotFound),
                false => error,
            }
        })?;
        let stdin = child.stdin.take().expect("stdin is piped");
        let stdout = child.stdout.take().expect("stdout is piped");
        let stderr = child.stderr.take().expect("stderr is piped");
        let tail = StderrTail::new(self.stderr_tail_lines);
        tokio::spawn(tail.clone().collect(stderr));
        let group = ProcessGroup(child.id());
        Ok(StdioTransport { child, stdin, stdout, tail, exit_timeout: self.exit_timeout, group })
    }
}

/// The last lines of the server's stderr, shared with the task that reads it.
#[derive(Debug, Clone)]
struct StderrTail {
    lines: Arc<Mutex<VecDeque<String>>>,
    max: usize,
}

impl StderrTail {
    const MAX_LINE: usize = 1000;

    fn new(max: usize) -> Self {
        StderrTail { lines: Arc::new(Mutex::new(VecDeque::new())), max }
    }

    /// Reads the server's stderr as it comes: each line, without its ANSI escapes, is a
    /// `tracing` event (target `codex_app_client::server_stderr`, level `INFO`) and is kept in
    /// the tail.
    async fn collect(self, stderr: tokio::process::ChildStderr) {
        let mut reader = BufReader::new(stderr);
        let mut buf = Vec::new();
        loop {
            buf.clear();
            match reader.read_until(b'\n', &mut buf).await {
                Ok(0) | Err(_) => break,
                Ok(_) => {
                    let text = String::from_utf8_lossy(&buf);
                    let line = strip_ansi(text.trim_end());
                    tracing::info!(target: "codex_app_client::server_stderr", "{line}");
                    let line = codex_app_protocol::framing::excerpt(&line, Self::MAX_LINE).into_owned();
                    let mut lines = self.lines.lock().unwrap_or_else(|e| e.into_inner());
                    lines.push_back(line);
                    while lines.len() > self.max {
                        lines.pop_front();
                    }
                }
            }
        }
    }

    fn snapshot(&self) -> Vec<String> {
        self.lines.lock().unwrap_or_else(|e| e.into_inner()).iter().cloned().collect()
    }
}

/// `text` without its ANSI escape sequences: CSI (`ESC [` ... a final byte, colours and
/// cursor moves), OSC (`ESC ]` ... `BEL` or `ESC \\`, titles and links) and the two-byte
/// `ESC x` forms. Everything else is kept.
pub(crate) fn strip_ansi(text: &str) -> std::borrow::Cow<'_, str> {
    if !text.contains('\u{1b}') {
        return text.into();
    }
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '\u{1b}' {
            out.push(c);
            continue;
        }
        match chars.next() {
            // CSI: parameter and intermediate bytes, then one final byte in @..=~.
            Some('[') => {
                for c in chars.by_ref() {
                    if ('@'..='~').contains(&c) {
                        break;
                    }
                }
            }
            // OSC: up to BEL or ST (ESC \).
            Some(']') => {
                while let Some(c) = chars.next() {
                    if c == '\u{7}' {
                        break;
                    }
                    if c == '\u{1b}' && chars.peek() == Some(&'\\') {
                        chars.next();
                        break;
                    }
                }
            }
            // Two-byte forms (ESC 7, ESC c, ...), and a lone ESC at the end.
            Some(_) | None => {}
        }
    }
    out.into()
}

/// A running `codex app-server` child; see [`CodexCommand::spawn`].
#[derive(Debug)]
pub struct StdioTransport {
    child: Child,
    stdin: ChildStdin,
    stdout: ChildStdout,
    tail: StderrTail,
    exit_timeout: Duration,
    group: ProcessGroup,
}

/// The server's process group (its id is the child's pid); killed when the receiving half
/// is dropped.
#[derive(Debug)]
struct ProcessGroup(Option<u32>);

impl ProcessGroup {
    fn kill(&self) {
        #[cfg(unix)]
        if let Some(id) = self.0.and_then(|id| libc::pid_t::try_from(id).ok()) {
            // SAFETY: killpg takes two integers and only sends a signal: no memory is
            // involved. The group is the one `spawn` made (`process_group(0)`: its id is the
            // child's pid, held until the transport is dropped). Exercised by
            // `tests::dropping_the_process_group_kills_every_process_in_it`.
            unsafe {
                libc::killpg(id, libc::SIGKILL);
            }
        }
    }
}

impl Drop for ProcessGroup {
    fn drop(&mut self) {
        self.kill();
    }
}

impl StdioTransport {
    /// The child's process id (while it runs); it is also the id of the server's process
    /// group.
    pub fn id(&self) -> Option<u32> {
        self.child.id()
    }
}

/// Writes to the server's stdin.
#[derive(Debug)]
pub struct StdioSender(Option<ChildStdin>);

/// Reads the server's stdout; owns the child process.
#[derive(Debug)]
pub struct StdioReceiver {
    lines: Lines<BufReader<ChildStdout>>,
    child: Child,
    tail: StderrTail,
    exit_timeout: Duration,
    group: ProcessGroup,
}

impl Transport for StdioTransport {
    type Sender = StdioSender;
    type Receiver = StdioReceiver;

    fn split(self) -> (StdioSender, StdioReceiver) {
        let receiver = StdioReceiver {
            lines: BufReader::with_capacity(64 * 1024, self.stdout).lines(),
            child: self.child,
            tail: self.tail,
            exit_timeout: self.exit_timeout,
            group: self.group,
        };
        (StdioSender(Some(self.stdin)), receiver)
    }
}

impl LineSender for StdioSender {
    async fn send(&mut self, mut line: String) -> io::Result<()> {
        let stdin = self.0.as_mut().ok_or_else(|| io::Error::new(io::ErrorKind::BrokenPipe, "stdin was closed"))?;
        line.push('\n');
        stdin.write_all(line.as_bytes()).await?;
        stdin.flush().await
    }

    async fn close(&mut self) -> io::Result<()> {
        if let Some(mut stdin) = self.0.take() {
            stdin.shutdown().await?;
        }
        Ok(())
    }
}

impl LineReceiver for StdioReceiver {
    async fn recv(&mut self) -> io::Result<Option<String>> {
        // `Lines::next_line` is cancel safe.
        self.lines.next_line().await
    }

    async fn recv_many(&mut self, lines: &mut Vec<String>, max: usize) -> io::Result<usize> {
        let Some(first) = self.lines.next_line().await? else { return Ok(0) };
        lines.push(first);
        let mut n = 1;
        // Every further line already complete in the read buffer: `next_line` returns it
        // without reading, so nothing waits and nothing is left half read.
        while n < max && self.lines.get_ref().buffer().contains(&b'\n') {
            match self.lines.next_line().now_or_never() {
                Some(Ok(Some(line))) => {
                    lines.push(line);
                    n += 1;
                }
                _ => break, // not reached: a complete line is buffered
            }
        }
        Ok(n)
    }

    async fn exit(&mut self, timeout: Duration) -> ServerExit {
        let timeout = timeout.min(self.exit_timeout);
        let waiting = tokio::time::Instant::now();
        let (status, killed_after) = match tokio::time::timeout(timeout, self.child.wait()).await {
            Ok(Ok(status)) => (Some(status.to_string()), None),
            Ok(Err(e)) => (Some(format!("cannot wait for the server: {e}")), None),
            Err(_) => {
                let waited = waiting.elapsed();
                self.group.kill();
                let _ = self.child.kill().await;
                let status = match self.child.try_wait() {
                    Ok(Some(status)) => Some(status.to_string()),
                    _ => None,
                };
                (status, Some(waited))
            }
        };
        // Whatever the server started in its group must not outlive it.
        self.group.kill();
        // Give the stderr reader a moment to take the last lines.
        tokio::time::sleep(Duration::from_millis(20)).await;
        ServerExit { status, killed_after, stderr_tail: self.tail.snapshot(), ..ServerExit::default() }
    }
}

#[cfg(test)]
mod tests {
    use super::strip_ansi;

    /// The `unsafe` `killpg` of `ProcessGroup::kill`: dropping the group kills the server and
    /// what it started (as the npm `codex` starts the native binary).
    #[cfg(target_os = "linux")]
    #[test]
    fn dropping_the_process_group_kills_every_process_in_it() {
        use std::io::BufRead;
        use std::os::unix::process::{CommandExt, ExitStatusExt};
        use std::time::{Duration, Instant};

        let mut server = std::process::Command::new("sh")
            .args(["-c", "sleep 60 & echo $!; wait"])
            .stdout(std::process::Stdio::piped())
            .process_group(0)
            .spawn()
            .unwrap();
        let mut line = String::new();
        std::io::BufReader::new(server.stdout.take().unwrap()).read_line(&mut line).unwrap();
        let started: u32 = line.trim().parse().unwrap();

        drop(super::ProcessGroup(Some(server.id())));
        assert_eq!(server.wait().unwrap().signal(), Some(libc::SIGKILL));
        // What the server started is gone too (or a zombie until init reaps it).
        let deadline = Instant::now() + Duration::from_secs(10);
        while let Ok(stat) = std::fs::read_to_string(format!("/proc/{started}/stat")) {
            if stat.rsplit(')').next().is_some_and(|rest| rest.trim_start().starts_with('Z')) {
                break;
            }
            assert!(Instant::now() < deadline, "the server's child is still running: {stat}");
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    #[test]
    fn ansi_escapes_are_stripped() {
        assert_eq!(strip_ansi("plain"), "plain");
        assert_eq!(
            strip_ansi("\u{1b}[2m2026-11-27T04:00:00Z\u{1b}[0m \u{1b}[32m INFO\u{1b}[0m codex: started"),
            "2026-11-27T04:00:00Z  INFO codex: started"
        );
        assert_eq!(strip_ansi("\u{1b}[1;38;5;208mwarn\u{1b}[m: x"), "warn: x");
        assert_eq!(strip_ansi("\u{1b}]0;title\u{7}after"), "after");
        assert_eq!(strip_ansi("\u{1b}]8;;http://x\u{1b}\\link\u{1b}]8;;\u{1b}\\"), "link");
        assert_eq!(strip_ansi("a\u{1b}7b\u{1b}"), "ab");
        assert_eq!(strip_ansi("ünïcödé \u{1b}[31mröt\u{1b}[0m"), "ünïcödé röt");
    }
}
