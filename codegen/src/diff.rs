//! The protocol changelog between two codex releases: compares two [`Ir`]s (not the JSON text)
//! and says what each change means for a client that upgrades its generated types.
//!
//! # What is compared
//!
//! - Methods, per direction, by wire name: added, removed, moved between experimental and
//!   stable, params presence, params and response types.
//! - Named types (schema definitions), by name: added, removed, renamed (see below), and their
//!   contents: fields (added, removed, renamed-looking, changed type, required/optional and
//!   nullable), enum values and union variants (added, removed, respelled), experimental marks.
//! - Inline types (a schema nested in a definition, which the generator names after its title or
//!   position: `ThreadStartParamsMode`, `CommandExecutionThreadItem`) have no identity of their
//!   own: they are compared where they are used, and their changes are reported at that place
//!   (`ThreadItem::commandExecution.status`). A different generated name for the same place is
//!   reported once, as a Rust-API-only change. So an inline type the generator renumbered
//!   because a new type took its name shows up as one rename, not as a removal and an addition.
//! - The `ServerNotification` envelope members (`emittedAtMs`).
//!
//! Descriptions are not compared.
//!
//! # Sends and receives
//!
//! Each type has a direction, seen from the client. The client **sends** what is reachable from
//! client-request params, client-notification params and server-request responses; it
//! **receives** what is reachable from client-request responses, server-request params,
//! server-notification params and the notification envelope. A type can be both; a type no
//! method reaches has neither (its changes are listed, and never breaking).
//!
//! A change is **breaking** when a client that upgrades its types must change its code or
//! behaviour for one of its roles; otherwise it is **compatible** (maybe something new to use or
//! handle). "Receives" rules consider that an upgraded client may still talk to an older codex
//! (or read recorded traffic): a member the new types require that an older codex does not send
//! makes those messages fail to decode.
//!
//! | change | client sends it | client receives it |
//! |---|---|---|
//! | method added | compatible | compatible (a new server request must be answered, with an error if unsupported; a new notification decodes as unknown until handled) |
//! | method removed | **breaking**: the server rejects it | **breaking**: it never arrives again |
//! | method, type or member: experimental -> stable | compatible | compatible |
//! | method, type or member: stable -> experimental | **breaking**: needs the opt-in now | **breaking**: only sent to opted-in clients now |
//! | params presence (none, optional, required) | as for a member named `params`, below | same |
//! | type added | compatible | compatible |
//! | type of a member, params, response or variant payload changed; tag or kind of type changed | **breaking** | **breaking** |
//! | required field added | **breaking**: must set it | **breaking**: an older codex does not send it, its messages no longer decode |
//! | required nullable field added | compatible (`None` is written as `null`) | compatible (missing reads as `None`) |
//! | optional field added | compatible | compatible |
//! | field removed | **breaking**: no longer read | **breaking**: no longer sent |
//! | field renamed (looks like it) | **breaking** | **breaking** |
//! | field became required (`Option<T>` -> `T`) | **breaking**: must set it | **breaking**: an older codex may leave it out |
//! | field became optional or nullable (`T` -> `Option<T>`) | compatible | **breaking**: must handle `None` |
//! | other presence changes (`Option<T>` <-> `Option<Option<T>>`, required nullable <-> optional) | compatible | compatible |
//! | enum value or union variant added | compatible | compatible: something new to handle (it decoded as `Unrecognized` before) |
//! | enum value or union variant removed | **breaking**: the server rejects it | **breaking**: code matching it must change |
//! | enum value or variant respelled (only case or separators differ) | **breaking** | **breaking** |
//! | kept map of undeclared members (`additionalProperties`) added | compatible | compatible |
//! | kept map removed or its type changed | **breaking** | **breaking** |
//! | type removed, or renamed with the same shape (incl. another alias of the same type) | Rust API only | Rust API only |
//!
//! "Renamed-looking" fields: a removed and an added field whose names differ only in case and
//! separators, or the only field removed from a struct and the only one added, with the same
//! type and presence. A removed and an added definition are a rename when they have the same
//! shape, share a word in their names, and neither has another candidate.
//!
//! A change is **experimental** when it is confined to the experimental API (an experimental
//! method, type or member, in the version where it exists); clients without the
//! `experimentalApi` opt-in can skip those. Moves between stable and experimental are never
//! experimental: they are about the stable surface.
//!
//! # Rust source
//!
//! The verdicts are about the wire and the shape of the types (`T` vs `Option<T>`, a type that
//! changed). Two Rust-source effects are left out because every added member has them:
//! an added field breaks struct literals that list every field (use `..Default::default()`
//! where the struct has a `Default`), and an added enum value or variant breaks `match`es that
//! list every variant without a `_` arm. Changes that only touch the Rust API are their own
//! category, "Rust API only": a type removed (where it was used, what replaced it is reported
//! with its own verdict), a type renamed with the same shape, an inline type the generator
//! named differently. The wire is unchanged, but code that names them must follow.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;

use serde::{Serialize, Serializer};

use crate::ir::*;
use crate::{naming, Error, SchemaSet};

// ---------------------------------------------------------------------------------------------
// The report
// ---------------------------------------------------------------------------------------------

/// Every change between two schema sets, with headline counts.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Report {
    pub old_version: String,
    pub new_version: String,
    /// Whether each side had an experimental bundle (its experimental marks are meaningful).
    pub old_has_experimental: bool,
    pub new_has_experimental: bool,
    pub counts: Counts,
    /// Breaking first, then compatible, then Rust-API-only; each grouped by [`Home`].
    pub changes: Vec<Change>,
    /// Roles and users of every type that a change is filed under (see [`Home::Shared`]).
    pub types: BTreeMap<String, Usage>,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Counts {
    pub breaking: usize,
    /// Of `breaking`, how many only concern the experimental API.
    pub breaking_experimental: usize,
    pub compatible: usize,
    pub compatible_experimental: usize,
    /// Types removed or renamed: code that names them changes, the wire does not.
    pub rust_api: usize,
    pub methods_added: usize,
    pub methods_removed: usize,
    pub methods_to_stable: usize,
    pub methods_to_experimental: usize,
    /// Methods with any other change of their own (params or response).
    pub methods_changed: usize,
    pub types_added: usize,
    pub types_removed: usize,
    pub types_renamed: usize,
    /// Named types with a change to their contents.
    pub types_changed: usize,
}

/// One change.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Change {
    /// Where the change is filed.
    pub home: Home,
    /// What changed: a method (`thread/start`, `thread/start params`), or a path into a type:
    /// `Type.member`, `::value` for a union variant, `[]` an array item, `{}` a map value.
    pub path: String,
    #[serde(flatten)]
    pub kind: Kind,
    /// Confined to the experimental API.
    pub experimental: bool,
    pub severity: Severity,
    /// The effect on a client that sends the changed value; `None` when it does not send it.
    pub sends: Option<Effect>,
    /// The effect on a client that receives the changed value; `None` when it does not.
    pub receives: Option<Effect>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Severity {
    Breaking,
    Compatible,
    /// Only the Rust API changed (a type removed or renamed); the wire is the same.
    RustApi,
}

/// What a change means for one role.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Effect {
    pub breaking: bool,
    /// Why, or what to do; empty when there is nothing to add.
    pub why: String,
}

/// Where a change is filed: under the one method whose messages carry the changed type, or,
/// for a type several methods use, under the type itself.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(tag = "home", rename_all = "snake_case")]
pub enum Home {
    Method {
        #[serde(serialize_with = "direction_name")]
        direction: Direction,
        method: String,
        /// The method is experimental (in the new version; in the old one if it was removed).
        experimental: bool,
    },
    /// A type used by several methods (its users are in [`Report::types`]).
    Shared { name: String, experimental: bool },
    /// A type no method uses.
    Unused { name: String, experimental: bool },
    /// The members every server notification may carry next to `method` and `params`.
    Envelope,
}

/// Who uses a type, in either version.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Usage {
    pub sends: bool,
    pub receives: bool,
    /// The methods whose messages carry it (wire names), sorted.
    pub methods: Vec<String>,
}

/// What changed. Types are written as the generated Rust type (`Option<String>`, `Vec<Turn>`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Kind {
    MethodAdded { params: Option<String>, response: Option<String> },
    MethodRemoved,
    /// A method, type or member that was experimental is stable.
    ToStable,
    /// A method, type or member that was stable is experimental.
    ToExperimental,
    /// How the method carries params (`none`, `required T`, `optional T`).
    ParamsChanged { old: String, new: String },
    TypeAdded,
    TypeRemoved,
    /// The type's name changed, its shape did not (a renamed definition, a renumbered inline
    /// type, a definition that replaced an inline type, another alias of the same type).
    /// `alias_of`: both names are aliases of this Rust type, so even code is unaffected.
    Renamed { old: String, new: String, alias_of: Option<String> },
    /// The kind of type changed (struct, enum, union, alias).
    ShapeChanged { old: String, new: String },
    /// The type at `path` changed.
    TypeChanged { old: String, new: String },
    FieldAdded { ty: String, presence: String },
    FieldRemoved { ty: String, presence: String },
    /// One field removed and one added with the same type and presence.
    FieldRenamed { old: String, new: String, ty: String },
    /// Required/optional/nullable changed (`ty` is the Rust field type before and after).
    PresenceChanged { old: String, new: String, old_ty: String, new_ty: String },
    ValueAdded { value: String },
    ValueRemoved { value: String },
    /// An enum value or union variant removed and one added that differ only in case or
    /// separators (`onFailure` -> `on-failure`).
    ValueRenamed { old: String, new: String },
    /// A union arm with a payload (`payload` is its type or a summary of its members).
    VariantAdded { value: String, payload: String },
    VariantRemoved { value: String },
    TagChanged { old: String, new: String },
    /// The map that keeps undeclared members (`additionalProperties`).
    ExtraChanged { old: Option<String>, new: Option<String> },
}

fn direction_name<S: Serializer>(d: &Direction, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(d.union_name())
}

impl Change {
    pub fn is_breaking(&self) -> bool {
        self.severity == Severity::Breaking
    }
}

impl Report {
    pub fn is_empty(&self) -> bool {
        self.changes.is_empty()
    }

    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).expect("a report serializes") + "\n"
    }

    /// One line of counts, for a terminal.
    pub fn summary(&self) -> String {
        if self.is_empty() {
            return "none".to_owned();
        }
        let c = &self.counts;
        format!(
            "{} breaking ({} experimental), {} compatible, {} Rust API only; methods: {} added, {} removed, {} changed; \
             types: {} added, {} removed, {} changed",
            c.breaking,
            c.breaking_experimental,
            c.compatible,
            c.rust_api,
            c.methods_added,
            c.methods_removed,
            c.methods_changed,
            c.types_added,
            c.types_removed,
            c.types_changed
        )
    }
}

/// Builds both IRs and compares them.
pub fn diff_sets(old: &SchemaSet, new: &SchemaSet) -> Result<Report, Error> {
    let in_version = |v: &str| {
        let v = v.to_owned();
        move |mut e: Error| {
            e.message = format!("codex {v}: {}", e.message);
            e
        }
    };
    let old_ir = crate::build_ir(old).map_err(in_version(&old.codex_version))?;
    let new_ir = crate::build_ir(new).map_err(in_version(&new.codex_version))?;
    Ok(diff(&old_ir, &old.codex_version, &new_ir, &new.codex_version))
}

/// Compares two IRs.
pub fn diff(old: &Ir, old_version: &str, new: &Ir, new_version: &str) -> Report {
    let mut d = Differ {
        old: Side::new(old),
        new: Side::new(new),
        renamed: BTreeMap::new(),
        visited: BTreeSet::new(),
        changes: Vec::new(),
    };
    d.run();
    let Differ { old: old_side, new: new_side, mut changes, .. } = d;
    // Within a home: the method's own changes (lowercase paths), then by path; a stable sort keeps
    // schema order among the changes of one path.
    let key = |c: &Change| (c.severity, c.home.clone(), c.path.starts_with(|ch: char| ch.is_ascii_uppercase()), c.path.clone());
    changes.sort_by_key(key);
    changes.dedup();
    let mut types = BTreeMap::new();
    for c in &changes {
        if let Home::Shared { name, .. } | Home::Unused { name, .. } = &c.home {
            types.entry(name.clone()).or_insert_with(|| usage(&old_side, &new_side, name));
        }
    }
    let counts = count(&changes);
    Report {
        old_version: old_version.to_owned(),
        new_version: new_version.to_owned(),
        old_has_experimental: old.has_experimental,
        new_has_experimental: new.has_experimental,
        counts,
        changes,
        types,
    }
}

fn count(changes: &[Change]) -> Counts {
    let mut c = Counts::default();
    let mut methods_changed = BTreeSet::new();
    let mut types_changed = BTreeSet::new();
    for ch in changes {
        match ch.severity {
            Severity::Breaking => {
                c.breaking += 1;
                c.breaking_experimental += usize::from(ch.experimental);
            }
            Severity::Compatible => {
                c.compatible += 1;
                c.compatible_experimental += usize::from(ch.experimental);
            }
            Severity::RustApi => c.rust_api += 1,
        }
        let method_level = !ch.path.starts_with(|c: char| c.is_ascii_uppercase());
        match &ch.kind {
            Kind::MethodAdded { .. } => c.methods_added += 1,
            Kind::MethodRemoved => c.methods_removed += 1,
            Kind::ToStable if method_level => c.methods_to_stable += 1,
            Kind::ToExperimental if method_level => c.methods_to_experimental += 1,
            Kind::TypeAdded => c.types_added += 1,
            Kind::TypeRemoved => c.types_removed += 1,
            Kind::Renamed { .. } if !ch.path.contains(['.', ':', '[', '{']) => c.types_renamed += 1,
            _ if method_level => {
                methods_changed.insert(ch.path.split(' ').next().unwrap_or_default().to_owned());
            }
            _ => {
                types_changed.insert(type_of_path(&ch.path).to_owned());
            }
        }
    }
    c.methods_changed = methods_changed.len();
    c.types_changed = types_changed.len();
    c
}

/// `ThreadItem::commandExecution.status` -> `ThreadItem`.
fn type_of_path(path: &str) -> &str {
    path.split(['.', ':', '[', '{']).next().unwrap_or(path)
}

// ---------------------------------------------------------------------------------------------
// Rules (the table in the module docs)
// ---------------------------------------------------------------------------------------------

/// `(breaking, why)` for the sending and the receiving role.
#[derive(Debug, Clone, Copy)]
struct Rule {
    sends: (bool, &'static str),
    receives: (bool, &'static str),
}

const BREAKS: bool = true;
const OK: bool = false;

const fn rule(sends: (bool, &'static str), receives: (bool, &'static str)) -> Rule {
    Rule { sends, receives }
}

const METHOD_ADDED: Rule = rule((OK, ""), (OK, ""));
const REQUEST_ADDED: Rule = rule((OK, ""), (OK, "the server may send it: answer it (with an error if unsupported)"));
const NOTIFICATION_ADDED: Rule = rule((OK, ""), (OK, ""));
const METHOD_REMOVED: Rule =
    rule((BREAKS, "the server no longer accepts it"), (BREAKS, "the server no longer sends it"));
const TO_STABLE: Rule = rule((OK, "no experimental opt-in needed"), (OK, "no experimental opt-in needed"));
const TO_EXPERIMENTAL: Rule = rule(
    (BREAKS, "needs the `experimentalApi` opt-in now"),
    (BREAKS, "only sent to clients with the `experimentalApi` opt-in now"),
);
const TYPE_ADDED: Rule = rule((OK, ""), (OK, ""));
const TYPE_REMOVED: Rule = rule((OK, "code that names it must change"), (OK, "code that names it must change"));
const RENAMED: Rule = rule((OK, "same on the wire"), (OK, "same on the wire"));
const TYPE_CHANGED: Rule =
    rule((BREAKS, "the server expects a different type"), (BREAKS, "the server sends a different type"));
const FIELD_ADDED_REQUIRED: Rule = rule(
    (BREAKS, "the server requires it: set it"),
    (BREAKS, "an older codex does not send it: its messages no longer decode"),
);
const FIELD_ADDED_REQUIRED_NULLABLE: Rule =
    rule((OK, "always written: `None` is sent as `null`"), (OK, "`None` when an older codex leaves it out"));
const FIELD_ADDED_OPTIONAL: Rule = rule((OK, ""), (OK, ""));
const FIELD_REMOVED: Rule =
    rule((BREAKS, "the server no longer reads it"), (BREAKS, "the server no longer sends it"));
const FIELD_RENAMED: Rule =
    rule((BREAKS, "the server reads the new name"), (BREAKS, "the server sends the new name"));
const BECAME_REQUIRED: Rule = rule(
    (BREAKS, "the server requires it now: set it"),
    (BREAKS, "an older codex may leave it out: its messages no longer decode"),
);
const BECAME_OPTIONAL: Rule = rule((OK, "may be left out now"), (BREAKS, "may be absent now: handle `None`"));
const BECAME_NULLABLE: Rule = rule((OK, "may be `null` now"), (BREAKS, "may be `null` now: handle `None`"));
const PRESENCE_OTHER: Rule = rule((OK, ""), (OK, ""));
const VALUE_ADDED: Rule = rule((OK, ""), (OK, "new case to handle (it decoded as `Unrecognized` before)"));
const UNTAGGED_ARM_ADDED: Rule = rule((OK, ""), (OK, "new case to handle (it failed to decode before)"));
const VALUE_RENAMED: Rule =
    rule((BREAKS, "the server expects the new spelling"), (BREAKS, "the server sends the new spelling"));
const VALUE_REMOVED: Rule = rule(
    (BREAKS, "the server no longer accepts it"),
    (BREAKS, "the server no longer sends it: code that matches it must change"),
);
const EXTRA_ADDED: Rule = rule((OK, ""), (OK, "undeclared members are kept now"));

// ---------------------------------------------------------------------------------------------
// The comparison
// ---------------------------------------------------------------------------------------------

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct Roles {
    sends: bool,
    receives: bool,
}

impl Roles {
    const SENDS: Roles = Roles { sends: true, receives: false };
    const RECEIVES: Roles = Roles { sends: false, receives: true };

    fn union(self, other: Roles) -> Roles {
        Roles { sends: self.sends || other.sends, receives: self.receives || other.receives }
    }
}

/// One version: the IR plus which types are definitions and who uses them.
struct Side<'a> {
    ir: &'a Ir,
    /// Types that are schema definitions (as opposed to inline schemas the generator named).
    defs: BTreeSet<&'a str>,
    roles: BTreeMap<String, Roles>,
    /// Type -> the methods whose params or response reach it.
    users: BTreeMap<String, BTreeSet<(Direction, String)>>,
}

impl<'a> Side<'a> {
    fn new(ir: &'a Ir) -> Self {
        let defs = ir.types.values().filter(|t| is_definition(t)).map(|t| t.name.as_str()).collect();
        let mut side = Side { ir, defs, roles: BTreeMap::new(), users: BTreeMap::new() };
        for direction in Direction::ALL {
            let client_sends_params = matches!(direction, Direction::ClientRequest | Direction::ClientNotification);
            for m in ir.methods(direction) {
                let (params_role, response_role) =
                    if client_sends_params { (Roles::SENDS, Roles::RECEIVES) } else { (Roles::RECEIVES, Roles::SENDS) };
                let key = (direction, m.wire.clone());
                if let Some(t) = m.params.ty() {
                    side.mark(t, params_role, Some(&key));
                }
                if let Some(t) = &m.response {
                    side.mark(t, response_role, Some(&key));
                }
            }
        }
        for f in &ir.notification_envelope {
            side.mark(&f.ty, Roles::RECEIVES, None);
        }
        side
    }

    fn mark(&mut self, ty: &Ty, role: Roles, user: Option<&(Direction, String)>) {
        let mut seen = BTreeSet::new();
        reachable(self.ir, ty, &mut seen);
        for name in seen {
            let r = self.roles.entry(name.clone()).or_default();
            *r = r.union(role);
            if let Some(u) = user {
                self.users.entry(name).or_default().insert(u.clone());
            }
        }
    }

    fn is_def(&self, name: &str) -> bool {
        self.defs.contains(name)
    }

    fn ty(&self, name: &str) -> &'a TypeDef {
        &self.ir.types[name]
    }
}

/// A schema definition: its pointer is `#/definitions/X` or `#/definitions/v2/X` and its name
/// comes from `X` (an inline type named after a definition's position, such as the union a
/// nullable definition wraps, shares the pointer but not the name).
fn is_definition(t: &TypeDef) -> bool {
    let Some(rest) = t.pointer.strip_prefix("#/definitions/") else { return false };
    let rest = rest.strip_prefix("v2/").unwrap_or(rest);
    if rest.contains('/') {
        return false;
    }
    let base = naming::pascal(rest);
    t.name == base || t.name.strip_prefix("V1") == Some(base.as_str())
}

/// Every named type `ty` reaches, including through other named types.
fn reachable(ir: &Ir, ty: &Ty, seen: &mut BTreeSet<String>) {
    match ty {
        Ty::Named(n) => {
            if !seen.insert(n.clone()) {
                return;
            }
            let Some(def) = ir.types.get(n) else { return };
            for t in members(&def.kind) {
                reachable(ir, &t, seen);
            }
        }
        Ty::Vec(t) | Ty::Map(t) | Ty::Option(t) => reachable(ir, t, seen),
        _ => {}
    }
}

/// The types a kind refers to directly.
fn members(kind: &TypeKind) -> Vec<Ty> {
    match kind {
        TypeKind::Alias(t) => vec![t.clone()],
        TypeKind::Struct(s) => s.fields.iter().map(|f| f.ty.clone()).chain(s.extra.clone()).collect(),
        TypeKind::StringEnum(_) => Vec::new(),
        TypeKind::Tagged(t) => t.arms.iter().map(|a| Ty::Named(a.payload.clone())).collect(),
        TypeKind::External(e) => e.arms.iter().filter_map(|a| a.payload.clone()).collect(),
        TypeKind::Untagged(u) => u.arms.iter().map(|a| a.ty.clone()).collect(),
    }
}

fn usage(old: &Side, new: &Side, name: &str) -> Usage {
    let roles = old.roles.get(name).copied().unwrap_or_default().union(new.roles.get(name).copied().unwrap_or_default());
    let methods: BTreeSet<String> = [&old.users, &new.users]
        .into_iter()
        .filter_map(|u| u.get(name))
        .flatten()
        .map(|(_, m)| m.clone())
        .collect();
    Usage { sends: roles.sends, receives: roles.receives, methods: methods.into_iter().collect() }
}

/// The context of a comparison: where its changes are filed, the roles of the type being
/// compared, and whether the item is experimental in each version.
#[derive(Debug, Clone)]
struct Cx {
    home: Home,
    roles: Roles,
    old_exp: bool,
    new_exp: bool,
}

impl Cx {
    fn with_exp(&self, old: bool, new: bool) -> Cx {
        Cx { old_exp: self.old_exp || old, new_exp: self.new_exp || new, ..self.clone() }
    }
}

/// Which version a change's experimental flag comes from.
#[derive(Clone, Copy)]
enum Era {
    /// Something added: experimental if it is in the new version.
    New,
    /// Something removed: experimental if it was in the old version.
    Old,
    /// Something changed in place: experimental if it is (or was) experimental.
    Either,
    /// A move between stable and experimental: about the stable surface.
    Stable,
}

struct Differ<'a> {
    old: Side<'a>,
    new: Side<'a>,
    /// Definitions removed in old -> the added definition of the same shape in new.
    renamed: BTreeMap<String, String>,
    /// Pairs of (old, new) inline types already compared.
    visited: BTreeSet<(String, String)>,
    changes: Vec<Change>,
}

impl Differ<'_> {
    fn run(&mut self) {
        self.methods();
        self.envelope();
        self.definitions();
    }

    fn push(&mut self, cx: &Cx, path: impl Into<String>, kind: Kind, era: Era, rule: Rule) {
        let experimental = match era {
            Era::New => cx.new_exp,
            Era::Old => cx.old_exp,
            Era::Either => cx.old_exp || cx.new_exp,
            Era::Stable => false,
        };
        let effect = |applies: bool, (breaking, why): (bool, &str)| applies.then(|| Effect { breaking, why: why.to_owned() });
        let sends = effect(cx.roles.sends, rule.sends);
        let receives = effect(cx.roles.receives, rule.receives);
        let breaking = sends.iter().chain(&receives).any(|e| e.breaking);
        let severity = if breaking {
            Severity::Breaking
        } else if matches!(kind, Kind::Renamed { .. } | Kind::TypeRemoved) {
            Severity::RustApi
        } else {
            Severity::Compatible
        };
        self.changes.push(Change { home: cx.home.clone(), path: path.into(), kind, experimental, severity, sends, receives });
    }

    fn home_of(&self, name: &str) -> Home {
        let users: BTreeSet<&(Direction, String)> =
            [&self.old.users, &self.new.users].into_iter().filter_map(|u| u.get(name)).flatten().collect();
        let experimental = self.new.ir.types.get(name).or_else(|| self.old.ir.types.get(name)).is_some_and(|t| t.experimental);
        match users.len() {
            0 => Home::Unused { name: name.to_owned(), experimental },
            1 => {
                let (direction, method) = users.into_iter().next().expect("one").clone();
                self.method_home(direction, &method)
            }
            _ => Home::Shared { name: name.to_owned(), experimental },
        }
    }

    fn method_home(&self, direction: Direction, wire: &str) -> Home {
        let find = |ir: &Ir| ir.methods(direction).iter().find(|m| m.wire == wire).map(|m| m.experimental);
        let experimental = find(self.new.ir).or_else(|| find(self.old.ir)).unwrap_or(false);
        Home::Method { direction, method: wire.to_owned(), experimental }
    }

    fn roles_of(&self, old_name: Option<&str>, new_name: Option<&str>) -> Roles {
        let o = old_name.and_then(|n| self.old.roles.get(n)).copied().unwrap_or_default();
        let n = new_name.and_then(|n| self.new.roles.get(n)).copied().unwrap_or_default();
        o.union(n)
    }

    fn methods(&mut self) {
        for direction in Direction::ALL {
            let by_client = matches!(direction, Direction::ClientRequest | Direction::ClientNotification);
            let method_roles = if by_client { Roles::SENDS } else { Roles::RECEIVES };
            let (old_ir, new_ir) = (self.old.ir, self.new.ir);
            let olds: BTreeMap<&str, &Method> = old_ir.methods(direction).iter().map(|m| (m.wire.as_str(), m)).collect();
            let news: BTreeMap<&str, &Method> = new_ir.methods(direction).iter().map(|m| (m.wire.as_str(), m)).collect();
            for (wire, m) in &news {
                let home = self.method_home(direction, wire);
                let Some(o) = olds.get(wire) else {
                    let cx = Cx { home, roles: method_roles, old_exp: false, new_exp: m.experimental };
                    let kind = Kind::MethodAdded { params: m.params.ty().map(rust_ty), response: m.response.as_ref().map(rust_ty) };
                    let rule = match direction {
                        Direction::ServerRequest => REQUEST_ADDED,
                        Direction::ServerNotification => NOTIFICATION_ADDED,
                        _ => METHOD_ADDED,
                    };
                    self.push(&cx, *wire, kind, Era::New, rule);
                    continue;
                };
                let cx = Cx { home, roles: method_roles, old_exp: o.experimental, new_exp: m.experimental };
                self.moved(&cx, wire.to_string(), o.experimental, m.experimental);
                let params_roles = method_roles;
                let response_roles = if by_client { Roles::RECEIVES } else { Roles::SENDS };
                let params_cx = Cx { roles: params_roles, ..cx.clone() };
                let (op, np) = (params_presence(&o.params), params_presence(&m.params));
                if op != np {
                    // Like a member `params`: none -> optional is an added optional field, etc.
                    let rule = match (op, np) {
                        (_, None) => FIELD_REMOVED,
                        (None, Some(Presence::Required)) => FIELD_ADDED_REQUIRED,
                        (None, Some(_)) => FIELD_ADDED_OPTIONAL,
                        (Some(_), Some(Presence::Required)) => BECAME_REQUIRED,
                        (Some(_), Some(_)) => BECAME_OPTIONAL,
                    };
                    let kind = Kind::ParamsChanged { old: params_text(&o.params), new: params_text(&m.params) };
                    self.push(&params_cx, format!("{wire} params"), kind, Era::Either, rule);
                }
                if let (Some(a), Some(b)) = (o.params.ty(), m.params.ty()) {
                    self.compare_ty(a, b, &format!("{wire} params"), &params_cx);
                }
                match (&o.response, &m.response) {
                    (Some(a), Some(b)) => {
                        let response_cx = Cx { roles: response_roles, ..cx.clone() };
                        self.compare_ty(a, b, &format!("{wire} response"), &response_cx);
                    }
                    (None, None) => {}
                    _ => unreachable!("requests have responses, notifications none"),
                }
            }
            for (wire, o) in &olds {
                if !news.contains_key(wire) {
                    let home = self.method_home(direction, wire);
                    let cx = Cx { home, roles: method_roles, old_exp: o.experimental, new_exp: false };
                    self.push(&cx, *wire, Kind::MethodRemoved, Era::Old, METHOD_REMOVED);
                }
            }
        }
    }

    fn moved(&mut self, cx: &Cx, path: String, old_exp: bool, new_exp: bool) {
        match (old_exp, new_exp) {
            (true, false) => self.push(cx, path, Kind::ToStable, Era::Stable, TO_STABLE),
            (false, true) => self.push(cx, path, Kind::ToExperimental, Era::Stable, TO_EXPERIMENTAL),
            _ => {}
        }
    }

    fn envelope(&mut self) {
        let cx = Cx {
            home: Home::Envelope,
            roles: Roles::RECEIVES,
            old_exp: false,
            new_exp: false,
        };
        let (a, b) = (self.old.ir.notification_envelope.clone(), self.new.ir.notification_envelope.clone());
        let old = Struct { fields: a, extra: None };
        let new = Struct { fields: b, extra: None };
        self.compare_struct(&old, &new, "ServerNotification", &cx);
    }

    fn definitions(&mut self) {
        let removed: Vec<&str> = self.old.defs.iter().copied().filter(|n| !self.new.is_def(n)).collect();
        let added: Vec<&str> = self.new.defs.iter().copied().filter(|n| !self.old.is_def(n)).collect();
        self.find_renames(&removed, &added);
        for name in added {
            let def = self.new.ty(name);
            let cx = Cx { home: self.home_of(name), roles: self.roles_of(None, Some(name)), old_exp: false, new_exp: def.experimental };
            if let Some((old, _)) = self.renamed.iter().find(|(_, n)| n.as_str() == name) {
                let kind = Kind::Renamed { old: old.clone(), new: name.to_owned(), alias_of: None };
                let cx = Cx { roles: self.roles_of(Some(old), Some(name)), ..cx };
                self.push(&cx, name, kind, Era::New, RENAMED);
            } else {
                self.push(&cx, name, Kind::TypeAdded, Era::New, TYPE_ADDED);
            }
        }
        for name in removed {
            if self.renamed.contains_key(name) {
                continue;
            }
            let def = self.old.ty(name);
            let cx = Cx { home: self.home_of(name), roles: self.roles_of(Some(name), None), old_exp: def.experimental, new_exp: false };
            self.push(&cx, name, Kind::TypeRemoved, Era::Old, TYPE_REMOVED);
        }
        let common: Vec<&str> = self.old.defs.iter().copied().filter(|n| self.new.is_def(n)).collect();
        for name in common {
            let (o, n) = (self.old.ty(name), self.new.ty(name));
            let cx = Cx {
                home: self.home_of(name),
                roles: self.roles_of(Some(name), Some(name)),
                old_exp: o.experimental,
                new_exp: n.experimental,
            };
            self.moved(&cx, name.to_owned(), o.experimental, n.experimental);
            self.compare_kinds(o, n, name, &cx);
        }
    }

    /// Pairs a removed and an added definition of the same (non-trivial) shape when each has
    /// exactly one candidate.
    fn find_renames(&mut self, removed: &[&str], added: &[&str]) {
        let mut candidates: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
        let mut reverse: BTreeMap<&str, usize> = BTreeMap::new();
        for &r in removed {
            if is_trivial(&self.old.ty(r).kind) {
                continue;
            }
            for &a in added {
                if share_a_word(r, a) && self.shape_eq(r, a, &mut BTreeSet::new()) {
                    candidates.entry(r).or_default().push(a);
                    *reverse.entry(a).or_default() += 1;
                }
            }
        }
        for (r, adds) in candidates {
            if let [a] = adds.as_slice() {
                if reverse[a] == 1 {
                    self.renamed.insert(r.to_owned(), a.to_string());
                }
            }
        }
    }

    /// Whether old type `a` and new type `b` look the same on the wire (names of definitions
    /// that exist in both versions are identities; everything else is compared structurally).
    fn shape_eq(&self, a: &str, b: &str, assumed: &mut BTreeSet<(String, String)>) -> bool {
        if a == b && self.old.is_def(a) && self.new.is_def(b) {
            return true;
        }
        if self.renamed.get(a).is_some_and(|n| n == b) {
            return true;
        }
        if !assumed.insert((a.to_owned(), b.to_owned())) {
            return true;
        }
        let (Some(x), Some(y)) = (self.old.ir.types.get(a), self.new.ir.types.get(b)) else { return false };
        let mut ty_eq = |p: &Ty, q: &Ty| self.ty_eq(p, q, assumed);
        match (&x.kind, &y.kind) {
            (TypeKind::Alias(p), TypeKind::Alias(q)) => ty_eq(p, q),
            (TypeKind::Struct(s), TypeKind::Struct(t)) => {
                s.fields.len() == t.fields.len()
                    && s.fields.iter().all(|f| {
                        t.fields.iter().any(|g| g.wire == f.wire && g.presence() == f.presence() && ty_eq(&f.ty, &g.ty))
                    })
                    && match (&s.extra, &t.extra) {
                        (Some(p), Some(q)) => ty_eq(p, q),
                        (p, q) => p.is_none() && q.is_none(),
                    }
            }
            (TypeKind::StringEnum(s), TypeKind::StringEnum(t)) => {
                wires(s.values.iter().map(|v| &v.wire)) == wires(t.values.iter().map(|v| &v.wire))
            }
            (TypeKind::Tagged(s), TypeKind::Tagged(t)) => {
                s.tag == t.tag
                    && s.arms.len() == t.arms.len()
                    && s.arms.iter().all(|p| {
                        t.arms.iter().any(|q| q.wire == p.wire && ty_eq(&Ty::Named(p.payload.clone()), &Ty::Named(q.payload.clone())))
                    })
            }
            (TypeKind::External(s), TypeKind::External(t)) => {
                s.arms.len() == t.arms.len()
                    && s.arms.iter().all(|p| {
                        t.arms.iter().any(|q| {
                            q.wire == p.wire
                                && match (&p.payload, &q.payload) {
                                    (Some(x), Some(y)) => ty_eq(x, y),
                                    (x, y) => x.is_none() && y.is_none(),
                                }
                        })
                    })
            }
            (TypeKind::Untagged(s), TypeKind::Untagged(t)) => {
                s.arms.len() == t.arms.len() && s.arms.iter().zip(&t.arms).all(|(p, q)| ty_eq(&p.ty, &q.ty))
            }
            (TypeKind::Alias(p), _) => ty_eq(p, &Ty::Named(b.to_owned())),
            (_, TypeKind::Alias(q)) => ty_eq(&Ty::Named(a.to_owned()), q),
            _ => false,
        }
    }

    fn ty_eq(&self, a: &Ty, b: &Ty, assumed: &mut BTreeSet<(String, String)>) -> bool {
        match (a, b) {
            (Ty::Named(x), Ty::Named(y)) => self.shape_eq(x, y, assumed),
            (Ty::Vec(x), Ty::Vec(y)) | (Ty::Map(x), Ty::Map(y)) | (Ty::Option(x), Ty::Option(y)) => self.ty_eq(x, y, assumed),
            (Ty::Named(x), _) => alias_target(self.old.ir, x).is_some_and(|t| self.ty_eq(&t, b, assumed)),
            (_, Ty::Named(y)) => alias_target(self.new.ir, y).is_some_and(|t| self.ty_eq(a, &t, assumed)),
            _ => a == b,
        }
    }

    /// A type of the same shape under another name at `path`.
    fn renamed(&mut self, cx: &Cx, path: &str, a: &Ty, b: &Ty) {
        let (x, y) = (resolve(self.old.ir, a), resolve(self.new.ir, b));
        let alias_of = (x == y).then(|| rust_ty(&x));
        let kind = Kind::Renamed { old: rust_ty(a), new: rust_ty(b), alias_of };
        self.push(cx, path, kind, Era::Either, RENAMED);
    }

    fn compare_ty(&mut self, a: &Ty, b: &Ty, path: &str, cx: &Cx) {
        match (a, b) {
            (Ty::Named(x), Ty::Named(y)) => self.compare_named(x, y, path, cx),
            (Ty::Vec(x), Ty::Vec(y)) => self.compare_ty(x, y, &format!("{path}[]"), cx),
            (Ty::Map(x), Ty::Map(y)) => self.compare_ty(x, y, &format!("{path}{{}}"), cx),
            (Ty::Option(x), Ty::Option(y)) => self.compare_ty(x, y, path, cx),
            _ if a == b => {}
            _ if self.ty_eq(a, b, &mut BTreeSet::new()) => self.renamed(cx, path, a, b),
            _ => {
                let kind = Kind::TypeChanged { old: rust_ty(a), new: rust_ty(b) };
                self.push(cx, path, kind, Era::Either, TYPE_CHANGED);
            }
        }
    }

    /// Compares the named types at one place. Definitions are compared once, on their own; an
    /// inline type is compared here, at the place that uses it.
    fn compare_named(&mut self, a: &str, b: &str, path: &str, cx: &Cx) {
        let (a_def, b_def) = (self.old.is_def(a), self.new.is_def(b));
        if a_def && b_def {
            if a == b || self.renamed.get(a).is_some_and(|n| n == b) {
                return;
            }
            let (x, y) = (Ty::Named(a.to_owned()), Ty::Named(b.to_owned()));
            if self.shape_eq(a, b, &mut BTreeSet::new()) {
                self.renamed(cx, path, &x, &y);
            } else {
                let kind = Kind::TypeChanged { old: a.to_owned(), new: b.to_owned() };
                self.push(cx, path, kind, Era::Either, TYPE_CHANGED);
            }
            return;
        }
        if !self.visited.insert((a.to_owned(), b.to_owned())) {
            return;
        }
        if a != b {
            self.renamed(cx, path, &Ty::Named(a.to_owned()), &Ty::Named(b.to_owned()));
        }
        let (o, n) = (self.old.ty(a), self.new.ty(b));
        let cx = cx.with_exp(o.experimental, n.experimental);
        self.compare_kinds(o, n, path, &cx);
    }

    fn compare_kinds(&mut self, o: &TypeDef, n: &TypeDef, path: &str, cx: &Cx) {
        match (&o.kind, &n.kind) {
            (TypeKind::Alias(a), TypeKind::Alias(b)) => self.compare_ty(a, b, path, cx),
            (TypeKind::Struct(a), TypeKind::Struct(b)) => self.compare_struct(a, b, path, cx),
            (TypeKind::StringEnum(_) | TypeKind::External(_), TypeKind::StringEnum(_) | TypeKind::External(_)) => {
                self.compare_external(&as_external(&o.kind), &as_external(&n.kind), path, cx)
            }
            (TypeKind::Tagged(a), TypeKind::Tagged(b)) => self.compare_tagged(a, b, path, cx),
            (TypeKind::Untagged(a), TypeKind::Untagged(b)) => self.compare_untagged(a, b, path, cx),
            (a, b) => {
                let kind = Kind::ShapeChanged { old: kind_name(a).to_owned(), new: kind_name(b).to_owned() };
                self.push(cx, path, kind, Era::Either, TYPE_CHANGED);
            }
        }
    }

    fn compare_struct(&mut self, a: &Struct, b: &Struct, path: &str, cx: &Cx) {
        let same_type = |d: &Self, f: &Field, g: &Field| f.presence() == g.presence() && d.ty_eq(&f.ty, &g.ty, &mut BTreeSet::new());
        let pairs = pair_up(&a.fields, &b.fields, |f| &f.wire, |f, g| same_type(self, f, g));
        for (f, g) in &pairs.renamed {
            let kind = Kind::FieldRenamed { old: f.wire.clone(), new: g.wire.clone(), ty: field_ty(g) };
            let cx = cx.with_exp(f.experimental, g.experimental);
            self.push(&cx, format!("{path}.{}", f.wire), kind, Era::Either, FIELD_RENAMED);
        }
        for f in &pairs.removed {
            let kind = Kind::FieldRemoved { ty: field_ty(f), presence: presence_name(f.presence()).to_owned() };
            self.push(&cx.with_exp(f.experimental, false), format!("{path}.{}", f.wire), kind, Era::Old, FIELD_REMOVED);
        }
        for g in &pairs.added {
            let presence = g.presence();
            let rule = match presence {
                Presence::Required => FIELD_ADDED_REQUIRED,
                Presence::RequiredNullable => FIELD_ADDED_REQUIRED_NULLABLE,
                Presence::Optional | Presence::OptionalNullable => FIELD_ADDED_OPTIONAL,
            };
            let ty = self.described(&g.ty, field_ty(g));
            let kind = Kind::FieldAdded { ty, presence: presence_name(presence).to_owned() };
            self.push(&cx.with_exp(false, g.experimental), format!("{path}.{}", g.wire), kind, Era::New, rule);
        }
        for (f, g) in pairs.same.iter().chain(&pairs.renamed) {
            let field_path = format!("{path}.{}", g.wire);
            let fcx = cx.with_exp(f.experimental, g.experimental);
            if cx.old_exp == cx.new_exp {
                self.moved(&fcx, field_path.clone(), f.experimental, g.experimental);
            }
            let (p, q) = (f.presence(), g.presence());
            if p != q {
                let rule = match (p, q) {
                    (_, Presence::Required) => BECAME_REQUIRED,
                    (Presence::Required, Presence::RequiredNullable) => BECAME_NULLABLE,
                    (Presence::Required, _) => BECAME_OPTIONAL,
                    _ => PRESENCE_OTHER,
                };
                let kind = Kind::PresenceChanged {
                    old: presence_name(p).to_owned(),
                    new: presence_name(q).to_owned(),
                    old_ty: field_ty(f),
                    new_ty: field_ty(g),
                };
                self.push(&fcx, field_path.clone(), kind, Era::Either, rule);
            }
            self.compare_ty(&f.ty, &g.ty, &field_path, &fcx);
        }
        match (&a.extra, &b.extra) {
            (None, None) => {}
            (Some(x), Some(y)) => self.compare_ty(x, y, &format!("{path}{{..}}"), cx),
            (x, y) => {
                let kind = Kind::ExtraChanged { old: x.as_ref().map(rust_ty), new: y.as_ref().map(rust_ty) };
                let rule = if x.is_none() { EXTRA_ADDED } else { TYPE_CHANGED };
                self.push(cx, path, kind, Era::Either, rule);
            }
        }
    }

    fn compare_external(&mut self, a: &External, b: &External, path: &str, cx: &Cx) {
        let same_payload = |d: &Self, p: &ExternalArm, q: &ExternalArm| match (&p.payload, &q.payload) {
            (Some(x), Some(y)) => d.ty_eq(x, y, &mut BTreeSet::new()),
            (x, y) => x.is_none() && y.is_none(),
        };
        let pairs = pair_up(&a.arms, &b.arms, |v| &v.wire, |p, q| same_payload(self, p, q) && p.payload.is_some());
        for p in &pairs.removed {
            let kind = match p.payload {
                None => Kind::ValueRemoved { value: p.wire.clone() },
                Some(_) => Kind::VariantRemoved { value: p.wire.clone() },
            };
            self.push(&cx.with_exp(p.experimental, false), path, kind, Era::Old, VALUE_REMOVED);
        }
        for q in &pairs.added {
            let kind = match &q.payload {
                None => Kind::ValueAdded { value: q.wire.clone() },
                Some(t) => Kind::VariantAdded { value: q.wire.clone(), payload: self.described(t, rust_ty(t)) },
            };
            self.push(&cx.with_exp(false, q.experimental), path, kind, Era::New, VALUE_ADDED);
        }
        for (p, q) in &pairs.renamed {
            let kind = Kind::ValueRenamed { old: p.wire.clone(), new: q.wire.clone() };
            self.push(&cx.with_exp(p.experimental, q.experimental), path, kind, Era::Either, VALUE_RENAMED);
        }
        for (p, q) in pairs.same.iter().chain(&pairs.renamed) {
            let acx = cx.with_exp(p.experimental, q.experimental);
            let arm_path = format!("{path}::{}", q.wire);
            if cx.old_exp == cx.new_exp {
                self.moved(&acx, arm_path.clone(), p.experimental, q.experimental);
            }
            match (&p.payload, &q.payload) {
                (Some(x), Some(y)) => self.compare_ty(x, y, &arm_path, &acx),
                (None, None) => {}
                (x, y) => {
                    let show = |t: &Option<Ty>| t.as_ref().map_or_else(|| "no payload".to_owned(), rust_ty);
                    let kind = Kind::TypeChanged { old: show(x), new: show(y) };
                    self.push(&acx, arm_path, kind, Era::Either, TYPE_CHANGED);
                }
            }
        }
    }

    fn compare_tagged(&mut self, a: &Tagged, b: &Tagged, path: &str, cx: &Cx) {
        if a.tag != b.tag {
            let kind = Kind::TagChanged { old: a.tag.clone(), new: b.tag.clone() };
            self.push(cx, path, kind, Era::Either, TYPE_CHANGED);
            return;
        }
        // Variants are only paired by spelling: payload shapes say too little.
        let pairs = pair_up(&a.arms, &b.arms, |v| &v.wire, |_, _| false);
        for p in &pairs.removed {
            self.push(&cx.with_exp(p.experimental, false), path, Kind::VariantRemoved { value: p.wire.clone() }, Era::Old, VALUE_REMOVED);
        }
        for q in &pairs.added {
            let payload = self.described(&Ty::Named(q.payload.clone()), q.payload.clone());
            let kind = Kind::VariantAdded { value: q.wire.clone(), payload };
            self.push(&cx.with_exp(false, q.experimental), path, kind, Era::New, VALUE_ADDED);
        }
        for (p, q) in &pairs.renamed {
            let kind = Kind::ValueRenamed { old: p.wire.clone(), new: q.wire.clone() };
            self.push(&cx.with_exp(p.experimental, q.experimental), path, kind, Era::Either, VALUE_RENAMED);
        }
        for (p, q) in pairs.same.iter().chain(&pairs.renamed) {
            let acx = cx.with_exp(p.experimental, q.experimental);
            let arm_path = format!("{path}::{}", q.wire);
            if cx.old_exp == cx.new_exp {
                self.moved(&acx, arm_path.clone(), p.experimental, q.experimental);
            }
            self.compare_named(&p.payload, &q.payload, &arm_path, &acx);
        }
    }

    fn compare_untagged(&mut self, a: &Untagged, b: &Untagged, path: &str, cx: &Cx) {
        for p in &a.arms {
            let Some(q) = b.arms.iter().find(|q| q.rust == p.rust) else {
                self.push(&cx.with_exp(p.experimental, false), path, Kind::VariantRemoved { value: p.rust.clone() }, Era::Old, VALUE_REMOVED);
                continue;
            };
            let acx = cx.with_exp(p.experimental, q.experimental);
            let arm_path = format!("{path}::{}", p.rust);
            if cx.old_exp == cx.new_exp {
                self.moved(&acx, arm_path.clone(), p.experimental, q.experimental);
            }
            self.compare_ty(&p.ty, &q.ty, &arm_path, &acx);
        }
        for q in b.arms.iter().filter(|q| !a.arms.iter().any(|p| p.rust == q.rust)) {
            let kind = Kind::VariantAdded { value: q.rust.clone(), payload: self.described(&q.ty, rust_ty(&q.ty)) };
            self.push(&cx.with_exp(false, q.experimental), path, kind, Era::New, UNTAGGED_ARM_ADDED);
        }
    }

    /// `shown`, followed by a summary of the inline type it names, if any (inline types have
    /// generated names that say little: `FooMode` is `"a" | "b"`).
    fn described(&self, ty: &Ty, shown: String) -> String {
        let mut inner = ty;
        while let Ty::Vec(t) | Ty::Map(t) | Ty::Option(t) = inner {
            inner = t;
        }
        match inner {
            Ty::Named(n) if !self.new.is_def(n) => match self.new.ir.types.get(n) {
                Some(def) => format!("{shown} = {}", summary(&def.kind)),
                None => shown,
            },
            _ => shown,
        }
    }
}

/// Members of an old and a new list, matched up.
struct Pairs<'a, T> {
    /// Same wire name.
    same: Vec<(&'a T, &'a T)>,
    /// One removed and one added that look like a rename (see [`pair_up`]).
    renamed: Vec<(&'a T, &'a T)>,
    removed: Vec<&'a T>,
    added: Vec<&'a T>,
}

/// Matches members by wire name; then pairs a removed and an added member as a rename when
/// their names differ only in case and separators (`has_credits` -> `hasCredits`), or when
/// they are the only member removed and the only one added, and `alike`.
fn pair_up<'a, T>(
    old: &'a [T],
    new: &'a [T],
    wire: impl Fn(&T) -> &String,
    alike: impl Fn(&T, &T) -> bool,
) -> Pairs<'a, T> {
    let mut pairs = Pairs { same: Vec::new(), renamed: Vec::new(), removed: Vec::new(), added: Vec::new() };
    for p in old {
        match new.iter().find(|q| wire(q) == wire(p)) {
            Some(q) => pairs.same.push((p, q)),
            None => pairs.removed.push(p),
        }
    }
    pairs.added = new.iter().filter(|q| !old.iter().any(|p| wire(p) == wire(q))).collect();
    let norm = |s: &String| s.chars().filter(char::is_ascii_alphanumeric).map(|c| c.to_ascii_lowercase()).collect::<String>();
    let mut i = 0;
    while i < pairs.removed.len() {
        let p = pairs.removed[i];
        let spelled = |q: &T| norm(wire(q)) == norm(wire(p));
        match pairs.added.iter().position(|q| spelled(q)) {
            Some(j) if pairs.added.iter().filter(|q| spelled(q)).count() == 1 => {
                let q = pairs.added.remove(j);
                pairs.renamed.push((pairs.removed.remove(i), q));
            }
            _ => i += 1,
        }
    }
    if let ([p], [q]) = (pairs.removed.as_slice(), pairs.added.as_slice()) {
        if alike(p, q) {
            pairs.renamed.push((p, q));
            pairs.removed.clear();
            pairs.added.clear();
        }
    }
    pairs
}

/// The target of a type alias.
fn alias_target(ir: &Ir, name: &str) -> Option<Ty> {
    match &ir.types.get(name)?.kind {
        TypeKind::Alias(t) => Some(t.clone()),
        _ => None,
    }
}

/// `ty` with aliases followed.
fn resolve(ir: &Ir, ty: &Ty) -> Ty {
    let mut ty = ty.clone();
    for _ in 0..16 {
        match &ty {
            Ty::Named(n) => match alias_target(ir, n) {
                Some(t) => ty = t,
                None => break,
            },
            _ => break,
        }
    }
    ty
}

/// Whether two type names have a word in common (`CallToolResult`, `McpServerToolCallResponse`),
/// not counting the words every params or response type has.
fn share_a_word(a: &str, b: &str) -> bool {
    fn words(s: &str) -> BTreeSet<String> {
        let mut out = BTreeSet::new();
        let mut word = String::new();
        for c in s.chars() {
            if c.is_ascii_uppercase() && !word.is_empty() {
                out.insert(std::mem::take(&mut word));
            }
            word.push(c);
        }
        out.insert(word);
        for generic in ["Params", "Response", "Notification", "Request", "V1", "V2", "Item"] {
            out.remove(generic);
        }
        out
    }
    !words(a).is_disjoint(&words(b))
}

/// Types with nothing in them (an empty response struct) are never paired as renames.
fn is_trivial(kind: &TypeKind) -> bool {
    match kind {
        TypeKind::Struct(s) => s.fields.is_empty(),
        TypeKind::Alias(t) => !matches!(t, Ty::Named(_)),
        _ => false,
    }
}

fn wires<'a>(it: impl Iterator<Item = &'a String>) -> BTreeSet<&'a String> {
    it.collect()
}

/// A string enum is an external union with only unit arms.
fn as_external(kind: &TypeKind) -> External {
    match kind {
        TypeKind::External(e) => e.clone(),
        TypeKind::StringEnum(e) => External {
            arms: e
                .values
                .iter()
                .map(|v| ExternalArm { wire: v.wire.clone(), rust: v.rust.clone(), payload: None, doc: None, experimental: v.experimental })
                .collect(),
        },
        _ => unreachable!("only called for enums"),
    }
}

fn kind_name(kind: &TypeKind) -> &'static str {
    match kind {
        TypeKind::Alias(_) => "alias",
        TypeKind::Struct(_) => "struct",
        TypeKind::StringEnum(_) => "string enum",
        TypeKind::Tagged(_) => "tagged union",
        TypeKind::External(_) => "externally tagged union",
        TypeKind::Untagged(_) => "untagged union",
    }
}

/// A one-line summary of a type's wire shape: `{ id, name? }`, `"a" | "b"`, `type: "x" | "y"`.
fn summary(kind: &TypeKind) -> String {
    const MAX: usize = 8;
    fn list(items: Vec<String>, sep: &str) -> String {
        let more = items.len().saturating_sub(MAX);
        let mut s = items.into_iter().take(MAX).collect::<Vec<_>>().join(sep);
        if more > 0 {
            let _ = write!(s, "{sep}… ({more} more)");
        }
        s
    }
    match kind {
        TypeKind::Alias(t) => rust_ty(t),
        TypeKind::Struct(s) => {
            let fields = s
                .fields
                .iter()
                .map(|f| match f.presence() {
                    Presence::Required | Presence::RequiredNullable => f.wire.clone(),
                    Presence::Optional | Presence::OptionalNullable => format!("{}?", f.wire),
                })
                .collect();
            if s.fields.is_empty() {
                "{}".to_owned()
            } else {
                format!("{{ {} }}", list(fields, ", "))
            }
        }
        TypeKind::StringEnum(e) => list(e.values.iter().map(|v| format!("\"{}\"", v.wire)).collect(), " | "),
        TypeKind::External(e) => list(
            e.arms
                .iter()
                .map(|a| match &a.payload {
                    None => format!("\"{}\"", a.wire),
                    Some(t) => format!("{{ {}: {} }}", a.wire, rust_ty(t)),
                })
                .collect(),
            " | ",
        ),
        TypeKind::Tagged(t) => format!("{}: {}", t.tag, list(t.arms.iter().map(|a| format!("\"{}\"", a.wire)).collect(), " | ")),
        TypeKind::Untagged(u) => list(u.arms.iter().map(|a| rust_ty(&a.ty)).collect(), " | "),
    }
}

/// The generated Rust type.
pub fn rust_ty(ty: &Ty) -> String {
    match ty {
        Ty::Named(n) => n.clone(),
        Ty::String => "String".to_owned(),
        Ty::Bool => "bool".to_owned(),
        Ty::Int(k) => format!("{k:?}").to_ascii_lowercase(),
        Ty::Float => "f64".to_owned(),
        Ty::Any => "Value".to_owned(),
        Ty::Unit => "()".to_owned(),
        Ty::Vec(t) => format!("Vec<{}>", rust_ty(t)),
        Ty::Map(t) => format!("BTreeMap<String, {}>", rust_ty(t)),
        Ty::Option(t) => format!("Option<{}>", rust_ty(t)),
    }
}

/// The Rust type of a field, with its presence.
fn field_ty(f: &Field) -> String {
    let t = rust_ty(&f.ty);
    match f.presence() {
        Presence::Required => t,
        Presence::RequiredNullable | Presence::Optional => format!("Option<{t}>"),
        Presence::OptionalNullable => format!("Option<Option<{t}>>"),
    }
}

fn presence_name(p: Presence) -> &'static str {
    match p {
        Presence::Required => "required",
        Presence::RequiredNullable => "required, nullable",
        Presence::Optional => "optional",
        Presence::OptionalNullable => "optional, null distinct from absent",
    }
}

fn params_presence(p: &Params) -> Option<Presence> {
    match p {
        Params::None | Params::Null => None,
        Params::Required(_) => Some(Presence::Required),
        Params::Optional(_) => Some(Presence::Optional),
    }
}

fn params_text(p: &Params) -> String {
    match p {
        Params::None | Params::Null => "none".to_owned(),
        Params::Required(t) => rust_ty(t),
        Params::Optional(t) => format!("Option<{}>", rust_ty(t)),
    }
}

// ---------------------------------------------------------------------------------------------
// Markdown
// ---------------------------------------------------------------------------------------------

impl Report {
    /// The report for a changelog or a PR description: headline counts, then breaking changes,
    /// compatible changes and Rust-API-only changes, each grouped by direction and method.
    pub fn to_markdown(&self) -> String {
        let mut out = String::new();
        let (old, new) = (&self.old_version, &self.new_version);
        let _ = writeln!(out, "# Protocol changes: codex {old} → {new}\n");
        if self.is_empty() {
            out.push_str("No protocol changes: both schemas describe the same messages.\n");
            return out;
        }
        out.push_str(&self.headline());
        out.push('\n');
        out.push_str(LEGEND);
        let missing: Vec<&str> = [(self.old_has_experimental, old), (self.new_has_experimental, new)]
            .into_iter()
            .filter(|(has, _)| !has)
            .map(|(_, v)| v.as_str())
            .collect();
        if !missing.is_empty() {
            let _ = writeln!(out, "\nCodex {} printed no experimental schema: all of it counts as stable.", missing.join(" and "));
        }
        for (severity, title) in [
            (Severity::Breaking, "Breaking changes"),
            (Severity::Compatible, "Compatible changes"),
            (Severity::RustApi, "Rust API only (same on the wire)"),
        ] {
            let changes: Vec<&Change> = self.changes.iter().filter(|c| c.severity == severity).collect();
            if changes.is_empty() {
                continue;
            }
            let _ = writeln!(out, "\n## {title} ({})", changes.len());
            self.section(&mut out, &changes);
        }
        out
    }

    /// The counts: a sentence and a table.
    pub fn headline(&self) -> String {
        let c = &self.counts;
        let has_experimental = self.old_has_experimental || self.new_has_experimental;
        let split = |n: usize, exp: usize| match (n - exp, exp) {
            (0, 0) => String::new(),
            (_, 0) if has_experimental => " (all stable)".to_owned(),
            (_, 0) => String::new(),
            (0, _) => " (all experimental)".to_owned(),
            (stable, exp) => format!(" ({stable} stable, {exp} experimental)"),
        };
        let mut out = format!(
            "**{} breaking**{}, {} compatible{}",
            c.breaking,
            split(c.breaking, c.breaking_experimental),
            c.compatible,
            split(c.compatible, c.compatible_experimental),
        );
        if c.rust_api > 0 {
            let _ = write!(out, ", {} Rust API only (same on the wire)", c.rust_api);
        }
        out.push_str(".\n\n");
        out.push_str("| | added | removed | renamed | to stable | to experimental | changed |\n");
        out.push_str("|---|--:|--:|--:|--:|--:|--:|\n");
        let _ = writeln!(
            out,
            "| methods | {} | {} | – | {} | {} | {} |",
            c.methods_added, c.methods_removed, c.methods_to_stable, c.methods_to_experimental, c.methods_changed
        );
        let _ = writeln!(out, "| types | {} | {} | {} | – | – | {} |", c.types_added, c.types_removed, c.types_renamed, c.types_changed);
        out
    }

    fn section(&self, out: &mut String, changes: &[&Change]) {
        let mut groups: BTreeMap<(u8, &str), Vec<&Change>> = BTreeMap::new();
        for c in changes {
            let key = match &c.home {
                Home::Method { direction, method, .. } => (direction_rank(*direction), method.as_str()),
                Home::Envelope => (direction_rank(Direction::ServerNotification), ""),
                Home::Shared { name, .. } => (4, name.as_str()),
                Home::Unused { name, .. } => (5, name.as_str()),
            };
            groups.entry(key).or_default().push(c);
        }
        // Types of their own whose only change is that they are new: one list, not a heading each.
        let only_new = |g: &[&Change]| g.iter().all(|c| matches!(c.kind, Kind::TypeAdded));
        let mut current_rank = None;
        for rank in 0..RANK_TITLES.len() as u8 {
            let in_rank: Vec<(&str, &Vec<&Change>)> =
                groups.iter().filter(|((r, _), _)| *r == rank).map(|((_, name), g)| (*name, g)).collect();
            if in_rank.is_empty() {
                continue;
            }
            if current_rank != Some(rank) {
                current_rank = Some(rank);
                let _ = writeln!(out, "\n### {}", RANK_TITLES[usize::from(rank)]);
            }
            if rank >= 4 {
                let new_types: Vec<&(&str, &Vec<&Change>)> = in_rank.iter().filter(|(_, g)| only_new(g)).collect();
                if !new_types.is_empty() {
                    out.push_str("\n#### New types\n\n");
                    for (name, g) in new_types {
                        let _ = writeln!(out, "- `{name}`{}{}", self.usage_note(name), if g[0].experimental { EXP } else { "" });
                    }
                }
            }
            for (name, group) in in_rank.iter().filter(|(_, g)| rank < 4 || !only_new(g)) {
                let home_exp = match &group[0].home {
                    Home::Method { experimental, .. } | Home::Shared { experimental, .. } | Home::Unused { experimental, .. } => {
                        *experimental
                    }
                    Home::Envelope => false,
                };
                if group[0].home == Home::Envelope {
                    out.push_str("\n#### Every notification (members next to `method` and `params`)\n\n");
                } else {
                    let note = if rank < 4 { String::new() } else { self.usage_note(name) };
                    let _ = writeln!(out, "\n#### `{name}`{note}{}\n", if home_exp { EXP } else { "" });
                }
                render_group(out, group, !home_exp);
            }
        }
    }

    /// ` — received; used by `a`, `b`` (or `by 12 methods`) for a type's heading.
    fn usage_note(&self, name: &str) -> String {
        let Some(u) = self.types.get(name) else { return String::new() };
        let role = match (u.sends, u.receives) {
            (true, true) => "sent and received",
            (true, false) => "sent",
            (false, true) => "received",
            (false, false) => return " — no method uses it".to_owned(),
        };
        match u.methods.len() {
            0 => format!(" — {role}"),
            n if n <= 3 => {
                let names: Vec<String> = u.methods.iter().map(|m| format!("`{m}`")).collect();
                format!(" — {role}; used by {}", names.join(", "))
            }
            n => format!(" — {role}; used by {n} methods"),
        }
    }
}

const EXP: &str = " *(experimental)*";

const RANK_TITLES: [&str; 6] = [
    "Client requests",
    "Server requests",
    "Server notifications",
    "Client notifications",
    "Types used by several methods",
    "Types no method uses",
];

fn direction_rank(d: Direction) -> u8 {
    match d {
        Direction::ClientRequest => 0,
        Direction::ServerRequest => 1,
        Direction::ServerNotification => 2,
        Direction::ClientNotification => 3,
    }
}

const LEGEND: &str = "\
How to read this:

- The client **sends** request params, client notifications and its answers to server requests; \
it **receives** responses, server requests and server notifications.
- *Breaking*: a client that upgrades its types has to change code or behaviour. For what it \
receives, that includes talking to an older codex, whose messages lack members the new types require.
- New enum values, union variants and notifications are compatible: until handled they arrive as \
the type's `Unrecognized` variant, or as an unknown notification.
- Not repeated below: every added field breaks Rust struct literals that list all fields, and \
every added variant breaks `match`es without a `_` arm.
- Paths are `Type.member` with wire names; `::value` is a union variant, `[]` an array item, \
`{}` a map value. *(experimental)*: only clients with the `experimentalApi` opt-in see it.
";

/// The bullets of one heading: method-level lines first, then by path; values added to or
/// removed from one enum share a line, and so do the types added or removed.
fn render_group(out: &mut String, group: &[&Change], tag_experimental: bool) {
    let exp = |c: &Change| if tag_experimental && c.experimental { EXP } else { "" };
    // Types that moved along with their method are named on the method's line.
    let is_move = |k: &Kind| matches!(k, Kind::ToStable | Kind::ToExperimental);
    let is_type_path = |p: &str| p.starts_with(|c: char| c.is_ascii_uppercase()) && !p.contains(['.', ':', '[', '{']);
    let method_move = group.iter().find(|c| is_move(&c.kind) && !c.path.starts_with(|c: char| c.is_ascii_uppercase()));
    let moved_along = |c: &Change| method_move.is_some_and(|m| m.kind == c.kind && is_type_path(&c.path));
    let mut i = 0;
    while i < group.len() {
        let c = group[i];
        // A run of values added (or removed) at one path, with the same experimental mark.
        let run = group[i..]
            .iter()
            .take_while(|d| d.path == c.path && d.experimental == c.experimental && same_list_kind(&d.kind, &c.kind))
            .count();
        if run > 1 {
            let values: Vec<String> = group[i..i + run]
                .iter()
                .map(|d| match &d.kind {
                    Kind::ValueAdded { value } | Kind::ValueRemoved { value } => format!("`\"{value}\"`"),
                    _ => unreachable!("same_list_kind"),
                })
                .collect();
            let what = if matches!(c.kind, Kind::ValueAdded { .. }) { "new values" } else { "values removed:" };
            let _ = writeln!(out, "- `{}`: {what} {}{}{}", c.path, values.join(", "), effects(c), exp(c));
            i += run;
            continue;
        }
        i += 1;
        if matches!(c.kind, Kind::TypeAdded | Kind::TypeRemoved) || moved_along(c) {
            continue; // listed at the end, or on the method's line
        }
        let mut text = describe(c);
        if method_move.is_some_and(|m| std::ptr::eq(*m, c)) {
            let types: Vec<String> = group.iter().filter(|d| moved_along(d)).map(|d| format!("`{}`", d.path)).collect();
            if !types.is_empty() {
                let _ = write!(text, ", with its type{} {}", if types.len() == 1 { "" } else { "s" }, types.join(", "));
            }
        }
        let _ = writeln!(out, "- {text}{}{}", effects(c), exp(c));
    }
    // A new method's params and response types are named on its own line.
    let named: Vec<&String> = group
        .iter()
        .filter_map(|c| match &c.kind {
            Kind::MethodAdded { params, response } => Some(params.iter().chain(response)),
            _ => None,
        })
        .flatten()
        .collect();
    for (kind, label) in [(Kind::TypeAdded, "new type"), (Kind::TypeRemoved, "removed type")] {
        let names: Vec<String> = group
            .iter()
            .filter(|c| c.kind == kind && !named.contains(&&c.path))
            .map(|c| format!("`{}`{}", c.path, exp(c)))
            .collect();
        if !names.is_empty() {
            let _ = writeln!(out, "- {label}{}: {}", if names.len() == 1 { "" } else { "s" }, names.join(", "));
        }
    }
}

fn same_list_kind(a: &Kind, b: &Kind) -> bool {
    matches!((a, b), (Kind::ValueAdded { .. }, Kind::ValueAdded { .. }) | (Kind::ValueRemoved { .. }, Kind::ValueRemoved { .. }))
}

/// What changed, as a sentence fragment.
fn describe(c: &Change) -> String {
    let p = &c.path;
    let method_level = !p.starts_with(|ch: char| ch.is_ascii_uppercase());
    match &c.kind {
        Kind::MethodAdded { params, response } => {
            let params = params.as_ref().map_or_else(|| "no params".to_owned(), |t| format!("params `{t}`"));
            match response {
                Some(r) => format!("new method: {params}, response `{r}`"),
                None => format!("new method: {params}"),
            }
        }
        Kind::MethodRemoved => "method removed".to_owned(),
        Kind::ToStable if method_level => "stable now".to_owned(),
        Kind::ToExperimental if method_level => "experimental now".to_owned(),
        Kind::ToStable => format!("`{p}` is stable now"),
        Kind::ToExperimental => format!("`{p}` is experimental now"),
        Kind::ParamsChanged { old, new } => format!("params: `{old}` → `{new}`"),
        Kind::TypeAdded => format!("new type `{p}`"),
        Kind::TypeRemoved => format!("type `{p}` removed"),
        Kind::Renamed { old, new, .. } if p == new => format!("type `{old}` is now `{new}` (same shape)"),
        Kind::Renamed { old, new, alias_of } => {
            let note = match alias_of {
                Some(t) => format!(" (both are `{t}`)"),
                None => " (same shape)".to_owned(),
            };
            format!("`{p}`: `{old}` → `{new}`{note}")
        }
        Kind::ShapeChanged { old, new } => format!("`{p}` changed from {} to {}", article(old), article(new)),
        Kind::TypeChanged { old, new } => format!("`{p}`: `{old}` → `{new}`"),
        Kind::FieldAdded { ty, presence } => format!("new {} field `{p}`: `{ty}`", short_presence(presence)),
        Kind::FieldRemoved { ty, .. } => format!("field `{p}` removed (was `{ty}`)"),
        Kind::FieldRenamed { new, ty, .. } => format!("field `{p}` looks renamed to `{new}` (`{ty}`)"),
        Kind::PresenceChanged { old, new, old_ty, new_ty } => {
            format!("`{p}` is {new} now (was {old}): `{old_ty}` → `{new_ty}`")
        }
        Kind::ValueAdded { value } => format!("`{p}`: new value `\"{value}\"`"),
        Kind::ValueRemoved { value } => format!("`{p}`: value `\"{value}\"` removed"),
        Kind::ValueRenamed { old, new } => format!("`{p}`: `\"{old}\"` is spelled `\"{new}\"` now"),
        Kind::VariantAdded { value, payload } => format!("`{p}`: new variant `{value}`: `{payload}`"),
        Kind::VariantRemoved { value } => format!("`{p}`: variant `{value}` removed"),
        Kind::TagChanged { old, new } => format!("`{p}`: tag member `{old}` → `{new}`"),
        Kind::ExtraChanged { old, new } => match (old, new) {
            (None, Some(t)) => format!("`{p}`: undeclared members are kept now (`{t}`)"),
            (Some(t), None) => format!("`{p}`: undeclared members are not kept any more (was `{t}`)"),
            _ => format!("`{p}`: undeclared members changed"),
        },
    }
}

/// ` — breaks **senders** (why)` for a breaking change; the hint, if any, for a compatible one.
fn effects(c: &Change) -> String {
    let breaking: Vec<String> = [("senders", &c.sends), ("receivers", &c.receives)]
        .into_iter()
        .filter_map(|(who, e)| e.as_ref().filter(|e| e.breaking).map(|e| (who, e)))
        .map(|(who, e)| if e.why.is_empty() { format!("**{who}**") } else { format!("**{who}** ({})", e.why) })
        .collect();
    if !breaking.is_empty() {
        return format!(" — breaks {}", breaking.join(" and "));
    }
    // The legend covers new values and variants, and Rust API changes say what they are.
    if c.severity != Severity::Compatible || matches!(c.kind, Kind::ValueAdded { .. } | Kind::VariantAdded { .. }) {
        return String::new();
    }
    let mut hints: Vec<&str> = [&c.sends, &c.receives].into_iter().flatten().map(|e| e.why.as_str()).filter(|w| !w.is_empty()).collect();
    hints.dedup();
    if hints.is_empty() {
        String::new()
    } else {
        format!(" — {}", hints.join("; "))
    }
}

/// `a struct`, `an alias`.
fn article(kind: &str) -> String {
    let an = kind.starts_with(['a', 'e', 'i', 'o', 'u']);
    format!("{} {kind}", if an { "an" } else { "a" })
}

fn short_presence(p: &str) -> &str {
    match p {
        "required, nullable" => "required (nullable)",
        "optional, null distinct from absent" => "optional",
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A bundle. Each method is `"<c|s|n|k> <wire> <params>"`: client request, server request,
    /// server notification, client notification; params is a definition name, `?Name` for
    /// nullable params, or `-` for `params: null`. `defs` is the inside of `definitions`.
    fn bundle(methods: &[&str], defs: &str) -> String {
        let mut unions: BTreeMap<&str, Vec<String>> = BTreeMap::new();
        for m in methods {
            let [dir, wire, params] = m.split(' ').collect::<Vec<_>>()[..] else { panic!("bad method spec {m}") };
            let union = match dir {
                "c" => "ClientRequest",
                "s" => "ServerRequest",
                "n" => "ServerNotification",
                "k" => "ClientNotification",
                _ => panic!("bad direction {dir}"),
            };
            let request = matches!(dir, "c" | "s");
            let (schema, required) = match params {
                "-" => (r#"{"type":"null"}"#.to_owned(), false),
                p if p.starts_with('?') => {
                    (format!(r##"{{"anyOf":[{{"$ref":"#/definitions/{}"}},{{"type":"null"}}]}}"##, &p[1..]), false)
                }
                p => (format!(r##"{{"$ref":"#/definitions/{p}"}}"##), true),
            };
            let id = if request { r##""id":{"$ref":"#/definitions/RequestId"},"## } else { "" };
            let mut req = vec![r#""method""#];
            if request {
                req.push(r#""id""#);
            }
            if required {
                req.push(r#""params""#);
            }
            unions.entry(union).or_default().push(format!(
                r#"{{"type":"object","required":[{}],"properties":{{{id}"method":{{"type":"string","enum":["{wire}"]}},"params":{schema}}}}}"#,
                req.join(",")
            ));
        }
        let unions: Vec<String> = unions.iter().map(|(u, arms)| format!(r#""{u}":{{"oneOf":[{}]}}"#, arms.join(","))).collect();
        let sep = if defs.trim().is_empty() { "" } else { "," };
        format!(
            r#"{{"definitions":{{"RequestId":{{"anyOf":[{{"type":"string"}},{{"type":"integer"}}]}},{}{sep}{defs}}}}}"#,
            unions.join(",")
        )
    }

    fn stable(version: &str, methods: &[&str], defs: &str) -> SchemaSet {
        SchemaSet { stable: bundle(methods, defs), experimental: None, codex_version: version.to_owned() }
    }

    fn with_experimental(mut set: SchemaSet, methods: &[&str], defs: &str) -> SchemaSet {
        set.experimental = Some(bundle(methods, defs));
        set
    }

    fn report(old: &SchemaSet, new: &SchemaSet) -> Report {
        diff_sets(old, new).unwrap_or_else(|e| panic!("{e}"))
    }

    /// The one change at `path` (of the given kind name, when several share the path).
    fn at<'a>(r: &'a Report, path: &str, kind: &str) -> &'a Change {
        let found: Vec<&Change> = r
            .changes
            .iter()
            .filter(|c| c.path == path && serde_json::to_value(&c.kind).unwrap()["kind"] == kind)
            .collect();
        match found.as_slice() {
            [c] => c,
            _ => panic!("expected one {kind} at {path}, found {}:\n{}", found.len(), r.to_markdown()),
        }
    }

    fn breaks(c: &Change) -> (bool, bool) {
        (c.sends.as_ref().is_some_and(|e| e.breaking), c.receives.as_ref().is_some_and(|e| e.breaking))
    }

    const EMPTY_PAIR: &str = r#""AxParams":{"type":"object"},"AxResponse":{"type":"object"}"#;

    #[test]
    fn same_schema_no_changes() {
        let set = stable("1", &["c a/x AxParams"], EMPTY_PAIR);
        let r = report(&set, &set);
        assert!(r.is_empty());
        assert_eq!(r.counts, Counts::default());
        assert!(r.to_markdown().contains("No protocol changes"));
    }

    #[test]
    fn methods_added_and_removed() {
        let old = stable("1", &["c a/x AxParams"], EMPTY_PAIR);
        let new = stable(
            "2",
            &["c b/y ByParams", "n thing/done ThingDoneNotification", "s ask AskParams"],
            r#""ByParams":{"type":"object"},"ByResponse":{"type":"object"},"ThingDoneNotification":{"type":"object"},
               "AskParams":{"type":"object"},"AskResponse":{"type":"object"}"#,
        );
        let r = report(&old, &new);
        let added = at(&r, "b/y", "method_added");
        assert_eq!(added.severity, Severity::Compatible);
        assert_eq!(added.home, Home::Method { direction: Direction::ClientRequest, method: "b/y".into(), experimental: false });
        assert!(added.sends.is_some() && added.receives.is_none());
        let removed = at(&r, "a/x", "method_removed");
        assert_eq!((removed.severity, breaks(removed)), (Severity::Breaking, (true, false)));
        let notification = at(&r, "thing/done", "method_added");
        assert!(notification.sends.is_none() && notification.receives.is_some());
        let request = at(&r, "ask", "method_added");
        assert!(request.receives.as_ref().unwrap().why.contains("answer it"));
        // The removed method's types: a Rust API change, filed under the method.
        let gone = at(&r, "AxParams", "type_removed");
        assert_eq!(gone.severity, Severity::RustApi);
        assert_eq!(gone.home, Home::Method { direction: Direction::ClientRequest, method: "a/x".into(), experimental: false });
        assert_eq!(at(&r, "ByParams", "type_added").severity, Severity::Compatible);
        let c = &r.counts;
        assert_eq!((c.methods_added, c.methods_removed, c.types_added, c.types_removed), (3, 1, 5, 2));
    }

    #[test]
    fn added_fields_by_direction_and_presence() {
        let old = stable("1", &["c t/start TStartParams"], r#""TStartParams":{"type":"object"},"TStartResponse":{"type":"object"}"#);
        let new = stable(
            "2",
            &["c t/start TStartParams"],
            r#""TStartParams":{"type":"object","required":["x"],"properties":{"x":{"type":"string"},"y":{"type":"string"}}},
               "TStartResponse":{"type":"object","required":["z","n"],"properties":{"z":{"type":"integer"},"w":{"type":"boolean"},"n":{"type":["string","null"]}}}"#,
        );
        let r = report(&old, &new);
        // Params: the client sends them. A new required member must be set.
        let x = at(&r, "TStartParams.x", "field_added");
        assert_eq!((x.severity, breaks(x)), (Severity::Breaking, (true, false)));
        assert!(x.receives.is_none());
        assert_eq!(at(&r, "TStartParams.y", "field_added").severity, Severity::Compatible);
        // Response: the client receives it. A new required member is missing from an older codex.
        let z = at(&r, "TStartResponse.z", "field_added");
        assert_eq!((z.severity, breaks(z)), (Severity::Breaking, (false, true)));
        assert!(z.receives.as_ref().unwrap().why.contains("older codex"));
        assert_eq!(at(&r, "TStartResponse.w", "field_added").severity, Severity::Compatible);
        // Required but nullable: an `Option` that reads a missing member as `None`.
        assert_eq!(at(&r, "TStartResponse.n", "field_added").severity, Severity::Compatible);
        assert_eq!(r.counts.types_changed, 2);
        assert_eq!(r.counts.methods_changed, 0);
    }

    #[test]
    fn removed_renamed_and_retyped_fields() {
        let old = stable(
            "1",
            &["c t/start TStartParams"],
            r#""TStartParams":{"type":"object","required":["a","b"],"properties":{"a":{"type":"string"},"b":{"type":"integer"}}},
               "TStartResponse":{"type":"object","properties":{"has_more":{"type":"boolean"},"gone":{"type":"string"}}}"#,
        );
        let new = stable(
            "2",
            &["c t/start TStartParams"],
            r#""TStartParams":{"type":"object","required":["a","count"],"properties":{"a":{"type":"integer"},"count":{"type":"integer"}}},
               "TStartResponse":{"type":"object","properties":{"hasMore":{"type":"boolean"},"fresh":{"type":"boolean"}}}"#,
        );
        let r = report(&old, &new);
        let retyped = at(&r, "TStartParams.a", "type_changed");
        assert_eq!(retyped.kind, Kind::TypeChanged { old: "String".into(), new: "i64".into() });
        assert_eq!(breaks(retyped), (true, false));
        // One removed and one added of the same type: looks like a rename.
        let renamed = at(&r, "TStartParams.b", "field_renamed");
        assert_eq!(renamed.kind, Kind::FieldRenamed { old: "b".into(), new: "count".into(), ty: "i64".into() });
        assert!(renamed.is_breaking());
        // Same name but for case and separators: a rename whatever else changed.
        let respelled = at(&r, "TStartResponse.has_more", "field_renamed");
        assert_eq!(breaks(respelled), (false, true));
        // Different types: a removal and an addition.
        let gone = at(&r, "TStartResponse.gone", "field_removed");
        assert_eq!(breaks(gone), (false, true));
        assert_eq!(at(&r, "TStartResponse.fresh", "field_added").severity, Severity::Compatible);
    }

    #[test]
    fn required_and_optional() {
        let old = stable(
            "1",
            &["c t/start TStartParams"],
            r#""TStartParams":{"type":"object","required":["x"],"properties":{"x":{"type":"string"},"y":{"type":"string"}}},
               "TStartResponse":{"type":"object","required":["z","w"],"properties":{"z":{"type":"string"},"w":{"type":"string"},"v":{"type":"string"}}}"#,
        );
        let new = stable(
            "2",
            &["c t/start TStartParams"],
            r#""TStartParams":{"type":"object","required":["y"],"properties":{"x":{"type":"string"},"y":{"type":"string"}}},
               "TStartResponse":{"type":"object","required":["w","v"],"properties":{"z":{"type":"string"},"w":{"type":["string","null"]},"v":{"type":"string"}}}"#,
        );
        let r = report(&old, &new);
        let presence = |path: &str| {
            let c = at(&r, path, "presence_changed");
            (c.severity, breaks(c))
        };
        // Sent: relaxing is compatible, requiring breaks.
        assert_eq!(presence("TStartParams.x"), (Severity::Compatible, (false, false)));
        assert_eq!(presence("TStartParams.y"), (Severity::Breaking, (true, false)));
        // Received: `T` <-> `Option<T>` breaks either way.
        assert_eq!(presence("TStartResponse.z"), (Severity::Breaking, (false, true)));
        assert_eq!(presence("TStartResponse.w"), (Severity::Breaking, (false, true)));
        assert!(at(&r, "TStartResponse.w", "presence_changed").receives.as_ref().unwrap().why.contains("null"));
        assert_eq!(presence("TStartResponse.v"), (Severity::Breaking, (false, true)));
        let Kind::PresenceChanged { old_ty, new_ty, .. } = &at(&r, "TStartResponse.z", "presence_changed").kind else { unreachable!() };
        assert_eq!((old_ty.as_str(), new_ty.as_str()), ("String", "Option<String>"));
    }

    #[test]
    fn enum_values_and_union_variants() {
        let defs = |values: &str, arms: &str| {
            format!(
                r##""AxParams":{{"type":"object"}},
                   "AxResponse":{{"type":"object","required":["status","item"],"properties":{{"status":{{"$ref":"#/definitions/Status"}},"item":{{"$ref":"#/definitions/Item"}}}}}},
                   "Status":{{"type":"string","enum":[{values}]}},
                   "Item":{{"oneOf":[{arms}]}}"##
            )
        };
        let text = r#"{"type":"object","title":"TextItem","required":["type","text"],"properties":{"type":{"type":"string","enum":["text"]},"text":{"type":"string"}}}"#;
        let text2 = r#"{"type":"object","title":"TextItem","required":["type","text"],"properties":{"type":{"type":"string","enum":["text"]},"text":{"type":"string"},"lang":{"type":"string"}}}"#;
        let image = r#"{"type":"object","title":"ImageItem","required":["type","url"],"properties":{"type":{"type":"string","enum":["image"]},"url":{"type":"string"}}}"#;
        let audio = r#"{"type":"object","title":"AudioItem","required":["type","data"],"properties":{"type":{"type":"string","enum":["audio"]},"data":{"type":"string"}}}"#;
        let old = stable("1", &["c a/x AxParams"], &defs(r#""a","b","in_progress""#, &format!("{text},{image}")));
        let new = stable("2", &["c a/x AxParams"], &defs(r#""a","c","inProgress""#, &format!("{text2},{audio}")));
        let r = report(&old, &new);
        let added = r.changes.iter().find(|c| c.kind == Kind::ValueAdded { value: "c".into() }).unwrap();
        assert_eq!((added.path.as_str(), added.severity), ("Status", Severity::Compatible));
        assert!(added.receives.as_ref().unwrap().why.contains("Unrecognized"));
        let removed = at(&r, "Status", "value_removed");
        assert_eq!(breaks(removed), (false, true));
        let respelled = at(&r, "Status", "value_renamed");
        assert_eq!(respelled.kind, Kind::ValueRenamed { old: "in_progress".into(), new: "inProgress".into() });
        let variant = at(&r, "Item", "variant_added");
        assert_eq!(variant.kind, Kind::VariantAdded { value: "audio".into(), payload: "AudioItem = { data }".into() });
        assert_eq!(variant.severity, Severity::Compatible);
        assert!(at(&r, "Item", "variant_removed").is_breaking());
        // A change inside a variant's inline payload is reported at the variant.
        assert_eq!(at(&r, "Item::text.lang", "field_added").severity, Severity::Compatible);
        assert!(!r.changes.iter().any(|c| c.path.starts_with("TextItem") || c.path.starts_with("AudioItem")));
        let md = r.to_markdown();
        assert!(md.contains("- `Status`: new value `\"c\"`"), "{md}");
    }

    #[test]
    fn response_and_shape_changes() {
        // `review/start` pairs with any JSON value while no `ReviewStartResponse` exists.
        let old = stable(
            "1",
            &["c review/start ReviewStartParams", "c a/x AxParams"],
            r#""ReviewStartParams":{"type":"object"},"AxParams":{"type":"object"},"AxResponse":{"type":"object","properties":{"a":{"type":"string"}}}"#,
        );
        let new = stable(
            "2",
            &["c review/start ReviewStartParams", "c a/x AxParams"],
            r#""ReviewStartParams":{"type":"object"},"ReviewStartResponse":{"type":"object"},"AxParams":{"type":"object"},"AxResponse":{"type":"string","enum":["a"]}"#,
        );
        let r = report(&old, &new);
        let response = at(&r, "review/start response", "type_changed");
        assert_eq!(response.kind, Kind::TypeChanged { old: "Value".into(), new: "ReviewStartResponse".into() });
        assert_eq!(breaks(response), (false, true));
        let shape = at(&r, "AxResponse", "shape_changed");
        assert_eq!(shape.kind, Kind::ShapeChanged { old: "struct".into(), new: "string enum".into() });
        assert_eq!(r.counts.methods_changed, 1);
    }

    #[test]
    fn params_presence() {
        let old = stable(
            "1",
            &["c account/logout -", "c a/x AxParams"],
            &format!(r#""LogoutAccountResponse":{{"type":"object"}},{EMPTY_PAIR}"#),
        );
        let new = stable(
            "2",
            &["c account/logout ?LogoutAccountParams", "c a/x ?AxParams"],
            &format!(r#""LogoutAccountParams":{{"type":"object"}},"LogoutAccountResponse":{{"type":"object"}},{EMPTY_PAIR}"#),
        );
        let r = report(&old, &new);
        let c = at(&r, "account/logout params", "params_changed");
        assert_eq!(c.kind, Kind::ParamsChanged { old: "none".into(), new: "Option<LogoutAccountParams>".into() });
        assert_eq!(c.severity, Severity::Compatible);
        assert_eq!(at(&r, "a/x params", "params_changed").severity, Severity::Compatible);
        // The other way round breaks senders.
        let back = report(&new, &old);
        assert_eq!(breaks(at(&back, "account/logout params", "params_changed")), (true, false));
        assert_eq!(breaks(at(&back, "a/x params", "params_changed")), (true, false));
    }

    #[test]
    fn experimental_marks() {
        let methods = ["c a/x AxParams"];
        let old = with_experimental(
            stable("1", &methods, r#""AxParams":{"type":"object","properties":{"f":{"type":"string"}}},"AxResponse":{"type":"object"}"#),
            &["c a/x AxParams", "c b/y ByParams"],
            r#""AxParams":{"type":"object","properties":{"f":{"type":"string"}}},"AxResponse":{"type":"object"},"ByParams":{"type":"object"},"ByResponse":{"type":"object"}"#,
        );
        let new = with_experimental(
            stable(
                "2",
                &["c a/x AxParams", "c b/y ByParams"],
                r#""AxParams":{"type":"object"},"AxResponse":{"type":"object"},"ByParams":{"type":"object"},"ByResponse":{"type":"object"}"#,
            ),
            &["c a/x AxParams", "c b/y ByParams"],
            r#""AxParams":{"type":"object","properties":{"f":{"type":"string"},"g":{"type":"string"}}},"AxResponse":{"type":"object"},"ByParams":{"type":"object"},"ByResponse":{"type":"object"}"#,
        );
        let r = report(&old, &new);
        let to_stable = at(&r, "b/y", "to_stable");
        assert_eq!((to_stable.severity, to_stable.experimental), (Severity::Compatible, false));
        assert_eq!(r.counts.methods_to_stable, 1);
        let to_exp = at(&r, "AxParams.f", "to_experimental");
        assert_eq!((to_exp.severity, to_exp.experimental, breaks(to_exp)), (Severity::Breaking, false, (true, false)));
        let g = at(&r, "AxParams.g", "field_added");
        assert!(g.experimental);
        // b/y, its two types, and g.
        assert_eq!((r.counts.compatible, r.counts.compatible_experimental), (4, 1));
        let md = r.to_markdown();
        assert!(md.contains("new optional field `AxParams.g`: `Option<String>` *(experimental)*"), "{md}");
        assert!(md.contains("#### `b/y`\n\n- stable now, with its types `ByParams`, `ByResponse` — no experimental opt-in needed\n"), "{md}");
    }

    #[test]
    fn inline_type_renumbered_by_the_generator() {
        let old = stable(
            "1",
            &["c a/x AxParams"],
            r#""AxParams":{"type":"object","properties":{"mode":{"type":"string","enum":["a","b"]}}},"AxResponse":{"type":"object"}"#,
        );
        // A new definition takes the name `AxParamsMode`: the inline enum becomes `AxParamsMode2`.
        let new = stable(
            "2",
            &["c a/x AxParams"],
            r##""AxParams":{"type":"object","properties":{"mode":{"type":"string","enum":["a","b","c"]},"other":{"$ref":"#/definitions/AxParamsMode"}}},
                "AxParamsMode":{"type":"object","properties":{"z":{"type":"string"}}},"AxResponse":{"type":"object"}"##,
        );
        let r = report(&old, &new);
        let renamed = at(&r, "AxParams.mode", "renamed");
        assert_eq!(renamed.kind, Kind::Renamed { old: "AxParamsMode".into(), new: "AxParamsMode2".into(), alias_of: None });
        assert_eq!(renamed.severity, Severity::RustApi);
        assert_eq!(r.changes.iter().find(|c| c.kind == Kind::ValueAdded { value: "c".into() }).unwrap().path, "AxParams.mode");
        // Inline types are never added or removed on their own.
        let added: Vec<&str> = r.changes.iter().filter(|c| c.kind == Kind::TypeAdded).map(|c| c.path.as_str()).collect();
        assert_eq!(added, ["AxParamsMode"]);
        assert_eq!(r.counts.types_removed, 0);
    }

    #[test]
    fn renamed_definitions_and_aliases() {
        let old = stable(
            "1",
            &["c a/x AxParams"],
            r##""AxParams":{"type":"object","required":["path"],"properties":{"path":{"type":"string"}}},
                "AxResponse":{"type":"object","properties":{"result":{"$ref":"#/definitions/CallToolResult"}}},
                "CallToolResult":{"type":"object","properties":{"content":{"type":"string"},"isError":{"type":"boolean"}}}"##,
        );
        let new = stable(
            "2",
            &["c a/x AxParams"],
            r##""AxParams":{"type":"object","required":["path"],"properties":{"path":{"$ref":"#/definitions/AbsolutePath"}}},
                "AbsolutePath":{"type":"string"},
                "AxResponse":{"type":"object","properties":{"result":{"$ref":"#/definitions/ToolCallResponse"}}},
                "ToolCallResponse":{"type":"object","properties":{"content":{"type":"string"},"isError":{"type":"boolean"}}}"##,
        );
        let r = report(&old, &new);
        let alias = at(&r, "AxParams.path", "renamed");
        assert_eq!(alias.kind, Kind::Renamed { old: "String".into(), new: "AbsolutePath".into(), alias_of: Some("String".into()) });
        assert_eq!(alias.severity, Severity::RustApi);
        let def = at(&r, "ToolCallResponse", "renamed");
        assert_eq!(def.kind, Kind::Renamed { old: "CallToolResult".into(), new: "ToolCallResponse".into(), alias_of: None });
        // The use site is covered by the rename; no removal or addition of either.
        assert!(!r.changes.iter().any(|c| c.path.starts_with("AxResponse")));
        assert_eq!((r.counts.types_renamed, r.counts.types_added, r.counts.types_removed), (1, 1, 0));
        assert_eq!(r.counts.breaking, 0);
    }

    #[test]
    fn shared_types_have_both_directions() {
        let defs = |thing: &str| {
            format!(
                r##""AxParams":{{"type":"object","properties":{{"t":{{"$ref":"#/definitions/Thing"}}}}}},"AxResponse":{{"type":"object"}},
                    "ByParams":{{"type":"object"}},"ByResponse":{{"type":"object","properties":{{"t":{{"$ref":"#/definitions/Thing"}}}}}},
                    "Thing":{thing}"##
            )
        };
        let methods = ["c a/x AxParams", "c b/y ByParams"];
        let old = stable("1", &methods, &defs(r#"{"type":"object","properties":{"a":{"type":"string"}}}"#));
        let new = stable("2", &methods, &defs(r#"{"type":"object","required":["b"],"properties":{"a":{"type":"string"},"b":{"type":"string"}}}"#));
        let r = report(&old, &new);
        let b = at(&r, "Thing.b", "field_added");
        assert_eq!(breaks(b), (true, true));
        assert_eq!(b.home, Home::Shared { name: "Thing".into(), experimental: false });
        assert_eq!(r.types["Thing"], Usage { sends: true, receives: true, methods: vec!["a/x".into(), "b/y".into()] });
        let md = r.to_markdown();
        assert!(md.contains("#### `Thing` — sent and received; used by `a/x`, `b/y`"), "{md}");
        assert!(md.contains("breaks **senders** (the server requires it: set it) and **receivers**"), "{md}");
    }

    #[test]
    fn envelope_members() {
        let notification = r#""ThingDoneNotification":{"type":"object"}"#;
        let old = stable("1", &["n thing/done ThingDoneNotification"], notification);
        let mut new = stable("2", &["n thing/done ThingDoneNotification"], notification);
        new.stable = new.stable.replacen(
            r#""ServerNotification":{"#,
            r#""ServerNotification":{"properties":{"emittedAtMs":{"type":"integer","format":"int64"}},"#,
            1,
        );
        let r = report(&old, &new);
        let c = at(&r, "ServerNotification.emittedAtMs", "field_added");
        assert_eq!((c.home.clone(), c.severity), (Home::Envelope, Severity::Compatible));
        assert!(r.to_markdown().contains("#### Every notification"));
    }

    #[test]
    fn json_and_markdown_shape() {
        let old = stable("0.1.0", &["c a/x AxParams"], EMPTY_PAIR);
        let new = stable("0.2.0", &["c a/x AxParams"], r#""AxParams":{"type":"object","required":["x"],"properties":{"x":{"type":"string"}}},"AxResponse":{"type":"object"}"#);
        let r = report(&old, &new);
        let json: serde_json::Value = serde_json::from_str(&r.to_json()).unwrap();
        assert_eq!(json["old_version"], "0.1.0");
        let change = &json["changes"][0];
        assert_eq!(change["kind"], "field_added");
        assert_eq!(change["severity"], "breaking");
        assert_eq!(change["home"], serde_json::json!({"home": "method", "direction": "ClientRequest", "method": "a/x", "experimental": false}));
        assert_eq!(change["sends"]["breaking"], true);
        assert!(change["receives"].is_null());
        let md = r.to_markdown();
        assert!(md.starts_with("# Protocol changes: codex 0.1.0 → 0.2.0\n\n**1 breaking**, 0 compatible.\n"), "{md}");
        assert!(md.contains("## Breaking changes (1)\n\n### Client requests\n\n#### `a/x`\n\n- new required field `AxParams.x`: `String` — breaks **senders**"), "{md}");
    }
}
