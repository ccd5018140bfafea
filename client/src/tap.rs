//! The transcript tap: every line of a session, both directions, in the project's transcript
//! format, so `cargo xtask drift FILE` can check a user's own sessions against the types.
//!
//! One JSON object per line: `{"dir":"c2s","line":"<the exact wire line>"}` for what the
//! client sent, `"s2c"` for what the server sent. A client line is queued before it is sent,
//! so a response is never written before its request.
//!
//! The tap never holds up the connection: lines go into a bounded queue ([`TAP_QUEUE`] lines)
//! that a thread of the tap's own writes to the sink, so a slow disk never blocks the
//! connection's loop. When the queue is full the line is dropped, counted
//! ([`Tap::dropped`], [`ConnectionStats::tap_dropped`](crate::ConnectionStats::tap_dropped)) and
//! reported (a `tracing` warning the first time). The connection's end waits (up to a second)
//! for the thread to have written what was queued, so after
//! [`Client::shutdown`](crate::Client::shutdown) the file is complete.

use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use serde::Serialize;
use tokio::sync::{mpsc, oneshot};

/// How many lines wait for the tap's thread at most.
pub const TAP_QUEUE: usize = 4096;

/// Where the tap writes. Cheap to clone; clones write to the same sink, through the same queue.
#[derive(Clone)]
pub struct Tap {
    inner: Arc<Inner>,
}

struct Inner {
    queue: mpsc::Sender<Message>,
    dropped: AtomicU64,
}

enum Message {
    Line(Direction, String),
    /// Answered once everything queued before it is written and flushed.
    Flush(oneshot::Sender<()>),
}

impl std::fmt::Debug for Tap {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Tap").field("dropped", &self.dropped()).finish_non_exhaustive()
    }
}

/// The direction of a line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Direction {
    /// Client to server.
    C2s,
    /// Server to client.
    S2c,
}

#[derive(Serialize)]
struct Entry<'a> {
    dir: &'static str,
    line: &'a str,
}

impl Tap {
    /// A tap that creates (or truncates) the file at `path`.
    pub fn create(path: impl AsRef<Path>) -> io::Result<Tap> {
        Ok(Tap::new(File::create(path)?))
    }

    /// A tap that writes to `sink`, on a thread of its own (entries are buffered and the sink
    /// is flushed whenever the queue runs empty). The thread ends when the last clone is
    /// dropped, after writing what was queued.
    pub fn new(sink: impl Write + Send + 'static) -> Tap {
        let (queue, lines) = mpsc::channel(TAP_QUEUE);
        let spawned = std::thread::Builder::new().name("codex-tap".into()).spawn(move || write_all(sink, lines));
        if let Err(e) = spawned {
            tracing::warn!(error = %e, "the transcript tap cannot start its thread; it writes nothing");
        }
        Tap { inner: Arc::new(Inner { queue, dropped: AtomicU64::new(0) }) }
    }

    /// Queues one entry; never waits. A full queue drops it (counted by
    /// [`dropped`](Self::dropped), a `tracing` warning the first time). A write error of the
    /// sink is logged (once) and otherwise ignored: the tap never stops the session.
    pub fn record(&self, dir: Direction, line: &str) {
        match self.inner.queue.try_send(Message::Line(dir, line.to_owned())) {
            Ok(()) => {}
            Err(mpsc::error::TrySendError::Full(_)) => {
                if self.inner.dropped.fetch_add(1, Ordering::Relaxed) == 0 {
                    tracing::warn!(
                        capacity = TAP_QUEUE,
                        "the transcript tap's sink is slower than the session: lines are dropped from the tap (counted in Tap::dropped)"
                    );
                }
            }
            Err(mpsc::error::TrySendError::Closed(_)) => {} // its thread could not start
        }
    }

    /// How many lines the tap dropped because its queue was full.
    pub fn dropped(&self) -> u64 {
        self.inner.dropped.load(Ordering::Relaxed)
    }

    /// Waits until what was queued so far is written and flushed, or `timeout` passed.
    pub(crate) async fn flush(&self, timeout: Duration) {
        let (done, written) = oneshot::channel();
        let flushed = async {
            if self.inner.queue.send(Message::Flush(done)).await.is_ok() {
                let _ = written.await;
            }
        };
        if tokio::time::timeout(timeout, flushed).await.is_err() {
            tracing::warn!(?timeout, "the transcript tap did not write its queue in time");
        }
    }
}

/// The tap's thread: writes the queue's entries until every [`Tap`] is gone.
fn write_all(sink: impl Write, mut lines: mpsc::Receiver<Message>) {
    let mut sink = BufWriter::new(sink);
    let mut failed = false;
    let mut report = |result: io::Result<()>| {
        if let Err(e) = result {
            if !std::mem::replace(&mut failed, true) {
                tracing::warn!(error = %e, "the transcript tap cannot write; its later errors are not logged");
            }
        }
    };
    while let Some(message) = lines.blocking_recv() {
        match message {
            Message::Line(dir, line) => {
                let dir = match dir {
                    Direction::C2s => "c2s",
                    Direction::S2c => "s2c",
                };
                let mut text = serde_json::to_string(&Entry { dir, line: &line }).expect("a string always serializes");
                text.push('\n');
                report(sink.write_all(text.as_bytes()));
                if lines.is_empty() {
                    report(sink.flush());
                }
            }
            Message::Flush(done) => {
                report(sink.flush());
                let _ = done.send(());
            }
        }
    }
    report(sink.flush());
}
