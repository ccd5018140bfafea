//! The steps of an upgrade: each printed as it starts and ends, timed, and its outcome kept
//! for the report; a failed step does not stop the next.

use std::io::Write as _;
use std::time::{Duration, Instant};

use super::report::{first_line, seconds, Report};

/// How a step ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    Ok,
    Failed(String),
    /// Stopped on purpose, for a person (regen: decisions to add).
    Stopped(String),
    /// Not run, and why.
    Skipped(String),
}

/// The error of a step that stops on purpose ([`Outcome::Stopped`]).
#[derive(Debug)]
pub(super) struct Stop(pub String);

impl std::fmt::Display for Stop {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Stop {}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Step {
    pub name: String,
    pub outcome: Outcome,
    pub took: Duration,
}

/// Runs the steps in order, printing each as it starts and ends.
pub(super) struct Steps {
    pub report: Report,
    pub total: usize,
}

impl Steps {
    /// Runs `f` as the step `name`: `Err` is a failed step, whose message goes to the report.
    pub fn run<T>(&mut self, name: &str, f: impl FnOnce() -> anyhow::Result<T>) -> Option<T> {
        self.run_with(name, || match f() {
            Ok(v) => (Some(v), Ok(())),
            Err(e) => (None, Err(e)),
        })
    }

    /// Runs `f` as the step `name`, which gives what it found whether it failed or not (the
    /// traffic a record that failed on some scenarios wrote) and its verdict.
    pub fn run_with<T>(&mut self, name: &str, f: impl FnOnce() -> (T, anyhow::Result<()>)) -> T {
        let n = self.report.steps.len() + 1;
        println!("\n==> [{n}/{}] {name}", self.total);
        let _ = std::io::stdout().flush();
        let started = Instant::now();
        let (value, verdict) = f();
        let took = started.elapsed();
        let outcome = match verdict {
            Ok(()) => Outcome::Ok,
            Err(e) => match e.downcast_ref::<Stop>() {
                Some(Stop(why)) => Outcome::Stopped(why.clone()),
                None => Outcome::Failed(format!("{e:#}")),
            },
        };
        let said = match &outcome {
            Outcome::Ok => "ok",
            Outcome::Stopped(_) => "stopped",
            _ => "FAILED",
        };
        let why = match &outcome {
            Outcome::Failed(why) | Outcome::Stopped(why) => format!(": {}", first_line(why)),
            _ => String::new(),
        };
        println!("<== [{n}/{}] {name}: {said} ({}){why}", self.total, seconds(took));
        self.report.steps.push(Step { name: name.to_owned(), outcome, took });
        value
    }

    pub fn skip(&mut self, name: &str, why: &str) {
        let n = self.report.steps.len() + 1;
        println!("\n==> [{n}/{}] {name}: skipped ({why})", self.total);
        self.report.steps.push(Step {
            name: name.to_owned(),
            outcome: Outcome::Skipped(why.to_owned()),
            took: Duration::ZERO,
        });
    }
}
