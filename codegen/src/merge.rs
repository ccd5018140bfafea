//! Experimental marks from the difference between the stable and the experimental bundle.
//!
//! The schema marks nothing as experimental; the only source is what `--experimental` adds.
//! The experimental IR is the superset; every method, type, field, enum value and union arm
//! it has that the stable IR lacks is marked. Anything else that differs (a type change, a
//! member the experimental bundle lacks) cannot be expressed as a feature gate: both builds
//! then get a type that accepts both bundles' values, and a warning says so.

use std::collections::BTreeMap;

use crate::ir::*;
use crate::{Error, Warning};

pub fn merge(stable: &Ir, mut experimental: Ir) -> Result<Ir, Error> {
    let mut warnings: Vec<Warning> = stable.warnings.iter().chain(&experimental.warnings).cloned().collect();
    for (name, def) in &stable.types {
        if !experimental.types.contains_key(name) {
            // Kept, unmarked: the experimental build must decode what the stable one does.
            warnings.push(Warning::new(
                &def.pointer,
                format!("type `{name}` is missing from the experimental bundle; kept in both builds"),
            ));
            experimental.types.insert(name.clone(), def.clone());
        }
    }
    for (name, def) in &mut experimental.types {
        match stable.types.get(name) {
            None => def.experimental = true,
            Some(s) => {
                if let Err(why) = mark_kind(&s.kind, &mut def.kind, &def.pointer, name, &mut warnings) {
                    warnings.push(Warning::new(&def.pointer, why));
                }
            }
        }
    }
    for direction in Direction::ALL {
        let pointer = format!("#/definitions/{}", direction.union_name());
        let stable_methods: BTreeMap<&str, &Method> =
            stable.methods(direction).iter().map(|m| (m.wire.as_str(), m)).collect();
        let exp = experimental.methods_mut(direction);
        for (wire, m) in &stable_methods {
            if !exp.iter().any(|e| e.wire == *wire) {
                warnings.push(Warning::new(
                    &pointer,
                    format!("method `{wire}` is missing from the experimental bundle; kept in both builds"),
                ));
                exp.push((*m).clone());
            }
        }
        for m in exp.iter_mut() {
            match stable_methods.get(m.wire.as_str()) {
                None => m.experimental = true,
                Some(s) if s.params != m.params => warnings.push(Warning::new(
                    &pointer,
                    format!("method `{}` has different params in the two bundles; both builds use the experimental bundle's", m.wire),
                )),
                Some(_) => {}
            }
        }
    }
    mark_fields(
        &stable.notification_envelope,
        &mut experimental.notification_envelope,
        "#/definitions/ServerNotification",
        "ServerNotification",
        &mut warnings,
    );
    experimental.has_experimental = true;
    warnings.sort();
    warnings.dedup();
    experimental.warnings = warnings;
    Ok(experimental)
}

/// Marks what only the experimental kind has. `Err` (the warning's text) when the two kinds
/// differ in a way a feature gate cannot express: both builds then use the experimental
/// bundle's type, unmarked.
fn mark_kind(
    s: &TypeKind,
    e: &mut TypeKind,
    pointer: &str,
    name: &str,
    warnings: &mut Vec<Warning>,
) -> Result<(), String> {
    let differ = || {
        format!("`{name}` differs between the bundles in a way a feature gate cannot express; both builds use the experimental bundle's")
    };
    match (s, e) {
        (TypeKind::Alias(a), TypeKind::Alias(b)) if a == b => Ok(()),
        (TypeKind::Struct(a), TypeKind::Struct(b)) if a.extra == b.extra => {
            mark_fields(&a.fields, &mut b.fields, pointer, name, warnings);
            Ok(())
        }
        (TypeKind::StringEnum(a), TypeKind::StringEnum(b)) => {
            mark_by(&a.values, &mut b.values, |v| &v.wire, |v| &mut v.experimental, |_, _| true).ok_or_else(differ)
        }
        (TypeKind::Tagged(a), TypeKind::Tagged(b)) if a.tag == b.tag => {
            mark_by(&a.arms, &mut b.arms, |v| &v.wire, |v| &mut v.experimental, |x, y| x.payload == y.payload)
                .ok_or_else(differ)
        }
        (TypeKind::External(a), TypeKind::External(b)) => {
            mark_by(&a.arms, &mut b.arms, |v| &v.wire, |v| &mut v.experimental, |x, y| x.payload == y.payload)
                .ok_or_else(differ)
        }
        (TypeKind::Untagged(a), TypeKind::Untagged(b)) => {
            mark_by(&a.arms, &mut b.arms, |v| &v.rust, |v| &mut v.experimental, |x, y| x.ty == y.ty).ok_or_else(differ)
        }
        _ => Err(differ()),
    }
}

/// Marks the members only the experimental bundle has. A member both have with another type,
/// presence or nullability is widened to accept both (any JSON value for different types);
/// a member only the stable bundle has is kept, unmarked. Each is a warning.
fn mark_fields(s: &[Field], e: &mut Vec<Field>, pointer: &str, name: &str, warnings: &mut Vec<Warning>) {
    for a in s {
        match e.iter_mut().find(|b| b.wire == a.wire) {
            None => {
                warnings.push(Warning::new(
                    pointer,
                    format!(
                        "member `{}` of `{name}` is missing from the experimental bundle; kept in both builds",
                        a.wire
                    ),
                ));
                e.push(a.clone());
            }
            Some(b) if a.ty != b.ty || a.required != b.required || a.nullable != b.nullable => {
                warnings.push(Warning::new(
                    pointer,
                    format!("member `{}` of `{name}` differs between the bundles; widened to accept both", a.wire),
                ));
                if a.ty != b.ty {
                    b.ty = Ty::Any;
                }
                b.required &= a.required;
                b.nullable |= a.nullable;
            }
            Some(_) => {}
        }
    }
    for b in e.iter_mut() {
        if !s.iter().any(|a| a.wire == b.wire) {
            b.experimental = true;
        }
    }
}

/// Marks the items of `e` that `s` lacks (matched by `key`). `None` when `s` has an item that
/// `e` lacks, or a matched pair is not `same`.
fn mark_by<T>(
    s: &[T],
    e: &mut [T],
    key: impl Fn(&T) -> &String,
    flag: impl Fn(&mut T) -> &mut bool,
    same: impl Fn(&T, &T) -> bool,
) -> Option<()> {
    for a in s {
        let b = e.iter().find(|b| key(b) == key(a))?;
        if !same(a, b) {
            return None;
        }
    }
    for b in e.iter_mut() {
        if !s.iter().any(|a| key(a) == key(b)) {
            *flag(b) = true;
        }
    }
    Some(())
}
