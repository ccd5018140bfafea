//! The protocol changelog between two real codex releases, 0.166.0 and 0.171.0 (copies of their
//! schemas are in `tests/data/`): fixed releases, so that vendoring another one changes no
//! snapshot here.

use std::path::Path;

use codex_app_changelog as diff;
use codex_app_codegen::vendor;

fn report() -> diff::Report {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let old = vendor::read_vendored(&root.join("tests/data/0.166.0")).unwrap();
    let new = vendor::read_vendored(&root.join("tests/data/0.171.0")).unwrap();
    diff::diff_sets(&old, &new).unwrap()
}

#[test]
fn changelog_from_0_166_0_to_0_171_0() {
    insta::assert_snapshot!(report().to_markdown());
}

#[test]
fn json_matches_markdown() {
    let r = report();
    let json: serde_json::Value = serde_json::from_str(&r.to_json()).unwrap();
    assert_eq!(json["changes"].as_array().unwrap().len(), r.changes.len());
    let c = &r.counts;
    assert_eq!(c.breaking + c.compatible + c.rust_api, r.changes.len());
    assert_eq!(json["counts"]["breaking"], c.breaking);
}

/// The changes the comparison reports, on bundles written for each rule.
#[path = "it/changes.rs"]
mod changes;
/// How a changed item is named.
#[path = "it/path.rs"]
mod path;
