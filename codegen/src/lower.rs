//! Schema -> IR for one bundle. The only module that sees both the schema model and the IR.
//!
//! Where each construct becomes what:
//! - `$ref` -> [`Ty::Named`]; `allOf [X]` -> `X` (the wrapper only carries a description/default).
//! - `type: [T, "null"]`, `anyOf/oneOf [X, {"type": "null"}]` -> `X`, marked nullable.
//! - `{"type": "object", "properties": ..}` -> [`TypeKind::Struct`] (named by title or parent+field);
//!   `additionalProperties: true` next to properties -> a kept map of extra members;
//!   `properties` + `anyOf` of property groups -> the groups' members as optional fields.
//! - `{"type": "object"}` without properties -> [`Ty::Map`] of `additionalProperties` (or any).
//! - string `enum`, or `oneOf` of string enums -> [`TypeKind::StringEnum`].
//! - `oneOf` of objects sharing a required one-value string property -> [`TypeKind::Tagged`];
//!   sibling `properties` of the `oneOf` become members of every arm.
//! - `oneOf` of strings and single-key objects -> [`TypeKind::External`].
//! - any other `anyOf`/`oneOf` -> [`TypeKind::Untagged`].
//! - `true`, `{}` -> [`Ty::Any`]; integer formats -> [`IntKind`]; `number` -> `f64`.
//! - `ClientRequest`, `ServerRequest`, `ServerNotification`, `ClientNotification` -> [`Method`]s.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value;

use crate::ir::*;
use crate::naming;
use crate::schema::{Bundle, InstanceType, Schema, SchemaObject};
use crate::Error;

/// How deep [`Lowerer::arm_match`] looks into the members of an untagged union's arms:
/// members of members of members.
const MEMBER_DEPTH: usize = 9;

/// The name of the catch-all variant every open enum gets.
pub const CATCH_ALL: &str = "Unrecognized";

/// Definitions that describe the JSON-RPC envelope. The envelope is written by hand in the
/// protocol crate (it must keep ids and unknown methods exactly), so these are not emitted.
fn is_envelope_definition(name: &str) -> bool {
    name.starts_with("JSONRPC")
}

/// Lowers one bundle. The result has no experimental marks; see [`crate::merge`].
pub fn lower(bundle: &Bundle) -> Result<Ir, Error> {
    let mut cx = Lowerer { bundle, names: BTreeMap::new(), types: BTreeMap::new() };
    cx.assign_definition_names()?;
    let direction_unions: BTreeSet<&str> = Direction::ALL.iter().map(|d| d.union_name()).collect();
    // Namespaced (current API) definitions first, so their inline types get the plain names
    // when a same-named top-level (v1) definition competes for them.
    let mut defs: Vec<_> = bundle.definitions.values().collect();
    defs.sort_by_key(|d| (d.pointer.matches('/').count() == 2, d.pointer.clone()));
    for def in defs {
        if direction_unions.contains(def.name.as_str()) || is_envelope_definition(&def.name) {
            continue;
        }
        let name = cx.names[&def.pointer].clone();
        if cx.types.contains_key(&name) {
            continue; // an identical definition in another namespace, already lowered
        }
        let doc = schema_doc(&def.schema);
        let kind = match &def.schema {
            Schema::Bool(true) => TypeKind::Alias(Ty::Any),
            Schema::Bool(false) => return Err(Error::new(&def.pointer, "a `false` schema cannot be a type")),
            Schema::Object(o) => cx.lower_kind(&name, o)?,
        };
        cx.types.insert(name.clone(), TypeDef { name, pointer: def.pointer.clone(), doc, experimental: false, kind });
    }
    let mut ir = Ir {
        types: BTreeMap::new(),
        client_requests: Vec::new(),
        server_requests: Vec::new(),
        server_notifications: Vec::new(),
        client_notifications: Vec::new(),
        notification_envelope: Vec::new(),
        has_experimental: false,
    };
    for direction in Direction::ALL {
        let (methods, envelope) = cx.lower_methods(direction)?;
        *ir.methods_mut(direction) = methods;
        if direction == Direction::ServerNotification {
            ir.notification_envelope = envelope;
        } else if !envelope.is_empty() {
            return Err(Error::new(
                format!("#/definitions/{}/properties", direction.union_name()),
                "envelope members next to the method union are only supported on ServerNotification",
            ));
        }
    }
    ir.types = cx.types;
    Ok(ir)
}

struct Lowerer<'b> {
    bundle: &'b Bundle,
    /// `$ref` string -> Rust type name.
    names: BTreeMap<String, String>,
    types: BTreeMap<String, TypeDef>,
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

/// A union arm with its `$ref` resolved.
struct Arm<'a> {
    schema: &'a Schema,
    object: Option<&'a SchemaObject>,
    /// Rust name of the referenced definition, for `$ref` arms.
    ref_name: Option<String>,
}

impl<'b> Lowerer<'b> {
    /// Every definition gets its name first, so inline types can never take one.
    ///
    /// The same name in two namespaces is one type when both schemas have the same shape. When
    /// they differ (codex 0.60.1 to 0.100.0 kept v1 types of the same name at the top level),
    /// the namespaced definition keeps the name and the top-level one is prefixed `V1`. Any
    /// other clash is an error.
    fn assign_definition_names(&mut self) -> Result<(), Error> {
        let mut groups: BTreeMap<String, Vec<&crate::schema::Definition>> = BTreeMap::new();
        for def in self.bundle.definitions.values() {
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
                    refs.iter().any(|r| groups.get(&naming::pascal(r)).is_some_and(|g| g.len() > 1) && !same.contains(naming::pascal(r).as_str()))
                })
                .collect();
            if split.is_empty() {
                break;
            }
            for name in split {
                same.remove(name);
            }
        }
        let mut assigned: BTreeMap<String, String> = BTreeMap::new(); // rust name -> pointer
        for (name, defs) in &groups {
            let all_same = same.contains(name.as_str());
            for def in defs {
                let top_level = def.pointer.matches('/').count() == 2;
                let rust = if all_same || !top_level || defs.len() != 2 { name.clone() } else { format!("V1{name}") };
                if let Some(other) = assigned.get(&rust).filter(|p| !all_same && **p != def.pointer) {
                    return Err(Error::new(
                        &def.pointer,
                        format!("name collision: `{other}` also becomes `{rust}`, with a different schema"),
                    ));
                }
                assigned.insert(rust.clone(), def.pointer.clone());
                self.names.insert(def.pointer.clone(), rust);
            }
        }
        Ok(())
    }

    fn name_of(&self, reference: &str, from: &str) -> Result<String, Error> {
        let def = self.bundle.resolve(reference, from)?;
        if is_envelope_definition(&def.name) {
            return Err(Error::new(from, format!("reference to the envelope definition `{reference}`")));
        }
        Ok(self.names[&def.pointer].clone())
    }

    /// The type of a value position, and whether it may be `null`.
    fn ty_of(&mut self, schema: &Schema, hint: &str) -> Result<(Ty, bool), Error> {
        let o = match schema {
            Schema::Bool(true) => return Ok((Ty::Any, false)),
            Schema::Bool(false) => return Err(Error::new("", format!("a `false` schema for `{hint}`"))),
            Schema::Object(o) => o,
        };
        if let Some(r) = &o.reference {
            return Ok((Ty::Named(self.name_of(r, &o.pointer)?), false));
        }
        if let Some(all) = &o.all_of {
            if all.len() != 1 || !o.properties.is_empty() || o.one_of.is_some() || o.any_of.is_some() {
                return Err(Error::new(&o.pointer, "`allOf` is only supported as a wrapper around one schema"));
            }
            return self.ty_of(&all[0], hint);
        }
        if let Some(arms) = o.one_of.as_ref().or(o.any_of.as_ref()) {
            if o.properties.is_empty() {
                let non_null: Vec<&Schema> = arms.iter().filter(|a| !is_null_schema(a)).collect();
                let had_null = non_null.len() != arms.len();
                if non_null.is_empty() {
                    return Ok((Ty::Unit, true));
                }
                if non_null.len() == 1 {
                    let (ty, nullable) = self.ty_of(non_null[0], hint)?;
                    return Ok((ty, nullable || had_null));
                }
                if had_null {
                    // `anyOf [A, B, null]`: name the union of the non-null arms.
                    let inner = SchemaObject {
                        pointer: o.pointer.clone(),
                        title: o.title.clone(),
                        description: o.description.clone(),
                        one_of: Some(non_null.into_iter().cloned().collect()),
                        ..SchemaObject::default()
                    };
                    return Ok((Ty::Named(self.intern(&inner, hint)?), true));
                }
            }
            return Ok((Ty::Named(self.intern(o, hint)?), false));
        }
        let nullable = o.allows_null_type() || o.enum_values.as_ref().is_some_and(|v| v.contains(&Value::Null));
        if o.enum_values.is_some() {
            return Ok((Ty::Named(self.intern(o, hint)?), nullable));
        }
        let types: Vec<InstanceType> =
            o.types.iter().flatten().copied().filter(|t| *t != InstanceType::Null).collect();
        let ty = match types.as_slice() {
            [] if o.is_null() => return Ok((Ty::Unit, true)),
            [] if !o.properties.is_empty() => Ty::Named(self.intern(o, hint)?),
            [] => Ty::Any,
            [InstanceType::String] => Ty::String,
            [InstanceType::Boolean] => Ty::Bool,
            [InstanceType::Number] => Ty::Float,
            [InstanceType::Integer] => Ty::Int(int_kind(o)?),
            [InstanceType::Array] => match &o.items {
                None => Ty::Vec(Box::new(Ty::Any)),
                Some(items) => {
                    let (item, item_null) = self.ty_of(items, &format!("{hint}Item"))?;
                    Ty::Vec(Box::new(if item_null { Ty::Option(Box::new(item)) } else { item }))
                }
            },
            [InstanceType::Object] if o.properties.is_empty() => self.map_of(o, hint)?,
            [InstanceType::Object] => Ty::Named(self.intern(o, hint)?),
            _ => Ty::Named(self.intern(o, hint)?), // several JSON types: an untagged union
        };
        Ok((ty, nullable))
    }

    /// `{"type": "object"}` without properties: a map of `additionalProperties`.
    fn map_of(&mut self, o: &SchemaObject, hint: &str) -> Result<Ty, Error> {
        let value = match &o.additional_properties {
            None | Some(Schema::Bool(_)) => Ty::Any,
            Some(schema) => {
                let (ty, nullable) = self.ty_of(schema, &format!("{hint}Value"))?;
                if nullable { Ty::Option(Box::new(ty)) } else { ty }
            }
        };
        Ok(Ty::Map(Box::new(value)))
    }

    /// Lowers an inline schema into a named type and returns the name. The name is the
    /// schema's title, else `hint`; a name taken by a different type falls back to `hint`,
    /// then to `hint` with a number. An identical type under the same name is reused.
    fn intern(&mut self, o: &SchemaObject, hint: &str) -> Result<String, Error> {
        let mut candidates = Vec::new();
        if let Some(title) = &o.title {
            candidates.push(naming::pascal(title));
        }
        candidates.push(hint.to_owned());
        let kind = self.lower_kind(candidates.last().expect("hint"), o)?;
        let doc = o.description.clone();
        let reserved = |s: &Self, n: &str| s.names.values().any(|d| d == n);
        for name in &candidates {
            match self.types.get(name) {
                Some(existing) if existing.kind == kind && existing.doc == doc => return Ok(name.clone()),
                Some(_) => continue,
                None if reserved(self, name) => continue,
                None => {
                    let def = TypeDef { name: name.clone(), pointer: o.pointer.clone(), doc, experimental: false, kind };
                    self.types.insert(name.clone(), def);
                    return Ok(name.clone());
                }
            }
        }
        let mut n = 2;
        loop {
            let name = format!("{hint}{n}");
            if !self.types.contains_key(&name) && !reserved(self, &name) {
                let def = TypeDef { name: name.clone(), pointer: o.pointer.clone(), doc, experimental: false, kind };
                self.types.insert(name.clone(), def);
                return Ok(name);
            }
            n += 1;
        }
    }

    /// The kind of a named type (a definition or an interned inline schema).
    fn lower_kind(&mut self, name: &str, o: &SchemaObject) -> Result<TypeKind, Error> {
        if let Some(r) = &o.reference {
            return Ok(TypeKind::Alias(Ty::Named(self.name_of(r, &o.pointer)?)));
        }
        if let Some(arms) = o.one_of.as_ref().or(o.any_of.as_ref()) {
            if o.properties.is_empty() && arms.iter().any(is_null_schema) {
                // A named nullable wrapper (`NullableFoo = anyOf [Foo, null]`).
                let (ty, _) = self.ty_of(&Schema::Object(Box::new(o.clone())), &format!("{name}Value"))?;
                return Ok(TypeKind::Alias(Ty::Option(Box::new(ty))));
            }
            if o.any_of.is_some() && !o.properties.is_empty() && arms.iter().all(is_property_group) {
                return Ok(TypeKind::Struct(self.lower_struct(name, o, None, None)?));
            }
            return self.lower_union(name, o, arms);
        }
        if let Some(values) = &o.enum_values {
            return Ok(TypeKind::StringEnum(StringEnum { values: name_values(string_enum(o, values, None)?.values, &o.pointer)? }));
        }
        if o.all_of.is_some() {
            let (ty, nullable) = self.ty_of(&Schema::Object(Box::new(o.clone())), name)?;
            return Ok(TypeKind::Alias(if nullable { Ty::Option(Box::new(ty)) } else { ty }));
        }
        let is_object = o.types.as_deref().is_some_and(|t| t.contains(&InstanceType::Object));
        let types_len = o.types.as_ref().map_or(0, |t| t.iter().filter(|t| **t != InstanceType::Null).count());
        if types_len > 1 {
            return self.lower_multi_type(name, o);
        }
        // Inline `{"type": "object"}` without properties never gets here (it is a map), so this is
        // a definition: with no members it is an empty struct, e.g. an empty response `{}`.
        let empty_object = is_object && o.additional_properties.is_none() && !o.allows_null_type();
        if !o.properties.is_empty() || empty_object {
            return Ok(TypeKind::Struct(self.lower_struct(name, o, None, None)?));
        }
        let (ty, nullable) = self.ty_of(&Schema::Object(Box::new(o.clone())), name)?;
        Ok(TypeKind::Alias(if nullable { Ty::Option(Box::new(ty)) } else { ty }))
    }

    /// `type: ["string", "object"]` and the like: an untagged union with one arm per JSON type.
    fn lower_multi_type(&mut self, name: &str, o: &SchemaObject) -> Result<TypeKind, Error> {
        let mut arms = Vec::new();
        for t in o.types.iter().flatten().filter(|t| **t != InstanceType::Null) {
            let single = SchemaObject { pointer: o.pointer.clone(), types: Some(vec![*t]), ..o.clone() };
            let rust = naming::pascal(t.as_str());
            let single = Schema::Object(Box::new(single));
            let (ty, _) = self.ty_of(&single, &format!("{name}{rust}"))?;
            let accepts = self.arm_match(&single, 0);
            arms.push(UntaggedArm { rust, ty, accepts, doc: None, experimental: false });
        }
        Ok(TypeKind::Untagged(Untagged { arms }))
    }

    fn lower_struct(
        &mut self,
        name: &str,
        o: &SchemaObject,
        skip: Option<&str>,
        siblings: Option<&SchemaObject>,
    ) -> Result<Struct, Error> {
        let mut fields = Vec::new();
        let mut push = |cx: &mut Self, owner: &SchemaObject, optional_only: bool| -> Result<(), Error> {
            for (wire, schema) in &owner.properties {
                if Some(wire.as_str()) == skip {
                    continue;
                }
                let hint = format!("{name}{}", naming::pascal(wire));
                let (ty, nullable) = cx.ty_of(schema, &hint).map_err(|e| at(e, schema, &owner.pointer, wire))?;
                let required = !optional_only && owner.required.contains(wire);
                let doc = field_doc(schema);
                fields.push(Field {
                    wire: wire.clone(),
                    rust: naming::field(wire),
                    ty,
                    required,
                    nullable,
                    // Decided after merging, from vendor-schemas/decisions.json.
                    null_meaningful: false,
                    doc,
                    experimental: false,
                });
            }
            Ok(())
        };
        push(self, o, false)?;
        if let Some(groups) = &o.any_of {
            // `properties` + `anyOf` of property groups: at least one group is present.
            for group in groups {
                if let Some(g) = group.as_object() {
                    push(self, g, true)?;
                }
            }
        }
        if let Some(s) = siblings {
            push(self, s, false)?;
        }
        // Members that appear in several groups are one field.
        let mut seen = BTreeSet::new();
        fields.retain(|f| seen.insert(f.wire.clone()));
        let mut rust: Vec<String> = fields.iter().map(|f| f.rust.clone()).collect();
        if !naming::dedupe(&mut rust).is_empty() {
            return Err(Error::new(&o.pointer, format!("two members of `{name}` map to the same Rust field name")));
        }
        let extra = match &o.additional_properties {
            Some(Schema::Bool(true)) if !o.properties.is_empty() => Some(Ty::Any),
            Some(Schema::Object(_)) if !o.properties.is_empty() => {
                let (ty, _) = self.ty_of(o.additional_properties.as_ref().expect("matched"), &format!("{name}Extra"))?;
                Some(ty)
            }
            _ => None,
        };
        Ok(Struct { fields, extra })
    }

    fn resolve_arm<'a>(&self, schema: &'a Schema) -> Result<Arm<'a>, Error>
    where
        'b: 'a,
    {
        match schema {
            Schema::Object(o) => match &o.reference {
                Some(r) => {
                    let def = self.bundle.resolve(r, &o.pointer)?;
                    Ok(Arm { schema, object: def.schema.as_object(), ref_name: Some(self.name_of(r, &o.pointer)?) })
                }
                None => Ok(Arm { schema, object: Some(o), ref_name: None }),
            },
            Schema::Bool(_) => Ok(Arm { schema, object: None, ref_name: None }),
        }
    }

    fn lower_union(&mut self, name: &str, o: &SchemaObject, arms: &[Schema]) -> Result<TypeKind, Error> {
        let resolved: Vec<Arm> = arms.iter().map(|a| self.resolve_arm(a)).collect::<Result<_, _>>()?;
        if resolved.iter().any(|a| is_null_schema(a.schema)) {
            return Err(Error::new(&o.pointer, "a nullable union cannot be a named type"));
        }
        // 1. Only string enums: one enum.
        if resolved.iter().all(|a| a.object.is_some_and(is_string_enum)) {
            let mut values = Vec::new();
            for arm in &resolved {
                let a = arm.object.expect("checked");
                let single_doc = (a.enum_values.as_ref().map_or(0, Vec::len) == 1).then(|| a.description.clone()).flatten();
                values.extend(string_enum(a, a.enum_values.as_ref().expect("checked"), single_doc)?.values);
            }
            return Ok(TypeKind::StringEnum(StringEnum { values: name_values(values, &o.pointer)? }));
        }
        // 2. Objects told apart by a tag member.
        if let Some(tag) = find_tag(&resolved, o) {
            return self.lower_tagged(name, o, &resolved, &tag);
        }
        // 3. Strings and single-key objects (serde's externally tagged enums).
        if resolved.iter().all(|a| a.object.is_some_and(|x| is_string_enum(x) || is_single_key(x) || is_open_arm(x))) {
            return self.lower_external(name, &resolved, o);
        }
        if !o.properties.is_empty() {
            return Err(Error::new(&o.pointer, "union with sibling `properties` that is neither tagged nor property groups"));
        }
        // 4. Anything else: tried in order.
        self.lower_untagged(name, &resolved)
    }

    fn lower_tagged(&mut self, name: &str, o: &SchemaObject, arms: &[Arm], tag: &str) -> Result<TypeKind, Error> {
        let siblings = (!o.properties.is_empty()).then_some(o);
        let tag_of = |arm: &Arm| one_string(&arm.object.expect("tagged arms are objects").properties[tag]).expect("find_tag checked");
        let variants = naming::variants(&arms.iter().map(tag_of).collect::<Vec<_>>());
        if variants.iter().any(|n| n == CATCH_ALL) {
            return Err(Error::new(&o.pointer, format!("a tag value of `{name}` is named like the catch-all `{CATCH_ALL}`")));
        }
        let mut out = Vec::new();
        for (arm, variant) in arms.iter().zip(variants) {
            if arm.ref_name.is_some() {
                return Err(Error::new(
                    arm.schema.as_object().map(|x| x.pointer.clone()).unwrap_or_default(),
                    "a tagged union arm that is a `$ref` is not supported (the tag would be part of a shared type)",
                ));
            }
            let a = arm.object.expect("tagged arms are objects");
            let wire = tag_of(arm);
            let fallback = format!("{variant}{name}");
            let struct_def = self.lower_struct(&fallback, a, Some(tag), siblings)?;
            let payload = self.intern_struct(a, &fallback, struct_def)?;
            out.push(TaggedArm { wire, rust: variant, payload, doc: a.description.clone(), experimental: false });
        }
        Ok(TypeKind::Tagged(Tagged { tag: tag.to_owned(), arms: out }))
    }

    /// Inserts an already lowered struct under its title, else `fallback`.
    fn intern_struct(&mut self, a: &SchemaObject, fallback: &str, s: Struct) -> Result<String, Error> {
        let kind = TypeKind::Struct(s);
        let mut candidates: Vec<String> = a.title.iter().map(|t| naming::pascal(t)).collect();
        candidates.push(fallback.to_owned());
        let numbered = (2..).map(|n| format!("{fallback}{n}"));
        for name in candidates.into_iter().chain(numbered) {
            let taken = self.types.contains_key(&name) || self.names.values().any(|d| *d == name);
            if !taken {
                let def = TypeDef { name: name.clone(), pointer: a.pointer.clone(), doc: None, experimental: false, kind };
                self.types.insert(name.clone(), def);
                return Ok(name);
            }
        }
        unreachable!("the numbered names never run out")
    }

    fn lower_external(&mut self, name: &str, arms: &[Arm], o: &SchemaObject) -> Result<TypeKind, Error> {
        let mut out = Vec::new();
        for arm in arms {
            let a = arm.object.expect("checked");
            if is_string_enum(a) {
                let single_doc =
                    (a.enum_values.as_ref().map_or(0, Vec::len) == 1).then(|| a.description.clone()).flatten();
                for v in string_enum(a, a.enum_values.as_ref().expect("checked"), single_doc)?.values {
                    out.push(ExternalArm { wire: v.wire, rust: v.rust, payload: None, doc: v.doc, experimental: false });
                }
            } else if is_single_key(a) {
                let (key, schema) = a.properties.iter().next().expect("single key");
                let rust = naming::pascal(key);
                let hint = a.title.as_deref().map(naming::pascal).unwrap_or_else(|| format!("{rust}{name}"));
                let (ty, nullable) = self.ty_of(schema, &hint)?;
                let ty = if nullable { Ty::Option(Box::new(ty)) } else { ty };
                let doc = a.description.clone().or_else(|| field_doc(schema));
                out.push(ExternalArm { wire: key.clone(), rust, payload: Some(ty), doc, experimental: false });
            }
            // An open arm (`{"type": ["string", "object"]}`) is what the catch-all variant is for.
        }
        let names = naming::variants(&out.iter().map(|a| a.wire.as_str()).collect::<Vec<_>>());
        if names.iter().any(|n| n == CATCH_ALL) {
            return Err(Error::new(&o.pointer, format!("an arm of `{name}` is named like the catch-all `{CATCH_ALL}`")));
        }
        for (arm, rust) in out.iter_mut().zip(names) {
            arm.rust = rust;
        }
        Ok(TypeKind::External(External { arms: out }))
    }

    fn lower_untagged(&mut self, name: &str, arms: &[Arm]) -> Result<TypeKind, Error> {
        let mut names: Vec<String> = arms.iter().map(|a| untagged_arm_name(a, name)).collect();
        strip_common_affixes(&mut names);
        naming::dedupe(&mut names);
        let mut out = Vec::new();
        for (arm, rust) in arms.iter().zip(names) {
            let (ty, nullable) = self.ty_of(arm.schema, &format!("{rust}{name}"))?;
            let ty = if nullable { Ty::Option(Box::new(ty)) } else { ty };
            let doc = arm.object.and_then(|a| if arm.ref_name.is_some() { None } else { a.description.clone() });
            let accepts = self.arm_match(arm.schema, 0);
            out.push(UntaggedArm { rust, ty, accepts, doc, experimental: false });
        }
        Ok(TypeKind::Untagged(Untagged { arms: out }))
    }

    /// What JSON `s` accepts, as far as an untagged union needs to tell its arms apart: JSON
    /// types, required members, string-enum and const members, `additionalProperties: false`.
    /// Deeper constraints are left to the arm's decoder.
    fn arm_match(&self, s: &Schema, depth: usize) -> ArmMatch {
        let Schema::Object(o) = s else { return ArmMatch::Any };
        if depth > MEMBER_DEPTH + 16 {
            return ArmMatch::Any; // a recursive schema: accept, the arm's decoder decides
        }
        if let Some(r) = &o.reference {
            return match self.bundle.resolve(r, &o.pointer) {
                Ok(def) => self.arm_match(&def.schema, depth + 1),
                Err(_) => ArmMatch::Any,
            };
        }
        if let Some([only]) = o.all_of.as_deref() {
            return self.arm_match(only, depth + 1);
        }
        if let Some(arms) = o.one_of.as_ref().or(o.any_of.as_ref()) {
            if !(o.any_of.is_some() && !o.properties.is_empty() && arms.iter().all(is_property_group)) {
                // A union: any of its arms (a tagged union's arms carry their tag values).
                return ArmMatch::AnyOf(arms.iter().map(|a| self.arm_match(a, depth + 1)).collect());
            }
        }
        let nullable = o.allows_null_type() || o.enum_values.as_ref().is_some_and(|v| v.contains(&Value::Null));
        let with_null = |m: ArmMatch| if nullable { ArmMatch::AnyOf(vec![m, ArmMatch::Types(vec![JsonType::Null])]) } else { m };
        if let Some(values) = &o.enum_values {
            let strings: Vec<String> = values.iter().filter_map(|v| v.as_str().map(str::to_owned)).collect();
            if strings.len() + usize::from(nullable) == values.len() {
                return with_null(ArmMatch::Strings(strings));
            }
            return ArmMatch::Any;
        }
        let types: Vec<InstanceType> = o.types.iter().flatten().copied().filter(|t| *t != InstanceType::Null).collect();
        if types.is_empty() && o.properties.is_empty() {
            return if o.is_null() { ArmMatch::Types(vec![JsonType::Null]) } else { ArmMatch::Any };
        }
        let object = || {
            // Members are looked into down to a few levels of objects, enough to tell apart
            // arms that differ only inside a member (titled and untitled multi-selects).
            let members = if depth < MEMBER_DEPTH {
                o.properties
                    .iter()
                    .map(|(name, p)| (name.clone(), self.arm_match(p, depth + MEMBER_DEPTH / 3)))
                    .filter(|(_, m)| *m != ArmMatch::Any)
                    .collect()
            } else {
                Vec::new()
            };
            let closed = matches!(o.additional_properties, Some(Schema::Bool(false))).then(|| o.properties.keys().cloned().collect());
            ArmMatch::Object(ObjectMatch { required: o.required.clone(), members, closed })
        };
        let mut alternatives: Vec<ArmMatch> = Vec::new();
        let mut plain = Vec::new();
        if types.is_empty() {
            alternatives.push(object());
        }
        for t in &types {
            match t {
                InstanceType::Object if !o.properties.is_empty() || matches!(o.additional_properties, Some(Schema::Bool(false))) => {
                    alternatives.push(object())
                }
                InstanceType::Object => plain.push(JsonType::Object),
                InstanceType::Array => plain.push(JsonType::Array),
                InstanceType::String => plain.push(JsonType::String),
                InstanceType::Integer => plain.push(JsonType::Integer),
                InstanceType::Number => plain.push(JsonType::Number),
                InstanceType::Boolean => plain.push(JsonType::Boolean),
                InstanceType::Null => {}
            }
        }
        if nullable {
            plain.push(JsonType::Null);
        }
        if !plain.is_empty() {
            alternatives.push(ArmMatch::Types(plain));
        }
        match alternatives.len() {
            1 => alternatives.pop().expect("one"),
            _ => ArmMatch::AnyOf(alternatives),
        }
    }

    /// The methods of one direction, and the union's sibling properties (envelope members).
    fn lower_methods(&mut self, direction: Direction) -> Result<(Vec<Method>, Vec<Field>), Error> {
        let pointer = format!("#/definitions/{}", direction.union_name());
        let Some(def) = self.bundle.definitions.get(&pointer) else {
            return Ok((Vec::new(), Vec::new()));
        };
        let o = def.schema.as_object().ok_or_else(|| Error::new(&pointer, "expected an object schema"))?;
        let arms = o.one_of.as_ref().ok_or_else(|| Error::new(&pointer, "expected a `oneOf` of methods"))?;
        let mut methods = Vec::new();
        for arm in arms {
            let a = arm.as_object().ok_or_else(|| Error::new(&pointer, "expected object arms"))?;
            let wire = a
                .properties
                .get("method")
                .and_then(one_string)
                .ok_or_else(|| Error::new(&a.pointer, "arm without a one-value `method` enum"))?;
            if direction.is_request() && !a.properties.contains_key("id") {
                return Err(Error::new(&a.pointer, "request arm without `id`"));
            }
            let rust = naming::pascal(&wire);
            let params = match a.properties.get("params") {
                None => Params::None,
                Some(p) if is_null_schema(p) => Params::Null,
                Some(p) => {
                    let (ty, nullable) = self.ty_of(p, &format!("{rust}Params"))?;
                    if nullable || !a.required.iter().any(|r| r == "params") {
                        Params::Optional(ty)
                    } else {
                        Params::Required(ty)
                    }
                }
            };
            methods.push(Method { wire, rust, params, response: None, doc: a.description.clone(), experimental: false });
        }
        let mut names: Vec<String> = methods.iter().map(|m| m.rust.clone()).collect();
        if !naming::dedupe(&mut names).is_empty() {
            return Err(Error::new(&pointer, "two methods map to the same Rust name"));
        }
        let envelope = if o.properties.is_empty() {
            Vec::new()
        } else {
            self.lower_struct(direction.union_name(), o, None, None)?.fields
        };
        Ok((methods, envelope))
    }
}

/// Re-anchors an error without a pointer at the property it came from.
fn at(mut e: Error, schema: &Schema, owner: &str, wire: &str) -> Error {
    if e.pointer.is_empty() {
        e.pointer = schema
            .as_object()
            .map(|o| o.pointer.clone())
            .unwrap_or_else(|| format!("{owner}/properties/{}", crate::schema::escape_pointer(wire)));
    }
    e
}

fn is_null_schema(s: &Schema) -> bool {
    s.as_object().is_some_and(SchemaObject::is_null)
}

fn is_string_enum(o: &SchemaObject) -> bool {
    o.properties.is_empty()
        && o.one_of.is_none()
        && o.any_of.is_none()
        && o.enum_values.as_ref().is_some_and(|v| v.iter().all(Value::is_string))
}

fn is_single_key(o: &SchemaObject) -> bool {
    o.properties.len() == 1 && o.required.len() == 1 && o.properties.contains_key(&o.required[0])
}

/// `{"type": ["string", "object"]}` with nothing else: "anything of these kinds".
fn is_open_arm(o: &SchemaObject) -> bool {
    o.properties.is_empty()
        && o.enum_values.is_none()
        && o.reference.is_none()
        && o.one_of.is_none()
        && o.any_of.is_none()
        && o.types.as_ref().is_some_and(|t| t.iter().all(|t| matches!(t, InstanceType::String | InstanceType::Object)))
}

/// An `anyOf` arm that only lists properties (a group of members that may be present).
fn is_property_group(s: &Schema) -> bool {
    s.as_object().is_some_and(|o| {
        !o.properties.is_empty() && o.reference.is_none() && o.one_of.is_none() && o.any_of.is_none() && o.enum_values.is_none()
    })
}

/// The single string of a one-value `enum`.
fn one_string(s: &Schema) -> Option<String> {
    match s.as_object()?.enum_values.as_deref()? {
        [Value::String(v)] => Some(v.clone()),
        _ => None,
    }
}

/// The tag member of a union of objects: present and required in every arm, a one-value
/// string enum, distinct across arms. `type` and `method` are preferred when several fit.
fn find_tag(arms: &[Arm], union: &SchemaObject) -> Option<String> {
    let objects: Vec<&SchemaObject> = arms.iter().map(|a| a.object).collect::<Option<_>>()?;
    if objects.is_empty() || objects.iter().any(|o| o.properties.is_empty()) {
        return None;
    }
    let mut candidates: Vec<&String> = objects[0]
        .properties
        .keys()
        .filter(|k| !union.properties.contains_key(*k))
        .filter(|k| {
            let values: Option<BTreeSet<String>> = objects
                .iter()
                .map(|o| if o.required.contains(k) { o.properties.get(*k).and_then(one_string) } else { None })
                .collect();
            values.is_some_and(|v| v.len() == objects.len())
        })
        .collect();
    candidates.sort_by_key(|k| (k.as_str() != "type", k.as_str() != "method", k.to_string()));
    candidates.first().map(|k| k.to_string())
}

fn string_enum(o: &SchemaObject, values: &[Value], single_doc: Option<String>) -> Result<StringEnum, Error> {
    let mut out = Vec::new();
    for v in values {
        match v {
            Value::String(s) => {
                out.push(EnumValue { wire: s.clone(), rust: String::new(), doc: single_doc.clone(), experimental: false })
            }
            Value::Null => {} // nullability is carried by the field
            other => return Err(Error::new(&o.pointer, format!("non-string enum value {other}"))),
        }
    }
    Ok(StringEnum { values: out })
}

/// Names the values of an enum (all at once, so clashes are resolved the same way each time).
fn name_values(mut values: Vec<EnumValue>, pointer: &str) -> Result<Vec<EnumValue>, Error> {
    let names = naming::variants(&values.iter().map(|v| v.wire.as_str()).collect::<Vec<_>>());
    if names.iter().any(|n| n == CATCH_ALL) {
        return Err(Error::new(pointer, format!("an enum value is named like the catch-all `{CATCH_ALL}`")));
    }
    for (v, name) in values.iter_mut().zip(names) {
        v.rust = name;
    }
    Ok(values)
}

fn untagged_arm_name(arm: &Arm, union: &str) -> String {
    if let Some(r) = &arm.ref_name {
        return r.clone();
    }
    let Some(o) = arm.object else { return "Any".to_owned() };
    if let Some(title) = &o.title {
        let t = naming::pascal(title);
        let stripped = t.strip_suffix(union).or_else(|| t.strip_prefix(union)).unwrap_or(&t);
        if !stripped.is_empty() {
            return stripped.to_owned();
        }
    }
    if !o.properties.is_empty() {
        let key = o.required.first().or_else(|| o.properties.keys().next()).expect("non-empty");
        return naming::pascal(key);
    }
    match o.types.as_deref() {
        Some([t]) => naming::pascal(t.as_str()),
        _ => "Value".to_owned(),
    }
}

/// `[McpElicitationStringSchema, McpElicitationNumberSchema]` -> `[String, Number]` when every
/// name keeps at least one word.
fn strip_common_affixes(names: &mut [String]) {
    if names.len() < 2 {
        return;
    }
    let words: Vec<Vec<String>> = names.iter().map(|n| split_words(n)).collect();
    let prefix = (0..)
        .take_while(|&i| words.iter().all(|w| w.len() > i && w[i] == words[0][i]))
        .count();
    let suffix = (0..)
        .take_while(|&i| words.iter().all(|w| w.len() > i && w[w.len() - 1 - i] == words[0][words[0].len() - 1 - i]))
        .count();
    if words.iter().all(|w| w.len() > prefix + suffix) {
        for (name, w) in names.iter_mut().zip(&words) {
            *name = w[prefix..w.len() - suffix].concat();
        }
    }
}

fn split_words(name: &str) -> Vec<String> {
    let mut words: Vec<String> = Vec::new();
    for c in name.chars() {
        if c.is_ascii_uppercase() || words.is_empty() {
            words.push(String::new());
        }
        words.last_mut().expect("pushed").push(c);
    }
    words
}

fn int_kind(o: &SchemaObject) -> Result<IntKind, Error> {
    Ok(match o.format.as_deref() {
        None | Some("int64") => IntKind::I64,
        Some("int32") => IntKind::I32,
        Some("uint8") => IntKind::U8,
        Some("uint16") => IntKind::U16,
        Some("uint32") => IntKind::U32,
        Some("uint64" | "uint") => IntKind::U64,
        Some(other) => return Err(Error::new(&o.pointer, format!("unsupported integer format `{other}`"))),
    })
}

fn schema_doc(s: &Schema) -> Option<String> {
    s.as_object().and_then(|o| o.description.clone())
}

/// A property's doc: its description, plus the server-side default when one is given.
fn field_doc(s: &Schema) -> Option<String> {
    let o = s.as_object()?;
    let mut doc = o.description.clone();
    if let Some(default) = o.default.as_ref().filter(|d| !d.is_null()) {
        let line = format!("Default: `{default}`.");
        doc = Some(match doc {
            Some(d) => format!("{d}\n\n{line}"),
            None => line,
        });
    }
    doc
}
