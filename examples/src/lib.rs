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
/// READMEs say so too. And the guides and maps state results, not how they came about: no
/// dates, issue numbers or commit hashes (git's history has those).
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

    /// The guides and maps: the READMEs, ARCHITECTURE.md and `docs/*.md`.
    fn guides() -> Vec<String> {
        let docs = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs");
        let mut guides: Vec<String> = std::fs::read_dir(&docs)
            .unwrap_or_else(|e| panic!("{}: {e}", docs.display()))
            .map(|entry| entry.expect("an entry of docs/").file_name().to_string_lossy().into_owned())
            .filter(|name| name.ends_with(".md"))
            .map(|name| format!("docs/{name}"))
            .collect();
        guides.sort();
        guides.extend(READMES.iter().chain(&["ARCHITECTURE.md"]).map(|file| file.to_string()));
        guides
    }

    /// What in one line of a guide belongs in git's history: a date (`2026-11-28`), an issue
    /// number (`issue 34`, and `#34` outside code), a commit hash (a word of 7 to 12 lowercase
    /// hex characters, digits and letters both, such as `a0012d7`; longer ones, such as sha256
    /// sums, are not commits named in prose). `fenced`: the line is in a fenced code block.
    fn history_marks(line: &str, fenced: bool) -> Vec<String> {
        let chars: Vec<char> = line.to_lowercase().chars().collect();
        let at = |i: usize, c: char| chars.get(i) == Some(&c);
        let digits = |i: usize, n: usize| chars.get(i..i + n).is_some_and(|s| s.iter().all(char::is_ascii_digit));
        let number = |i: usize| chars[i..].iter().take_while(|c| c.is_ascii_digit()).collect::<String>();
        let mut marks = Vec::new();
        for i in 0..chars.len() {
            if digits(i, 4) && at(i + 4, '-') && digits(i + 5, 2) && at(i + 7, '-') && digits(i + 8, 2) {
                marks.push(format!("date {}", chars[i..i + 10].iter().collect::<String>()));
            }
        }
        for (i, _) in chars.iter().enumerate().filter(|&(i, _)| i == 0 || !chars[i - 1].is_alphanumeric()) {
            for word in ["issue ", "issues "] {
                let after = i + word.len();
                if chars[i..].iter().copied().take(word.len()).eq(word.chars()) && digits(after, 1) {
                    marks.push(format!("issue {}", number(after)));
                }
            }
        }
        let mut code = fenced;
        for (i, &c) in chars.iter().enumerate() {
            if c == '`' && !fenced {
                code = !code;
            } else if c == '#' && !code && digits(i + 1, 1) {
                marks.push(format!("#{}", number(i + 1)));
            }
        }
        for word in line.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_')) {
            let hex = word.chars().all(|c| c.is_ascii_digit() || ('a'..='f').contains(&c));
            let mixed = word.chars().any(|c| c.is_ascii_digit()) && word.chars().any(|c| c.is_ascii_lowercase());
            if (7..=12).contains(&word.len()) && hex && mixed {
                marks.push(format!("commit hash {word}"));
            }
        }
        marks
    }

    #[test]
    fn history_marks_are_told_from_what_guides_legitimately_hold() {
        assert_eq!(
            history_marks("Measured on 2026-11-28 after Issue 34 and issues 33 (#20), against a0012d7.", false),
            ["date 2026-11-28", "issue 34", "issue 33", "#20", "commit hash a0012d7"]
        );
        let sha256 = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";
        let prose =
            format!("`#20`, `#[inline]`, -32001, 12,902 lines, 1234567, deadbeef, 0x7fffffff, tissue 3, {sha256}");
        assert_eq!(history_marks(&prose, false), Vec::<String>::new());
        assert_eq!(history_marks("# 20 #20 (in a code block)", true), Vec::<String>::new());
    }

    /// A guide states what is measured, the figure and the command that measures it; how the
    /// figure came about (when, at which commit, for which issue) is in git's history.
    #[test]
    fn guides_name_no_dates_issue_numbers_or_commits() {
        let mut findings = Vec::new();
        for guide in guides() {
            let mut fenced = false;
            for (n, line) in read(&guide).lines().enumerate() {
                if line.trim_start().starts_with("```") {
                    fenced = !fenced;
                }
                for mark in history_marks(line, fenced) {
                    findings.push(format!("{guide}:{}: {mark}", n + 1));
                }
            }
        }
        assert!(
            findings.is_empty(),
            "the guides state results; their history is git's (state the result without these):\n{}",
            findings.join("\n")
        );
    }
}
