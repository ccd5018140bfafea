//! Who uses each type in one version: whether the client sends or receives it, and which
//! methods carry it.

use std::collections::{BTreeMap, BTreeSet};

use super::report::Usage;
use codex_app_codegen::ir::*;
use codex_app_codegen::naming;
use codex_app_codegen::settings::Settings;

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(super) struct Roles {
    pub(super) sends: bool,
    pub(super) receives: bool,
}

impl Roles {
    pub(super) const SENDS: Roles = Roles { sends: true, receives: false };
    pub(super) const RECEIVES: Roles = Roles { sends: false, receives: true };

    pub(super) fn union(self, other: Roles) -> Roles {
        Roles { sends: self.sends || other.sends, receives: self.receives || other.receives }
    }
}

/// One version: the IR plus which types are definitions and who uses them.
pub(super) struct VersionIndex<'a> {
    pub(super) ir: &'a Ir,
    /// Types that are schema definitions (as opposed to inline schemas the generator named).
    pub(super) defs: BTreeSet<&'a str>,
    pub(super) roles: BTreeMap<String, Roles>,
    /// Type -> the methods whose params or response reach it.
    pub(super) users: BTreeMap<String, BTreeSet<(Direction, String)>>,
    /// Schema names more than one type has (codex 0.60.1 to 0.100.0 kept v1 definitions of a
    /// v2 definition's name at the top level): they do not tell the types apart.
    pub(super) shared_schema_names: BTreeSet<&'a str>,
}

impl<'a> VersionIndex<'a> {
    pub(super) fn new(ir: &'a Ir, settings: &Settings) -> Self {
        let defs = ir.types.values().filter(|t| is_definition(t, settings)).map(|t| t.name.as_str()).collect();
        let mut seen = BTreeSet::new();
        let shared_schema_names = ir.types.values().map(|t| t.schema.as_str()).filter(|s| !seen.insert(*s)).collect();
        let mut side = VersionIndex { ir, defs, roles: BTreeMap::new(), users: BTreeMap::new(), shared_schema_names };
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

    pub(super) fn mark(&mut self, ty: &Ty, role: Roles, user: Option<&(Direction, String)>) {
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

    pub(super) fn is_def(&self, name: &str) -> bool {
        self.defs.contains(name)
    }

    pub(super) fn ty(&self, name: &str) -> &'a TypeDef {
        &self.ir.types[name]
    }
}

/// A schema definition: its pointer is `#/definitions/X` or `#/definitions/v2/X` and its name
/// comes from `X` (an inline type named after a definition's position, such as the union a
/// nullable definition wraps, shares the pointer but not the name).
pub(super) fn is_definition(t: &TypeDef, settings: &Settings) -> bool {
    let Some(rest) = t.pointer.strip_prefix("#/definitions/") else { return false };
    let rest = rest.strip_prefix("v2/").unwrap_or(rest);
    !rest.contains('/') && naming::is_named_after(settings, &t.name, rest)
}

/// Every named type `ty` reaches, including through other named types.
pub(super) fn reachable(ir: &Ir, ty: &Ty, seen: &mut BTreeSet<String>) {
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
        Ty::Vec(t) | Ty::Map(t) | Ty::Option(t) | Ty::Boxed(t) => reachable(ir, t, seen),
        Ty::Tuple(items) => items.iter().for_each(|t| reachable(ir, t, seen)),
        _ => {}
    }
}

/// The types a kind refers to directly.
pub(super) fn members(kind: &TypeKind) -> Vec<Ty> {
    match kind {
        TypeKind::Alias(t) => vec![t.clone()],
        TypeKind::Struct(s) => s.fields.iter().map(|f| f.ty.clone()).chain(s.extra.clone()).collect(),
        TypeKind::StringEnum(_) => Vec::new(),
        TypeKind::Tagged(t) => t.arms.iter().map(|a| Ty::Named(a.payload.clone())).collect(),
        TypeKind::External(e) => e.arms.iter().filter_map(|a| a.payload.clone()).collect(),
        TypeKind::Untagged(u) => u.arms.iter().map(|a| a.ty.clone()).collect(),
    }
}

pub(super) fn usage(old: &VersionIndex, new: &VersionIndex, name: &str) -> Usage {
    let roles =
        old.roles.get(name).copied().unwrap_or_default().union(new.roles.get(name).copied().unwrap_or_default());
    let methods: BTreeSet<String> =
        [&old.users, &new.users].into_iter().filter_map(|u| u.get(name)).flatten().map(|(_, m)| m.clone()).collect();
    Usage { sends: roles.sends, receives: roles.receives, methods: methods.into_iter().collect() }
}
