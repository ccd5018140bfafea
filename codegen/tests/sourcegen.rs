//! The committed generated code is what the vendored schema gives (rust-analyzer's sourcegen
//! test): regenerating in memory must reproduce `protocol/src/generated/` (and the conformance
//! suite's type table) exactly.

use std::path::Path;

#[test]
fn generated_code_is_fresh() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let set = codex_app_codegen::vendor::read_vendored(&root.join("vendor-schemas")).unwrap();
    // As regen generates it: the vendored release with the history of the supported range,
    // folded from the archive of releases from the committed floor, which is what the committed
    // history says.
    let text = std::fs::read_to_string(root.join(codex_app_codegen::history::HISTORY_FILE)).unwrap();
    let floor = codex_app_codegen::history::History::from_json(&text).unwrap().floor;
    let plain = codex_app_codegen::Settings::codex().unwrap().proposing();
    let archive = root.join(codex_app_codegen::releases::RELEASES_DIR);
    let releases = codex_app_codegen::releases::read(&archive, &set, &floor).unwrap();
    let history = codex_app_codegen::releases::history(&releases, &set, &floor, &plain).unwrap();
    assert!(
        history.to_json() == text,
        "{} is not what the archive gives: run `cargo xtask regen`",
        codex_app_codegen::history::HISTORY_FILE
    );
    // The history agrees with the vendored release's own surface, read apart from the fold:
    // every key it says the release has (no `until`) names an item of the release, and none it
    // says the release lacks does. (What it lacks is not always in the range's types: a value
    // of an enum that became a string, a member of a struct that became a union, has no place
    // there; the history keeps it, the availability tables do not.)
    let newest: std::collections::BTreeSet<_> =
        codex_app_codegen::history::listing(&codex_app_codegen::build_ir_with(&set, &plain).unwrap())
            .into_iter()
            .map(|listed| listed.key)
            .collect();
    let disagree: Vec<String> = history
        .items
        .iter()
        .filter(|(key, a)| a.availability.until.is_some() == newest.contains(*key))
        .map(|(key, a)| format!("{key} ({a:?})"))
        .collect();
    assert!(
        history.items.len() > 100 && disagree.is_empty(),
        "of {} keys of the history, these disagree with the vendored release's surface: {disagree:?}",
        history.items.len()
    );
    let settings =
        codex_app_codegen::Settings { history: Some(history), ..codex_app_codegen::Settings::codex().unwrap() };
    let (files, _) = codex_app_codegen::generate_with(&set, "cargo xtask regen", &settings).unwrap();
    let mut stale = Vec::new();
    for file in &files {
        let committed = std::fs::read_to_string(root.join(&file.path)).unwrap_or_default();
        if committed != file.contents {
            stale.push(file.path.display().to_string());
        }
    }
    assert!(stale.is_empty(), "{{{}}} are stale: run `cargo xtask regen`", stale.join(","));
    for dir in codex_app_codegen::GENERATED_DIRS {
        let mut on_disk: Vec<String> = std::fs::read_dir(root.join(dir))
            .unwrap()
            .map(|e| format!("{dir}/{}", e.unwrap().file_name().to_string_lossy()))
            .collect();
        on_disk.sort();
        let mut expected: Vec<String> = files
            .iter()
            .filter(|f| f.path.parent() == Some(Path::new(dir)))
            .map(|f| f.path.display().to_string())
            .collect();
        expected.sort();
        assert_eq!(on_disk, expected, "{dir}/ holds files the generator does not write: run `cargo xtask regen`");
    }
}
