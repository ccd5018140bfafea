//! The generator's schema parser and lowering on mutated bundles: an error, never a panic.
//!
//! The input is either a whole bundle (JSON text: the seeds are the construct schemas of
//! `codegen/tests/constructs` and the vendored bundles), or a recipe of mutations applied to
//! one of the vendored bundles: each 4 bytes pick a node (by its index in a walk of the
//! bundle), an operation and an operand, at most 16 of them. The operations: replace the node
//! by another node's value, a scalar, an empty object or array; delete it; rename a member
//! (to a keyword, a std/prelude or crate name, or a case variant of its name); and put in
//! the constructs the generator must handle without stopping: enums and consts of every JSON
//! type, type lists, tuples, `allOf` of several schemas, maps and arrays of unions, a `$ref`
//! back to the enclosing definition (recursion), and keywords it does not type
//! (`patternProperties`, `if`, unknown ones). Small inputs go through the whole generator
//! (emit and format too); the vendored bundles through `build_ir`.
#![no_main]

use std::sync::OnceLock;

use codex_app_codegen::SchemaSet;
use libfuzzer_sys::fuzz_target;
use serde_json::{json, Value};

const STABLE: &str = include_str!("../../vendor-schemas/stable/codex_app_server_protocol.schemas.json");
const EXPERIMENTAL: &str = include_str!("../../vendor-schemas/experimental/codex_app_server_protocol.schemas.json");

fn bundles() -> &'static [Value; 2] {
    static CELL: OnceLock<[Value; 2]> = OnceLock::new();
    CELL.get_or_init(|| {
        [serde_json::from_str(STABLE).expect("JSON"), serde_json::from_str(EXPERIMENTAL).expect("JSON")]
    })
}

/// Pointers to every node of `v`, in a fixed order.
fn nodes(v: &Value, at: String, out: &mut Vec<String>) {
    match v {
        Value::Object(m) => {
            for (k, x) in m {
                nodes(x, format!("{at}/{}", k.replace('~', "~0").replace('/', "~1")), out);
            }
        }
        Value::Array(a) => {
            for (i, x) in a.iter().enumerate() {
                nodes(x, format!("{at}/{i}"), out);
            }
        }
        _ => {}
    }
    out.push(at);
}

/// At most this many mutations per input: each walks the whole bundle (tens of thousands of
/// nodes), so a long recipe made one input take over 10 s (a timeout of the harness, not of
/// the generator).
const MAX_MUTATIONS: usize = 16;

fn mutate(base: &Value, recipe: &[u8]) -> Value {
    let mut v = base.clone();
    for op in recipe.chunks_exact(4).take(MAX_MUTATIONS) {
        let mut all = Vec::new();
        nodes(&v, String::new(), &mut all);
        let pick = |b: u8, c: u8| &all[(usize::from(b) << 8 | usize::from(c)) * 7919 % all.len()];
        let target = pick(op[1], op[2]).clone();
        if target.is_empty() {
            continue;
        }
        let donor = v.pointer(pick(op[3], op[1])).cloned().unwrap_or(Value::Null);
        let (parent, last) = target.rsplit_once('/').expect("not the root");
        let definition = enclosing_definition(&target);
        let refs = definition_refs(&v);
        let some_ref = refs.get(usize::from(op[3]) * 31 % refs.len().max(1)).cloned();
        let replacement = match op[0] % 18 {
            9 => Some(match op[3] % 7 {
                0 => json!({"type": "integer", "enum": [1, 2]}),
                1 => json!({"const": 1.5}),
                2 => json!({"const": true}),
                3 => json!({"const": null}),
                4 => json!({"enum": [1, "one", null]}),
                5 => json!({"type": "integer", "format": "int128"}),
                _ => json!({"const": {"nested": [1]}}),
            }),
            10 => Some(json!({"type": ["string", "integer", "null"]})),
            11 => Some(json!({"type": "array", "items": [donor, {"type": "string"}], "minItems": 2, "maxItems": 2})),
            12 => {
                Some(json!({"allOf": [donor, {"$ref": some_ref.unwrap_or_else(|| "#/definitions/RequestId".into())}]}))
            }
            13 => Some(if op[3] % 2 == 0 {
                json!({"type": "object", "additionalProperties": {"anyOf": [donor, {"type": "string"}]}})
            } else {
                json!({"type": "array", "items": {"oneOf": [donor, {"type": "null"}, {"type": "integer"}]}})
            }),
            14 => match definition {
                Some(d) => Some(json!({"anyOf": [{"$ref": d}, {"type": "null"}]})),
                None => continue,
            },
            15 => {
                // An open or unknown keyword next to the node.
                let keywords =
                    ["patternProperties", "if", "then", "dependencies", "x-vendor", "$comment", "prefixItems", "not"];
                let keyword = keywords[usize::from(op[3]) % keywords.len()];
                if let Some(Value::Object(m)) = v.pointer_mut(parent) {
                    let value = if keyword == "$comment" { json!("c") } else { json!({"^x-": donor}) };
                    m.insert(keyword.to_owned(), value);
                }
                continue;
            }
            16 | 17 => {
                // Rename a member to a name that clashes after case conversion, or with a
                // std/prelude or crate name.
                let names = [
                    "Option",
                    "Result",
                    "Vec",
                    "Value",
                    "Map",
                    "Box",
                    "String",
                    "Unrecognized",
                    "unrecognized",
                    "ClientResponse",
                    "Message",
                    "Default",
                    "self",
                    "Self",
                    "type",
                    "match",
                ];
                if let Some(Value::Object(m)) = v.pointer_mut(parent) {
                    let key = last.replace("~1", "/").replace("~0", "~");
                    if let Some(x) = m.remove(&key) {
                        let name = if op[0] % 18 == 16 {
                            names[usize::from(op[3]) % names.len()].to_owned()
                        } else {
                            case_variant(&key)
                        };
                        m.insert(name, x);
                    }
                }
                continue;
            }
            0 => Some(donor),
            1 => Some(json!(null)),
            2 => Some(json!(true)),
            3 => Some(json!(op[3])),
            4 => Some(json!("string")),
            5 => Some(json!({})),
            6 => Some(json!([])),
            7 => None, // delete
            _ => {
                // rename a member to a keyword-ish name
                let names =
                    ["type", "enum", "const", "$ref", "properties", "required", "oneOf", "anyOf", "items", "title"];
                let name = names[usize::from(op[3]) % names.len()];
                if let Some(Value::Object(m)) = v.pointer_mut(parent) {
                    let key = last.replace("~1", "/").replace("~0", "~");
                    if let Some(x) = m.remove(&key) {
                        m.insert(name.to_owned(), x);
                    }
                }
                continue;
            }
        };
        match v.pointer_mut(parent) {
            Some(Value::Object(m)) => {
                let key = last.replace("~1", "/").replace("~0", "~");
                match replacement {
                    Some(r) => m.insert(key, r),
                    None => m.remove(&key),
                };
            }
            Some(Value::Array(a)) => {
                let i: usize = last.parse().expect("an index");
                match replacement {
                    Some(r) => a[i] = r,
                    None => {
                        a.remove(i);
                    }
                }
            }
            _ => {}
        }
    }
    v
}

/// `#/definitions/X` (or `#/definitions/v2/X`) of the definition a node sits in.
fn enclosing_definition(pointer: &str) -> Option<String> {
    let parts: Vec<&str> = pointer.trim_start_matches('/').split('/').collect();
    match parts.as_slice() {
        ["definitions", "v2", name, ..] => Some(format!("#/definitions/v2/{name}")),
        ["definitions", name, _, ..] => Some(format!("#/definitions/{name}")),
        _ => None,
    }
}

/// The `$ref` of every definition of the bundle (top level and `v2`).
fn definition_refs(v: &Value) -> Vec<String> {
    let Some(defs) = v.get("definitions").and_then(Value::as_object) else { return Vec::new() };
    let mut out = Vec::new();
    for (name, schema) in defs {
        if name == "v2" {
            out.extend(schema.as_object().into_iter().flat_map(|m| m.keys()).map(|k| format!("#/definitions/v2/{k}")));
        } else {
            out.push(format!("#/definitions/{name}"));
        }
    }
    out
}

/// `threadId` -> `ThreadId` -> `thread_id` -> `threadId`: a name that becomes the same Rust
/// name as the original.
fn case_variant(name: &str) -> String {
    let mut chars = name.chars();
    match chars.next() {
        Some(c) if c.is_ascii_lowercase() => c.to_ascii_uppercase().to_string() + chars.as_str(),
        Some(c) if c.is_ascii_uppercase() => c.to_ascii_lowercase().to_string() + chars.as_str(),
        _ => format!("{name}_"),
    }
}

fuzz_target!(|data: &[u8]| {
    if let Ok(text) = std::str::from_utf8(data) {
        if text.trim_start().starts_with('{') {
            let set = SchemaSet { stable: text.to_owned(), experimental: None, codex_version: "0.0.0".into() };
            if text.len() < 64 * 1024 {
                let _ = codex_app_codegen::generate(&set, "fuzz");
            } else {
                let _ = codex_app_codegen::build_ir(&set);
            }
            return;
        }
    }
    let Some((&which, recipe)) = data.split_first() else { return };
    let [stable, experimental] = bundles();
    let stable = mutate(stable, recipe);
    let experimental = if which % 2 == 0 { Some(mutate(experimental, recipe).to_string()) } else { None };
    let set = SchemaSet { stable: stable.to_string(), experimental, codex_version: "0.0.0".into() };
    let _ = codex_app_codegen::build_ir(&set);
});
