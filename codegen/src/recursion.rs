//! Recursive schemas: what Rust needs so that a type may contain itself.
//!
//! - A struct or enum that contains itself *by value* (through members, union arms,
//!   `Option`s and tuples, not through a `Vec` or a map, which already allocate) would have
//!   an infinite size: [`box_recursive_positions`] puts every position on such a cycle behind
//!   a `Box` ([`Ty::Boxed`], [`TaggedArm::boxed`]).
//! - A type alias that names itself (`A = array of A`) is a cycle Rust rejects whatever the
//!   indirection: [`break_alias_cycles`] types such an alias as any JSON value.

use std::collections::{BTreeMap, BTreeSet};

use crate::ir::*;
use crate::Warning;

/// The named types a value of `ty` holds by value (aliases followed).
fn by_value(ty: &Ty, types: &BTreeMap<String, TypeDef>, out: &mut BTreeSet<String>, seen: &mut BTreeSet<String>) {
    match ty {
        Ty::Named(n) => match types.get(n).map(|d| &d.kind) {
            Some(TypeKind::Alias(t)) if seen.insert(n.clone()) => by_value(t, types, out, seen),
            Some(TypeKind::Alias(_)) => {}
            Some(_) => {
                out.insert(n.clone());
            }
            None => {}
        },
        Ty::Option(t) => by_value(t, types, out, seen),
        Ty::Tuple(items) => items.iter().for_each(|t| by_value(t, types, out, seen)),
        Ty::Boxed(_) | Ty::Vec(_) | Ty::Map(_) => {}
        Ty::String | Ty::Bool | Ty::Int(_) | Ty::Float | Ty::Any | Ty::Unit => {}
    }
}

/// Every position (member, arm) of a type with the type it holds.
fn positions(kind: &TypeKind) -> Vec<Ty> {
    match kind {
        TypeKind::Alias(t) => vec![t.clone()],
        TypeKind::Struct(s) => s.fields.iter().map(|f| f.ty.clone()).collect(),
        TypeKind::StringEnum(_) => Vec::new(),
        TypeKind::Tagged(t) => t.arms.iter().filter(|a| !a.boxed).map(|a| Ty::Named(a.payload.clone())).collect(),
        TypeKind::External(e) => e.arms.iter().filter_map(|a| a.payload.clone()).collect(),
        TypeKind::Untagged(u) => u.arms.iter().map(|a| a.ty.clone()).collect(),
    }
}

/// Which named (non-alias) types each type holds by value.
fn edges(types: &BTreeMap<String, TypeDef>) -> BTreeMap<String, BTreeSet<String>> {
    types
        .iter()
        .filter(|(_, d)| !matches!(d.kind, TypeKind::Alias(_)))
        .map(|(name, def)| {
            let mut out = BTreeSet::new();
            for ty in positions(&def.kind) {
                by_value(&ty, types, &mut out, &mut BTreeSet::new());
            }
            (name.clone(), out)
        })
        .collect()
}

/// Whether `from` reaches `to` by value.
fn reaches(edges: &BTreeMap<String, BTreeSet<String>>, from: &str, to: &str) -> bool {
    let mut stack = vec![from.to_owned()];
    let mut seen = BTreeSet::new();
    while let Some(n) = stack.pop() {
        if n == to {
            return true;
        }
        if seen.insert(n.clone()) {
            stack.extend(edges.get(&n).into_iter().flatten().cloned());
        }
    }
    false
}

/// Boxes every position of a type that leads back to the type by value. Types are taken in
/// name order and the graph is recomputed after each change, so a cycle is broken once (in
/// the first type of it by name), not at every position on it.
pub fn box_recursive_positions(types: &mut BTreeMap<String, TypeDef>) {
    let mut graph = edges(types);
    let names: Vec<String> = graph.keys().cloned().collect();
    for name in names {
        let mut kind = types[&name].kind.clone();
        let snapshot = &*types;
        let cyclic = |ty: &Ty| {
            let mut held = BTreeSet::new();
            by_value(ty, snapshot, &mut held, &mut BTreeSet::new());
            held.iter().any(|n| reaches(&graph, n, &name))
        };
        let mut changed = false;
        let mut boxed = |ty: &mut Ty| {
            if cyclic(ty) {
                *ty = box_ty(std::mem::replace(ty, Ty::Unit));
                changed = true;
            }
        };
        match &mut kind {
            TypeKind::Struct(s) => s.fields.iter_mut().for_each(|f| boxed(&mut f.ty)),
            TypeKind::Tagged(t) => {
                for arm in &mut t.arms {
                    if cyclic(&Ty::Named(arm.payload.clone())) {
                        arm.boxed = true;
                        changed = true;
                    }
                }
            }
            TypeKind::External(e) => e.arms.iter_mut().filter_map(|a| a.payload.as_mut()).for_each(&mut boxed),
            TypeKind::Untagged(u) => u.arms.iter_mut().for_each(|a| boxed(&mut a.ty)),
            TypeKind::Alias(_) | TypeKind::StringEnum(_) => {}
        }
        if changed {
            types.get_mut(&name).expect("listed").kind = kind;
            graph = edges(types);
        }
    }
}

/// `T` -> `Box<T>`, inside an `Option` or a tuple's positions where the type is.
fn box_ty(ty: Ty) -> Ty {
    match ty {
        Ty::Option(t) => Ty::Option(Box::new(box_ty(*t))),
        Ty::Tuple(items) => Ty::Tuple(items.into_iter().map(box_ty).collect()),
        t @ Ty::Named(_) => Ty::Boxed(Box::new(t)),
        t => t,
    }
}

/// Types as any JSON value every alias that leads back to itself through aliases alone.
pub fn break_alias_cycles(types: &mut BTreeMap<String, TypeDef>, warnings: &mut Vec<Warning>) {
    fn names_in(ty: &Ty, out: &mut Vec<String>) {
        match ty {
            Ty::Named(n) => out.push(n.clone()),
            Ty::Option(t) | Ty::Vec(t) | Ty::Map(t) | Ty::Boxed(t) => names_in(t, out),
            Ty::Tuple(items) => items.iter().for_each(|t| names_in(t, out)),
            Ty::String | Ty::Bool | Ty::Int(_) | Ty::Float | Ty::Any | Ty::Unit => {}
        }
    }
    let aliases: BTreeMap<String, Vec<String>> = types
        .iter()
        .filter_map(|(name, def)| match &def.kind {
            TypeKind::Alias(t) => {
                let mut out = Vec::new();
                names_in(t, &mut out);
                Some((
                    name.clone(),
                    out.into_iter()
                        .filter(|n| matches!(types.get(n).map(|d| &d.kind), Some(TypeKind::Alias(_))))
                        .collect(),
                ))
            }
            _ => None,
        })
        .collect();
    let graph: BTreeMap<String, BTreeSet<String>> =
        aliases.iter().map(|(k, v)| (k.clone(), v.iter().cloned().collect())).collect();
    for name in aliases.keys() {
        if graph[name].iter().any(|n| reaches(&graph, n, name)) {
            let def = types.get_mut(name).expect("listed");
            warnings.push(Warning::new(
                &def.pointer,
                format!("`{name}` is an alias that contains itself (Rust type aliases cannot recurse): typed as `serde_json::Value`"),
            ));
            def.kind = TypeKind::Alias(Ty::Any);
        }
    }
}
