//! `cargo xtask build-times`: how long a clean rebuild of the protocol crate takes, with its
//! dependencies already built.
//!
//! For each surface (`--features experimental`, then the stable surface) and each command
//! (`cargo build --release`, `cargo check`), it builds `-p codex-app-protocol` once (which
//! builds serde and serde_json), then `--runs` times forgets the protocol crate's build (it
//! deletes the crate's fingerprints, so no source file is touched) and times the rebuild of
//! the crate alone. The median is printed as `build_release_s=`, `check_s=`,
//! `check_incremental_s=` (experimental) and `build_release_stable_s=`, `check_stable_s=`,
//! `check_incremental_stable_s=`.
//!
//! Each run also prints the CPU time of the cargo process tree, which other load on the
//! machine changes less than the wall time, and the load average before it.
//!
//! It builds in its own target directories (`target/build-times/{experimental,stable}`, one
//! per surface so that forgetting one surface's build does not rebuild the other's), so it
//! neither waits on nor invalidates other builds, and with `CARGO_INCREMENTAL=0`, so `cargo check` is a clean
//! check and not a replay of the incremental cache: that is how cargo builds the crate as a
//! dependency (only workspace members are built incrementally). `check_incremental_s` is the
//! other case, an unchanged crate checked again with its incremental cache (`touch lib.rs`).

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use anyhow::{bail, Context};

const PACKAGE: &str = "codex-app-protocol";

#[derive(clap::Args)]
pub struct Args {
    /// Timed rebuilds per measurement (the median is printed).
    #[arg(long, default_value_t = 3)]
    runs: usize,
    /// The folder of the target directories to build in (default: target/build-times).
    #[arg(long)]
    target_dir: Option<PathBuf>,
    /// Only the surface with `--features experimental`.
    #[arg(long, conflicts_with = "stable_only")]
    experimental_only: bool,
    /// Only the stable surface.
    #[arg(long)]
    stable_only: bool,
}

pub fn run(args: Args) -> anyhow::Result<()> {
    if args.runs == 0 {
        bail!("--runs must be positive");
    }
    let root = crate::root();
    let target = args.target_dir.clone().unwrap_or_else(|| root.join("target").join("build-times"));
    let generated = generated_lines(&root.join("protocol/src/generated"))?;
    let total: usize = generated.iter().map(|(_, n)| n).sum();
    for (file, n) in &generated {
        println!("{file}: {n} lines");
    }
    println!("load before: {}", load());

    let mut surfaces: Vec<(&str, &[&str])> = Vec::new();
    if !args.stable_only {
        surfaces.push(("", &["--features", "experimental"]));
    }
    if !args.experimental_only {
        surfaces.push(("_stable", &[]));
    }
    let mut results = Vec::new();
    for (suffix, features) in surfaces {
        let target = target.join(if suffix.is_empty() { "experimental" } else { "stable" });
        let kinds = [
            ("build_release", &["build", "--release"][..], "release", "0"),
            ("check", &["check"][..], "debug", "0"),
            ("check_incremental", &["check"][..], "debug", "1"),
        ];
        for (name, command, profile, incremental) in kinds {
            let cargo = |quiet: bool| {
                let mut c = Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()));
                c.current_dir(&root).env("CARGO_INCREMENTAL", incremental).args(command).args(["-p", PACKAGE, "--lib"]).args(features);
                c.arg("--target-dir").arg(&target);
                if quiet {
                    c.arg("--quiet");
                }
                c
            };
            let label = format!("CARGO_INCREMENTAL={incremental} cargo {} -p {PACKAGE} {}", command.join(" "), features.join(" "));
            println!("{label}: building the dependencies");
            run_cargo(cargo(false))?;
            let mut times = Vec::new();
            let mut cpus = Vec::new();
            for run in 1..=args.runs {
                forget(&target.join(profile))?;
                let load_before = load();
                let cpu_before = children_cpu();
                let started = Instant::now();
                run_cargo(cargo(true))?;
                let elapsed = started.elapsed();
                let cpu = children_cpu().zip(cpu_before).map(|(after, before)| after - before);
                println!(
                    "{label}: run {run}: {:.1} s, cpu {} (load before {load_before})",
                    elapsed.as_secs_f64(),
                    cpu.map_or("?".into(), |c| format!("{c:.1} s"))
                );
                times.push(elapsed);
                cpus.extend(cpu);
            }
            results.push((format!("{name}{suffix}_s"), times, cpus));
        }
    }
    println!("load after: {}", load());
    println!();
    println!("generated_lines={total}");
    for (key, times, cpus) in &results {
        let wall: Vec<f64> = times.iter().map(Duration::as_secs_f64).collect();
        let list = |v: &[f64]| v.iter().map(|t| format!("{t:.1}")).collect::<Vec<_>>().join(" ");
        println!("{key}={:.1}  # wall: {}; cpu: {} (median {:.1})", median(&wall), list(&wall), list(cpus), median(cpus));
    }
    Ok(())
}

fn median(values: &[f64]) -> f64 {
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    sorted.get(sorted.len() / 2).copied().unwrap_or(f64::NAN)
}

/// Deletes the protocol crate's fingerprints in one profile folder, so that the next build
/// compiles the crate again (and nothing else).
fn forget(profile_dir: &Path) -> anyhow::Result<()> {
    let dir = profile_dir.join(".fingerprint");
    let prefix = format!("{PACKAGE}-");
    let mut removed = 0;
    for entry in std::fs::read_dir(&dir).with_context(|| format!("reading {}", dir.display()))? {
        let entry = entry?;
        if entry.file_name().to_string_lossy().starts_with(&prefix) {
            std::fs::remove_dir_all(entry.path()).with_context(|| format!("removing {}", entry.path().display()))?;
            removed += 1;
        }
    }
    if removed == 0 {
        bail!("no fingerprint of {PACKAGE} in {}", dir.display());
    }
    Ok(())
}

fn run_cargo(mut command: Command) -> anyhow::Result<Duration> {
    let started = Instant::now();
    let status = command.status().context("running cargo")?;
    if !status.success() {
        bail!("{command:?} failed ({status})");
    }
    Ok(started.elapsed())
}

/// Lines of each generated file.
fn generated_lines(dir: &Path) -> anyhow::Result<Vec<(String, usize)>> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir).with_context(|| format!("reading {}", dir.display()))? {
        let path = entry?.path();
        if path.extension().is_some_and(|e| e == "rs") {
            let text = std::fs::read_to_string(&path)?;
            files.push((format!("protocol/src/generated/{}", path.file_name().unwrap_or_default().to_string_lossy()), text.lines().count()));
        }
    }
    files.sort();
    Ok(files)
}

/// User + system CPU seconds of the waited-for children of this process (`cutime` +
/// `cstime` of /proc/self/stat, in clock ticks of 1/100 s): a rebuild's CPU time, which
/// other load on the machine changes much less than its wall time.
fn children_cpu() -> Option<f64> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    let fields: Vec<&str> = stat.rsplit_once(')')?.1.split_whitespace().collect();
    let ticks = |n: usize| fields.get(n)?.parse::<f64>().ok();
    Some((ticks(13)? + ticks(14)?) / 100.0)
}

/// The load averages (1, 5, 15 minutes).
pub fn load() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|s| s.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_else(|_| "?".into())
}
