//! The Rust blocks users copy, compiled and run by `cargo test` (README's test command):
//! README.md, the guides in `docs/` and the published crates' READMEs. Each file is the doc
//! comment of an item rustdoc sees only when it collects doc tests (`cfg(doctest)`), so every
//! `rust` block in it is a doc test: run where it can run, compiled only (`no_run`) where it
//! needs a codex server. Blocks of other languages (`sh`, `toml`, `text`) are left alone.
//!
//! A new guide with Rust blocks gets a line here.

#[cfg(doctest)]
#[doc = include_str!("../../README.md")]
pub struct ReadMe;

#[cfg(doctest)]
#[doc = include_str!("../../docs/protocol.md")]
pub struct ProtocolGuide;

#[cfg(doctest)]
#[doc = include_str!("../../docs/client.md")]
pub struct ClientGuide;

#[cfg(doctest)]
#[doc = include_str!("../../docs/drift-check.md")]
pub struct DriftCheckGuide;

#[cfg(doctest)]
#[doc = include_str!("../../docs/testing-your-app.md")]
pub struct TestingYourAppGuide;

#[cfg(doctest)]
#[doc = include_str!("../../protocol/README.md")]
pub struct ProtocolReadMe;

#[cfg(doctest)]
#[doc = include_str!("../../client/README.md")]
pub struct ClientReadMe;

#[cfg(doctest)]
#[doc = include_str!("../../traffic/README.md")]
pub struct TrafficReadMe;

/// What the READMEs say of the supported range and the crates' version, against the protocol
/// crate's constants: a regen that moves the range or the codex minor fails here until the
/// READMEs say so too.
#[cfg(test)]
mod tests {
    use codex_app_protocol::{availability::FLOOR, CODEX_VERSION};

    const READMES: [&str; 4] = ["README.md", "protocol/README.md", "client/README.md", "traffic/README.md"];

    fn read(readme: &str) -> String {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..").join(readme);
        std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
    }

    #[test]
    fn every_readme_states_the_supported_range() {
        let range = format!("codex {FLOOR} to {CODEX_VERSION}");
        for readme in READMES {
            assert!(read(readme).contains(&range), "{readme} does not say the crates serve {range}");
        }
    }

    #[test]
    fn every_readme_asks_for_the_crates_version() {
        let minor = CODEX_VERSION.split('.').nth(1).expect("CODEX_VERSION is a semver version");
        let requirement = format!("\"0.{minor}\"");
        for readme in READMES {
            let text = read(readme);
            assert!(text.contains(&requirement), "{readme} does not ask for version {requirement}");
            let stale: Vec<&str> = text
                .match_indices("\"0.")
                .map(|(i, _)| &text[i..])
                .filter_map(|rest| rest.get(..rest[1..].find('"')? + 2))
                .filter(|version| *version != requirement)
                .collect();
            assert!(stale.is_empty(), "{readme} asks for other versions of the crates: {stale:?}");
        }
    }
}
