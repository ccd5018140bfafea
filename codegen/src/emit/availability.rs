//! `protocol/src/generated/availability.rs`: the supported range's releases, the availability
//! of every method (which the wire macros give its marker type as `SINCE`/`UNTIL`), and per
//! type what is not in every release of the range, plus the members that lead to such a type
//! (so a walk of a message's JSON finds it). Read by the protocol crate's `availability`
//! module.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;

use super::Part;
use crate::history::{keys, Availability};
use crate::ir::*;
use crate::Error;

fn opt(v: &Option<String>) -> String {
    match v {
        Some(v) => format!("Some({v:?})"),
        None => "None".to_owned(),
    }
}

/// A since as the tables write it: empty for the floor (what every release of the range has),
/// the one spelling of it in method and member rows alike (the protocol crate's
/// `availability::since` reads it back).
fn since_cell<'a>(since: &'a str, floor: &str) -> &'a str {
    if since == floor {
        ""
    } else {
        since
    }
}

/// The named type a value of `ty` is of, through options, arrays, boxes and aliases.
fn child(ir: &Ir, ty: &Ty, depth: usize) -> Option<String> {
    match ty {
        Ty::Named(n) => match ir.types.get(n).map(|d| &d.kind) {
            Some(TypeKind::Alias(inner)) if depth < 16 => child(ir, inner, depth + 1),
            Some(_) => Some(n.clone()),
            None => None,
        },
        Ty::Vec(t) | Ty::Option(t) | Ty::Boxed(t) => child(ir, t, depth),
        _ => None,
    }
}

struct Row {
    wire: String,
    value: bool,
    availability: Option<Availability>,
    /// Only the experimental bundle has it (a build without `experimental` lacks it).
    experimental: bool,
    child: Option<String>,
}

impl Row {
    /// Something the tables state about the row itself (not only where it leads).
    fn stated(&self) -> bool {
        self.availability.is_some() || self.experimental
    }
}

/// The error for a method of two directions whose availabilities differ: the methods' table
/// has one row per wire name, and each marker type's `SINCE` and `UNTIL` are read from it.
fn two_availabilities(wire: &str) -> Error {
    let why = "the methods' table states one availability per wire name (the marker types' SINCE and UNTIL too)";
    Error::new("", format!("`{wire}` is a method of two directions with different availabilities: {why}"))
}

pub fn emit_availability(ir: &Ir, codex_version: &str) -> Result<Vec<Part>, Error> {
    let floor = ir.floor.clone().unwrap_or_else(|| codex_version.to_owned());
    let releases = if ir.releases.is_empty() { vec![codex_version.to_owned()] } else { ir.releases.clone() };
    let get = |key: &str| ir.availability.get(key).cloned();

    // Every type's rows: its items, each with its availability (if not plain) and child type.
    // Rows by the schema name of their type, as the facts are kept ([`keys`]); the members'
    // child types by theirs.
    let schema = |n: String| ir.types.get(&n).map_or(n, |d| d.schema.clone());
    let mut rows: BTreeMap<&str, (&'static str, String, Vec<Row>)> = BTreeMap::new();
    for def in ir.types.values() {
        let name = def.schema.as_str();
        let (kind, tag, items): (&str, String, Vec<Row>) = match &def.kind {
            TypeKind::Struct(s) => (
                "Struct",
                String::new(),
                s.fields
                    .iter()
                    .map(|f| Row {
                        wire: f.wire.clone(),
                        value: false,
                        availability: get(&keys::member(name, &f.wire)),
                        experimental: f.experimental,
                        child: child(ir, &f.ty, 0).map(schema),
                    })
                    .collect(),
            ),
            TypeKind::StringEnum(e) => (
                "Enum",
                String::new(),
                e.values
                    .iter()
                    .map(|v| Row {
                        wire: v.wire.clone(),
                        value: true,
                        availability: get(&keys::value(name, &v.wire)),
                        experimental: v.experimental,
                        child: None,
                    })
                    .collect(),
            ),
            TypeKind::Tagged(t) => (
                "Tagged",
                t.tag.clone(),
                t.arms
                    .iter()
                    .map(|a| Row {
                        wire: a.wire.clone(),
                        value: true,
                        availability: get(&keys::value(name, &a.wire)),
                        experimental: a.experimental,
                        child: child(ir, &Ty::Named(a.payload.clone()), 0).map(schema),
                    })
                    .collect(),
            ),
            TypeKind::External(e) => (
                "External",
                String::new(),
                e.arms
                    .iter()
                    .map(|a| Row {
                        wire: a.wire.clone(),
                        value: a.payload.is_none(),
                        availability: get(&keys::value(name, &a.wire)),
                        experimental: a.experimental,
                        child: a.payload.as_ref().and_then(|t| child(ir, t, 0)).map(schema),
                    })
                    .collect(),
            ),
            TypeKind::Untagged(u) => (
                "Untagged",
                String::new(),
                u.arms
                    .iter()
                    .map(|a| Row {
                        wire: keys::untagged_arm_name(ir, name, a),
                        value: true,
                        availability: get(&keys::untagged_arm(ir, name, a)),
                        experimental: a.experimental,
                        child: child(ir, &a.ty, 0).map(schema),
                    })
                    .collect(),
            ),
            TypeKind::Alias(_) => continue,
        };
        rows.insert(name, (kind, tag, items));
    }
    // The types that have something not in every release or experimental, then those that
    // lead to them.
    let mut kept: BTreeSet<&str> =
        rows.iter().filter(|(_, (_, _, r))| r.iter().any(Row::stated)).map(|(n, _)| *n).collect();
    loop {
        let more: Vec<&str> = rows
            .iter()
            .filter(|(n, (_, _, r))| {
                !kept.contains(*n) && r.iter().any(|r| r.child.as_deref().is_some_and(|c| kept.contains(c)))
            })
            .map(|(n, _)| *n)
            .collect();
        if more.is_empty() {
            break;
        }
        kept.extend(more);
    }

    let mut out = String::new();
    out.push_str("#[allow(unused_imports)]\nuse crate::availability::{m, o, v, Kind::*, MethodRow, Owner};\n\n");
    let _ = writeln!(out, "/// The oldest codex release of the range the crate was generated for.");
    let _ = writeln!(out, "pub const FLOOR: &str = {floor:?};");
    let _ = writeln!(out, "/// Every release of the range, oldest first.");
    out.push_str("pub(crate) static RELEASES: &[&str] = &[\n");
    for chunk in releases.chunks(8) {
        let line: Vec<String> = chunk.iter().map(|r| format!("{r:?}")).collect();
        let _ = writeln!(out, "    {},", line.join(", "));
    }
    out.push_str("];\n\n");

    // Methods: (wire, since, until, params type in OWNERS); the wire macros give each marker
    // type its row's as `SINCE` and `UNTIL`.
    let mut methods = BTreeMap::new();
    for d in Direction::ALL {
        for m in ir.methods(d) {
            let a = get(&keys::method(d, &m.wire));
            let since = a.as_ref().map_or(floor.clone(), |a| a.since.clone());
            let until = a.as_ref().and_then(|a| a.until.clone());
            let params = m.params.ty().and_then(|t| child(ir, t, 0)).map(schema).filter(|p| kept.contains(p.as_str()));
            let result =
                m.response.as_ref().and_then(|t| child(ir, t, 0)).map(schema).filter(|p| kept.contains(p.as_str()));
            // One row per wire name: a method of two directions must have one availability.
            if let Some((first, _)) = methods.get(&m.wire) {
                if first != &(since.clone(), until.clone()) {
                    return Err(two_availabilities(&m.wire));
                }
                continue;
            }
            let row = format!(
                "    ({:?}, {:?}, {}, {:?}, {:?}, {}),\n",
                m.wire,
                since_cell(&since, &floor),
                opt(&until),
                params.unwrap_or_default(),
                result.unwrap_or_default(),
                m.experimental
            );
            methods.insert(m.wire.clone(), ((since, until), row));
        }
    }
    out.push_str(
        "/// Every method, sorted by wire name: since (empty: the floor), until, the rows in\n\
         /// [`OWNERS`] of its params type and of its result type, and whether it is experimental.\n",
    );
    out.push_str("pub(crate) static METHODS: &[MethodRow] = &[\n");
    methods.values().for_each(|(_, row)| out.push_str(row));
    out.push_str("];\n\n");
    out.push_str(
        "/// Per type, sorted by name: what is not in every release of the range (since, empty for\n\
         /// the floor; until; always sent since) or is experimental, and the members that lead to\n\
         /// a type that has such a thing.\n",
    );
    out.push_str("pub(crate) static OWNERS: &[Owner] = &[\n");
    for name in &kept {
        let (kind, tag, items) = &rows[name];
        let members: Vec<String> = items
            .iter()
            .filter(|r| r.stated() || r.child.as_deref().is_some_and(|c| kept.contains(c)))
            .map(|r| {
                let child = r.child.as_deref().filter(|c| kept.contains(c)).unwrap_or_default();
                let (since, until, always) = match &r.availability {
                    Some(a) => (since_cell(&a.since, &floor), a.until.clone(), a.always_since.clone()),
                    None => ("", None, None),
                };
                let row = if r.value {
                    format!("v({:?}, {since:?}, {}, {child:?})", r.wire, opt(&until))
                } else {
                    format!("m({:?}, {since:?}, {}, {}, {child:?})", r.wire, opt(&until), opt(&always))
                };
                if r.experimental {
                    format!("{row}.experimental()")
                } else {
                    row
                }
            })
            .collect();
        let _ = writeln!(out, "    o({name:?}, {kind}, {tag:?}, &[{}]),", members.join(", "));
    }
    out.push_str("];\n");
    Ok(vec![Part::Text(out)])
}
