//! The W3C trace context of the requests the client sends: the envelope's `trace` member, with
//! which codex joins the spans it makes for a request to the caller's trace.
//!
//! Two ways to give it, neither with a dependency:
//!
//! - [`with_trace`]: every request sent while a future runs carries the context given (a
//!   task-local scope: for one request, or for a piece of work that sends several);
//! - [`ClientBuilder::trace_context`](crate::ClientBuilder::trace_context): a function the
//!   client asks, in the caller's task, for the context of each request sent outside such a
//!   scope. This is where an application that propagates traces reads its current one (for
//!   instance the OpenTelemetry context of the current `tracing` span, with
//!   `tracing-opentelemetry`'s `OpenTelemetrySpanExt::context` and a W3C propagator).
//!
//! ```no_run
//! use codex_app_client::protocol::request;
//! use codex_app_client::trace::{with_trace, TraceContext};
//! use codex_app_client::{Client, CodexCommand};
//!
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! let client = Client::spawn(&CodexCommand::new()).await?;
//! let context = TraceContext::new("00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01");
//! // `{"id":..,"method":"thread/list","params":{},"trace":{"traceparent":"00-0af7..."}}`
//! let threads = with_trace(context, client.request::<request::ThreadList>(Default::default())).await?;
//! # let _ = threads;
//! # Ok(())
//! # }
//! ```
//!
//! A retry of a request (the server was overloaded) carries the same context. The client's own
//! requests (`initialize`, a reconnect's `thread/resume`) carry none.

use std::future::Future;
use std::sync::Arc;

pub use codex_app_protocol::jsonrpc::TraceContext;

tokio::task_local! {
    static SCOPE: TraceContext;
}

/// Runs `future`; every request the client sends while it runs carries `context` as its
/// `trace` (a scope inside it overrides it for its own requests).
pub async fn with_trace<F: Future>(context: TraceContext, future: F) -> F::Output {
    SCOPE.scope(context, future).await
}

/// What [`ClientBuilder::trace_context`](crate::ClientBuilder::trace_context) takes.
pub(crate) type Provider = Arc<dyn Fn() -> Option<TraceContext> + Send + Sync>;

/// The context of a request sent now: the innermost [`with_trace`] scope's, else the
/// provider's.
pub(crate) fn current(provider: Option<&Provider>) -> Option<TraceContext> {
    SCOPE.try_with(Clone::clone).ok().or_else(|| provider.and_then(|provide| provide()))
}
