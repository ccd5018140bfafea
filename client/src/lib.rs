//! A typed async client for `codex app-server` (tokio), on top of [`codex_app_protocol`].
//!
//! ```no_run
//! use codex_app_client::{Client, CodexCommand, Event};
//! use codex_app_client::protocol::*;
//!
//! # async fn run() -> Result<(), codex_app_client::ClientError> {
//! // Spawn `codex app-server` ($CODEX_BIN, else `codex` on PATH); initialize.
//! let client = Client::spawn(&CodexCommand::new()).await?;
//! let thread = client.request::<request::ThreadStart>(ThreadStartParams::default()).await?.thread;
//! let input = vec![UserInput::Text(TextUserInput::new("Say hello".into()))];
//! let mut turn = client.start_turn(TurnStartParams::new(input, thread.id)).await?;
//! while let Some(event) = turn.next().await {
//!     if let Event::Notification(n) = event {
//!         if let ServerNotification::ItemAgentMessageDelta { params, .. } = &*n {
//!             print!("{}", params.delta);
//!         }
//!     }
//! }
//! client.shutdown(std::time::Duration::from_secs(5)).await;
//! # Ok(()) }
//! ```
//!
//! - **Handles**: [`ThreadHandle`] ([`Client::thread_start`], `thread_resume`, `thread_fork`;
//!   [`ThreadHandle::run`] to the final answer, [`ThreadHandle::turn`], `read`, `set_name`,
//!   `compact`), [`LoginHandle`] (API key, ChatGPT browser and device-code logins, `account`,
//!   `logout`, `models`); see [`thread`] and [`login`].
//! - **What a turn waits for**: codex's reports while it retries ([`Retrying`], from
//!   [`Event::retrying`]; [`TurnHandle::waiting_for`]), and a deadline for a run
//!   ([`RunOptions`], [`ThreadHandle::run_with_options`]) whose error,
//!   [`ClientError::TurnDeadline`], names what the turn was waiting for.
//! - **Reconnect** (WebSocket, Unix socket; opt-in, [`ClientBuilder::reconnect`]): the client
//!   connects again, resumes its threads and its turn handles go on.
//! - **Transports** ([`transport`]): stdio ([`CodexCommand`] spawns the server: the binary it
//!   is given, else `$CODEX_BIN`, else `codex` on `PATH`, never one found in the current
//!   directory or its parents; the program started is logged), WebSocket
//!   (`ws://` with a bearer token, `wss://` with the feature `tls`) and `unix://PATH`, a
//!   recorded session played back as the server (feature `replay`), or your own
//!   ([`Transport`]).
//! - **Handshake**: `initialize` + `initialized` on connect, by a deadline
//!   ([`ClientBuilder::handshake_timeout`], 60 s by default); the `InitializeResponse` is
//!   kept ([`Client::initialize_response`]).
//! - **The server's release** ([`version`]): read from `userAgent` at every handshake and
//!   compared with the supported range, up to [`protocol::CODEX_VERSION`] ([`VersionCheck`];
//!   [`VersionPolicy`] for a release outside it); what the client sends is checked against it:
//!   a method the release lacks is refused, params it lacks are refused, stripped or sent
//!   ([`UnknownItemPolicy`], [`ClientBuilder::unknown_to_server`]).
//! - **Requests** through the marker types: [`Client::request`]`::<request::ThreadStart>`;
//!   [`Client::request_raw`] for methods newer than the crate. With the `experimental`
//!   feature, a request that uses the experimental API while the session did not opt in is
//!   refused before it is sent, worded as the server would.
//! - **Notifications**: [`Client::notifications`] (every event: notifications, lines that did
//!   not decode, responses nobody waits for, lag) and [`TurnHandle`] (one turn's), bounded
//!   with a documented lag policy ([`events`]); [`ClientBuilder::notifications`] sees the
//!   connection from its first line, handshake included.
//! - **One owner**: one task owns the connection's state (pending requests, turn routing,
//!   the tasks answering server requests); the handles talk to it through channels. Every
//!   server line is a response to a pending request or an event, and every line dropped or
//!   undecodable is also a `tracing` event.
//! - **Server requests**: [`ServerRequestHandler`]; the defaults approve nothing.
//! - **Typed structured output and dynamic tools** (module `structured`, the `schemars`
//!   feature; tools also need `experimental`).
//! - **Transcript tap** ([`Tap`]): every line in the project's transcript format, for
//!   `cargo xtask drift`.
//! - **Failure**: when the server dies, pending requests fail with
//!   [`ClientError::ServerExited`] (why, as an [`ExitReason`], exit status and stderr tail),
//!   the streams end and every [`TurnHandle`] ends with an error; [`Client::shutdown`]
//!   closes the connection and waits for (then kills) a spawned server. "Server overloaded"
//!   answers are retried with backoff ([`RetryPolicy`]); a draining server's refusal is
//!   [`ClientError::ServerShuttingDown`].
//! - **Logging**: through `tracing` (spans per request and per turn); the server's stderr
//!   lines are `tracing` events of the target `codex_app_client::server_stderr` as they
//!   arrive. The library never prints.
#![cfg_attr(docsrs, feature(doc_cfg))]
#![deny(missing_docs)]

mod client;
mod connection;
pub mod error;
pub mod events;
pub mod handler;
pub mod login;
/// The policy for items a server's release lacks, by its former name and path; what this module
/// held is in [`version`].
pub mod negotiate {
    /// The former name of [`UnknownItemPolicy`](crate::UnknownItemPolicy), which it shared with
    /// the items themselves ([`availability::Unknown`](crate::protocol::availability::Unknown)).
    #[deprecated(note = "renamed: use `codex_app_client::UnknownItemPolicy`")]
    pub type Unknown = crate::version::UnknownItemPolicy;
}
mod reconnect;
pub mod retry;
mod routing;
#[cfg(feature = "schemars")]
pub mod structured;
pub mod tap;
pub mod thread;
pub mod trace;
pub mod transport;
mod turn;
pub mod version;
mod wire;

pub use codex_app_protocol as protocol;

pub use client::{Client, ClientBuilder, DEFAULT_HANDSHAKE_TIMEOUT};
pub use connection::ConnectionStats;
pub use error::{
    ClientError, DecodeReport, ExitReason, ServerExit, TransportError, TransportErrorKind, TurnDeadline, TurnFailure,
};
pub use events::{Abandoned, Event, LateAnswer, Notifications, Orphan, ReleaseChange, Retrying};
pub use handler::{DefaultHandler, HandlerResult, ServerRequestHandler};
pub use login::LoginHandle;
pub use retry::RetryPolicy;
pub use tap::Tap;
pub use thread::{AtDeadline, Input, RunOptions, RunResult, ThreadHandle};
pub use transport::stdio::CodexCommand;
pub use transport::Transport;
pub use turn::TurnHandle;
pub use version::{UnknownItemPolicy, VersionCheck, VersionPolicy};
