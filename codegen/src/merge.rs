//! Experimental marks from the difference between the stable and the experimental bundle.
//!
//! The schema marks nothing as experimental; the only source is what `--experimental` adds.
//! The experimental IR is the superset; every method, type, field, enum value and union arm
//! it has that the stable IR lacks is marked. Anything else that differs (a type change, a
//! member the experimental bundle lacks) cannot be expressed as a feature gate and is an error.

use std::collections::BTreeMap;

use crate::ir::*;
use crate::Error;

pub fn merge(stable: &Ir, mut experimental: Ir) -> Result<Ir, Error> {
    for name in stable.types.keys() {
        if !experimental.types.contains_key(name) {
            return Err(Error::new(&stable.types[name].pointer, format!("type `{name}` is missing from the experimental bundle")));
        }
    }
    for (name, def) in &mut experimental.types {
        match stable.types.get(name) {
            None => def.experimental = true,
            Some(s) => mark_kind(&s.kind, &mut def.kind, &def.pointer, name)?,
        }
    }
    for direction in Direction::ALL {
        let stable_methods: BTreeMap<&str, &Method> =
            stable.methods(direction).iter().map(|m| (m.wire.as_str(), m)).collect();
        let exp = experimental.methods_mut(direction);
        for wire in stable_methods.keys() {
            if !exp.iter().any(|m| m.wire == *wire) {
                return Err(Error::new(
                    format!("#/definitions/{}", direction.union_name()),
                    format!("method `{wire}` is missing from the experimental bundle"),
                ));
            }
        }
        for m in exp.iter_mut() {
            match stable_methods.get(m.wire.as_str()) {
                None => m.experimental = true,
                Some(s) if s.params != m.params => {
                    return Err(Error::new(
                        format!("#/definitions/{}", direction.union_name()),
                        format!("method `{}` has different params in the two bundles", m.wire),
                    ));
                }
                Some(_) => {}
            }
        }
    }
    mark_fields(&stable.notification_envelope, &mut experimental.notification_envelope, "#/definitions/ServerNotification", "ServerNotification")?;
    experimental.has_experimental = true;
    Ok(experimental)
}

fn mark_kind(s: &TypeKind, e: &mut TypeKind, pointer: &str, name: &str) -> Result<(), Error> {
    let differ = || Error::new(pointer, format!("`{name}` differs between the bundles in a way a feature gate cannot express"));
    match (s, e) {
        (TypeKind::Alias(a), TypeKind::Alias(b)) if a == b => Ok(()),
        (TypeKind::Struct(a), TypeKind::Struct(b)) if a.extra == b.extra => mark_fields(&a.fields, &mut b.fields, pointer, name),
        (TypeKind::StringEnum(a), TypeKind::StringEnum(b)) => {
            mark_by(&a.values, &mut b.values, |v| &v.wire, |v| &mut v.experimental, |_, _| true).ok_or_else(differ)
        }
        (TypeKind::Tagged(a), TypeKind::Tagged(b)) if a.tag == b.tag => {
            mark_by(&a.arms, &mut b.arms, |v| &v.wire, |v| &mut v.experimental, |x, y| x.payload == y.payload).ok_or_else(differ)
        }
        (TypeKind::External(a), TypeKind::External(b)) => {
            mark_by(&a.arms, &mut b.arms, |v| &v.wire, |v| &mut v.experimental, |x, y| x.payload == y.payload).ok_or_else(differ)
        }
        (TypeKind::Untagged(a), TypeKind::Untagged(b)) => {
            mark_by(&a.arms, &mut b.arms, |v| &v.rust, |v| &mut v.experimental, |x, y| x.ty == y.ty).ok_or_else(differ)
        }
        _ => Err(differ()),
    }
}

fn mark_fields(s: &[Field], e: &mut [Field], pointer: &str, name: &str) -> Result<(), Error> {
    let same = |a: &Field, b: &Field| a.ty == b.ty && a.required == b.required && a.nullable == b.nullable;
    mark_by(s, e, |f| &f.wire, |f| &mut f.experimental, same).ok_or_else(|| {
        Error::new(pointer, format!("a member of `{name}` differs between the bundles in a way a feature gate cannot express"))
    })
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
