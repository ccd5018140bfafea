//! `protocol/src/generated/availability.rs`: the supported range's releases, the availability
//! of every method (which the wire macros give its marker type as `SINCE`/`UNTIL`), and per
//! type what is not in every release of the range, plus the members that lead to such a type
//! (so a walk of a message's JSON finds it). Read by the protocol crate's `availability`
//! module.
//!
//! In three steps: the rows ([`owners`], [`methods`]), which types the owners' table keeps
//! ([`kept`]), and the text ([`text`]).

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;

use super::Part;
use crate::history::{keys, Availability, Key};
use crate::ir::*;
use crate::Error;

// The protocol crate's rule of which types lead to something a check looks at, as source: the
// generator cannot depend on the crate it generates.
#[path = "../../../protocol/src/availability/reach.rs"]
mod reach;

pub fn emit_availability(ir: &Ir, codex_version: &str) -> Result<Vec<Part>, Error> {
    let floor = ir.floor.clone().unwrap_or_else(|| codex_version.to_owned());
    let releases = if ir.releases.is_empty() { vec![codex_version.to_owned()] } else { ir.releases.clone() };
    let owners = owners(ir);
    let kept = kept(&owners);
    let methods = methods(ir, &kept)?;
    Ok(vec![Part::Text(text(&floor, codex_version, &releases, &methods, &owners, &kept))])
}

/// One item of a type: a member, enum value or union arm.
struct Row {
    wire: String,
    value: bool,
    availability: Option<Availability>,
    /// Only the experimental bundle has it (a build without `experimental` lacks it).
    experimental: bool,
    /// The schema name of the type its value is of.
    child: Option<String>,
}

impl Row {
    /// Something the tables state about the row itself (not only where it leads).
    fn stated(&self) -> bool {
        self.availability.is_some() || self.experimental
    }
}

/// One type's rows, with what the owners' table says of the type itself.
struct Owner {
    kind: &'static str,
    /// The tag member of a tagged union.
    tag: String,
    rows: Vec<Row>,
}

/// Every type but the aliases, by its schema name (as the facts are kept, [`keys`]): its items,
/// each with its availability (if not plain) and child type.
fn owners(ir: &Ir) -> BTreeMap<&str, Owner> {
    let mut owners: BTreeMap<&str, Owner> =
        ir.types.values().filter_map(|def| Some((def.schema.as_str(), owner(ir, def)?))).collect();
    // The members every notification may carry beside `method` and `params`
    // (`ServerNotification.emittedAtMs`): the schema declares them on the notifications' union,
    // which is no type of the IR.
    if !ir.notification_envelope.is_empty() {
        let name = Direction::ServerNotification.union_name();
        let rows = ir.notification_envelope.iter().map(|f| Row {
            wire: f.wire.clone(),
            value: false,
            availability: ir.availability.get(&keys::member(name, &f.wire)).cloned(),
            experimental: f.experimental,
            child: child(ir, &f.ty, 0),
        });
        let owner =
            owners.entry(name).or_insert_with(|| Owner { kind: "Struct", tag: String::new(), rows: Vec::new() });
        owner.rows.extend(rows);
    }
    owners
}

fn owner(ir: &Ir, def: &TypeDef) -> Option<Owner> {
    let name = def.schema.as_str();
    let row = |wire: String, value: bool, key: Key, experimental: bool, ty: Option<&Ty>| Row {
        wire,
        value,
        availability: ir.availability.get(&key).cloned(),
        experimental,
        child: ty.and_then(|t| child(ir, t, 0)),
    };
    let value = |wire: &str, experimental: bool, ty: Option<&Ty>| {
        row(wire.to_owned(), true, keys::value(name, wire), experimental, ty)
    };
    let (kind, tag, rows): (_, &str, Vec<Row>) = match &def.kind {
        TypeKind::Struct(s) => {
            let member =
                |f: &Field| row(f.wire.clone(), false, keys::member(name, &f.wire), f.experimental, Some(&f.ty));
            ("Struct", "", s.fields.iter().map(member).collect())
        }
        TypeKind::StringEnum(e) => {
            ("Enum", "", e.values.iter().map(|v| value(&v.wire, v.experimental, None)).collect())
        }
        TypeKind::Tagged(t) => {
            let arm = |a: &TaggedArm| value(&a.wire, a.experimental, Some(&Ty::Named(a.payload.clone())));
            ("Tagged", &t.tag, t.arms.iter().map(arm).collect())
        }
        TypeKind::External(e) => {
            // An arm with a payload is a key (a member), one without a string (a value).
            let arm = |a: &ExternalArm| {
                let key = keys::value(name, &a.wire);
                row(a.wire.clone(), a.payload.is_none(), key, a.experimental, a.payload.as_ref())
            };
            ("External", "", e.arms.iter().map(arm).collect())
        }
        TypeKind::Untagged(u) => {
            let arm = |a: &UntaggedArm| {
                let (wire, key) = (keys::untagged_arm_name(ir, name, a), keys::untagged_arm(ir, name, a));
                row(wire, true, key, a.experimental, Some(&a.ty))
            };
            ("Untagged", "", u.arms.iter().map(arm).collect())
        }
        TypeKind::Alias(_) => return None,
    };
    Some(Owner { kind, tag: tag.to_owned(), rows })
}

/// The schema name of the named type a value of `ty` is of, through options, arrays, boxes
/// and aliases.
fn child(ir: &Ir, ty: &Ty, depth: usize) -> Option<String> {
    match ty {
        Ty::Named(n) => {
            let def = ir.types.get(n)?;
            match &def.kind {
                TypeKind::Alias(inner) if depth < 16 => child(ir, inner, depth + 1),
                _ => Some(def.schema.clone()),
            }
        }
        Ty::Vec(t) | Ty::Option(t) | Ty::Boxed(t) => child(ir, t, depth),
        _ => None,
    }
}

/// The types the owners' table lists: those that have something not in every release or
/// experimental, and those that lead to them (the rule a check walks the table by, shared with
/// the protocol crate: [`reach`]).
fn kept<'a>(owners: &BTreeMap<&'a str, Owner>) -> BTreeSet<&'a str> {
    let names: Vec<&str> = owners.keys().copied().collect();
    let children: Vec<Vec<usize>> = owners
        .values()
        .map(|o| o.rows.iter().filter_map(|r| names.binary_search(&r.child.as_deref()?).ok()).collect())
        .collect();
    let mut marked: Vec<bool> = owners.values().map(|o| o.rows.iter().any(Row::stated)).collect();
    reach::lead_to(&mut marked, |row| children[row].iter().copied());
    names.into_iter().zip(marked).filter_map(|(name, kept)| kept.then_some(name)).collect()
}

/// A row of the methods' table.
struct MethodRow {
    /// Since and until (`None`: since the floor, in every release of the range).
    availability: Option<Availability>,
    /// The schema names of its params and result types, when the owners' table has them.
    params: Option<String>,
    result: Option<String>,
    experimental: bool,
}

/// Every method, by wire name (one row for a method of two directions).
fn methods(ir: &Ir, kept: &BTreeSet<&str>) -> Result<BTreeMap<String, MethodRow>, Error> {
    let owner = |ty: Option<&Ty>| ty.and_then(|t| child(ir, t, 0)).filter(|n| kept.contains(n.as_str()));
    let mut rows: BTreeMap<String, MethodRow> = BTreeMap::new();
    for d in Direction::ALL {
        for m in ir.methods(d) {
            // A method's row states since and until (members alone have `always_since`).
            let availability = ir
                .availability
                .get(&keys::method(d, &m.wire))
                .map(|a| Availability { always_since: None, ..a.clone() });
            if let Some(first) = rows.get(&m.wire) {
                if first.availability != availability {
                    return Err(two_availabilities(&m.wire));
                }
                continue;
            }
            let (params, result) = (owner(m.params.ty()), owner(m.response.as_ref()));
            rows.insert(m.wire.clone(), MethodRow { availability, params, result, experimental: m.experimental });
        }
    }
    Ok(rows)
}

/// The error for a method of two directions whose availabilities differ: the methods' table
/// has one row per wire name, and each marker type's `SINCE` and `UNTIL` are read from it.
fn two_availabilities(wire: &str) -> Error {
    let why = "the methods' table states one availability per wire name (the marker types' SINCE and UNTIL too)";
    Error::new("", format!("`{wire}` is a method of two directions with different availabilities: {why}"))
}

/// The file: the floor and the releases, then the methods' table and the owners' table.
fn text(
    floor: &str,
    codex_version: &str,
    releases: &[String],
    methods: &BTreeMap<String, MethodRow>,
    owners: &BTreeMap<&str, Owner>,
    kept: &BTreeSet<&str>,
) -> String {
    let mut out = String::new();
    out.push_str("#[allow(unused_imports)]\nuse crate::availability::{m, o, r, v, Kind::*, MethodRow, Owner};\n\n");
    let _ = writeln!(out, "/// The oldest codex release of the range the crate was generated for.");
    let _ = writeln!(out, "pub const FLOOR: &str = {floor:?};");
    let _ = writeln!(out, "/// Every release of the range, oldest first: from [`FLOOR`] to [`crate::CODEX_VERSION`].");
    out.push_str("pub(crate) static RELEASES: &[&str] = &[\n");
    // Each release is written once in the generated code: the floor and the newest are named by
    // their constants.
    let cells: Vec<String> = releases
        .iter()
        .enumerate()
        .map(|(i, r)| {
            if i == 0 && r == floor {
                "FLOOR".to_owned()
            } else if i + 1 == releases.len() && r == codex_version {
                "crate::CODEX_VERSION".to_owned()
            } else {
                format!("{r:?}")
            }
        })
        .collect();
    for chunk in cells.chunks(8) {
        let _ = writeln!(out, "    {},", chunk.join(", "));
    }
    out.push_str("];\n\n");
    methods_table(&mut out, floor, methods);
    owners_table(&mut out, floor, owners, kept);
    out
}

fn methods_table(out: &mut String, floor: &str, methods: &BTreeMap<String, MethodRow>) {
    out.push_str(
        "/// Every method, sorted by wire name: since (empty: the floor), until, the rows in\n\
         /// [`OWNERS`] of its params type and of its result type, and whether it is experimental.\n",
    );
    out.push_str("pub(crate) static METHODS: &[MethodRow] = &[\n");
    for (wire, m) in methods {
        let (params, result) = (m.params.as_deref().unwrap_or_default(), m.result.as_deref().unwrap_or_default());
        let a = m.availability.as_ref();
        let since = since_cell(a.map(|a| a.since.as_str()), floor);
        let until = opt(a.and_then(|a| a.until.as_deref()));
        let _ = writeln!(out, "    r({wire:?}, {since:?}, {until}, {params:?}, {result:?}, {}),", m.experimental);
    }
    out.push_str("];\n\n");
}

fn owners_table(out: &mut String, floor: &str, owners: &BTreeMap<&str, Owner>, kept: &BTreeSet<&str>) {
    out.push_str(
        "/// Per type, sorted by name: what is not in every release of the range (since, empty for\n\
         /// the floor; until; always sent since) or is experimental, and the members that lead to\n\
         /// a type that has such a thing.\n",
    );
    out.push_str("pub(crate) static OWNERS: &[Owner] = &[\n");
    for name in kept {
        let Owner { kind, tag, rows } = &owners[name];
        let members: Vec<String> = rows
            .iter()
            .filter_map(|r| {
                let child = r.child.as_deref().filter(|c| kept.contains(c));
                (r.stated() || child.is_some()).then(|| member(r, child.unwrap_or_default(), floor))
            })
            .collect();
        let _ = writeln!(out, "    o({name:?}, {kind}, {tag:?}, &[{}]),", members.join(", "));
    }
    out.push_str("];\n");
}

/// `m(...)` for a member, `v(...)` for a value or arm, `.experimental()` after either.
fn member(r: &Row, child: &str, floor: &str) -> String {
    let a = r.availability.as_ref();
    let since = since_cell(a.map(|a| a.since.as_str()), floor);
    let until = opt(a.and_then(|a| a.until.as_deref()));
    let row = if r.value {
        format!("v({:?}, {since:?}, {until}, {child:?})", r.wire)
    } else {
        let always = opt(a.and_then(|a| a.always_since.as_deref()));
        format!("m({:?}, {since:?}, {until}, {always}, {child:?})", r.wire)
    };
    if r.experimental {
        format!("{row}.experimental()")
    } else {
        row
    }
}

/// A since as the tables write it: empty for the floor (what every release of the range has;
/// `None`: no availability, in every release), the one spelling of it in method and member
/// rows alike (the protocol crate's `availability::since` reads it back).
fn since_cell<'a>(since: Option<&'a str>, floor: &str) -> &'a str {
    since.filter(|s| *s != floor).unwrap_or_default()
}

fn opt(v: Option<&str>) -> String {
    match v {
        Some(v) => format!("Some({v:?})"),
        None => "None".to_owned(),
    }
}
