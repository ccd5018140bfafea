//! One transport of a connection: its receiving half, read by the connection's loop, and the
//! writer task that owns its sending half, with the lines queued for it.
//!
//! The transport's type goes no further than [`AnyTransport::new`], which opens it into a
//! [`Link`]: only the writer and the receiver are compiled per transport, and the connection's
//! loop, which holds the link, is compiled once, in this crate, rather than once per transport
//! type in every crate that starts a client.

use std::collections::VecDeque;
use std::io;
use std::time::Duration;

use futures_util::future::BoxFuture;

use tokio::sync::mpsc;
use tokio::task::JoinHandle;
use tokio::time::Instant;

use super::OUTGOING_MAX;
use crate::error::ServerExit;
use crate::tap::{Direction, Tap};
use crate::transport::{LineReceiver, LineSender, Transport};

/// After a write fails, how long the reader may still see the stream end by itself.
const WRITE_FAILURE_GRACE: Duration = Duration::from_millis(500);

/// How long the end of a link waits for the writer to finish what it writes.
const WRITER_GRACE: Duration = Duration::from_millis(500);

/// A line for the writer, or the end of the client's side.
pub(super) enum Out {
    Line(String),
    Close,
}

/// Where the writer task is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum WriterState {
    /// It writes what the loop hands it.
    Open,
    /// It was told to close the client's side after what it holds.
    Closing,
    /// It ended (and was joined).
    Ended,
}

/// A transport of any type, to be opened into a [`Link`].
pub(crate) struct AnyTransport(Box<dyn FnOnce(Option<Tap>) -> Link + Send>);

impl AnyTransport {
    /// The one place the transport's type is known: what is compiled per transport type.
    pub(crate) fn new<T: Transport>(transport: T) -> Self {
        AnyTransport(Box::new(move |tap| Link::open(transport, tap)))
    }

    /// Splits the transport and starts its writer.
    pub(super) fn open(self, tap: Option<Tap>) -> Link {
        (self.0)(tap)
    }
}

/// A [`LineReceiver`] of any type: what the loop reads (the trait's methods return futures of
/// each receiver's own type).
pub(super) trait Receive: Send {
    fn recv_many<'a>(&'a mut self, lines: &'a mut Vec<String>, max: usize) -> BoxFuture<'a, io::Result<usize>>;
    fn exit(&mut self, timeout: Duration) -> BoxFuture<'_, ServerExit>;
}

impl<R: LineReceiver> Receive for R {
    fn recv_many<'a>(&'a mut self, lines: &'a mut Vec<String>, max: usize) -> BoxFuture<'a, io::Result<usize>> {
        Box::pin(LineReceiver::recv_many(self, lines, max))
    }

    fn exit(&mut self, timeout: Duration) -> BoxFuture<'_, ServerExit> {
        Box::pin(LineReceiver::exit(self, timeout))
    }
}

/// One transport, open.
pub(super) struct Link {
    pub receiver: Box<dyn Receive>,
    pub to_writer: mpsc::Sender<Out>,
    /// The writer task, joined by [`Link::end`] (or by the loop when it ends by itself).
    pub writer: JoinHandle<Option<io::Error>>,
    pub writer_state: WriterState,
    /// A write failed (its error), and when to stop waiting for the stream to end.
    pub write_failed: Option<(String, Instant)>,
    /// Lines for the writer that its channel did not take yet, in order.
    pub outgoing: VecDeque<Out>,
}

impl Link {
    /// Splits `transport` and starts its writer.
    fn open<T: Transport>(transport: T, tap: Option<Tap>) -> Self {
        let (sender, receiver) = transport.split();
        let (to_writer, from_loop) = mpsc::channel(OUTGOING_MAX);
        Link {
            receiver: Box::new(receiver),
            to_writer,
            writer: tokio::spawn(writer(sender, from_loop, tap)),
            writer_state: WriterState::Open,
            write_failed: None,
            outgoing: VecDeque::new(),
        }
    }

    /// Queues a line for the writer.
    pub fn send(&mut self, line: String) {
        self.outgoing.push_back(Out::Line(line));
    }

    /// Queues the end of the client's side, after what is queued (once).
    pub fn close_after_queued(&mut self) {
        if self.writer_state == WriterState::Open {
            self.writer_state = WriterState::Closing;
            self.outgoing.push_back(Out::Close);
        }
    }

    /// Hands queued lines to the writer as far as its channel takes them.
    pub fn flush(&mut self) {
        while let Some(out) = self.outgoing.pop_front() {
            match self.to_writer.try_send(out) {
                Ok(()) => {}
                Err(mpsc::error::TrySendError::Full(out)) => {
                    self.outgoing.push_front(out);
                    return;
                }
                Err(mpsc::error::TrySendError::Closed(_)) => {
                    self.outgoing.clear();
                    return;
                }
            }
        }
    }

    /// The writer ended by itself (joined by the loop): a failed write gives the reader
    /// [`WRITE_FAILURE_GRACE`] to see the stream end.
    pub fn writer_ended(&mut self, failure: Option<io::Error>) {
        self.writer_state = WriterState::Ended;
        if let Some(e) = failure {
            self.write_failed = Some((e.to_string(), Instant::now() + WRITE_FAILURE_GRACE));
        }
    }

    /// The failed write whose grace period is over, if one is.
    pub fn write_failure_due(&self, now: Instant) -> Option<&str> {
        self.write_failed.as_ref().filter(|(_, at)| *at <= now).map(|(message, _)| message.as_str())
    }

    /// Ends the link: the writer closes the client's side after what its channel holds (what
    /// it cannot take is dropped), the server is waited for up to `wait` (how it exited), and
    /// the writer is joined (stopped if it does not end within [`WRITER_GRACE`]). Nothing of
    /// the link runs on after this.
    pub async fn end(mut self, wait: Duration) -> ServerExit {
        if self.writer_state == WriterState::Open {
            self.flush();
        }
        self.outgoing.clear();
        // Without a sender, the writer ends once it has handed on what it holds.
        drop(self.to_writer);
        let exit = self.receiver.exit(wait).await;
        if self.writer_state != WriterState::Ended
            && tokio::time::timeout(WRITER_GRACE, &mut self.writer).await.is_err()
        {
            self.writer.abort();
            let _ = self.writer.await;
            tracing::debug!("the writer did not finish writing in time; stopped");
        }
        exit
    }
}

/// Writes the lines of the loop until `Out::Close` or its channel closes, then closes the
/// client's side; returns the error of a failed write.
async fn writer<S: LineSender>(mut sender: S, mut lines: mpsc::Receiver<Out>, tap: Option<Tap>) -> Option<io::Error> {
    while let Some(out) = lines.recv().await {
        match out {
            Out::Line(line) => {
                if let Some(tap) = &tap {
                    tap.record(Direction::C2s, &line);
                }
                if let Err(e) = sender.send(line).await {
                    tracing::warn!(error = %e, "writing to the server failed");
                    return Some(e);
                }
            }
            Out::Close => break,
        }
    }
    if let Err(e) = sender.close().await {
        tracing::debug!(error = %e, "closing the client's side of the connection");
    }
    None
}
