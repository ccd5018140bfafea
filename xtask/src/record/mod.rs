//! `cargo xtask record [--codex PATH] [--out DIR] [SCENARIO...]`: record real `codex
//! app-server` traffic.
//!
//! Every scenario runs against its own loopback mock of the Responses API (`codex_app_mock`) and its own
//! `codex app-server` in a throw-away `CODEX_HOME` ([`server`]), driven by the typed client
//! steps of [`scenarios`]. Its transcript is normalized ([`normalize`]) and written to
//! `traffic/fixtures/<codex version>/<scenario>.ndjson`. The raw transcript, the requests the
//! mock received and the server's stderr go to `target/record/<codex version>/` for
//! debugging. A scenario that fails writes no fixture.
//!
//! Without a codex binary nothing is written; `scripts/install-codex.sh` installs the pinned
//! one into `.codex-bin/`.

pub mod normalize;
pub mod scenarios;
pub mod server;

use codex_app_protocol::framing::excerpt;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::{bail, ensure, Context as _, Result};
use codex_app_traffic::transcript::to_transcript;
use codex_app_traffic::{drift, Entry, Format};
use serde_json::{json, Value};

use codex_app_mock::{MockServer, Outcome, RecordedRequest};
use normalize::Normalizer;
use scenarios::{Session, SCENARIOS};
use server::AppServer;

use crate::traffic::RecordLine;

/// How long `finish` waits for the server to exit after stdin is closed.
const FINISH: Duration = Duration::from_secs(5);

#[derive(clap::Args)]
pub struct Args {
    /// The codex binary to run (default: $CODEX_BIN, the pinned .codex-bin install, then PATH).
    #[arg(long)]
    codex: Option<PathBuf>,
    /// Where to write the transcripts (default: `traffic/fixtures/<codex version>`).
    #[arg(long)]
    out: Option<PathBuf>,
    /// Scenarios to record (default: all).
    #[arg(value_name = "SCENARIO")]
    scenarios: Vec<String>,
    /// Print the scenarios' names, one per line, and record nothing.
    #[arg(long)]
    list: bool,
    /// Write nothing: record each scenario this many times and compare every run's typed
    /// summary with the committed fixture's (re-recording with the same codex must give no
    /// diff). Fails on the first difference, after printing it.
    #[arg(long, value_name = "RUNS", conflicts_with = "out")]
    repeat: Option<usize>,
}

/// What one recorded scenario produced.
pub struct Recorded {
    pub entries: Vec<Entry>,
    pub notes: Vec<String>,
    pub duration: Duration,
}

pub fn names() -> Vec<&'static str> {
    SCENARIOS.iter().map(|(name, _)| *name).collect()
}

pub fn run(args: Args) -> Result<()> {
    if args.list {
        names().iter().for_each(|name| println!("{name}"));
        return Ok(());
    }
    let selected = select(&args.scenarios)?;
    let Some(codex) = crate::codex::find(args.codex.as_deref()) else {
        bail!(
            "no codex binary found, nothing was recorded. Install the pinned one with `scripts/install-codex.sh` \
             (it goes to {}), or pass --codex PATH / set CODEX_BIN",
            crate::codex::pinned_path().display()
        );
    };
    let version = crate::codex::version(&codex)
        .with_context(|| format!("{} does not run; nothing was recorded", codex.display()))?;
    if version != codex_app_protocol::CODEX_VERSION {
        eprintln!(
            "note: recording codex {version}, but the protocol crate was generated from {}; run `cargo xtask regen` \
             to update the types (the drift check below compares this traffic with the current types)",
            codex_app_protocol::CODEX_VERSION
        );
    }
    if let Some(runs) = args.repeat {
        return repeat(&selected, &codex, &version, runs);
    }
    let out = args.out.unwrap_or_else(|| crate::root().join("traffic/fixtures").join(&version));
    let debug_dir = crate::root().join("target/record").join(&version);
    eprintln!(
        "codex {version}: {}\nwriting to {} (raw traffic and logs: {})",
        codex.display(),
        out.display(),
        debug_dir.display()
    );

    let mut failed = Vec::new();
    let mut written = Vec::new();
    for name in selected {
        match record(name, &codex, &debug_dir) {
            Ok(r) => {
                let path = out.join(format!("{name}.ndjson"));
                std::fs::create_dir_all(&out)?;
                std::fs::write(&path, to_transcript(&r.entries))
                    .with_context(|| format!("cannot write {}", path.display()))?;
                let (c2s, s2c) =
                    (r.entries.iter().filter(|e| e.dir == codex_app_traffic::Dir::C2s).count(), r.entries.len());
                let detail = format!("{c2s:>3} c2s {:>4} s2c  {:>6.2}s", s2c - c2s, r.duration.as_secs_f64());
                println!("{}", RecordLine::Recorded { scenario: name.to_owned(), detail, path: path.clone() }.render());
                for note in &r.notes {
                    println!("    {note}");
                }
                written.push(path);
            }
            Err(e) => {
                println!("{}", RecordLine::Failed { scenario: name.to_owned(), error: format!("{e:#}") }.render());
                failed.push(name);
            }
        }
    }

    if !written.is_empty() {
        println!();
        let reports: Vec<(String, drift::Report)> = written
            .iter()
            .map(|p| Ok((p.display().to_string(), drift::check_file(p, Format::Transcript)?)))
            .collect::<Result<_, codex_app_traffic::transcript::TranscriptError>>()?;
        print!("{}", drift::render(&reports));
    }
    ensure!(failed.is_empty(), "{} scenario(s) failed: {}", failed.len(), failed.join(", "));
    Ok(())
}

/// The scenarios to run, in the canonical order; unknown names are an error.
fn select(wanted: &[String]) -> Result<Vec<&'static str>> {
    let all = names();
    if let Some(unknown) = wanted.iter().find(|w| !all.contains(&w.as_str())) {
        bail!("unknown scenario `{unknown}`; known: {}", all.join(", "));
    }
    Ok(all.into_iter().filter(|n| wanted.is_empty() || wanted.iter().any(|w| w == n)).collect())
}

/// Runs one scenario; returns its normalized transcript. The raw transcript, the model
/// requests and the server log go to `debug_dir` (also when the scenario fails).
pub fn record(name: &str, codex: &Path, debug_dir: &Path) -> Result<Recorded> {
    let scenario = SCENARIOS
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(_, s)| *s)
        .with_context(|| format!("unknown scenario `{name}`"))?;
    let start = Instant::now();
    let mock = MockServer::start()?;
    let log = debug_dir.join(format!("{name}.stderr.log"));
    let srv = AppServer::spawn(codex, &mock.base_url(), &log)?;
    let mut session = Session { mock, srv, notes: Vec::new() };
    let result = scenario(&mut session);

    let Session { mut mock, srv, mut notes } = session;
    let literals = literal_placeholders(srv.home(), &mock.base_url());
    let not_json = srv.not_json().to_vec();
    let (entries, _status) = srv.finish(FINISH)?;
    mock.shutdown();
    let duration = start.elapsed();
    let requests = mock.requests();

    write_transcript(&debug_dir.join(format!("{name}.raw.ndjson")), &entries)?;
    write_requests(&debug_dir.join(format!("{name}.model-requests.json")), &requests)?;
    let mut normalizer = Normalizer::new(&literals);
    let normalized: Vec<Entry> =
        entries.iter().map(|e| Entry { line: normalizer.line(&e.line), ..e.clone() }).collect();
    write_transcript(&debug_dir.join(format!("{name}.ndjson")), &normalized)?;

    result.with_context(|| format!("scenario {name} failed (server log: {})", log.display()))?;
    check_requests(&mock, &requests)?;
    notes.push(format!("model requests: {}", requests.len()));
    for line in not_json {
        notes.push(format!("server line that is not JSON: {}", excerpt(&line, 200)));
    }
    Ok(Recorded { entries: normalized, notes, duration })
}

/// The mock must have served exactly the scripted bodies and nothing else.
fn check_requests(mock: &MockServer, requests: &[RecordedRequest]) -> Result<()> {
    let unexpected: Vec<String> = requests
        .iter()
        .filter(|r| matches!(r.outcome, Outcome::Status(404 | 500)))
        .map(|r| format!("{} {}", r.method, r.url))
        .collect();
    ensure!(unexpected.is_empty(), "unexpected model requests: {unexpected:?}");
    ensure!(mock.pending() == 0, "{} scripted model answers were never requested", mock.pending());
    Ok(())
}

/// Strings that differ on every run (paths, the mock's URL) with their placeholders.
fn literal_placeholders(home: &Path, mock_base_url: &str) -> Vec<(String, String)> {
    let mut literals = vec![
        (home.display().to_string(), "<codex-home>".to_owned()),
        (mock_base_url.to_owned(), "http://127.0.0.1:<mock-port>/v1".to_owned()),
    ];
    if let Ok(canonical) = home.canonicalize() {
        if canonical != home {
            literals.push((canonical.display().to_string(), "<codex-home>".to_owned()));
        }
    }
    literals
}

/// `record --repeat RUNS`: every selected scenario recorded `runs` times, each run's typed
/// summary compared with the committed fixture's.
fn repeat(selected: &[&str], codex: &Path, version: &str, runs: usize) -> Result<()> {
    let fixtures = crate::root().join("traffic/fixtures").join(version);
    let debug_dir = tempfile::tempdir()?;
    let mut committed = Vec::new();
    for name in selected {
        let path = fixtures.join(format!("{name}.ndjson"));
        let entries = codex_app_traffic::transcript::read_file(&path, Format::Transcript).with_context(|| {
            format!("no committed fixture to compare with: record it first (`cargo xtask record {name}`)")
        })?;
        committed.push((*name, codex_app_traffic::summary::summarize(&entries)));
    }
    let started = Instant::now();
    for run in 1..=runs {
        for (name, expected) in &committed {
            let recorded = record(name, codex, debug_dir.path()).with_context(|| format!("run {run}: {name}"))?;
            let numbered: Vec<Entry> =
                recorded.entries.iter().enumerate().map(|(i, e)| Entry { number: i + 1, ..e.clone() }).collect();
            let got = codex_app_traffic::summary::summarize(&numbered);
            if got != *expected {
                let diff = similar::TextDiff::from_lines(expected.as_str(), got.as_str());
                println!("{}", diff.unified_diff().context_radius(2).header("committed", "re-recorded"));
                bail!("run {run}: the re-recorded `{name}` differs from the committed fixture (summary diff above)");
            }
        }
        println!("run {run}/{runs}: {} scenario(s) as committed ({:.0?} so far)", committed.len(), started.elapsed());
    }
    Ok(())
}

fn write_transcript(path: &Path, entries: &[Entry]) -> Result<()> {
    std::fs::create_dir_all(path.parent().context("no parent folder")?)?;
    std::fs::write(path, to_transcript(entries)).with_context(|| format!("cannot write {}", path.display()))
}

fn write_requests(path: &Path, requests: &[RecordedRequest]) -> Result<()> {
    let requests: Vec<Value> = requests
        .iter()
        .map(|r| {
            let headers: Vec<String> = r.headers.iter().map(|(k, v)| format!("{k}: {v}")).collect();
            json!({"method": r.method, "url": r.url, "outcome": format!("{:?}", r.outcome), "headers": headers, "body": r.body})
        })
        .collect();
    std::fs::create_dir_all(path.parent().context("no parent folder")?)?;
    let mut file = std::fs::File::create(path).with_context(|| format!("cannot write {}", path.display()))?;
    writeln!(file, "{}", serde_json::to_string_pretty(&requests)?)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scenario_selection() {
        assert_eq!(select(&[]).unwrap().len(), SCENARIOS.len());
        assert_eq!(select(&["interrupt".into(), "lifecycle".into()]).unwrap(), ["lifecycle", "interrupt"]);
        let err = select(&["nope".into()]).unwrap_err().to_string();
        assert!(err.contains("unknown scenario `nope`") && err.contains("protocol_errors"), "{err}");
    }

    /// Records every scenario with the real codex and checks the result like the committed
    /// fixtures: no drift, and the same typed summary. Ignored with the reason by a plain
    /// `cargo test`; run (`-- --include-ignored`, README's test command) without codex, it fails.
    #[test]
    #[ignore = "needs the codex binary (the pinned release, installed with npm on first use)"]
    fn records_every_scenario_like_the_fixtures() {
        // $CODEX_BIN, else the pinned release (installed into .codex-bin/ on first use).
        let codex = codex_app_mock::codex::pinned(codex_app_protocol::CODEX_VERSION)
            .unwrap_or_else(|e| panic!("no codex binary: this test records with the real codex app-server: {e}"));
        let version = crate::codex::version(&codex).expect("codex --version");
        let debug_dir = tempfile::tempdir().unwrap();
        let fixtures = crate::root().join("traffic/fixtures").join(&version);
        for name in names() {
            let recorded = record(name, &codex, debug_dir.path()).unwrap_or_else(|e| panic!("{name}: {e:#}"));
            let numbered: Vec<Entry> =
                recorded.entries.iter().enumerate().map(|(i, e)| Entry { number: i + 1, ..e.clone() }).collect();
            let report = drift::check(&numbered, Format::Transcript);
            assert_eq!(report.drift_count(), 0, "{name}:\n{}", drift::render(&[(name.to_owned(), report.clone())]));
            let committed = fixtures.join(format!("{name}.ndjson"));
            if committed.exists() {
                let committed = codex_app_traffic::transcript::read_file(&committed, Format::Transcript).unwrap();
                assert_eq!(
                    codex_app_traffic::summary::summarize(&numbered),
                    codex_app_traffic::summary::summarize(&committed),
                    "{name}: the recording differs from the committed fixture"
                );
            } else {
                eprintln!("{name}: no committed fixture for codex {version} to compare with");
            }
        }
    }
}
