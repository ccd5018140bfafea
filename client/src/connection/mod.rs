//! The connection task: the one owner of a connection's state.
//!
//! Like async-lsp's main loop, one task owns everything that changes while a connection
//! runs: the pending requests (`id -> the caller's oneshot`), the requests the client stopped
//! waiting for (to name late answers), turn routing ([`TurnRouter`]), the notification
//! streams, the tasks answering server requests (a [`JoinSet`]) and the queue of lines to
//! send. Client handles talk to it through an unbounded channel of [`Command`]s and a
//! [`watch`] for closing; they never lock its state.
//!
//! The task is one loop ([`state`]) over a [`State`] that decides, as gRPC's channel states
//! do, what the loop waits for and what each input means:
//!
//! | state | holds | the handles' commands | a server line | a pending request, on leaving it |
//! |---|---|---|---|---|
//! | `Handshaking` | a [`Link`]; the `initialize` in flight, then a reconnect's `thread/resume`s | wait in their channel | handled; the answers move the handshake on | (none is pending) |
//! | `Ready` | a [`Link`] | taken | handled | fails with [`ClientError::Disconnected`] (to reconnect) or the server's exit |
//! | `Reconnecting` | the attempt, and when to make it | wait | (no stream) | (none is pending) |
//! | `Connecting` | the attempt's connect future | wait | (no stream) | (none is pending) |
//! | `Closing` | a [`Link`], the shutdown's deadline | taken; requests fail with [`ClientError::Closed`] | handled; a server request is refused | failed on entering it |
//! | `Closed` | nothing | fail with why it ended | (no stream) | |
//!
//! A [`Link`] is one transport: its receiving half, read by the loop, and a writer task that
//! owns its sending half, so a slow write never holds up reading. A link is ended in one
//! place ([`Link::end`]): the writer is joined, the server's exit read. A reconnect is its own
//! part of the loop: `Ready` → `Reconnecting` (the policy's backoff) → `Connecting` →
//! `Handshaking` (`initialize`, `initialized`, then `thread/resume` of every subscribed
//! thread) → `Ready`; every handshake, the first included, reads the server's release and
//! makes it what the connection checks against. A panic of the loop or the writer ends every
//! handle with [`ExitReason::Panicked`].
//!
//! What a server line means is in [`lines`]. Every server line is accounted for: it answers a
//! pending request, or it is an event of the notification streams (a notification,
//! [`Event::Orphan`] for a response nobody waits for, [`Event::Undecodable`]), and every line
//! that is dropped or does not decode is also a `tracing` event. Every server request gets an
//! answer: its handler's, an error when it did not decode (with `"id": null` when its id could
//! not be read), or an error when it comes while the client shuts down; answers are queued
//! without a bound and never dropped. Requests from the handles are taken only while fewer
//! than [`OUTGOING_MAX`] lines wait for the writer, which is the client's backpressure.
//!
//! [`Event::Orphan`]: crate::Event::Orphan
//! [`Event::Undecodable`]: crate::Event::Undecodable
//! [`ExitReason::Panicked`]: crate::ExitReason::Panicked
//! [`ClientError::Disconnected`]: crate::ClientError::Disconnected
//! [`ClientError::Closed`]: crate::ClientError::Closed
//! [`Link`]: link::Link
//! [`Link::end`]: link::Link::end

mod lines;
mod link;
mod state;

use std::collections::{HashMap, HashSet, VecDeque};
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use codex_app_protocol::{ClientResponse, RequestId};
use serde_json::Value;
use tokio::sync::{mpsc, oneshot, watch};
use tokio::task::{JoinHandle, JoinSet};
use tokio::time::Instant;

use crate::error::{ClientError, ServerExit, TransportError};
use crate::events::{Abandoned, EventQueue, LateAnswer, TurnQueue};
use crate::handler::DynHandler;
use crate::reconnect::{Internal, Threads};
use crate::retry::RetryPolicy;
use crate::routing::TurnRouter;
use crate::tap::Tap;
use crate::version::{Negotiation, Session};

use self::lines::Streams;
pub(crate) use self::link::AnyTransport;
use self::state::State;

/// At most this many lines are taken per read, decoded as a batch; the notification streams
/// are woken once per batch.
pub(crate) const BATCH: usize = 64;

/// Requests from the handles wait while this many lines wait for the writer.
pub(crate) const OUTGOING_MAX: usize = 256;

/// How many abandoned requests are remembered, to name their late answers.
const ABANDONED_MAX: usize = 1024;

/// The first handshake, done by the connection as every handshake is: its request id, its
/// params, and where to say it is done (the session it read is the connection's current one
/// then).
pub(crate) struct Handshake {
    pub id: RequestId,
    pub initialize: Value,
    pub answer: oneshot::Sender<Result<(), ClientError>>,
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

/// Opens a new connection of the same kind (see [`Reconnect`]).
pub(crate) type Connector =
    Arc<dyn Fn() -> Pin<Box<dyn Future<Output = Result<AnyTransport, TransportError>> + Send>> + Send + Sync>;

/// What a connection that reconnects needs: how to connect, how often to try, and the
/// `initialize` params of the handshake to repeat.
pub(crate) struct Reconnect {
    pub connect: Connector,
    pub policy: RetryPolicy,
    pub initialize: Value,
}

/// Starts the connection task (which starts its link's writer); the task, which
/// [`Client::shutdown`] joins (it ends on its own when every handle is dropped).
///
/// [`Client::shutdown`]: crate::Client::shutdown
pub(crate) fn start(
    transport: AnyTransport,
    settings: Settings,
    commands: mpsc::UnboundedReceiver<Command>,
    control: watch::Receiver<Control>,
    status: Arc<Status>,
    reconnect: Option<Reconnect>,
    handshake: Option<Handshake>,
) -> JoinHandle<()> {
    let initialize = match (&handshake, &reconnect) {
        (Some(first), _) => first.initialize.clone(),
        (None, Some(reconnect)) => reconnect.initialize.clone(),
        (None, None) => Value::Null,
    };
    let link = transport.open(settings.tap.clone());
    let mut connection = Connection {
        state: State::Closed,
        reconnect,
        initialize,
        handles: Handles { commands, commands_open: true, control, control_open: true },
        requests: Requests::default(),
        router: TurnRouter::new(settings.turn_buffer, settings.late_grace),
        threads: Threads::default(),
        handlers: JoinSet::new(),
        handler: settings.handler,
        negotiation: settings.negotiation,
        streams: Streams::new(settings.subscribers),
        own_commands: settings.commands,
        tap: settings.tap,
        status,
        line_number: 0,
        unknown_methods: HashSet::new(),
        batch: Vec::with_capacity(BATCH),
    };
    connection.state = match handshake {
        Some(first) => connection.handshake(link, first.id, state::Attempt::First(first.answer)),
        None => State::Ready { link },
    };
    tokio::spawn(connection.run())
}

/// The connection task's state (see the module's docs).
struct Connection {
    /// Where the connection is; it holds the link, when there is one.
    state: State,
    /// How to connect again when the stream drops (`None`: it does not reconnect).
    reconnect: Option<Reconnect>,
    /// The params of every handshake's `initialize`.
    initialize: Value,
    handles: Handles,
    requests: Requests,
    router: TurnRouter,
    /// The threads this connection is subscribed to: resumed after a reconnect.
    threads: Threads,
    /// The server requests being answered.
    handlers: JoinSet<String>,
    handler: Arc<dyn DynHandler>,
    /// The current session (swapped by each handshake) and the client's policies.
    negotiation: Negotiation,
    streams: Streams,
    own_commands: mpsc::WeakUnboundedSender<Command>,
    tap: Option<Tap>,
    status: Arc<Status>,
    /// The number of the last server line read, over every link.
    line_number: u64,
    /// Methods the crate does not know that the server sent (each reported once).
    unknown_methods: HashSet<String>,
    /// The lines of one read.
    batch: Vec<String>,
}

/// What the handles send the connection: commands, and the shutdown.
struct Handles {
    commands: mpsc::UnboundedReceiver<Command>,
    /// `false` once every handle is gone (no command comes any more).
    commands_open: bool,
    control: watch::Receiver<Control>,
    control_open: bool,
}

/// The requests in flight: the handles', those the callers stopped waiting for, and the
/// connection's own.
#[derive(Default)]
struct Requests {
    pending: HashMap<RequestId, Pending>,
    abandoned: HashMap<RequestId, LateAnswer>,
    abandoned_order: VecDeque<RequestId>,
    /// Requests the connection sent itself (a handshake's, `thread/resume`s).
    internal: HashMap<RequestId, Internal>,
    /// How many `thread/resume`s the connection sent itself outside a handshake.
    internal_ids: u64,
}

impl Requests {
    fn remember_abandoned(&mut self, id: RequestId, late: LateAnswer) {
        if self.abandoned_order.len() >= ABANDONED_MAX {
            if let Some(oldest) = self.abandoned_order.pop_front() {
                self.abandoned.remove(&oldest);
            }
        }
        self.abandoned_order.push_back(id.clone());
        self.abandoned.insert(id, late);
    }

    /// A `thread/resume` id of the connection's own, outside a handshake.
    fn next_resume_id(&mut self) -> RequestId {
        self.internal_ids += 1;
        RequestId::String(format!("resume-{}", self.internal_ids))
    }
}
