//! A loopback mock of the OpenAI Responses API, enough for `codex app-server` to run turns.
//!
//! The mock binds `127.0.0.1:0`, serves `POST /v1/responses` from a queue of scripted
//! bodies (one body per model request, in order) and records every request it receives.
//! Bodies are `text/event-stream`: each event is `event: <type>\ndata: <json>\n\n`, where
//! `<type>` is the event's own `"type"` member.
//!
//! Streaming goes through `tiny_http::Request::into_writer`: the mock writes the status
//! line, headers and the chunked body itself and flushes after every event. (tiny_http's
//! `Response` would buffer a chunked body in 8 KiB chunks, which hides a "slow" body.)
//!
//! Every wait is bounded; [`MockServer::shutdown`] (also run on drop) releases slow bodies
//! and joins all threads.

use std::collections::VecDeque;
use std::io::Write;
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use anyhow::{anyhow, Context as _, Result};
use serde_json::{json, Value};

/// Interval of SSE comment keep-alives while a slow body holds; a failed write means the
/// client went away.
const KEEPALIVE_EVERY: Duration = Duration::from_millis(100);

/// One scripted answer to one model request.
#[derive(Debug, Clone)]
pub enum MockBody {
    /// Stream these events (each a Responses API event object with a `type`), then end.
    Events(Vec<Value>),
    /// Stream `head`, then hold the stream open until [`MockServer::release`], the client
    /// dropping the connection, or `max_hold`; then stream `tail` (if still connected).
    Slow { head: Vec<Value>, tail: Vec<Value>, max_hold: Duration },
}

/// What happened to a request's scripted body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// Still being written (a slow body that holds).
    Streaming,
    /// The whole body was written.
    Completed,
    /// A slow body was released and finished.
    Released,
    /// The client closed the connection while the body was being written or held.
    ClientGone,
    /// A slow body hit its `max_hold`.
    TimedOut,
    /// An HTTP error status was served (404/500 for unexpected requests).
    Status(u16),
}

/// A request the mock received.
#[derive(Debug, Clone)]
pub struct RecordedRequest {
    pub method: String,
    pub url: String,
    pub headers: Vec<(String, String)>,
    /// The body parsed as JSON, or a JSON string holding the raw text if it is not JSON.
    pub body: Value,
    pub outcome: Outcome,
}

impl RecordedRequest {
    /// Names of the tools offered to the model: `body.tools[].name` (the `type` for
    /// built-in tools without a name), a namespace as `name{child, ...}`.
    pub fn tool_names(&self) -> Vec<String> {
        fn name(tool: &Value) -> String {
            let own = tool["name"].as_str().or(tool["type"].as_str()).unwrap_or("?").to_owned();
            match tool["tools"].as_array() {
                Some(children) => {
                    let children: Vec<String> = children.iter().map(name).collect();
                    format!("{own}{{{}}}", children.join(", "))
                }
                None => own,
            }
        }
        self.body["tools"].as_array().map(|tools| tools.iter().map(name).collect()).unwrap_or_default()
    }

    /// The `input` items of a Responses request.
    pub fn input(&self) -> &[Value] {
        self.body["input"].as_array().map(Vec::as_slice).unwrap_or(&[])
    }

    /// The `output` of the `function_call_output` item for `call_id`, if the request has one.
    pub fn function_output(&self, call_id: &str) -> Option<&Value> {
        self.input()
            .iter()
            .find(|i| i["type"] == "function_call_output" && i["call_id"] == call_id)
            .map(|i| &i["output"])
    }
}

#[derive(Default)]
struct State {
    queue: VecDeque<MockBody>,
    requests: Vec<RecordedRequest>,
    released: bool,
    stopping: bool,
}

type Shared = Arc<(Mutex<State>, Condvar)>;

fn lock(shared: &Shared) -> MutexGuard<'_, State> {
    // A panicking handler thread must not take the whole recorder down with it.
    shared.0.lock().unwrap_or_else(|e| e.into_inner())
}

/// The running mock. Dropping it shuts it down.
pub struct MockServer {
    port: u16,
    shared: Shared,
    server: Arc<tiny_http::Server>,
    acceptor: Option<JoinHandle<Vec<JoinHandle<()>>>>,
}

impl MockServer {
    /// Binds `127.0.0.1:0` and starts serving.
    pub fn start() -> Result<MockServer> {
        let server =
            tiny_http::Server::http("127.0.0.1:0").map_err(|e| anyhow!("mock: cannot bind 127.0.0.1:0: {e}"))?;
        let port = server.server_addr().to_ip().context("mock: not bound to an IP address")?.port();
        let server = Arc::new(server);
        let shared: Shared = Arc::default();
        let acceptor = {
            let (server, shared) = (server.clone(), shared.clone());
            std::thread::Builder::new().name("mock-accept".into()).spawn(move || accept_loop(&server, &shared))?
        };
        Ok(MockServer { port, shared, server, acceptor: Some(acceptor) })
    }

    #[cfg(test)]
    pub fn port(&self) -> u16 {
        self.port
    }

    /// `http://127.0.0.1:PORT/v1`, the provider's `base_url`.
    pub fn base_url(&self) -> String {
        format!("http://127.0.0.1:{}/v1", self.port)
    }

    /// Queues the body for the next model request.
    pub fn push(&self, body: MockBody) {
        lock(&self.shared).queue.push_back(body);
    }

    /// Queues a plain streamed body.
    pub fn push_events(&self, events: Vec<Value>) {
        self.push(MockBody::Events(events));
    }

    /// Bodies queued but not yet served.
    pub fn pending(&self) -> usize {
        lock(&self.shared).queue.len()
    }

    /// Lets held slow bodies finish (sends their tail); slow bodies served later are not held
    /// until [`hold`](Self::hold).
    pub fn release(&self) {
        lock(&self.shared).released = true;
        self.shared.1.notify_all();
    }

    /// Holds slow bodies again after a [`release`](Self::release), from the next one served.
    pub fn hold(&self) {
        lock(&self.shared).released = false;
    }

    /// Forgets the requests received so far (a long test that measures its memory keeps
    /// only what it needs; each request holds the whole conversation).
    pub fn forget_requests(&self) {
        lock(&self.shared).requests = Vec::new();
    }

    /// A copy of every request received so far, in arrival order.
    pub fn requests(&self) -> Vec<RecordedRequest> {
        lock(&self.shared).requests.clone()
    }

    /// Waits until at least `n` requests were received; returns them all.
    pub fn wait_for_requests(&self, n: usize, timeout: Duration) -> Result<Vec<RecordedRequest>> {
        let deadline = Instant::now() + timeout;
        let mut state = lock(&self.shared);
        while state.requests.len() < n {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Err(anyhow!("mock: waited {timeout:?} for {n} model requests, got {}", state.requests.len()));
            }
            state = self.shared.1.wait_timeout(state, left).unwrap_or_else(|e| e.into_inner()).0;
        }
        Ok(state.requests.clone())
    }

    /// Waits until request number `index` (0-based) is no longer [`Outcome::Streaming`].
    pub fn wait_for_outcome(&self, index: usize, timeout: Duration) -> Result<Outcome> {
        let deadline = Instant::now() + timeout;
        let mut state = lock(&self.shared);
        loop {
            if let Some(r) = state.requests.get(index) {
                if r.outcome != Outcome::Streaming {
                    return Ok(r.outcome.clone());
                }
            }
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Err(anyhow!("mock: request {index} still streaming after {timeout:?}"));
            }
            state = self.shared.1.wait_timeout(state, left).unwrap_or_else(|e| e.into_inner()).0;
        }
    }

    /// Stops accepting, releases slow bodies and joins every thread (bounded by the
    /// slow bodies' keep-alive interval). Idempotent.
    pub fn shutdown(&mut self) {
        lock(&self.shared).stopping = true;
        self.shared.1.notify_all();
        self.server.unblock();
        if let Some(acceptor) = self.acceptor.take() {
            if let Ok(handlers) = acceptor.join() {
                for h in handlers {
                    let _ = h.join();
                }
            }
        }
    }
}

impl Drop for MockServer {
    fn drop(&mut self) {
        self.shutdown();
    }
}

fn accept_loop(server: &tiny_http::Server, shared: &Shared) -> Vec<JoinHandle<()>> {
    let mut handlers = Vec::new();
    while !lock(shared).stopping {
        match server.recv_timeout(Duration::from_millis(100)) {
            Ok(Some(request)) => {
                let shared = shared.clone();
                match std::thread::Builder::new().name("mock-request".into()).spawn(move || handle(request, &shared)) {
                    Ok(h) => handlers.push(h),
                    Err(e) => eprintln!("mock: cannot spawn a handler thread: {e}"),
                }
            }
            Ok(None) => {}
            Err(e) => {
                eprintln!("mock: accept failed: {e}");
                break;
            }
        }
    }
    handlers
}

fn handle(mut request: tiny_http::Request, shared: &Shared) {
    let mut raw = Vec::new();
    let _ = request.as_reader().read_to_end(&mut raw);
    let text = String::from_utf8_lossy(&raw).into_owned();
    let body = serde_json::from_str(&text).unwrap_or(Value::String(text));
    let method = request.method().to_string();
    let url = request.url().to_owned();
    let headers =
        request.headers().iter().map(|h| (h.field.as_str().as_str().to_owned(), h.value.as_str().to_owned())).collect();

    let is_responses = method == "POST" && url.split('?').next().unwrap_or("").ends_with("/responses");
    let (index, scripted) = {
        let mut state = lock(shared);
        let scripted = if is_responses { state.queue.pop_front() } else { None };
        let outcome = match (&scripted, is_responses) {
            (_, false) => Outcome::Status(404),
            (None, true) => Outcome::Status(500),
            (Some(_), true) => Outcome::Streaming,
        };
        state.requests.push(RecordedRequest { method, url, headers, body, outcome });
        shared.1.notify_all();
        (state.requests.len() - 1, scripted)
    };

    let outcome = match scripted {
        None if !is_responses => respond_json(request, 404, json!({"error": {"message": "mock: no such endpoint"}})),
        None => {
            respond_json(request, 500, json!({"error": {"message": "mock: no scripted body left for this request"}}))
        }
        Some(MockBody::Events(events)) => stream(request, &events, &[], None, shared),
        Some(MockBody::Slow { head, tail, max_hold }) => stream(request, &head, &tail, Some(max_hold), shared),
    };
    lock(shared).requests[index].outcome = outcome;
    shared.1.notify_all();
}

fn respond_json(request: tiny_http::Request, code: u16, body: Value) -> Outcome {
    let header = tiny_http::Header::from_bytes(&b"Content-Type"[..], &b"application/json"[..]).expect("static header");
    let response = tiny_http::Response::from_string(body.to_string()).with_status_code(code).with_header(header);
    let _ = request.respond(response);
    Outcome::Status(code)
}

/// One SSE event, `event: <type>\ndata: <json>\n\n`.
pub fn sse_frame(event: &Value) -> String {
    let kind = event["type"].as_str().unwrap_or("message");
    format!("event: {kind}\ndata: {event}\n\n")
}

/// Writes one HTTP chunk and flushes it.
fn write_chunk(w: &mut dyn Write, data: &str) -> std::io::Result<()> {
    write!(w, "{:x}\r\n{data}\r\n", data.len())?;
    w.flush()
}

fn stream(
    request: tiny_http::Request,
    head: &[Value],
    tail: &[Value],
    hold: Option<Duration>,
    shared: &Shared,
) -> Outcome {
    let mut w = request.into_writer();
    let result = (|| -> std::io::Result<Outcome> {
        w.write_all(
            b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-cache\r\n\
              Transfer-Encoding: chunked\r\n\r\n",
        )?;
        for event in head {
            write_chunk(&mut *w, &sse_frame(event))?;
        }
        let mut outcome = Outcome::Completed;
        if let Some(max_hold) = hold {
            let deadline = Instant::now() + max_hold;
            outcome = loop {
                {
                    let state = lock(shared);
                    if state.released || state.stopping {
                        break Outcome::Released;
                    }
                    let (state, _) = shared.1.wait_timeout(state, KEEPALIVE_EVERY).unwrap_or_else(|e| e.into_inner());
                    if state.released || state.stopping {
                        break Outcome::Released;
                    }
                }
                if Instant::now() >= deadline {
                    break Outcome::TimedOut;
                }
                // An SSE comment: ignored by the client, but fails once it hung up.
                write_chunk(&mut *w, ": keep-alive\n\n")?;
            };
        }
        for event in tail {
            write_chunk(&mut *w, &sse_frame(event))?;
        }
        w.write_all(b"0\r\n\r\n")?;
        w.flush()?;
        Ok(outcome)
    })();
    result.unwrap_or(Outcome::ClientGone)
}

/// Builders for Responses API stream events, as `codex` 0.169.0 accepts them.
pub mod ev {
    use serde_json::{json, Value};

    pub fn created(response_id: &str) -> Value {
        json!({"type": "response.created", "response": {"id": response_id}})
    }

    pub fn completed(response_id: &str) -> Value {
        json!({"type": "response.completed", "response": {"id": response_id, "usage": {
            "input_tokens": 10, "input_tokens_details": null,
            "output_tokens": 5, "output_tokens_details": null, "total_tokens": 15}}})
    }

    pub fn failed(response_id: &str, code: &str, message: &str) -> Value {
        json!({"type": "response.failed", "response": {"id": response_id,
            "error": {"code": code, "message": message}}})
    }

    pub fn message_added(item_id: &str) -> Value {
        json!({"type": "response.output_item.added", "item": {
            "type": "message", "role": "assistant", "id": item_id, "content": []}})
    }

    pub fn text_delta(item_id: &str, delta: &str) -> Value {
        json!({"type": "response.output_text.delta", "delta": delta, "item_id": item_id})
    }

    pub fn message_done(item_id: &str, text: &str) -> Value {
        json!({"type": "response.output_item.done", "item": {
            "type": "message", "role": "assistant", "id": item_id,
            "content": [{"type": "output_text", "text": text}]}})
    }

    pub fn reasoning_added(item_id: &str) -> Value {
        json!({"type": "response.output_item.added", "item": {
            "type": "reasoning", "id": item_id, "summary": []}})
    }

    pub fn reasoning_summary_delta(item_id: &str, summary_index: u32, delta: &str) -> Value {
        json!({"type": "response.reasoning_summary_text.delta", "delta": delta,
            "item_id": item_id, "summary_index": summary_index})
    }

    pub fn reasoning_summary_part_added(item_id: &str, summary_index: u32) -> Value {
        json!({"type": "response.reasoning_summary_part.added", "item_id": item_id,
            "summary_index": summary_index, "part": {"type": "summary_text", "text": ""}})
    }

    pub fn reasoning_done(item_id: &str, summary: &[&str]) -> Value {
        let parts: Vec<Value> = summary.iter().map(|text| json!({"type": "summary_text", "text": text})).collect();
        json!({"type": "response.output_item.done", "item": {
            "type": "reasoning", "id": item_id, "summary": parts}})
    }

    /// A complete function call item; `arguments` is serialized into the string the API sends.
    pub fn function_call(call_id: &str, name: &str, arguments: &Value) -> Value {
        json!({"type": "response.output_item.done", "item": {
            "type": "function_call", "call_id": call_id, "name": name,
            "arguments": arguments.to_string()}})
    }

    /// A whole body: one assistant message streamed as `deltas`.
    pub fn assistant_message(response_id: &str, item_id: &str, deltas: &[&str]) -> Vec<Value> {
        let mut events = vec![created(response_id), message_added(item_id)];
        events.extend(deltas.iter().map(|d| text_delta(item_id, d)));
        events.push(message_done(item_id, &deltas.concat()));
        events.push(completed(response_id));
        events
    }

    /// A whole body: one function call and nothing else.
    pub fn tool_call(response_id: &str, call_id: &str, name: &str, arguments: &Value) -> Vec<Value> {
        vec![created(response_id), function_call(call_id, name, arguments), completed(response_id)]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Read as _;
    use std::net::TcpStream;

    const WAIT: Duration = Duration::from_secs(5);

    /// Sends a POST and returns the open stream.
    fn post(mock: &MockServer, body: &str) -> TcpStream {
        let mut stream = TcpStream::connect(("127.0.0.1", mock.port())).unwrap();
        stream.set_read_timeout(Some(WAIT)).unwrap();
        write!(
            stream,
            "POST /v1/responses HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n\
             Content-Length: {}\r\n\r\n{body}",
            body.len()
        )
        .unwrap();
        stream
    }

    /// Reads until `needle` was seen (or the read times out / the stream ends).
    fn read_until(stream: &mut TcpStream, needle: &str) -> String {
        let mut seen = Vec::new();
        let mut buf = [0u8; 4096];
        while !String::from_utf8_lossy(&seen).contains(needle) {
            match stream.read(&mut buf) {
                Ok(0) | Err(_) => break,
                Ok(n) => seen.extend_from_slice(&buf[..n]),
            }
        }
        String::from_utf8_lossy(&seen).into_owned()
    }

    #[test]
    fn serves_bodies_in_order_and_records_requests() {
        let mock = MockServer::start().unwrap();
        mock.push_events(ev::assistant_message("r1", "m1", &["Hel", "lo"]));
        let mut stream = post(&mock, r#"{"input":[]}"#);
        let text = read_until(&mut stream, "0\r\n\r\n");
        assert!(text.starts_with("HTTP/1.1 200 OK\r\n"), "{text}");
        assert!(text.contains("Content-Type: text/event-stream"), "{text}");
        // serde_json (without `preserve_order`) writes members sorted; codex does not mind.
        assert!(text.contains("event: response.output_text.delta\ndata: {\"delta\":\"Hel\",\"item_id\":\"m1\",\"type\":\"response.output_text.delta\"}\n\n"), "{text}");
        assert!(text.contains("event: response.completed\n"));
        assert_eq!(mock.wait_for_outcome(0, WAIT).unwrap(), Outcome::Completed);

        // Queue empty: 500, recorded as unexpected.
        let mut stream = post(&mock, "not json");
        assert!(read_until(&mut stream, "\r\n").starts_with("HTTP/1.1 500"));
        let requests = mock.wait_for_requests(2, WAIT).unwrap();
        assert_eq!(requests[0].body, json!({"input": []}));
        assert_eq!(requests[1].body, json!("not json"));
        assert_eq!(mock.wait_for_outcome(1, WAIT).unwrap(), Outcome::Status(500));
    }

    #[test]
    fn slow_body_detects_client_going_away() {
        let mock = MockServer::start().unwrap();
        mock.push(MockBody::Slow {
            head: vec![ev::created("r1"), ev::text_delta("m1", "partial")],
            tail: vec![ev::completed("r1")],
            max_hold: WAIT,
        });
        let mut stream = post(&mock, "{}");
        read_until(&mut stream, "partial");
        drop(stream);
        assert_eq!(mock.wait_for_outcome(0, WAIT).unwrap(), Outcome::ClientGone);
    }

    #[test]
    fn slow_body_finishes_when_released() {
        let mut mock = MockServer::start().unwrap();
        mock.push(MockBody::Slow {
            head: vec![ev::text_delta("m1", "partial")],
            tail: vec![ev::completed("r1")],
            max_hold: WAIT,
        });
        let mut stream = post(&mock, "{}");
        let head = read_until(&mut stream, "partial");
        assert!(!head.contains("response.completed"));
        assert!(mock.wait_for_outcome(0, Duration::from_millis(300)).is_err(), "still holding");
        mock.release();
        assert!(read_until(&mut stream, "0\r\n\r\n").contains("event: response.completed"));
        assert_eq!(mock.wait_for_outcome(0, WAIT).unwrap(), Outcome::Released);
        let started = Instant::now();
        mock.shutdown();
        // A bound on the wall clock that only guards against a shutdown that hangs (a held
        // response never released), not a speed claim.
        assert!(started.elapsed() < Duration::from_secs(2));
    }
}
