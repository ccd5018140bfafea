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
//! # Where a change is
//!
//! Each change names its place with a [`Path`]: a method (`thread/start`, `thread/start params`),
//! a named type or the notification envelope, then the steps into it. A type is printed by what
//! the schema calls it ([`codex_app_codegen::schema_name`]), as `vendor-schemas/history.json` names items,
//! not by its generated Rust name; members and values by their wire names:
//! `LoginAccountParams::chatgpt.appBrand`, whatever the generator calls the `chatgpt` arm's
//! object. The path keeps the Rust name of its type for code that looks for the Rust items (the
//! upgrade's search for the code that uses a breaking change). What a change's [`Kind`] says of
//! types (`Option<String>`, a renamed type) is the generated Rust type.
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
//! | `Option<T>` <-> `Option<Option<T>>` (whether `null` differs from absent) | Rust API only | Rust API only |
//! | other presence changes (required nullable <-> optional) | compatible | compatible |
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
//! named differently, a member that changes between `Option<T>` and `Option<Option<T>>`. The wire is unchanged, but code that names them must follow.

mod compare;
mod markdown;
mod matching;
mod path;
mod report;
mod rules;
mod usage;
mod written;

use std::collections::{BTreeMap, BTreeSet};

pub use path::{Part, Path, Root, Step};
pub use report::*;
pub use written::rust_ty;

use codex_app_codegen::ir::*;
use codex_app_codegen::{Error, SchemaSet, Settings};
use compare::Comparison;
use usage::{usage, VersionIndex};

/// Builds both IRs (with [`Settings::codex`]: the checked-in decisions) and compares them.
pub fn diff_sets(old: &SchemaSet, new: &SchemaSet) -> Result<Report, Error> {
    diff_sets_with(old, new, &Settings::codex()?)
}

/// [`diff_sets`] with other settings. What their decisions do not hold takes its proposal,
/// whatever [`Settings::undecided`] says.
pub fn diff_sets_with(old: &SchemaSet, new: &SchemaSet, settings: &Settings) -> Result<Report, Error> {
    let in_version = |v: &str| {
        let v = v.to_owned();
        move |mut e: Error| {
            e.message = format!("codex {v}: {}", e.message);
            e
        }
    };
    // Other releases may need decisions the file does not hold: take the proposals.
    let settings = settings.clone().proposing();
    let old_ir = codex_app_codegen::build_ir_with(old, &settings).map_err(in_version(&old.codex_version))?;
    let new_ir = codex_app_codegen::build_ir_with(new, &settings).map_err(in_version(&new.codex_version))?;
    Ok(diff(&settings, &old_ir, &old.codex_version, &new_ir, &new.codex_version))
}

/// Compares two IRs built with `settings`.
pub fn diff(settings: &Settings, old: &Ir, old_version: &str, new: &Ir, new_version: &str) -> Report {
    let mut d = Comparison {
        old: VersionIndex::new(old, settings),
        new: VersionIndex::new(new, settings),
        renamed: BTreeMap::new(),
        visited: BTreeSet::new(),
        changes: Vec::new(),
    };
    d.run();
    let Comparison { old: old_side, new: new_side, mut changes, .. } = d;
    // Within a filed_under: the method's own changes, then by path as printed; a stable sort
    // keeps schema order among the changes of one path.
    let key = |c: &Change| (c.severity, c.filed_under.clone(), !c.path.is_method(), c.path.to_string());
    changes.sort_by_cached_key(key);
    changes.dedup();
    let mut types = BTreeMap::new();
    for c in &changes {
        if let FiledUnder::Shared { name, .. } | FiledUnder::Unused { name, .. } = &c.filed_under {
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
        let method_level = ch.path.is_method();
        match &ch.kind {
            Kind::MethodAdded { .. } => c.methods_added += 1,
            Kind::MethodRemoved => c.methods_removed += 1,
            Kind::ToStable if method_level => c.methods_to_stable += 1,
            Kind::ToExperimental if method_level => c.methods_to_experimental += 1,
            Kind::TypeAdded => c.types_added += 1,
            Kind::TypeRemoved => c.types_removed += 1,
            // A type renamed: a definition, or the type of a method's params or response.
            Kind::Renamed { .. } if ch.path.steps.is_empty() => c.types_renamed += 1,
            _ => match &ch.path.root {
                Root::Method { wire, .. } => {
                    methods_changed.insert(wire.clone());
                }
                // By the Rust name, which is one type's only.
                Root::Type { rust, .. } => {
                    types_changed.insert(rust.clone());
                }
                Root::Envelope => {
                    types_changed.insert(ch.path.root.to_string());
                }
            },
        }
    }
    c.methods_changed = methods_changed.len();
    c.types_changed = types_changed.len();
    c
}
