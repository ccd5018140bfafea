//! [`Client`], its builder, and the connection tasks behind it.
//!
//! A connection runs two tasks: the writer owns the transport's sending half and writes the
//! lines queued by requests and by the request handler; the reader owns the receiving half,
//! decodes every server line in one pass (a response's result by the method of its pending
//! request), resolves pending requests (a map `id -> oneshot`), routes notifications to the
//! global streams and to turn handles, and starts a task per server request. The reader takes
//! the lines that are ready together ([`LineReceiver::recv_many`], up to `BATCH`), decodes
//! them as a batch and delivers its events to each stream at once. Neither task ever waits for a
//! consumer. When the stream ends, every pending request fails with
//! [`ClientError::ServerExited`] and every stream ends.

use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use codex_app_protocol::jsonrpc::ErrorObject;
use codex_app_protocol::*;
use serde::Serialize;
use futures_util::FutureExt;
use tokio::sync::{mpsc, oneshot, watch};
use tokio::time::Instant;

use crate::error::{ClientError, DecodeReport, ServerExit, TransportError, VersionCheck};
use crate::events::{Event, EventQueue, Notifications, TurnQueue};
use crate::handler::{panic_message, DefaultHandler, DynHandler, ServerRequestHandler};
use crate::tap::{Direction, Tap};
use crate::transport::stdio::CodexCommand;
use crate::transport::{LineReceiver, LineSender, Transport};
use crate::turn::TurnHandle;
use crate::wire;

/// What to do when the server's version differs from [`CODEX_VERSION`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum VersionPolicy {
    /// Print a warning on stderr and go on (the default). [`Client::version_check`] has the
    /// details either way.
    #[default]
    Warn,
    /// Fail the connection with [`ClientError::VersionMismatch`].
    Error,
    /// Go on silently.
    Ignore,
}

/// How a [`Client`] connects: client info, the experimental opt-in, the version policy, the
/// request handler, buffer sizes, the transcript tap.
pub struct ClientBuilder {
    client_name: String,
    client_version: String,
    experimental_api: bool,
    /// The `capabilities` of `initialize` as JSON (`experimentalApi` is set at connect), or why
    /// the value given could not be one.
    capabilities: Result<serde_json::Map<String, serde_json::Value>, String>,
    version_policy: VersionPolicy,
    handler: Arc<dyn DynHandler>,
    notification_buffer: usize,
    turn_buffer: usize,
    late_grace: Duration,
    request_timeout: Option<Duration>,
    tap: Option<Tap>,
}

impl std::fmt::Debug for ClientBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ClientBuilder")
            .field("client_name", &self.client_name)
            .field("client_version", &self.client_version)
            .field("experimental_api", &self.experimental_api)
            .field("version_policy", &self.version_policy)
            .field("notification_buffer", &self.notification_buffer)
            .field("turn_buffer", &self.turn_buffer)
            .finish_non_exhaustive()
    }
}

impl Default for ClientBuilder {
    fn default() -> Self {
        ClientBuilder {
            client_name: "codex-app-client".into(),
            client_version: env!("CARGO_PKG_VERSION").into(),
            experimental_api: cfg!(feature = "experimental"),
            capabilities: Ok(serde_json::Map::new()),
            version_policy: VersionPolicy::default(),
            handler: Arc::new(DefaultHandler),
            notification_buffer: 1024,
            turn_buffer: 4096,
            late_grace: Duration::from_secs(5),
            request_timeout: None,
            tap: None,
        }
    }
}

impl ClientBuilder {
    /// `clientInfo` of `initialize` (default: `codex-app-client` and this crate's version).
    /// The server puts `name` at the start of its `userAgent`.
    pub fn client_info(mut self, name: impl Into<String>, version: impl Into<String>) -> Self {
        self.client_name = name.into();
        self.client_version = version.into();
        self
    }

    /// Whether `initialize` sends `capabilities.experimentalApi: true`. Default: on when the
    /// crate's `experimental` feature is, off otherwise. With the feature on and this off,
    /// requests that use the experimental API are refused before they are sent.
    pub fn experimental_api(mut self, on: bool) -> Self {
        self.experimental_api = on;
        self
    }

    /// The other `initialize` capabilities (`experimentalApi` is set from
    /// [`experimental_api`](Self::experimental_api)): an `InitializeCapabilities`, or any value
    /// that encodes as a JSON object (releases differ in which capabilities they know). A value
    /// that is not an object fails [`connect`](Self::connect) with [`ClientError::Refused`].
    pub fn capabilities(mut self, capabilities: impl Serialize) -> Self {
        self.capabilities = match serde_json::to_value(capabilities) {
            Ok(serde_json::Value::Object(map)) => Ok(map),
            Ok(other) => Err(format!("the `initialize` capabilities must be a JSON object, not {other}")),
            Err(e) => Err(format!("the `initialize` capabilities do not encode: {e}")),
        };
        self
    }

    /// What to do when the server runs another codex version than [`CODEX_VERSION`].
    pub fn version_policy(mut self, policy: VersionPolicy) -> Self {
        self.version_policy = policy;
        self
    }

    /// Answers the server's requests (default: [`DefaultHandler`], which approves nothing).
    pub fn handler(mut self, handler: impl ServerRequestHandler) -> Self {
        self.handler = Arc::new(handler);
        self
    }

    /// How many notifications a [`Notifications`] stream holds for a reader that falls
    /// behind (default 1,024); see the lag policy in [`crate::events`].
    pub fn notification_buffer(mut self, n: usize) -> Self {
        self.notification_buffer = n.max(1);
        self
    }

    /// How many notifications a [`TurnHandle`] holds for a reader that falls behind (default
    /// 4,096).
    pub fn turn_buffer(mut self, n: usize) -> Self {
        self.turn_buffer = n.max(1);
        self
    }

    /// How long a turn handle waits after `turn/completed` for items still running then
    /// (default 5 s); see [`TurnHandle`].
    pub fn late_grace(mut self, grace: Duration) -> Self {
        self.late_grace = grace;
        self
    }

    /// A deadline for every request (default: none).
    pub fn request_timeout(mut self, timeout: Duration) -> Self {
        self.request_timeout = Some(timeout);
        self
    }

    /// Writes every line of the session to `tap` in the transcript format (see
    /// [`crate::tap`]).
    pub fn tap(mut self, tap: Tap) -> Self {
        self.tap = Some(tap);
        self
    }

    /// Spawns `codex app-server` (see [`CodexCommand`]) and connects to it over stdio.
    pub async fn spawn(self, command: &CodexCommand) -> Result<Client, ClientError> {
        let transport = command.spawn()?;
        self.connect(transport).await
    }

    /// Connects over WebSocket to `ws://HOST:PORT` (sending `token` as a bearer token) or
    /// `unix://PATH`; see [`WsTransport`](crate::transport::ws::WsTransport).
    pub async fn connect_ws(self, url: &str, token: Option<&str>) -> Result<Client, ClientError> {
        let transport = crate::transport::ws::WsTransport::connect(url, token).await?;
        self.connect(transport).await
    }

    /// Connects over `transport`: starts the connection tasks, then `initialize` and
    /// `initialized`.
    pub async fn connect<T: Transport>(self, transport: T) -> Result<Client, ClientError> {
        let version_policy = self.version_policy;
        let mut capabilities = self.capabilities.clone().map_err(ClientError::Refused)?;
        match self.experimental_api {
            true => capabilities.insert("experimentalApi".into(), true.into()),
            false => capabilities.remove("experimentalApi"),
        };
        // Written as JSON: the members of `initialize` differ between releases (0.60.1 has no
        // `capabilities`), and a server ignores those it does not know.
        let params = serde_json::json!({
            "capabilities": capabilities,
            "clientInfo": {"name": self.client_name, "version": self.client_version},
        });
        let client = self.start(transport);
        let handshake = async {
            let (answer, _) = client.call(request::Initialize::METHOD, Some(request::Initialize::METHOD), &params, None).await?;
            let response = typed_result::<request::Initialize>(answer.result)?;
            client.send_line(wire::initialized_line()).await?;
            Ok::<_, ClientError>(response)
        };
        let response = match handshake.await {
            Ok(response) => response,
            Err(e) => {
                client.shutdown(Duration::from_millis(200)).await;
                return Err(e);
            }
        };
        let check = VersionCheck::new(&response.user_agent);
        if !check.matches() {
            match version_policy {
                VersionPolicy::Warn => eprintln!("codex-app-client: warning: {check}"),
                VersionPolicy::Error => {
                    client.shutdown(Duration::from_secs(1)).await;
                    return Err(ClientError::VersionMismatch(check));
                }
                VersionPolicy::Ignore => {}
            }
        }
        let session = Session { initialize: response, version: check };
        let _ = client.inner.session.set(session);
        Ok(client)
    }

    /// Starts the connection tasks without the handshake (for a transport that is already
    /// initialized, or a test that plays the server).
    pub fn start<T: Transport>(self, transport: T) -> Client {
        let (sender, receiver) = transport.split();
        let (out_tx, out_rx) = mpsc::channel(256);
        let (control, _) = watch::channel(Control::Run);
        let (exit, _) = watch::channel(None);
        let shared = Arc::new(Shared {
            out: out_tx,
            state: Mutex::new(State {
                pending: HashMap::new(),
                routes: HashMap::new(),
                starting: HashMap::new(),
                closed: None,
                subscribers: Vec::new(),
                outbox: Vec::new(),
            }),
            next_id: AtomicI64::new(1),
            tap: self.tap,
            handler: self.handler,
            control,
            exit,
            notification_buffer: self.notification_buffer,
            turn_buffer: self.turn_buffer,
            late_grace: self.late_grace,
            request_timeout: self.request_timeout,
        });
        tokio::spawn(writer(sender, out_rx, shared.control.subscribe(), shared.clone()));
        tokio::spawn(reader(receiver, shared.clone()));
        Client {
            inner: Arc::new(Inner { shared, experimental_api: self.experimental_api, session: std::sync::OnceLock::new() }),
        }
    }
}

/// What `initialize` told us.
#[derive(Debug)]
struct Session {
    initialize: InitializeResponse,
    version: VersionCheck,
}

/// A connection to `codex app-server`. Cheap to clone; the connection (and a spawned server)
/// ends when the last clone and the last [`TurnHandle`] are dropped, or at
/// [`shutdown`](Client::shutdown).
#[derive(Clone)]
pub struct Client {
    pub(crate) inner: Arc<Inner>,
}

impl std::fmt::Debug for Client {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Client").field("experimental_api", &self.inner.experimental_api).finish_non_exhaustive()
    }
}

pub(crate) struct Inner {
    shared: Arc<Shared>,
    experimental_api: bool,
    session: std::sync::OnceLock<Session>,
}

impl Drop for Inner {
    fn drop(&mut self) {
        self.shared.control.send_replace(Control::Stop);
    }
}

/// What the connection tasks are told.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Control {
    Run,
    /// Close the sending side, read until the end, wait for the server until `deadline`.
    Close { deadline: Instant },
    /// Stop now (the client was dropped): kill a spawned server.
    Stop,
}

/// State shared by the client handles and the connection tasks.
struct Shared {
    out: mpsc::Sender<String>,
    state: Mutex<State>,
    next_id: AtomicI64,
    tap: Option<Tap>,
    handler: Arc<dyn DynHandler>,
    control: watch::Sender<Control>,
    exit: watch::Sender<Option<ServerExit>>,
    notification_buffer: usize,
    turn_buffer: usize,
    late_grace: Duration,
    request_timeout: Option<Duration>,
}

struct State {
    pending: HashMap<RequestId, Pending>,
    /// Turn handles by (thread id, turn id).
    routes: HashMap<(String, String), Arc<TurnQueue>>,
    /// Threads with a `turn/start` in flight, and the turn notifications that came before
    /// its response (bounded).
    starting: HashMap<String, (usize, Early)>,
    closed: Option<ClientError>,
    /// The queue of each [`Notifications`] stream (until the connection closes).
    subscribers: Vec<Arc<EventQueue>>,
    /// The events of the batch of lines being read, delivered to the streams at its end
    /// ([`Shared::deliver`]).
    outbox: Vec<Event>,
}

/// At most this many notifications of a turn are held before its `turn/start` response.
const EARLY_MAX: usize = 256;

struct Pending {
    tx: oneshot::Sender<Result<Answer, ClientError>>,
    /// The request's method when its result is decoded by type (`request::<M>`): the reader
    /// decodes the result straight into `M`'s response type. `None` keeps it raw.
    typed: Option<&'static str>,
    /// `turn/start` on this thread: the reader registers the turn's route.
    turn_thread: Option<String>,
}

/// A successful answer: the result (typed by the request's method, or raw), and the turn's
/// queue for `turn/start`.
pub(crate) struct Answer {
    pub(crate) result: ClientResponse,
    pub(crate) turn: Option<Arc<TurnQueue>>,
}

/// Early notifications of a thread: (turn id, notification).
type Early = VecDeque<(String, Arc<ServerNotification>)>;

impl State {
    /// Queues an event for every [`Notifications`] stream; the reader delivers the events of
    /// a batch of lines together at its end ([`Shared::deliver`]).
    fn publish(&mut self, event: Event) {
        if !self.subscribers.is_empty() {
            self.outbox.push(event);
        }
    }

    fn take_pending(&mut self, id: &RequestId) -> Option<Pending> {
        self.take_pending_with_early(id).map(|(pending, _)| pending)
    }

    /// Removes a pending request; for a `turn/start`, also takes the notifications that came
    /// early on its thread (the caller puts back those of other turns).
    fn take_pending_with_early(&mut self, id: &RequestId) -> Option<(Pending, Early)> {
        let pending = self.pending.remove(id)?;
        let mut early = Early::new();
        if let Some(thread) = &pending.turn_thread {
            if let Some(entry) = self.starting.get_mut(thread) {
                entry.0 -= 1;
                early = std::mem::take(&mut entry.1);
                if entry.0 == 0 {
                    self.starting.remove(thread);
                }
            }
        }
        Some((pending, early))
    }
}

impl Shared {
    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Delivers the events of a batch to every stream still read (one lock and one wake-up
    /// per stream and batch).
    fn deliver(&self) {
        let mut state = self.lock();
        if state.outbox.is_empty() {
            return;
        }
        let mut events = std::mem::take(&mut state.outbox);
        // A queue only this list holds belongs to a dropped stream.
        state.subscribers.retain(|queue| Arc::strong_count(queue) > 1);
        if let Some((last, others)) = state.subscribers.split_last() {
            for queue in others {
                queue.push_all(events.iter().cloned());
            }
            last.push_all(events.drain(..));
        }
        events.clear();
        state.outbox = events; // keeps its capacity for the next batch
    }

    /// Fails everything and ends every stream.
    fn close(&self, error: ClientError) {
        let mut state = self.lock();
        if state.closed.is_none() {
            state.closed = Some(error.clone());
        }
        let error = state.closed.clone().expect("set above");
        for (_, pending) in state.pending.drain() {
            let _ = pending.tx.send(Err(error.clone()));
        }
        state.starting.clear();
        for (_, queue) in state.routes.drain() {
            queue.close();
        }
        for queue in state.subscribers.drain(..) {
            queue.close();
        }
    }
}

/// Removes a request's pending entry when its future is dropped before the answer.
struct PendingGuard<'a> {
    shared: &'a Shared,
    id: RequestId,
}

impl Drop for PendingGuard<'_> {
    fn drop(&mut self) {
        self.shared.lock().take_pending(&self.id);
    }
}

impl Client {
    /// A builder with the defaults.
    pub fn builder() -> ClientBuilder {
        ClientBuilder::default()
    }

    /// Spawns `codex app-server` with the defaults and connects (see
    /// [`ClientBuilder::spawn`]).
    pub async fn spawn(command: &CodexCommand) -> Result<Client, ClientError> {
        Self::builder().spawn(command).await
    }

    fn shared(&self) -> &Shared {
        &self.inner.shared
    }

    /// The `initialize` response (after the handshake; `None` for a client made with
    /// [`ClientBuilder::start`]).
    pub fn initialize_response(&self) -> Option<&InitializeResponse> {
        self.inner.session.get().map(|s| &s.initialize)
    }

    /// The server's version against [`CODEX_VERSION`] (after the handshake).
    pub fn version_check(&self) -> Option<&VersionCheck> {
        self.inner.session.get().map(|s| &s.version)
    }

    /// Whether this session opted into the experimental API.
    pub fn experimental_api(&self) -> bool {
        self.inner.experimental_api
    }

    /// How many requests wait for an answer.
    pub fn pending_requests(&self) -> usize {
        self.shared().lock().pending.len()
    }

    /// Why the connection closed, once it has.
    pub fn closed(&self) -> Option<ClientError> {
        self.shared().lock().closed.clone()
    }

    /// Every notification from now on; see [`Notifications`].
    pub fn notifications(&self) -> Notifications {
        let mut state = self.shared().lock();
        if state.closed.is_some() {
            return Notifications::new(None);
        }
        let queue = Arc::new(EventQueue::new(self.shared().notification_buffer));
        state.subscribers.push(queue.clone());
        Notifications::new(Some(queue))
    }

    /// Sends the request `M` and returns its typed response. The result is decoded once,
    /// straight from the line into `M::Response` (the connection task knows the method of
    /// every pending request). Dropping the future forgets the request: its answer, when it
    /// comes, is discarded.
    pub async fn request<M: Request>(&self, params: M::Params) -> Result<M::Response, ClientError>
    where
        M::Response: 'static,
    {
        let (answer, _) = self.call(M::METHOD, Some(M::METHOD), &params, None).await?;
        typed_result::<M>(answer.result)
    }

    /// Sends a request by method name with any params, for methods newer than this crate;
    /// returns the raw result.
    pub async fn request_raw(&self, method: &str, params: serde_json::Value) -> Result<serde_json::Value, ClientError> {
        let params = if params.is_null() { None } else { Some(params) };
        let (answer, _) = self.call(method, None, &params, None).await?;
        let decoded = match &answer.result {
            ClientResponse::Unrecognized(raw) => raw.to_value(),
            typed => serde_json::to_value(typed),
        };
        decoded.map_err(|e| {
            ClientError::Decode(DecodeReport {
                line_number: None,
                method: Some(method.to_owned()),
                path: Some("result".into()),
                message: e.to_string(),
                line: String::new(),
            })
        })
    }

    /// Sends a notification.
    pub async fn notify<N: Notification>(&self, params: N::Params) -> Result<(), ClientError> {
        let line = wire::notification_line(N::METHOD, &params).map_err(|e| ClientError::Refused(format!("cannot encode `{}`: {e}", N::METHOD)))?;
        self.send_line(line).await
    }

    /// `turn/start`, returning a [`TurnHandle`] whose stream carries only this turn's
    /// notifications.
    pub async fn start_turn(&self, params: TurnStartParams) -> Result<TurnHandle, ClientError> {
        self.start_turn_with(params.thread_id.clone(), &params).await
    }

    /// `turn/start` on `thread` with params of any form (typed, or JSON with members the
    /// typed params do not have).
    pub(crate) async fn start_turn_with<P: Serialize + ?Sized>(&self, thread: String, params: &P) -> Result<TurnHandle, ClientError> {
        let (answer, id) = self.call(request::TurnStart::METHOD, Some(request::TurnStart::METHOD), params, Some(thread.clone())).await?;
        let queue = answer.turn.clone();
        let response = typed_result::<request::TurnStart>(answer.result)?;
        let turn_id = wire::turn_id(&response.turn);
        let (Some(queue), Some(turn_id)) = (queue, turn_id) else {
            return Err(ClientError::Refused(format!("turn/start {id:?} answered without a turn id")));
        };
        Ok(TurnHandle::new(self.clone(), thread, turn_id, response, queue))
    }

    /// Closes the connection: the client's side is closed (a spawned server sees the end of
    /// its stdin and exits), the server's remaining lines are read, and a spawned server is
    /// waited for until `timeout`, then killed. Pending requests fail. Returns how the server
    /// ended.
    pub async fn shutdown(&self, timeout: Duration) -> ServerExit {
        let deadline = Instant::now() + timeout;
        let mut exit = self.shared().exit.subscribe();
        self.shared().control.send_if_modified(|c| {
            if *c == Control::Run {
                *c = Control::Close { deadline };
                true
            } else {
                false
            }
        });
        let waited = tokio::time::timeout_at(deadline + Duration::from_secs(1), exit.wait_for(Option::is_some)).await.is_ok();
        if !waited {
            self.shared().control.send_replace(Control::Stop);
            let _ = tokio::time::timeout(Duration::from_secs(1), exit.wait_for(Option::is_some)).await;
        }
        let exit = exit.borrow().clone();
        exit.unwrap_or_else(|| ServerExit { reason: "the connection did not end".into(), ..ServerExit::default() })
    }

    /// Queues a line for the writer.
    pub(crate) async fn send_line(&self, line: String) -> Result<(), ClientError> {
        if let Some(closed) = self.closed() {
            return Err(closed);
        }
        self.shared().out.send(line).await.map_err(|_| self.closed().unwrap_or(ClientError::Closed))
    }

    /// Sends a request and waits for its answer.
    /// `typed`: the method whose response type the reader decodes the result into (see
    /// [`Pending::typed`]).
    async fn call<P: Serialize + ?Sized>(
        &self,
        method: &str,
        typed: Option<&'static str>,
        params: &P,
        turn_thread: Option<String>,
    ) -> Result<(Answer, RequestId), ClientError> {
        let shared = self.shared();
        let id = RequestId::Integer(shared.next_id.fetch_add(1, Ordering::Relaxed));
        let line = wire::request_line(&id, method, params).map_err(|e| ClientError::Refused(format!("cannot encode `{method}`: {e}")))?;
        self.check_experimental(&line)?;
        let (tx, rx) = oneshot::channel();
        {
            let mut state = shared.lock();
            if let Some(closed) = &state.closed {
                return Err(closed.clone());
            }
            if let Some(thread) = &turn_thread {
                state.starting.entry(thread.clone()).or_default().0 += 1;
            }
            state.pending.insert(id.clone(), Pending { tx, typed, turn_thread });
        }
        let _guard = PendingGuard { shared, id: id.clone() };
        if shared.out.send(line).await.is_err() {
            return Err(self.closed().unwrap_or(ClientError::Closed));
        }
        let answer = match shared.request_timeout {
            Some(limit) => tokio::time::timeout(limit, rx).await.map_err(|_| ClientError::Timeout(limit))?,
            None => rx.await,
        };
        match answer {
            Ok(answer) => answer.map(|a| (a, id)),
            Err(_) => Err(self.closed().unwrap_or(ClientError::Closed)),
        }
    }

    #[cfg(feature = "experimental")]
    fn check_experimental(&self, line: &str) -> Result<(), ClientError> {
        if self.inner.experimental_api {
            return Ok(());
        }
        match wire::experimental_reason(line) {
            Some(reason) => Err(ClientError::Refused(wire::experimental_error_message(reason))),
            None => Ok(()),
        }
    }

    #[cfg(not(feature = "experimental"))]
    fn check_experimental(&self, _line: &str) -> Result<(), ClientError> {
        Ok(())
    }

    /// Stops routing a turn to its handle.
    pub(crate) fn forget_turn(&self, thread: &str, turn: &str) {
        self.shared().lock().routes.remove(&(thread.to_owned(), turn.to_owned()));
    }
}

/// The typed result of `M` out of the response the reader decoded by `M`'s method.
fn typed_result<M: Request>(result: ClientResponse) -> Result<M::Response, ClientError>
where
    M::Response: 'static,
{
    result.into_result::<M>().ok_or_else(|| {
        ClientError::Decode(DecodeReport {
            line_number: None,
            method: Some(M::METHOD.to_owned()),
            path: Some("result".into()),
            message: format!("the result of `{}` was not decoded as its response type", M::METHOD),
            line: String::new(),
        })
    })
}

// ---------------------------------------------------------------------------------------
// The connection tasks.

async fn writer<S: LineSender>(mut sender: S, mut out: mpsc::Receiver<String>, mut control: watch::Receiver<Control>, shared: Arc<Shared>) {
    loop {
        tokio::select! {
            biased;
            changed = control.changed() => {
                let now = changed.map(|()| *control.borrow_and_update()).unwrap_or(Control::Stop);
                match now {
                    Control::Run => continue,
                    Control::Close { .. } => {
                        // Lines already queued (answers to the server) still go out.
                        while let Ok(line) = out.try_recv() {
                            if write(&mut sender, &shared, line).await.is_err() {
                                break;
                            }
                        }
                        let _ = sender.close().await;
                        return;
                    }
                    Control::Stop => {
                        let _ = sender.close().await;
                        return;
                    }
                }
            }
            line = out.recv() => match line {
                Some(line) => {
                    if let Err(e) = write(&mut sender, &shared, line).await {
                        // The reader sees the end of the stream and reports the exit; a
                        // transport whose reading side stays open is closed here.
                        let error = ClientError::Transport(TransportError::new("writing to the server", e));
                        tokio::time::sleep(Duration::from_millis(500)).await;
                        shared.close(error);
                        return;
                    }
                }
                None => return,
            },
        }
    }
}

async fn write<S: LineSender>(sender: &mut S, shared: &Shared, line: String) -> std::io::Result<()> {
    if let Some(tap) = &shared.tap {
        tap.record(Direction::C2s, &line);
    }
    sender.send(line).await
}

/// At most this many lines are taken per read, decoded as a batch; the notification streams
/// are woken once per batch.
const BATCH: usize = 64;

async fn reader<R: LineReceiver>(mut receiver: R, shared: Arc<Shared>) {
    let mut control = shared.control.subscribe();
    let mut number = 0u64;
    let mut deadline: Option<Instant> = None;
    let mut batch = Vec::with_capacity(BATCH);
    let reason = loop {
        let next = async {
            match deadline {
                Some(at) => tokio::time::timeout_at(at, receiver.recv_many(&mut batch, BATCH)).await.ok(),
                None => Some(receiver.recv_many(&mut batch, BATCH).await),
            }
        };
        tokio::select! {
            biased;
            changed = control.changed() => {
                match changed.map(|()| *control.borrow_and_update()).unwrap_or(Control::Stop) {
                    Control::Run => {}
                    Control::Close { deadline: at } => deadline = Some(at),
                    Control::Stop => break "the client was dropped".to_owned(),
                }
            }
            read = next => match read {
                None => break "shutdown timed out".to_owned(),
                Some(Ok(0)) => break "end of stream".to_owned(),
                Some(Ok(_)) => {
                    for line in batch.drain(..) {
                        number += 1;
                        handle_line(&shared, line, number);
                    }
                    shared.deliver();
                }
                Some(Err(e)) => break format!("read error: {e}"),
            },
        }
    };
    let wait = match deadline {
        Some(at) if reason == "end of stream" => at.saturating_duration_since(Instant::now()),
        Some(_) => Duration::ZERO,
        None if reason == "end of stream" || reason.starts_with("read error") => Duration::from_millis(500),
        None => Duration::ZERO,
    };
    let mut exit = receiver.exit(wait).await;
    exit.reason = reason;
    let error = if deadline.is_some() { ClientError::Closed } else { ClientError::ServerExited(exit.clone()) };
    shared.close(error);
    shared.exit.send_replace(Some(exit));
}

fn handle_line(shared: &Arc<Shared>, line: String, number: u64) {
    if let Some(tap) = &shared.tap {
        tap.record(Direction::S2c, &line);
    }
    let typed = |id: &RequestId| shared.lock().pending.get(id).and_then(|p| p.typed);
    match wire::decode_server_line(&line, number, typed) {
        Ok(Message::Notification(notification)) => route(shared, Arc::new(notification)),
        Ok(Message::Request(request)) => answer_server_request(shared, request),
        Ok(Message::Response(response)) => {
            let mut state = shared.lock();
            let Some((pending, early)) = state.take_pending_with_early(&response.id) else {
                return; // its future was dropped
            };
            let turn = pending.turn_thread.as_ref().and_then(|thread| {
                let ClientResponse::TurnStart(started) = &response.result else { return None };
                let turn = wire::turn_id(&started.turn)?;
                let queue = Arc::new(TurnQueue::new(shared.turn_buffer, shared.late_grace));
                let (mine, others): (Early, Early) = early.into_iter().partition(|(t, _)| *t == turn);
                if let Some((_, early)) = state.starting.get_mut(thread) {
                    early.extend(others);
                }
                for (_, n) in mine {
                    let item = wire::route_key(&n).item;
                    queue.push(n.clone(), wire::lifecycle(&n), item.as_deref());
                }
                state.routes.insert((thread.clone(), turn), queue.clone());
                Some(queue)
            });
            let _ = pending.tx.send(Ok(Answer { result: response.result, turn }));
        }
        Ok(Message::Error(error)) => {
            let mut state = shared.lock();
            match error.id.as_ref().and_then(|id| state.take_pending(id)) {
                Some(pending) => {
                    let _ = pending.tx.send(Err(ClientError::Server(error.error)));
                }
                None => state.publish(Event::OrphanError(Arc::new(error))),
            }
        }
        Err(undecodable) => {
            let wire::Undecodable { report, response } = *undecodable;
            let mut state = shared.lock();
            // A response whose result does not fit the type of its request fails that request.
            if let Some(pending) = response.as_ref().and_then(|id| state.take_pending(id)) {
                let _ = pending.tx.send(Err(ClientError::Decode(report)));
                return;
            }
            if response.is_none() {
                if let Some(id) = wire::undecodable_request_id(&line) {
                    let error = ErrorObject::new(ErrorObject::INVALID_PARAMS, format!("the client cannot decode this request: {}", report.message));
                    let _ = shared.out.try_send(wire::error_line(id, error));
                }
            }
            state.publish(Event::Undecodable(Arc::new(report)));
        }
    }
}

/// Delivers a notification to the global stream and to its turn's handle.
fn route(shared: &Shared, notification: Arc<ServerNotification>) {
    let key = wire::route_key(&notification);
    let mut state = shared.lock();
    if let (Some(thread), Some(turn)) = (&key.thread, &key.turn) {
        // A lookup without allocating the key.
        let queue = state.routes.iter().find(|((t, u), _)| t == thread && u == turn).map(|(_, q)| q.clone());
        match queue {
            Some(queue) => queue.push(notification.clone(), wire::lifecycle(&notification), key.item.as_deref()),
            None => {
                if let Some((_, early)) = state.starting.get_mut(thread.as_ref()) {
                    if early.len() < EARLY_MAX {
                        early.push_back((turn.clone().into_owned(), notification.clone()));
                    }
                }
            }
        }
    }
    state.publish(Event::Notification(notification));
}

/// Answers a server request on its own task; a panic becomes an internal error.
fn answer_server_request(shared: &Arc<Shared>, request: ServerRequest) {
    let id = request.id().clone();
    let method = request.method().to_owned();
    let handler = shared.handler.clone();
    let shared = shared.clone();
    tokio::spawn(async move {
        let outcome = std::panic::AssertUnwindSafe(handler.dispatch(request)).catch_unwind().await;
        let line = match outcome {
            Ok(Ok(result)) => wire::response_line(id, &result),
            Ok(Err(error)) => wire::error_line(id, error),
            Err(panic) => {
                let why = panic_message(&*panic);
                let error = ErrorObject::new(ErrorObject::INTERNAL_ERROR, format!("the client's handler for `{method}` failed: {why}"));
                wire::error_line(id, error)
            }
        };
        let _ = shared.out.send(line).await;
    });
}
