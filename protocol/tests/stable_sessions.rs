//! The recorded sessions, checked as an application without the experimental API checks its
//! own: the drift check over the protocol crate built without `experimental`.
//!
//! Every fixture of every recorded release (`traffic/fixtures/<release>/`, recorded from the
//! real codex by `cargo xtask record`) has zero drift of the types. What codex sends of its
//! experimental API, to the clients that did not opt in too, is reported apart as
//! `experimental`, with its path and what the schema calls it; the list per release is a
//! snapshot (`snapshots/stable_sessions_experimental@<release>.snap`), so a release that leaks
//! more, or a change that stops telling these members apart, shows in review. Each session
//! written again as another JSON writer might (`traffic/tests/rewrite.rs`) gets the same
//! findings, the experimental members among them.

#[test]
fn this_build_has_only_the_stable_types() {
    // `mock/experimentalMethod` exists only in the experimental API: the stable message enum
    // reads it as unknown.
    let line = r#"{"id":1,"method":"mock/experimentalMethod","params":{}}"#;
    let request: codex_app_protocol::ClientRequest = serde_json::from_str(line).unwrap();
    assert!(
        matches!(request, codex_app_protocol::ClientRequest::Unrecognized { .. }),
        "built with `experimental`: the test checks nothing"
    );
}

// The sessions' snapshots are what the types generated from one release report: after a
// regen from a release out of the range they are left out, as the tests written for it are.
codex_app_protocol::__test_support::written_for_codex! { "0.171.0",
    use std::path::{Path, PathBuf};

    #[path = "../../traffic/tests/rewrite.rs"]
    mod rewrite;

    use super::codex_app_traffic::drift::{self, Kind};
    use super::codex_app_traffic::transcript::{self, Dir};
    use super::codex_app_traffic::Format;

    /// `traffic/fixtures/<release>/` of every recorded release, oldest first.
    fn releases() -> Vec<(String, PathBuf)> {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../traffic/fixtures");
        let mut out: Vec<(String, PathBuf)> = std::fs::read_dir(&root)
            .unwrap_or_else(|e| panic!("{}: {e}", root.display()))
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.is_dir())
            .map(|p| (p.file_name().unwrap().to_string_lossy().into_owned(), p))
            .collect();
        out.sort_by_key(|(version, _)| codex_app_protocol::availability::Release::parse(version));
        assert!(out.len() >= 2, "fixtures of the floor and the newest release are recorded in {}", root.display());
        out
    }

    fn transcripts(dir: &Path) -> Vec<PathBuf> {
        let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
            .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|x| x == "ndjson"))
            .collect();
        files.sort();
        assert!(!files.is_empty(), "{} holds no transcript", dir.display());
        files
    }

    /// Whether the session's `initialize` opted into the experimental API.
    fn opts_in(path: &Path) -> bool {
        let entries = transcript::read_file(path, Format::Transcript).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        entries.iter().any(|e| {
            e.dir == Dir::C2s
                && serde_json::from_str::<serde_json::Value>(&e.line)
                    .is_ok_and(|v| v["method"] == "initialize" && v["params"]["capabilities"]["experimentalApi"] == true)
        })
    }

    #[test]
    fn real_sessions_have_no_drift_with_the_stable_types() {
        let mut stable_sessions = 0;
        let mut choices = rewrite::Choices(0x9E37_79B9_7F4A_7C15);
        for (version, dir) in releases() {
            let mut reports = Vec::new();
            for path in transcripts(&dir) {
                let report =
                    drift::check_file(&path, Format::Transcript).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
                stable_sessions += usize::from(!opts_in(&path));
                // Written by another writer: the same findings, but the details' columns.
                let mut others = transcript::read_file(&path, Format::Transcript).unwrap();
                rewrite::rewrite_all(others.iter_mut().map(|e| &mut e.line), &mut choices);
                let found = |r: &drift::Report| -> Vec<String> {
                    r.findings
                        .iter()
                        .map(|f| format!("{} {} {} {:?} {:?} {}", f.number, f.dir, f.kind, f.method, f.path, f.expected))
                        .collect()
                };
                assert_eq!(
                    found(&drift::check(&others, Format::Transcript)),
                    found(&report),
                    "{}, written by another writer",
                    path.display()
                );
                reports.push((format!("{version}/{}", path.file_name().unwrap().to_string_lossy()), report));
            }
            let drift: usize = reports.iter().map(|(_, r)| r.drift_count()).sum();
            assert_eq!(drift, 0, "codex {version}: drift with the stable types:\n{}", drift::render(&reports));

            // What codex sent of its experimental API, by path; each once per release.
            let mut listed: Vec<String> = reports
                .iter()
                .flat_map(|(_, r)| r.experimental())
                .map(|f| {
                    let path = f.path.as_ref().map_or_else(String::new, |p| format!(" at {p}"));
                    format!("{} {} `{}`{path}: {}", f.dir, f.kind, f.method.as_deref().unwrap_or("?"), f.detail)
                })
                .collect();
            listed.sort();
            listed.dedup();
            assert!(
                reports.iter().flat_map(|(_, r)| &r.findings).all(|f| f.kind != Kind::Experimental || !f.is_drift()),
                "an experimental finding counted as drift"
            );
            let text = format!(
                "codex {version}: what its sessions carry of the experimental API, read with the stable types\n\n{}\n",
                listed.join("\n")
            );
            // Named alike in both test builds that hold this module (`it` and the crate's own).
            insta::with_settings!({ snapshot_suffix => version.clone(), prepend_module_to_snapshot => false }, {
                insta::assert_snapshot!("stable_sessions_experimental", text);
            });
        }
        assert!(stable_sessions > 0, "no recorded session without the experimental opt-in");
    }

    /// The experimental members are told apart only where the schema has them: a member no release
    /// has, beside one codex leaks, is still drift.
    #[test]
    fn an_unknown_member_beside_a_leaked_one_is_still_drift() {
        let dir = releases().pop().unwrap().1;
        let path = dir.join("lifecycle.ndjson");
        let entries = transcript::read_file(&path, Format::Transcript).unwrap();
        let report = drift::check(&entries, Format::Transcript);
        let leaked = report.experimental().next().expect("the newest release's lifecycle leaks an experimental member");
        let number = leaked.number;
        let member = leaked.path.as_ref().and_then(|p| p.to_string().rsplit('.').next().map(str::to_owned)).unwrap();
        // The same line with a member beside the leaked one that no schema has.
        let entries: Vec<_> = entries
            .into_iter()
            .map(|mut e| {
                if e.number == number {
                    let needle = format!("\"{member}\":");
                    e.line = e.line.replacen(&needle, &format!("\"noSuchMemberAnywhere\":1,{needle}"), 1);
                }
                e
            })
            .collect();
        let report = drift::check(&entries, Format::Transcript);
        let drift: Vec<String> = report.drift().map(ToString::to_string).collect();
        assert_eq!(drift.len(), 1, "{drift:?}");
        assert!(drift[0].contains("unknown-field") && drift[0].contains("noSuchMemberAnywhere"), "{drift:?}");
        assert!(report.experimental().any(|f| f.number == number), "the leaked member is still reported apart");
    }
}
