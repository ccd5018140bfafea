//! The connection task: the one owner of a connection's state.
//!
//! Like async-lsp's main loop, one task owns everything that changes while a connection
//! runs: the pending requests (`id -> the caller's oneshot`), the requests the client stopped
//! waiting for (to name late answers), turn routing ([`TurnRouter`]), the notification
//! streams, the tasks answering server requests (a [`JoinSet`]) and the queue of lines to
//! send. Client handles talk to it through an unbounded channel of [`Command`]s and a
//! [`watch`] for closing; they never lock its state. A second task, the writer, owns the
//! transport's sending half, so a slow write never holds up reading; the loop joins it.
//!
//! The loop is in one [`Phase`]: `Connecting` (the handshake, [`Connection::handshake`], the
//! one used first and after every reconnect), `Ready`, `Reconnecting` (its own part,
//! [`Connection::reconnect_now`], which the loop calls when the stream drops), `Closing` and
//! `Closed`. A panic of the loop or the writer ends every handle with
//! [`ExitReason::Panicked`].
//!
//! Every server line is accounted for: it answers a pending request, or it is an event of the
//! notification streams (a notification, [`Event::Orphan`] for a response nobody waits for,
//! [`Event::Undecodable`]), and every line that is dropped or does not decode is also a
//! `tracing` event. Every server request gets an answer: its handler's, an error when it did
//! not decode (with `"id": null` when its id could not be read), or an error when it comes
//! while the client shuts down; answers are queued without a bound and never dropped.
//! Requests from the handles are taken only while fewer than [`OUTGOING_MAX`] lines wait for
//! the writer, which is the client's backpressure.

use std::collections::{HashMap, VecDeque};
use std::future::Future;
use std::io;
use std::pin::Pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use codex_app_protocol::jsonrpc::ErrorObject;
use codex_app_protocol::{
    ClientResponse, Message, RawJson, RequestId, ServerNotification, ServerRequest, TypedServerMessage,
};
use futures_util::FutureExt;
use serde_json::Value;
use tokio::sync::{mpsc, oneshot, watch};
use tokio::task::{JoinHandle, JoinSet};
use tokio::time::Instant;

use crate::error::{ClientError, ExitReason, ServerExit, TransportError};
use crate::events::{Abandoned, Event, EventQueue, LateAnswer, Orphan, ReleaseChange, TurnQueue};
use crate::handler::{panic_message, DynHandler};
use crate::negotiate::{Negotiation, Session};
use crate::reconnect::{Internal, Refusal, Threads};
use crate::retry::RetryPolicy;
use crate::routing::TurnRouter;
use crate::tap::{Direction, Tap};
use crate::transport::{LineReceiver, LineSender, Transport};
use crate::wire;

/// At most this many lines are taken per read, decoded as a batch; the notification streams
/// are woken once per batch.
pub(crate) const BATCH: usize = 64;

/// Requests from the handles wait while this many lines wait for the writer.
pub(crate) const OUTGOING_MAX: usize = 256;

/// How many abandoned requests are remembered, to name their late answers.
const ABANDONED_MAX: usize = 1024;

/// After a write fails, how long the reader may still see the stream end by itself.
const WRITE_FAILURE_GRACE: Duration = Duration::from_millis(500);

/// How long a reconnect waits for the answers to `initialize` and `thread/resume`.
const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);

/// The methods whose answer subscribes the connection to a thread (`result.thread.id`).
const SUBSCRIBING: [&str; 4] = ["thread/start", "thread/resume", "thread/fork", "thread/unarchive"];

/// How long the connection's end waits for the tap to write what it has queued.
const TAP_FLUSH: Duration = Duration::from_secs(1);

/// How long the connection's end waits for the writer to finish what it writes.
const WRITER_GRACE: Duration = Duration::from_millis(500);

/// After the stream ends without a shutdown, how long a spawned server may take to exit.
const EXIT_GRACE: Duration = Duration::from_millis(500);

/// Where a connection is: the one state its loop acts on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    /// The handshake (`initialize`, `initialized`); the handles' commands wait.
    Connecting,
    /// Serving the handles and the server.
    Ready,
    /// The stream dropped; connecting again (with the reconnect policy's backoff).
    Reconnecting,
    /// [`Client::shutdown`](crate::Client::shutdown) began at `started`: pending requests
    /// failed, new ones are refused, the client's side is closed once the server requests
    /// being answered are answered, and the server is waited for until `deadline`.
    Closing { started: Instant, deadline: Instant },
    /// Ended: everything failed or ended with the exit reason.
    Closed,
}

impl Phase {
    fn closing(self) -> Option<(Instant, Instant)> {
        match self {
            Phase::Closing { started, deadline } => Some((started, deadline)),
            _ => None,
        }
    }
}

/// The first handshake, done by the connection ([`Connection::handshake`], the same as after
/// a reconnect): its request id, its params, and where to say it is done (the session it read
/// is the connection's current one then).
pub(crate) struct Handshake {
    pub id: RequestId,
    pub initialize: Value,
    pub answer: oneshot::Sender<Result<(), ClientError>>,
}

/// Why a handshake did not complete.
#[derive(Debug)]
enum HandshakeFailure {
    /// The server answered `initialize` with an error.
    Refused(ErrorObject),
    /// The answer to `initialize` cannot be used: a release the version policy refuses, or a
    /// result that does not decode.
    Rejected(ClientError),
    /// The `initialize` params do not encode.
    Encode(String),
    /// The stream ended (or a write or read failed) first.
    Ended(ExitReason),
    /// No line within the time allowed.
    TimedOut(Duration),
    /// The client shut down or every handle was dropped.
    Stopped,
}

impl std::fmt::Display for HandshakeFailure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            HandshakeFailure::Refused(e) => write!(f, "`initialize` was refused: {}", e.message),
            HandshakeFailure::Rejected(e) => write!(f, "{e}"),
            HandshakeFailure::Encode(e) => write!(f, "cannot encode `initialize`: {e}"),
            HandshakeFailure::Ended(reason) => write!(f, "the connection ended: {reason}"),
            HandshakeFailure::TimedOut(after) => write!(f, "no answer within {after:?}"),
            HandshakeFailure::Stopped => f.write_str("the client stopped"),
        }
    }
}

/// What a client handle asks of the connection task.
pub(crate) enum Command {
    /// Send a request and answer `reply` with its answer.
    Request(Request),
    /// Send a line that needs no answer (a notification).
    Send(String),
    /// The caller stopped waiting for request `id`.
    Abandon { id: RequestId, why: Abandoned },
    /// A new [`Notifications`](crate::Notifications) stream.
    Subscribe(Arc<EventQueue>),
    /// A turn handle is gone or its stream ended.
    ForgetTurn { thread: String, turn: String },
    /// What the connection holds ([`crate::Client::connection_stats`]).
    Stats(oneshot::Sender<ConnectionStats>),
}

/// What a connection holds at one moment ([`Client::connection_stats`](crate::Client::connection_stats)):
/// once every handle, stream and future of a connection is gone, everything but
/// [`remembered_abandoned`](Self::remembered_abandoned) is zero.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct ConnectionStats {
    /// Requests sent (or queued) and not answered.
    pub pending_requests: usize,
    /// Requests the callers stopped waiting for, remembered to name their late answers
    /// (bounded).
    pub remembered_abandoned: usize,
    /// Turns routed to a handle.
    pub routed_turns: usize,
    /// Threads with a `turn/start` in flight.
    pub turn_starts: usize,
    /// Events held for turns whose `turn/start` was not answered yet.
    pub early_events: usize,
    /// Notification streams that are still read (or held).
    pub streams: usize,
    /// Events queued in those streams and not read yet.
    pub queued_events: usize,
    /// Events queued in the turn handles' streams and not read yet.
    pub queued_turn_events: usize,
    /// Lines waiting for the writer.
    pub queued_lines: usize,
    /// Server requests being answered by the handler.
    pub server_requests: usize,
    /// Requests the connection sent itself (after a reconnect) and that are not answered.
    pub internal_requests: usize,
    /// Threads the connection resumes after a reconnect.
    pub subscribed_threads: usize,
    /// Lines the transcript tap dropped because its sink was slower than the session
    /// ([`Tap::dropped`](crate::Tap::dropped)).
    pub tap_dropped: u64,
}

/// A request to send.
pub(crate) struct Request {
    pub id: RequestId,
    pub method: String,
    /// The method whose response type the result is decoded into, in one pass with the
    /// line (`request::<M>`); `None` keeps it raw.
    pub typed: Option<&'static str>,
    pub line: String,
    /// `turn/start` on this thread: the answer carries the turn's queue.
    pub turn_thread: Option<String>,
    /// The session the params were checked against (a request checked against the release
    /// before a reconnect to another one is not sent: it fails with
    /// [`ClientError::Disconnected`], to be sent again).
    pub checked: Option<Arc<Session>>,
    pub reply: oneshot::Sender<Result<Answer, ClientError>>,
}

/// A successful answer: the result (typed by the request's method, or raw), and the turn's
/// route for `turn/start`.
pub(crate) struct Answer {
    pub result: ClientResponse,
    pub turn: Option<TurnRoute>,
}

/// A turn's place in the connection's router, owned by what holds the turn's queue (the
/// answer to `turn/start`, then its [`TurnHandle`](crate::TurnHandle)). Dropped anywhere (an
/// answer that nobody took because the caller's future was dropped in the same wake-up, a
/// handle), it tells the connection to stop routing the turn, so a turn nobody reads never
/// holds its notifications.
pub(crate) struct TurnRoute {
    pub queue: Arc<TurnQueue>,
    pub thread: String,
    pub turn: String,
    commands: mpsc::WeakUnboundedSender<Command>,
    released: bool,
}

impl TurnRoute {
    /// Stops routing the turn (once).
    pub(crate) fn release(&mut self) {
        if std::mem::replace(&mut self.released, true) {
            return;
        }
        if let Some(commands) = self.commands.upgrade() {
            let (thread, turn) = (std::mem::take(&mut self.thread), std::mem::take(&mut self.turn));
            let _ = commands.send(Command::ForgetTurn { thread, turn });
        }
    }
}

impl Drop for TurnRoute {
    fn drop(&mut self) {
        self.release();
    }
}

impl std::fmt::Debug for TurnRoute {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TurnRoute").field("thread", &self.thread).field("turn", &self.turn).finish_non_exhaustive()
    }
}

/// How the handles tell the connection to end.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Control {
    Run,
    /// [`Client::shutdown`](crate::Client::shutdown): answer what is being answered, close
    /// the sending side, read until the end, wait for a spawned server until `deadline`.
    Close {
        started: Instant,
        deadline: Instant,
    },
}

/// What the handles read without asking the connection task.
#[derive(Debug)]
pub(crate) struct Status {
    closed: Mutex<Option<ClientError>>,
    /// Callers waiting for an answer (counted by the handles).
    pub pending: AtomicUsize,
    pub exit: watch::Sender<Option<ServerExit>>,
    /// Threads the server did not resume after a reconnect: the server's message.
    detached: Mutex<HashMap<String, String>>,
}

impl Status {
    pub(crate) fn new() -> Self {
        Status {
            closed: Mutex::new(None),
            pending: AtomicUsize::new(0),
            exit: watch::channel(None).0,
            detached: Mutex::default(),
        }
    }

    /// Why the server did not resume `thread` after a reconnect, if it did not.
    pub(crate) fn detached(&self, thread: &str) -> Option<String> {
        self.detached.lock().unwrap_or_else(|e| e.into_inner()).get(thread).cloned()
    }

    fn detach(&self, thread: &str, message: &str) {
        self.detached.lock().unwrap_or_else(|e| e.into_inner()).insert(thread.to_owned(), message.to_owned());
    }

    /// An answer subscribed the connection to `thread` again.
    fn attach(&self, thread: &str) {
        let mut detached = self.detached.lock().unwrap_or_else(|e| e.into_inner());
        if !detached.is_empty() {
            detached.remove(thread);
        }
    }

    pub(crate) fn closed(&self) -> Option<ClientError> {
        self.closed.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }

    fn set_closed(&self, error: ClientError) {
        self.closed.lock().unwrap_or_else(|e| e.into_inner()).get_or_insert(error);
    }

    pub(crate) fn pending(&self) -> usize {
        self.pending.load(Ordering::Relaxed)
    }
}

/// What the connection is configured with.
pub(crate) struct Settings {
    pub handler: Arc<dyn DynHandler>,
    pub tap: Option<Tap>,
    pub turn_buffer: usize,
    pub late_grace: Duration,
    /// Streams made before the connection started ([`crate::ClientBuilder::notifications`]).
    pub subscribers: Vec<Arc<EventQueue>>,
    /// The handles' command channel, for the turn routes the connection hands out.
    pub commands: mpsc::WeakUnboundedSender<Command>,
    /// The session each handshake reads (answers are checked against it) and the policies.
    pub negotiation: Negotiation,
}

struct Pending {
    reply: oneshot::Sender<Result<Answer, ClientError>>,
    method: String,
    typed: Option<&'static str>,
    turn_thread: Option<String>,
}

/// Where the writer task is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum WriterState {
    /// It writes what the loop hands it.
    Open,
    /// It was told to close the client's side after what it holds.
    Closing,
    /// It ended (and was joined).
    Ended,
}

/// A line for the writer, or the end of the client's side.
enum Out {
    Line(String),
    Close,
}

/// Opens a new connection of the same kind (see [`Reconnect`]).
pub(crate) type Connector<T> =
    Arc<dyn Fn() -> Pin<Box<dyn Future<Output = Result<T, TransportError>> + Send>> + Send + Sync>;

/// What a connection that reconnects needs: how to connect, how often to try, and the
/// `initialize` params of the handshake to repeat.
pub(crate) struct Reconnect<T> {
    pub connect: Connector<T>,
    pub policy: RetryPolicy,
    pub initialize: Value,
}

/// Starts the writer and the connection task; the task, which [`Client::shutdown`] joins
/// (it ends on its own when every handle is dropped).
///
/// [`Client::shutdown`]: crate::Client::shutdown
pub(crate) fn start<T: Transport>(
    transport: T,
    settings: Settings,
    commands: mpsc::UnboundedReceiver<Command>,
    control: watch::Receiver<Control>,
    status: Arc<Status>,
    reconnect: Option<Reconnect<T>>,
    handshake: Option<Handshake>,
) -> JoinHandle<()> {
    let (sender, receiver) = transport.split();
    let (to_writer, writer) = spawn_writer(sender, settings.tap.clone());
    let connection = Connection {
        unknown_methods: Default::default(),
        receiver,
        reconnect,
        threads: Threads::default(),
        internal: HashMap::new(),
        internal_ids: 0,
        first: handshake,
        handshake_answer: None,
        commands,
        commands_open: true,
        control,
        control_open: true,
        to_writer,
        writer,
        writer_state: WriterState::Open,
        write_failed: None,
        outgoing: VecDeque::new(),
        pending: HashMap::new(),
        abandoned: HashMap::new(),
        abandoned_order: VecDeque::new(),
        router: TurnRouter::new(settings.turn_buffer, settings.late_grace),
        handlers: JoinSet::new(),
        handler: settings.handler,
        negotiation: settings.negotiation,
        subscribers: settings.subscribers,
        own_commands: settings.commands,
        outbox: Vec::new(),
        tap: settings.tap,
        status,
        line_number: 0,
        phase: Phase::Connecting,
    };
    tokio::spawn(connection.run())
}

/// Starts a writer task for `sender`: the channel to it, and the task, which the connection
/// joins (its end says whether a write failed; a panic in it ends the connection).
fn spawn_writer<S: LineSender>(sender: S, tap: Option<Tap>) -> (mpsc::Sender<Out>, JoinHandle<Option<io::Error>>) {
    let (to_writer, from_loop) = mpsc::channel(OUTGOING_MAX);
    (to_writer, tokio::spawn(writer(sender, from_loop, tap)))
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

struct Connection<T: Transport> {
    receiver: T::Receiver,
    /// Methods the crate does not know that the server sent (each reported once).
    unknown_methods: std::collections::HashSet<String>,
    reconnect: Option<Reconnect<T>>,
    /// The threads this connection is subscribed to: resumed after a reconnect.
    threads: Threads,
    /// Requests the connection sent itself (after a reconnect).
    internal: HashMap<RequestId, Internal>,
    /// How many `thread/resume`s the connection sent itself outside a handshake.
    internal_ids: u64,
    /// The first handshake, until it is done.
    first: Option<Handshake>,
    /// The answer to the handshake's `initialize`, once it came.
    handshake_answer: Option<Result<RawJson, ErrorObject>>,
    commands: mpsc::UnboundedReceiver<Command>,
    commands_open: bool,
    control: watch::Receiver<Control>,
    control_open: bool,
    to_writer: mpsc::Sender<Out>,
    /// The writer task, joined by the connection.
    writer: JoinHandle<Option<io::Error>>,
    writer_state: WriterState,
    /// A write failed (its error), and when to stop waiting for the stream to end.
    write_failed: Option<(String, Instant)>,
    /// Lines for the writer that its channel did not take yet, in order.
    outgoing: VecDeque<Out>,
    pending: HashMap<RequestId, Pending>,
    abandoned: HashMap<RequestId, LateAnswer>,
    abandoned_order: VecDeque<RequestId>,
    router: TurnRouter,
    handlers: JoinSet<String>,
    handler: Arc<dyn DynHandler>,
    /// The current session (swapped by each handshake) and the client's policies.
    negotiation: Negotiation,
    subscribers: Vec<Arc<EventQueue>>,
    own_commands: mpsc::WeakUnboundedSender<Command>,
    /// The events of the batch of lines being read, delivered to the streams at its end.
    outbox: Vec<Event>,
    tap: Option<Tap>,
    status: Arc<Status>,
    line_number: u64,
    phase: Phase,
}

impl<T: Transport> Connection<T> {
    /// Serves the connection, then ends everything with why it ended. A panic of the loop is
    /// caught here: every handle ends promptly with [`ExitReason::Panicked`].
    async fn run(mut self) {
        let reason = match std::panic::AssertUnwindSafe(self.serve()).catch_unwind().await {
            Ok(reason) => reason,
            Err(panic) => {
                let why = panic_message(&*panic);
                tracing::error!(panic = %why, "the connection task panicked");
                ExitReason::Panicked(format!("the connection task panicked: {why}"))
            }
        };
        self.finish(reason).await;
    }

    /// Reads, handles and reconnects until the connection ends; returns why.
    async fn serve(&mut self) -> ExitReason {
        let mut batch = Vec::with_capacity(BATCH);
        if let Some(Handshake { id, initialize, answer }) = self.first.take() {
            match self.handshake(id, &initialize, &mut batch, None).await {
                Ok(()) => drop(answer.send(Ok(()))),
                Err(HandshakeFailure::Refused(e)) => drop(answer.send(Err(ClientError::from_server(e)))),
                Err(HandshakeFailure::Rejected(e)) => drop(answer.send(Err(e))),
                Err(HandshakeFailure::Encode(e)) => drop(answer.send(Err(ClientError::Refused(e)))),
                // The handshake's caller reads why from the connection's end.
                Err(HandshakeFailure::Ended(reason)) => return reason,
                Err(HandshakeFailure::TimedOut(_)) => return ExitReason::EndOfStream,
                Err(HandshakeFailure::Stopped) if !self.control_open => return ExitReason::Dropped,
                Err(HandshakeFailure::Stopped) => {} // closing: the loop ends it
            }
        }
        if self.phase == Phase::Connecting {
            self.phase = Phase::Ready;
        }
        loop {
            let reason = self.read(&mut batch).await;
            match reason {
                ExitReason::EndOfStream | ExitReason::ReadError(_) | ExitReason::WriteError(_)
                    if self.reconnect.is_some() =>
                {
                    tracing::warn!(%reason, "the connection dropped; reconnecting");
                    if !self.reconnect_now(&mut batch).await {
                        break reason;
                    }
                }
                reason => break reason,
            }
        }
    }

    /// Runs the connection until its stream ends; returns why.
    async fn read(&mut self, batch: &mut Vec<String>) -> ExitReason {
        loop {
            self.flush();
            let deadline = match (self.phase.closing(), &self.write_failed) {
                (Some((_, at)), Some((_, w))) => Some(at.min(*w)),
                (Some((_, at)), None) => Some(at),
                (None, Some((_, w))) => Some(*w),
                (None, None) => None,
            };
            let take_commands = self.commands_open && self.outgoing.len() < OUTGOING_MAX;
            // The end of the late grace period of a completed turn with open items.
            let grace = self.router.next_deadline();
            tokio::select! {
                biased;
                changed = self.control.changed(), if self.control_open => match changed {
                    Ok(()) => {
                        let now = *self.control.borrow_and_update();
                        if let Control::Close { started, deadline } = now {
                            // What the handles sent before the shutdown goes first.
                            while let Ok(command) = self.commands.try_recv() {
                                self.command(command);
                            }
                            self.close(started, deadline);
                        }
                    }
                    // Every handle is gone.
                    Err(_) if self.phase.closing().is_none() => break ExitReason::Dropped,
                    Err(_) => self.control_open = false, // already closing: it goes on
                },
                command = self.commands.recv(), if take_commands => match command {
                    Some(command) => self.command(command),
                    None => self.commands_open = false,
                },
                done = self.handlers.join_next(), if !self.handlers.is_empty() => {
                    if let Some(Ok(line)) = done {
                        self.outgoing.push_back(Out::Line(line));
                    }
                    self.close_writer_when_done();
                }
                // An owned permit: the output of `select!` must not borrow the connection.
                permit = self.to_writer.clone().reserve_owned(), if !self.outgoing.is_empty() => match permit {
                    Ok(permit) => {
                        permit.send(self.outgoing.pop_front().expect("not empty"));
                    }
                    Err(_) => self.outgoing.clear(), // the writer ended: its failure is reported
                },
                ended = &mut self.writer, if self.writer_state != WriterState::Ended => {
                    self.writer_state = WriterState::Ended;
                    match ended {
                        Ok(Some(e)) => self.write_failed = Some((e.to_string(), Instant::now() + WRITE_FAILURE_GRACE)),
                        Ok(None) => {} // the client's side was closed
                        Err(e) => return ExitReason::Panicked(format!("the writer task failed: {}", join_error(e))),
                    }
                }
                read = self.receiver.recv_many(batch, BATCH) => match read {
                    Ok(0) => return if self.phase.closing().is_some() { ExitReason::Shutdown } else { ExitReason::EndOfStream },
                    Ok(_) => {
                        for line in batch.drain(..) {
                            self.line_number += 1;
                            self.line(line);
                        }
                        self.deliver();
                    }
                    Err(e) => return ExitReason::ReadError(e.to_string()),
                },
                () = sleep_until(grace), if grace.is_some() => self.router.expire(Instant::now()),
                () = sleep_until(deadline), if deadline.is_some() => match &self.write_failed {
                    Some((message, at)) if *at <= Instant::now() => return ExitReason::WriteError(message.clone()),
                    _ => return ExitReason::ShutdownTimedOut,
                },
            }
        }
    }

    /// The connection dropped: pending requests fail with [`ClientError::Disconnected`], the
    /// server requests being answered are dropped with it; then, with the policy's backoff,
    /// a new connection, the handshake again and `thread/resume` of every subscribed thread.
    /// Turn handles and notification streams go on. `false`: the policy gave up (or the
    /// client shut down or was dropped meanwhile).
    async fn reconnect_now(&mut self, batch: &mut Vec<String>) -> bool {
        let Some(reconnect) = &self.reconnect else { return false };
        let (connect, policy, initialize) = (reconnect.connect.clone(), reconnect.policy, reconnect.initialize.clone());
        self.phase = Phase::Reconnecting;
        for (_, pending) in self.pending.drain() {
            if let Some(thread) = &pending.turn_thread {
                self.router.not_started(thread);
            }
            let _ = pending.reply.send(Err(ClientError::Disconnected));
        }
        self.handlers.abort_all();
        self.outgoing.clear();
        self.internal.clear();
        self.write_failed = None;
        self.end_writer().await;
        let mut attempt = 0;
        while let Some(delay) = policy.delay(attempt) {
            attempt += 1;
            tokio::select! {
                () = tokio::time::sleep(delay) => {}
                changed = self.control.changed(), if self.control_open => {
                    // A shutdown, or every handle dropped: no reconnect.
                    let _ = changed;
                    return false;
                }
            }
            let transport = match connect().await {
                Ok(transport) => transport,
                Err(e) => {
                    tracing::warn!(attempt, error = %e, "reconnecting failed");
                    continue;
                }
            };
            let (sender, receiver) = transport.split();
            let mut old = std::mem::replace(&mut self.receiver, receiver);
            let _ = old.exit(Duration::ZERO).await;
            // The writer of the attempt before, if it failed, is joined too.
            self.end_writer().await;
            let (to_writer, writer) = spawn_writer(sender, self.tap.clone());
            self.to_writer = to_writer;
            self.writer = writer;
            self.writer_state = WriterState::Open;
            let id = RequestId::String(format!("reconnect-{attempt}-initialize"));
            let resumed = match self.handshake(id, &initialize, batch, Some(HANDSHAKE_TIMEOUT)).await {
                Ok(_) => self.resume_all(attempt, batch).await,
                Err(failure) => Err(failure),
            };
            match resumed {
                Ok(()) => {
                    tracing::info!(attempt, threads = self.threads.len(), "reconnected");
                    self.phase = Phase::Ready;
                    self.publish(Event::Reconnected(attempt));
                    self.deliver();
                    return true;
                }
                Err(HandshakeFailure::Stopped) => return false,
                Err(why) => tracing::warn!(attempt, %why, "the handshake after reconnecting failed"),
            }
        }
        false
    }

    /// Joins the writer of a connection that dropped: its channel is closed, so it ends once it
    /// has handed on what it holds; a write stuck on the dead stream is stopped after
    /// [`WRITER_GRACE`]. Nothing of the old connection runs on while the next one starts.
    async fn end_writer(&mut self) {
        // A channel nothing writes to, until the next connection's writer.
        let (closed, _) = mpsc::channel(1);
        drop(std::mem::replace(&mut self.to_writer, closed));
        if self.writer_state == WriterState::Ended {
            return;
        }
        self.writer_state = WriterState::Ended;
        if tokio::time::timeout(WRITER_GRACE, &mut self.writer).await.is_err() {
            self.writer.abort();
            let _ = (&mut self.writer).await;
            tracing::debug!("the old connection's writer did not end in time; stopped");
        }
    }

    /// The one handshake, first and after every reconnect: `initialize` (with `id`), the
    /// lines before its answer handled as usual; then the server's release is read from the
    /// answer, the version policy run, and the session made the connection's current one
    /// (what the handles and the answers to server requests are checked against), saying so
    /// when the release changed; then `initialized`. `timeout`: how long it waits for each
    /// read.
    async fn handshake(
        &mut self,
        id: RequestId,
        initialize: &Value,
        batch: &mut Vec<String>,
        timeout: Option<Duration>,
    ) -> Result<(), HandshakeFailure> {
        let params =
            serde_json::value::to_raw_value(initialize).map_err(|e| HandshakeFailure::Encode(e.to_string()))?;
        self.send_now(wire::request_line(&id, "initialize", &params)).await?;
        self.internal.insert(id, Internal::Initialize);
        self.handshake_answer = None;
        self.read_until(|c| c.handshake_answer.is_some(), batch, timeout).await?;
        let result = match self.handshake_answer.take() {
            Some(Ok(result)) => result.to_value().unwrap_or_default(),
            Some(Err(error)) => return Err(HandshakeFailure::Refused(error)),
            None => unreachable!("read until it came"),
        };
        let client_name = initialize.pointer("/clientInfo/name").and_then(Value::as_str).unwrap_or_default();
        let session = Session::read(client_name, result).map_err(HandshakeFailure::Rejected)?;
        session.admit(self.negotiation.version_policy).map_err(HandshakeFailure::Rejected)?;
        let session = Arc::new(session);
        if let Some(previous) = self.negotiation.current.replace(session.clone()) {
            if previous.version.server != session.version.server {
                let (from, to) = (&previous.version, &session.version);
                tracing::warn!(
                    from = from.server.as_deref(),
                    to = to.server.as_deref(),
                    "the server's codex release changed: what is sent is checked against the new one"
                );
                let change = ReleaseChange { previous: from.clone(), current: to.clone() };
                self.publish(Event::ReleaseChanged(Arc::new(change)));
            }
        }
        self.send_now(wire::initialized_line()).await?;
        Ok(())
    }

    /// After a reconnect's handshake: `thread/resume` of every subscribed thread (the
    /// connection's own requests), until each is answered.
    async fn resume_all(&mut self, attempt: u32, batch: &mut Vec<String>) -> Result<(), HandshakeFailure> {
        for (n, thread) in self.threads.to_resume().into_iter().enumerate() {
            let id = RequestId::String(format!("reconnect-{attempt}-resume-{n}"));
            let line = resume_line(&id, &thread);
            self.internal.insert(id, Internal::Resume(thread));
            self.send_now(line).await?;
        }
        // The threads' events flow again once their resumes are answered; each answer
        // reconciles the thread's turns, each refusal is handled (see `crate::reconnect`).
        self.read_until(|c| c.internal.is_empty(), batch, Some(HANDSHAKE_TIMEOUT)).await
    }

    /// Reads and handles the connection's lines until `done`; stops when the client shuts
    /// down (the shutdown begins) or every handle is dropped.
    async fn read_until(
        &mut self,
        done: impl Fn(&Self) -> bool,
        batch: &mut Vec<String>,
        timeout: Option<Duration>,
    ) -> Result<(), HandshakeFailure> {
        while !done(self) {
            batch.clear();
            let read = async {
                match timeout {
                    Some(limit) => tokio::time::timeout(limit, self.receiver.recv_many(batch, BATCH)).await.ok(),
                    None => Some(self.receiver.recv_many(batch, BATCH).await),
                }
            };
            let read = tokio::select! {
                biased;
                changed = self.control.changed(), if self.control_open => Err(changed),
                read = read => Ok(read),
            };
            match read {
                Err(changed) => {
                    match changed {
                        Ok(()) => {
                            let now = *self.control.borrow_and_update();
                            if let Control::Close { started, deadline } = now {
                                self.close(started, deadline);
                            }
                        }
                        Err(_) => self.control_open = false,
                    }
                    return Err(HandshakeFailure::Stopped);
                }
                Ok(Some(Ok(0))) => return Err(HandshakeFailure::Ended(ExitReason::EndOfStream)),
                Ok(Some(Ok(_))) => {
                    for line in batch.drain(..) {
                        self.line_number += 1;
                        self.line(line);
                    }
                    self.deliver();
                }
                Ok(Some(Err(e))) => return Err(HandshakeFailure::Ended(ExitReason::ReadError(e.to_string()))),
                Ok(None) => return Err(HandshakeFailure::TimedOut(timeout.unwrap_or_default())),
            }
        }
        Ok(())
    }

    /// Hands a line to the new writer before anything else.
    async fn send_now(&mut self, line: String) -> Result<(), HandshakeFailure> {
        self.to_writer
            .send(Out::Line(line))
            .await
            .map_err(|_| HandshakeFailure::Ended(ExitReason::WriteError("the writer ended".into())))
    }

    fn command(&mut self, command: Command) {
        match command {
            Command::Request(request) => {
                if let Some(closed) = self.refusal() {
                    let _ = request.reply.send(Err(closed));
                    return;
                }
                if self.checked_against_another_release(request.checked.as_ref()) {
                    tracing::debug!(
                        method = request.method,
                        "checked against the release before the reconnect; not sent"
                    );
                    let _ = request.reply.send(Err(ClientError::Disconnected));
                    return;
                }
                if let Some(thread) = &request.turn_thread {
                    if let Some(message) = self.status.detached(thread) {
                        let _ =
                            request.reply.send(Err(ClientError::ThreadDetached { thread_id: thread.clone(), message }));
                        return;
                    }
                    self.router.expect(thread);
                }
                let Request { id, method, typed, line, turn_thread, reply, .. } = request;
                self.pending.insert(id, Pending { reply, method, typed, turn_thread });
                self.outgoing.push_back(Out::Line(line));
            }
            Command::Send(line) => {
                if self.refusal().is_none() {
                    self.outgoing.push_back(Out::Line(line));
                }
            }
            Command::Abandon { id, why } => {
                if let Some(pending) = self.take_pending(&id) {
                    if let Some(thread) = &pending.turn_thread {
                        self.router.not_started(thread);
                    }
                    self.remember_abandoned(id, LateAnswer { method: pending.method, abandoned: why });
                }
            }
            Command::Subscribe(queue) => self.subscribers.push(queue),
            Command::ForgetTurn { thread, turn } => self.router.forget(&thread, &turn),
            Command::Stats(reply) => {
                let _ = reply.send(self.stats());
            }
        }
    }

    fn stats(&mut self) -> ConnectionStats {
        // A queue only this list holds belongs to a dropped stream.
        self.subscribers.retain(|queue| Arc::strong_count(queue) > 1);
        let router = self.router.stats();
        ConnectionStats {
            pending_requests: self.pending.len(),
            remembered_abandoned: self.abandoned.len(),
            routed_turns: router.routed,
            turn_starts: router.starting,
            early_events: router.early,
            streams: self.subscribers.len(),
            queued_events: self.subscribers.iter().map(|q| q.queued()).sum(),
            queued_turn_events: router.queued,
            queued_lines: self.outgoing.len(),
            server_requests: self.handlers.len(),
            internal_requests: self.internal.len(),
            subscribed_threads: self.threads.len(),
            tap_dropped: self.tap.as_ref().map_or(0, Tap::dropped),
        }
    }

    /// Why a new request is refused: the connection is closing or closed.
    fn refusal(&self) -> Option<ClientError> {
        match self.phase {
            Phase::Closing { .. } | Phase::Closed => Some(ClientError::Closed),
            Phase::Connecting | Phase::Ready | Phase::Reconnecting => self.status.closed(),
        }
    }

    /// Whether a request's params were checked against another release than the current
    /// connection's.
    fn checked_against_another_release(&self, checked: Option<&Arc<Session>>) -> bool {
        let Some(checked) = checked else { return false };
        match self.negotiation.current.get() {
            Some(current) => !Arc::ptr_eq(checked, &current) && checked.version.server != current.version.server,
            None => false,
        }
    }

    fn take_pending(&mut self, id: &RequestId) -> Option<Pending> {
        self.pending.remove(id)
    }

    fn remember_abandoned(&mut self, id: RequestId, late: LateAnswer) {
        if self.abandoned_order.len() >= ABANDONED_MAX {
            if let Some(oldest) = self.abandoned_order.pop_front() {
                self.abandoned.remove(&oldest);
            }
        }
        self.abandoned_order.push_back(id.clone());
        self.abandoned.insert(id, late);
    }

    /// Hands queued lines to the writer as far as its channel takes them.
    fn flush(&mut self) {
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

    /// [`Control::Close`]: pending requests fail, new ones are refused; the client's side is
    /// closed once the server requests being answered are answered.
    fn close(&mut self, started: Instant, deadline: Instant) {
        if self.phase.closing().is_some() {
            return;
        }
        tracing::debug!(timeout = ?deadline.saturating_duration_since(started), "shutting the connection down");
        self.phase = Phase::Closing { started, deadline };
        self.status.set_closed(ClientError::Closed);
        for (_, pending) in self.pending.drain() {
            let _ = pending.reply.send(Err(ClientError::Closed));
        }
        self.close_writer_when_done();
    }

    fn close_writer_when_done(&mut self) {
        if self.phase.closing().is_some() && self.handlers.is_empty() && self.writer_state == WriterState::Open {
            self.writer_state = WriterState::Closing;
            self.outgoing.push_back(Out::Close);
        }
    }

    /// A method this crate does not know (a server newer than the crate): said once per method
    /// through `tracing`, the first few hundred; the message itself goes on as `Unrecognized`.
    fn unknown_method(&mut self, method: &str) {
        if self.unknown_methods.len() < 256 && self.unknown_methods.insert(method.to_owned()) {
            tracing::info!(
                method,
                crate_release = codex_app_protocol::CODEX_VERSION,
                "the server sent `{method}`, which this crate (codex {} and older) does not know; passed on as unrecognized",
                codex_app_protocol::CODEX_VERSION
            );
        }
    }

    /// One server line.
    fn line(&mut self, line: String) {
        if let Some(tap) = &self.tap {
            tap.record(Direction::S2c, &line);
        }
        let pending = &self.pending;
        let decoded = wire::decode_server_line(&line, self.line_number, |id| pending.get(id).and_then(|p| p.typed));
        if let (Some(_), Ok(message)) = (&self.reconnect, &decoded) {
            self.follow_subscriptions(message);
        }
        match decoded {
            Ok(Message::Notification(notification)) => {
                if let ServerNotification::Unrecognized { method, .. } = &notification {
                    self.unknown_method(method);
                }
                let notification = Arc::new(notification);
                self.router.notification(&notification);
                self.publish(Event::Notification(notification));
            }
            Ok(Message::Request(request)) => self.server_request(request),
            Ok(Message::Response(response)) if self.internal.contains_key(&response.id) => {
                match self.internal.remove(&response.id) {
                    Some(Internal::Resume(thread)) => self.resumed(thread, raw_result(response.result)),
                    Some(Internal::Initialize) => self.handshake_answer = Some(Ok(raw_result(response.result))),
                    None => {}
                }
            }
            Ok(Message::Response(response)) => match self.take_pending(&response.id) {
                Some(pending) => {
                    // A `turn/start`: the turn's queue, with what came for it before.
                    let mut started = None;
                    if let Some(thread) = &pending.turn_thread {
                        let turn = match &response.result {
                            ClientResponse::TurnStart(answer) => wire::turn_id(&answer.turn),
                            _ => None,
                        };
                        match turn {
                            Some(turn) => started = Some((self.router.started(thread, &turn), thread.clone(), turn)),
                            None => self.router.not_started(thread),
                        }
                    }
                    let turn = started.as_ref().map(|(queue, thread, turn)| TurnRoute {
                        queue: queue.clone(),
                        thread: thread.clone(),
                        turn: turn.clone(),
                        commands: self.own_commands.clone(),
                        released: false,
                    });
                    let answer = Answer { result: response.result, turn };
                    if let Err(Ok(answer)) = pending.reply.send(Ok(answer)) {
                        // The caller stopped waiting just now (its `Abandon` is on its way).
                        if let Some((_, thread, turn)) = &started {
                            self.router.forget(thread, turn);
                        }
                        let late = LateAnswer { method: pending.method, abandoned: Abandoned::Dropped };
                        let answer = Ok(raw_result(answer.result));
                        self.orphan(Orphan {
                            id: Some(response.id),
                            line_number: self.line_number,
                            answer,
                            late: Some(late),
                        });
                    }
                }
                None => {
                    let late = self.abandoned.remove(&response.id);
                    let answer = Ok(raw_result(response.result));
                    self.orphan(Orphan { id: Some(response.id), line_number: self.line_number, answer, late });
                }
            },
            Ok(Message::Error(error)) if error.id.as_ref().is_some_and(|id| self.internal.contains_key(id)) => {
                let internal = error.id.as_ref().and_then(|id| self.internal.remove(id));
                tracing::warn!(
                    method = internal.as_ref().map(Internal::method),
                    code = error.error.code,
                    message = error.error.message,
                    "refused after reconnecting"
                );
                match internal {
                    Some(Internal::Initialize) => self.handshake_answer = Some(Err(error.error)),
                    Some(Internal::Resume(thread)) => self.resume_refused(thread, error.error.message),
                    None => {}
                }
            }
            Ok(Message::Error(error)) => match error.id.as_ref().and_then(|id| self.take_pending(id)) {
                Some(pending) => {
                    if let Some(thread) = &pending.turn_thread {
                        self.router.not_started(thread);
                    }
                    let _ = pending.reply.send(Err(ClientError::from_server(error.error)));
                }
                None => {
                    let late = error.id.as_ref().and_then(|id| self.abandoned.remove(id));
                    self.orphan(Orphan { id: error.id, line_number: self.line_number, answer: Err(error.error), late });
                }
            },
            Err(undecodable) => self.undecodable(&line, *undecodable),
        }
    }

    /// What a connection that reconnects keeps of each message it reads (see
    /// [`crate::reconnect`]): the threads an answer subscribed it to, the resume of a thread
    /// that the last reconnect could not resume once a turn of it starts, and the
    /// notifications that change a subscription.
    fn follow_subscriptions(&mut self, message: &TypedServerMessage) {
        match message {
            Message::Notification(notification) => self.subscription_event(notification),
            Message::Response(response) => {
                let Some(pending) = self.pending.get(&response.id) else { return };
                if SUBSCRIBING.contains(&pending.method.as_str()) {
                    if let Some((thread, turns)) = wire::result_thread(&response.result) {
                        self.status.attach(&thread);
                        self.threads.subscribed(thread, turns);
                    }
                }
                let started = match &response.result {
                    ClientResponse::TurnStart(answer) => wire::turn_id(&answer.turn).is_some(),
                    _ => false,
                };
                if let Some(thread) = started.then(|| pending.turn_thread.clone()).flatten() {
                    if self.threads.turn_started(&thread) {
                        // Not resumed after the last reconnect (it had no turns): now it can be.
                        self.resume(thread);
                    }
                }
            }
            _ => {}
        }
    }

    /// A notification that changes a subscription: `thread/closed` ends it; the thread of a
    /// refused resume that waits for its turn to end is resumed when it is inactive.
    fn subscription_event(&mut self, notification: &ServerNotification) {
        let Some(thread) = notification.thread_id() else { return };
        if notification.method() == "thread/closed" {
            self.threads.closed(thread);
        } else if notification.method() == "thread/status/changed"
            && self.threads.waits_for_inactive(thread)
            && !wire::thread_active(notification)
            && self.threads.inactive(thread)
        {
            self.resume(thread.to_owned());
        }
    }

    /// Sends `thread/resume` of `thread` as the connection's own request.
    fn resume(&mut self, thread: String) {
        self.internal_ids += 1;
        let id = RequestId::String(format!("resume-{}", self.internal_ids));
        self.outgoing.push_back(Out::Line(resume_line(&id, &thread)));
        self.internal.insert(id, Internal::Resume(thread));
    }

    /// The server resumed `thread`: its turns are reconciled with the answer.
    fn resumed(&mut self, thread: String, result: RawJson) {
        let result = result.to_value().unwrap_or_default();
        let turns = result.pointer("/thread/turns").cloned().unwrap_or_default();
        tracing::debug!(thread, "resumed");
        self.router.reconcile(&thread, &turns);
        let listed = turns.as_array().is_some_and(|t| !t.is_empty());
        self.threads.subscribed(thread, listed);
    }

    /// The server refused to resume `thread` (see [`crate::reconnect`]).
    fn resume_refused(&mut self, thread: String, message: String) {
        match self.threads.refused(&thread, self.router.has_turns(&thread)) {
            Refusal::Unresumed => {
                tracing::info!(
                    thread,
                    message,
                    "the server cannot resume a thread without turns; it is resumed after its next turn starts"
                );
            }
            Refusal::Retry => {
                tracing::info!(
                    thread,
                    message,
                    "the server cannot resume the thread while its first turn runs; resumed when it ends"
                );
            }
            Refusal::Detached => {
                tracing::warn!(thread, message, "the server did not resume the thread: it is detached");
                self.status.detach(&thread, &message);
                self.router.detach(
                    &thread,
                    ClientError::ThreadDetached { thread_id: thread.clone(), message: message.clone() },
                );
                self.publish(Event::ThreadDetached { thread_id: thread, message });
            }
        }
    }

    fn undecodable(&mut self, line: &str, undecodable: wire::Undecodable) {
        let wire::Undecodable { report, response } = undecodable;
        tracing::warn!(
            line_number = report.line_number,
            method = report.method.as_deref(),
            path = report.path.as_ref().map(tracing::field::display),
            error = %report.message,
            "a server line did not decode"
        );
        // A response whose result does not fit the type of its request fails that request.
        if let Some(pending) = response.as_ref().and_then(|id| self.take_pending(id)) {
            if let Some(thread) = &pending.turn_thread {
                self.router.not_started(thread);
            }
            let _ = pending.reply.send(Err(ClientError::Decode(report)));
            return;
        }
        if response.is_none() {
            if let Some(id) = wire::undecodable_request(line) {
                let message = match &id {
                    Some(_) => format!("the client cannot decode this request: {}", report.message),
                    None => format!("the request's id is not a valid id: {}", report.message),
                };
                let code = if id.is_some() { ErrorObject::INVALID_PARAMS } else { ErrorObject::INVALID_REQUEST };
                self.outgoing.push_back(Out::Line(wire::error_line(id, ErrorObject::new(code, message))));
            }
        }
        let report = Arc::new(report);
        self.router.undecodable(line, &report);
        self.publish(Event::Undecodable(report));
    }

    /// Answers a server request on a task of the handler set; a panic becomes an internal
    /// error. While the client shuts down, new requests are refused at once.
    fn server_request(&mut self, request: ServerRequest) {
        let id = request.id().clone();
        let method = request.method().to_owned();
        if matches!(request, ServerRequest::Unrecognized { .. }) {
            self.unknown_method(&method);
        }
        if self.phase.closing().is_some() {
            let error = ErrorObject::new(
                ErrorObject::INTERNAL_ERROR,
                format!("the client is shutting down and does not answer `{method}`"),
            );
            self.outgoing.push_back(Out::Line(wire::error_line(Some(id), error)));
            return;
        }
        let handler = self.handler.clone();
        let session = self.negotiation.current.get();
        let policy = self.negotiation.unknown;
        self.handlers.spawn(async move {
            let outcome = std::panic::AssertUnwindSafe(handler.dispatch(request)).catch_unwind().await;
            match outcome {
                Ok(Ok(result)) => match session {
                    Some(session) => match session.server.check_answer(&method, result, policy) {
                        Ok(result) => wire::response_line(id, &result),
                        Err(why) => wire::error_line(Some(id), ErrorObject::new(ErrorObject::INTERNAL_ERROR, why)),
                    },
                    None => wire::response_line(id, &result),
                },
                Ok(Err(error)) => wire::error_line(Some(id), error),
                Err(panic) => {
                    let why = panic_message(&*panic);
                    tracing::error!(method, panic = %why, "the request handler panicked");
                    let error = ErrorObject::new(
                        ErrorObject::INTERNAL_ERROR,
                        format!("the client's handler for `{method}` failed: {why}"),
                    );
                    wire::error_line(Some(id), error)
                }
            }
        });
    }

    fn orphan(&mut self, orphan: Orphan) {
        match &orphan.late {
            Some(late) => tracing::warn!(
                id = ?orphan.id,
                line_number = orphan.line_number,
                method = late.method,
                abandoned = ?late.abandoned,
                error = orphan.is_error(),
                "a late answer: the client had stopped waiting for this request"
            ),
            None => tracing::warn!(
                id = ?orphan.id,
                line_number = orphan.line_number,
                error = orphan.is_error(),
                "a response with an id the client is not waiting for"
            ),
        }
        self.publish(Event::Orphan(Arc::new(orphan)));
    }

    /// Queues an event for every [`Notifications`](crate::Notifications) stream; they get
    /// the events of a batch of lines together at its end.
    fn publish(&mut self, event: Event) {
        if !self.subscribers.is_empty() {
            self.outbox.push(event);
        }
    }

    /// Delivers the events of a batch to every stream still read (one lock and one wake-up
    /// per stream and batch).
    fn deliver(&mut self) {
        if self.outbox.is_empty() {
            return;
        }
        // A queue only this list holds belongs to a dropped stream.
        self.subscribers.retain(|queue| Arc::strong_count(queue) > 1);
        if let Some((last, others)) = self.subscribers.split_last() {
            for queue in others {
                queue.push_all(self.outbox.iter().cloned());
            }
            last.push_all(self.outbox.drain(..));
        }
        self.outbox.clear();
    }

    /// The stream ended: everything fails or ends, the server's exit is read.
    async fn finish(mut self, reason: ExitReason) {
        self.deliver();
        // The answers still being worked on cannot be sent any more.
        self.handlers.abort_all();
        let closing = self.phase.closing();
        self.phase = Phase::Closed;
        let wait = match (&reason, closing) {
            (ExitReason::Dropped, _) => Duration::ZERO,
            (_, Some((_, deadline))) => deadline.saturating_duration_since(Instant::now()),
            (ExitReason::EndOfStream | ExitReason::ReadError(_) | ExitReason::WriteError(_), None) => EXIT_GRACE,
            (_, None) => Duration::ZERO,
        };
        // The writer closes the client's side once it has written what it holds.
        if self.writer_state == WriterState::Open {
            self.flush();
            let _ = self.to_writer.try_send(Out::Close);
        }
        let waiting_since = Instant::now();
        let mut exit = self.receiver.exit(wait).await;
        // The writer is joined: it has ended with the client's side, or it is stopped.
        if self.writer_state != WriterState::Ended {
            let writer = &mut self.writer;
            if tokio::time::timeout(WRITER_GRACE, &mut *writer).await.is_err() {
                writer.abort();
                tracing::debug!("the writer did not finish writing in time; stopped");
            }
        }
        if exit.killed_after.is_some() {
            let since = closing.map_or(waiting_since, |(started, _)| started);
            exit.killed_after = Some(since.elapsed());
        }
        exit.reason = reason;
        tracing::debug!(%exit, "the connection ended");
        let error = if closing.is_some() { ClientError::Closed } else { ClientError::ServerExited(exit.clone()) };
        self.status.set_closed(error.clone());
        for (_, pending) in self.pending.drain() {
            let _ = pending.reply.send(Err(error.clone()));
        }
        self.router.close();
        for queue in self.subscribers.drain(..) {
            queue.close();
        }
        // What the handles send from now on fails at once; what they sent meanwhile ends here.
        self.commands.close();
        while let Ok(command) = self.commands.try_recv() {
            match command {
                Command::Request(request) => {
                    let _ = request.reply.send(Err(error.clone()));
                }
                Command::Subscribe(queue) => queue.close(),
                Command::Stats(reply) => drop(reply),
                Command::Send(_) | Command::Abandon { .. } | Command::ForgetTurn { .. } => {}
            }
        }
        self.handlers.shutdown().await;
        // The tap's file is complete when the handles learn the connection ended.
        if let Some(tap) = &self.tap {
            tap.flush(TAP_FLUSH).await;
        }
        self.status.exit.send_replace(Some(exit));
    }
}

/// `thread/resume` of `thread` with id `id`.
fn resume_line(id: &RequestId, thread: &str) -> String {
    let params =
        serde_json::value::to_raw_value(&serde_json::json!({"threadId": thread})).expect("a Value always encodes");
    wire::request_line(id, "thread/resume", &params)
}

/// Waits until `deadline` (never when `None`; the branch is disabled then).
async fn sleep_until(deadline: Option<Instant>) {
    match deadline {
        Some(at) => tokio::time::sleep_until(at).await,
        None => std::future::pending().await,
    }
}

/// Why a task ended other than by returning.
fn join_error(error: tokio::task::JoinError) -> String {
    match error.try_into_panic() {
        Ok(panic) => format!("it panicked: {}", panic_message(&*panic)),
        Err(error) => error.to_string(),
    }
}

/// A result the connection did not type (no pending request named its method) as JSON.
fn raw_result(result: ClientResponse) -> RawJson {
    match result {
        ClientResponse::Unrecognized(raw) => raw,
        typed => match serde_json::value::to_raw_value(&typed) {
            Ok(raw) => RawJson::from(raw),
            Err(e) => RawJson::from(&serde_json::Value::String(format!("(the result did not encode: {e})"))),
        },
    }
}
