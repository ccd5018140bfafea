//! The client's benchmarks (`codex-app-client` over its in-memory transport), run by
//! `cargo xtask bench` after the decode benchmarks:
//!
//! - `client_vs_decode`: the recorded notifications and server requests, repeated to
//!   `--lines` lines, fed through an in-memory transport into a client and delivered to a
//!   consumer that reads [`Client::notifications`] (server requests are answered by the
//!   default handler), against bare `TypedServerMessage::from_line_with` of the same lines.
//!   The server's lines are made (one `String` each) before the clock starts, as the bare
//!   decode's input is. Both run on one thread (a current-thread runtime), so the ratio compares the work done,
//!   not parallelism. Responses are left out: without a request of its own the client only
//!   reads a response's envelope, which would flatter it. The ratio is bare time / client
//!   time (1.0: no overhead; the target is at least 0.7, docs/performance.md).
//!   Three lines for reference (not ratios): `transport alone`, the same lines through the
//!   in-memory transport to a task that drops them; `transport + decode`, which decodes
//!   each as the bare benchmark does; and `decode, held per batch`, the bare decode again but
//!   with each message kept (in an `Arc`, as the client delivers it) until a batch of
//!   [`HELD_BATCH`] is dropped. A client hands messages to a consumer, so it cannot free each
//!   one before decoding the next as the bare benchmark does; with the system allocator
//!   (glibc) that alone costs a sizeable share of the budget (memory freed out of the order
//!   it was allocated in leaves malloc's per-thread caches), and the third line measures it in
//!   the same run (`cargo xtask bench --mimalloc` runs everything with mimalloc as the global
//!   allocator, for comparison). What the client costs beyond these is its own.
//! - Request round trip: `request::<ThreadList>` answered by a task playing the server, one
//!   at a time; the median in microseconds.
//! - Peak memory with a consumer that never reads: in a fresh process (this binary again, so
//!   no memory freed by the other benchmarks is reused), the rise of the peak resident size
//!   while 100,000 notifications go through a client whose one notification stream is never
//!   read, after which a request still gets its answer; with the default buffer (1,024) and,
//!   for comparison, a buffer that holds every notification.

use std::hint::black_box;
use std::time::{Duration, Instant};

use anyhow::{bail, Context};
use codex_app_client::protocol::jsonrpc::Parts;
use codex_app_client::protocol::{request, Message, ServerMessage, ThreadListParams, TypedServerMessage};
use codex_app_client::transport::memory::{MemoryTransport, ServerEnd};
use codex_app_client::transport::{LineReceiver, Transport};
use codex_app_client::{Client, Event};

/// The batch of [`held_decode`]: the client's read batch (`BATCH` in `client/src/client.rs`).
const HELD_BATCH: usize = 64;

/// The bare decode with each message kept until [`HELD_BATCH`] of them are dropped together,
/// as a consumer that reads a batch at a time frees them.
fn held_decode(input: &[String]) -> Duration {
    let mut held = Vec::with_capacity(HELD_BATCH);
    let started = Instant::now();
    for line in input {
        held.push(std::sync::Arc::new(black_box(TypedServerMessage::from_line_with(line, |_| None::<&str>))));
        if held.len() == HELD_BATCH {
            held.clear();
        }
    }
    drop(held);
    started.elapsed()
}

/// The distinct recorded lines that are notifications or server requests.
pub fn client_lines<'a>(lines: impl Iterator<Item = &'a str>) -> Vec<&'a str> {
    lines
        .filter(|line| matches!(ServerMessage::from_line(line), Ok(Message::Notification(_) | Message::Request(_))))
        .collect()
}

fn runtime() -> anyhow::Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_current_thread().enable_all().build().context("tokio runtime")
}

/// Runs the client benchmarks and prints their results and `key=value` lines.
pub fn run(distinct: &[&str], lines: usize, rounds: usize) -> anyhow::Result<()> {
    if distinct.is_empty() {
        bail!("no notifications or server requests in the fixtures");
    }
    let input: Vec<String> = (0..lines).map(|n| distinct[n % distinct.len()].to_owned()).collect();
    let notifications =
        input.iter().filter(|l| matches!(ServerMessage::from_line(l), Ok(Message::Notification(_)))).count();
    println!(
        "\nclient: {lines} lines ({notifications} notifications, {} server requests) from {} distinct recorded lines",
        lines - notifications,
        distinct.len()
    );
    let rt = runtime()?;
    let mut bare = Vec::new();
    let mut client = Vec::new();
    let (mut carried, mut carried_decoded, mut held) = (Vec::new(), Vec::new(), Vec::new());
    let mut lagged = 0;
    for round in 0..=rounds {
        let started = Instant::now();
        let ok = input
            .iter()
            .filter(|line| black_box(TypedServerMessage::from_line_with(line, |_| None::<&str>)).is_ok())
            .count();
        let bare_time = started.elapsed();
        if ok != lines {
            bail!("{} of {lines} lines did not decode", lines - ok);
        }
        let (client_time, lost) = rt.block_on(through_client(&input, notifications))?;
        let carried_time = rt.block_on(through_transport(&input, false))?;
        let carried_decoded_time = rt.block_on(through_transport(&input, true))?;
        let held_time = held_decode(&input);
        if round > 0 {
            held.push(held_time);
            carried.push(carried_time);
            carried_decoded.push(carried_decoded_time);
            bare.push(bare_time);
            client.push(client_time);
            lagged += lost;
        }
    }
    let bare = median(bare);
    let client = median(client);
    println!("{:<30} {:>10.1} ms", "decode typed (bare)", bare.as_secs_f64() * 1e3);
    println!(
        "{:<30} {:>10.1} ms  ({lagged} notifications lagged over {rounds} rounds)",
        "client (in-memory, delivered)",
        client.as_secs_f64() * 1e3
    );
    println!(
        "{:<30} {:>10.1} ms  (the floor under the client: lines through the channel, dropped)",
        "transport alone",
        median(carried).as_secs_f64() * 1e3
    );
    println!(
        "{:<30} {:>10.1} ms  (each line received is decoded as bare, then dropped)",
        "transport + decode",
        median(carried_decoded).as_secs_f64() * 1e3
    );
    let held = median(held);
    println!(
        "{:<30} {:>10.1} ms  (no transport; each message kept until a batch of {HELD_BATCH} is dropped, as a consumer frees them)",
        "decode, held per batch",
        held.as_secs_f64() * 1e3
    );

    let round_trips = rt.block_on(round_trips(10_000))?;
    let rt_median = median(round_trips);
    println!(
        "{:<30} {:>10.1} µs median over 10,000 sequential requests",
        "request round trip",
        rt_median.as_secs_f64() * 1e6
    );

    // The check before sending against the server's release: skipped for a server of the
    // crate's own release, a walk of the params for an older one (the most it costs).
    let newest = median(rt.block_on(round_trips_with_release(5_000, codex_app_client::protocol::CODEX_VERSION))?);
    let older = median(rt.block_on(round_trips_with_release(5_000, codex_app_client::protocol::availability::FLOOR))?);
    let check = check_cost(100_000)?;
    println!(
        "{:<30} {:>10.3} µs per request (the params of `thread/list` against codex {})",
        "check before sending",
        check.as_secs_f64() * 1e6,
        codex_app_client::protocol::availability::FLOOR,
    );
    println!(
        "{:<30} {:>10.1} µs median (server at {}), {:.1} µs (server at the floor, {}: params checked)",
        "request round trip, handshake",
        newest.as_secs_f64() * 1e6,
        codex_app_client::protocol::CODEX_VERSION,
        older.as_secs_f64() * 1e6,
        codex_app_client::protocol::availability::FLOOR,
    );

    let memory = memory_in_child(1024)?;
    let unbounded = memory_in_child(100_000)?;
    match (memory, unbounded) {
        (Some(peak), Some(all)) => println!(
            "{:<30} {:>10.1} MB peak rise, 100,000 notifications never read (buffer 1,024; a buffer holding all: {all:.1} MB)",
            "memory (non-reading consumer)", peak
        ),
        _ => println!("memory (non-reading consumer): not measured (no /proc/self/status)"),
    }
    println!();
    println!("client_vs_decode={:.2}", bare.as_secs_f64() / client.as_secs_f64());
    println!("held_decode_vs_decode={:.2}", bare.as_secs_f64() / held.as_secs_f64());
    println!("client_request_round_trip_us={:.1}", rt_median.as_secs_f64() * 1e6);
    println!("release_check_vs_round_trip={:.3}", check.as_secs_f64() / newest.as_secs_f64());
    println!("round_trip_floor_vs_newest={:.3}", older.as_secs_f64() / newest.as_secs_f64());
    if let Some(peak) = memory {
        println!("client_peak_memory_non_reading_mb={peak:.1}");
    }
    Ok(())
}

fn median(mut times: Vec<Duration>) -> Duration {
    times.sort();
    times[times.len() / 2]
}

/// Connects a client to an in-memory server end without the handshake.
fn start(buffer: usize) -> (Client, ServerEnd) {
    let (transport, server) = MemoryTransport::pair(1024);
    (Client::builder().notification_buffer(buffer).start(transport), server)
}

/// Feeds `input` through a client; returns the time until the consumer has every
/// notification (or its lag report), and how many lagged.
async fn through_client(input: &[String], notifications: usize) -> anyhow::Result<(Duration, u64)> {
    let (client, server) = start(4096);
    let mut stream = client.notifications();
    let consumer = tokio::spawn(async move {
        let (mut seen, mut lagged) = (0usize, 0u64);
        while seen < notifications {
            match stream.next().await {
                Some(Event::Notification(n)) => {
                    black_box(&n);
                    seen += 1;
                }
                Some(Event::Lagged(n)) => {
                    lagged += n;
                    seen += n as usize;
                }
                Some(_) => {}
                None => break,
            }
        }
        (seen, lagged)
    });
    // The server's lines exist before the clock starts, as the bare decode's input does:
    // writing them is the server's work, not the client's (the client still receives each
    // as its own `String` through the transport, and frees it).
    let lines: Vec<String> = input.to_vec();
    let started = Instant::now();
    let to_client = server.to_client.clone();
    let feeder = tokio::spawn(async move {
        for line in lines {
            if to_client.send(line).await.is_err() {
                break;
            }
        }
    });
    let (seen, lagged) = consumer.await?;
    let elapsed = started.elapsed();
    feeder.await?;
    if seen < notifications {
        bail!("the consumer saw {seen} of {notifications} notifications");
    }
    drop(server);
    drop(client);
    Ok((elapsed, lagged))
}

/// The same lines through the in-memory transport alone, to a task that drops each line
/// (`decode`: after decoding it as the bare benchmark does): what the client costs beyond is
/// its own.
async fn through_transport(input: &[String], decode: bool) -> anyhow::Result<Duration> {
    let (transport, server) = MemoryTransport::pair(1024);
    let (_sender, mut receiver) = transport.split();
    let lines: Vec<String> = input.to_vec();
    let started = Instant::now();
    let feeder = tokio::spawn(async move {
        for line in lines {
            if server.to_client.send(line).await.is_err() {
                break;
            }
        }
    });
    let mut received = 0;
    while let Some(line) = receiver.recv().await? {
        if decode {
            black_box(TypedServerMessage::from_line_with(&line, |_| None::<&str>).is_ok());
        }
        black_box(&line);
        received += 1;
    }
    let elapsed = started.elapsed();
    feeder.await?;
    if received != input.len() {
        bail!("the transport carried {received} of {} lines", input.len());
    }
    Ok(elapsed)
}

/// Answers every request with an empty thread list.
fn serve(mut server: ServerEnd) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        while let Some(line) = server.recv().await {
            let Some(id) = Parts::parse(&line).ok().and_then(|p| p.id) else { continue };
            let id = serde_json::to_string(&id).unwrap_or_default();
            if server.send(format!(r#"{{"id":{id},"result":{{"data":[],"nextCursor":null}}}}"#)).await.is_err() {
                break;
            }
        }
    })
}

async fn round_trips(n: usize) -> anyhow::Result<Vec<Duration>> {
    let (client, server) = start(1024);
    let task = serve(server);
    let mut times = Vec::with_capacity(n);
    for _ in 0..n {
        let started = Instant::now();
        black_box(client.request::<request::ThreadList>(ThreadListParams::default()).await?);
        times.push(started.elapsed());
    }
    drop(client);
    task.abort();
    Ok(times)
}

/// The check a client makes before sending to a server of the floor release: the median of
/// 9 rounds of `n` checks, per check. The client checks the params' text, encoded once as it
/// is sent, where it lies (`Check::params_raw`; the check built once, as the client builds it
/// at the handshake).
fn check_cost(n: usize) -> anyhow::Result<Duration> {
    use codex_app_client::protocol::availability::{Check, Release, FLOOR};
    let check = Check::new(&Release::parse(FLOOR).context("the floor is a release")?);
    let params = serde_json::value::to_raw_value(&bench_params()?)?;
    let mut rounds = Vec::new();
    for _ in 0..9 {
        let started = Instant::now();
        for _ in 0..n {
            black_box(check.params_raw("thread/list", black_box(&params))?);
        }
        rounds.push(started.elapsed() / n as u32);
    }
    Ok(median(rounds))
}

/// `thread/list` params with members of the floor release (none refused, all read).
fn bench_params() -> anyhow::Result<ThreadListParams> {
    Ok(serde_json::from_value(serde_json::json!({
        "archived": false, "limit": 20, "searchTerm": "x", "modelProviders": ["openai"], "cursor": "c"
    }))?)
}

/// Request round trips after a handshake with a server that says it runs `release`, with
/// params that use members added in several releases (what the check walks).
async fn round_trips_with_release(n: usize, release: &'static str) -> anyhow::Result<Vec<Duration>> {
    let (transport, mut server) = MemoryTransport::pair(1024);
    let task = tokio::spawn(async move {
        while let Some(line) = server.recv().await {
            let Ok(parts) = Parts::parse(&line) else { continue };
            let Some(id) = parts.id else { continue };
            let id = serde_json::to_string(&id).unwrap_or_default();
            let result = if parts.method.as_deref() == Some("initialize") {
                format!(
                    r#"{{"codexHome":"/h","platformFamily":"unix","platformOs":"linux","userAgent":"bench/{release} (x)"}}"#
                )
            } else {
                r#"{"data":[],"nextCursor":null}"#.to_owned()
            };
            if server.send(format!(r#"{{"id":{id},"result":{result}}}"#)).await.is_err() {
                break;
            }
        }
    });
    let client = Client::builder().connect(transport).await?;
    let params = bench_params()?;
    let mut times = Vec::with_capacity(n);
    for _ in 0..n {
        let started = Instant::now();
        black_box(client.request::<request::ThreadList>(params.clone()).await?);
        times.push(started.elapsed());
    }
    drop(client);
    task.abort();
    Ok(times)
}

/// `VmRSS` or `VmHWM` of this process in MB.
fn status_mb(key: &str) -> Option<f64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with(key))?;
    let kb: f64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb / 1024.0)
}

/// Runs [`memory_child`] in a fresh process; its peak RSS rise in MB.
fn memory_in_child(buffer: usize) -> anyhow::Result<Option<f64>> {
    let exe = std::env::current_exe().context("this binary")?;
    let out = std::process::Command::new(exe)
        .args(["bench", "--lines", "100000", "--client-memory", &buffer.to_string()])
        .output()
        .context("running the memory measurement")?;
    if !out.status.success() {
        bail!("the memory measurement failed: {}", String::from_utf8_lossy(&out.stderr));
    }
    let text = String::from_utf8_lossy(&out.stdout);
    Ok(text.lines().find_map(|l| l.strip_prefix("peak_rss_rise_mb=")).and_then(|v| v.parse().ok()))
}

/// In a fresh process: the peak RSS rise while `n` notifications pass a client (notification
/// buffer `buffer`) whose stream is never read. Prints `peak_rss_rise_mb=`.
pub fn memory_child(distinct: &[&str], n: usize, buffer: usize) -> anyhow::Result<()> {
    let rt = runtime()?;
    if let Some((peak, _)) = rt.block_on(peak_memory_non_reading(distinct, n, buffer))? {
        println!("peak_rss_rise_mb={peak:.1}");
    }
    Ok(())
}

/// The rise of peak RSS while `n` notifications pass a client whose stream is never read.
async fn peak_memory_non_reading(distinct: &[&str], n: usize, buffer: usize) -> anyhow::Result<Option<(f64, f64)>> {
    let notifications: Vec<&str> = distinct
        .iter()
        .copied()
        .filter(|l| matches!(ServerMessage::from_line(l), Ok(Message::Notification(_))))
        .collect();
    if notifications.is_empty() {
        bail!("no notifications in the fixtures");
    }
    let (client, mut server) = start(buffer);
    let _idle = client.notifications(); // subscribed, never read
                                        // Reset the peak to the current size (Linux: "5" resets VmHWM).
    let reset = std::fs::write("/proc/self/clear_refs", "5").is_ok();
    let Some(before) = status_mb("VmRSS:") else { return Ok(None) };
    let mut bytes = 0usize;
    let call = tokio::spawn({
        let client = client.clone();
        async move { client.request::<request::ThreadList>(ThreadListParams::default()).await }
    });
    let request = server.recv().await.context("the request")?;
    for k in 0..n {
        let line = notifications[k % notifications.len()];
        bytes += line.len();
        server.send(line).await?;
    }
    let id = Parts::parse(&request).ok().and_then(|p| p.id).context("request id")?;
    server
        .send(format!(r#"{{"id":{},"result":{{"data":[],"nextCursor":null}}}}"#, serde_json::to_string(&id)?))
        .await?;
    tokio::time::timeout(Duration::from_secs(30), call).await.context("the response did not arrive")???;
    let peak = if reset { status_mb("VmHWM:") } else { status_mb("VmRSS:") };
    Ok(peak.map(|p| ((p - before).max(0.0), bytes as f64 / 1e6)))
}
