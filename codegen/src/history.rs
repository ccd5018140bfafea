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
    /// A member: the first release from which every release required it (`None`: optional in
    /// the newest release).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub required_since: Option<String>,
    /// A member: the last release whose type for it had values the newer type does not accept.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub widened_until: Option<String>,
}

impl Availability {
    /// In every release from `since` on.
    fn since(since: &str) -> Availability {
        Availability { since: since.to_owned(), until: None, required_since: None, widened_until: None }
    }
}

/// Something the newest release no longer has, as the last release that had it lowered it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Retired {
    Method { direction: Direction, method: Method },
    Type(TypeDef),
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
    /// Items that were not in every release of the range, by key ([`keys`]).
    pub items: BTreeMap<String, Availability>,
    /// What the newest release lacks, by key.
    pub retired: BTreeMap<String, Retired>,
}

/// Compares release versions (semver, pre-releases before their release).
pub fn version_cmp(a: &str, b: &str) -> std::cmp::Ordering {
    match (semver::Version::parse(a), semver::Version::parse(b)) {
        (Ok(x), Ok(y)) => x.cmp(&y),
        _ => a.cmp(b),
    }
}

/// The keys of an IR's items: `dir:method` for methods (`ClientRequest:thread/list`), `Type`,
/// `Type.member` (wire name), `Type::value` for enum values and union arms (the tag, key or,
/// for an untagged arm, its variant name), `ServerNotification.emittedAtMs` for the envelope.
pub mod keys {
    use crate::ir::Direction;

    pub fn method(direction: Direction, wire: &str) -> String {
        format!("{}:{wire}", direction.union_name())
    }
    pub fn member(owner: &str, wire: &str) -> String {
        format!("{owner}.{wire}")
    }
    pub fn value(owner: &str, wire: &str) -> String {
        format!("{owner}::{wire}")
    }
}

/// One item of an IR's surface.
#[derive(Debug, Clone, Copy)]
enum Item<'a> {
    Method(Direction, &'a Method),
    Type(&'a TypeDef),
    Field(&'a str, &'a Field),
    Value(&'a str, &'a EnumValue),
    TaggedArm(&'a str, &'a TaggedArm),
    ExternalArm(&'a str, &'a ExternalArm),
    UntaggedArm(&'a str, &'a UntaggedArm),
}

const ENVELOPE: &str = "ServerNotification";

fn surface(ir: &Ir) -> BTreeMap<String, Item<'_>> {
    let mut out = BTreeMap::new();
    for direction in Direction::ALL {
        for m in ir.methods(direction) {
            out.insert(keys::method(direction, &m.wire), Item::Method(direction, m));
        }
    }
    for f in &ir.notification_envelope {
        out.insert(keys::member(ENVELOPE, &f.wire), Item::Field(ENVELOPE, f));
    }
    for (name, def) in &ir.types {
        out.insert(name.clone(), Item::Type(def));
        let owner = name.as_str();
        match &def.kind {
            TypeKind::Alias(_) => {}
            TypeKind::Struct(s) => {
                for f in &s.fields {
                    out.insert(keys::member(owner, &f.wire), Item::Field(owner, f));
                }
            }
            TypeKind::StringEnum(e) => {
                for v in &e.values {
                    out.insert(keys::value(owner, &v.wire), Item::Value(owner, v));
                }
            }
            TypeKind::Tagged(t) => {
                for a in &t.arms {
                    out.insert(keys::value(owner, &a.wire), Item::TaggedArm(owner, a));
                }
            }
            TypeKind::External(e) => {
                for a in &e.arms {
                    out.insert(keys::value(owner, &a.wire), Item::ExternalArm(owner, a));
                }
            }
            TypeKind::Untagged(u) => {
                for a in &u.arms {
                    out.insert(keys::value(owner, &a.rust), Item::UntaggedArm(owner, a));
                }
            }
        }
    }
    out
}

fn retire(item: Item<'_>) -> Retired {
    match item {
        Item::Method(direction, m) => Retired::Method { direction, method: m.clone() },
        Item::Type(t) => Retired::Type(t.clone()),
        Item::Field(o, f) => Retired::Field { owner: o.to_owned(), field: f.clone() },
        Item::Value(o, v) => Retired::Value { owner: o.to_owned(), value: v.clone() },
        Item::TaggedArm(o, a) => Retired::TaggedArm { owner: o.to_owned(), arm: a.clone() },
        Item::ExternalArm(o, a) => Retired::ExternalArm { owner: o.to_owned(), arm: a.clone() },
        Item::UntaggedArm(o, a) => Retired::UntaggedArm { owner: o.to_owned(), arm: a.clone() },
    }
}

/// The item's owner type, for members, values and arms.
fn owner<'a>(item: &Item<'a>) -> Option<&'a str> {
    match item {
        Item::Field(o, _)
        | Item::Value(o, _)
        | Item::TaggedArm(o, _)
        | Item::ExternalArm(o, _)
        | Item::UntaggedArm(o, _) => Some(o),
        Item::Method(..) | Item::Type(_) => None,
    }
}

impl History {
    /// The history of one release: everything in it, since it.
    pub fn start(version: &str) -> History {
        History {
            floor: version.to_owned(),
            releases: vec![ReleaseEntry { version: version.to_owned(), skipped: None }],
            items: BTreeMap::new(),
            retired: BTreeMap::new(),
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
        for (key, item) in &after {
            match before.get(key) {
                None => {
                    let entry = self.items.entry(key.clone()).or_insert_with(|| Availability::since(version));
                    entry.until = None;
                    self.retired.remove(key);
                    if let Item::Field(_, f) = item {
                        entry.required_since = f.required.then(|| version.to_owned());
                    }
                }
                Some(old) => {
                    if let (Item::Field(_, a), Item::Field(_, b)) = (old, item) {
                        let was_required = a.required;
                        let widened = !accepts(prev, &a.ty, next, &b.ty);
                        let entry = self.items.get(key).cloned();
                        let mut entry = entry.unwrap_or_else(|| Availability {
                            required_since: was_required.then(|| self.floor.clone()),
                            ..Availability::since(&self.floor)
                        });
                        entry.required_since = match (b.required, was_required) {
                            (false, _) => None,
                            (true, true) => entry.required_since.or_else(|| Some(self.floor.clone())),
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
        for (key, item) in &before {
            if after.contains_key(key) {
                continue;
            }
            let entry = self.items.entry(key.clone()).or_insert_with(|| Availability::since(&self.floor));
            entry.until = Some(newest.clone());
            entry.required_since = None;
            // A member, value or arm of a type that went as a whole comes back with its type.
            if owner(item).is_some_and(|o| !next.types.contains_key(o)) {
                continue;
            }
            self.retired.insert(key.clone(), retire(*item));
        }
        // Members, values and arms of a retired type are kept with it, not on their own.
        let whole: BTreeSet<String> =
            self.retired.iter().filter(|(_, r)| matches!(r, Retired::Type(_))).map(|(k, _)| k.clone()).collect();
        self.retired.retain(|_, r| retired_owner(r).is_none_or(|o| !whole.contains(o)));
        self.releases.push(ReleaseEntry { version: version.to_owned(), skipped: None });
        self.sort_releases();
        self.compact();
    }

    /// Drops the items that are plain (in every release of the range, required since the floor
    /// where required): the committed form does not list them.
    fn compact(&mut self) {
        let floor = self.floor.clone();
        self.items.retain(|_, a| {
            a.since != floor
                || a.until.is_some()
                || a.widened_until.is_some()
                || a.required_since.as_ref().is_some_and(|r| *r != floor)
        });
    }

    /// The availability of an item of the newest release's IR (or a retired one).
    pub fn availability(&self, key: &str) -> Availability {
        self.items.get(key).cloned().unwrap_or_else(|| Availability::since(&self.floor))
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
        out.push_str("  ],\n  \"items\": {\n");
        push_lines(&mut out, self.items.iter().map(|(k, v)| format!("{}: {}", line(k), line(v))));
        out.push_str("  },\n  \"retired\": {\n");
        push_lines(&mut out, self.retired.iter().map(|(k, v)| format!("{}: {}", line(k), line(v))));
        out.push_str("  }\n}\n");
        out
    }

    pub fn from_json(text: &str) -> Result<History, Error> {
        serde_json::from_str(text).map_err(|e| Error::new("", format!("{HISTORY_FILE}: {e}")))
    }

    /// The IR of the range: see the module docs. `floor` (a release of the history) moves the
    /// range's start up; what only releases before it had is left out.
    pub fn apply(&self, ir: &mut Ir, floor: Option<&str>) -> Result<(), Error> {
        let floor = floor.unwrap_or(&self.floor).to_owned();
        if !self.releases.iter().any(|r| r.version == floor) {
            return Err(Error::new(
                "",
                format!(
                    "the floor {floor} is not a release of the history ({} to {}); run `cargo xtask history --floor {floor}`",
                    self.floor,
                    self.newest()
                ),
            ));
        }
        let in_range = |a: &Availability| a.until.as_deref().is_none_or(|u| version_cmp(u, &floor).is_ge());
        fn after<'a>(v: &'a Option<String>, floor: &str) -> Option<&'a str> {
            v.as_deref().filter(|v| version_cmp(v, floor).is_gt())
        }
        let mut warnings = Vec::new();
        // Whole types first, so their members, values and arms find them.
        let mut retired: Vec<(&String, &Retired)> = self.retired.iter().collect();
        retired.sort_by_key(|(_, r)| !matches!(r, Retired::Type(_)));
        for (key, r) in retired {
            if !in_range(&self.availability(key)) {
                continue;
            }
            restore(ir, r, &mut warnings);
        }
        // Relax and widen members; record every item's availability.
        let received = received_types(ir);
        let mut availability = BTreeMap::new();
        let keys: Vec<String> = surface(ir).into_keys().collect();
        for key in keys {
            let mut a = self.availability(&key);
            if !in_range(&a) {
                continue;
            }
            if version_cmp(&a.since, &floor).is_lt() {
                a.since = floor.clone();
            }
            // Required since a release after the floor and after its type came: an older
            // release that had the type may leave the member out.
            let owner_since = key.split_once('.').map(|(o, _)| self.availability(o).since);
            let relax = after(&a.required_since, &floor)
                .filter(|r| owner_since.as_deref().is_none_or(|o| version_cmp(r, o).is_gt()))
                .map(str::to_owned);
            // Only what the client receives must decode whatever an older release sent.
            let widen = a.widened_until.as_deref().is_some_and(|w| version_cmp(w, &floor).is_ge())
                && key.split_once('.').is_some_and(|(o, _)| o == ENVELOPE || received.contains(o));
            if relax.is_some() || widen {
                if let Some(field) = field_mut(ir, &key) {
                    if relax.is_some() {
                        field.required = false;
                    }
                    if widen && field.ty != Ty::Any {
                        warnings.push(Warning::new(
                            format!("#/definitions/{}", key.split('.').next().unwrap_or_default()),
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
                a.required_since = relax;
                a.widened_until = None;
                availability.insert(key, a);
            }
        }
        prune_unreachable(ir, &self.retired);
        let kept = surface(ir);
        availability.retain(|k, _| kept.contains_key(k));
        ir.availability = availability;
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
        Retired::Method { .. } | Retired::Type(_) => None,
    }
}

/// Puts a retired item back into the IR, unless something of its name is there.
fn restore(ir: &mut Ir, r: &Retired, warnings: &mut Vec<Warning>) {
    let mismatch = |owner: &str, what: &str| {
        Warning::new(
            format!("#/definitions/{owner}"),
            format!(
                "`{owner}` is of another kind than when it had a {what} the newest release lacks: \
                 its newest kind is kept, and older values decode as that kind decodes them"
            ),
        )
    };
    match r {
        Retired::Method { direction, method } => {
            let methods = ir.methods_mut(*direction);
            if !methods.iter().any(|m| m.wire == method.wire) {
                methods.push(method.clone());
            }
        }
        Retired::Type(def) => {
            ir.types.entry(def.name.clone()).or_insert_with(|| def.clone());
        }
        Retired::Field { owner, field } => {
            let mut field = field.clone();
            field.required = false;
            if owner == ENVELOPE {
                if !ir.notification_envelope.iter().any(|f| f.wire == field.wire) {
                    ir.notification_envelope.push(field);
                }
                return;
            }
            match ir.types.get_mut(owner).map(|d| &mut d.kind) {
                Some(TypeKind::Struct(s)) => {
                    if !s.fields.iter().any(|f| f.wire == field.wire || f.rust == field.rust) {
                        s.fields.push(field);
                        s.fields.sort_by(|a, b| a.wire.cmp(&b.wire));
                    }
                }
                _ => warnings.push(mismatch(owner, "member")),
            }
        }
        Retired::Value { owner, value } => match ir.types.get_mut(owner).map(|d| &mut d.kind) {
            Some(TypeKind::StringEnum(e)) => {
                if !e.values.iter().any(|v| v.wire == value.wire || v.rust == value.rust) {
                    e.values.push(value.clone());
                }
            }
            _ => warnings.push(mismatch(owner, "value")),
        },
        Retired::TaggedArm { owner, arm } => match ir.types.get_mut(owner).map(|d| &mut d.kind) {
            Some(TypeKind::Tagged(t)) => {
                if !t.arms.iter().any(|a| a.wire == arm.wire || a.rust == arm.rust) {
                    t.arms.push(arm.clone());
                }
            }
            _ => warnings.push(mismatch(owner, "union arm")),
        },
        Retired::ExternalArm { owner, arm } => match ir.types.get_mut(owner).map(|d| &mut d.kind) {
            Some(TypeKind::External(t)) => {
                if !t.arms.iter().any(|a| a.wire == arm.wire || a.rust == arm.rust) {
                    t.arms.push(arm.clone());
                }
            }
            _ => warnings.push(mismatch(owner, "union arm")),
        },
        Retired::UntaggedArm { owner, arm } => match ir.types.get_mut(owner).map(|d| &mut d.kind) {
            Some(TypeKind::Untagged(t)) => {
                if !t.arms.iter().any(|a| a.rust == arm.rust) {
                    t.arms.push(arm.clone());
                }
            }
            _ => warnings.push(mismatch(owner, "union arm")),
        },
    }
}

fn field_mut<'a>(ir: &'a mut Ir, key: &str) -> Option<&'a mut Field> {
    let (owner, wire) = key.split_once('.')?;
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
fn prune_unreachable(ir: &mut Ir, retired: &BTreeMap<String, Retired>) {
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
        if !matches!(retired.get(name), Some(Retired::Type(d)) if d == def) {
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

fn push_lines(out: &mut String, lines: impl Iterator<Item = String>) {
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
        // The committed form reads back as it was written.
        assert_eq!(History::from_json(&history.to_json()).unwrap(), history);

        let mut range = v2.clone();
        history.apply(&mut range, None).unwrap();
        let removed = range.server_notifications.iter().find(|m| m.wire == "old/n").expect("a removed method stays");
        assert!(range.types.contains_key("N"), "with its params type: {removed:?}");
        assert_eq!(range.availability["ServerNotification:old/n"].until.as_deref(), Some("1.0.0"));
        assert_eq!(range.availability["ClientRequest:new/m"].since, "1.1.0");
        // `P.y`: required now, absent in 1.0.0, which had `P`.
        assert!(!field(&range, "P", "y").required);
        assert_eq!(range.availability["P.y"].required_since.as_deref(), Some("1.1.0"));
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
}
