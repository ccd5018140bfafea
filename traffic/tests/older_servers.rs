//! Traffic of older codex releases, checked with the types of the current one: what a client
//! built on this crate meets when it talks to the previous release(s).
//!
//! Every folder of `fixtures/` other than the one of `CODEX_VERSION` is an older server's
//! traffic, kept when the project moved on. Its drift report (findings and table) is a
//! snapshot per release (`it__older_servers__drift@<version>.snap`), which names no other
//! release: the release an upgrade leaves behind adds its own, and an older one's changes only
//! when the new types read its traffic differently (then `cargo insta review` shows how). The report is not
//! expected to be empty; it is expected to say exactly what changed for such a client
//! (members the new types require and the old server does not send, values the old server
//! sends that the new types do not know, ...). For a release of the supported range
//! (`availability::FLOOR` to `CODEX_VERSION`) it must hold no undecodable server line.

// The snapshots are the reports of the types generated from one release: after a regen from
// a release out of the range they are left out, as the tests written for it are.
codex_app_protocol::__test_support::written_for_codex! { "0.171.0",
    use codex_app_traffic::drift;
    use codex_app_traffic::Format;

    /// `fixtures/<version>/` for every recorded release but the current one, oldest first.
    fn older_releases() -> Vec<(String, std::path::PathBuf)> {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures");
        let mut out: Vec<(String, std::path::PathBuf)> = std::fs::read_dir(&root)
            .unwrap_or_else(|e| panic!("{}: {e}", root.display()))
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.is_dir())
            .map(|p| (p.file_name().unwrap().to_string_lossy().into_owned(), p))
            .filter(|(version, _)| version != codex_app_protocol::CODEX_VERSION)
            .collect();
        out.sort_by_key(|(version, _)| version.split('.').map(|n| n.parse::<u64>().unwrap_or(0)).collect::<Vec<_>>());
        out
    }

    #[test]
    fn older_servers_traffic_with_the_current_types() {
        for (version, dir) in older_releases() {
            let mut files: Vec<_> = std::fs::read_dir(&dir)
                .unwrap()
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| p.extension().is_some_and(|x| x == "ndjson"))
                .collect();
            files.sort();
            assert!(!files.is_empty(), "{} holds no transcript", dir.display());
            let reports: Vec<(String, drift::Report)> = files
                .iter()
                .map(|path| {
                    let report =
                        drift::check_file(path, Format::Transcript).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
                    (format!("{version}/{}", path.file_name().unwrap().to_string_lossy()), report)
                })
                .collect();
            // Every release of the supported range: not one server line fails to decode.
            let in_range = codex_app_protocol::availability::Release::parse(&version)
                .is_some_and(|r| r.support() == codex_app_protocol::availability::Support::InRange);
            if in_range {
                let undecodable: Vec<String> = reports
                    .iter()
                    .flat_map(|(file, r)| {
                        r.findings
                            .iter()
                            .filter(|f| f.dir == codex_app_traffic::Dir::S2c && f.kind == drift::Kind::Undecodable)
                            .map(move |f| format!("{file}:{f}"))
                    })
                    .collect();
                assert!(
                    undecodable.is_empty(),
                    "codex {version} is in the supported range ({} to {}), but its server lines do not decode:\n{}",
                    codex_app_protocol::availability::FLOOR,
                    codex_app_protocol::CODEX_VERSION,
                    undecodable.join("\n")
                );
            }
            let text = format!("codex {version} traffic, decoded with the current types\n\n{}", drift::render(&reports));
            insta::with_settings!({ snapshot_suffix => version.clone(), prepend_module_to_snapshot => true }, {
                insta::assert_snapshot!("drift", text);
            });
        }
    }
}
