//! The comparison itself: methods, the notification envelope, definitions, and the contents of
//! each type, recursively, filing every change with its verdict.

use std::collections::{BTreeMap, BTreeSet};

use super::matching::pair_up;
use super::path::{Part, Path};
use super::report::*;
use super::rules::*;
use super::usage::{Roles, VersionIndex};
use super::written::*;
use codex_app_codegen::ir::*;

/// The context of a comparison: where its changes are filed, the roles of the type being
/// compared, and whether the item is experimental in each version.
#[derive(Debug, Clone)]
pub(super) struct Scope {
    pub(super) filed_under: FiledUnder,
    pub(super) roles: Roles,
    pub(super) old_experimental: bool,
    pub(super) new_experimental: bool,
}

impl Scope {
    pub(super) fn with_experimental(&self, old: bool, new: bool) -> Scope {
        Scope {
            old_experimental: self.old_experimental || old,
            new_experimental: self.new_experimental || new,
            ..self.clone()
        }
    }
}

/// Which version decides whether a change is experimental.
#[derive(Clone, Copy)]
pub(super) enum ExperimentalIn {
    /// Something added: experimental if it is in the new version.
    NewVersion,
    /// Something removed: experimental if it was in the old version.
    OldVersion,
    /// Something changed in place: experimental if it is (or was) experimental.
    EitherVersion,
    /// A move between stable and experimental: about the stable surface, never experimental.
    Neither,
}

pub(super) struct Comparison<'a> {
    pub(super) old: VersionIndex<'a>,
    pub(super) new: VersionIndex<'a>,
    /// Definitions removed in old -> the added definition of the same shape in new.
    pub(super) renamed: BTreeMap<String, String>,
    /// Pairs of (old, new) inline types already compared.
    pub(super) visited: BTreeSet<(String, String)>,
    pub(super) changes: Vec<Change>,
}

impl Comparison<'_> {
    pub(super) fn run(&mut self) {
        self.methods();
        self.envelope();
        self.definitions();
    }

    pub(super) fn push(&mut self, scope: &Scope, path: &Path, kind: Kind, experimental_in: ExperimentalIn, rule: Rule) {
        let experimental = match experimental_in {
            ExperimentalIn::NewVersion => scope.new_experimental,
            ExperimentalIn::OldVersion => scope.old_experimental,
            ExperimentalIn::EitherVersion => scope.old_experimental || scope.new_experimental,
            ExperimentalIn::Neither => false,
        };
        let effect =
            |applies: bool, (breaking, why): (bool, &str)| applies.then(|| Effect { breaking, why: why.to_owned() });
        let sends = effect(scope.roles.sends, rule.sends);
        let receives = effect(scope.roles.receives, rule.receives);
        let breaking = sends.iter().chain(&receives).any(|e| e.breaking);
        let severity = if breaking {
            Severity::Breaking
        } else if rule.rust_api || matches!(kind, Kind::Renamed { .. } | Kind::TypeRemoved) {
            Severity::RustApi
        } else {
            Severity::Compatible
        };
        self.changes.push(Change {
            filed_under: scope.filed_under.clone(),
            path: path.clone(),
            kind,
            experimental,
            severity,
            sends,
            receives,
        });
    }

    pub(super) fn filed_under_of(&self, name: &str) -> FiledUnder {
        let users: BTreeSet<&(Direction, String)> =
            [&self.old.users, &self.new.users].into_iter().filter_map(|u| u.get(name)).flatten().collect();
        let experimental =
            self.new.ir.types.get(name).or_else(|| self.old.ir.types.get(name)).is_some_and(|t| t.experimental);
        match users.len() {
            0 => FiledUnder::Unused { name: name.to_owned(), experimental },
            1 => {
                let (direction, method) = users.into_iter().next().expect("one").clone();
                self.method_filed_under(direction, &method)
            }
            _ => FiledUnder::Shared { name: name.to_owned(), experimental },
        }
    }

    /// The path of the named type `name`, by its schema name in the version that has it (the
    /// new one first). Where that name is not the type's alone (in either version), and in an
    /// IR read from before types had schema names, the Rust name stands in (`V1CodexErrorInfo`
    /// next to the v2 `CodexErrorInfo`).
    pub(super) fn type_path(&self, name: &str) -> Path {
        let def = self.new.ir.types.get(name).or_else(|| self.old.ir.types.get(name));
        let shared = |s: &str| self.old.shared_schema_names.contains(s) || self.new.shared_schema_names.contains(s);
        let schema = def.map(|d| d.schema.as_str()).filter(|s| !s.is_empty() && !shared(s)).unwrap_or(name);
        Path::ty(name, schema)
    }

    pub(super) fn method_filed_under(&self, direction: Direction, wire: &str) -> FiledUnder {
        let find = |ir: &Ir| ir.methods(direction).iter().find(|m| m.wire == wire).map(|m| m.experimental);
        let experimental = find(self.new.ir).or_else(|| find(self.old.ir)).unwrap_or(false);
        FiledUnder::Method { direction, method: wire.to_owned(), experimental }
    }

    pub(super) fn roles_of(&self, old_name: Option<&str>, new_name: Option<&str>) -> Roles {
        let o = old_name.and_then(|n| self.old.roles.get(n)).copied().unwrap_or_default();
        let n = new_name.and_then(|n| self.new.roles.get(n)).copied().unwrap_or_default();
        o.union(n)
    }

    pub(super) fn methods(&mut self) {
        for direction in Direction::ALL {
            let by_client = matches!(direction, Direction::ClientRequest | Direction::ClientNotification);
            let method_roles = if by_client { Roles::SENDS } else { Roles::RECEIVES };
            let (old_ir, new_ir) = (self.old.ir, self.new.ir);
            let olds: BTreeMap<&str, &Method> =
                old_ir.methods(direction).iter().map(|m| (m.wire.as_str(), m)).collect();
            let news: BTreeMap<&str, &Method> =
                new_ir.methods(direction).iter().map(|m| (m.wire.as_str(), m)).collect();
            for (wire, m) in &news {
                let filed_under = self.method_filed_under(direction, wire);
                let Some(o) = olds.get(wire) else {
                    let scope = Scope {
                        filed_under,
                        roles: method_roles,
                        old_experimental: false,
                        new_experimental: m.experimental,
                    };
                    let kind = Kind::MethodAdded {
                        params: m.params.ty().map(rust_ty),
                        response: m.response.as_ref().map(rust_ty),
                    };
                    let rule = match direction {
                        Direction::ServerRequest => REQUEST_ADDED,
                        Direction::ServerNotification => NOTIFICATION_ADDED,
                        _ => METHOD_ADDED,
                    };
                    self.push(&scope, &Path::method(wire, Part::Method), kind, ExperimentalIn::NewVersion, rule);
                    continue;
                };
                let scope = Scope {
                    filed_under,
                    roles: method_roles,
                    old_experimental: o.experimental,
                    new_experimental: m.experimental,
                };
                self.moved(&scope, &Path::method(wire, Part::Method), o.experimental, m.experimental);
                let params_roles = method_roles;
                let response_roles = if by_client { Roles::RECEIVES } else { Roles::SENDS };
                let params_scope = Scope { roles: params_roles, ..scope.clone() };
                let params_path = Path::method(wire, Part::Params);
                let (op, np) = (params_presence(&o.params), params_presence(&m.params));
                if op != np {
                    // Like a member `params`: none -> optional is an added optional field, etc.
                    let rule = match (op, np) {
                        (_, None) => FIELD_REMOVED,
                        (None, Some(Presence::Required)) => FIELD_ADDED_REQUIRED,
                        (None, Some(_)) => FIELD_ADDED_OPTIONAL,
                        (Some(_), Some(Presence::Required)) => BECAME_REQUIRED,
                        (Some(_), Some(_)) => BECAME_OPTIONAL,
                    };
                    let kind = Kind::ParamsChanged { old: params_text(&o.params), new: params_text(&m.params) };
                    self.push(&params_scope, &params_path, kind, ExperimentalIn::EitherVersion, rule);
                }
                if let (Some(a), Some(b)) = (o.params.ty(), m.params.ty()) {
                    self.compare_ty(a, b, &params_path, &params_scope);
                }
                match (&o.response, &m.response) {
                    (Some(a), Some(b)) => {
                        let response_scope = Scope { roles: response_roles, ..scope.clone() };
                        self.compare_ty(a, b, &Path::method(wire, Part::Response), &response_scope);
                    }
                    (None, None) => {}
                    _ => unreachable!("requests have responses, notifications none"),
                }
            }
            for (wire, o) in &olds {
                if !news.contains_key(wire) {
                    let filed_under = self.method_filed_under(direction, wire);
                    let scope = Scope {
                        filed_under,
                        roles: method_roles,
                        old_experimental: o.experimental,
                        new_experimental: false,
                    };
                    let path = Path::method(wire, Part::Method);
                    self.push(&scope, &path, Kind::MethodRemoved, ExperimentalIn::OldVersion, METHOD_REMOVED);
                }
            }
        }
    }

    pub(super) fn moved(&mut self, scope: &Scope, path: &Path, old_experimental: bool, new_experimental: bool) {
        match (old_experimental, new_experimental) {
            (true, false) => self.push(scope, path, Kind::ToStable, ExperimentalIn::Neither, TO_STABLE),
            (false, true) => self.push(scope, path, Kind::ToExperimental, ExperimentalIn::Neither, TO_EXPERIMENTAL),
            _ => {}
        }
    }

    pub(super) fn envelope(&mut self) {
        let scope = Scope {
            filed_under: FiledUnder::Envelope,
            roles: Roles::RECEIVES,
            old_experimental: false,
            new_experimental: false,
        };
        let (a, b) = (self.old.ir.notification_envelope.clone(), self.new.ir.notification_envelope.clone());
        let old = Struct { fields: a, extra: None };
        let new = Struct { fields: b, extra: None };
        self.compare_struct(&old, &new, &Path::envelope(), &scope);
    }

    pub(super) fn definitions(&mut self) {
        let removed: Vec<&str> = self.old.defs.iter().copied().filter(|n| !self.new.is_def(n)).collect();
        let added: Vec<&str> = self.new.defs.iter().copied().filter(|n| !self.old.is_def(n)).collect();
        self.find_renames(&removed, &added);
        for name in added {
            let def = self.new.ty(name);
            let scope = Scope {
                filed_under: self.filed_under_of(name),
                roles: self.roles_of(None, Some(name)),
                old_experimental: false,
                new_experimental: def.experimental,
            };
            if let Some((old, _)) = self.renamed.iter().find(|(_, n)| n.as_str() == name) {
                let kind = Kind::Renamed { old: old.clone(), new: name.to_owned(), alias_of: None };
                let scope = Scope { roles: self.roles_of(Some(old), Some(name)), ..scope };
                self.push(&scope, &self.type_path(name), kind, ExperimentalIn::NewVersion, RENAMED);
            } else {
                self.push(&scope, &self.type_path(name), Kind::TypeAdded, ExperimentalIn::NewVersion, TYPE_ADDED);
            }
        }
        for name in removed {
            if self.renamed.contains_key(name) {
                continue;
            }
            let def = self.old.ty(name);
            let scope = Scope {
                filed_under: self.filed_under_of(name),
                roles: self.roles_of(Some(name), None),
                old_experimental: def.experimental,
                new_experimental: false,
            };
            self.push(&scope, &self.type_path(name), Kind::TypeRemoved, ExperimentalIn::OldVersion, TYPE_REMOVED);
        }
        let common: Vec<&str> = self.old.defs.iter().copied().filter(|n| self.new.is_def(n)).collect();
        for name in common {
            let (o, n) = (self.old.ty(name), self.new.ty(name));
            let scope = Scope {
                filed_under: self.filed_under_of(name),
                roles: self.roles_of(Some(name), Some(name)),
                old_experimental: o.experimental,
                new_experimental: n.experimental,
            };
            let path = self.type_path(name);
            self.moved(&scope, &path, o.experimental, n.experimental);
            self.compare_kinds(o, n, &path, &scope);
        }
    }

    /// Pairs a removed and an added definition of the same (non-trivial) shape when each has
    /// exactly one candidate.
    pub(super) fn find_renames(&mut self, removed: &[&str], added: &[&str]) {
        let mut candidates: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
        let mut reverse: BTreeMap<&str, usize> = BTreeMap::new();
        for &r in removed {
            if is_trivial(&self.old.ty(r).kind) {
                continue;
            }
            for &a in added {
                if share_a_word(r, a) && self.shape_eq(r, a, &mut BTreeSet::new()) {
                    candidates.entry(r).or_default().push(a);
                    *reverse.entry(a).or_default() += 1;
                }
            }
        }
        for (r, adds) in candidates {
            if let [a] = adds.as_slice() {
                if reverse[a] == 1 {
                    self.renamed.insert(r.to_owned(), a.to_string());
                }
            }
        }
    }

    /// Whether old type `a` and new type `b` look the same on the wire (names of definitions
    /// that exist in both versions are identities; everything else is compared structurally).
    pub(super) fn shape_eq(&self, a: &str, b: &str, assumed: &mut BTreeSet<(String, String)>) -> bool {
        if a == b && self.old.is_def(a) && self.new.is_def(b) {
            return true;
        }
        if self.renamed.get(a).is_some_and(|n| n == b) {
            return true;
        }
        if !assumed.insert((a.to_owned(), b.to_owned())) {
            return true;
        }
        let (Some(x), Some(y)) = (self.old.ir.types.get(a), self.new.ir.types.get(b)) else { return false };
        let mut ty_eq = |p: &Ty, q: &Ty| self.ty_eq(p, q, assumed);
        match (&x.kind, &y.kind) {
            (TypeKind::Alias(p), TypeKind::Alias(q)) => ty_eq(p, q),
            (TypeKind::Struct(s), TypeKind::Struct(t)) => {
                s.fields.len() == t.fields.len()
                    && s.fields.iter().all(|f| {
                        t.fields.iter().any(|g| g.wire == f.wire && g.presence() == f.presence() && ty_eq(&f.ty, &g.ty))
                    })
                    && match (&s.extra, &t.extra) {
                        (Some(p), Some(q)) => ty_eq(p, q),
                        (p, q) => p.is_none() && q.is_none(),
                    }
            }
            (TypeKind::StringEnum(s), TypeKind::StringEnum(t)) => {
                wires(s.values.iter().map(|v| &v.wire)) == wires(t.values.iter().map(|v| &v.wire))
            }
            (TypeKind::Tagged(s), TypeKind::Tagged(t)) => {
                s.tag == t.tag
                    && s.arms.len() == t.arms.len()
                    && s.arms.iter().all(|p| {
                        t.arms.iter().any(|q| {
                            q.wire == p.wire && ty_eq(&Ty::Named(p.payload.clone()), &Ty::Named(q.payload.clone()))
                        })
                    })
            }
            (TypeKind::External(s), TypeKind::External(t)) => {
                s.arms.len() == t.arms.len()
                    && s.arms.iter().all(|p| {
                        t.arms.iter().any(|q| {
                            q.wire == p.wire
                                && match (&p.payload, &q.payload) {
                                    (Some(x), Some(y)) => ty_eq(x, y),
                                    (x, y) => x.is_none() && y.is_none(),
                                }
                        })
                    })
            }
            (TypeKind::Untagged(s), TypeKind::Untagged(t)) => {
                s.arms.len() == t.arms.len() && s.arms.iter().zip(&t.arms).all(|(p, q)| ty_eq(&p.ty, &q.ty))
            }
            (TypeKind::Alias(p), _) => ty_eq(p, &Ty::Named(b.to_owned())),
            (_, TypeKind::Alias(q)) => ty_eq(&Ty::Named(a.to_owned()), q),
            _ => false,
        }
    }

    pub(super) fn ty_eq(&self, a: &Ty, b: &Ty, assumed: &mut BTreeSet<(String, String)>) -> bool {
        // A `Box` is how Rust holds a recursive position; the wire does not see it.
        let (a, b) = (a.unboxed(), b.unboxed());
        match (a, b) {
            (Ty::Named(x), Ty::Named(y)) => self.shape_eq(x, y, assumed),
            (Ty::Tuple(x), Ty::Tuple(y)) => {
                x.len() == y.len() && x.iter().zip(y).all(|(x, y)| self.ty_eq(x, y, assumed))
            }
            (Ty::Vec(x), Ty::Vec(y)) | (Ty::Map(x), Ty::Map(y)) | (Ty::Option(x), Ty::Option(y)) => {
                self.ty_eq(x, y, assumed)
            }
            (Ty::Named(x), _) => alias_target(self.old.ir, x).is_some_and(|t| self.ty_eq(&t, b, assumed)),
            (_, Ty::Named(y)) => alias_target(self.new.ir, y).is_some_and(|t| self.ty_eq(a, &t, assumed)),
            _ => a == b,
        }
    }

    /// A type of the same shape under another name at `path`.
    pub(super) fn renamed(&mut self, scope: &Scope, path: &Path, a: &Ty, b: &Ty) {
        let (x, y) = (resolve(self.old.ir, a), resolve(self.new.ir, b));
        let alias_of = (x == y).then(|| rust_ty(&x));
        let kind = Kind::Renamed { old: rust_ty(a), new: rust_ty(b), alias_of };
        self.push(scope, path, kind, ExperimentalIn::EitherVersion, RENAMED);
    }

    pub(super) fn compare_ty(&mut self, a: &Ty, b: &Ty, path: &Path, scope: &Scope) {
        let (a, b) = (a.unboxed(), b.unboxed());
        match (a, b) {
            (Ty::Named(x), Ty::Named(y)) => self.compare_named(x, y, path, scope),
            (Ty::Vec(x), Ty::Vec(y)) => self.compare_ty(x, y, &path.item(), scope),
            (Ty::Map(x), Ty::Map(y)) => self.compare_ty(x, y, &path.map_value(), scope),
            (Ty::Option(x), Ty::Option(y)) => self.compare_ty(x, y, path, scope),
            _ if a == b => {}
            _ if self.ty_eq(a, b, &mut BTreeSet::new()) => self.renamed(scope, path, a, b),
            _ => {
                let kind = Kind::TypeChanged { old: rust_ty(a), new: rust_ty(b) };
                self.push(scope, path, kind, ExperimentalIn::EitherVersion, TYPE_CHANGED);
            }
        }
    }

    /// Compares the named types at one place. Definitions are compared once, on their own; an
    /// inline type is compared here, at the place that uses it.
    pub(super) fn compare_named(&mut self, a: &str, b: &str, path: &Path, scope: &Scope) {
        let (a_def, b_def) = (self.old.is_def(a), self.new.is_def(b));
        if a_def && b_def {
            if a == b || self.renamed.get(a).is_some_and(|n| n == b) {
                return;
            }
            let (x, y) = (Ty::Named(a.to_owned()), Ty::Named(b.to_owned()));
            if self.shape_eq(a, b, &mut BTreeSet::new()) {
                self.renamed(scope, path, &x, &y);
            } else {
                let kind = Kind::TypeChanged { old: a.to_owned(), new: b.to_owned() };
                self.push(scope, path, kind, ExperimentalIn::EitherVersion, TYPE_CHANGED);
            }
            return;
        }
        if !self.visited.insert((a.to_owned(), b.to_owned())) {
            return;
        }
        if a != b {
            self.renamed(scope, path, &Ty::Named(a.to_owned()), &Ty::Named(b.to_owned()));
        }
        let (o, n) = (self.old.ty(a), self.new.ty(b));
        let scope = scope.with_experimental(o.experimental, n.experimental);
        self.compare_kinds(o, n, path, &scope);
    }

    pub(super) fn compare_kinds(&mut self, o: &TypeDef, n: &TypeDef, path: &Path, scope: &Scope) {
        match (&o.kind, &n.kind) {
            (TypeKind::Alias(a), TypeKind::Alias(b)) => self.compare_ty(a, b, path, scope),
            (TypeKind::Struct(a), TypeKind::Struct(b)) => self.compare_struct(a, b, path, scope),
            (TypeKind::StringEnum(_) | TypeKind::External(_), TypeKind::StringEnum(_) | TypeKind::External(_)) => {
                self.compare_external(&as_external(&o.kind), &as_external(&n.kind), path, scope)
            }
            (TypeKind::Tagged(a), TypeKind::Tagged(b)) => self.compare_tagged(a, b, path, scope),
            (TypeKind::Untagged(a), TypeKind::Untagged(b)) => self.compare_untagged(a, b, path, scope),
            (a, b) => {
                let kind = Kind::ShapeChanged { old: kind_name(a).to_owned(), new: kind_name(b).to_owned() };
                self.push(scope, path, kind, ExperimentalIn::EitherVersion, TYPE_CHANGED);
            }
        }
    }

    pub(super) fn compare_struct(&mut self, a: &Struct, b: &Struct, path: &Path, scope: &Scope) {
        let same_type = |d: &Self, f: &Field, g: &Field| {
            f.presence() == g.presence() && d.ty_eq(&f.ty, &g.ty, &mut BTreeSet::new())
        };
        let pairs = pair_up(&a.fields, &b.fields, |f| &f.wire, |f, g| same_type(self, f, g));
        for (f, g) in &pairs.renamed {
            let kind = Kind::FieldRenamed { old: f.wire.clone(), new: g.wire.clone(), ty: field_ty(g) };
            let scope = scope.with_experimental(f.experimental, g.experimental);
            self.push(&scope, &path.member(&f.wire), kind, ExperimentalIn::EitherVersion, FIELD_RENAMED);
        }
        for f in &pairs.removed {
            let kind = Kind::FieldRemoved { ty: field_ty(f), presence: presence_name(f.presence()).to_owned() };
            self.push(
                &scope.with_experimental(f.experimental, false),
                &path.member(&f.wire),
                kind,
                ExperimentalIn::OldVersion,
                FIELD_REMOVED,
            );
        }
        for g in &pairs.added {
            let presence = g.presence();
            let rule = match presence {
                Presence::Required => FIELD_ADDED_REQUIRED,
                Presence::RequiredNullable => FIELD_ADDED_REQUIRED_NULLABLE,
                Presence::Optional | Presence::OptionalNullable => FIELD_ADDED_OPTIONAL,
            };
            let ty = self.described(&g.ty, field_ty(g));
            let kind = Kind::FieldAdded { ty, presence: presence_name(presence).to_owned() };
            self.push(
                &scope.with_experimental(false, g.experimental),
                &path.member(&g.wire),
                kind,
                ExperimentalIn::NewVersion,
                rule,
            );
        }
        for (f, g) in pairs.same.iter().chain(&pairs.renamed) {
            let field_path = path.member(&g.wire);
            let field_scope = scope.with_experimental(f.experimental, g.experimental);
            if scope.old_experimental == scope.new_experimental {
                self.moved(&field_scope, &field_path, f.experimental, g.experimental);
            }
            let (p, q) = (f.presence(), g.presence());
            if p != q {
                let rule = match (p, q) {
                    (_, Presence::Required) => BECAME_REQUIRED,
                    (Presence::Required, Presence::RequiredNullable) => BECAME_NULLABLE,
                    (Presence::Required, _) => BECAME_OPTIONAL,
                    (Presence::Optional, Presence::OptionalNullable)
                    | (Presence::OptionalNullable, Presence::Optional) => NULL_DISTINCTION_CHANGED,
                    _ => PRESENCE_OTHER,
                };
                let kind = Kind::PresenceChanged {
                    old: presence_name(p).to_owned(),
                    new: presence_name(q).to_owned(),
                    old_ty: field_ty(f),
                    new_ty: field_ty(g),
                };
                self.push(&field_scope, &field_path, kind, ExperimentalIn::EitherVersion, rule);
            }
            self.compare_ty(&f.ty, &g.ty, &field_path, &field_scope);
        }
        match (&a.extra, &b.extra) {
            (None, None) => {}
            (Some(x), Some(y)) => self.compare_ty(x, y, &path.extra(), scope),
            (x, y) => {
                let kind = Kind::ExtraChanged { old: x.as_ref().map(rust_ty), new: y.as_ref().map(rust_ty) };
                let rule = if x.is_none() { EXTRA_ADDED } else { TYPE_CHANGED };
                self.push(scope, path, kind, ExperimentalIn::EitherVersion, rule);
            }
        }
    }

    pub(super) fn compare_external(&mut self, a: &External, b: &External, path: &Path, scope: &Scope) {
        fn arms(u: &External) -> Vec<Arm<'_>> {
            u.arms
                .iter()
                .map(|a| Arm { wire: &a.wire, experimental: a.experimental, payload: a.payload.clone() })
                .collect()
        }
        // A value spelled differently with the same payload is a rename.
        self.compare_arms(arms(a), arms(b), path, scope, true);
    }

    pub(super) fn compare_tagged(&mut self, a: &Tagged, b: &Tagged, path: &Path, scope: &Scope) {
        if a.tag != b.tag {
            let kind = Kind::TagChanged { old: a.tag.clone(), new: b.tag.clone() };
            self.push(scope, path, kind, ExperimentalIn::EitherVersion, TYPE_CHANGED);
            return;
        }
        fn arms(u: &Tagged) -> Vec<Arm<'_>> {
            u.arms
                .iter()
                .map(|a| Arm {
                    wire: &a.wire,
                    experimental: a.experimental,
                    payload: Some(Ty::Named(a.payload.clone())),
                })
                .collect()
        }
        // Variants are only paired by spelling: payload shapes say too little.
        self.compare_arms(arms(a), arms(b), path, scope, false);
    }

    /// The arms of a tagged or externally tagged union, paired by their wire name (and, with
    /// `renames`, a removed and an added arm with the same payload as a rename); then each
    /// pair's payloads compared under `path::wire`.
    fn compare_arms(&mut self, a: Vec<Arm<'_>>, b: Vec<Arm<'_>>, path: &Path, scope: &Scope, renames: bool) {
        let same_payload = |d: &Self, p: &Arm<'_>, q: &Arm<'_>| match (&p.payload, &q.payload) {
            (Some(x), Some(y)) => d.ty_eq(x, y, &mut BTreeSet::new()),
            (x, y) => x.is_none() && y.is_none(),
        };
        let pairs = pair_up(&a, &b, |v| v.wire, |p, q| renames && same_payload(self, p, q) && p.payload.is_some());
        for p in &pairs.removed {
            let kind = match p.payload {
                None => Kind::ValueRemoved { value: p.wire.clone() },
                Some(_) => Kind::VariantRemoved { value: p.wire.clone() },
            };
            self.push(
                &scope.with_experimental(p.experimental, false),
                path,
                kind,
                ExperimentalIn::OldVersion,
                VALUE_REMOVED,
            );
        }
        for q in &pairs.added {
            let kind = match &q.payload {
                None => Kind::ValueAdded { value: q.wire.clone() },
                Some(t) => Kind::VariantAdded { value: q.wire.clone(), payload: self.described(t, rust_ty(t)) },
            };
            self.push(
                &scope.with_experimental(false, q.experimental),
                path,
                kind,
                ExperimentalIn::NewVersion,
                VALUE_ADDED,
            );
        }
        for (p, q) in &pairs.renamed {
            let kind = Kind::ValueRenamed { old: p.wire.clone(), new: q.wire.clone() };
            self.push(
                &scope.with_experimental(p.experimental, q.experimental),
                path,
                kind,
                ExperimentalIn::EitherVersion,
                VALUE_RENAMED,
            );
        }
        for (p, q) in pairs.same.iter().chain(&pairs.renamed) {
            let arm_scope = scope.with_experimental(p.experimental, q.experimental);
            let arm_path = path.arm(q.wire);
            if scope.old_experimental == scope.new_experimental {
                self.moved(&arm_scope, &arm_path, p.experimental, q.experimental);
            }
            match (&p.payload, &q.payload) {
                (Some(x), Some(y)) => self.compare_ty(x, y, &arm_path, &arm_scope),
                (None, None) => {}
                (x, y) => {
                    let show = |t: &Option<Ty>| t.as_ref().map_or_else(|| "no payload".to_owned(), rust_ty);
                    let kind = Kind::TypeChanged { old: show(x), new: show(y) };
                    self.push(&arm_scope, &arm_path, kind, ExperimentalIn::EitherVersion, TYPE_CHANGED);
                }
            }
        }
    }

    pub(super) fn compare_untagged(&mut self, a: &Untagged, b: &Untagged, path: &Path, scope: &Scope) {
        for p in &a.arms {
            let Some(q) = b.arms.iter().find(|q| q.rust == p.rust) else {
                self.push(
                    &scope.with_experimental(p.experimental, false),
                    path,
                    Kind::VariantRemoved { value: p.rust.clone() },
                    ExperimentalIn::OldVersion,
                    VALUE_REMOVED,
                );
                continue;
            };
            let arm_scope = scope.with_experimental(p.experimental, q.experimental);
            let arm_path = path.arm(&p.rust);
            if scope.old_experimental == scope.new_experimental {
                self.moved(&arm_scope, &arm_path, p.experimental, q.experimental);
            }
            self.compare_ty(&p.ty, &q.ty, &arm_path, &arm_scope);
        }
        for q in b.arms.iter().filter(|q| !a.arms.iter().any(|p| p.rust == q.rust)) {
            let kind = Kind::VariantAdded { value: q.rust.clone(), payload: self.described(&q.ty, rust_ty(&q.ty)) };
            self.push(
                &scope.with_experimental(false, q.experimental),
                path,
                kind,
                ExperimentalIn::NewVersion,
                UNTAGGED_ARM_ADDED,
            );
        }
    }

    /// `shown`, followed by a summary of the inline type it names, if any (inline types have
    /// generated names that say little: `FooMode` is `"a" | "b"`).
    pub(super) fn described(&self, ty: &Ty, shown: String) -> String {
        let mut inner = ty;
        while let Ty::Vec(t) | Ty::Map(t) | Ty::Option(t) = inner {
            inner = t;
        }
        match inner {
            Ty::Named(n) if !self.new.is_def(n) => match self.new.ir.types.get(n) {
                Some(def) => format!("{shown} = {}", summary(&def.kind)),
                None => shown,
            },
            _ => shown,
        }
    }
}

/// The target of a type alias.
pub(super) fn alias_target(ir: &Ir, name: &str) -> Option<Ty> {
    match &ir.types.get(name)?.kind {
        TypeKind::Alias(t) => Some(t.clone()),
        _ => None,
    }
}

/// `ty` with aliases followed.
pub(super) fn resolve(ir: &Ir, ty: &Ty) -> Ty {
    let mut ty = ty.clone();
    for _ in 0..16 {
        match &ty {
            Ty::Named(n) => match alias_target(ir, n) {
                Some(t) => ty = t,
                None => break,
            },
            _ => break,
        }
    }
    ty
}

/// Whether two type names have a word in common (`CallToolResult`, `McpServerToolCallResponse`),
/// not counting the words every params or response type has.
pub(super) fn share_a_word(a: &str, b: &str) -> bool {
    pub(super) fn words(s: &str) -> BTreeSet<String> {
        let mut out = BTreeSet::new();
        let mut word = String::new();
        for c in s.chars() {
            if c.is_ascii_uppercase() && !word.is_empty() {
                out.insert(std::mem::take(&mut word));
            }
            word.push(c);
        }
        out.insert(word);
        for generic in ["Params", "Response", "Notification", "Request", "V1", "V2", "Item"] {
            out.remove(generic);
        }
        out
    }
    !words(a).is_disjoint(&words(b))
}

/// Types with nothing in them (an empty response struct) are never paired as renames.
pub(super) fn is_trivial(kind: &TypeKind) -> bool {
    match kind {
        TypeKind::Struct(s) => s.fields.is_empty(),
        TypeKind::Alias(t) => !matches!(t, Ty::Named(_)),
        _ => false,
    }
}

pub(super) fn wires<'a>(it: impl Iterator<Item = &'a String>) -> BTreeSet<&'a String> {
    it.collect()
}

/// A string enum is an external union with only unit arms.
pub(super) fn as_external(kind: &TypeKind) -> External {
    match kind {
        TypeKind::External(e) => e.clone(),
        TypeKind::StringEnum(e) => External {
            arms: e
                .values
                .iter()
                .map(|v| ExternalArm {
                    wire: v.wire.clone(),
                    rust: v.rust.clone(),
                    payload: None,
                    doc: None,
                    experimental: v.experimental,
                })
                .collect(),
        },
        _ => unreachable!("only called for enums"),
    }
}

/// An arm of a tagged or externally tagged union, as [`Comparison::compare_arms`] sees it:
/// its wire name and its payload (`None`: a plain string value).
struct Arm<'a> {
    wire: &'a String,
    experimental: bool,
    payload: Option<Ty>,
}
