//! An IR's items by key ([`super::keys`]): what the fold compares release by release and
//! what listings show.

use std::collections::BTreeMap;

use super::{keys, Key, Retired};
use crate::ir::*;

/// One item of an IR's surface. A member, value or arm has its owner's Rust name (the IR's key).
#[derive(Debug, Clone, Copy)]
pub(super) enum Item<'a> {
    Method(Direction, &'a Method),
    Field(&'a str, &'a Field),
    Value(&'a str, &'a EnumValue),
    TaggedArm(&'a str, &'a TaggedArm),
    ExternalArm(&'a str, &'a ExternalArm),
    UntaggedArm(&'a str, &'a UntaggedArm),
}

pub(super) const ENVELOPE: &str = "ServerNotification";

/// The surface of an IR by schema key: its items, and apart from them its types (a type and
/// the union arm it is the object of share a schema name).
pub(super) struct Surface<'a> {
    pub(super) items: BTreeMap<Key, Item<'a>>,
    pub(super) types: BTreeMap<String, &'a TypeDef>,
}

pub(super) fn surface(ir: &Ir) -> Surface<'_> {
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

/// One item of an IR's surface as listings show it: its key ([`keys`]), what it is and whether
/// it is experimental.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Listed {
    pub key: Key,
    /// Its own name on the wire: a method's, a member's, a value's, an arm's tag or key (an
    /// untagged arm's name in its key).
    pub wire: String,
    pub kind: ItemKind,
    pub experimental: bool,
}

/// What an item of a listing is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ItemKind {
    Method(Direction),
    Member,
    /// An enum's value.
    Value,
    /// A union's arm.
    Arm,
}

impl std::fmt::Display for ItemKind {
    /// `client request`, `server notification`, ..., `member`, `value`, `arm` (padded as asked).
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.pad(match self {
            ItemKind::Method(Direction::ClientRequest) => "client request",
            ItemKind::Method(Direction::ServerRequest) => "server request",
            ItemKind::Method(Direction::ServerNotification) => "server notification",
            ItemKind::Method(Direction::ClientNotification) => "client notification",
            ItemKind::Member => "member",
            ItemKind::Value => "value",
            ItemKind::Arm => "arm",
        })
    }
}

/// Every method, member, enum value and union arm of `ir`, by key.
pub fn listing(ir: &Ir) -> Vec<Listed> {
    let in_experimental = |o: &str| ir.types.get(o).is_some_and(|d| d.experimental);
    surface(ir)
        .items
        .into_iter()
        .map(|(key, item)| {
            let wire = match item {
                Item::Method(_, m) => m.wire.clone(),
                Item::Field(_, f) => f.wire.clone(),
                Item::Value(_, v) => v.wire.clone(),
                Item::TaggedArm(_, a) => a.wire.clone(),
                Item::ExternalArm(_, a) => a.wire.clone(),
                Item::UntaggedArm(o, a) => keys::untagged_arm_name(ir, schema_of(ir, o), a),
            };
            let (kind, experimental) = match item {
                Item::Method(d, m) => (ItemKind::Method(d), m.experimental),
                Item::Field(o, f) => (ItemKind::Member, f.experimental || in_experimental(o)),
                Item::Value(o, v) => (ItemKind::Value, v.experimental || in_experimental(o)),
                Item::TaggedArm(o, a) => (ItemKind::Arm, a.experimental || in_experimental(o)),
                Item::ExternalArm(o, a) => (ItemKind::Arm, a.experimental || in_experimental(o)),
                Item::UntaggedArm(o, a) => (ItemKind::Arm, a.experimental || in_experimental(o)),
            };
            Listed { key, wire, kind, experimental }
        })
        .collect()
}

/// The schema name of the type `rust` names in `ir` (the envelope is `ServerNotification`).
pub(super) fn schema_of<'a>(ir: &'a Ir, rust: &'a str) -> &'a str {
    ir.types.get(rust).map_or(rust, |d| d.schema.as_str())
}

pub(super) fn retire(ir: &Ir, item: Item<'_>) -> Retired {
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
pub(super) fn owner<'a>(item: &Item<'a>) -> Option<&'a str> {
    match item {
        Item::Field(o, _)
        | Item::Value(o, _)
        | Item::TaggedArm(o, _)
        | Item::ExternalArm(o, _)
        | Item::UntaggedArm(o, _) => Some(o),
        Item::Method(..) => None,
    }
}
