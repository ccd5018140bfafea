//! Instances of a schema, generated from the schema alone: together they cover every member,
//! every enum value and every union arm written inline in it (a `$ref` is covered by the
//! instances of the definition it names).
//!
//! For a schema the generator returns a list whose first instance is the *base*: every member
//! present (the "full" object), the first non-null arm of each union, the first enum value.
//! Each further instance changes one thing of the base: one member takes another of its
//! instances (another enum value, another arm, `null`), or the object keeps only its required
//! members. A `$ref` inside is filled with the *compact* instance of the definition it names
//! (required members only, first arm that can be built), so instances stay small and
//! recursive types terminate.
//!
//! Every instance records the items it covers (a member, an enum value, an arm, by the JSON
//! pointer of where the schema states it) and, when it sets an optional member to `null`, the
//! same value without that member: the protocol crate reads an optional `null` as absent
//! (documented in its crate docs), so the re-encoding may be either.

use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet};

use serde_json::{json, Map, Value};

/// What an item of the coverage is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Kind {
    /// A property of an object schema (or the values of its `additionalProperties`).
    Member,
    /// A value of an `enum`.
    Value,
    /// An arm of an `anyOf`/`oneOf`, or one type of a `type` list.
    Arm,
}

/// One item of the coverage: its kind and the JSON pointer of where the schema states it.
pub type Item = (Kind, String);

#[derive(Debug, Clone)]
pub struct Instance {
    pub value: Value,
    pub covers: BTreeSet<Item>,
    /// Items of other definitions it holds (a union arm's definition): not counted as covered
    /// by this one, but what it holds all the same.
    pub borrowed: BTreeSet<Item>,
}

impl Instance {
    fn new(value: Value) -> Self {
        Instance { value, covers: BTreeSet::new(), borrowed: BTreeSet::new() }
    }

    fn covering(mut self, item: Item) -> Self {
        self.covers.insert(item);
        self
    }
}

/// Builds instances of the definitions of one bundle and collects every coverable item it sees.
pub struct Generator<'a> {
    bundle: &'a Value,
    /// Every item of the schemas generated so far.
    pub items: BTreeSet<Item>,
    /// Compact instances of definitions, by `$ref`, when they do not depend on a cycle cut.
    compact_cache: RefCell<BTreeMap<String, Option<Value>>>,
    /// Definitions whose base is being built for a union arm (a cycle falls back to compact).
    expanding: BTreeSet<String>,
}

/// A JSON value of every kind, for schemas that accept anything. Its numbers survive a round
/// trip through `serde_json::Value` unchanged.
fn any_value() -> Value {
    json!({ "text": "a", "int": -3, "float": 2.5, "flag": true, "nothing": null, "list": [1, "b", { "nested": [] }] })
}

fn join(pointer: &str, part: impl std::fmt::Display) -> String {
    format!("{pointer}/{part}")
}

impl<'a> Generator<'a> {
    pub fn new(bundle: &'a Value) -> Self {
        Generator {
            bundle,
            items: BTreeSet::new(),
            compact_cache: RefCell::new(BTreeMap::new()),
            expanding: BTreeSet::new(),
        }
    }

    /// The schema a `#/...` reference (or pointer) names.
    pub fn resolve(&self, reference: &str) -> Option<&'a Value> {
        self.bundle.pointer(reference.strip_prefix('#').unwrap_or(reference))
    }

    /// Every instance of the schema at `pointer`, base first.
    pub fn instances(&mut self, schema: &Value, pointer: &str) -> Vec<Instance> {
        let Some(s) = schema.as_object() else {
            return match schema {
                Value::Bool(false) => Vec::new(),
                _ => vec![Instance::new(any_value())],
            };
        };
        if let Some(reference) = s.get("$ref").and_then(Value::as_str) {
            return self.compact_ref(reference, &mut Vec::new()).0.map(Instance::new).into_iter().collect();
        }
        if let Some(arms) = s.get("allOf").and_then(Value::as_array) {
            let mut rest = s.clone();
            rest.remove("allOf");
            let mut parts: Vec<Vec<Instance>> = arms
                .iter()
                .enumerate()
                .map(|(i, arm)| self.instances(arm, &join(pointer, format!("allOf/{i}"))))
                .collect();
            if has_own_shape(&rest) {
                parts.push(self.instances(&Value::Object(rest), pointer));
            }
            return merge_all(parts);
        }
        for key in ["anyOf", "oneOf"] {
            if let Some(arms) = s.get(key).and_then(Value::as_array) {
                return self.union(s, key, arms, pointer);
            }
        }
        if let Some(values) = s.get("enum").and_then(Value::as_array) {
            let mut out: Vec<Instance> = values
                .iter()
                .enumerate()
                .map(|(i, v)| {
                    let item = (Kind::Value, join(pointer, format!("enum/{i}")));
                    self.items.insert(item.clone());
                    Instance::new(v.clone()).covering(item)
                })
                .collect();
            base_not_null(&mut out);
            return out;
        }
        match s.get("type") {
            Some(Value::Array(types)) => {
                let mut out = Vec::new();
                for t in types {
                    let mut single = s.clone();
                    single.insert("type".into(), t.clone());
                    let item = (Kind::Arm, join(pointer, format!("type/{}", t.as_str().unwrap_or("?"))));
                    self.items.insert(item.clone());
                    out.extend(
                        self.instances(&Value::Object(single), pointer).into_iter().map(|i| i.covering(item.clone())),
                    );
                }
                base_not_null(&mut out);
                out
            }
            Some(Value::String(t)) => self.of_type(s, t, pointer),
            _ if s.contains_key("properties") || s.contains_key("additionalProperties") => self.object(s, pointer),
            _ => vec![Instance::new(any_value())],
        }
    }

    fn union(&mut self, s: &Map<String, Value>, key: &str, arms: &[Value], pointer: &str) -> Vec<Instance> {
        // Members stated next to the union belong to every arm.
        let mut rest = s.clone();
        rest.remove(key);
        let siblings = has_own_shape(&rest).then(|| self.instances(&Value::Object(rest), pointer));
        let mut out = Vec::new();
        for (i, arm) in arms.iter().enumerate() {
            let item = (Kind::Arm, join(pointer, format!("{key}/{i}")));
            self.items.insert(item.clone());
            let mut of_arm = match arm.get("$ref").and_then(Value::as_str) {
                Some(reference) => self.ref_arm(reference),
                None => self.instances(arm, &join(pointer, format!("{key}/{i}"))),
            };
            if of_arm.is_empty() {
                continue;
            }
            if let Some(siblings) = &siblings {
                let base = of_arm[0].clone();
                of_arm = of_arm.into_iter().map(|a| merge(&a, &siblings[0])).collect();
                if i == first_not_null(arms) {
                    of_arm.extend(siblings[1..].iter().map(|sib| merge(&base, sib)));
                }
            }
            out.extend(of_arm.into_iter().map(|inst| inst.covering(item.clone())));
        }
        base_not_null(&mut out);
        out
    }

    /// An arm that names a definition: that definition's base (every member present: which arm
    /// a decoder picks must not depend on the members a value leaves out) and its compact
    /// instance. The definition's own items are covered by its own instances, not counted here.
    fn ref_arm(&mut self, reference: &str) -> Vec<Instance> {
        let mut out = Vec::new();
        if !self.expanding.contains(reference) {
            let schema = self.resolve(reference).unwrap_or_else(|| panic!("unresolved $ref {reference}"));
            self.expanding.insert(reference.to_owned());
            let mut scratch = std::mem::take(&mut self.items);
            let full = self.instances(schema, reference).into_iter().next();
            std::mem::swap(&mut scratch, &mut self.items);
            self.expanding.remove(reference);
            out.extend(full.map(|f| Instance {
                borrowed: f.covers.union(&f.borrowed).cloned().collect(),
                covers: BTreeSet::new(),
                ..f
            }));
        }
        if let Some(compact) = self.compact_ref(reference, &mut Vec::new()).0 {
            if out.first().map(|f| &f.value) != Some(&compact) {
                out.push(Instance::new(compact));
            }
        }
        out
    }

    fn of_type(&mut self, s: &Map<String, Value>, t: &str, pointer: &str) -> Vec<Instance> {
        let minimum = s.get("minimum").and_then(Value::as_f64);
        match t {
            "null" => vec![Instance::new(Value::Null)],
            "boolean" => vec![Instance::new(json!(true)), Instance::new(json!(false))],
            "integer" => {
                let low = minimum.map_or(7, |m| m.ceil() as i64);
                vec![Instance::new(json!(low.max(7)))]
            }
            "number" => vec![Instance::new(json!(minimum.map_or(2.5, |m| m + 2.5)))],
            "string" => {
                let len = s.get("minLength").and_then(Value::as_u64).unwrap_or(0).max(3) as usize;
                vec![Instance::new(json!("abcdefghij".repeat(len / 10 + 1)[..len]))]
            }
            "array" => {
                let items = s.get("items").cloned().unwrap_or(Value::Bool(true));
                let of_items = self.instances(&items, &join(pointer, "items"));
                let mut out: Vec<Instance> = of_items.into_iter().map(|i| wrap(i, |v| Value::Array(vec![v]))).collect();
                if s.get("minItems").and_then(Value::as_u64).unwrap_or(0) == 0 {
                    out.push(Instance::new(json!([])));
                }
                out
            }
            "object" => self.object(s, pointer),
            other => panic!("{pointer}: unknown type {other}"),
        }
    }

    fn object(&mut self, s: &Map<String, Value>, pointer: &str) -> Vec<Instance> {
        let empty = Map::new();
        let properties = s.get("properties").and_then(Value::as_object).unwrap_or(&empty);
        let required: BTreeSet<&str> =
            s.get("required").and_then(Value::as_array).into_iter().flatten().filter_map(Value::as_str).collect();
        let mut members: Vec<(String, bool, Vec<Instance>)> = Vec::new();
        for (name, schema) in properties {
            let at = join(pointer, format!("properties/{}", escape(name)));
            self.items.insert((Kind::Member, at.clone()));
            let of_member = self.instances(schema, &at);
            if of_member.is_empty() && required.contains(name.as_str()) {
                return Vec::new(); // a required member no value satisfies: no instance
            }
            let of_member = of_member.into_iter().map(|i| i.covering((Kind::Member, at.clone()))).collect();
            members.push((name.clone(), required.contains(name.as_str()), of_member));
        }
        let mut base = Instance::new(Value::Object(Map::new()));
        for (name, _, of_member) in &members {
            if let Some(first) = of_member.first() {
                base = set_member(&base, name, first);
            }
        }
        let mut out = vec![base.clone()];
        for (name, _, of_member) in &members {
            for other in of_member.iter().skip(1) {
                out.push(set_member(&base, name, other));
            }
        }
        if members.iter().any(|(_, required, _)| !required) {
            let mut minimal = Instance::new(Value::Object(Map::new()));
            for (name, _, of_member) in members.iter().filter(|(_, required, _)| *required) {
                minimal = set_member(&minimal, name, &of_member[0]);
            }
            out.push(minimal);
        }
        let extra = match s.get("additionalProperties") {
            Some(Value::Object(schema)) => Some(Value::Object(schema.clone())),
            Some(Value::Bool(true)) if !properties.is_empty() => Some(Value::Bool(true)),
            _ => None,
        };
        if let Some(schema) = extra {
            let at = join(pointer, "additionalProperties");
            self.items.insert((Kind::Member, at.clone()));
            for other in self.instances(&schema, &at) {
                let key = (0..).map(|i| format!("zz{i}")).find(|k| !properties.contains_key(k)).unwrap();
                out.push(set_member(&base, &key, &other.covering((Kind::Member, at.clone()))));
            }
            if properties.is_empty() && out.len() > 1 {
                // A map: the empty one is the base, the entries are the variants.
                out.swap(0, 1);
            }
        }
        out
    }

    /// The compact instance of the definition `reference` names; `None` when it can only be
    /// built through a definition already on `stack` (a cycle). The flag says a cycle was cut
    /// below, so the result is not cached.
    fn compact_ref(&self, reference: &str, stack: &mut Vec<String>) -> (Option<Value>, bool) {
        if let Some(cached) = self.compact_cache.borrow().get(reference) {
            return (cached.clone(), false);
        }
        if stack.iter().any(|r| r == reference) {
            return (None, true);
        }
        let Some(schema) = self.resolve(reference) else { panic!("unresolved $ref {reference}") };
        stack.push(reference.to_owned());
        let (value, cut) = self.compact(schema, stack);
        stack.pop();
        if !cut {
            self.compact_cache.borrow_mut().insert(reference.to_owned(), value.clone());
        }
        (value, cut)
    }

    fn compact(&self, schema: &Value, stack: &mut Vec<String>) -> (Option<Value>, bool) {
        let Some(s) = schema.as_object() else {
            return (matches!(schema, Value::Bool(true)).then(any_value), false);
        };
        if let Some(reference) = s.get("$ref").and_then(Value::as_str) {
            return self.compact_ref(reference, stack);
        }
        let mut cut = false;
        for key in ["allOf", "anyOf", "oneOf"] {
            let Some(arms) = s.get(key).and_then(Value::as_array) else { continue };
            let mut rest = s.clone();
            rest.remove(key);
            let mut siblings = None;
            if has_own_shape(&rest) {
                let (v, c) = self.compact(&Value::Object(rest), stack);
                cut |= c;
                match v {
                    Some(v) => siblings = Some(v),
                    None => return (None, cut),
                }
            }
            let with_siblings = |v: Value| match &siblings {
                Some(s) => merge_values(&v, s),
                None => v,
            };
            if key == "allOf" {
                let mut value: Option<Value> = None;
                for arm in arms {
                    let (v, c) = self.compact(arm, stack);
                    cut |= c;
                    let Some(v) = v else { return (None, cut) };
                    value = Some(match value {
                        Some(x) => merge_values(&x, &v),
                        None => v,
                    });
                }
                return (value.map(with_siblings), cut);
            }
            let mut order: Vec<&Value> = arms.iter().filter(|a| !is_null_schema(a)).collect();
            order.extend(arms.iter().filter(|a| is_null_schema(a)));
            for arm in order {
                let (v, c) = self.compact(arm, stack);
                cut |= c;
                if let Some(v) = v {
                    return (Some(with_siblings(v)), cut);
                }
            }
            return (None, cut);
        }
        if let Some(values) = s.get("enum").and_then(Value::as_array) {
            return (values.iter().find(|v| !v.is_null()).or(values.first()).cloned(), false);
        }
        let t = match s.get("type") {
            Some(Value::Array(types)) => {
                types.iter().filter_map(Value::as_str).find(|t| *t != "null").unwrap_or("null")
            }
            Some(Value::String(t)) => t.as_str(),
            _ if s.contains_key("properties") => "object",
            _ => return (Some(any_value()), false),
        };
        match t {
            "object" => {
                let mut out = Map::new();
                let properties = s.get("properties").and_then(Value::as_object);
                for name in s.get("required").and_then(Value::as_array).into_iter().flatten().filter_map(Value::as_str)
                {
                    let member = properties.and_then(|p| p.get(name)).cloned().unwrap_or(Value::Bool(true));
                    let (v, c) = self.compact(&member, stack);
                    cut |= c;
                    let Some(v) = v else { return (None, cut) };
                    out.insert(name.to_owned(), v);
                }
                (Some(Value::Object(out)), cut)
            }
            "array" => (Some(json!([])), false),
            other => {
                let mut single = s.clone();
                single.insert("type".into(), json!(other));
                // Scalars: the base instance (no `$ref` below, so nothing to record).
                let mut scratch = Generator::new(self.bundle);
                (scratch.of_type(&single, other, "").into_iter().next().map(|i| i.value), false)
            }
        }
    }
}

/// `~` and `/` escaped as in a JSON pointer.
fn escape(name: &str) -> String {
    name.replace('~', "~0").replace('/', "~1")
}

fn is_null_schema(schema: &Value) -> bool {
    schema.get("type") == Some(&json!("null"))
}

fn first_not_null(arms: &[Value]) -> usize {
    arms.iter().position(|a| !is_null_schema(a)).unwrap_or(0)
}

/// A schema object with something of its own besides the keywords that only describe.
fn has_own_shape(s: &Map<String, Value>) -> bool {
    s.keys()
        .any(|k| !matches!(k.as_str(), "$schema" | "title" | "description" | "default" | "examples" | "definitions"))
}

/// Puts the first instance whose value is not `null` first (the base).
fn base_not_null(out: &mut [Instance]) {
    if let Some(i) = out.iter().position(|inst| !inst.value.is_null()) {
        out[..=i].rotate_right(1);
    }
}

fn wrap(inst: Instance, f: impl Fn(Value) -> Value) -> Instance {
    Instance { value: f(inst.value), covers: inst.covers, borrowed: inst.borrowed }
}

/// `base` with `name` set to `member`.
fn set_member(base: &Instance, name: &str, member: &Instance) -> Instance {
    let mut value = base.value.clone();
    value[name] = member.value.clone();
    let mut covers = base.covers.clone();
    covers.extend(member.covers.iter().cloned());
    let mut borrowed = base.borrowed.clone();
    borrowed.extend(member.borrowed.iter().cloned());
    Instance { value, covers, borrowed }
}

/// The members of both objects (`b`'s win); a non-object `a` stays as it is.
fn merge_values(a: &Value, b: &Value) -> Value {
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            let mut out = x.clone();
            out.extend(y.iter().map(|(k, v)| (k.clone(), v.clone())));
            Value::Object(out)
        }
        (a, _) => a.clone(),
    }
}

fn merge(a: &Instance, b: &Instance) -> Instance {
    let value = merge_values(&a.value, &b.value);
    let mut covers = a.covers.clone();
    covers.extend(b.covers.iter().cloned());
    let mut borrowed = a.borrowed.clone();
    borrowed.extend(b.borrowed.iter().cloned());
    Instance { value, covers, borrowed }
}

/// The instances of an `allOf`: each part's instances merged with the other parts' bases.
fn merge_all(parts: Vec<Vec<Instance>>) -> Vec<Instance> {
    if parts.iter().any(Vec::is_empty) {
        return Vec::new();
    }
    let mut out = Vec::new();
    for (i, part) in parts.iter().enumerate() {
        for (j, inst) in part.iter().enumerate() {
            if i > 0 && j == 0 {
                continue; // the base, already in
            }
            let mut merged = inst.clone();
            for (k, other) in parts.iter().enumerate().filter(|(k, _)| *k != i) {
                merged = if k < i { merge(&other[0], &merged) } else { merge(&merged, &other[0]) };
            }
            out.push(merged);
        }
    }
    out
}
