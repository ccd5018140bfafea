//! The report at the end of an upgrade: the steps, what the release added and what its
//! traffic showed, and what needs a person.

use std::path::PathBuf;
use std::time::Duration;

use codex_app_codegen::decisions::{Missing, UndecidedNullable};

use super::steps::{Outcome, Step};
use super::uses::Broken;

/// What a run found: the steps, and what needs a person.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Report {
    pub version: String,
    pub steps: Vec<Step>,
    /// The decisions the schema needs (regen stopped on them).
    pub decisions: Option<Missing>,
    /// Optional nullable members the release adds that no decision covers and no description
    /// settles: regen types them `Option<T>`; whether codex declares them `Option<Option<T>>`
    /// is for a person to read in its source.
    pub undecided_nullables: Vec<UndecidedNullable>,
    /// `vendor-schemas/CHANGES.md` was written: the release it compares with and its summary.
    pub changes: Option<(String, String)>,
    /// The changelog's compatible changes, one line each.
    pub added: Vec<String>,
    /// The changelog's breaking changes, each with the functions that use it.
    pub broken: Vec<Broken>,
    /// The scenarios `record` recorded: name and what it counted.
    pub recorded: Vec<String>,
    /// `drift` ran on the recorded fixtures and found none.
    pub drift_free: bool,
    /// Snapshots the tests wrote that were not there before (a new release's own), relative to
    /// the workspace root.
    pub new_snapshots: Vec<PathBuf>,
    /// Pending snapshots (`.snap.new`, `.pending-snap`), relative to the workspace root.
    pub snapshots: Vec<PathBuf>,
    /// Scenarios `record` could not record: name and the first line of the error.
    pub scenarios: Vec<(String, String)>,
    /// Tests that failed (`cargo test` names).
    pub failed_tests: Vec<String>,
}

impl Report {
    /// Whether every step ran and succeeded (or was skipped because there was nothing to do
    /// for it), and nothing needs a person: no breaking change.
    pub fn is_done(&self) -> bool {
        self.steps.iter().all(|s| s.outcome == Outcome::Ok || s.name == NOTHING_BREAKING.0)
            && self.decisions.is_none()
            && self.broken.is_empty()
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
        if !self.added.is_empty() {
            out.push_str(&format!("\nadded by codex {v} ({}, compatible):\n", self.added.len()));
            for line in &self.added {
                out.push_str(&format!("    {line}\n"));
            }
        }
        if !self.recorded.is_empty() {
            out.push_str(&format!(
                "\ntraffic of codex {v}: {} scenario(s) recorded into traffic/fixtures/{v}/, {}\n",
                self.recorded.len(),
                if self.drift_free { "no drift" } else { "drift or an unreadable fixture (see the drift step)" }
            ));
            for line in &self.recorded {
                out.push_str(&format!("    {line}\n"));
            }
            let ran_tests = self
                .steps
                .iter()
                .any(|s| s.name.starts_with("tests ") && matches!(s.outcome, Outcome::Ok | Outcome::Failed(_)));
            if ran_tests && self.snapshots.is_empty() {
                out.push_str(
                    "    snapshots: every existing one unchanged (the traffic reads as the previous release's did)\n",
                );
            }
            for s in &self.new_snapshots {
                out.push_str(&format!("    new snapshot: {}\n", s.display()));
            }
        }
        // To decide, but the upgrade stands without it: such a member is `Option<T>`, which
        // reads and writes every value codex sends or takes, as codex's own `Option<T>` would.
        if !self.undecided_nullables.is_empty() {
            out.push_str(&format!(
                "\noptional nullable members new in codex {v} ({}), for a decision: none is in {file} and no description \
                 says what its `null` means, so each is `Option<T>` (an explicit `null` reads as absent). Read its \
                 declaration in codex's protocol source (codex-rs/app-server-protocol/src/protocol/v2/, tag rust-v{v}): \
                 `Option<Option<T>>` with double-option serde helpers is {{\"distinct\": true, \"why\": \"codex declares \
                 ...\"}}, a plain `Option<T>` is {{\"distinct\": false, ...}}; add the entries to null_distinct_from_absent, \
                 then `cargo xtask regen`\n",
                self.undecided_nullables.len(),
                file = codex_app_codegen::decisions::DECISIONS_FILE
            ));
            for n in &self.undecided_nullables {
                let doc = if n.doc.is_empty() { "no description".to_owned() } else { n.doc.clone() };
                out.push_str(&format!("    {} at {} ({doc})\n", n.key, n.pointer));
            }
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
        if !self.broken.is_empty() {
            let used = self.broken.iter().filter(|b| !b.uses.is_empty()).count();
            out.push_str(&format!(
                "- breaking changes in codex {v} ({}, {used} used here; vendor-schemas/CHANGES.md says what each breaks): \
                 the types still have what codex {v} removed, for the older releases of the range, so the code below \
                 compiles; change it to what codex {v} has (or keep it for older releases), then commit\n",
                self.broken.len()
            ));
            for b in &self.broken {
                out.push_str(&format!("    {}\n", b.change));
                if b.uses.is_empty() {
                    out.push_str("        used by no function of the workspace\n");
                }
                for u in &b.uses {
                    out.push_str(&format!(
                        "        {}:{}: {} {}\n",
                        u.file.display(),
                        u.line,
                        if u.test { "test" } else { "fn" },
                        u.function
                    ));
                }
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

/// The step that looks for what uses the breaking changes, and why it is skipped when there
/// is nothing to look for.
pub const NOTHING_BREAKING: (&str, &str) = ("what uses the breaking changes", "the changelog finds nothing breaking");

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
    use codex_app_codegen::decisions::{NullProposal, ResponseProposal, UndecidedNullable};

    use super::super::uses::Use;
    use super::*;

    /// Fails naming the first of `expected` that `text` lacks, with the whole text.
    fn assert_contains(text: &str, expected: &[&str]) {
        for e in expected {
            assert!(text.contains(e), "{e:?} not in:\n{text}");
        }
    }

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
            broken: vec![Broken {
                change: "ThreadListParams.cursor: field `ThreadListParams.cursor` removed (was `Option<String>`) — breaks senders"
                    .into(),
                uses: vec![Use {
                    file: "client/tests/typed.rs".into(),
                    line: 40,
                    function: "lists_by_cursor".into(),
                    test: true,
                }],
            }],
            ..Report::default()
        };
        assert!(!report.is_done());
        let text = report.render();
        assert_contains(
            &text,
            &[
                "  regen                            1.5s  stopped: 2 decision(s) to add; nothing was written",
                "  record                           1.5s  skipped: regen did not finish",
                "- decisions to add: 2 (listed above, with the lines to paste into vendor-schemas/decisions.json); add them, then run `cargo xtask upgrade 0.171.0` again",
                "- breaking changes in codex 0.171.0 (1, 1 used here;",
                "    ThreadListParams.cursor: field `ThreadListParams.cursor` removed (was `Option<String>`) — breaks senders\n        client/tests/typed.rs:40: test lists_by_cursor\n",
            ],
        );
        assert!(!text.contains("failed"), "a stop is not a failure:\n{text}");
    }

    /// A release that adds optional nullable members no decision covers: regen went through,
    /// and the report lists each one for a decision, with its JSON pointer; the upgrade is done
    /// all the same (each member is `Option<T>` until decided).
    #[test]
    fn report_lists_new_optional_nullable_members_for_a_decision() {
        let mut report = Report {
            version: "0.172.0".into(),
            steps: ["install codex 0.172.0", "regen", "record", "drift"].map(|s| step(s, Outcome::Ok)).into(),
            drift_free: true,
            undecided_nullables: vec![
                UndecidedNullable {
                    key: "ThreadStartParams.budget".into(),
                    pointer: "#/definitions/v2/ThreadStartParams/properties/budget".into(),
                    doc: String::new(),
                },
                UndecidedNullable {
                    key: "TurnStartParams.note".into(),
                    pointer: "#/definitions/v2/TurnStartParams/properties/note".into(),
                    doc: "A note.".into(),
                },
            ],
            ..Report::default()
        };
        assert!(report.is_done(), "the upgrade stands: each member is `Option<T>` until decided");
        let text = report.render();
        assert_contains(
            &text,
            &[
                "\noptional nullable members new in codex 0.172.0 (2), for a decision: none is in vendor-schemas/decisions.json",
                "tag rust-v0.172.0",
                "    ThreadStartParams.budget at #/definitions/v2/ThreadStartParams/properties/budget (no description)\n",
                "    TurnStartParams.note at #/definitions/v2/TurnStartParams/properties/note (A note.)\n",
            ],
        );
        assert!(text.contains("nothing needs a person"), "{text}");
        report.undecided_nullables.clear();
        assert!(!report.render().contains("for a decision"));
    }

    #[test]
    fn report_of_a_run_that_went_through() {
        let mut report = Report {
            version: "0.171.0".into(),
            steps: ["install codex 0.171.0", "regen", "record", "drift", "tests codex-app-traffic"]
                .map(|s| step(s, Outcome::Ok))
                .into(),
            changes: Some(("0.169.0".into(), "0 breaking, 1 compatible".into())),
            added: vec!["thread/list: new optional field `ThreadListParams.x`: `Option<String>`".into()],
            recorded: vec!["lifecycle           12 c2s   40 s2c    3.21s".into()],
            drift_free: true,
            new_snapshots: vec!["traffic/tests/snapshots/it__older_servers__drift@0.169.0.snap".into()],
            ..Report::default()
        };
        report.steps.insert(2, step(NOTHING_BREAKING.0, Outcome::Skipped(NOTHING_BREAKING.1.into())));
        assert!(report.is_done(), "nothing breaking is nothing to do");
        let text = report.render();
        assert_contains(
            &text,
            &[
                "changelog since codex 0.169.0 in vendor-schemas/CHANGES.md: 0 breaking, 1 compatible",
                "added by codex 0.171.0 (1, compatible):\n    thread/list: new optional field `ThreadListParams.x`",
                "traffic of codex 0.171.0: 1 scenario(s) recorded into traffic/fixtures/0.171.0/, no drift\n    lifecycle  ",
                "    snapshots: every existing one unchanged",
                "    new snapshot: traffic/tests/snapshots/it__older_servers__drift@0.169.0.snap",
                "nothing needs a person",
            ],
        );
        report.steps.remove(2);

        report.steps[2].outcome = Outcome::Failed("2 scenario(s) failed: dynamic_tool, lifecycle\nmore".into());
        report.scenarios = vec![("dynamic_tool".into(), "request `thread/start`: does not fit".into())];
        report.snapshots = vec!["traffic/tests/snapshots/it__snapshots__lifecycle.snap.new".into()];
        report.failed_tests = vec!["codex-app-traffic: snapshots".into()];
        assert!(!report.is_done());
        let text = report.render();
        assert_contains(
            &text,
            &[
                "  record                           1.5s  FAILED: 2 scenario(s) failed: dynamic_tool, lifecycle\n",
                "- scenarios that no longer fit codex 0.171.0 (1)",
                "    dynamic_tool: request `thread/start`: does not fit",
                "- snapshots to review: 1 pending (`cargo insta review`)",
                "- failing tests (1):\n    codex-app-traffic: snapshots",
                "- step `record` failed: 2 scenario(s) failed: dynamic_tool, lifecycle\n    more",
            ],
        );
    }
}
