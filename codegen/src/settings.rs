//! The generator's policies, in one value.
//!
//! Every choice the generator makes that is not read from the schema is a field of
//! [`Settings`]: the names it keeps for itself, how deep it looks into untagged unions, which
//! definitions are the hand-written envelope's, how it renames a v1 definition, which members
//! route a notification, and the reviewed decisions of `vendor-schemas/decisions.json`. The
//! pipeline ([`crate::build_ir_with`], [`crate::generate_with`], [`crate::diff::diff_sets_with`])
//! takes `&Settings`; [`Settings::codex`] is what `cargo xtask regen` uses, and tests change a
//! field to see what it does.
//!
//! Several of these are contracts with the hand-written protocol crate (its wire macros declare
//! the catch-all variant, its `wire_notifications!` knows the accessors): a value other than
//! [`Settings::codex`]'s gives code that crate cannot compile, which is what tests of the
//! generator alone may want.

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

    /// Every source file of the generator but `skip`, without its unit tests: `(path, text)`.
    fn sources(skip: &[&str]) -> Vec<(String, String)> {
        fn walk(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
            for entry in std::fs::read_dir(dir).unwrap() {
                let path = entry.unwrap().path();
                if path.is_dir() {
                    walk(&path, out);
                } else if path.extension().is_some_and(|e| e == "rs") {
                    out.push(path);
                }
            }
        }
        let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
        let mut paths = Vec::new();
        walk(&src, &mut paths);
        assert!(paths.len() > 20, "{} sources under {}", paths.len(), src.display());
        paths
            .into_iter()
            .map(|p| (p.strip_prefix(&src).unwrap().to_string_lossy().replace('\\', "/"), p))
            .filter(|(rel, _)| !skip.contains(&rel.as_str()) && !rel.ends_with("tests.rs"))
            .map(|(rel, p)| {
                let text = std::fs::read_to_string(&p).unwrap();
                let code = text.split("#[cfg(test)]").next().unwrap_or_default().to_owned();
                (rel, code)
            })
            .collect()
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
}
