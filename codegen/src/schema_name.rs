//! What the schema calls a place: the name by which the supported range's facts (what each
//! codex release has) are kept, never the name the generator gives it.
//!
//! A definition is its name without namespace (`ThreadListParams`). A place inside one is its
//! definition's name followed by the wire names on the way to it: `.member` for a member,
//! `[]` for an array's items (`[2]` for a tuple's position), `{}` for a map's values, and
//! `::arm` for a union's arm, by what tells the arm apart on the wire (the tag's value, the
//! single key, a referenced definition's name) or else by its title, its JSON type or its
//! position. A union of one schema and `null` is that schema. So `LoginAccountParams::chatgpt`
//! is the object of the `chatgpt` arm of `LoginAccountParams`, whatever Rust name it gets.

use crate::schema::{Bundle, InstanceType, Schema, SchemaObject};

/// The schema name of the place `pointer` (a JSON pointer into the bundle, as
/// [`SchemaObject::pointer`] holds it) points at; the pointer itself when it is not inside a
/// definition of the bundle.
pub fn of_pointer(bundle: &Bundle, pointer: &str) -> String {
    // The longest prefix of the pointer that is a definition's (definitions are keyed by it).
    let mut prefix = pointer;
    let def = loop {
        if let Some(def) = bundle.definitions.get(prefix) {
            break def;
        }
        match prefix.rsplit_once('/') {
            Some((shorter, _)) => prefix = shorter,
            None => return pointer.to_owned(),
        }
    };
    let mut name = def.name.clone();
    let mut schema = Some(&def.schema);
    let rest = &pointer[def.pointer.len()..];
    let mut segments = rest.split('/').filter(|s| !s.is_empty()).map(unescape);
    while let Some(segment) = segments.next() {
        let object = schema.and_then(Schema::as_object);
        match segment.as_str() {
            "properties" => {
                let member = segments.next().unwrap_or_default();
                name.push('.');
                name.push_str(&member);
                schema = object.and_then(|o| o.properties.get(&member));
            }
            "items" => match object.and_then(|o| o.tuple_items.as_ref()) {
                Some(tuple) => {
                    let n = segments.next().unwrap_or_default();
                    name.push_str(&format!("[{n}]"));
                    schema = n.parse::<usize>().ok().and_then(|n| tuple.get(n));
                }
                None => {
                    name.push_str("[]");
                    schema = object.and_then(|o| o.items.as_ref());
                }
            },
            "additionalProperties" => {
                name.push_str("{}");
                schema = object.and_then(|o| o.additional_properties.as_ref());
            }
            "oneOf" | "anyOf" | "allOf" => {
                let n: Option<usize> = segments.next().and_then(|n| n.parse().ok());
                let arms = object.and_then(|o| match segment.as_str() {
                    "oneOf" => o.one_of.as_ref(),
                    "anyOf" => o.any_of.as_ref(),
                    _ => o.all_of.as_ref(),
                });
                let (Some(arms), Some(n)) = (arms, n) else {
                    name.push_str(&format!("/{segment}"));
                    schema = None;
                    continue;
                };
                // A union of one schema and `null` (or an `allOf` of one) is that schema.
                let non_null = arms.iter().filter(|a| !is_null(a)).count();
                let wrapper = if segment == "allOf" { arms.len() == 1 } else { non_null == 1 && arms.len() > 1 };
                if !wrapper {
                    let sep = if segment == "allOf" { "&" } else { "::" };
                    name.push_str(sep);
                    name.push_str(&arm_name(arms, n));
                }
                schema = arms.get(n);
            }
            other => {
                name.push('/');
                name.push_str(other);
                schema = None;
            }
        }
    }
    name
}

/// The name of a union's `n`th arm: see the module docs.
fn arm_name(arms: &[Schema], n: usize) -> String {
    let Some(arm) = arms.get(n).and_then(Schema::as_object) else { return n.to_string() };
    if let Some(r) = &arm.reference {
        return r.rsplit('/').next().unwrap_or(r).to_owned();
    }
    let objects: Vec<&SchemaObject> = arms.iter().filter(|a| !is_null(a)).filter_map(Schema::as_object).collect();
    // A tag: a member every object arm has with one string value.
    let tag = arm.properties.keys().find(|key| objects.iter().all(|o| one_value(o, key).is_some()));
    if let Some(value) = tag.and_then(|key| one_value(arm, key)) {
        return value;
    }
    // The object form of an externally tagged union: its single required member.
    if arm.properties.len() == 1 && arm.required.len() == 1 && arm.properties.contains_key(&arm.required[0]) {
        return arm.required[0].clone();
    }
    if let Some(title) = &arm.title {
        return title.clone();
    }
    // An object by a member it requires that no other arm has.
    let own = arm.required.iter().find(|r| {
        arms.iter().enumerate().all(|(i, a)| i == n || a.as_object().is_none_or(|o| !o.properties.contains_key(*r)))
    });
    if let Some(own) = own {
        return own.clone();
    }
    let of_type = |a: &Schema| a.as_object().and_then(|o| o.types.clone());
    match arm.types.as_deref() {
        // By its JSON type when no other arm is of it.
        Some([t]) if arms.iter().filter(|a| of_type(a) == arm.types).count() == 1 => json_type(*t).to_owned(),
        _ => n.to_string(),
    }
}

/// The one string value member `key` of `o` may have (`{"enum": ["x"]}` or `{"const": "x"}`).
fn one_value(o: &SchemaObject, key: &str) -> Option<String> {
    let member = o.properties.get(key)?.as_object()?;
    match member.enum_values.as_deref() {
        Some([serde_json::Value::String(v)]) => Some(v.clone()),
        _ => None,
    }
}

fn is_null(schema: &Schema) -> bool {
    schema.as_object().is_some_and(|o| {
        o.types.as_deref() == Some(&[InstanceType::Null]) && o.reference.is_none() && o.one_of.is_none()
    })
}

fn json_type(t: InstanceType) -> &'static str {
    match t {
        InstanceType::Null => "null",
        InstanceType::Boolean => "boolean",
        InstanceType::Object => "object",
        InstanceType::Array => "array",
        InstanceType::Number => "number",
        InstanceType::String => "string",
        InstanceType::Integer => "integer",
    }
}

fn unescape(segment: &str) -> String {
    segment.replace("~1", "/").replace("~0", "~")
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use crate::{build_ir_with, SchemaSet, Settings};

    /// On the vendored release: every type has a schema name of its own, and the names read as
    /// the module docs say.
    #[test]
    fn every_type_of_the_vendored_release_has_a_schema_name_of_its_own() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../vendor-schemas");
        let set = SchemaSet::read_dir(&root, "vendored").unwrap();
        let ir = build_ir_with(&set, &Settings::codex().unwrap().proposing()).unwrap();
        let mut seen: BTreeMap<&str, &str> = BTreeMap::new();
        let mut clashes = Vec::new();
        for (name, def) in &ir.types {
            if let Some(other) = seen.insert(&def.schema, name) {
                clashes.push(format!("{other} and {name} are both `{}` ({})", def.schema, def.pointer));
            }
        }
        // The names read as the module docs say.
        let of = |rust: &str| ir.types[rust].schema.as_str();
        assert_eq!(of("ChatgptLoginAccountParams"), "LoginAccountParams::chatgpt");
        assert_eq!(of("ThreadListParams"), "ThreadListParams");
        assert_eq!(of("BlobResourceContent"), "ResourceContent::blob");
        assert_eq!(of("ExecLocalShellAction"), "LocalShellAction::exec", "the one arm of a union");
        assert!(clashes.is_empty(), "{}", clashes.join("\n"));
    }
}
