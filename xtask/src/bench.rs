//! `cargo xtask bench`: typed decode and encode of recorded server traffic against
//! `serde_json::Value`, `&RawValue` and (with `--peer`) the `codex-codes` crate.
//!
//! Input: the s2c lines of `traffic/fixtures/<CODEX_VERSION>/*.ndjson` that are JSON-RPC messages,
//! repeated (in file order) to `--lines` lines (100,000) in one buffer, as read from a stream.
//! A response is typed through the method of the c2s request with the same id in its file,
//! the way a client does it: `TypedServerMessage::from_line_with(line, |id| method)`, which
//! decodes `params` and `result` by their method's types in one pass over the line. The
//! method is looked up once while building the input, so no benchmark pays for an id map.
//! `decode typed (two-step)` is the other way a client can do it: `ServerMessage::from_line`
//! (the result kept raw), then `ClientResponse::decode(method, &response.result)`.
//!
//! Every benchmark walks all lines once per round; the rounds run interleaved (the order
//! rotates each round) after one warm-up round, and the median round is reported. Each
//! decoded value is passed through `black_box` and dropped, so every benchmark pays for its
//! allocations and its drop. Encode serializes values decoded once per distinct line, in the
//! same sequence as decode, to a fresh `String` per line.
//!
//! Then the client's benchmarks (see `bench/client.rs`): `client_vs_decode`, the request
//! round trip and the peak memory with a consumer that does not read.
//!
//! The last lines are machine-readable (`decode_typed_vs_value=<ratio>`, ...): how many times
//! faster the typed crate is (median time of the other / median time of typed).

use std::hint::black_box;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use anyhow::{bail, Context};
use codex_app_protocol::jsonrpc::Parts;
use codex_app_protocol::{ClientResponse, Message, RequestId, Response, ServerMessage, TypedServerMessage};
use codex_app_traffic::transcript::{self, Dir, Entry, Format};
use serde_json::value::RawValue;
use serde_json::Value;

#[cfg(feature = "client-bench")]
mod client;
#[cfg(feature = "peer")]
mod peer;

#[derive(clap::Args)]
pub struct Args {
    /// Timed rounds of each benchmark (the median is reported), after one warm-up round.
    #[arg(long, default_value_t = 9)]
    rounds: usize,
    /// Lines of input (the recorded lines repeated).
    #[arg(long, default_value_t = 100_000)]
    lines: usize,
    /// Also decode with the peer crate `codex-codes` (builds xtask with `--features peer`).
    #[arg(long)]
    peer: bool,
    /// Run with mimalloc as the global allocator instead of the system's (builds xtask with
    /// `--features mimalloc`): every figure then shows what the allocator accounts for.
    #[arg(long)]
    mimalloc: bool,
    /// Only write a transcript of `--lines` lines (the fixtures, both directions, repeated) to
    /// PATH, for timing `cargo xtask drift PATH`.
    #[arg(long, value_name = "PATH")]
    write_transcript: Option<PathBuf>,
    /// Run only the benchmarks whose name contains this (`--only "decode typed"`, for a
    /// profiler); the ratios of the others are then not printed.
    #[arg(long)]
    only: Option<String>,
    /// Also break typed and `Value` decode down by method: each method's lines decoded as
    /// often as they occur in the input, with its share of the typed decode time.
    #[arg(long)]
    by_method: bool,
    /// Internal: measure only the client's memory with a consumer that does not read, with
    /// this notification buffer, in this (fresh) process; `cargo xtask bench` runs it.
    #[arg(long, hide = true)]
    client_memory: Option<usize>,
}

/// One distinct s2c line.
struct Sample {
    line: String,
    /// For a response: the method of its request.
    method: Option<String>,
}

/// The input: all lines in one buffer, as they would be read from a stream.
struct Input {
    samples: Vec<Sample>,
    text: String,
    /// (start, end, sample) of each line.
    spans: Vec<(usize, usize, usize)>,
}

impl Input {
    fn lines(&self) -> impl Iterator<Item = (&str, Option<&str>)> {
        self.spans.iter().map(|&(a, b, s)| (&self.text[a..b], self.samples[s].method.as_deref()))
    }
}

pub fn run(args: Args) -> anyhow::Result<()> {
    if args.peer && !cfg!(feature = "peer") {
        bail!("--peer needs xtask-traffic built with `--features peer`; `cargo xtask bench --peer` does that");
    }
    if args.mimalloc && !cfg!(feature = "mimalloc") {
        bail!(
            "--mimalloc needs xtask-traffic built with `--features mimalloc`; `cargo xtask bench --mimalloc` does that"
        );
    }
    let files = fixture_files()?;
    if let Some(path) = &args.write_transcript {
        return write_transcript(&files, args.lines, path);
    }
    if args.rounds == 0 || args.lines == 0 {
        bail!("--rounds and --lines must be positive");
    }

    let (samples, skipped) = samples(&files)?;
    #[cfg(feature = "client-bench")]
    if let Some(buffer) = args.client_memory {
        let distinct = client::client_lines(samples.iter().map(|s| s.line.as_str()));
        return client::memory_child(&distinct, args.lines, buffer);
    }
    let input = build_input(samples, args.lines);
    let typed: Vec<Typed> =
        input.samples.iter().map(|s| Typed::decode(&s.line, s.method.as_deref())).collect::<Result<_, _>>()?;
    let values: Vec<Value> = input.samples.iter().map(|s| serde_json::from_str(&s.line)).collect::<Result<_, _>>()?;
    let order: Vec<usize> = input.spans.iter().map(|&(_, _, s)| s).collect();

    let kinds = count_kinds(&input.samples);
    println!(
        "input: {} lines ({:.1} MB) from {} distinct s2c lines of {} fixture files ({kinds}); {skipped} s2c lines skipped (not messages)",
        input.spans.len(),
        input.text.len() as f64 / 1e6,
        input.samples.len(),
        files.len(),
    );
    let typed_sizes: Vec<usize> = typed.iter().map(|t| t.encode().len()).collect();
    let value_sizes: Vec<usize> = values.iter().map(|v| serde_json::to_string(v).map_or(0, |t| t.len())).collect();
    let typed_bytes: usize = order.iter().map(|&s| typed_sizes[s]).sum();
    let value_bytes: usize = order.iter().map(|&s| value_sizes[s]).sum();
    println!("encoded output: typed {:.1} MB, Value {:.1} MB", typed_bytes as f64 / 1e6, value_bytes as f64 / 1e6);

    let mut benches: Vec<Bench<'_>> = vec![
        Bench::new("decode typed", || input.lines().filter(|&(line, method)| decode_typed(line, method)).count()),
        Bench::new("decode typed (two-step)", || {
            input.lines().filter(|&(line, method)| decode_two_step(line, method)).count()
        }),
        Bench::new("decode Value", || {
            input.lines().filter(|&(line, _)| black_box(serde_json::from_str::<Value>(line)).is_ok()).count()
        }),
        Bench::new("decode &RawValue", || {
            input.lines().filter(|&(line, _)| black_box(serde_json::from_str::<&RawValue>(line)).is_ok()).count()
        }),
        Bench::new("encode typed", || order.iter().map(|&s| black_box(typed[s].encode()).len()).sum()),
        Bench::new("encode typed (Response::new)", || {
            order.iter().map(|&s| black_box(typed[s].encode_public()).len()).sum()
        }),
        Bench::new("encode Value", || {
            order.iter().map(|&s| black_box(serde_json::to_string(&values[s]).unwrap_or_default()).len()).sum()
        }),
    ];
    #[cfg(feature = "peer")]
    {
        let outcome = peer::check(input.samples.iter().map(|s| (s.line.as_str(), s.method.as_deref())));
        println!("peer codex-codes {}: of {} distinct lines {outcome}", peer::VERSION, input.samples.len());
        benches.push(Bench::new("decode peer", || {
            input.lines().filter(|&(line, method)| peer::decode(line, method)).count()
        }));
    }

    if let Some(only) = &args.only {
        benches.retain(|b| b.name.contains(only.as_str()));
    }

    let typed_ok = input.lines().filter(|&(line, method)| decode_typed(line, method)).count();
    if typed_ok != input.spans.len() {
        bail!("{} of {} lines did not decode typed", input.spans.len() - typed_ok, input.spans.len());
    }

    println!("load before: {}", crate::build_times::load());
    for round in 0..=args.rounds {
        let n = benches.len();
        for k in 0..n {
            let bench = &mut benches[(k + round) % n];
            let started = Instant::now();
            black_box((bench.run)());
            let elapsed = started.elapsed();
            if round > 0 {
                bench.times.push(elapsed);
            }
        }
    }
    println!("load after: {}", crate::build_times::load());

    let lines = input.spans.len() as f64;
    let mb = input.text.len() as f64 / 1e6;
    let allocator = if cfg!(feature = "mimalloc") { "mimalloc" } else { "the system's" };
    println!("\n{} rounds, median per round of {} lines (allocator: {allocator}):", args.rounds, input.spans.len());
    println!("{:<30} {:>10} {:>14} {:>10} {:>10}", "benchmark", "ms", "lines/s", "MB/s", "spread");
    let mut medians = std::collections::HashMap::new();
    for bench in &mut benches {
        bench.times.sort();
        let median = bench.times[bench.times.len() / 2];
        let (min, max) = (bench.times[0], bench.times[bench.times.len() - 1]);
        let secs = median.as_secs_f64();
        println!(
            "{:<30} {:>10.1} {:>14.0} {:>10.1} {:>9.1}%",
            bench.name,
            secs * 1e3,
            lines / secs,
            mb / secs,
            (max - min).as_secs_f64() / secs * 100.0
        );
        medians.insert(bench.name, median);
    }
    if args.by_method {
        by_method(&input, args.rounds);
    }
    println!();
    for (key, other, typed) in [
        ("decode_typed_vs_value", "decode Value", "decode typed"),
        ("decode_typed_vs_raw", "decode &RawValue", "decode typed"),
        ("encode_typed_vs_value", "encode Value", "encode typed"),
        ("encode_typed_response_new_vs_value", "encode Value", "encode typed (Response::new)"),
        ("decode_typed_vs_peer", "decode peer", "decode typed"),
    ] {
        if let (Some(other), Some(typed)) = (medians.get(other), medians.get(typed)) {
            println!("{key}={:.2}", other.as_secs_f64() / typed.as_secs_f64());
        }
    }
    let client_benches = args.only.as_deref().is_none_or(|only| "client".contains(only) || only.contains("client"));
    #[cfg(feature = "client-bench")]
    if client_benches {
        let distinct = client::client_lines(input.samples.iter().map(|s| s.line.as_str()));
        client::run(&distinct, args.lines, args.rounds)?;
    }
    #[cfg(not(feature = "client-bench"))]
    if client_benches {
        println!(
            "
client benchmarks: not built (xtask-traffic needs `--features client-bench`; `cargo xtask bench` turns it on)"
        );
    }
    Ok(())
}

struct Bench<'a> {
    name: &'static str,
    run: Box<dyn FnMut() -> usize + 'a>,
    times: Vec<Duration>,
}

impl<'a> Bench<'a> {
    fn new(name: &'static str, run: impl FnMut() -> usize + 'a) -> Self {
        Bench { name, run: Box::new(run), times: Vec::new() }
    }
}

/// Typed and `Value` decode per method (a response by its request's method), each distinct
/// line decoded as often as it occurs in the input.
fn by_method(input: &Input, rounds: usize) {
    let mut groups = std::collections::BTreeMap::<String, Vec<&Sample>>::new();
    for s in &input.samples {
        let label = match (&s.method, Parts::parse(&s.line).ok().and_then(|p| p.method.map(|m| m.into_owned()))) {
            (Some(m), _) => format!("response {m}"),
            (None, Some(m)) => m,
            (None, None) => "error response".into(),
        };
        groups.entry(label).or_default().push(s);
    }
    let repeat = input.spans.len() / input.samples.len();
    let time = |f: &dyn Fn() -> usize| {
        let mut times: Vec<Duration> = (0..rounds.max(1))
            .map(|_| {
                let started = Instant::now();
                black_box(f());
                started.elapsed()
            })
            .collect();
        times.sort();
        times[times.len() / 2]
    };
    let mut rows: Vec<(String, usize, usize, Duration, Duration)> = groups
        .iter()
        .map(|(label, samples)| {
            let typed = time(&|| {
                (0..repeat).map(|_| samples.iter().filter(|s| decode_typed(&s.line, s.method.as_deref())).count()).sum()
            });
            let value = time(&|| {
                (0..repeat)
                    .map(|_| {
                        samples.iter().filter(|s| black_box(serde_json::from_str::<Value>(&s.line)).is_ok()).count()
                    })
                    .sum()
            });
            (label.clone(), samples.len(), samples.iter().map(|s| s.line.len()).sum(), typed, value)
        })
        .collect();
    rows.sort_by_key(|r| std::cmp::Reverse(r.3));
    let total: f64 = rows.iter().map(|r| r.3.as_secs_f64()).sum();
    let total_value: f64 = rows.iter().map(|r| r.4.as_secs_f64()).sum();
    println!("\nby method (each distinct line x{repeat}), sorted by typed time:");
    println!(
        "{:<44} {:>5} {:>7} {:>9} {:>9} {:>7} {:>8}",
        "method", "lines", "bytes", "typed ms", "Value ms", "ratio", "share"
    );
    for (label, lines, bytes, typed, value) in &rows {
        println!(
            "{label:<44} {lines:>5} {bytes:>7} {:>9.1} {:>9.1} {:>7.2} {:>7.1}%",
            typed.as_secs_f64() * 1e3,
            value.as_secs_f64() * 1e3,
            value.as_secs_f64() / typed.as_secs_f64(),
            typed.as_secs_f64() / total * 100.0
        );
    }
    println!(
        "{:<44} {:>5} {:>7} {:>9.1} {:>9.1} {:>7.2}",
        "total",
        input.samples.len(),
        "",
        total * 1e3,
        total_value * 1e3,
        total_value / total
    );
}

/// One line decoded as a client decodes it: in one pass, a response typed by its request's
/// method.
fn decode_typed(line: &str, method: Option<&str>) -> bool {
    black_box(TypedServerMessage::from_line_with(line, |_| method)).is_ok()
}

/// One line decoded in two steps: the envelope with the result raw, then the result.
fn decode_two_step(line: &str, method: Option<&str>) -> bool {
    match black_box(ServerMessage::from_line(line)) {
        Ok(Message::Response(response)) => {
            black_box(ClientResponse::decode(method.unwrap_or_default(), &response.result)).is_ok()
        }
        other => other.is_ok(),
    }
}

/// A decoded s2c line, with a response's result typed. (One per distinct line: the size of
/// the variants does not matter.)
struct Typed(TypedServerMessage);

impl Typed {
    fn decode(line: &str, method: Option<&str>) -> anyhow::Result<Typed> {
        let message =
            TypedServerMessage::from_line_with(line, |_| method).with_context(|| format!("typed decode of {line}"))?;
        if let Message::Response(r) = &message {
            if let ClientResponse::Unrecognized(_) = r.result {
                bail!("response {line} not typed (method {method:?})");
            }
        }
        Ok(Typed(message))
    }

    /// The line as `to_line` writes it (a response with its typed result).
    fn encode(&self) -> String {
        self.0.to_line()
    }

    /// The same with a response built by `Response::new(id, &result)` (which serializes the
    /// result into a `RawValue`) and then written by `ServerMessage::to_line`.
    fn encode_public(&self) -> String {
        match &self.0 {
            Message::Response(r) => match Response::new(r.id.clone(), &r.result) {
                Ok(r) => ServerMessage::Response(r).to_line(),
                Err(_) => String::new(),
            },
            other => other.to_line(),
        }
    }
}

/// The committed fixture transcripts of the protocol crate's codex release
/// (`traffic/fixtures/<CODEX_VERSION>/*.ndjson`), sorted.
fn fixture_files() -> anyhow::Result<Vec<(PathBuf, Vec<Entry>)>> {
    let dir = crate::root().join("traffic/fixtures").join(codex_app_protocol::CODEX_VERSION);
    let mut paths: Vec<PathBuf> = std::fs::read_dir(&dir)
        .map_err(|e| anyhow::anyhow!("cannot read {}: {e} (record it with `cargo xtask record`)", dir.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "ndjson"))
        .collect();
    paths.sort();
    if paths.is_empty() {
        bail!("no fixtures in {} (record them with `cargo xtask record`)", dir.display());
    }
    paths
        .into_iter()
        .map(|p| {
            let entries =
                transcript::read_file(&p, Format::Transcript).map_err(|e| anyhow::anyhow!("{}: {e}", p.display()))?;
            Ok((p, entries))
        })
        .collect()
}

/// The s2c lines that are messages, responses with their request's method; and how many
/// s2c lines were skipped.
fn samples(files: &[(PathBuf, Vec<Entry>)]) -> anyhow::Result<(Vec<Sample>, usize)> {
    let mut samples = Vec::new();
    let mut skipped = 0;
    for (_, entries) in files {
        let mut pending = std::collections::HashMap::<RequestId, String>::new();
        for entry in entries {
            let Ok(parts) = Parts::parse(&entry.line) else {
                skipped += usize::from(entry.dir == Dir::S2c);
                continue;
            };
            match entry.dir {
                Dir::C2s => {
                    if let (Some(id), Some(method)) = (&parts.id, &parts.method) {
                        pending.insert(id.clone(), method.to_string());
                    }
                }
                Dir::S2c if parts.method.is_some() || parts.error.is_some() => {
                    samples.push(Sample { line: entry.line.clone(), method: None });
                }
                Dir::S2c => match (parts.result, parts.id.as_ref().and_then(|id| pending.remove(id))) {
                    (Some(_), Some(method)) => samples.push(Sample { line: entry.line.clone(), method: Some(method) }),
                    _ => skipped += 1,
                },
            }
        }
    }
    if samples.is_empty() {
        bail!("no s2c messages in the fixtures");
    }
    Ok((samples, skipped))
}

fn build_input(samples: Vec<Sample>, lines: usize) -> Input {
    let mut text = String::new();
    let mut spans = Vec::with_capacity(lines);
    for n in 0..lines {
        let s = n % samples.len();
        let start = text.len();
        text.push_str(&samples[s].line);
        spans.push((start, text.len(), s));
        text.push('\n');
    }
    Input { samples, text, spans }
}

fn count_kinds(samples: &[Sample]) -> String {
    let (mut requests, mut notifications, mut responses, mut errors) = (0, 0, 0, 0);
    for s in samples {
        match ServerMessage::from_line(&s.line) {
            Ok(Message::Request(_)) => requests += 1,
            Ok(Message::Notification(_)) => notifications += 1,
            Ok(Message::Response(_)) => responses += 1,
            Ok(Message::Error(_)) => errors += 1,
            Err(_) => {}
        }
    }
    format!("{notifications} notifications, {requests} server requests, {responses} responses, {errors} errors")
}

/// Writes the fixtures, both directions, repeated to `lines` lines.
fn write_transcript(files: &[(PathBuf, Vec<Entry>)], lines: usize, path: &std::path::Path) -> anyhow::Result<()> {
    let all: Vec<&Entry> = files.iter().flat_map(|(_, entries)| entries).collect();
    let entries: Vec<Entry> = all.iter().cycle().take(lines).map(|e| Entry { number: 0, ..(*e).clone() }).collect();
    std::fs::write(path, transcript::to_transcript(&entries)).with_context(|| format!("writing {}", path.display()))?;
    println!("wrote {} lines ({} fixture lines repeated) to {}", entries.len(), all.len(), path.display());
    Ok(())
}
