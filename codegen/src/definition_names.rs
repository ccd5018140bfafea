//! The names of a bundle's definitions: the Rust name each gets ([`assign`]) before anything
//! inline is named, and what the schema calls each type of the IR ([`name_by_schema`]).

use std::collections::{BTreeMap, BTreeSet};

use crate::ir::*;
use crate::naming;
use crate::schema::{Bundle, Schema};
use crate::settings::Settings;
use crate::Warning;

/// The Rust name of every definition, by pointer. Every definition gets its name first, so
/// inline types can never take one.
///
/// The same name in two namespaces is one type when both schemas have the same shape. When
/// they differ (codex 0.60.1 to 0.100.0 kept v1 types of the same name at the top level),
/// the namespaced definition keeps the name and the top-level one is prefixed `V1`. Any
/// other clash is an error.
pub(crate) fn assign(bundle: &Bundle, settings: &Settings, warnings: &mut Vec<Warning>) -> BTreeMap<String, String> {
    let mut groups: BTreeMap<String, Vec<&crate::schema::Definition>> = BTreeMap::new();
    for def in bundle.definitions.values() {
        groups.entry(naming::pascal(&def.name)).or_default().push(def);
    }
    // `same_shape` compares a `$ref` by the name it ends in; two same-named definitions are
    // one type only if what their references name is one type too (v1 `RateLimitSnapshot`
    // of codex 0.60.1 has v2's members but refers to the snake_case v1 `CreditsSnapshot`).
    let mut same: BTreeSet<&str> = groups
        .iter()
        .filter(|(_, defs)| {
            defs[1..].iter().all(|d| match (&defs[0].schema, &d.schema) {
                (Schema::Object(a), Schema::Object(b)) => a.same_shape(b),
                (a, b) => a == b,
            })
        })
        .map(|(name, _)| name.as_str())
        .collect();
    loop {
        let split: Vec<&str> = same
            .iter()
            .copied()
            .filter(|name| {
                let mut refs = BTreeSet::new();
                reference_names(&groups[*name][0].schema, &mut refs);
                refs.iter().any(|r| {
                    groups.get(&naming::pascal(r)).is_some_and(|g| g.len() > 1)
                        && !same.contains(naming::pascal(r).as_str())
                })
            })
            .collect();
        if split.is_empty() {
            break;
        }
        for name in split {
            same.remove(name);
        }
    }
    // Rust name by pointer, and pointer by Rust name.
    let mut names = BTreeMap::new();
    let mut assigned: BTreeMap<String, String> = BTreeMap::new();
    // Plain names first, so a renamed definition can never take the name of another.
    let mut wanted: Vec<(String, &crate::schema::Definition, bool, bool)> = Vec::new();
    for (name, defs) in &groups {
        let all_same = same.contains(name.as_str());
        let v1_pair =
            !all_same && defs.len() == 2 && defs.iter().filter(|d| d.pointer.matches('/').count() == 2).count() == 1;
        for def in defs {
            let v1 = v1_pair && def.pointer.matches('/').count() == 2;
            let rust = if v1 { naming::v1_type_name(settings, name) } else { naming::type_name(settings, name) };
            wanted.push((rust, def, all_same, v1));
        }
    }
    let taken: BTreeSet<String> = wanted.iter().map(|(r, ..)| r.clone()).collect();
    for (rust, def, all_same, v1) in wanted {
        let mut name = rust.clone();
        if assigned.get(&name).is_some_and(|p| !all_same && *p != def.pointer) {
            // Two definitions with different schemas whose names differ only in case or
            // separators (`fooBar`, `FooBar`): the later one (by pointer) is numbered.
            name = (2..)
                .map(|n| naming::numbered(&rust, n))
                .find(|n| !taken.contains(n) && !assigned.contains_key(n))
                .expect("numbers never run out");
            warnings.push(Warning::new(
                &def.pointer,
                format!(
                    "`{}` and `{}` would both be named `{rust}`; this one is named `{name}`",
                    def.name, assigned[&rust]
                ),
            ));
        }
        if name != naming::pascal(&def.name) && !v1 && name == rust {
            warnings.push(Warning::new(
                &def.pointer,
                format!("`{}` would shadow a name the generated code uses; named `{name}`", def.name),
            ));
        }
        assigned.insert(name.clone(), def.pointer.clone());
        names.insert(def.pointer.clone(), name);
    }
    names
}

/// The last segment of every `$ref` inside `schema` (the definition names it refers to).
fn reference_names(schema: &Schema, out: &mut BTreeSet<String>) {
    let Schema::Object(o) = schema else { return };
    if let Some(r) = &o.reference {
        out.insert(r.rsplit('/').next().unwrap_or(r).to_owned());
    }
    let lists = [&o.one_of, &o.any_of, &o.all_of];
    let nested = o.properties.values().chain(o.additional_properties.as_ref()).chain(o.items.as_ref());
    for s in nested.chain(lists.into_iter().flatten().flatten()) {
        reference_names(s, out);
    }
}

/// What the schema calls each type ([`crate::schema_name`]): by its pointer, and the object
/// of a tagged union's arm by the union and the arm's tag (`LoginAccountParams::chatgpt`),
/// which its pointer does not always say (a union of one arm shares its pointer with it).
pub(crate) fn name_by_schema(
    bundle: &Bundle,
    definitions: &BTreeMap<String, String>,
    types: &mut BTreeMap<String, TypeDef>,
) {
    for def in types.values_mut() {
        def.schema = crate::schema_name::of_pointer(bundle, &def.pointer);
    }
    let defined: BTreeSet<&str> = definitions.values().map(String::as_str).collect();
    let mut arms = Vec::new();
    for def in types.values() {
        if let TypeKind::Tagged(t) = &def.kind {
            for arm in t.arms.iter().filter(|a| !defined.contains(a.payload.as_str())) {
                arms.push((arm.payload.clone(), format!("{}::{}", def.schema, arm.wire)));
            }
        }
    }
    for (payload, schema) in arms {
        if let Some(def) = types.get_mut(&payload) {
            def.schema = schema;
        }
    }
}
