//! The generator's schema parser and lowering on mutated bundles: an error, never a panic.
//!
//! The input is either a whole bundle (JSON text: the seeds are the construct schemas of
//! `codegen/tests/constructs` and the vendored bundles), or a recipe of mutations applied to
//! one of the vendored bundles: each 4 bytes pick a node (by its index in a walk of the
//! bundle), an operation (replace it by another node's value, a scalar, an empty object or
//! array; delete it; rename a member) and an operand, at most 16 of them. Small inputs go through the whole
//! generator (emit and format too); the vendored bundles through `build_ir`.
#![no_main]

use std::sync::OnceLock;

use codex_app_codegen::SchemaSet;
use libfuzzer_sys::fuzz_target;
use serde_json::{json, Value};

const STABLE: &str = include_str!("../../vendor-schemas/stable/codex_app_server_protocol.schemas.json");
const EXPERIMENTAL: &str = include_str!("../../vendor-schemas/experimental/codex_app_server_protocol.schemas.json");

fn bundles() -> &'static [Value; 2] {
    static CELL: OnceLock<[Value; 2]> = OnceLock::new();
    CELL.get_or_init(|| [serde_json::from_str(STABLE).expect("JSON"), serde_json::from_str(EXPERIMENTAL).expect("JSON")])
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
        let replacement = match op[0] % 9 {
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
                let names = ["type", "enum", "const", "$ref", "properties", "required", "oneOf", "anyOf", "items", "title"];
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
