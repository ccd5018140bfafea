//! The protocol surface of every codex release of the supported range, and what the generator
//! makes of it.
//!
//! A [`History`] is built by folding the IRs of the releases in order ([`History::extend`]):
//! every method (per direction), type, member, enum value and union arm gets the first release
//! that has it (`since`) and, once a later release lacks it, the last release that had it
//! (`until`); a member gets the first release from which it was always required
//! (`required_since`) and the last release in which its type was one whose values the newer
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

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};

use crate::ir::*;
use crate::{Error, Warning};

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

/// Availability of one item.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Availability {
    /// The first release of the range that has it.
    pub since: String,
    /// The last release that had it, when the newest release lacks it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub until: Option<String>,
    /// A member: the first release from which every release always sends it (`None`: optional
    /// in the newest release).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub always_since: Option<String>,
    /// A member: the last release whose type for it had values the newer type does not accept.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub widened_until: Option<String>,
}

impl Availability {
    /// In every release from `since` on.
    fn since(since: &str) -> Availability {
        Availability { since: since.to_owned(), until: None, always_since: None, widened_until: None }
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

/// The surface history of a range of releases. See the module docs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct History {
    /// The oldest release of the range (the support floor).
    pub floor: String,
    /// Every release of the range, oldest first, the newest last.
    pub releases: Vec<ReleaseEntry>,
    /// Types that were not in every release of the range, by schema name.
    #[serde(default)]
    pub types: BTreeMap<String, Availability>,
    /// Items that were not in every release of the range, by key ([`keys`]).
    pub items: BTreeMap<String, Availability>,
    /// What the newest release lacks, by key ([`RETIRED_FILE`], not [`HISTORY_FILE`]).
    #[serde(skip)]
    pub retired: BTreeMap<String, Retired>,
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
    pub items: BTreeMap<String, Retired>,
}

/// Compares release versions (semver, pre-releases before their release).
pub fn version_cmp(a: &str, b: &str) -> std::cmp::Ordering {
    match (semver::Version::parse(a), semver::Version::parse(b)) {
        (Ok(x), Ok(y)) => x.cmp(&y),
        _ => a.cmp(b),
    }
}

/// The keys of an IR's items, by what the schema calls them ([`crate::schema_name`]), never
/// by the generator's names: `dir:method` for methods (`ClientRequest:thread/list`),
/// `Type.member` (wire name), `Type::value` for enum values and union arms (the tag or key;
/// an untagged arm by [`keys::untagged_arm`]), `ServerNotification.emittedAtMs` for the
/// envelope. A type is kept apart, by its schema name (`LoginAccountParams::chatgpt`).
pub mod keys {
    use crate::ir::{Direction, Ir, Ty, UntaggedArm};

    pub fn method(direction: Direction, wire: &str) -> String {
        format!("{}:{wire}", direction.union_name())
    }
    pub fn member(owner: &str, wire: &str) -> String {
        format!("{owner}.{wire}")
    }
    pub fn value(owner: &str, wire: &str) -> String {
        format!("{owner}::{wire}")
    }
    /// An untagged union's arm, by what its schema is: a type's schema name (the union's own
    /// arm `Union::x` as it is, a definition as `Union::Definition`), else its JSON type
    /// (`Union::string`).
    pub fn untagged_arm(ir: &Ir, owner: &str, arm: &UntaggedArm) -> String {
        format!("{owner}::{}", untagged_arm_name(ir, owner, arm))
    }
    /// [`untagged_arm`] without the union's name.
    pub fn untagged_arm_name(ir: &Ir, owner: &str, arm: &UntaggedArm) -> String {
        fn word(ir: &Ir, owner: &str, ty: &Ty) -> String {
            match ty {
                Ty::Named(n) => match ir.types.get(n) {
                    Some(def) => {
                        let prefix = format!("{owner}::");
                        def.schema.strip_prefix(&prefix).unwrap_or(&def.schema).to_owned()
                    }
                    None => n.clone(),
                },
                Ty::Option(t) | Ty::Boxed(t) => word(ir, owner, t),
                Ty::String => "string".into(),
                Ty::Bool => "boolean".into(),
                Ty::Int(_) => "integer".into(),
                Ty::Float => "number".into(),
                Ty::Vec(_) | Ty::Tuple(_) => "array".into(),
                Ty::Map(_) => "object".into(),
                Ty::Unit => "null".into(),
                Ty::Any => "any".into(),
            }
        }
        word(ir, owner, &arm.ty)
    }
}

/// One item of an IR's surface. A member, value or arm has its owner's Rust name (the IR's key).
#[derive(Debug, Clone, Copy)]
enum Item<'a> {
    Method(Direction, &'a Method),
    Field(&'a str, &'a Field),
    Value(&'a str, &'a EnumValue),
    TaggedArm(&'a str, &'a TaggedArm),
    ExternalArm(&'a str, &'a ExternalArm),
    UntaggedArm(&'a str, &'a UntaggedArm),
}

const ENVELOPE: &str = "ServerNotification";

/// The surface of an IR by schema key: its items, and apart from them its types (a type and
/// the union arm it is the object of share a schema name).
struct Surface<'a> {
    items: BTreeMap<String, Item<'a>>,
    types: BTreeMap<String, &'a TypeDef>,
}

fn surface(ir: &Ir) -> Surface<'_> {
    let mut items = BTreeMap::new();
    let mut types = BTreeMap::new();
    for direction in Direction::ALL {
        for m in ir.methods(direction) {
            items.insert(keys::method(direction, &m.wire), Item::Method(direction, m));
        }
    }
    for f in &ir.notification_envelope {
        items.insert(keys::member(ENVELOPE, &f.wire), Item::Field(ENVELOPE, f));
    }
    for (name, def) in &ir.types {
        types.insert(def.schema.clone(), def);
        let owner = name.as_str();
        let key = def.schema.as_str();
        match &def.kind {
            TypeKind::Alias(_) => {}
            TypeKind::Struct(s) => {
                for f in &s.fields {
                    items.insert(keys::member(key, &f.wire), Item::Field(owner, f));
                }
            }
            TypeKind::StringEnum(e) => {
                for v in &e.values {
                    items.insert(keys::value(key, &v.wire), Item::Value(owner, v));
                }
            }
            TypeKind::Tagged(t) => {
                for a in &t.arms {
                    items.insert(keys::value(key, &a.wire), Item::TaggedArm(owner, a));
                }
            }
            TypeKind::External(e) => {
                for a in &e.arms {
                    items.insert(keys::value(key, &a.wire), Item::ExternalArm(owner, a));
                }
            }
            TypeKind::Untagged(u) => {
                for a in &u.arms {
                    items.insert(keys::untagged_arm(ir, key, a), Item::UntaggedArm(owner, a));
                }
            }
        }
    }
    Surface { items, types }
}

/// One item of an IR's surface as listings show it: its key ([`keys`]), what it is (`client
/// request`, `member`, `value`, `arm`, ...) and whether it is experimental.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Listed {
    pub key: String,
    pub kind: &'static str,
    pub experimental: bool,
}

/// Every method, member, enum value and union arm of `ir`, by key.
pub fn listing(ir: &Ir) -> Vec<Listed> {
    let in_experimental = |o: &str| ir.types.get(o).is_some_and(|d| d.experimental);
    surface(ir)
        .items
        .into_iter()
        .map(|(key, item)| {
            let (kind, experimental) = match item {
                Item::Method(d, m) => (
                    match d {
                        Direction::ClientRequest => "client request",
                        Direction::ServerRequest => "server request",
                        Direction::ServerNotification => "server notification",
                        Direction::ClientNotification => "client notification",
                    },
                    m.experimental,
                ),
                Item::Field(o, f) => ("member", f.experimental || in_experimental(o)),
                Item::Value(o, v) => ("value", v.experimental || in_experimental(o)),
                Item::TaggedArm(o, a) => ("arm", a.experimental || in_experimental(o)),
                Item::ExternalArm(o, a) => ("arm", a.experimental || in_experimental(o)),
                Item::UntaggedArm(o, a) => ("arm", a.experimental || in_experimental(o)),
            };
            Listed { key, kind, experimental }
        })
        .collect()
}

/// The schema name of the type `rust` names in `ir` (the envelope is `ServerNotification`).
fn schema_of<'a>(ir: &'a Ir, rust: &'a str) -> &'a str {
    ir.types.get(rust).map_or(rust, |d| d.schema.as_str())
}

fn retire(ir: &Ir, item: Item<'_>) -> Retired {
    let owner = |o: &str| schema_of(ir, o).to_owned();
    match item {
        Item::Method(direction, m) => Retired::Method { direction, method: m.clone() },
        Item::Field(o, f) => Retired::Field { owner: owner(o), field: f.clone() },
        Item::Value(o, v) => Retired::Value { owner: owner(o), value: v.clone() },
        Item::TaggedArm(o, a) => Retired::TaggedArm { owner: owner(o), arm: a.clone() },
        Item::ExternalArm(o, a) => Retired::ExternalArm { owner: owner(o), arm: a.clone() },
        Item::UntaggedArm(o, a) => Retired::UntaggedArm { owner: owner(o), arm: a.clone() },
    }
}

/// The item's owner type (its Rust name), for members, values and arms.
fn owner<'a>(item: &Item<'a>) -> Option<&'a str> {
    match item {
        Item::Field(o, _)
        | Item::Value(o, _)
        | Item::TaggedArm(o, _)
        | Item::ExternalArm(o, _)
        | Item::UntaggedArm(o, _) => Some(o),
        Item::Method(..) => None,
    }
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

    /// Adds the next release: `prev` is the IR of [`History::newest`], `next` that of
    /// `version`, a newer release.
    pub fn extend(&mut self, prev: &Ir, next: &Ir, version: &str) {
        let newest = self.newest().to_owned();
        let before = surface(prev);
        let after = surface(next);
        for (key, item) in &after.items {
            match before.items.get(key) {
                None => {
                    let entry = self.items.entry(key.clone()).or_insert_with(|| Availability::since(version));
                    entry.until = None;
                    self.retired.remove(key);
                    if let Item::Field(_, f) = item {
                        entry.always_since = f.required.then(|| version.to_owned());
                    }
                }
                Some(old) => {
                    if let (Item::Field(_, a), Item::Field(_, b)) = (old, item) {
                        let was_required = a.required;
                        let widened = !accepts(prev, &a.ty, next, &b.ty);
                        let entry = self.items.get(key).cloned();
                        let mut entry = entry.unwrap_or_else(|| Availability {
                            always_since: was_required.then(|| self.floor.clone()),
                            ..Availability::since(&self.floor)
                        });
                        entry.always_since = match (b.required, was_required) {
                            (false, _) => None,
                            (true, true) => entry.always_since.or_else(|| Some(self.floor.clone())),
                            (true, false) => Some(version.to_owned()),
                        };
                        if widened {
                            entry.widened_until = Some(newest.clone());
                        }
                        self.items.insert(key.clone(), entry);
                    }
                }
            }
        }
        for (key, item) in &before.items {
            if after.items.contains_key(key) {
                continue;
            }
            let entry = self.items.entry(key.clone()).or_insert_with(|| Availability::since(&self.floor));
            entry.until = Some(newest.clone());
            entry.always_since = None;
            // A member, value or arm of a type that went as a whole comes back with its type.
            if owner(item).is_some_and(|o| o != ENVELOPE && !after.types.contains_key(schema_of(prev, o))) {
                continue;
            }
            self.retired.insert(key.clone(), retire(prev, *item));
        }
        for key in after.types.keys() {
            if !before.types.contains_key(key) {
                self.types.entry(key.clone()).or_insert_with(|| Availability::since(version)).until = None;
                self.retired_types.remove(key);
            }
        }
        for (key, def) in &before.types {
            if !after.types.contains_key(key) {
                self.types.entry(key.clone()).or_insert_with(|| Availability::since(&self.floor)).until =
                    Some(newest.clone());
                self.retired_types.insert(key.clone(), (*def).clone());
            }
        }
        // Members, values and arms of a retired type are kept with it, not on their own.
        let whole = &self.retired_types;
        self.retired.retain(|_, r| retired_owner(r).is_none_or(|o| !whole.contains_key(o)));
        self.releases.push(ReleaseEntry { version: version.to_owned(), skipped: None });
        self.sort_releases();
        self.compact();
    }

    /// Drops the items that are plain (in every release of the range, always present since the
    /// floor where required): the committed form does not list them.
    fn compact(&mut self) {
        let floor = self.floor.clone();
        let plain = |a: &Availability| {
            a.since == floor
                && a.until.is_none()
                && a.widened_until.is_none()
                && a.always_since.as_ref().is_none_or(|r| *r == floor)
        };
        self.items.retain(|_, a| !plain(a));
        self.types.retain(|_, a| !plain(a));
    }

    /// The availability of an item of the newest release's IR (or a retired one).
    pub fn availability(&self, key: &str) -> Availability {
        self.items.get(key).cloned().unwrap_or_else(|| Availability::since(&self.floor))
    }

    /// The availability of a type, by schema name.
    pub fn type_availability(&self, schema: &str) -> Availability {
        self.types.get(schema).cloned().unwrap_or_else(|| Availability::since(&self.floor))
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

    /// The IR of the range: see the module docs. `floor` (a release of the history) moves the
    /// range's start up; what only releases before it had is left out.
    pub fn apply(&self, ir: &mut Ir, floor: Option<&str>) -> Result<(), Error> {
        let floor = floor.unwrap_or(&self.floor).to_owned();
        if !self.releases.iter().any(|r| r.version == floor) {
            return Err(Error::new(
                "",
                format!("the floor {floor} is not a release of the history ({} to {})", self.floor, self.newest()),
            ));
        }
        let in_range = |a: &Availability| a.until.as_deref().is_none_or(|u| version_cmp(u, &floor).is_ge());
        fn after<'a>(v: &'a Option<String>, floor: &str) -> Option<&'a str> {
            v.as_deref().filter(|v| version_cmp(v, floor).is_gt())
        }
        let mut warnings = Vec::new();
        // Whole types first, so their members, values and arms find them.
        for (key, def) in &self.retired_types {
            if in_range(&self.type_availability(key)) {
                ir.types.entry(def.name.clone()).or_insert_with(|| def.clone());
            }
        }
        for (key, r) in &self.retired {
            if in_range(&self.availability(key)) {
                restore(ir, r, &mut warnings);
            }
        }
        unresolved_to_any(ir, &mut warnings);
        // Relax and widen members; record every item's availability.
        let received = received_types(ir);
        let mut availability = BTreeMap::new();
        let entries: Vec<(String, Option<String>)> = surface(ir)
            .items
            .into_iter()
            .map(|(key, item)| {
                let owner = match item {
                    Item::Field(o, _) => Some(o.to_owned()),
                    _ => None,
                };
                (key, owner)
            })
            .collect();
        for (key, field_owner) in entries {
            let mut a = self.availability(&key);
            if !in_range(&a) {
                continue;
            }
            if version_cmp(&a.since, &floor).is_lt() {
                a.since = floor.clone();
            }
            // Always sent since a release after the floor and after its type came: an older
            // release that had the type may leave the member out.
            let owner_since = field_owner
                .as_deref()
                .filter(|o| *o != ENVELOPE)
                .map(|o| self.type_availability(schema_of(ir, o)).since);
            let relax = after(&a.always_since, &floor)
                .filter(|r| owner_since.as_deref().is_none_or(|o| version_cmp(r, o).is_gt()))
                .map(str::to_owned);
            // Only what the client receives must decode whatever an older release sent.
            let widen = a.widened_until.as_deref().is_some_and(|w| version_cmp(w, &floor).is_ge())
                && field_owner.as_deref().is_some_and(|o| o == ENVELOPE || received.contains(o));
            if relax.is_some() || widen {
                if let Some(field) = field_owner.as_deref().and_then(|o| field_mut(ir, o, &key)) {
                    if relax.is_some() {
                        field.required = false;
                    }
                    if widen && field.ty != Ty::Any {
                        let pointer = key.rsplit_once('.').map_or(key.as_str(), |(o, _)| o);
                        warnings.push(Warning::range(
                            format!("#/definitions/{pointer}"),
                            format!(
                                "member `{key}` had values of another JSON type until codex {} (in the supported range): typed as any JSON value",
                                a.widened_until.as_deref().unwrap_or_default()
                            ),
                        ));
                        field.ty = Ty::Any;
                    }
                }
            }
            if a.since != floor || a.until.is_some() || relax.is_some() {
                a.always_since = relax;
                a.widened_until = None;
                availability.insert(key, a);
            }
        }
        prune_unreachable(ir, &self.retired_types);
        let kept = surface(ir);
        availability.retain(|k, _| kept.items.contains_key(k));
        let kept_types: Vec<String> = kept.types.into_keys().collect();
        ir.availability = availability;
        ir.type_availability = kept_types
            .into_iter()
            .filter_map(|k| {
                let mut a = self.type_availability(&k);
                if !in_range(&a) {
                    return None;
                }
                if version_cmp(&a.since, &floor).is_lt() {
                    a.since = floor.clone();
                }
                (a.since != floor || a.until.is_some()).then_some((k, a))
            })
            .collect();
        ir.floor = Some(floor);
        ir.releases = self
            .releases
            .iter()
            .filter(|r| r.skipped.is_none() && version_cmp(&r.version, ir.floor.as_deref().unwrap_or("")).is_ge())
            .map(|r| r.version.clone())
            .collect();
        ir.warnings.extend(warnings);
        ir.warnings.sort();
        ir.warnings.dedup();
        Ok(())
    }
}

fn retired_owner(r: &Retired) -> Option<&str> {
    match r {
        Retired::Field { owner, .. }
        | Retired::Value { owner, .. }
        | Retired::TaggedArm { owner, .. }
        | Retired::ExternalArm { owner, .. }
        | Retired::UntaggedArm { owner, .. } => Some(owner),
        Retired::Method { .. } => None,
    }
}

/// A restored item may name a type by the Rust name an older release's lowering gave it, which
/// the range's types do not have (the name depended on that release's other definitions: a v1
/// definition named apart from a v2 one of the same schema name, `V1AskForApproval`). Such a
/// type is any JSON value, with a warning; a tagged arm whose payload is such a type is left out.
fn unresolved_to_any(ir: &mut Ir, warnings: &mut Vec<Warning>) {
    fn fix(ty: &mut Ty, known: &BTreeSet<String>, lost: &mut Vec<String>) {
        match ty {
            Ty::Named(name) if !known.contains(name.as_str()) => {
                lost.push(std::mem::take(name));
                *ty = Ty::Any;
            }
            Ty::Vec(t) | Ty::Map(t) | Ty::Option(t) | Ty::Boxed(t) => fix(t, known, lost),
            Ty::Tuple(items) => items.iter_mut().for_each(|t| fix(t, known, lost)),
            _ => {}
        }
    }
    let known: BTreeSet<String> = ir.types.keys().cloned().collect();
    let mut found: Vec<(String, String)> = Vec::new();
    for def in ir.types.values_mut() {
        let mut lost = Vec::new();
        match &mut def.kind {
            TypeKind::Alias(t) => fix(t, &known, &mut lost),
            TypeKind::Struct(s) => s.fields.iter_mut().for_each(|f| fix(&mut f.ty, &known, &mut lost)),
            TypeKind::External(e) => {
                e.arms.iter_mut().filter_map(|a| a.payload.as_mut()).for_each(|t| fix(t, &known, &mut lost))
            }
            TypeKind::Untagged(u) => u.arms.iter_mut().for_each(|a| fix(&mut a.ty, &known, &mut lost)),
            TypeKind::Tagged(t) => t.arms.retain(|a| {
                let keep = known.contains(&a.payload);
                if !keep {
                    lost.push(a.payload.clone());
                }
                keep
            }),
            _ => {}
        }
        found.extend(lost.into_iter().map(|name| (def.schema.clone(), name)));
    }
    for direction in Direction::ALL {
        for method in ir.methods_mut(direction) {
            let mut lost = Vec::new();
            if let Params::Required(t) | Params::Optional(t) = &mut method.params {
                fix(t, &known, &mut lost);
            }
            if let Some(t) = &mut method.response {
                fix(t, &known, &mut lost);
            }
            found.extend(lost.into_iter().map(|name| (method.wire.clone(), name)));
        }
    }
    for (owner, name) in found {
        warnings.push(Warning::range(
            format!("#/definitions/{owner}"),
            format!(
                "`{owner}` had, in an older release of the range, a member, arm or params of a type the range's \
                 types do not have under that name (`{name}`): typed as any JSON value (an arm of it is left out)"
            ),
        ));
    }
}

/// Puts a retired item back into the IR, unless something of its name is there. Its owner is
/// found by schema name.
fn restore(ir: &mut Ir, r: &Retired, warnings: &mut Vec<Warning>) {
    let mismatch = |owner: &str, what: &str| {
        Warning::range(
            format!("#/definitions/{owner}"),
            format!(
                "`{owner}` is of another kind than when it had a {what} the newest release lacks: \
                 its newest kind is kept, and older values decode as that kind decodes them"
            ),
        )
    };
    if let Retired::Method { direction, method } = r {
        let methods = ir.methods_mut(*direction);
        if !methods.iter().any(|m| m.wire == method.wire) {
            methods.push(method.clone());
        }
        return;
    }
    let owner = retired_owner(r).unwrap_or_default();
    if let Retired::Field { field, .. } = r {
        if owner == ENVELOPE {
            if !ir.notification_envelope.iter().any(|f| f.wire == field.wire) {
                let mut field = field.clone();
                field.required = false;
                ir.notification_envelope.push(field);
            }
            return;
        }
    }
    let Some(def) = ir.types.values_mut().find(|d| d.schema == owner) else {
        warnings.push(Warning::range(
            format!("#/definitions/{owner}"),
            format!("`{owner}` is not in the range's types: what an older release had in it is left out"),
        ));
        return;
    };
    match (r, &mut def.kind) {
        (Retired::Field { field, .. }, TypeKind::Struct(s)) => {
            if !s.fields.iter().any(|f| f.wire == field.wire || f.rust == field.rust) {
                let mut field = field.clone();
                field.required = false;
                s.fields.push(field);
                s.fields.sort_by(|a, b| a.wire.cmp(&b.wire));
            }
        }
        (Retired::Value { value, .. }, TypeKind::StringEnum(e)) => {
            if !e.values.iter().any(|v| v.wire == value.wire || v.rust == value.rust) {
                e.values.push(value.clone());
            }
        }
        (Retired::TaggedArm { arm, .. }, TypeKind::Tagged(t)) => {
            if !t.arms.iter().any(|a| a.wire == arm.wire || a.rust == arm.rust) {
                t.arms.push(arm.clone());
            }
        }
        (Retired::ExternalArm { arm, .. }, TypeKind::External(t)) => {
            if !t.arms.iter().any(|a| a.wire == arm.wire || a.rust == arm.rust) {
                t.arms.push(arm.clone());
            }
        }
        (Retired::UntaggedArm { arm, .. }, TypeKind::Untagged(t)) => {
            if !t.arms.iter().any(|a| a.rust == arm.rust) {
                t.arms.push(arm.clone());
            }
        }
        (Retired::Field { .. }, _) => warnings.push(mismatch(owner, "member")),
        (Retired::Value { .. }, _) => warnings.push(mismatch(owner, "value")),
        _ => warnings.push(mismatch(owner, "union arm")),
    }
}

/// The member `key` names of the type whose Rust name is `owner`.
fn field_mut<'a>(ir: &'a mut Ir, owner: &str, key: &str) -> Option<&'a mut Field> {
    let wire = match owner {
        ENVELOPE => key.strip_prefix("ServerNotification.")?,
        _ => key.strip_prefix(ir.types.get(owner)?.schema.as_str())?.strip_prefix('.')?,
    }
    .to_owned();
    if owner == ENVELOPE {
        return ir.notification_envelope.iter_mut().find(|f| f.wire == wire);
    }
    match &mut ir.types.get_mut(owner)?.kind {
        TypeKind::Struct(s) => s.fields.iter_mut().find(|f| f.wire == wire),
        _ => None,
    }
}

/// Retired types that nothing in the IR refers to any more (an inline type the generator now
/// names otherwise, a type only a retired method used, when that method is out of range) go.
fn prune_unreachable(ir: &mut Ir, retired: &BTreeMap<String, TypeDef>) {
    let mut seen = BTreeSet::new();
    let mut stack: Vec<String> = Vec::new();
    let push_ty = |ty: &Ty, stack: &mut Vec<String>| named_in(ty, &mut |n| stack.push(n.to_owned()));
    for direction in Direction::ALL {
        for m in ir.methods(direction) {
            if let Some(t) = m.params.ty() {
                push_ty(t, &mut stack);
            }
            if let Some(t) = &m.response {
                push_ty(t, &mut stack);
            }
        }
    }
    for f in &ir.notification_envelope {
        push_ty(&f.ty, &mut stack);
    }
    // Every type of the newest release stays (it is the schema's); only retired ones may go.
    for (name, def) in &ir.types {
        if retired.get(&def.schema).is_none_or(|d| d != def) {
            stack.push(name.clone());
        }
    }
    while let Some(name) = stack.pop() {
        if !seen.insert(name.clone()) {
            continue;
        }
        let Some(def) = ir.types.get(&name) else { continue };
        for_each_ty(&def.kind, &mut |t| push_ty(t, &mut stack));
    }
    ir.types.retain(|name, _| seen.contains(name));
}

/// The types the client receives: reachable from responses, server requests' params, server
/// notifications' params and the notification envelope.
fn received_types(ir: &Ir) -> BTreeSet<String> {
    let mut stack = Vec::new();
    for direction in Direction::ALL {
        for m in ir.methods(direction) {
            let received = match direction {
                Direction::ClientRequest => m.response.as_ref(),
                Direction::ServerRequest | Direction::ServerNotification => m.params.ty(),
                Direction::ClientNotification => None,
            };
            if let Some(t) = received {
                named_in(t, &mut |n| stack.push(n.to_owned()));
            }
        }
    }
    for f in &ir.notification_envelope {
        named_in(&f.ty, &mut |n| stack.push(n.to_owned()));
    }
    let mut seen = BTreeSet::new();
    while let Some(name) = stack.pop() {
        if seen.insert(name.clone()) {
            if let Some(def) = ir.types.get(&name) {
                for_each_ty(&def.kind, &mut |t| named_in(t, &mut |n| stack.push(n.to_owned())));
            }
        }
    }
    seen
}

fn for_each_ty(kind: &TypeKind, f: &mut dyn FnMut(&Ty)) {
    match kind {
        TypeKind::Alias(t) => f(t),
        TypeKind::Struct(s) => {
            s.fields.iter().for_each(|x| f(&x.ty));
            if let Some(e) = &s.extra {
                f(e);
            }
        }
        TypeKind::StringEnum(_) => {}
        TypeKind::Tagged(t) => t.arms.iter().for_each(|a| f(&Ty::Named(a.payload.clone()))),
        TypeKind::External(e) => e.arms.iter().filter_map(|a| a.payload.as_ref()).for_each(f),
        TypeKind::Untagged(u) => u.arms.iter().for_each(|a| f(&a.ty)),
    }
}

fn named_in(ty: &Ty, f: &mut dyn FnMut(&str)) {
    match ty {
        Ty::Named(n) => f(n),
        Ty::Vec(t) | Ty::Map(t) | Ty::Option(t) | Ty::Boxed(t) => named_in(t, f),
        Ty::Tuple(items) => items.iter().for_each(|t| named_in(t, f)),
        Ty::String | Ty::Bool | Ty::Int(_) | Ty::Float | Ty::Any | Ty::Unit => {}
    }
}

/// Whether every value of `old` (a type of `old_ir`) has a JSON type that `new` (of `new_ir`)
/// accepts: arrays item by item, everything else by the JSON types at the top. A named type
/// of the same name is the same type (its contents are merged member by member).
fn accepts(old_ir: &Ir, old: &Ty, new_ir: &Ir, new: &Ty) -> bool {
    match (old.unboxed(), new.unboxed()) {
        (Ty::Named(a), Ty::Named(b)) if a == b => true,
        (_, Ty::Any) => true,
        (Ty::Option(a), b) => accepts(old_ir, a, new_ir, b) || matches!(b, Ty::Option(_)),
        (a, Ty::Option(b)) => accepts(old_ir, a, new_ir, b),
        (Ty::Vec(a), Ty::Vec(b)) => accepts(old_ir, a, new_ir, b),
        (a, b) => json_types(old_ir, a, 0).is_subset(&json_types(new_ir, b, 0)),
    }
}

fn json_types(ir: &Ir, ty: &Ty, depth: usize) -> BTreeSet<JsonType> {
    use JsonType::*;
    let all = || [Null, Boolean, Integer, Number, String, Array, Object].into_iter().collect();
    if depth > 16 {
        return all();
    }
    match ty {
        Ty::Any => all(),
        Ty::String => [String].into(),
        Ty::Bool => [Boolean].into(),
        Ty::Int(_) => [Integer].into(),
        Ty::Float => [Integer, Number].into(),
        Ty::Unit => [Null].into(),
        Ty::Vec(_) | Ty::Tuple(_) => [Array].into(),
        Ty::Map(_) => [Object].into(),
        Ty::Option(t) | Ty::Boxed(t) => {
            let mut s = json_types(ir, t, depth + 1);
            if matches!(ty, Ty::Option(_)) {
                s.insert(Null);
            }
            s
        }
        Ty::Named(n) => match ir.types.get(n).map(|d| &d.kind) {
            None => all(),
            Some(TypeKind::Alias(t)) => json_types(ir, t, depth + 1),
            Some(TypeKind::Struct(_) | TypeKind::Tagged(_)) => [Object].into(),
            Some(TypeKind::StringEnum(_)) => [String].into(),
            Some(TypeKind::External(_)) => [String, Object].into(),
            Some(TypeKind::Untagged(u)) => u.arms.iter().flat_map(|a| json_types(ir, &a.ty, depth + 1)).collect(),
        },
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::decisions::Decisions;
    use crate::diff::tests::bundle;
    use crate::{build_ir_with, SchemaSet, Settings};

    fn ir(version: &str, methods: &[&str], defs: &str) -> Ir {
        let set = SchemaSet { stable: bundle(methods, defs), experimental: None, codex_version: version.into() };
        build_ir_with(&set, &Settings::with_decisions(Decisions::default()).proposing()).unwrap()
    }

    fn field<'a>(ir: &'a Ir, owner: &str, wire: &str) -> &'a Field {
        match &ir.types[owner].kind {
            TypeKind::Struct(s) => s.fields.iter().find(|f| f.wire == wire).unwrap(),
            k => panic!("{owner} is {k:?}"),
        }
    }

    #[test]
    fn the_range_keeps_what_went_relaxes_what_came_and_widens_what_changed() {
        let v1 = ir(
            "1.0.0",
            &["c a/b P", "n old/n N", "n s/t S"],
            r#""P": {"type": "object", "required": ["x"], "properties": {"x": {"type": "string"}}},
               "N": {"type": "object", "properties": {}},
               "S": {"type": "object", "required": ["v"], "properties": {"v": {"type": "boolean"}}}"#,
        );
        let v2 = ir(
            "1.1.0",
            &["c a/b P", "c new/m P", "n s/t S"],
            r##""P": {"type": "object", "required": ["x", "y"], "properties": {"x": {"type": "string"}, "y": {"type": "integer"}}},
               "S": {"type": "object", "required": ["v"], "properties": {"v": {"$ref": "#/definitions/O"}}},
               "O": {"type": "object", "properties": {}}"##,
        );
        let mut history = History::start("1.0.0");
        history.extend(&v1, &v2, "1.1.0");
        assert_eq!(history.newest(), "1.1.0");
        // The committed form reads back as it was written: the facts, then what was retired
        // when it was folded from the same inputs.
        assert!(!history.retired.is_empty() && !history.retired_types.is_empty(), "{history:?}");
        let back = History::from_json(&history.to_json()).unwrap();
        let text = serde_json::to_string(&history.retired_file("inputs")).unwrap();
        let retired: RetiredFile = serde_json::from_str(&text).unwrap();
        assert_eq!(back.clone().with_retired(retired.clone(), "inputs"), Some(history.clone()));
        assert_eq!(back.with_retired(retired, "other inputs"), None);

        let mut range = v2.clone();
        history.apply(&mut range, None).unwrap();
        let removed = range.server_notifications.iter().find(|m| m.wire == "old/n").expect("a removed method stays");
        assert!(range.types.contains_key("N"), "with its params type: {removed:?}");
        assert_eq!(range.availability["ServerNotification:old/n"].until.as_deref(), Some("1.0.0"));
        assert_eq!(range.availability["ClientRequest:new/m"].since, "1.1.0");
        // `P.y`: required now, absent in 1.0.0, which had `P`.
        assert!(!field(&range, "P", "y").required);
        assert_eq!(range.availability["P.y"].always_since.as_deref(), Some("1.1.0"));
        assert!(field(&range, "P", "x").required);
        // `S.v` was a boolean: what the client receives accepts both.
        assert_eq!(field(&range, "S", "v").ty, Ty::Any);
        assert!(range.warnings.iter().any(|w| w.message.contains("S.v")), "{:?}", range.warnings);

        // The floor moved up to 1.1.0: nothing of 1.0.0 is kept or relaxed.
        let mut newest_only = v2.clone();
        history.apply(&mut newest_only, Some("1.1.0")).unwrap();
        assert!(!newest_only.server_notifications.iter().any(|m| m.wire == "old/n"));
        assert!(field(&newest_only, "P", "y").required);
        assert_ne!(field(&newest_only, "S", "v").ty, Ty::Any);
        assert!(history.apply(&mut v2.clone(), Some("0.9.0")).is_err(), "a floor outside the history");
    }

    #[test]
    fn a_restored_member_whose_type_the_range_does_not_name_is_any_json_value() {
        let v1 = ir(
            "1.0.0",
            &["c a/b P"],
            r#""P": {"type": "object", "properties": {"x": {"type": "string"}, "old": {"type": "string"}}}"#,
        );
        let v2 = ir("1.1.0", &["c a/b P"], r#""P": {"type": "object", "properties": {"x": {"type": "string"}}}"#);
        let mut history = History::start("1.0.0");
        history.extend(&v1, &v2, "1.1.0");
        // As when the older release's lowering named the member's type apart (`V1AskForApproval`
        // beside a v2 `AskForApproval`), a name the range's types do not have.
        match history.retired.get_mut("P.old") {
            Some(Retired::Field { field, .. }) => field.ty = Ty::Named("V1Gone".into()),
            other => panic!("P.old is not a retired member: {other:?}"),
        }
        let mut range = v2.clone();
        history.apply(&mut range, None).unwrap();
        assert_eq!(field(&range, "P", "old").ty, Ty::Any);
        assert!(range.warnings.iter().any(|w| w.message.contains("`V1Gone`")), "{:?}", range.warnings);
    }
}
