//! What the codegen tests share.

use codex_app_codegen::SchemaSet;
use serde_json::Value;

/// A construct input: a bundle, or `{"stable": bundle, "experimental": bundle}` for the
/// experimental marks; `codex_version` names the release in the generated files.
pub fn schema_set(path: &std::path::Path, codex_version: &str) -> SchemaSet {
    let input: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let codex_version = codex_version.to_owned();
    match (input.get("stable"), input.get("experimental")) {
        (Some(s), e) => SchemaSet { stable: s.to_string(), experimental: e.map(Value::to_string), codex_version },
        _ => SchemaSet { stable: input.to_string(), experimental: None, codex_version },
    }
}
