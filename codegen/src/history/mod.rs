//! The protocol surface of every codex release of the supported range, and what the generator
//! makes of it.
//!
//! A [`History`] is built by folding the IRs of the releases in order ([`History::extend`]):
//! every method (per direction), type, member, enum value and union arm gets the first release
//! that has it (`since`) and, once a later release lacks it, the last release that had it
//! (`until`); a member gets the first release from which it was always required
//! (`always_since`) and the last release in which its type was one whose values the newer
//! type does not accept (`widened_until`). What the newest release no longer has is kept as IR
//! (`retired`), so the generator still types it. Present means present in either bundle of a
//! release; the experimental mark is the IR's own.
//!
//! Folding lowers every release of the range. So that a regen whose inputs did not change
//! lowers only the newest, regen commits what the fold gave beside the history: the facts in
//! [`HISTORY_FILE`], the retired IR in [`RETIRED_FILE`] with the digest of what it was folded
//! from ([`History::retired_file`], [`History::with_retired`]).
//!
//! [`History::apply`] turns the newest release's IR into the IR of the range, by one rule each:
//!
//! - what a release of the range had and the newest lacks comes back (a method with its
//!   params and response types, a type, a member, an enum value, a union arm), marked with
//!   its `until`;
//! - a member the newest release requires but some release of the range left out, or did not
//!   require, is optional (its doc says since when it is always present);
//! - a member whose type changed within the range so that an older release's values have a
//!   JSON type the newest type does not accept is typed as any JSON value (as the experimental
//!   merge does for a member the two bundles type differently), with a warning;
//! - everything carries its availability ([`crate::ir::Ir::availability`]) for the emitters.
//!
//! The committed form ([`History::to_json`]) lists only what is not "present in every release
//! of the range": an item the file does not name was in every release since the floor.
//!
//! The module's files: [`keys`] (what an item is called), `surface` (an IR's items by key),
//! `fold` ([`History::extend`]), `range` ([`History::apply`]).

mod fold;
pub mod keys;
mod range;
mod surface;
#[cfg(test)]
mod tests;

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::ir::*;
use crate::Error;
pub use keys::Key;
pub use surface::{listing, ItemKind, Listed};

/// Where the committed history lives, relative to the workspace root.
pub const HISTORY_FILE: &str = "vendor-schemas/history.json";

/// Where the history's retired IR lives, relative to the workspace root.
pub const RETIRED_FILE: &str = "vendor-schemas/retired.json";

/// A release of the range and what became of it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReleaseEntry {
    pub version: String,
    /// `None` when its surface is part of the history; else why it is not (no Linux binary,
    /// no schema printed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub skipped: Option<String>,
}

// The protocol crate's availability type, as source: the generator cannot depend on the crate
// it generates. Its releases are `String`s here.
#[path = "../../../protocol/src/availability/span.rs"]
mod span;

/// When an item is in codex: since, until and, for a member, since when every release sends
/// it. The protocol crate's `availability::Availability`, holding its releases as text.
pub type Availability = span::Availability<String>;

impl Availability {
    /// In every release from `since` on.
    pub fn since(since: &str) -> Availability {
        Availability { since: since.to_owned(), until: None, always_since: None }
    }
}

/// What the history knows of an item or type: its [`Availability`] and, for a member, the
/// last release whose type for it had values the newer type does not accept
/// (`widened_until`). In [`HISTORY_FILE`] as one object, the members that are `None` left out.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(from = "FactText", into = "FactText")]
pub struct Fact {
    pub availability: Availability,
    pub widened_until: Option<String>,
}

impl Fact {
    /// In every release from `since` on.
    pub fn since(since: &str) -> Fact {
        Fact { availability: Availability::since(since), widened_until: None }
    }
}

/// A [`Fact`] as [`HISTORY_FILE`] writes it.
#[derive(Serialize, Deserialize)]
struct FactText {
    since: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    until: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    always_since: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    widened_until: Option<String>,
}

impl From<FactText> for Fact {
    fn from(FactText { since, until, always_since, widened_until }: FactText) -> Fact {
        Fact { availability: Availability { since, until, always_since }, widened_until }
    }
}

impl From<Fact> for FactText {
    fn from(Fact { availability: Availability { since, until, always_since }, widened_until }: Fact) -> FactText {
        FactText { since, until, always_since, widened_until }
    }
}

/// Something the newest release no longer has, as the last release that had it lowered it.
/// A member, value or arm names its owner by schema name. Committed in [`RETIRED_FILE`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum Retired {
    Method { direction: Direction, method: Method },
    Field { owner: String, field: Field },
    Value { owner: String, value: EnumValue },
    TaggedArm { owner: String, arm: TaggedArm },
    ExternalArm { owner: String, arm: ExternalArm },
    UntaggedArm { owner: String, arm: UntaggedArm },
}

impl Retired {
    /// The schema name of its owner type (a member, value or arm).
    pub(super) fn owner(&self) -> Option<&str> {
        match self {
            Retired::Field { owner, .. }
            | Retired::Value { owner, .. }
            | Retired::TaggedArm { owner, .. }
            | Retired::ExternalArm { owner, .. }
            | Retired::UntaggedArm { owner, .. } => Some(owner),
            Retired::Method { .. } => None,
        }
    }
}

/// The surface history of a range of releases. See the module docs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct History {
    /// The oldest release of the range (the support floor).
    pub floor: String,
    /// Every release of the range, oldest first, the newest last.
    pub releases: Vec<ReleaseEntry>,
    /// Types that were not in every release of the range, by schema name (a type's
    /// `widened_until` is always `None`: only a member's type widens).
    #[serde(default)]
    pub types: BTreeMap<String, Fact>,
    /// Items that were not in every release of the range, by key ([`keys`]).
    pub items: BTreeMap<Key, Fact>,
    /// What the newest release lacks, by key ([`RETIRED_FILE`], not [`HISTORY_FILE`]).
    #[serde(skip)]
    pub retired: BTreeMap<Key, Retired>,
    /// The types the newest release lacks, by schema name ([`RETIRED_FILE`]).
    #[serde(skip)]
    pub retired_types: BTreeMap<String, TypeDef>,
}

/// What a history retired and what it was folded from: [`RETIRED_FILE`]. xtask writes and reads
/// the file, so the IR's (de)serializers are compiled there, not into every build of the
/// generator.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RetiredFile {
    pub folded_from: String,
    /// The types the newest release lacks, by schema name.
    pub types: BTreeMap<String, TypeDef>,
    /// What else it lacks, by key.
    pub items: BTreeMap<Key, Retired>,
}

// The protocol crate's reading and order of release numbers, as source: the generator cannot
// depend on the crate it generates.
#[path = "../../../protocol/src/availability/release_order.rs"]
mod release_order;

/// Compares release versions as the protocol crate's `Release` does (semver's order:
/// pre-releases before their release); a text that is not a release number, as text.
pub fn version_cmp(a: &str, b: &str) -> std::cmp::Ordering {
    match (release_order::parse(a), release_order::parse(b)) {
        (Some(x), Some(y)) => release_order::order(x, y),
        _ => a.cmp(b),
    }
}

/// Whether `text` is a release number (`0.171.0`, `0.128.0-alpha.1`).
pub fn is_version(text: &str) -> bool {
    release_order::parse(text).is_some()
}

/// The pre-release of a release number (`alpha.1` of `0.128.0-alpha.1`, empty for a
/// release), or `None` when `text` is not a release number.
pub fn pre_release(text: &str) -> Option<&str> {
    release_order::parse(text).map(|(_, pre)| pre)
}

impl History {
    /// The history of one release: everything in it, since it.
    pub fn start(version: &str) -> History {
        History {
            floor: version.to_owned(),
            releases: vec![ReleaseEntry { version: version.to_owned(), skipped: None }],
            types: BTreeMap::new(),
            items: BTreeMap::new(),
            retired: BTreeMap::new(),
            retired_types: BTreeMap::new(),
        }
    }

    /// The newest release whose surface is in the history.
    pub fn newest(&self) -> &str {
        self.releases.iter().rev().find(|r| r.skipped.is_none()).map_or(&self.floor, |r| &r.version)
    }

    /// Records a release that is part of the range but whose surface could not be had.
    pub fn skip(&mut self, version: &str, why: &str) {
        self.releases.push(ReleaseEntry { version: version.to_owned(), skipped: Some(why.to_owned()) });
        self.sort_releases();
    }

    fn sort_releases(&mut self) {
        self.releases.sort_by(|a, b| version_cmp(&a.version, &b.version));
        self.releases.dedup_by(|a, b| a.version == b.version);
    }

    /// What the history knows of an item of the newest release's IR (or a retired one).
    pub fn fact(&self, key: &Key) -> Fact {
        self.items.get(key).cloned().unwrap_or_else(|| Fact::since(&self.floor))
    }

    /// The availability of an item of the newest release's IR (or a retired one).
    pub fn availability(&self, key: &Key) -> Availability {
        self.fact(key).availability
    }

    /// The availability of a type, by schema name.
    pub fn type_availability(&self, schema: &str) -> Availability {
        self.types.get(schema).map_or_else(|| Availability::since(&self.floor), |f| f.availability.clone())
    }

    /// The committed form: one item per line, sorted, so a review reads the diff.
    pub fn to_json(&self) -> String {
        fn line<T: Serialize + ?Sized>(v: &T) -> String {
            serde_json::to_string(v).expect("history values serialize")
        }
        let mut out = String::from("{\n");
        out.push_str(&format!("  \"floor\": {},\n", line(&self.floor)));
        out.push_str("  \"releases\": [\n");
        push_lines(&mut out, self.releases.iter().map(line));
        out.push_str("  ],\n  \"types\": {\n");
        push_lines(&mut out, self.types.iter().map(|(k, v)| format!("{}: {}", line(k), line(v))));
        out.push_str("  },\n  \"items\": {\n");
        push_lines(&mut out, self.items.iter().map(|(k, v)| format!("{}: {}", line(k), line(v))));
        out.push_str("  }\n}\n");
        out
    }

    pub fn from_json(text: &str) -> Result<History, Error> {
        serde_json::from_str(text).map_err(|e| Error::new("", format!("{HISTORY_FILE}: {e}")))
    }

    /// What the history retired, as [`RETIRED_FILE`] holds it, with `folded_from` (a digest of
    /// everything the fold read, which [`History::with_retired`] compares).
    pub fn retired_file(&self, folded_from: &str) -> RetiredFile {
        RetiredFile {
            folded_from: folded_from.to_owned(),
            types: self.retired_types.clone(),
            items: self.retired.clone(),
        }
    }

    /// This history (read from [`HISTORY_FILE`]) with what it retired, from `file` when that was
    /// folded from `folded_from`; `None` when it was folded from something else (the fold is then
    /// to be done again).
    pub fn with_retired(self, file: RetiredFile, folded_from: &str) -> Option<History> {
        (file.folded_from == folded_from).then_some(History { retired: file.items, retired_types: file.types, ..self })
    }
}

/// Writes `lines` one to a line, indented by four spaces and separated by commas: the members of
/// a JSON object or array in the committed files' form (one item a line, so a review reads the
/// diff).
pub fn push_lines(out: &mut String, lines: impl Iterator<Item = String>) {
    let lines: Vec<String> = lines.collect();
    for (i, l) in lines.iter().enumerate() {
        out.push_str("    ");
        out.push_str(l);
        if i + 1 < lines.len() {
            out.push(',');
        }
        out.push('\n');
    }
}
