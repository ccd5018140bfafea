//! Test support: the vendored schema bundle this crate was generated from, and minimal valid
//! instances of its definitions.

#![allow(dead_code)]

use serde_json::{json, Map, Value};

/// The bundle matching the crate's feature set: experimental with the feature, else stable.
pub fn bundle() -> Value {
    let folder = if cfg!(feature = "experimental") { "experimental" } else { "stable" };
    bundle_of(folder)
}

pub fn bundle_of(folder: &str) -> Value {
    let path =
        format!("{}/../vendor-schemas/{folder}/codex_app_server_protocol.schemas.json", env!("CARGO_MANIFEST_DIR"));
    serde_json::from_str(&std::fs::read_to_string(&path).expect(&path)).expect("bundle is JSON")
}

/// `(method, params schema, required)` for each arm of a method union.
pub fn methods(bundle: &Value, union: &str) -> Vec<(String, Option<Value>)> {
    bundle["definitions"][union]["oneOf"]
        .as_array()
        .expect("a oneOf")
        .iter()
        .map(|arm| {
            (
                arm["properties"]["method"]["enum"][0].as_str().unwrap().to_owned(),
                arm["properties"].get("params").cloned(),
            )
        })
        .collect()
}

/// Builds the smallest value the schema accepts: required members only, the first arm of a
/// union, the first enum value, empty arrays, zero numbers (`0.5` for floats, which survive
/// a round trip unchanged).
pub struct Minimal<'a> {
    pub bundle: &'a Value,
}

impl Minimal<'_> {
    pub fn of(&self, schema: &Value) -> Value {
        self.build(schema, 0)
    }

    fn resolve(&self, reference: &str) -> &Value {
        let mut v = self.bundle;
        for part in reference.trim_start_matches("#/").split('/') {
            v = &v[part];
        }
        v
    }

    fn build(&self, schema: &Value, depth: usize) -> Value {
        assert!(depth < 40, "schema recursion too deep");
        let Some(s) = schema.as_object() else { return json!({}) };
        if let Some(r) = s.get("$ref").and_then(Value::as_str) {
            return self.build(self.resolve(r), depth + 1);
        }
        for key in ["allOf", "oneOf", "anyOf"] {
            if let Some(arms) = s.get(key).and_then(Value::as_array) {
                let arm = arms.iter().find(|a| a.get("type") != Some(&json!("null"))).unwrap_or(&arms[0]);
                let mut value = self.build(arm, depth + 1);
                // Sibling properties (e.g. ThreadItem's lifecycle times) join the arm's.
                if let (Some(obj), Some(_)) = (value.as_object_mut(), s.get("properties")) {
                    for (k, v) in self.required_members(s, depth) {
                        obj.entry(k).or_insert(v);
                    }
                }
                return value;
            }
        }
        if let Some(values) = s.get("enum").and_then(Value::as_array) {
            return values.iter().find(|v| !v.is_null()).cloned().unwrap_or(Value::Null);
        }
        let ty = match s.get("type") {
            Some(Value::Array(list)) => list.iter().find(|t| *t != "null").cloned().unwrap_or(json!("null")),
            Some(t) => t.clone(),
            None if s.contains_key("properties") => json!("object"),
            None => return json!({}),
        };
        match ty.as_str().unwrap() {
            "string" => json!(""),
            "integer" => json!(0),
            "number" => json!(0.5),
            "boolean" => json!(false),
            "array" => json!([]),
            "null" => Value::Null,
            "object" => Value::Object(self.required_members(s, depth)),
            other => panic!("unknown type {other}"),
        }
    }

    fn required_members(&self, s: &Map<String, Value>, depth: usize) -> Map<String, Value> {
        let mut out = Map::new();
        let props = s.get("properties").and_then(Value::as_object);
        for name in s.get("required").and_then(Value::as_array).into_iter().flatten() {
            let name = name.as_str().unwrap();
            let schema = props.and_then(|p| p.get(name)).cloned().unwrap_or(json!({}));
            out.insert(name.to_owned(), self.build(&schema, depth + 1));
        }
        out
    }
}
