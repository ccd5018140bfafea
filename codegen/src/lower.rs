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
//! - `enum`/`const` of integers, numbers or booleans -> that primitive (the values in the doc);
//!   of `null` only -> `()`; of mixed or structured values -> [`Ty::Any`].
//! - `allOf` of several object schemas (refs included) -> one struct of all their members.
//! - `items` as an array (a tuple) of a fixed length -> [`Ty::Tuple`]; of the same item type
//!   -> a `Vec`; otherwise `Vec<Value>`.
//! - a type that contains itself by value -> the recursive positions are [`Ty::Boxed`].
//! - `ClientRequest`, `ServerRequest`, `ServerNotification`, `ClientNotification` -> [`Method`]s.
//!
//! Lowering never fails on a valid schema: a construct without a faithful Rust type becomes
//! [`Ty::Any`] (`serde_json::Value`, which keeps every value as it came), a name that would
//! clash is changed, and each such choice is a [`Warning`] naming the JSON pointer. Errors are
//! left for schemas that are not valid JSON Schema (a `$ref` to nothing, a `type` name that
//! does not exist).

use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value;

use crate::ir::*;
use crate::naming::{self, ArmHint, Inline};
use crate::schema::{Bundle, InstanceType, Schema, SchemaObject};
use crate::settings::Settings;
use crate::{definition_names, recursion};
use crate::{Error, Warning};

/// Lowers one bundle with the policies of `settings`. The result has no experimental marks;
/// see [`crate::merge`].
pub fn lower(bundle: &Bundle, settings: &Settings) -> Result<Ir, Error> {
    let mut cx = Lowerer {
        bundle,
        settings,
        names: BTreeMap::new(),
        types: BTreeMap::new(),
        warnings: bundle.warnings.clone(),
        namespaces: namespaces(bundle),
        all_of_depth: 0,
    };
    cx.names = definition_names::assign(bundle, settings, &mut cx.warnings);
    let direction_unions: BTreeSet<&str> = Direction::ALL.iter().map(|d| d.union_name()).collect();
    // Namespaced (current API) definitions first, so their inline types get the plain names
    // when a same-named top-level (v1) definition competes for them.
    let mut defs: Vec<_> = bundle.definitions.values().collect();
    defs.sort_by_key(|d| (d.pointer.matches('/').count() == 2, d.pointer.clone()));
    for def in defs {
        if settings.is_envelope_definition(&def.name) {
            cx.check_envelope(def);
            continue;
        }
        if direction_unions.contains(def.name.as_str()) {
            continue;
        }
        let name = cx.names[&def.pointer].clone();
        if cx.types.contains_key(&name) {
            continue; // an identical definition in another namespace, already lowered
        }
        let doc = schema_doc(&def.schema);
        let kind = match &def.schema {
            Schema::Bool(true) => TypeKind::Alias(Ty::Any),
            Schema::Bool(false) => TypeKind::Alias(cx.fallback(&def.pointer, "a `false` schema (no value is valid)")),
            Schema::Object(o) => cx.lower_kind(&name, o)?,
        };
        cx.types.insert(name.clone(), TypeDef::new(name, def.pointer.clone(), doc, kind));
    }
    let mut ir = Ir {
        types: BTreeMap::new(),
        client_requests: Vec::new(),
        server_requests: Vec::new(),
        server_notifications: Vec::new(),
        client_notifications: Vec::new(),
        notification_envelope: Vec::new(),
        has_experimental: false,
        floor: None,
        releases: Vec::new(),
        availability: Default::default(),
        type_availability: Default::default(),
        warnings: Vec::new(),
    };
    for direction in Direction::ALL {
        let (methods, envelope) = cx.lower_methods(direction)?;
        *ir.methods_mut(direction) = methods;
        if direction == Direction::ServerNotification {
            ir.notification_envelope = envelope;
        } else if !envelope.is_empty() {
            // The envelope of these directions is written by hand and keeps no extra members.
            cx.warnings.push(Warning::new(
                format!("#/definitions/{}/properties", direction.union_name()),
                "envelope members next to this method union are not kept (only `ServerNotification` has typed envelope members); they decode as unknown envelope members",
            ));
        }
    }
    ensure_request_id(&mut cx.types, &mut cx.warnings);
    recursion::break_alias_cycles(&mut cx.types, &mut cx.warnings);
    recursion::box_recursive_positions(&mut cx.types);
    definition_names::name_by_schema(bundle, &cx.names, &mut cx.types);
    ir.types = cx.types;
    cx.warnings.sort();
    cx.warnings.dedup();
    ir.warnings = cx.warnings;
    Ok(ir)
}

struct Lowerer<'b> {
    bundle: &'b Bundle,
    settings: &'b Settings,
    /// `$ref` string -> Rust type name.
    names: BTreeMap<String, String>,
    types: BTreeMap<String, TypeDef>,
    warnings: Vec<Warning>,
    /// The bundle's namespaces (`v2`), sorted ([`namespaces`]).
    namespaces: Vec<&'b str>,
    /// How many `allOf`s are being merged (a guard against `allOf`s that refer to themselves).
    all_of_depth: usize,
}

/// The namespaces of `bundle`'s definitions (`v2` of `#/definitions/v2/Name`), sorted.
fn namespaces(bundle: &Bundle) -> Vec<&str> {
    let mut out: Vec<&str> = bundle
        .definitions
        .keys()
        .filter_map(|p| p.strip_prefix("#/definitions/")?.split_once('/').map(|(ns, _)| ns))
        .filter(|ns| !ns.is_empty())
        .collect();
    out.sort_unstable();
    out.dedup();
    out
}

/// A union arm with its `$ref` resolved.
struct Arm<'a> {
    schema: &'a Schema,
    object: Option<&'a SchemaObject>,
    /// Rust name of the referenced definition, for `$ref` arms.
    ref_name: Option<String>,
}

impl Arm<'_> {
    /// What the arm's variant of an untagged union is named after ([`naming::untagged_variants`]).
    fn hint(&self) -> ArmHint<'_> {
        if let Some(r) = &self.ref_name {
            return ArmHint::Reference(r);
        }
        let Some(o) = self.object else { return ArmHint::Other };
        ArmHint::Schema {
            title: o.title.as_deref(),
            key: (!o.properties.is_empty())
                .then(|| o.required.first().or_else(|| o.properties.keys().next()))
                .flatten()
                .map(String::as_str),
            json_type: match o.types.as_deref() {
                Some([t]) => Some(t.as_str()),
                _ => None,
            },
        }
    }
}

impl<'b> Lowerer<'b> {
    /// The type of a construct that has no faithful Rust type: any JSON value, which keeps
    /// whatever comes on the wire (`null` included, so it is never made nullable). Records a
    /// warning.
    fn fallback(&mut self, pointer: &str, why: &str) -> Ty {
        self.warnings.push(Warning::new(pointer, format!("{why}: typed as `serde_json::Value`")));
        Ty::Any
    }

    /// The type name a title gives ([`naming::without_namespace`], then [`naming::type_name`]).
    fn title_name(&self, title: &str) -> String {
        naming::type_name(self.settings, &naming::without_namespace(title, &self.namespaces))
    }

    fn name_of(&self, reference: &str, from: &str) -> Result<String, Error> {
        if self.bundle.inner_refs.contains(reference) {
            return Ok(String::new());
        }
        let def = self.bundle.resolve(reference, from)?;
        if self.settings.is_envelope_definition(&def.name) {
            return Err(Error::new(from, format!("reference to the envelope definition `{reference}`")));
        }
        Ok(self.names[&def.pointer].clone())
    }

    /// The type of a value position, and whether it may be `null`.
    fn ty_of(&mut self, schema: &Schema, hint: &str) -> Result<(Ty, bool), Error> {
        let o = match schema {
            Schema::Bool(true) => return Ok((Ty::Any, false)),
            Schema::Bool(false) => {
                return Ok((self.fallback("", &format!("a `false` schema for `{hint}` (no value is valid)")), false))
            }
            Schema::Object(o) => o,
        };
        if !o.opaque.is_empty() {
            let why = format!("`{}` can shape a value in ways no Rust type states", o.opaque.join("`, `"));
            return Ok((self.fallback(&o.pointer, &why), false));
        }
        if let Some(r) = &o.reference {
            if self.bundle.inner_refs.contains(r) {
                return Ok((
                    self.fallback(&o.pointer, &format!("`$ref` to `{r}`, a place that is not a definition")),
                    false,
                ));
            }
            return Ok((Ty::Named(self.name_of(r, &o.pointer)?), false));
        }
        if let Some(all) = &o.all_of {
            if all.len() == 1 && o.properties.is_empty() && o.one_of.is_none() && o.any_of.is_none() {
                return self.ty_of(&all[0], hint);
            }
            return match self.merge_all_of(o) {
                Some(merged) => self.all_of_depth_guard(|cx| cx.ty_of(&Schema::Object(Box::new(merged)), hint)),
                None => Ok((self.fallback(&o.pointer, "`allOf` of schemas that are not all objects"), false)),
            };
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
        if let Some(values) = &o.enum_values {
            if values.iter().all(Value::is_null) {
                return Ok((Ty::Unit, true));
            }
            if !values.iter().all(|v| v.is_string() || v.is_null()) {
                return Ok((self.enum_primitive(o, values), nullable));
            }
            return Ok((Ty::Named(self.intern(o, hint)?), nullable));
        }
        if let Some(items) = &o.tuple_items {
            return Ok((self.tuple_of(o, items, hint)?, nullable));
        }
        let types: Vec<InstanceType> = o.types.iter().flatten().copied().filter(|t| *t != InstanceType::Null).collect();
        let ty = match types.as_slice() {
            [] if o.is_null() => return Ok((Ty::Unit, true)),
            [] if !o.properties.is_empty() => Ty::Named(self.intern(o, hint)?),
            [] => Ty::Any,
            [InstanceType::String] => Ty::String,
            [InstanceType::Boolean] => Ty::Bool,
            [InstanceType::Number] => Ty::Float,
            [InstanceType::Integer] => match int_kind(o) {
                Some(kind) => Ty::Int(kind),
                None => {
                    self.fallback(&o.pointer, &format!("integer format `{}`", o.format.as_deref().unwrap_or_default()))
                }
            },
            [InstanceType::Array] => match &o.items {
                None => Ty::Vec(Box::new(Ty::Any)),
                Some(items) => {
                    let (item, item_null) = self.ty_of(items, &naming::inline(hint, Inline::Item))?;
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
            _ if !o.open_members.is_empty() => Ty::Any,
            None | Some(Schema::Bool(_)) => Ty::Any,
            Some(schema) => {
                let (ty, nullable) = self.ty_of(schema, &naming::inline(hint, Inline::Value))?;
                if nullable {
                    Ty::Option(Box::new(ty))
                } else {
                    ty
                }
            }
        };
        Ok(Ty::Map(Box::new(value)))
    }

    /// The primitive type of an `enum`/`const` whose values are not all strings: integers,
    /// numbers or booleans (the allowed values are in the doc, see [`values_note`]); mixed or
    /// structured values are any JSON value.
    fn enum_primitive(&mut self, o: &SchemaObject, values: &[Value]) -> Ty {
        let values: Vec<&Value> = values.iter().filter(|v| !v.is_null()).collect();
        if values.iter().all(|v| v.is_i64()) {
            return Ty::Int(int_kind(o).filter(|_| o.format.is_some()).unwrap_or(IntKind::I64));
        }
        if values.iter().all(|v| v.is_u64()) {
            return Ty::Int(IntKind::U64);
        }
        if values.iter().all(|v| v.is_number()) {
            return Ty::Float;
        }
        if values.iter().all(|v| v.is_boolean()) {
            return Ty::Bool;
        }
        self.fallback(&o.pointer, "an `enum` of values of several JSON types, or of objects or arrays")
    }

    /// A draft-07 tuple: a Rust tuple when its length is fixed (`minItems` = `maxItems` = the
    /// number of positions, or `additionalItems: false` with every position required), a `Vec`
    /// when every position (and `additionalItems`) has one type, else `Vec<Value>`.
    fn tuple_of(&mut self, o: &SchemaObject, items: &[Schema], hint: &str) -> Result<Ty, Error> {
        let mut tys = Vec::new();
        for (i, item) in items.iter().enumerate() {
            let (ty, nullable) = self.ty_of(item, &naming::inline(hint, Inline::Position(i + 1)))?;
            tys.push(if nullable { Ty::Option(Box::new(ty)) } else { ty });
        }
        let n = items.len() as u64;
        let closed = o.max_items == Some(n) || matches!(o.additional_items, Some(Schema::Bool(false)));
        if closed && o.min_items == Some(n) && (1..=12).contains(&n) {
            return Ok(Ty::Tuple(tys));
        }
        let extra = match &o.additional_items {
            None | Some(Schema::Bool(true)) if !closed => Some(Ty::Any),
            Some(s @ Schema::Object(_)) => {
                let (ty, nullable) = self.ty_of(s, &naming::inline(hint, Inline::Item))?;
                Some(if nullable { Ty::Option(Box::new(ty)) } else { ty })
            }
            _ => None,
        };
        let first = tys.first().cloned().or_else(|| extra.clone());
        match first {
            Some(t) if tys.iter().chain(extra.as_ref()).all(|x| *x == t) => Ok(Ty::Vec(Box::new(t))),
            None => Ok(Ty::Vec(Box::new(Ty::Any))),
            Some(_) => {
                self.warnings.push(Warning::new(
                    &o.pointer,
                    "a tuple whose length is not fixed, with positions of different types: typed as `Vec<serde_json::Value>`",
                ));
                Ok(Ty::Vec(Box::new(Ty::Any)))
            }
        }
    }

    /// Runs `f` one `allOf` level deeper; past a few levels (an `allOf` that refers to itself)
    /// the value is any JSON value.
    fn all_of_depth_guard(
        &mut self,
        f: impl FnOnce(&mut Self) -> Result<(Ty, bool), Error>,
    ) -> Result<(Ty, bool), Error> {
        if self.all_of_depth > 8 {
            return Ok((Ty::Any, false));
        }
        self.all_of_depth += 1;
        let out = f(self);
        self.all_of_depth -= 1;
        out
    }

    /// One object schema from an `allOf` of object schemas (`$ref`s resolved, nested `allOf`s
    /// merged) and the wrapper's own members: every member, every required name, the
    /// narrowest `additionalProperties`. `None` when a part is not a plain object schema (a
    /// union, an enum, another JSON type) or two parts give one member different schemas.
    fn merge_all_of(&self, o: &SchemaObject) -> Option<SchemaObject> {
        fn add(out: &mut SchemaObject, part: &SchemaObject, cx: &Lowerer, depth: usize) -> Option<()> {
            if depth > 8
                || !part.opaque.is_empty()
                || !part.open_members.is_empty()
                || part.one_of.is_some()
                || part.any_of.is_some()
                || part.enum_values.is_some()
                || part.tuple_items.is_some()
            {
                return None;
            }
            if let Some(r) = &part.reference {
                let def = cx.bundle.definitions.get(r)?;
                return add(out, def.schema.as_object()?, cx, depth + 1);
            }
            for sub in part.all_of.iter().flatten() {
                match sub {
                    Schema::Bool(true) => {}
                    Schema::Bool(false) => return None,
                    Schema::Object(s) => add(out, s, cx, depth + 1)?,
                }
            }
            if let Some(types) = &part.types {
                let kept: Vec<InstanceType> = match &out.types {
                    None => types.clone(),
                    Some(have) => have.iter().copied().filter(|t| types.contains(t)).collect(),
                };
                if kept.is_empty() || kept.iter().any(|t| !matches!(t, InstanceType::Object | InstanceType::Null)) {
                    return None;
                }
                out.types = Some(kept);
            }
            for (name, schema) in &part.properties {
                match out.properties.get(name) {
                    Some(have) if have != schema => match (have.as_object(), schema.as_object()) {
                        (Some(a), Some(b)) if a.same_shape(b) => {}
                        _ => return None,
                    },
                    Some(_) => {}
                    None => {
                        out.properties.insert(name.clone(), schema.clone());
                    }
                }
            }
            for r in &part.required {
                if !out.required.contains(r) {
                    out.required.push(r.clone());
                }
            }
            match (&out.additional_properties, &part.additional_properties) {
                (_, None) => {}
                (None, Some(p)) => out.additional_properties = Some(p.clone()),
                (Some(a), Some(b)) if a == b => {}
                (_, Some(Schema::Bool(false))) | (Some(Schema::Bool(false)), _) => {
                    out.additional_properties = Some(Schema::Bool(false))
                }
                _ => return None,
            }
            Some(())
        }
        let mut out = SchemaObject {
            pointer: o.pointer.clone(),
            title: o.title.clone(),
            description: o.description.clone(),
            default: o.default.clone(),
            ..SchemaObject::default()
        };
        let own = SchemaObject { title: None, description: None, default: None, ..o.clone() };
        add(&mut out, &own, self, 0)?;
        if out.types.is_none() {
            out.types = Some(vec![InstanceType::Object]);
        }
        Some(out)
    }

    /// Lowers an inline schema into a named type and returns the name. The name is the
    /// schema's title, else `hint`; a name taken by a different type falls back to `hint`,
    /// then to `hint` with a number. An identical type under the same name is reused.
    fn intern(&mut self, o: &SchemaObject, hint: &str) -> Result<String, Error> {
        let name = self.intern_named(o, hint)?;
        self.note_former_name(o, &name);
        Ok(name)
    }

    /// Records the name `o`'s title gave before [`naming::without_namespace`], when `name`
    /// (the type's name now) is what the title gives now and the two differ.
    fn note_former_name(&mut self, o: &SchemaObject, name: &str) {
        let Some(title) = &o.title else { return };
        let former = naming::type_name(self.settings, title);
        if former != name && self.title_name(title) == name && !self.types.contains_key(&former) {
            if let Some(def) = self.types.get_mut(name) {
                def.former_name = Some(former);
            }
        }
    }

    fn intern_named(&mut self, o: &SchemaObject, hint: &str) -> Result<String, Error> {
        let mut candidates = Vec::new();
        if let Some(title) = &o.title {
            candidates.push(self.title_name(title));
        }
        candidates.push(naming::type_name(self.settings, hint));
        let kind = self.lower_kind(candidates.last().expect("hint"), o)?;
        let doc = o.description.clone();
        let reserved = |s: &Self, n: &str| s.names.values().any(|d| d == n);
        for name in &candidates {
            match self.types.get(name) {
                Some(existing) if existing.kind == kind && existing.doc == doc => return Ok(name.clone()),
                Some(_) => continue,
                None if reserved(self, name) => continue,
                None => {
                    let def = TypeDef::new(name.clone(), o.pointer.clone(), doc, kind);
                    self.types.insert(name.clone(), def);
                    return Ok(name.clone());
                }
            }
        }
        let hint = naming::type_name(self.settings, hint);
        let mut n = 2;
        loop {
            let name = naming::numbered(&hint, n);
            if !self.types.contains_key(&name) && !reserved(self, &name) {
                let def = TypeDef::new(name.clone(), o.pointer.clone(), doc, kind);
                self.types.insert(name.clone(), def);
                return Ok(name);
            }
            n += 1;
        }
    }

    /// The kind of a named type (a definition or an interned inline schema).
    fn lower_kind(&mut self, name: &str, o: &SchemaObject) -> Result<TypeKind, Error> {
        if !o.opaque.is_empty() || o.reference.is_some() || o.tuple_items.is_some() {
            let (ty, nullable) = self.ty_of(&Schema::Object(Box::new(o.clone())), name)?;
            return Ok(TypeKind::Alias(if nullable && ty != Ty::Any { Ty::Option(Box::new(ty)) } else { ty }));
        }
        // `allOf` of one schema without siblings is a wrapper, lowered below through `ty_of`.
        if o.all_of
            .as_ref()
            .is_some_and(|all| all.len() > 1 || !o.properties.is_empty() || o.one_of.is_some() || o.any_of.is_some())
        {
            if self.all_of_depth <= 8 {
                if let Some(merged) = self.merge_all_of(o) {
                    self.all_of_depth += 1;
                    let kind = self.lower_kind(name, &merged);
                    self.all_of_depth -= 1;
                    return kind;
                }
            }
            return Ok(TypeKind::Alias(self.fallback(&o.pointer, "`allOf` of schemas that are not all objects")));
        }
        if let Some(arms) = o.one_of.as_ref().or(o.any_of.as_ref()) {
            if o.properties.is_empty() && arms.iter().any(is_null_schema) {
                // A named nullable wrapper (`NullableFoo = anyOf [Foo, null]`).
                let (ty, _) = self.ty_of(&Schema::Object(Box::new(o.clone())), &naming::inline(name, Inline::Value))?;
                return Ok(TypeKind::Alias(Ty::Option(Box::new(ty))));
            }
            if o.any_of.is_some() && !o.properties.is_empty() && arms.iter().all(is_property_group) {
                return Ok(TypeKind::Struct(self.lower_struct(name, o, None, None)?));
            }
            return self.lower_union(name, o, arms);
        }
        if let Some(values) = &o.enum_values {
            if values.iter().all(|v| v.is_string() || v.is_null()) && values.iter().any(Value::is_string) {
                return Ok(TypeKind::StringEnum(StringEnum {
                    values: name_values(string_enum(values, None), &self.settings.catch_all),
                }));
            }
            let (ty, nullable) = self.ty_of(&Schema::Object(Box::new(o.clone())), name)?;
            return Ok(TypeKind::Alias(if nullable && !matches!(ty, Ty::Any | Ty::Unit) {
                Ty::Option(Box::new(ty))
            } else {
                ty
            }));
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
            let (ty, _) = self.ty_of(&single, &naming::inline(name, Inline::TypeArm(&rust)))?;
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
                let hint = naming::inline(name, Inline::Member(wire));
                let (ty, nullable) = if let Schema::Bool(false) = schema {
                    let pointer = format!("{}/properties/{}", owner.pointer, crate::schema::escape_pointer(wire));
                    (cx.fallback(&pointer, "a `false` schema (the member may not be present)"), false)
                } else {
                    cx.ty_of(schema, &hint).map_err(|e| at(e, schema, &owner.pointer, wire))?
                };
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
        let extra_name = naming::extra_field(&rust);
        for i in naming::dedupe_with(&mut rust, &[extra_name]) {
            let (wire, field) = (&fields[i].wire, &rust[i]);
            self.warnings.push(Warning::new(
                format!("{}/properties/{}", o.pointer, crate::schema::escape_pointer(wire)),
                format!("member `{wire}` of `{name}` would share its Rust field name with another; named `{field}`"),
            ));
        }
        for (f, r) in fields.iter_mut().zip(rust) {
            f.rust = r;
        }
        let extra = match &o.additional_properties {
            // Members `patternProperties`, `if`/`then`, `dependencies` may add: kept as they came.
            _ if !o.open_members.is_empty() => Some(Ty::Any),
            Some(Schema::Bool(true)) if !o.properties.is_empty() => Some(Ty::Any),
            Some(Schema::Object(_)) if !o.properties.is_empty() => {
                let (ty, _) = self
                    .ty_of(o.additional_properties.as_ref().expect("matched"), &naming::inline(name, Inline::Extra))?;
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
                Some(r) if self.bundle.inner_refs.contains(r) => Ok(Arm { schema, object: None, ref_name: None }),
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
        // 1. Only string enums: one enum.
        if resolved.iter().all(|a| a.object.is_some_and(is_string_enum)) {
            let mut values = Vec::new();
            for arm in &resolved {
                let a = arm.object.expect("checked");
                let single_doc =
                    (a.enum_values.as_ref().map_or(0, Vec::len) == 1).then(|| a.description.clone()).flatten();
                values.extend(string_enum(a.enum_values.as_ref().expect("checked"), single_doc));
            }
            return Ok(TypeKind::StringEnum(StringEnum { values: name_values(values, &self.settings.catch_all) }));
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
            let why = "a union with sibling `properties` whose arms share no tag member";
            return Ok(TypeKind::Alias(self.fallback(&o.pointer, why)));
        }
        // 4. Anything else: tried in order.
        self.lower_untagged(name, &resolved)
    }

    fn lower_tagged(&mut self, name: &str, o: &SchemaObject, arms: &[Arm], tag: &str) -> Result<TypeKind, Error> {
        let siblings = (!o.properties.is_empty()).then_some(o);
        let tag_of = |arm: &Arm| {
            one_string(&arm.object.expect("tagged arms are objects").properties[tag]).expect("find_tag checked")
        };
        let variants = self.variant_names(&arms.iter().map(tag_of).collect::<Vec<_>>(), &o.pointer);
        let mut out = Vec::new();
        for (arm, variant) in arms.iter().zip(variants) {
            // A `$ref` arm: its payload is the referenced object's members without the tag (the
            // referenced type itself stays as it is, tag member included).
            let a = arm.object.expect("tagged arms are objects");
            let wire = tag_of(arm);
            let fallback = naming::inline(name, Inline::Arm(&variant));
            let struct_def = self.lower_struct(&fallback, a, Some(tag), siblings)?;
            let payload = self.intern_struct(a, &fallback, struct_def)?;
            out.push(TaggedArm {
                wire,
                rust: variant,
                payload,
                boxed: false,
                doc: a.description.clone(),
                experimental: false,
            });
        }
        Ok(TypeKind::Tagged(Tagged { tag: tag.to_owned(), arms: out }))
    }

    /// Variant names for the wire values of a union's arms; a value named like the catch-all
    /// variant gets another name (with a warning).
    fn variant_names(&mut self, wires: &[impl AsRef<str>], pointer: &str) -> Vec<String> {
        let catch_all = &self.settings.catch_all;
        let names = naming::variants_except(wires, catch_all);
        for (wire, name) in wires.iter().zip(&names) {
            if naming::pascal(wire.as_ref()) == *catch_all && name != catch_all {
                self.warnings.push(Warning::new(
                    pointer,
                    format!(
                        "`{}` would be named like the catch-all variant `{catch_all}`; named `{name}`",
                        wire.as_ref()
                    ),
                ));
            }
        }
        names
    }

    /// Inserts an already lowered struct under its title, else `fallback`.
    fn intern_struct(&mut self, a: &SchemaObject, fallback: &str, s: Struct) -> Result<String, Error> {
        let name = self.intern_struct_named(a, fallback, s)?;
        self.note_former_name(a, &name);
        Ok(name)
    }

    fn intern_struct_named(&mut self, a: &SchemaObject, fallback: &str, s: Struct) -> Result<String, Error> {
        let kind = TypeKind::Struct(s);
        let fallback = naming::type_name(self.settings, fallback);
        let mut candidates: Vec<String> = a.title.iter().map(|t| self.title_name(t)).collect();
        candidates.push(fallback.clone());
        let numbered = (2..).map(|n| naming::numbered(&fallback, n));
        for name in candidates.into_iter().chain(numbered) {
            let taken = self.types.contains_key(&name) || self.names.values().any(|d| *d == name);
            if !taken {
                let def = TypeDef::new(name.clone(), a.pointer.clone(), None, kind);
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
                for v in string_enum(a.enum_values.as_ref().expect("checked"), single_doc) {
                    out.push(ExternalArm {
                        wire: v.wire,
                        rust: v.rust,
                        payload: None,
                        doc: v.doc,
                        experimental: false,
                    });
                }
            } else if is_single_key(a) {
                let (key, schema) = a.properties.iter().next().expect("single key");
                let rust = naming::pascal(key);
                let hint = match a.title.as_deref() {
                    Some(title) => naming::pascal(&naming::without_namespace(title, &self.namespaces)),
                    None => naming::inline(name, Inline::Arm(&rust)),
                };
                let (ty, nullable) = self.ty_of(schema, &hint)?;
                let ty = if nullable { Ty::Option(Box::new(ty)) } else { ty };
                let doc = a.description.clone().or_else(|| field_doc(schema));
                out.push(ExternalArm { wire: key.clone(), rust, payload: Some(ty), doc, experimental: false });
            }
            // An open arm (`{"type": ["string", "object"]}`) is what the catch-all variant is for.
        }
        let names = self.variant_names(&out.iter().map(|a| a.wire.as_str()).collect::<Vec<_>>(), &o.pointer);
        for (arm, rust) in out.iter_mut().zip(names) {
            arm.rust = rust;
        }
        Ok(TypeKind::External(External { arms: out }))
    }

    fn lower_untagged(&mut self, name: &str, arms: &[Arm]) -> Result<TypeKind, Error> {
        // Titles without the namespace codex glues to them, as type names are.
        let namespaces = self.namespaces.clone();
        let titles: Vec<Option<String>> = arms
            .iter()
            .map(|a| match a.hint() {
                ArmHint::Schema { title: Some(t), .. } => Some(naming::without_namespace(t, &namespaces)),
                _ => None,
            })
            .collect();
        let hints: Vec<ArmHint> = arms
            .iter()
            .zip(&titles)
            .map(|(a, title)| match a.hint() {
                ArmHint::Schema { key, json_type, .. } if title.is_some() => {
                    ArmHint::Schema { title: title.as_deref(), key, json_type }
                }
                hint => hint,
            })
            .collect();
        let names = naming::untagged_variants(&hints, name, &self.settings.catch_all);
        let mut out = Vec::new();
        for (arm, rust) in arms.iter().zip(names) {
            let (ty, nullable) = self.ty_of(arm.schema, &naming::inline(name, Inline::Arm(&rust)))?;
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
        let member_depth = self.settings.member_depth;
        if depth > member_depth + 16 {
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
        if o.all_of.is_some() {
            return match self.merge_all_of(o) {
                Some(merged) => self.arm_match(&Schema::Object(Box::new(merged)), depth + 1),
                None => ArmMatch::Any,
            };
        }
        if let Some(arms) = o.one_of.as_ref().or(o.any_of.as_ref()) {
            if !(o.any_of.is_some() && !o.properties.is_empty() && arms.iter().all(is_property_group)) {
                // A union: any of its arms (a tagged union's arms carry their tag values).
                return ArmMatch::AnyOf(arms.iter().map(|a| self.arm_match(a, depth + 1)).collect());
            }
        }
        let nullable = o.allows_null_type() || o.enum_values.as_ref().is_some_and(|v| v.contains(&Value::Null));
        let with_null =
            |m: ArmMatch| if nullable { ArmMatch::AnyOf(vec![m, ArmMatch::Types(vec![JsonType::Null])]) } else { m };
        if let Some(values) = &o.enum_values {
            let strings: Vec<String> = values.iter().filter_map(|v| v.as_str().map(str::to_owned)).collect();
            if strings.len() + usize::from(nullable) == values.len() {
                return with_null(ArmMatch::Strings(strings));
            }
            return ArmMatch::Values(values.iter().map(Value::to_string).collect());
        }
        if !o.opaque.is_empty() {
            return ArmMatch::Any;
        }
        let types: Vec<InstanceType> = o.types.iter().flatten().copied().filter(|t| *t != InstanceType::Null).collect();
        if types.is_empty() && o.properties.is_empty() {
            return if o.is_null() { ArmMatch::Types(vec![JsonType::Null]) } else { ArmMatch::Any };
        }
        let object = || {
            // Members are looked into down to a few levels of objects, enough to tell apart
            // arms that differ only inside a member (titled and untitled multi-selects).
            let members = if depth < member_depth {
                o.properties
                    .iter()
                    .map(|(name, p)| (name.clone(), self.arm_match(p, depth + member_depth / 3)))
                    .filter(|(_, m)| *m != ArmMatch::Any)
                    .collect()
            } else {
                Vec::new()
            };
            let closed = matches!(o.additional_properties, Some(Schema::Bool(false)))
                .then(|| o.properties.keys().cloned().collect());
            ArmMatch::Object(ObjectMatch { required: o.required.clone(), members, closed })
        };
        let mut alternatives: Vec<ArmMatch> = Vec::new();
        let mut plain = Vec::new();
        if types.is_empty() {
            alternatives.push(object());
        }
        for t in &types {
            match t {
                InstanceType::Object
                    if !o.properties.is_empty() || matches!(o.additional_properties, Some(Schema::Bool(false))) =>
                {
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
        let empty = SchemaObject::default();
        let o = def.schema.as_object().unwrap_or(&empty);
        let Some(arms) = o.one_of.as_ref().or(o.any_of.as_ref()) else {
            self.warnings.push(Warning::new(
                &pointer,
                "not a `oneOf` of methods: every method of this direction decodes as unrecognized",
            ));
            return Ok((Vec::new(), Vec::new()));
        };
        let mut methods = Vec::new();
        for arm in arms {
            let resolved = self.resolve_arm(arm)?;
            let Some(a) = resolved.object else {
                self.warnings.push(Warning::new(&pointer, "a method arm that is not an object schema is left out"));
                continue;
            };
            let Some(wire) = a.properties.get("method").and_then(one_string) else {
                self.warnings.push(Warning::new(
                    &a.pointer,
                    "a method arm without a one-value string `method` is left out: such messages decode as unrecognized methods, kept whole",
                ));
                continue;
            };
            if direction.is_request() && !a.properties.contains_key("id") {
                self.warnings.push(Warning::new(
                    &a.pointer,
                    format!("request `{wire}` lists no `id`; decoded as a request (the envelope's id)"),
                ));
            }
            // The marker type (`request::Name`) sits in a module of its own, where a prelude
            // name would shadow the prelude for the generated impls.
            let rust = naming::type_name(self.settings, &wire);
            let params = match a.properties.get("params") {
                None => Params::None,
                Some(p) if is_null_schema(p) => Params::Null,
                Some(p) => {
                    let (ty, nullable) = self.ty_of(p, &naming::inline(&rust, Inline::Params))?;
                    if nullable || !a.required.iter().any(|r| r == "params") {
                        Params::Optional(ty)
                    } else {
                        Params::Required(ty)
                    }
                }
            };
            methods.push(Method {
                wire,
                rust,
                params,
                response: None,
                doc: a.description.clone(),
                experimental: false,
            });
        }
        let mut names: Vec<String> = methods.iter().map(|m| m.rust.clone()).collect();
        for i in naming::dedupe_with(&mut names, &[self.settings.catch_all.as_str()]) {
            self.warnings.push(Warning::new(
                &pointer,
                format!("method `{}` would share its Rust name with another; named `{}`", methods[i].wire, names[i]),
            ));
        }
        for (m, name) in methods.iter_mut().zip(names) {
            m.rust = name;
        }
        let envelope = if o.properties.is_empty() {
            Vec::new()
        } else {
            self.lower_struct(direction.union_name(), o, None, None)?.fields
        };
        Ok((methods, envelope))
    }
}

impl Lowerer<'_> {
    /// An envelope definition is not lowered (the protocol crate writes the envelope by hand):
    /// a member it gives that the hand-written envelope does not type is a warning.
    fn check_envelope(&mut self, def: &crate::schema::Definition) {
        let Some(known) = self.settings.envelope_members.get(&def.name) else { return };
        let Schema::Object(o) = &def.schema else { return };
        for member in o.properties.keys().filter(|m| !known.contains(m)) {
            self.warnings.push(Warning::new(
                format!("{}/properties/{member}", def.pointer),
                format!(
                    "`{member}` is a member of the JSON-RPC envelope that the protocol crate's hand-written envelope does not type: it decodes as an unknown envelope member"
                ),
            ));
        }
    }
}

/// The envelope (hand-written in the protocol crate) needs `RequestId` as JSON-RPC defines it:
/// a string or an integer, kept as it came. A bundle without it gets that type; a bundle whose
/// `RequestId` has another shape gets it too (it accepts every id either would), with a
/// warning.
fn ensure_request_id(types: &mut BTreeMap<String, TypeDef>, warnings: &mut Vec<Warning>) {
    use naming::REQUEST_ID;
    let [string, integer] = naming::REQUEST_ID_ARMS;
    let arm = |rust: &str, ty: Ty, json: JsonType| UntaggedArm {
        rust: rust.to_owned(),
        ty,
        accepts: ArmMatch::Types(vec![json]),
        doc: None,
        experimental: false,
    };
    let standard = TypeKind::Untagged(Untagged {
        arms: vec![arm(string, Ty::String, JsonType::String), arm(integer, Ty::Int(IntKind::I64), JsonType::Integer)],
    });
    match types.get_mut(REQUEST_ID) {
        Some(def) if def.kind == standard => {}
        Some(def) => {
            warnings.push(Warning::new(
                &def.pointer,
                "`RequestId` is not a string-or-integer union: the envelope's JSON-RPC id type (a string or an integer) is used",
            ));
            def.kind = standard;
        }
        None => {
            let doc = "A JSON-RPC request id: a string or an integer, kept exactly as it came.";
            let def = TypeDef::new(
                REQUEST_ID.to_owned(),
                format!("#/definitions/{REQUEST_ID}"),
                Some(doc.to_owned()),
                standard,
            );
            types.insert(REQUEST_ID.to_owned(), def);
        }
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
        !o.properties.is_empty()
            && o.reference.is_none()
            && o.one_of.is_none()
            && o.any_of.is_none()
            && o.enum_values.is_none()
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

/// The string values of an enum (`null` is carried by the field's nullability; callers pass
/// only enums whose values are strings).
fn string_enum(values: &[Value], single_doc: Option<String>) -> Vec<EnumValue> {
    values
        .iter()
        .filter_map(Value::as_str)
        .map(|s| EnumValue { wire: s.to_owned(), rust: String::new(), doc: single_doc.clone(), experimental: false })
        .collect()
}

/// Names the values of an enum (all at once, so clashes are resolved the same way each time;
/// a value named like the catch-all variant gets another name).
fn name_values(mut values: Vec<EnumValue>, catch_all: &str) -> Vec<EnumValue> {
    let names = naming::variants_except(&values.iter().map(|v| v.wire.as_str()).collect::<Vec<_>>(), catch_all);
    for (v, name) in values.iter_mut().zip(names) {
        v.rust = name;
    }
    values
}

/// The Rust integer of an integer schema's `format`; `None` for a format without one (the
/// caller falls back to any JSON value, which keeps integers of any size).
fn int_kind(o: &SchemaObject) -> Option<IntKind> {
    Some(match o.format.as_deref() {
        None | Some("int64") => IntKind::I64,
        Some("int32") => IntKind::I32,
        Some("int16") => IntKind::I32,
        Some("int8") => IntKind::I32,
        Some("uint8") => IntKind::U8,
        Some("uint16") => IntKind::U16,
        Some("uint32") => IntKind::U32,
        Some("uint64" | "uint") => IntKind::U64,
        Some(_) => return None,
    })
}

/// "Allowed values: `1`, `2`." for an `enum`/`const` that is not a string enum (its Rust type
/// is a primitive, which cannot say which values are allowed).
fn values_note(s: &Schema) -> Option<String> {
    let values = s.as_object()?.enum_values.as_ref()?;
    if values.iter().all(|v| v.is_string() || v.is_null()) {
        return None;
    }
    let list: Vec<String> = values.iter().map(|v| format!("`{v}`")).collect();
    Some(format!("Allowed values: {}.", list.join(", ")))
}

fn schema_doc(s: &Schema) -> Option<String> {
    join_doc(s.as_object().and_then(|o| o.description.clone()), values_note(s))
}

fn join_doc(doc: Option<String>, note: Option<String>) -> Option<String> {
    match (doc, note) {
        (Some(d), Some(n)) => Some(format!("{d}\n\n{n}")),
        (d, n) => d.or(n),
    }
}

/// A property's doc: its description, plus the server-side default when one is given.
fn field_doc(s: &Schema) -> Option<String> {
    let o = s.as_object()?;
    let mut doc = join_doc(o.description.clone(), values_note(s));
    if let Some(default) = o.default.as_ref().filter(|d| !d.is_null()) {
        let line = format!("Default: `{default}`.");
        doc = Some(match doc {
            Some(d) => format!("{d}\n\n{line}"),
            None => line,
        });
    }
    doc
}
