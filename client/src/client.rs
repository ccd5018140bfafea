//! [`Client`] and its builder: the handles of a connection.
//!
//! A [`Client`] is a handle: it encodes requests, checks them against the experimental opt-in,
//! and hands them to the connection task ([`crate::connection`]), which owns the connection's
//! state; it then waits for the answer on a oneshot channel. Retries of "Server overloaded"
//! answers ([`RetryPolicy`]) happen here, in the caller's task.

use std::future::Future;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use codex_app_protocol::path::JsonPath;
use codex_app_protocol::roundtrip::reencode;
use codex_app_protocol::*;
use serde::Serialize;
use tokio::sync::{mpsc, oneshot, watch};
use tokio::time::Instant;
use tracing::Instrument;

use crate::connection::{self, Answer, AnyTransport, Command, ConnectionStats, Control, Status};
use crate::error::{ClientError, DecodeReport, ExitReason, ServerExit, TransportError};
use crate::events::{Abandoned, EventQueue, Notifications};
use crate::handler::{DefaultHandler, DynHandler, ServerRequestHandler};
use crate::retry::RetryPolicy;
use crate::tap::Tap;
use crate::transport::stdio::CodexCommand;
use crate::transport::Transport;
use crate::turn::TurnHandle;
use crate::version::{Current, Session, UnknownItemPolicy, VersionCheck, VersionPolicy};
use crate::wire;

/// How long [`ClientBuilder::handshake_timeout`] allows by default: generous for a server
/// that starts cold (the npm `codex` starts node, then the native binary), short enough that
/// an application does not hang on a server that never answers.
pub const DEFAULT_HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(60);

/// How a [`Client`] connects: client info, the experimental opt-in, the version policy, the
/// request handler, buffer sizes, retries, the transcript tap, and streams that see the
/// connection from its first line.
pub struct ClientBuilder {
    client_name: String,
    client_version: String,
    experimental_api: bool,
    /// The `capabilities` of `initialize` as JSON (`experimentalApi` is set at connect), or why
    /// the value given could not be one.
    capabilities: Result<serde_json::Map<String, serde_json::Value>, String>,
    version_policy: VersionPolicy,
    unknown_to_server: UnknownItemPolicy,
    handler: Arc<dyn DynHandler>,
    notification_buffer: usize,
    turn_buffer: usize,
    late_grace: Duration,
    request_timeout: Option<Duration>,
    handshake_timeout: Duration,
    retry: RetryPolicy,
    reconnect: Option<RetryPolicy>,
    tap: Option<Tap>,
    subscribers: Vec<Arc<EventQueue>>,
    trace: Option<crate::trace::Provider>,
    #[cfg(feature = "tls")]
    tls: crate::transport::ws::TlsOptions,
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
            .field("handshake_timeout", &self.handshake_timeout)
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
            unknown_to_server: Default::default(),
            handler: Arc::new(DefaultHandler),
            notification_buffer: 1024,
            turn_buffer: 4096,
            late_grace: Duration::from_secs(5),
            request_timeout: None,
            handshake_timeout: DEFAULT_HANDSHAKE_TIMEOUT,
            retry: RetryPolicy::default(),
            reconnect: None,
            tap: None,
            subscribers: Vec::new(),
            trace: None,
            #[cfg(feature = "tls")]
            tls: Default::default(),
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
    /// requests that use the experimental API are refused before they are sent. The same as
    /// `experimental_api` of [`capabilities`](Self::capabilities); the last one given counts.
    pub fn experimental_api(mut self, on: bool) -> Self {
        self.experimental_api = on;
        self
    }

    /// The `capabilities` of `initialize`, typed: which notifications the server leaves out for
    /// this connection (`opt_out_notification_methods`), the MCP extensions the client
    /// declares, attestation, and the rest of the release's `InitializeCapabilities`.
    ///
    /// `experimental_api` is the opt-in of [`experimental_api`](Self::experimental_api): when
    /// it is `Some`, it sets the opt-in (the last one given counts); when it is `None` (as in
    /// `InitializeCapabilities::default()`), the opt-in stays as it was, that is on when the
    /// crate's `experimental` feature is and off otherwise. What is sent is the value as it
    /// encodes, with `experimentalApi: true` when the session opts in and without the member
    /// when it does not.
    ///
    /// ```
    /// use codex_app_client::protocol::InitializeCapabilities;
    /// let builder = codex_app_client::Client::builder().capabilities(InitializeCapabilities {
    ///     opt_out_notification_methods: Some(vec!["thread/started".into()]),
    ///     ..Default::default()
    /// });
    /// ```
    pub fn capabilities(mut self, capabilities: codex_app_protocol::InitializeCapabilities) -> Self {
        // Kept as JSON: which members a release's `InitializeCapabilities` has differs, and
        // the connection writes `initialize` as JSON (see `handshake`).
        self.capabilities = match reencode(&capabilities) {
            Ok(serde_json::Value::Object(mut map)) => {
                if let Some(on) = map.remove("experimentalApi").and_then(|on| on.as_bool()) {
                    self.experimental_api = on;
                }
                Ok(map)
            }
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

    /// What to do with a request, notification or answer whose params use members, enum
    /// values or union arms the server's release does not have: refuse it (the default; the
    /// server would silently ignore such a member), strip them (a `tracing` warning each) or
    /// send them anyway. A method the release does not have is always refused
    /// ([`ClientError::Unavailable`]).
    pub fn unknown_to_server(mut self, policy: UnknownItemPolicy) -> Self {
        self.unknown_to_server = policy;
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

    /// A deadline for every request (default: none); each retry of an overloaded request
    /// gets its own. An answer that comes after it is an [`Event::Orphan`](crate::Event::Orphan).
    pub fn request_timeout(mut self, timeout: Duration) -> Self {
        self.request_timeout = Some(timeout);
        self
    }

    /// How long connecting may take, from the start of [`spawn`](Self::spawn),
    /// [`connect`](Self::connect), [`connect_ws`](Self::connect_ws) or
    /// [`connect_with`](Self::connect_with) to the answer to `initialize` (default 60 s, see
    /// [`DEFAULT_HANDSHAKE_TIMEOUT`]): opening the transport (`connect_ws`, `connect_with`)
    /// and the handshake. A server that does not answer in time is shut down (a spawned one
    /// killed) and the call fails with [`ClientError::Timeout`]. (A reconnect's handshake
    /// has a deadline of its own, see [`reconnect`](Self::reconnect).)
    pub fn handshake_timeout(mut self, timeout: Duration) -> Self {
        self.handshake_timeout = timeout;
        self
    }

    /// How requests answered with "Server overloaded; retry later." (`-32001`) are retried
    /// (default: [`RetryPolicy::default`], 4 retries with exponential backoff and jitter;
    /// [`RetryPolicy::none`] turns retries off).
    pub fn retry(mut self, policy: RetryPolicy) -> Self {
        self.retry = policy;
        self
    }

    /// A stream of every event of the connection from its first line on, the handshake's
    /// included (an undecodable line during `initialize` is seen here, and nowhere else).
    /// Its buffer is the [`notification_buffer`](Self::notification_buffer) set so far.
    pub fn notifications(&mut self) -> Notifications {
        let queue = Arc::new(EventQueue::new(self.notification_buffer));
        self.subscribers.push(queue.clone());
        Notifications::new(Some(queue))
    }

    /// Asks `context` for the W3C trace context of each request the client sends outside a
    /// [`with_trace`](crate::trace::with_trace) scope (`None`: no `trace` member), in the
    /// caller's task, so that it can read the caller's current span. See [`crate::trace`].
    pub fn trace_context(
        mut self,
        context: impl Fn() -> Option<crate::trace::TraceContext> + Send + Sync + 'static,
    ) -> Self {
        self.trace = Some(Arc::new(context));
        self
    }

    /// Writes every line of the session to `tap` in the transcript format (see
    /// [`crate::tap`]).
    pub fn tap(mut self, tap: Tap) -> Self {
        self.tap = Some(tap);
        self
    }

    /// Spawns `codex app-server` (see [`CodexCommand`]) and connects to it over stdio. Without
    /// a codex binary to run: [`ClientError::CodexNotFound`].
    ///
    /// Cancel safe: dropping the future kills the spawned server and ends the connection.
    pub async fn spawn(self, command: &CodexCommand) -> Result<Client, ClientError> {
        let transport = command.spawn()?;
        self.connect(transport).await
    }

    /// Connects over WebSocket to `ws://HOST:PORT` (sending `token` as a bearer token),
    /// `wss://HOST:PORT` (feature `tls`, verified as `ClientBuilder::tls` says) or
    /// `unix://PATH`; see [`WsTransport`](crate::transport::ws::WsTransport) (a token is never
    /// sent over plain `ws://` to a host that is not loopback). With
    /// [`reconnect`](Self::reconnect), the client connects again to the same URL when the
    /// connection drops.
    ///
    /// Cancel safe: dropping the future closes the connection it opened.
    pub async fn connect_ws(self, url: &str, token: Option<&str>) -> Result<Client, ClientError> {
        let (url, token) = (url.to_owned(), token.map(str::to_owned));
        #[cfg(feature = "tls")]
        let tls = self.tls.clone();
        self.connect_with(move || {
            let (url, token) = (url.clone(), token.clone());
            #[cfg(feature = "tls")]
            let tls = tls.clone();
            async move {
                #[cfg(feature = "tls")]
                return crate::transport::ws::WsTransport::connect_tls(&url, token.as_deref(), &tls).await;
                #[cfg(not(feature = "tls"))]
                return crate::transport::ws::WsTransport::connect(&url, token.as_deref()).await;
            }
        })
        .await
    }

    /// How [`connect_ws`](Self::connect_ws) verifies a `wss://` server (feature `tls`): the
    /// roots it trusts besides the bundled webpki roots (and the platform's, with
    /// `tls-native-roots`).
    #[cfg(feature = "tls")]
    pub fn tls(mut self, options: crate::transport::ws::TlsOptions) -> Self {
        self.tls = options;
        self
    }

    /// Connects with `connect`, and with [`reconnect`](Self::reconnect) connects again with
    /// it when the connection drops (for a transport of your own that can be opened again).
    ///
    /// Cancel safe: dropping the future closes the connection it opened.
    pub async fn connect_with<T, F, Fut>(self, connect: F) -> Result<Client, ClientError>
    where
        T: Transport,
        F: Fn() -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<T, TransportError>> + Send + 'static,
    {
        let deadline = Instant::now() + self.handshake_timeout;
        let transport = match tokio::time::timeout_at(deadline, connect()).await {
            Ok(transport) => transport?,
            Err(_) => return Err(ClientError::Timeout(self.handshake_timeout)),
        };
        let connector: connection::Connector = Arc::new(move || {
            let connecting = connect();
            Box::pin(async move { connecting.await.map(AnyTransport::new) })
        });
        self.handshake(AnyTransport::new(transport), Some(connector), deadline).await
    }

    /// When a connection made by [`connect_ws`](Self::connect_ws) or
    /// [`connect_with`](Self::connect_with) drops (not at [`Client::shutdown`]): its pending
    /// requests fail with [`ClientError::Disconnected`] (retryable), the client connects again
    /// with the backoff of `policy` (its `max_retries` is the number of attempts), does the
    /// handshake again and resumes (`thread/resume`) every thread it had started, resumed,
    /// forked or unarchived; turn handles and notification streams go on and get
    /// [`Event::Reconnected`](crate::Event::Reconnected). Off by default; a spawned server (stdio)
    /// never reconnects.
    pub fn reconnect(mut self, policy: RetryPolicy) -> Self {
        self.reconnect = Some(policy);
        self
    }

    /// Connects over `transport`: starts the connection tasks, then `initialize` and
    /// `initialized`.
    ///
    /// Cancel safe: dropping the future ends the connection (the transport is dropped).
    pub async fn connect<T: Transport>(self, transport: T) -> Result<Client, ClientError> {
        let deadline = Instant::now() + self.handshake_timeout;
        self.handshake(AnyTransport::new(transport), None, deadline).await
    }

    /// `initialize` and `initialized` over `transport`, by `deadline`.
    async fn handshake(
        self,
        transport: AnyTransport,
        connector: Option<connection::Connector>,
        deadline: Instant,
    ) -> Result<Client, ClientError> {
        let handshake_timeout = self.handshake_timeout;
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
        let reconnect = match (self.reconnect, connector) {
            (Some(policy), Some(connect)) => {
                Some(connection::Reconnect { connect, policy, initialize: params.clone() })
            }
            _ => None,
        };
        // The connection does the handshake, the same one as after a reconnect; the handles'
        // requests wait until it is done.
        let (answer, answered) = oneshot::channel();
        let first = connection::Handshake { id: RequestId::Integer(1), initialize: params, answer };
        let request_timeout = self.request_timeout;
        let client = self.start_with(transport, reconnect, Some(first));
        let handshake = async {
            let answered = match request_timeout {
                Some(limit) => tokio::time::timeout(limit, answered).await.map_err(|_| ClientError::Timeout(limit))?,
                None => answered.await,
            };
            match answered {
                Ok(answer) => answer,
                // The connection ended first: why it ended.
                Err(_) => Err(client.ended().await),
            }
        };
        let outcome = tokio::time::timeout_at(deadline, handshake).await.unwrap_or_else(|_| {
            tracing::warn!(timeout = ?handshake_timeout, "the server did not answer `initialize` in time");
            Err(ClientError::Timeout(handshake_timeout))
        });
        // The connection read the release, ran the version policy and made the session current.
        if let Err(e) = outcome {
            client.shutdown(Duration::from_secs(1)).await;
            return Err(e);
        }
        Ok(client)
    }

    /// Starts the connection tasks without the handshake (for a transport that is already
    /// initialized, or a test that plays the server).
    pub fn start<T: Transport>(self, transport: T) -> Client {
        self.start_with(AnyTransport::new(transport), None, None)
    }

    fn start_with(
        self,
        transport: AnyTransport,
        reconnect: Option<connection::Reconnect>,
        handshake: Option<connection::Handshake>,
    ) -> Client {
        // The handshake's `initialize` has id 1.
        let first_id = if handshake.is_some() { 2 } else { 1 };
        let (commands, command_receiver) = mpsc::unbounded_channel();
        let (control, control_receiver) = watch::channel(Control::Run);
        let status = Arc::new(Status::new());
        let session = Arc::new(Current::default());
        let settings = connection::Settings {
            handler: self.handler,
            tap: self.tap,
            turn_buffer: self.turn_buffer,
            late_grace: self.late_grace,
            subscribers: self.subscribers,
            commands: commands.downgrade(),
            negotiation: crate::version::Negotiation {
                current: session.clone(),
                version_policy: self.version_policy,
                unknown: self.unknown_to_server,
            },
        };
        let task = connection::start(
            transport,
            settings,
            command_receiver,
            control_receiver,
            status.clone(),
            reconnect,
            handshake,
        );
        Client {
            inner: Arc::new(Inner {
                commands,
                control,
                status,
                next_id: AtomicI64::new(first_id),
                notification_buffer: self.notification_buffer,
                request_timeout: self.request_timeout,
                retry: self.retry,
                experimental_api: self.experimental_api,
                unknown_to_server: self.unknown_to_server,
                trace: self.trace,
                session,
                task: std::sync::Mutex::new(Some(task)),
            }),
        }
    }
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
    commands: mpsc::UnboundedSender<Command>,
    /// Dropped with the last handle, which the connection task takes as [`ExitReason::Dropped`].
    control: watch::Sender<Control>,
    pub(crate) status: Arc<Status>,
    next_id: AtomicI64,
    notification_buffer: usize,
    request_timeout: Option<Duration>,
    retry: RetryPolicy,
    experimental_api: bool,
    unknown_to_server: UnknownItemPolicy,
    /// Where a request's W3C trace context comes from outside a `with_trace` scope.
    trace: Option<crate::trace::Provider>,
    /// What the connection's last handshake read (swapped by every handshake, a reconnect's
    /// included).
    session: Arc<Current>,
    /// The connection task, until a [`Client::shutdown`] joins it.
    task: std::sync::Mutex<Option<tokio::task::JoinHandle<()>>>,
}

/// Tells the connection task a request's caller stopped waiting (timed out, or its future was
/// dropped) unless the answer came.
struct PendingGuard<'a> {
    client: &'a Client,
    id: RequestId,
    why: Option<Abandoned>,
}

impl Drop for PendingGuard<'_> {
    fn drop(&mut self) {
        self.client.inner.status.pending.fetch_sub(1, Ordering::Relaxed);
        if let Some(why) = self.why {
            self.client.command(Command::Abandon { id: self.id.clone(), why });
        }
    }
}

impl Client {
    /// A builder with the defaults.
    pub fn builder() -> ClientBuilder {
        ClientBuilder::default()
    }

    /// Spawns `codex app-server` with the defaults and connects (see
    /// [`ClientBuilder::spawn`]).
    ///
    /// Cancel safe: dropping the future kills the spawned server and ends the connection.
    pub async fn spawn(command: &CodexCommand) -> Result<Client, ClientError> {
        Self::builder().spawn(command).await
    }

    /// Hands a command to the connection task (which may have ended: then the caller finds
    /// the connection closed).
    pub(crate) fn command(&self, command: Command) {
        let _ = self.inner.commands.send(command);
    }

    /// The `initialize` response of the current connection (after a reconnect, the new
    /// server's). `None` for a client made with [`ClientBuilder::start`], and when the result
    /// does not decode as the crate's type: a release below the supported range lacks members
    /// it requires (with [`VersionPolicy::Warn`] the client connects to it anyway);
    /// [`initialize_result`](Self::initialize_result) has the result as it came.
    pub fn initialize_response(&self) -> Option<InitializeResponse> {
        self.inner.session.get().and_then(|s| s.response.clone())
    }

    /// The `initialize` result of the current connection as JSON, as the server sent it
    /// (`None` for a client made with [`ClientBuilder::start`]).
    pub fn initialize_result(&self) -> Option<serde_json::Value> {
        self.inner.session.get().map(|s| s.initialize.clone())
    }

    /// The server's version against the supported range, read by the current connection's
    /// handshake (after a reconnect, the new server's: see
    /// [`Event::ReleaseChanged`](crate::Event::ReleaseChanged)).
    pub fn version_check(&self) -> Option<VersionCheck> {
        self.inner.session.get().map(|s| s.version.clone())
    }

    /// The server's codex release, from `initialize`'s `userAgent` (of the current
    /// connection); `None` when it cannot be read (see [`VersionPolicy`]).
    pub fn server_version(&self) -> Option<codex_app_protocol::availability::Release> {
        self.inner.session.get().and_then(|s| s.version.release.clone())
    }

    /// Checks a message's method and params against the server's release (nothing before the
    /// handshake ends) and encodes the params to send; with the session checked against.
    fn encode<P: Serialize + ?Sized>(
        &self,
        method: &str,
        params: &P,
    ) -> Result<(Box<serde_json::value::RawValue>, Option<Arc<Session>>), ClientError> {
        let session = self.inner.session.get();
        let server = session.as_ref().map(|s| &s.server);
        let params = crate::version::Server::encode(server, method, params, self.inner.unknown_to_server)?;
        Ok((params, session))
    }

    /// Whether this session opted into the experimental API.
    pub fn experimental_api(&self) -> bool {
        self.inner.experimental_api
    }

    /// How many requests wait for an answer.
    pub fn pending_requests(&self) -> usize {
        self.inner.status.pending()
    }

    /// Why the connection closed, once it has.
    pub fn closed(&self) -> Option<ClientError> {
        self.inner.status.closed()
    }

    /// Every event from now on; see [`Notifications`]. (To see the handshake too, take the
    /// stream from the builder: [`ClientBuilder::notifications`].)
    pub fn notifications(&self) -> Notifications {
        self.subscribe(EventQueue::new(self.inner.notification_buffer))
    }

    /// A stream of the events `filter` accepts, holding at most `capacity` of them.
    pub(crate) fn filtered_notifications(&self, capacity: usize, filter: crate::events::Filter) -> Notifications {
        self.subscribe(EventQueue::filtered(capacity, filter))
    }

    fn subscribe(&self, queue: EventQueue) -> Notifications {
        if self.closed().is_some() {
            return Notifications::new(None);
        }
        let queue = Arc::new(queue);
        match self.inner.commands.send(Command::Subscribe(queue.clone())) {
            Ok(()) => Notifications::new(Some(queue)),
            Err(_) => Notifications::new(None), // the connection has ended
        }
    }

    /// Sends the request `M` and returns its typed response. The result is decoded once,
    /// straight from the line into `M::Response` (the connection task knows the method of
    /// every pending request). Dropping the future forgets the request: its answer, when it
    /// comes, is discarded.
    ///
    /// Cancel safe: dropping the future forgets the request; the connection holds nothing for
    /// it and goes on.
    pub async fn request<M: Request>(&self, params: M::Params) -> Result<M::Response, ClientError>
    where
        M::Response: 'static,
    {
        let (answer, _) = self.call(M::METHOD, Some(M::METHOD), &params, None).await?;
        typed_result::<M>(answer.result)
    }

    /// Sends a request by method name with any params, for methods newer than this crate;
    /// returns the raw result.
    ///
    /// Cancel safe: dropping the future forgets the request (its answer, when it comes, is an
    /// [`Event::Orphan`](crate::Event::Orphan)); the connection holds nothing for it and goes
    /// on.
    pub async fn request_raw(&self, method: &str, params: serde_json::Value) -> Result<serde_json::Value, ClientError> {
        let params = if params.is_null() { None } else { Some(params) };
        self.call_for_value(method, &params).await
    }

    /// Sends the request `M` with its typed params and returns the raw result: the handles'
    /// requests, whose params the compiler checks against the release's types while their
    /// results are read by member name (they differ between releases).
    ///
    /// Cancel safe, as [`Client::request_raw`].
    pub(crate) async fn request_sent<M: Request>(&self, params: &M::Params) -> Result<serde_json::Value, ClientError> {
        self.call_for_value(M::METHOD, params).await
    }

    /// Sends `method` with `params` and returns its result as JSON (not typed by the method).
    async fn call_for_value<P: Serialize + ?Sized>(
        &self,
        method: &str,
        params: &P,
    ) -> Result<serde_json::Value, ClientError> {
        let (answer, _) = self.call(method, None, params, None).await?;
        let decoded = match &answer.result {
            ClientResponse::Unrecognized(raw) => raw.to_value(),
            typed => reencode(typed),
        };
        decoded.map_err(|e| ClientError::Decode(DecodeReport::result(method, &e)))
    }

    /// Sends a notification.
    ///
    /// Cancel safe: the line is queued when the future first runs (it does not wait).
    pub async fn notify<N: Notification>(&self, params: N::Params) -> Result<(), ClientError> {
        let (params, _) = self.encode(N::METHOD, &params)?;
        let line = wire::notification_line(N::METHOD, &params)
            .map_err(|e| ClientError::Refused(format!("cannot encode `{}`: {e}", N::METHOD)))?;
        self.send_line(line).await
    }

    /// `turn/start`, returning a [`TurnHandle`] whose stream carries only this turn's
    /// notifications.
    ///
    /// Cancel safe: dropping the future forgets the `turn/start` (a turn the server started is
    /// no longer routed, even when its answer had already come); the turn goes on at the
    /// server.
    pub async fn start_turn(&self, params: TurnStartParams) -> Result<TurnHandle, ClientError> {
        self.start_turn_with(params.thread_id.clone(), &params).await
    }

    /// `turn/start` on `thread` with params of any form (typed, or JSON with members the
    /// typed params do not have).
    pub(crate) async fn start_turn_with<P: Serialize + ?Sized>(
        &self,
        thread: String,
        params: &P,
    ) -> Result<TurnHandle, ClientError> {
        let (answer, id) = self
            .call(request::TurnStart::METHOD, Some(request::TurnStart::METHOD), params, Some(thread.clone()))
            .await?;
        // The route goes with the answer: dropped on any early return, it stops the routing.
        let Answer { result, turn: route } = answer;
        let response = typed_result::<request::TurnStart>(result)?;
        let turn_id = wire::turn_id(&response.turn);
        let (Some(route), Some(turn_id)) = (route, turn_id) else {
            return Err(ClientError::UnusableAnswer {
                method: request::TurnStart::METHOD.into(),
                why: format!("the answer to request {} has no turn id", id_text(&id)),
            });
        };
        Ok(TurnHandle::new(self.clone(), thread, turn_id, response, route))
    }

    /// Closes the connection: pending requests fail with [`ClientError::Closed`], the server
    /// requests being answered get their answers, the client's side is closed (a spawned
    /// server sees the end of its stdin and exits), the server's remaining lines are read, and
    /// a spawned server is waited for until `timeout`, then killed
    /// ([`ServerExit::killed_after`] says how long the client waited). Returns how the
    /// connection ended; a clean end is [`ExitReason::Shutdown`].
    ///
    /// Cancel safe in the sense that the shutdown goes on without the future: dropping it only
    /// stops waiting for the connection's end.
    pub async fn shutdown(&self, timeout: Duration) -> ServerExit {
        let started = Instant::now();
        let deadline = started + timeout;
        let mut exit = self.inner.status.exit.subscribe();
        self.inner.control.send_if_modified(|c| match c {
            Control::Run => {
                *c = Control::Close { started, deadline };
                true
            }
            Control::Close { .. } => false,
        });
        // The connection task ends by the deadline (then it kills the server, which takes
        // a moment); more than that means it could not. The first shutdown joins the task (so
        // everything it held is released when this returns); another waits for its end.
        let task = self.inner.task.lock().unwrap_or_else(std::sync::PoisonError::into_inner).take();
        let grace = deadline + Duration::from_secs(5);
        let ended = match task {
            Some(task) => match tokio::time::timeout_at(grace, task).await {
                Ok(Ok(())) => true,
                Ok(Err(e)) => {
                    let why = if e.is_panic() { "panicked" } else { "was cancelled" };
                    return ServerExit {
                        reason: ExitReason::Panicked(format!("the connection task {why} while ending")),
                        ..exit.borrow().clone().unwrap_or_default()
                    };
                }
                Err(_) => false,
            },
            None => tokio::time::timeout_at(grace, exit.wait_for(Option::is_some)).await.is_ok(),
        };
        let exit = exit.borrow().clone();
        match exit {
            Some(exit) if ended => exit,
            _ => ServerExit { reason: ExitReason::ShutdownTimedOut, ..ServerExit::default() },
        }
    }

    /// Waits for the connection's end; why it ended.
    async fn ended(&self) -> ClientError {
        let mut exit = self.inner.status.exit.subscribe();
        let _ = exit.wait_for(Option::is_some).await;
        self.closed().unwrap_or(ClientError::Closed)
    }

    /// Queues a line for the server (a notification of the client).
    pub(crate) async fn send_line(&self, line: String) -> Result<(), ClientError> {
        if let Some(closed) = self.closed() {
            return Err(closed);
        }
        self.inner.commands.send(Command::Send(line)).map_err(|_| self.closed().unwrap_or(ClientError::Closed))
    }

    /// Sends a request and waits for its answer, retrying it (with a new id) while the
    /// server answers "Server overloaded" and the [`RetryPolicy`] allows.
    /// `typed`: the method whose response type the connection decodes the result into.
    ///
    /// Generic only in its encoding: the rest, [`Client::call_encoded`], is compiled once, not
    /// once per params type in every crate that sends requests.
    async fn call<P: Serialize + ?Sized>(
        &self,
        method: &str,
        typed: Option<&'static str>,
        params: &P,
        turn_thread: Option<String>,
    ) -> Result<(Answer, RequestId), ClientError> {
        let (params, checked) = self.encode(method, params)?;
        self.call_encoded(method, typed, params, checked, turn_thread).await
    }

    /// [`Client::call`] with its params encoded (and the session they were checked against).
    async fn call_encoded(
        &self,
        method: &str,
        typed: Option<&'static str>,
        params: Box<serde_json::value::RawValue>,
        checked: Option<Arc<Session>>,
        turn_thread: Option<String>,
    ) -> Result<(Answer, RequestId), ClientError> {
        // Read in the caller's task, before anything is awaited.
        let trace = crate::trace::current(self.inner.trace.as_ref());
        let mut retry = 0;
        loop {
            let id = RequestId::Integer(self.inner.next_id.fetch_add(1, Ordering::Relaxed));
            let line = wire::traced_request_line(&id, method, &params, trace.clone());
            if retry == 0 {
                self.check_experimental(&line)?;
            }
            let span = tracing::debug_span!("request", method, id = %id_text(&id), retry);
            let outcome =
                self.call_once(id, method, typed, line, turn_thread.clone(), checked.clone()).instrument(span).await;
            match outcome {
                Err(ClientError::Server(error)) if error.code == jsonrpc::ErrorObject::SERVER_OVERLOADED => {
                    let Some(delay) = self.inner.retry.delay(retry) else {
                        return Err(ClientError::Server(error));
                    };
                    tracing::debug!(method, retry, ?delay, "the server is overloaded; retrying");
                    tokio::time::sleep(delay).await;
                    retry += 1;
                }
                outcome => return outcome,
            }
        }
    }

    async fn call_once(
        &self,
        id: RequestId,
        method: &str,
        typed: Option<&'static str>,
        line: String,
        turn_thread: Option<String>,
        checked: Option<Arc<Session>>,
    ) -> Result<(Answer, RequestId), ClientError> {
        if let Some(closed) = self.closed() {
            return Err(closed);
        }
        let (reply, answer) = oneshot::channel();
        let request =
            connection::Request { id: id.clone(), method: method.to_owned(), typed, line, turn_thread, checked, reply };
        if self.inner.commands.send(Command::Request(request)).is_err() {
            return Err(self.closed().unwrap_or(ClientError::Closed));
        }
        self.inner.status.pending.fetch_add(1, Ordering::Relaxed);
        let mut guard = PendingGuard { client: self, id: id.clone(), why: Some(Abandoned::Dropped) };
        let answer = match self.inner.request_timeout {
            Some(limit) => match tokio::time::timeout(limit, answer).await {
                Ok(answer) => answer,
                Err(_) => {
                    guard.why = Some(Abandoned::TimedOut(limit));
                    return Err(ClientError::Timeout(limit));
                }
            },
            None => answer.await,
        };
        guard.why = None;
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
            Some(reason) => Err(ClientError::Refused(reason.error_message())),
            None => Ok(()),
        }
    }

    #[cfg(not(feature = "experimental"))]
    fn check_experimental(&self, _line: &str) -> Result<(), ClientError> {
        Ok(())
    }

    /// What the connection holds now (pending requests, routed turns, queued events and
    /// lines, ...): for monitoring, and to check that what a program dropped was released.
    /// Fails with why the connection closed once it has.
    ///
    /// Cancel safe: dropping the future loses only the answer.
    pub async fn connection_stats(&self) -> Result<ConnectionStats, ClientError> {
        let (reply, answer) = oneshot::channel();
        if self.inner.commands.send(Command::Stats(reply)).is_err() {
            return Err(self.closed().unwrap_or(ClientError::Closed));
        }
        answer.await.map_err(|_| self.closed().unwrap_or(ClientError::Closed))
    }
}

/// The typed result of `M` out of the response the reader decoded by `M`'s method.
fn typed_result<M: Request>(result: ClientResponse) -> Result<M::Response, ClientError>
where
    M::Response: 'static,
{
    result.into_result::<M>().ok_or_else(|| {
        let message = format!("the result of `{}` was not decoded as its response type", M::METHOD);
        ClientError::Decode(DecodeReport::decoded(Some(M::METHOD), Some(JsonPath::root().key("result")), message))
    })
}

/// An id as it is written on the wire, for logs.
fn id_text(id: &RequestId) -> String {
    serde_json::to_string(id).unwrap_or_default()
}
