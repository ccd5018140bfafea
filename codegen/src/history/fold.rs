//! Folding the next release into a history ([`History::extend`]).

use std::collections::BTreeSet;

use super::surface::{owner, retire, schema_of, surface, Item, ENVELOPE};
use super::{Availability, Fact, History, ReleaseEntry};
use crate::ir::*;

impl History {
    /// Adds the next release: `prev` is the IR of [`History::newest`], `next` that of
    /// `version`, a newer release.
    pub fn extend(&mut self, prev: &Ir, next: &Ir, version: &str) {
        let newest = self.newest().to_owned();
        let before = surface(prev);
        let after = surface(next);
        for (key, item) in &after.items {
            match before.items.get(key) {
                None => {
                    let entry = &mut self.items.entry(key.clone()).or_insert_with(|| Fact::since(version)).availability;
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
                        let mut entry = entry.unwrap_or_else(|| Fact {
                            availability: Availability {
                                always_since: was_required.then(|| self.floor.clone()),
                                ..Availability::since(&self.floor)
                            },
                            widened_until: None,
                        });
                        let always = &mut entry.availability.always_since;
                        *always = match (b.required, was_required) {
                            (false, _) => None,
                            (true, true) => always.take().or_else(|| Some(self.floor.clone())),
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
            let entry = &mut self.items.entry(key.clone()).or_insert_with(|| Fact::since(&self.floor)).availability;
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
                self.types.entry(key.clone()).or_insert_with(|| Fact::since(version)).availability.until = None;
                self.retired_types.remove(key);
            }
        }
        for (key, def) in &before.types {
            if !after.types.contains_key(key) {
                self.types.entry(key.clone()).or_insert_with(|| Fact::since(&self.floor)).availability.until =
                    Some(newest.clone());
                self.retired_types.insert(key.clone(), (*def).clone());
            }
        }
        // Members, values and arms of a retired type are kept with it, not on their own.
        let whole = &self.retired_types;
        self.retired.retain(|_, r| r.owner().is_none_or(|o| !whole.contains_key(o)));
        self.releases.push(ReleaseEntry { version: version.to_owned(), skipped: None });
        self.sort_releases();
        self.compact();
    }

    /// Drops the items that are plain (in every release of the range, always present since the
    /// floor where required): the committed form does not list them.
    fn compact(&mut self) {
        let floor = self.floor.clone();
        let plain = |a: &Availability| {
            a.since == floor && a.until.is_none() && a.always_since.as_ref().is_none_or(|r| *r == floor)
        };
        self.items.retain(|_, f| !plain(&f.availability) || f.widened_until.is_some());
        self.types.retain(|_, f| !plain(&f.availability));
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
