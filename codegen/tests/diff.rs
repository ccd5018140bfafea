//! The protocol changelog between two real codex releases: 0.166.0 (a copy of its schema is in
//! `tests/data/0.166.0/`) and the vendored set (`vendor-schemas/`, codex 0.169.0 when this was
//! written). When `cargo xtask regen` vendors another release, review the new snapshot: it is
//! the changelog from 0.166.0 to that release.

use std::path::Path;

use codex_app_codegen::{diff, vendor};

fn report() -> diff::Report {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let old = vendor::read_vendored(&root.join("tests/data/0.166.0")).unwrap();
    let new = vendor::read_vendored(&root.join("../vendor-schemas")).unwrap();
    diff::diff_sets(&old, &new).unwrap()
}

#[test]
fn changelog_from_0_166_0_to_vendored() {
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
