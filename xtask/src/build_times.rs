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
//!
//! `--peer` times, in the same run, a release build of the stable surface and of the peer
//! crate `codex-codes` 0.166 (`types` feature, default features off), both built the way a
//! user's project builds them: as dependencies of a scratch package
//! (`target/build-times/peer/`, its own workspace, default release profile, the workspace's
//! `Cargo.lock` as a starting point so serde and serde_json are the same versions), with
//! their dependencies prebuilt. The runs alternate (ours, theirs, ours, ...) so that load on
//! the machine falls on both, and `build_vs_peer=` is the median of ours / the median of
//! theirs (wall time; the CPU-time ratio is printed next to it).

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
    /// Also time a release build of the stable surface against one of the peer crate
    /// `codex-codes` 0.166 (`types`), both as dependencies of a scratch package, and print
    /// `build_vs_peer=` (ours / theirs).
    #[arg(long)]
    peer: bool,
    /// Only the `--peer` comparison (implies `--peer`).
    #[arg(long)]
    peer_only: bool,
}

/// The peer crate and the version `--peer` builds.
const PEER: (&str, &str) = ("codex-codes", "=0.166.4");

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
    if !args.stable_only && !args.peer_only {
        surfaces.push(("", &["--features", "experimental"]));
    }
    if !args.experimental_only && !args.peer_only {
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
                c.current_dir(&root)
                    .env("CARGO_INCREMENTAL", incremental)
                    .args(command)
                    .args(["-p", PACKAGE, "--lib"])
                    .args(features);
                c.arg("--target-dir").arg(&target);
                if quiet {
                    c.arg("--quiet");
                }
                c
            };
            let label = format!(
                "CARGO_INCREMENTAL={incremental} cargo {} -p {PACKAGE} {}",
                command.join(" "),
                features.join(" ")
            );
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
    if args.peer || args.peer_only {
        let (ours, theirs) = peer_runs(&root, &target.join("peer"), args.runs)?;
        results.push(("build_release_stable_as_dependency_s".into(), ours.0, ours.1));
        results.push(("build_release_peer_s".into(), theirs.0, theirs.1));
    }
    println!("load after: {}", load());
    println!();
    println!("generated_lines={total}");
    let mut medians = std::collections::BTreeMap::new();
    for (key, times, cpus) in &results {
        let wall: Vec<f64> = times.iter().map(Duration::as_secs_f64).collect();
        let list = |v: &[f64]| v.iter().map(|t| format!("{t:.1}")).collect::<Vec<_>>().join(" ");
        println!(
            "{key}={:.1}  # wall: {}; cpu: {} (median {:.1})",
            median(&wall),
            list(&wall),
            list(cpus),
            median(cpus)
        );
        medians.insert(key.as_str(), (median(&wall), median(cpus)));
    }
    if let (Some(ours), Some(theirs)) =
        (medians.get("build_release_stable_as_dependency_s"), medians.get("build_release_peer_s"))
    {
        println!(
            "build_vs_peer={:.2}  # ours (stable surface) / {} {}; cpu time: {:.2}",
            ours.0 / theirs.0,
            PEER.0,
            PEER.1,
            ours.1 / theirs.1
        );
    }
    Ok(())
}

/// Wall and CPU times of each run.
type Runs = (Vec<Duration>, Vec<f64>);

/// `--peer`: release builds of our stable surface and of the peer crate as dependencies of a
/// scratch package in `dir`, alternating, `runs` of each. Returns (ours, theirs).
fn peer_runs(root: &Path, dir: &Path, runs: usize) -> anyhow::Result<(Runs, Runs)> {
    std::fs::create_dir_all(dir.join("src")).with_context(|| format!("creating {}", dir.display()))?;
    let protocol = root.join("protocol");
    let manifest = format!(
        "# Written by `cargo xtask build-times --peer`: both crates as a user's project depends on them.\n\
         [package]\nname = \"build-times-peer\"\nversion = \"0.0.0\"\nedition = \"2021\"\npublish = false\n\n\
         [dependencies]\n\
         {PACKAGE} = {{ path = {protocol:?} }}\n\
         {} = {{ version = \"{}\", default-features = false, features = [\"types\"] }}\n\n\
         [workspace]\n",
        PEER.0, PEER.1,
    );
    write_if_changed(&dir.join("Cargo.toml"), &manifest)?;
    write_if_changed(&dir.join("src/lib.rs"), "")?;
    if !dir.join("Cargo.lock").exists() {
        // Same serde and serde_json as the workspace; cargo adds what the peer needs.
        std::fs::copy(root.join("Cargo.lock"), dir.join("Cargo.lock")).context("copying Cargo.lock")?;
    }
    let cargo = |package: &str, quiet: bool| {
        let mut c = Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()));
        c.current_dir(dir).env("CARGO_INCREMENTAL", "0").args(["build", "--release", "-p", package]);
        c.arg("--manifest-path").arg(dir.join("Cargo.toml"));
        // Its own target directory, whatever `CARGO_TARGET_DIR` says: the timing forgets
        // fingerprints under it.
        c.arg("--target-dir").arg(dir.join("target"));
        if quiet {
            c.arg("--quiet");
        }
        c
    };
    let packages = [PACKAGE, PEER.0];
    for package in packages {
        println!(
            "cargo build --release -p {package} (as a dependency, in {}): building the dependencies",
            dir.display()
        );
        run_cargo(cargo(package, false))?;
    }
    let mut results: [Runs; 2] = Default::default();
    for run in 1..=runs {
        for (package, result) in packages.iter().zip(results.iter_mut()) {
            forget_package(&dir.join("target/release"), package)?;
            let load_before = load();
            let cpu_before = children_cpu();
            let started = Instant::now();
            run_cargo(cargo(package, true))?;
            let elapsed = started.elapsed();
            let cpu = children_cpu().zip(cpu_before).map(|(after, before)| after - before);
            println!(
                "cargo build --release -p {package} (as a dependency): run {run}: {:.1} s, cpu {} (load before {load_before})",
                elapsed.as_secs_f64(),
                cpu.map_or("?".into(), |c| format!("{c:.1} s"))
            );
            result.0.push(elapsed);
            result.1.extend(cpu);
        }
    }
    let [ours, theirs] = results;
    Ok((ours, theirs))
}

fn write_if_changed(path: &Path, text: &str) -> anyhow::Result<()> {
    if std::fs::read_to_string(path).ok().as_deref() != Some(text) {
        std::fs::write(path, text).with_context(|| format!("writing {}", path.display()))?;
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
    forget_package(profile_dir, PACKAGE)
}

/// Deletes one package's fingerprints in one profile folder.
fn forget_package(profile_dir: &Path, package: &str) -> anyhow::Result<()> {
    let dir = profile_dir.join(".fingerprint");
    let prefix = format!("{package}-");
    let mut removed = 0;
    for entry in std::fs::read_dir(&dir).with_context(|| format!("reading {}", dir.display()))? {
        let entry = entry?;
        if entry.file_name().to_string_lossy().starts_with(&prefix) {
            std::fs::remove_dir_all(entry.path()).with_context(|| format!("removing {}", entry.path().display()))?;
            removed += 1;
        }
    }
    if removed == 0 {
        bail!("no fingerprint of {package} in {}", dir.display());
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
            files.push((
                format!("protocol/src/generated/{}", path.file_name().unwrap_or_default().to_string_lossy()),
                text.lines().count(),
            ));
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
