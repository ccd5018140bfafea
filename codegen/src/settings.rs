//! The generator's policies, in one value.
//!
//! Every choice the generator makes that is not read from the schema is a field of
//! [`Settings`]: the names it keeps for itself, how deep it looks into untagged unions, which
//! definitions are the hand-written envelope's, how it renames a v1 definition, which members
//! route a notification, and the reviewed decisions of `vendor-schemas/decisions.json`. The
//! pipeline ([`crate::build_ir_with`], [`crate::generate_with`], and the changelog crate's
//! `diff_sets_with`) takes `&Settings`; [`Settings::codex`] is what `cargo xtask regen` uses,
//! and tests change a field to see what it does.
//!
//! Several of these are contracts with the hand-written protocol crate (its wire macros declare
//! the catch-all variant, its `wire_notifications!` knows the accessors): a value other than
//! [`Settings::codex`]'s gives code that crate cannot compile, which is what tests of the
//! generator alone may want.

use std::collections::BTreeMap;

use crate::decisions::{Decisions, Undecided};
use crate::Error;

/// The generator's policies. Plain data: build one with [`Settings::codex`] and change fields.
#[derive(Debug, Clone)]
pub struct Settings {
    /// The variant every open enum (string enums, tagged and externally tagged unions) gets
    /// for values this release does not know, kept as they came (`Unrecognized`). The
    /// protocol crate's wire macros declare it; the generator keeps the name free (a value
    /// that would get it is named with the suffix `Value`) and names it in the code it writes
    /// around the macros (`id()` on item unions).
    pub catch_all: String,
    /// Names the generated code (and the protocol crate's macros, which resolve names where
    /// they expand) uses unqualified, and the protocol crate's own items next to the generated
    /// types: a schema type of one of these names would shadow them, so it gets the suffix
    /// `Type` (`naming::type_name`). The std prelude, what the generated files import, the
    /// crate's re-exports.
    pub reserved_type_names: Vec<String>,
    /// The prefix of the top-level one of two different definitions of one name (codex 0.60.1
    /// to 0.100.0 kept v1 types of the same name at the top level next to the `v2`
    /// namespace): the namespaced one keeps the name, the top-level one is `V1Name`.
    pub v1_prefix: String,
    /// Definitions whose name starts with this describe the JSON-RPC envelope (`JSONRPC`:
    /// `JSONRPCRequest`, `JSONRPCError`, ...). The protocol crate writes the envelope by hand
    /// (it must keep ids and unknown methods exactly), so they are not lowered, and a `$ref`
    /// to one is an error.
    pub envelope_prefix: String,
    /// The members the protocol crate's hand-written envelope reads and writes, per envelope
    /// definition (`jsonrpc.rs`: a request carries `trace`, a W3C trace context; `jsonrpc` is
    /// accepted and dropped). A member a bundle gives one of these definitions beyond them is
    /// a warning with its pointer: it decodes as an unknown envelope member.
    pub envelope_members: BTreeMap<String, Vec<String>>,
    /// How deep the decoder's data of an untagged union's arm ([`crate::ir::ArmMatch`]) looks
    /// into members. A level of members costs a third of it and a `$ref`, `allOf` or union
    /// one, members are looked into below this depth, and nothing past it plus 16 (a schema
    /// that refers to itself). 9 is members of members of members: enough to tell apart arms
    /// that differ only inside a member (titled and untitled multi-selects) while the
    /// generated `Match` tables stay small.
    pub member_depth: usize,
    /// The accessors a server notification's row states, and the members of its params each
    /// reads; the protocol crate's `wire_notifications!` makes `thread_id()`, `turn_id()` and
    /// `item_id()` of them, so a client routes concurrent turns without reading JSON again. In
    /// the order the rows write them.
    pub routes: Vec<Route>,
    /// The reviewed decisions: `vendor-schemas/decisions.json` for [`Settings::codex`].
    pub decisions: Decisions,
    /// What happens to a decision [`Settings::decisions`] does not hold: fail listing all of
    /// them (regen), or take the proposals (comparing other releases, tests).
    pub undecided: Undecided,
    /// The surface history of the supported range (`vendor-schemas/history.json`): with it the
    /// IR is that of the whole range ([`crate::history::History::apply`]), without it that of
    /// the one release. Regen reads it; the changelog compares releases without it.
    pub history: Option<crate::history::History>,
    /// The oldest release of the supported range, when it is not the history's own floor.
    pub floor: Option<String>,
}

/// One accessor of [`Settings::routes`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Route {
    /// The accessor as the row writes it: `thread`, `turn` or `item` (the three
    /// `wire_notifications!` knows).
    pub accessor: String,
    /// Wire paths from the params to a string member, tried in order; the first the params
    /// have is the route (`turnId`, else `turn.id`).
    pub paths: Vec<Vec<String>>,
    /// When no path fits: a member of the params holding a tagged union whose every arm has a
    /// string `id`; the generator writes `id()` on that union (`access.rs`) and the route reads
    /// it (`item.id()`, for `ThreadItem`).
    pub union_member: Option<String>,
}

impl Route {
    fn new(accessor: &str, paths: &[&[&str]], union_member: Option<&str>) -> Route {
        Route {
            accessor: accessor.to_owned(),
            paths: paths.iter().map(|p| p.iter().map(|s| (*s).to_owned()).collect()).collect(),
            union_member: union_member.map(str::to_owned),
        }
    }
}

/// [`Settings::reserved_type_names`] of [`Settings::codex`].
const RESERVED_TYPE_NAMES: &[&str] = &[
    // The std prelude (types, traits and variants).
    "Option",
    "Some",
    "None",
    "Result",
    "Ok",
    "Err",
    "String",
    "Vec",
    "Box",
    "ToOwned",
    "ToString",
    "Clone",
    "Copy",
    "Send",
    "Sync",
    "Sized",
    "Unpin",
    "Drop",
    "Fn",
    "FnMut",
    "FnOnce",
    "PartialEq",
    "PartialOrd",
    "Eq",
    "Ord",
    "AsRef",
    "AsMut",
    "Into",
    "From",
    "Default",
    "Iterator",
    "Extend",
    "IntoIterator",
    "DoubleEndedIterator",
    "ExactSizeIterator",
    "TryFrom",
    "TryInto",
    "FromIterator",
    "Debug",
    "Hash",
    // What the generated files import.
    "BTreeMap",
    "Value",
    "Map",
    "Serialize",
    "Deserialize",
    "Deserializer",
    "Serializer",
    "MapAccess",
    "SerializeMap",
    // The protocol crate's own items next to the generated types (lib.rs re-exports).
    "ClientResponse",
    "ServerResponse",
    "ClientMessage",
    "ServerMessage",
    "Message",
    "ErrorObject",
    "ErrorResponse",
    "RawJson",
    "Response",
    "TypedClientMessage",
    "TypedServerMessage",
    "TypedResponse",
    "Notification",
    "NotificationVisitor",
    "Request",
    "RequestVisitor",
    "ExperimentalApi",
    "Inspect",
    "Inspector",
];

impl Settings {
    /// The policies the protocol crate is generated with, the checked-in decisions
    /// (`vendor-schemas/decisions.json`, compiled in), and [`Undecided::Fail`]: what
    /// `cargo xtask regen` uses.
    pub fn codex() -> Result<Settings, Error> {
        Ok(Settings::with_decisions(Decisions::checked_in()?.clone()))
    }

    /// [`Settings::codex`]'s policies with other decisions ([`Undecided::Fail`]).
    pub fn with_decisions(decisions: Decisions) -> Settings {
        Settings {
            catch_all: "Unrecognized".to_owned(),
            reserved_type_names: RESERVED_TYPE_NAMES.iter().map(|s| (*s).to_owned()).collect(),
            v1_prefix: "V1".to_owned(),
            envelope_prefix: "JSONRPC".to_owned(),
            envelope_members: [
                ("JSONRPCRequest", &["id", "method", "params", "trace", "jsonrpc"][..]),
                ("JSONRPCNotification", &["method", "params", "jsonrpc"]),
                ("JSONRPCResponse", &["id", "result", "jsonrpc"]),
                ("JSONRPCError", &["id", "error", "jsonrpc"]),
                ("JSONRPCErrorError", &["code", "message", "data"]),
            ]
            .into_iter()
            .map(|(definition, members)| (definition.to_owned(), members.iter().map(|m| (*m).to_owned()).collect()))
            .collect(),
            member_depth: 9,
            routes: vec![
                Route::new("thread", &[&["threadId"]], None),
                Route::new("turn", &[&["turnId"], &["turn", "id"]], None),
                Route::new("item", &[&["item", "id"]], Some("item")),
            ],
            decisions,
            undecided: Undecided::Fail,
            history: None,
            floor: None,
        }
    }

    /// These settings, taking the proposal for every decision the decisions do not hold.
    pub fn proposing(self) -> Settings {
        Settings { undecided: Undecided::Propose, ..self }
    }

    /// Whether a definition describes the JSON-RPC envelope ([`Settings::envelope_prefix`]).
    pub fn is_envelope_definition(&self, name: &str) -> bool {
        name.starts_with(&self.envelope_prefix)
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    /// Every source file of the generator but `skip` (paths from `codegen/src`), without its
    /// unit tests: `(path, text)`.
    fn sources(skip: &[&str]) -> Vec<(String, String)> {
        let generator: Vec<(String, String)> = workspace_sources()
            .into_iter()
            .filter_map(|(path, code)| Some((path.strip_prefix("codegen/src/")?.to_owned(), code)))
            .filter(|(path, _)| !skip.contains(&path.as_str()))
            .collect();
        assert!(generator.len() > 20, "{} sources of the generator", generator.len());
        generator
    }

    /// Only `naming.rs` converts case (ARCHITECTURE.md: only `naming.rs` makes identifiers).
    #[test]
    fn only_naming_converts_case() {
        for (path, code) in sources(&["naming.rs"]) {
            for word in
                ["heck::", "use heck", "to_snake_case", "to_upper_camel_case", "to_pascal_case", "to_lower_camel_case"]
            {
                assert!(!code.contains(word), "{path} uses `{word}`: names are made in naming.rs");
            }
        }
    }

    /// The policies' values are written once, in [`super::Settings::with_decisions`].
    #[test]
    fn policies_are_written_only_here() {
        for (path, code) in sources(&["settings.rs"]) {
            for literal in [
                r#""Unrecognized""#,
                r#""JSONRPC"#,
                r#""threadId""#,
                r#""turnId""#,
                "MEMBER_DEPTH",
                "RESERVED_TYPE_NAMES",
            ] {
                assert!(!code.contains(literal), "{path} has `{literal}`: it is a field of `Settings`");
            }
        }
    }

    /// Each rule of the workspace, by what stating it takes, and the one file that states it:
    /// `(rule, home, signatures)`. A signature is text only a statement of the rule has.
    const RULES: &[(&str, &str, &[&str])] = &[
        (
            "the members that route a notification (read raw through the generated `ROUTES`)",
            "codegen/src/settings.rs",
            &[
                r#"= "threadId""#,
                r#"= "turnId""#,
                r#"("threadId")"#,
                r#"["threadId"]"#,
                r#"["turnId"]"#,
                r#""/threadId"#,
                r#""/turnId"#,
            ],
        ),
        ("when a member of each presence is used", "protocol/src/wire_macros.rs", &["fn used<"]),
        (
            "the null rule: `null` equals absent, except for `Option<Option<T>>`",
            "protocol/src/roundtrip.rs",
            &["(Value::Null, None)", "fn equivalent(", "fn same_number("],
        ),
        ("the quoting rule of JSON paths", "protocol/src/path.rs", &["b'_' | b'$' | b'-'"]),
        (
            "the server's experimental error message",
            "protocol/src/experimental.rs",
            &["requires experimentalApi capability"],
        ),
        ("the variable that skips pinned tests", "protocol/src/lib.rs", &[r#""CODEX_APP_SKIP_PINNED_TESTS""#]),
        (
            "the client's report of what did not decode",
            "client/src/error.rs",
            &["DecodeReport {\n", "DecodeReport { line_number"],
        ),
        ("the truncation of text for messages and logs", "protocol/src/framing.rs", &["char_indices().nth("]),
        ("a scan of JSON text (the string escapes it skips)", "protocol/src/codec/scan.rs", &[r"== b'\\'"]),
        (
            "the order of release numbers (semver's, pre-releases identifier by identifier)",
            "protocol/src/availability/release_order.rs",
            &["(Ok(_), Err(_)) => Ordering::Less", "semver::"],
        ),
        (
            "which types lead to something the availability tables state (a fixed point)",
            "protocol/src/availability/reach.rs",
            &["let mut grew", "marked[row] = true"],
        ),
    ];

    /// Files that restate a rule on purpose, each with the test that holds them to it.
    const RESTATED: &[(&str, &str)] = &[
        // The upgrade routine does not build the protocol crate; its test
        // `the_variable_unset_for_the_tests_step_is_the_protocol_crates` compares the two.
        ("xtask/src/upgrade/mod.rs", r#""CODEX_APP_SKIP_PINNED_TESTS""#),
    ];

    /// The hand-written Rust of the workspace (not generated code, not tests): `(path from the
    /// workspace root, text)`.
    fn workspace_sources() -> Vec<(String, String)> {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap().to_path_buf();
        let mut out = Vec::new();
        for krate in ["codegen", "changelog", "protocol", "client", "traffic", "xtask", "mock", "examples"] {
            let mut files = Vec::new();
            collect(&root.join(krate).join("src"), &mut files);
            for path in files {
                let rel = path.strip_prefix(&root).unwrap().to_string_lossy().replace('\\', "/");
                if rel.contains("/generated/") || rel.ends_with("tests.rs") {
                    continue;
                }
                let text = std::fs::read_to_string(&path).unwrap();
                // Without the unit tests (`#[cfg(test)] mod tests`), which state rules to check them.
                out.push((rel, text.split("#[cfg(test)]\nmod ").next().unwrap_or_default().to_owned()));
            }
        }
        assert!(out.len() > 100, "{} sources under {}", out.len(), root.display());
        out
    }

    fn collect(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                collect(&path, out);
            } else if path.extension().is_some_and(|e| e == "rs") {
                out.push(path);
            }
        }
    }

    /// The files that state a rule other than its home (and the restatements listed).
    fn second_statements(sources: &[(String, String)]) -> Vec<String> {
        let mut found = Vec::new();
        for (rule, home, signatures) in RULES {
            for (path, code) in sources {
                if path == home {
                    continue;
                }
                for signature in signatures.iter().map(|s| s.replace("\\n", "\n")) {
                    if code.contains(&signature) && !RESTATED.contains(&(path.as_str(), signature.as_str())) {
                        found.push(format!("{path} states {rule} (`{signature}`); its home is {home}"));
                    }
                }
            }
        }
        found
    }

    /// Each rule is stated once in the workspace: a second statement of one fails here, naming
    /// the file, the rule and where it lives. Every rule's home does state it.
    #[test]
    fn each_rule_is_stated_once_in_the_workspace() {
        let sources = workspace_sources();
        let found = second_statements(&sources);
        assert!(found.is_empty(), "rules stated twice:\n{}", found.join("\n"));
        for (rule, home, signatures) in RULES {
            let code = &sources.iter().find(|(path, _)| path == home).unwrap_or_else(|| panic!("{home}")).1;
            let stated = signatures.iter().any(|s| code.contains(&s.replace("\\n", "\n")));
            assert!(stated, "{home} no longer states {rule}: update RULES");
        }
        // A planted copy is found.
        let mut planted = sources.clone();
        planted.push((
            "client/src/planted.rs".to_owned(),
            "fn f(v: &Value) -> bool { matches!((v, None::<()>), (Value::Null, None)) }".to_owned(),
        ));
        assert_eq!(second_statements(&planted).len(), 1);
    }
}
