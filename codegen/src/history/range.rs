//! The IR of the range ([`History::apply`]): the newest release's IR with what the range had
//! and it lacks, relaxed and widened where older releases differ. See the module docs of
//! [`super`].

use std::collections::{BTreeMap, BTreeSet};

use super::surface::{schema_of, surface, Item, ENVELOPE};
use super::{version_cmp, Availability, Fact, History, Key, Retired};
use crate::ir::*;
use crate::{Error, Warning};

impl History {
    /// The IR of the range: see the module docs. `floor` (a release of the history) moves the
    /// range's start up; what only releases before it had is left out.
    pub fn apply(&self, ir: &mut Ir, floor: Option<&str>) -> Result<(), Error> {
        let floor = floor.unwrap_or(&self.floor).to_owned();
        if !self.releases.iter().any(|r| r.version == floor) {
            return Err(Error::new(
                "",
                format!("the floor {floor} is not a release of the history ({} to {})", self.floor, self.newest()),
            ));
        }
        let range = Range { history: self, floor: &floor };
        let mut warnings = Vec::new();
        range.restore(ir, &mut warnings);
        unresolved_to_any(ir, &mut warnings);
        let availability = range.relax_and_widen(ir, &mut warnings);
        prune_unreachable(ir, &self.retired_types);
        range.record(ir, availability);
        ir.warnings.extend(warnings);
        ir.warnings.sort();
        ir.warnings.dedup();
        Ok(())
    }
}

/// A history seen from a floor: what [`History::apply`] reads at each step.
struct Range<'a> {
    history: &'a History,
    floor: &'a str,
}

impl Range<'_> {
    /// Whether a release from the floor on has it.
    fn has(&self, a: &Availability) -> bool {
        a.until.as_deref().is_none_or(|u| version_cmp(u, self.floor).is_ge())
    }

    /// `a` with a `since` before the floor moved up to it.
    fn clamped(&self, mut a: Availability) -> Availability {
        if version_cmp(&a.since, self.floor).is_lt() {
            a.since = self.floor.to_owned();
        }
        a
    }

    /// `v` when it is a release after the floor.
    fn after<'v>(&self, v: &'v Option<String>) -> Option<&'v str> {
        v.as_deref().filter(|v| version_cmp(v, self.floor).is_gt())
    }

    /// What the newest release lacks and a release of the range had comes back: whole types
    /// first, so that their members, values and arms find them.
    fn restore(&self, ir: &mut Ir, warnings: &mut Vec<Warning>) {
        for (key, def) in &self.history.retired_types {
            if self.has(&self.history.type_availability(key)) {
                ir.types.entry(def.name.clone()).or_insert_with(|| def.clone());
            }
        }
        for (key, r) in &self.history.retired {
            if self.has(&self.history.availability(key)) {
                restore(ir, r, warnings);
            }
        }
    }

    /// Relaxes the members some release of the range left out and widens those whose older
    /// values the newest type does not accept; returns the availability of every item of the
    /// range that is not plain (in every release from the floor, always sent where required).
    fn relax_and_widen(&self, ir: &mut Ir, warnings: &mut Vec<Warning>) -> BTreeMap<Key, Availability> {
        let received = received_types(ir);
        let mut availability = BTreeMap::new();
        // Each item by key, with a member's owner (Rust name) and wire name.
        let entries: Vec<(Key, Option<(String, String)>)> = surface(ir)
            .items
            .into_iter()
            .map(|(key, item)| {
                let member = match item {
                    Item::Field(o, f) => Some((o.to_owned(), f.wire.clone())),
                    _ => None,
                };
                (key, member)
            })
            .collect();
        for (key, member) in entries {
            let field_owner = member.as_ref().map(|(o, _)| o.as_str());
            let Fact { availability: a, widened_until } = self.history.fact(&key);
            if !self.has(&a) {
                continue;
            }
            let mut a = self.clamped(a);
            // Always sent since a release after the floor and after its type came: an older
            // release that had the type may leave the member out.
            let owner_since =
                field_owner.filter(|o| *o != ENVELOPE).map(|o| self.history.type_availability(schema_of(ir, o)).since);
            let relax = self
                .after(&a.always_since)
                .filter(|r| owner_since.as_deref().is_none_or(|o| version_cmp(r, o).is_gt()))
                .map(str::to_owned);
            // Only what the client receives must decode whatever an older release sent.
            let widen = widened_until.as_deref().is_some_and(|w| version_cmp(w, self.floor).is_ge())
                && field_owner.is_some_and(|o| o == ENVELOPE || received.contains(o));
            if relax.is_some() || widen {
                let (owner, wire) = member.as_ref().map(|(o, w)| (o.as_str(), w.as_str())).unwrap_or_default();
                let pointer = format!("#/definitions/{}", schema_of(ir, owner));
                if let Some(field) = field_mut(ir, owner, wire) {
                    if relax.is_some() {
                        field.required = false;
                    }
                    if widen && field.ty != Ty::Any {
                        warnings.push(Warning::range(
                            pointer,
                            format!(
                                "member `{key}` had values of another JSON type until codex {} (in the supported range): typed as any JSON value",
                                widened_until.as_deref().unwrap_or_default()
                            ),
                        ));
                        field.ty = Ty::Any;
                    }
                }
            }
            if a.since != self.floor || a.until.is_some() || relax.is_some() {
                a.always_since = relax;
                availability.insert(key, a);
            }
        }
        availability
    }

    /// Records in `ir` the availability of what it kept, and the range's releases.
    fn record(&self, ir: &mut Ir, mut availability: BTreeMap<Key, Availability>) {
        let kept = surface(ir);
        availability.retain(|k, _| kept.items.contains_key(k));
        let kept_types: Vec<String> = kept.types.into_keys().collect();
        ir.availability = availability;
        ir.type_availability = kept_types
            .into_iter()
            .filter_map(|k| {
                let a = self.history.type_availability(&k);
                let a = self.has(&a).then(|| self.clamped(a))?;
                (a.since != self.floor || a.until.is_some()).then_some((k, a))
            })
            .collect();
        ir.floor = Some(self.floor.to_owned());
        ir.releases = self
            .history
            .releases
            .iter()
            .filter(|r| r.skipped.is_none() && version_cmp(&r.version, self.floor).is_ge())
            .map(|r| r.version.clone())
            .collect();
    }
}

/// A restored item may name a type by the Rust name an older release's lowering gave it, which
/// the range's types do not have (the name depended on that release's other definitions: a v1
/// definition named apart from a v2 one of the same schema name, `V1AskForApproval`). Such a
/// type is any JSON value, with a warning; a tagged arm whose payload is such a type is left out.
fn unresolved_to_any(ir: &mut Ir, warnings: &mut Vec<Warning>) {
    fn fix(ty: &mut Ty, known: &BTreeSet<String>, lost: &mut Vec<String>) {
        match ty {
            Ty::Named(name) if !known.contains(name.as_str()) => {
                lost.push(std::mem::take(name));
                *ty = Ty::Any;
            }
            Ty::Vec(t) | Ty::Map(t) | Ty::Option(t) | Ty::Boxed(t) => fix(t, known, lost),
            Ty::Tuple(items) => items.iter_mut().for_each(|t| fix(t, known, lost)),
            _ => {}
        }
    }
    let known: BTreeSet<String> = ir.types.keys().cloned().collect();
    let mut found: Vec<(String, String)> = Vec::new();
    for def in ir.types.values_mut() {
        let mut lost = Vec::new();
        match &mut def.kind {
            TypeKind::Alias(t) => fix(t, &known, &mut lost),
            TypeKind::Struct(s) => s.fields.iter_mut().for_each(|f| fix(&mut f.ty, &known, &mut lost)),
            TypeKind::External(e) => {
                e.arms.iter_mut().filter_map(|a| a.payload.as_mut()).for_each(|t| fix(t, &known, &mut lost))
            }
            TypeKind::Untagged(u) => u.arms.iter_mut().for_each(|a| fix(&mut a.ty, &known, &mut lost)),
            TypeKind::Tagged(t) => t.arms.retain(|a| {
                let keep = known.contains(&a.payload);
                if !keep {
                    lost.push(a.payload.clone());
                }
                keep
            }),
            _ => {}
        }
        found.extend(lost.into_iter().map(|name| (def.schema.clone(), name)));
    }
    for direction in Direction::ALL {
        for method in ir.methods_mut(direction) {
            let mut lost = Vec::new();
            if let Params::Required(t) | Params::Optional(t) = &mut method.params {
                fix(t, &known, &mut lost);
            }
            if let Some(t) = &mut method.response {
                fix(t, &known, &mut lost);
            }
            found.extend(lost.into_iter().map(|name| (method.wire.clone(), name)));
        }
    }
    for (owner, name) in found {
        warnings.push(Warning::range(
            format!("#/definitions/{owner}"),
            format!(
                "`{owner}` had, in an older release of the range, a member, arm or params of a type the range's \
                 types do not have under that name (`{name}`): typed as any JSON value (an arm of it is left out)"
            ),
        ));
    }
}

/// Puts a retired item back into the IR, unless something of its name is there. Its owner is
/// found by schema name.
fn restore(ir: &mut Ir, r: &Retired, warnings: &mut Vec<Warning>) {
    let mismatch = |owner: &str, what: &str| {
        Warning::range(
            format!("#/definitions/{owner}"),
            format!(
                "`{owner}` is of another kind than when it had a {what} the newest release lacks: \
                 its newest kind is kept, and older values decode as that kind decodes them"
            ),
        )
    };
    if let Retired::Method { direction, method } = r {
        let methods = ir.methods_mut(*direction);
        if !methods.iter().any(|m| m.wire == method.wire) {
            methods.push(method.clone());
        }
        return;
    }
    let owner = r.owner().unwrap_or_default();
    if let Retired::Field { field, .. } = r {
        if owner == ENVELOPE {
            if !ir.notification_envelope.iter().any(|f| f.wire == field.wire) {
                let mut field = field.clone();
                field.required = false;
                ir.notification_envelope.push(field);
            }
            return;
        }
    }
    let Some(def) = ir.types.values_mut().find(|d| d.schema == owner) else {
        warnings.push(Warning::range(
            format!("#/definitions/{owner}"),
            format!("`{owner}` is not in the range's types: what an older release had in it is left out"),
        ));
        return;
    };
    match (r, &mut def.kind) {
        (Retired::Field { field, .. }, TypeKind::Struct(s)) => {
            if !s.fields.iter().any(|f| f.wire == field.wire || f.rust == field.rust) {
                let mut field = field.clone();
                field.required = false;
                s.fields.push(field);
                s.fields.sort_by(|a, b| a.wire.cmp(&b.wire));
            }
        }
        (Retired::Value { value, .. }, TypeKind::StringEnum(e)) => {
            if !e.values.iter().any(|v| v.wire == value.wire || v.rust == value.rust) {
                e.values.push(value.clone());
            }
        }
        (Retired::TaggedArm { arm, .. }, TypeKind::Tagged(t)) => {
            if !t.arms.iter().any(|a| a.wire == arm.wire || a.rust == arm.rust) {
                t.arms.push(arm.clone());
            }
        }
        (Retired::ExternalArm { arm, .. }, TypeKind::External(t)) => {
            if !t.arms.iter().any(|a| a.wire == arm.wire || a.rust == arm.rust) {
                t.arms.push(arm.clone());
            }
        }
        (Retired::UntaggedArm { arm, .. }, TypeKind::Untagged(t)) => {
            if !t.arms.iter().any(|a| a.rust == arm.rust) {
                t.arms.push(arm.clone());
            }
        }
        (Retired::Field { .. }, _) => warnings.push(mismatch(owner, "member")),
        (Retired::Value { .. }, _) => warnings.push(mismatch(owner, "value")),
        _ => warnings.push(mismatch(owner, "union arm")),
    }
}

/// The member `wire` of the type whose Rust name is `owner` (or of the envelope).
fn field_mut<'a>(ir: &'a mut Ir, owner: &str, wire: &str) -> Option<&'a mut Field> {
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
fn prune_unreachable(ir: &mut Ir, retired: &BTreeMap<String, TypeDef>) {
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
        if retired.get(&def.schema).is_none_or(|d| d != def) {
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
