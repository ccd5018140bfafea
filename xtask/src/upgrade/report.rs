//! The report at the end of an upgrade: the steps and what needs a person.

use std::path::PathBuf;
use std::time::Duration;

use codex_app_codegen::decisions::Missing;

use super::steps::{Outcome, Step};
use super::workspace::Pinned;

/// What a run found: the steps, and what needs a person.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Report {
    pub version: String,
    pub steps: Vec<Step>,
    /// The decisions the schema needs (regen stopped on them).
    pub decisions: Option<Missing>,
    /// `vendor-schemas/CHANGES.md` was written: the release it compares with and its summary.
    pub changes: Option<(String, String)>,
    /// Pinned tests that name another release than [`Report::version`].
    pub pinned: Vec<Pinned>,
    /// Pending snapshots (`.snap.new`, `.pending-snap`), relative to the workspace root.
    pub snapshots: Vec<PathBuf>,
    /// Scenarios `record` could not record: name and the first line of the error.
    pub scenarios: Vec<(String, String)>,
    /// Tests that failed (`cargo test` names).
    pub failed_tests: Vec<String>,
}

impl Report {
    /// Whether every step ran and succeeded, and nothing needs a person.
    pub fn is_done(&self) -> bool {
        self.steps.iter().all(|s| s.outcome == Outcome::Ok)
            && self.decisions.is_none()
            && self.pinned.is_empty()
            && self.snapshots.is_empty()
            && self.scenarios.is_empty()
    }

    pub fn render(&self) -> String {
        let v = &self.version;
        let mut out = format!("\n==== upgrade to codex {v}\n");
        for step in &self.steps {
            let outcome = match &step.outcome {
                Outcome::Ok => "ok".to_owned(),
                Outcome::Failed(why) => format!("FAILED: {}", first_line(why)),
                Outcome::Stopped(why) => format!("stopped: {why}"),
                Outcome::Skipped(why) => format!("skipped: {why}"),
            };
            out.push_str(&format!("  {:<28} {:>8}  {outcome}\n", step.name, seconds(step.took)));
        }
        if let Some((previous, summary)) = &self.changes {
            out.push_str(&format!("\nchangelog since codex {previous} in vendor-schemas/CHANGES.md: {summary}\n"));
        }
        if self.is_done() {
            out.push_str(&format!(
                "\nnothing needs a person: review the diff (git status) and commit the upgrade to codex {v}\n"
            ));
            return out;
        }
        out.push_str("\nneeds a person:\n");
        for step in &self.steps {
            if let Outcome::Failed(why) = &step.outcome {
                out.push_str(&format!("- step `{}` failed: {}\n", step.name, indent_rest(why)));
            }
        }
        if let Some(missing) = &self.decisions {
            out.push_str(&format!(
                "- decisions to add: {} (listed above, with the lines to paste into {}); add them, then run \
                 `cargo xtask upgrade {v}` again\n",
                missing.len(),
                codex_app_codegen::decisions::DECISIONS_FILE
            ));
        }
        if !self.scenarios.is_empty() {
            out.push_str(&format!(
                "- scenarios that no longer fit codex {v} ({}): change their JSON in xtask/src/record/scenarios.rs to what \
                 vendor-schemas/CHANGES.md says, then `cargo xtask record <scenario>`\n",
                self.scenarios.len()
            ));
            for (name, error) in &self.scenarios {
                out.push_str(&format!("    {name}: {error}\n"));
            }
        }
        if !self.pinned.is_empty() {
            let regenerated = self.steps.iter().any(|s| s.name == "regen" && s.outcome == Outcome::Ok);
            out.push_str(&format!(
                "- pinned tests to move ({}){}: check them against the types of codex {v} and change the version in their \
                 `pinned_to_codex!`\n",
                self.pinned.len(),
                if regenerated { "" } else { ", once regen goes through" },
            ));
            for p in &self.pinned {
                out.push_str(&format!("    {}:{}: pinned to codex {}\n", p.file.display(), p.line, p.version));
            }
        }
        if !self.snapshots.is_empty() {
            out.push_str(&format!("- snapshots to review: {} pending (`cargo insta review`)\n", self.snapshots.len()));
            for s in &self.snapshots {
                out.push_str(&format!("    {}\n", s.display()));
            }
        }
        if !self.failed_tests.is_empty() {
            const SHOWN: usize = 20;
            out.push_str(&format!("- failing tests ({}):\n", self.failed_tests.len()));
            for t in self.failed_tests.iter().take(SHOWN) {
                out.push_str(&format!("    {t}\n"));
            }
            if self.failed_tests.len() > SHOWN {
                out.push_str(&format!(
                    "    ... and {} more (see the test output above)\n",
                    self.failed_tests.len() - SHOWN
                ));
            }
        }
        out
    }
}

pub(super) fn first_line(text: &str) -> &str {
    text.lines().next().unwrap_or_default()
}

fn indent_rest(text: &str) -> String {
    text.lines().collect::<Vec<_>>().join("\n    ")
}

pub(super) fn seconds(d: Duration) -> String {
    format!("{:.1}s", d.as_secs_f64())
}

#[cfg(test)]
mod tests {
    use codex_app_codegen::decisions::{NullProposal, ResponseProposal};

    use super::*;

    fn step(name: &str, outcome: Outcome) -> Step {
        Step { name: name.to_owned(), outcome, took: Duration::from_millis(1500) }
    }

    #[test]
    fn report_of_a_run_that_stopped_on_decisions() {
        let missing = Missing {
            codex_version: "0.171.0".into(),
            responses: vec![ResponseProposal {
                method: "a/b".into(),
                direction: "ClientRequest",
                proposal: "any".into(),
                why: String::new(),
            }],
            null_distinct_from_absent: vec![NullProposal { key: "T.m".into(), proposal: true, doc: String::new() }],
        };
        let report = Report {
            version: "0.171.0".into(),
            steps: vec![
                step("install codex 0.171.0", Outcome::Ok),
                step("regen", Outcome::Stopped("2 decision(s) to add; nothing was written".into())),
                step("record", Outcome::Skipped("regen did not finish".into())),
            ],
            decisions: Some(missing),
            pinned: vec![Pinned { file: "protocol/tests/wire.rs".into(), line: 6, version: "0.169.0".into() }],
            ..Report::default()
        };
        assert!(!report.is_done());
        let text = report.render();
        for expected in [
            "  regen                            1.5s  stopped: 2 decision(s) to add; nothing was written",
            "  record                           1.5s  skipped: regen did not finish",
            "- decisions to add: 2 (listed above, with the lines to paste into vendor-schemas/decisions.json); add them, then run `cargo xtask upgrade 0.171.0` again",
            "    protocol/tests/wire.rs:6: pinned to codex 0.169.0",
        ] {
            assert!(text.contains(expected), "{expected:?} not in:\n{text}");
        }
        assert!(!text.contains("failed"), "a stop is not a failure:\n{text}");
    }

    #[test]
    fn report_of_a_run_that_went_through() {
        let mut report = Report {
            version: "0.171.0".into(),
            steps: ["install codex 0.171.0", "regen", "record", "drift", "tests codex-app-traffic"]
                .map(|s| step(s, Outcome::Ok))
                .into(),
            changes: Some(("0.169.0".into(), "3 breaking, 10 compatible".into())),
            ..Report::default()
        };
        assert!(report.is_done());
        let text = report.render();
        assert!(text.contains("nothing needs a person"), "{text}");
        assert!(
            text.contains("changelog since codex 0.169.0 in vendor-schemas/CHANGES.md: 3 breaking, 10 compatible"),
            "{text}"
        );

        report.steps[2].outcome = Outcome::Failed("2 scenario(s) failed: dynamic_tool, lifecycle\nmore".into());
        report.scenarios = vec![("dynamic_tool".into(), "request `thread/start`: does not fit".into())];
        report.snapshots = vec!["traffic/tests/snapshots/it__snapshots__lifecycle.snap.new".into()];
        report.failed_tests = vec!["codex-app-traffic: snapshots".into()];
        assert!(!report.is_done());
        let text = report.render();
        for expected in [
            "  record                           1.5s  FAILED: 2 scenario(s) failed: dynamic_tool, lifecycle\n",
            "- scenarios that no longer fit codex 0.171.0 (1)",
            "    dynamic_tool: request `thread/start`: does not fit",
            "- snapshots to review: 1 pending (`cargo insta review`)",
            "- failing tests (1):\n    codex-app-traffic: snapshots",
            "- step `record` failed: 2 scenario(s) failed: dynamic_tool, lifecycle\n    more",
        ] {
            assert!(text.contains(expected), "{expected:?} not in:\n{text}");
        }
    }
}
