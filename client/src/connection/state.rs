//! The connection's one loop: what it waits for in each [`State`] ([`Connection::next`]) and
//! what each input does there ([`Connection::on`]); the handshake, the reconnect and the end.

use std::future::Future;
use std::io;
use std::ops::ControlFlow::{self, Break, Continue};
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use codex_app_protocol::jsonrpc::ErrorObject;
use codex_app_protocol::{RawJson, RequestId};
use futures_util::FutureExt;
use tokio::sync::mpsc::{error::SendError, OwnedPermit};
use tokio::sync::oneshot;
use tokio::task::JoinError;
use tokio::time::Instant;

use super::link::{AnyTransport, Link, Out, WriterState};
use super::{Command, Connection, Control, Pending, Request, BATCH, OUTGOING_MAX};
use crate::error::{ClientError, ExitReason, TransportError};
use crate::events::{Event, LateAnswer, ReleaseChange};
use crate::handler::panic_message;
use crate::reconnect::Internal;
use crate::version::Session;
use crate::wire;

/// How long a reconnect's handshake waits for a line (its answers, to `initialize` and
/// `thread/resume`, come within it).
const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);

/// How long the connection's end waits for a spawned server to exit, after the stream ended
/// without a shutdown (or after the first handshake failed).
const EXIT_GRACE: Duration = Duration::from_millis(500);

/// How long the connection's end waits for the tap to write what it has queued.
const TAP_FLUSH: Duration = Duration::from_secs(1);

/// A transport being opened.
type Connecting = Pin<Box<dyn Future<Output = Result<AnyTransport, TransportError>> + Send>>;

/// Where the connection is (see the table in the module's docs).
pub(super) enum State {
    /// `initialize` was sent on `link`; the handles' commands wait.
    Handshaking { link: Link, attempt: Attempt, step: Step, deadline: Option<Instant> },
    /// Serving the handles and the server.
    Ready { link: Link },
    /// The stream dropped: the next attempt to connect again is made at `at`.
    Reconnecting { retry: Retry, at: Instant },
    /// Opening a transport for `retry`.
    Connecting { retry: Retry, connect: Connecting },
    /// [`Client::shutdown`](crate::Client::shutdown) began at `started` (or the first
    /// handshake failed): pending requests failed, new ones are refused, the client's side is
    /// closed once the server requests being answered are answered, and the server is waited
    /// for until `deadline`. No link: the stream had dropped already.
    Closing { link: Option<Link>, started: Instant, deadline: Instant },
    /// Ended.
    Closed,
}

/// Which handshake: the first (whose caller waits for it), or a reconnect's.
pub(super) enum Attempt {
    First(oneshot::Sender<Result<(), ClientError>>),
    Again(Retry),
}

/// Where a handshake is.
pub(super) enum Step {
    /// Waiting for the answer to `initialize` (kept here by the line that brings it).
    Initialize(Option<Result<RawJson, ErrorObject>>),
    /// `initialized` sent; the `thread/resume`s of a reconnect are answered when the
    /// connection's own requests are.
    Resuming,
}

/// An attempt to connect again.
pub(super) struct Retry {
    /// Its number, from 1.
    attempt: u32,
    /// Why the stream dropped: why the connection ends if no attempt succeeds.
    dropped: ExitReason,
}

impl State {
    pub(super) fn link_mut(&mut self) -> Option<&mut Link> {
        match self {
            State::Handshaking { link, .. } | State::Ready { link } | State::Closing { link: Some(link), .. } => {
                Some(link)
            }
            _ => None,
        }
    }

    pub(super) fn is_closing(&self) -> bool {
        matches!(self, State::Closing { .. })
    }

    /// Whether the handles' commands are taken (they wait in their channel otherwise).
    fn takes_commands(&self) -> bool {
        matches!(self, State::Ready { .. } | State::Closing { .. })
    }

    /// When the loop acts without input: the next attempt, a handshake's or the shutdown's
    /// deadline, the end of a failed write's grace period.
    fn deadline(&mut self) -> Option<Instant> {
        let own = match self {
            State::Reconnecting { at, .. } => Some(*at),
            State::Handshaking { deadline, .. } => *deadline,
            State::Closing { deadline, .. } => Some(*deadline),
            State::Ready { .. } | State::Connecting { .. } | State::Closed => None,
        };
        let write_failed = self.link_mut().and_then(|l| l.write_failed.as_ref()).map(|(_, at)| *at);
        match (own, write_failed) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }
}

/// What woke the loop.
enum Input {
    /// The handles' control changed (`false`: every handle is gone).
    Control(bool),
    Command(Option<Command>),
    /// A server request's answer is ready.
    Answered(Option<Result<String, JoinError>>),
    /// Room in the writer's channel.
    Room(Result<OwnedPermit<Out>, SendError<()>>),
    /// The writer ended by itself.
    WriterEnded(Result<Option<io::Error>, JoinError>),
    /// Lines read into the batch (`0`: the end of the stream).
    Read(io::Result<usize>),
    Connected(Result<AnyTransport, TransportError>),
    /// The late grace period of a completed turn ended.
    Grace,
    Deadline,
}

impl Connection {
    /// Serves the connection, then ends everything with why it ended. A panic of the loop is
    /// caught here: every handle ends promptly with [`ExitReason::Panicked`].
    pub(super) async fn run(mut self) {
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

    /// The loop: until the connection ends; returns why.
    async fn serve(&mut self) -> ExitReason {
        loop {
            if let Some(link) = self.state.link_mut() {
                link.flush();
            }
            let flow = match self.next().await {
                // The inputs that may end a link (its end is awaited).
                Input::Read(Ok(0)) => self.stream_ended(ExitReason::EndOfStream).await,
                Input::Read(Err(e)) => self.stream_ended(ExitReason::ReadError(e.to_string())).await,
                Input::Read(Ok(_)) => {
                    self.read_batch();
                    match self.state {
                        State::Handshaking { .. } => self.handshake_progress().await,
                        _ => Continue(()),
                    }
                }
                Input::Deadline => self.deadline_passed().await,
                input => self.on(input),
            };
            if let Break(reason) = flow {
                return reason;
            }
        }
    }

    /// Waits for what the state waits for.
    async fn next(&mut self) -> Input {
        let Connection { state, handles, handlers, router, batch, .. } = self;
        let grace = router.next_deadline();
        let deadline = state.deadline();
        let mut take_commands = handles.commands_open && state.takes_commands();
        let (mut read, mut room, mut writer, mut connect) = (None, None, None, None);
        match state {
            State::Handshaking { link, .. } | State::Ready { link } | State::Closing { link: Some(link), .. } => {
                let Link { receiver, to_writer, writer: task, writer_state, outgoing, .. } = link;
                read = Some(receiver.recv_many(batch, BATCH));
                if !outgoing.is_empty() {
                    // An owned permit: the input must not borrow the connection.
                    room = Some(to_writer.clone().reserve_owned());
                }
                if *writer_state != WriterState::Ended {
                    writer = Some(task);
                }
                take_commands &= outgoing.len() < OUTGOING_MAX;
            }
            State::Connecting { connect: future, .. } => connect = Some(future),
            State::Reconnecting { .. } | State::Closing { link: None, .. } | State::Closed => {}
        }
        let super::Handles { commands, control, control_open, .. } = handles;
        tokio::select! {
            biased;
            changed = control.changed(), if *control_open => Input::Control(changed.is_ok()),
            command = commands.recv(), if take_commands => Input::Command(command),
            done = handlers.join_next(), if !handlers.is_empty() => Input::Answered(done),
            permit = when(room) => Input::Room(permit),
            ended = when(writer) => Input::WriterEnded(ended),
            read = when(read) => Input::Read(read),
            connected = when(connect) => Input::Connected(connected),
            () = sleep_until(grace), if grace.is_some() => Input::Grace,
            () = sleep_until(deadline), if deadline.is_some() => Input::Deadline,
        }
    }

    /// What `input` does in the current state (the reads and deadlines are the loop's).
    fn on(&mut self, input: Input) -> ControlFlow<ExitReason> {
        match input {
            Input::Control(true) => {
                let control = *self.handles.control.borrow_and_update();
                if let Control::Close { started, deadline } = control {
                    if self.state.takes_commands() {
                        // What the handles sent before the shutdown goes first.
                        while let Ok(command) = self.handles.commands.try_recv() {
                            self.command(command);
                        }
                    }
                    return self.close(started, deadline);
                }
            }
            Input::Control(false) => {
                self.handles.control_open = false;
                // Every handle is gone; a shutdown already begun goes on.
                if !self.state.is_closing() {
                    return Break(ExitReason::Dropped);
                }
            }
            Input::Command(Some(command)) => self.command(command),
            Input::Command(None) => self.handles.commands_open = false,
            Input::Answered(done) => {
                if let Some(Ok(line)) = done {
                    self.send(line);
                }
                self.close_writer_when_done();
            }
            Input::Room(permit) => {
                if let Some(link) = self.state.link_mut() {
                    match (permit, link.outgoing.pop_front()) {
                        (Ok(permit), Some(out)) => drop(permit.send(out)),
                        // The writer ended: its failure is reported.
                        _ => link.outgoing.clear(),
                    }
                }
            }
            Input::WriterEnded(Ok(failure)) => {
                if let Some(link) = self.state.link_mut() {
                    link.writer_ended(failure);
                }
            }
            Input::WriterEnded(Err(e)) => {
                if let Some(link) = self.state.link_mut() {
                    link.writer_state = WriterState::Ended;
                }
                return Break(ExitReason::Panicked(format!("the writer task failed: {}", join_error(e))));
            }
            Input::Connected(connected) => return self.connected(connected),
            Input::Grace => self.router.expire(Instant::now()),
            Input::Read(_) | Input::Deadline => {}
        }
        Continue(())
    }

    /// A deadline of the state (or of a failed write) passed.
    async fn deadline_passed(&mut self) -> ControlFlow<ExitReason> {
        let now = Instant::now();
        if let Some(message) = self.state.link_mut().and_then(|l| l.write_failure_due(now)) {
            let reason = ExitReason::WriteError(message.to_owned());
            return self.stream_ended(reason).await;
        }
        match &self.state {
            State::Closing { deadline, .. } if *deadline <= now => Break(ExitReason::ShutdownTimedOut),
            State::Handshaking { deadline: Some(at), .. } if *at <= now => {
                self.handshake_failed(ClientError::Timeout(HANDSHAKE_TIMEOUT)).await
            }
            State::Reconnecting { at, .. } if *at <= now => self.connect(),
            _ => Continue(()),
        }
    }

    /// What the handles ask, taken in `Ready` and `Closing`.
    fn command(&mut self, command: Command) {
        match command {
            Command::Request(request) => self.request(request),
            Command::Send(line) => {
                if self.refusal().is_none() {
                    self.send(line);
                }
            }
            Command::Abandon { id, why } => {
                if let Some(pending) = self.requests.pending.remove(&id) {
                    if let Some(thread) = &pending.turn_thread {
                        self.router.not_started(thread);
                    }
                    self.requests.remember_abandoned(id, LateAnswer { method: pending.method, abandoned: why });
                }
            }
            Command::Subscribe(queue) => self.streams.subscribe(queue),
            Command::ForgetTurn { thread, turn } => self.router.forget(&thread, &turn),
            Command::Stats(reply) => {
                let _ = reply.send(self.stats());
            }
        }
    }

    /// A handle's request: sent, or failed at once.
    fn request(&mut self, request: Request) {
        if let Some(closed) = self.refusal() {
            let _ = request.reply.send(Err(closed));
            return;
        }
        if self.checked_against_another_release(request.checked.as_ref()) {
            tracing::debug!(method = request.method, "checked against the release before the reconnect; not sent");
            let _ = request.reply.send(Err(ClientError::Disconnected));
            return;
        }
        if let Some(thread) = &request.turn_thread {
            if let Some(message) = self.status.detached(thread) {
                let _ = request.reply.send(Err(ClientError::ThreadDetached { thread_id: thread.clone(), message }));
                return;
            }
            self.router.expect(thread);
        }
        let Request { id, method, typed, line, turn_thread, reply, .. } = request;
        self.requests.pending.insert(id, Pending { reply, method, typed, turn_thread });
        self.send(line);
    }

    /// Why a new request is refused: the connection is closing or closed.
    fn refusal(&self) -> Option<ClientError> {
        match self.state {
            State::Closing { .. } | State::Closed => Some(ClientError::Closed),
            _ => self.status.closed(),
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

    /// Queues a line on the link (there is none while reconnecting: a line for the dropped
    /// connection goes with it).
    pub(super) fn send(&mut self, line: String) {
        match self.state.link_mut() {
            Some(link) => link.send(line),
            None => tracing::debug!("no connection to write to; a line for the dropped one is left out"),
        }
    }

    /// Closing: the client's side is closed once no server request is being answered.
    fn close_writer_when_done(&mut self) {
        if let State::Closing { link: Some(link), .. } = &mut self.state {
            if self.handlers.is_empty() {
                link.close_after_queued();
            }
        }
    }

    /// [`Control::Close`]: pending requests fail, new ones are refused; the client's side is
    /// closed once the server requests being answered are answered. Without a link (the
    /// stream had dropped) the connection ends with why it dropped.
    fn close(&mut self, started: Instant, deadline: Instant) -> ControlFlow<ExitReason> {
        match std::mem::replace(&mut self.state, State::Closed) {
            closing @ State::Closing { .. } => {
                self.state = closing;
                Continue(())
            }
            State::Handshaking { link, .. } | State::Ready { link } => {
                self.begin_closing(Some(link), started, deadline);
                Continue(())
            }
            State::Reconnecting { retry, .. } | State::Connecting { retry, .. } => {
                self.begin_closing(None, started, deadline);
                Break(retry.dropped)
            }
            State::Closed => {
                self.begin_closing(None, started, deadline);
                Break(ExitReason::Shutdown)
            }
        }
    }

    /// Enters `Closing`: pending requests fail with [`ClientError::Closed`], and so does what
    /// the handles ask from now on.
    fn begin_closing(&mut self, link: Option<Link>, started: Instant, deadline: Instant) {
        tracing::debug!(timeout = ?deadline.saturating_duration_since(started), "shutting the connection down");
        self.status.set_closed(ClientError::Closed);
        for (_, pending) in self.requests.pending.drain() {
            let _ = pending.reply.send(Err(ClientError::Closed));
        }
        self.state = State::Closing { link, started, deadline };
        self.close_writer_when_done();
    }

    /// Sends `initialize` on `link`: the state of the handshake.
    pub(super) fn handshake(&mut self, mut link: Link, id: RequestId, attempt: Attempt) -> State {
        let params = serde_json::value::to_raw_value(&self.initialize).expect("a Value always encodes");
        link.send(wire::request_line(&id, "initialize", &params));
        self.requests.internal.insert(id, Internal::Initialize);
        let deadline = matches!(attempt, Attempt::Again(_)).then(|| Instant::now() + HANDSHAKE_TIMEOUT);
        State::Handshaking { link, attempt, step: Step::Initialize(None), deadline }
    }

    /// After the lines of a read: a handshake goes on with the answers they brought.
    async fn handshake_progress(&mut self) -> ControlFlow<ExitReason> {
        let State::Handshaking { attempt, step, deadline, .. } = &mut self.state else { return Continue(()) };
        if matches!(attempt, Attempt::Again(_)) {
            *deadline = Some(Instant::now() + HANDSHAKE_TIMEOUT);
        }
        if let Some(answer) = match step {
            Step::Initialize(answer) => answer.take(),
            Step::Resuming => None,
        } {
            if let Err(why) = self.initialized(answer) {
                return self.handshake_failed(why).await;
            }
        }
        match std::mem::replace(&mut self.state, State::Closed) {
            State::Handshaking { link, attempt, step: Step::Resuming, .. } if self.requests.internal.is_empty() => {
                self.ready(link, attempt);
            }
            state => self.state = state,
        }
        Continue(())
    }

    /// The answer to `initialize`: the server's release is read from it, the version policy
    /// run, and the session made the connection's current one (what the handles and the
    /// answers to server requests are checked against), saying so when the release changed;
    /// then `initialized`, and a reconnect's `thread/resume` of every subscribed thread.
    fn initialized(&mut self, answer: Result<RawJson, ErrorObject>) -> Result<(), ClientError> {
        let result = answer.map_err(ClientError::from_server)?.to_value().unwrap_or_default();
        let client_name = self.initialize.pointer("/clientInfo/name").and_then(|n| n.as_str()).unwrap_or_default();
        let session = Session::read(client_name, result)?;
        session.admit(self.negotiation.version_policy)?;
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
                self.streams.publish(Event::ReleaseChanged(Arc::new(change)));
            }
        }
        self.send(wire::initialized_line());
        let again = match &self.state {
            State::Handshaking { attempt: Attempt::Again(retry), .. } => Some(retry.attempt),
            _ => None,
        };
        if let Some(attempt) = again {
            // The threads' events flow again once their resumes are answered; each answer
            // reconciles the thread's turns, each refusal is handled (see `crate::reconnect`).
            for (n, thread) in self.threads.to_resume().into_iter().enumerate() {
                let id = RequestId::String(format!("reconnect-{attempt}-resume-{n}"));
                self.send(super::lines::resume_line(&id, &thread));
                self.requests.internal.insert(id, Internal::Resume(thread));
            }
        }
        if let State::Handshaking { step, .. } = &mut self.state {
            *step = Step::Resuming;
        }
        Ok(())
    }

    /// The handshake is done: the handles' commands are taken.
    fn ready(&mut self, link: Link, attempt: Attempt) {
        self.state = State::Ready { link };
        match attempt {
            Attempt::First(answer) => drop(answer.send(Ok(()))),
            Attempt::Again(retry) => {
                tracing::info!(attempt = retry.attempt, threads = self.threads.len(), "reconnected");
                self.streams.publish(Event::Reconnected(retry.attempt));
                self.deliver();
            }
        }
    }

    /// The handshake did not complete (`why`): the first one's caller is told and the
    /// connection closes; a reconnect's link is ended and the next attempt waits its turn.
    async fn handshake_failed(&mut self, why: ClientError) -> ControlFlow<ExitReason> {
        match std::mem::replace(&mut self.state, State::Closed) {
            State::Handshaking { link, attempt: Attempt::First(answer), .. } => {
                let _ = answer.send(Err(why));
                let now = Instant::now();
                self.begin_closing(Some(link), now, now + EXIT_GRACE);
                Continue(())
            }
            State::Handshaking { link, attempt: Attempt::Again(retry), .. } => {
                tracing::warn!(attempt = retry.attempt, %why, "the handshake after reconnecting failed");
                self.disconnect(link).await;
                self.wait_to_reconnect(retry.attempt, retry.dropped)
            }
            state => {
                self.state = state;
                Continue(())
            }
        }
    }

    /// The stream ended (or a read or write failed) with `reason`: a connection that
    /// reconnects does (a reconnect's handshake tries again); a shutdown ends; anything else
    /// ends with `reason`.
    async fn stream_ended(&mut self, reason: ExitReason) -> ControlFlow<ExitReason> {
        match std::mem::replace(&mut self.state, State::Closed) {
            State::Ready { link } if self.reconnect.is_some() => {
                tracing::warn!(%reason, "the connection dropped; reconnecting");
                self.disconnect(link).await;
                self.wait_to_reconnect(0, reason)
            }
            state @ State::Handshaking { attempt: Attempt::Again(_), .. } => {
                self.state = state;
                let exit = crate::ServerExit { reason, ..Default::default() };
                self.handshake_failed(ClientError::ServerExited(exit)).await
            }
            closing @ State::Closing { .. } => {
                self.state = closing;
                Break(match reason {
                    ExitReason::EndOfStream => ExitReason::Shutdown,
                    reason => reason,
                })
            }
            state => {
                self.state = state;
                Break(reason)
            }
        }
    }

    /// The link dropped: pending requests fail with [`ClientError::Disconnected`], the server
    /// requests being answered are dropped with it, and the link is ended. Turn handles and
    /// notification streams go on.
    async fn disconnect(&mut self, link: Link) {
        for (_, pending) in self.requests.pending.drain() {
            if let Some(thread) = &pending.turn_thread {
                self.router.not_started(thread);
            }
            let _ = pending.reply.send(Err(ClientError::Disconnected));
        }
        self.requests.internal.clear();
        self.handlers.shutdown().await;
        let _ = link.end(Duration::ZERO).await;
    }

    /// The attempt's time came: open a transport.
    fn connect(&mut self) -> ControlFlow<ExitReason> {
        match (std::mem::replace(&mut self.state, State::Closed), &self.reconnect) {
            (State::Reconnecting { retry, .. }, Some(reconnect)) => {
                self.state = State::Connecting { retry, connect: (reconnect.connect)() };
                Continue(())
            }
            (State::Reconnecting { retry, .. }, None) => Break(retry.dropped),
            (state, _) => {
                self.state = state;
                Continue(())
            }
        }
    }

    /// After `made` attempts: the next one at the policy's delay, or the end with why the
    /// stream dropped when the policy gives up.
    fn wait_to_reconnect(&mut self, made: u32, dropped: ExitReason) -> ControlFlow<ExitReason> {
        match self.reconnect.as_ref().and_then(|r| r.policy.delay(made)) {
            Some(delay) => {
                let retry = Retry { attempt: made + 1, dropped };
                self.state = State::Reconnecting { retry, at: Instant::now() + delay };
                Continue(())
            }
            None => Break(dropped),
        }
    }

    /// The attempt's transport opened (the handshake follows), or it did not (the next
    /// attempt waits its turn).
    fn connected(&mut self, connected: Result<AnyTransport, TransportError>) -> ControlFlow<ExitReason> {
        let retry = match std::mem::replace(&mut self.state, State::Closed) {
            State::Connecting { retry, .. } => retry,
            state => {
                self.state = state;
                return Continue(());
            }
        };
        match connected {
            Ok(transport) => {
                let link = transport.open(self.tap.clone());
                let id = RequestId::String(format!("reconnect-{}-initialize", retry.attempt));
                self.state = self.handshake(link, id, Attempt::Again(retry));
                Continue(())
            }
            Err(e) => {
                tracing::warn!(attempt = retry.attempt, error = %e, "reconnecting failed");
                self.wait_to_reconnect(retry.attempt, retry.dropped)
            }
        }
    }

    /// The connection ended: everything fails or ends, the link is ended and the server's
    /// exit read.
    pub(super) async fn finish(mut self, reason: ExitReason) {
        self.deliver();
        // The answers still being worked on cannot be sent any more.
        self.handlers.abort_all();
        let (link, closing) = match std::mem::replace(&mut self.state, State::Closed) {
            State::Closing { link, started, deadline } => (link, Some((started, deadline))),
            State::Handshaking { link, .. } | State::Ready { link } => (Some(link), None),
            State::Reconnecting { .. } | State::Connecting { .. } | State::Closed => (None, None),
        };
        let wait = match (&reason, closing) {
            (ExitReason::Dropped, _) => Duration::ZERO,
            (_, Some((_, deadline))) => deadline.saturating_duration_since(Instant::now()),
            (ExitReason::EndOfStream | ExitReason::ReadError(_) | ExitReason::WriteError(_), None) => EXIT_GRACE,
            (_, None) => Duration::ZERO,
        };
        let waiting_since = Instant::now();
        let mut exit = match link {
            Some(link) => link.end(wait).await,
            None => Default::default(),
        };
        if exit.killed_after.is_some() {
            let since = closing.map_or(waiting_since, |(started, _)| started);
            exit.killed_after = Some(since.elapsed());
        }
        exit.reason = reason;
        tracing::debug!(%exit, "the connection ended");
        let error = if closing.is_some() { ClientError::Closed } else { ClientError::ServerExited(exit.clone()) };
        self.status.set_closed(error.clone());
        for (_, pending) in self.requests.pending.drain() {
            let _ = pending.reply.send(Err(error.clone()));
        }
        self.router.close();
        self.streams.close();
        // What the handles send from now on fails at once; what they sent meanwhile ends here.
        self.handles.commands.close();
        while let Ok(command) = self.handles.commands.try_recv() {
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

/// Waits for `future`, never when `None` (its branch is then never taken).
async fn when<F: Future>(future: Option<F>) -> F::Output {
    match future {
        Some(future) => future.await,
        None => std::future::pending().await,
    }
}

/// Waits until `deadline` (never when `None`; the branch is disabled then).
async fn sleep_until(deadline: Option<Instant>) {
    match deadline {
        Some(at) => tokio::time::sleep_until(at).await,
        None => std::future::pending().await,
    }
}

/// Why a task ended other than by returning.
fn join_error(error: JoinError) -> String {
    match error.try_into_panic() {
        Ok(panic) => format!("it panicked: {}", panic_message(&*panic)),
        Err(error) => error.to_string(),
    }
}
