//! Rust identifiers from wire names. Every name the generator emits is made here.

use heck::{ToSnakeCase, ToUpperCamelCase};

/// Keywords that can be written as raw identifiers (`r#type`).
const RAW_OK: &[&str] = &[
    "abstract", "as", "async", "await", "become", "box", "break", "const", "continue", "do", "dyn", "else", "enum",
    "extern", "false", "final", "fn", "for", "gen", "if", "impl", "in", "let", "loop", "macro", "match", "mod", "move",
    "mut", "override", "priv", "pub", "ref", "return", "static", "struct", "trait", "true", "try", "type", "typeof",
    "unsafe", "unsized", "use", "virtual", "where", "while", "yield",
];
/// Keywords that cannot be raw identifiers; they get a trailing underscore.
const NOT_RAW: &[&str] = &["self", "Self", "super", "crate", "_"];

/// Names the generated code (and the protocol crate's macros, which resolve names where they
/// expand) uses unqualified, and the protocol crate's own names next to the generated types:
/// a schema type of one of these names would shadow them, so it gets the suffix `Type`.
pub const RESERVED_TYPE_NAMES: &[&str] = &[
    // The std prelude (types, traits and variants).
    "Option", "Some", "None", "Result", "Ok", "Err", "String", "Vec", "Box", "ToOwned", "ToString", "Clone", "Copy",
    "Send", "Sync", "Sized", "Unpin", "Drop", "Fn", "FnMut", "FnOnce", "PartialEq", "PartialOrd", "Eq", "Ord", "AsRef",
    "AsMut", "Into", "From", "Default", "Iterator", "Extend", "IntoIterator", "DoubleEndedIterator",
    "ExactSizeIterator", "TryFrom", "TryInto", "FromIterator", "Debug", "Hash",
    // What the generated files import.
    "BTreeMap", "Value", "Map", "Serialize", "Deserialize", "Deserializer", "Serializer", "MapAccess", "SerializeMap",
    // The protocol crate's own items next to the generated types (lib.rs re-exports).
    "ClientResponse", "ServerResponse", "ClientMessage", "ServerMessage", "Message", "ErrorObject", "ErrorResponse",
    "RawJson", "Response", "TypedClientMessage", "TypedServerMessage", "TypedResponse", "Notification",
    "NotificationVisitor", "Request", "RequestVisitor", "ExperimentalApi", "Inspect", "Inspector",
];

/// The name of the catch-all variant every open enum gets.
pub const CATCH_ALL: &str = "Unrecognized";

/// The prefix of the top-level one of two different definitions of one name (codex 0.60.1
/// to 0.100.0): the namespaced one keeps the name.
pub const V1_PREFIX: &str = "V1";

/// The name of the top-level definition of a name the `v2` namespace also defines.
pub fn v1_type_name(name: &str) -> String {
    type_name(&format!("{V1_PREFIX}{name}"))
}

/// The field that keeps the members of an open object, given the struct's field names:
/// `extra`, or `extra_members` when a member is named `extra`.
pub fn extra_field<S: AsRef<str>>(fields: &[S]) -> &'static str {
    if fields.iter().any(|f| bare(f.as_ref()) == "extra") { "extra_members" } else { "extra" }
}

/// A type name from a definition name or title: [`pascal`], with the suffix `Type` when it
/// would shadow one of the [`RESERVED_TYPE_NAMES`].
pub fn type_name(wire: &str) -> String {
    let name = pascal(wire);
    // `Self` comes out of `pascal` as `Self_`; reserved is the name before that suffix.
    let base = if NOT_RAW.contains(&name.trim_end_matches('_')) { name.trim_end_matches('_') } else { name.as_str() };
    if RESERVED_TYPE_NAMES.contains(&base) || NOT_RAW.contains(&base) {
        format!("{base}Type")
    } else {
        name
    }
}

/// A PascalCase type or variant name from any wire string (`thread/start` -> `ThreadStart`,
/// `on-request` -> `OnRequest`, `Sessionsv2::Foo` -> `Sessionsv2Foo`).
pub fn pascal(wire: &str) -> String {
    let cleaned: String = wire.chars().map(|c| if c.is_ascii_alphanumeric() { c } else { ' ' }).collect();
    let mut name = cleaned.to_upper_camel_case();
    if name.is_empty() {
        name = "Empty".to_owned();
    }
    if name.starts_with(|c: char| c.is_ascii_digit()) {
        name.insert(0, 'V');
    }
    if NOT_RAW.contains(&name.as_str()) {
        name.push('_');
    }
    name
}

/// Variant names for a list of wire values, in order. Values whose PascalCase forms clash get
/// their separators spelled out (`openai/form` -> `OpenaiSlashForm` next to `openaiForm` ->
/// `OpenaiForm`); anything still equal gets a number.
pub fn variants<S: AsRef<str>>(wires: &[S]) -> Vec<String> {
    let plain: Vec<String> = wires.iter().map(|w| pascal(w.as_ref())).collect();
    let mut names: Vec<String> = wires
        .iter()
        .zip(&plain)
        .map(|(w, p)| {
            let clashes = plain.iter().filter(|q| *q == p).count() > 1;
            let has_separator = w.as_ref().chars().any(|c| !c.is_ascii_alphanumeric());
            if clashes && has_separator { pascal(&spell_separators(w.as_ref())) } else { p.clone() }
        })
        .collect();
    dedupe(&mut names);
    names
}

/// [`variants`], where `reserved` (the catch-all variant) is taken: a value that would get
/// that name gets the suffix `Value` (`Unrecognized` -> `UnrecognizedValue`).
pub fn variants_except<S: AsRef<str>>(wires: &[S], reserved: &str) -> Vec<String> {
    let mut names = variants(wires);
    for name in names.iter_mut() {
        if name == reserved {
            name.push_str("Value");
        }
    }
    dedupe_with(&mut names, &[reserved]);
    names
}

fn spell_separators(wire: &str) -> String {
    let mut out = String::new();
    for c in wire.chars() {
        match c {
            '/' => out.push_str(" slash "),
            '-' => out.push_str(" dash "),
            '.' => out.push_str(" dot "),
            '_' => out.push_str(" underscore "),
            ':' => out.push_str(" colon "),
            ' ' => out.push_str(" space "),
            c => out.push(c),
        }
    }
    out
}

/// A snake_case field name, as it is written in Rust source (`r#type` for keywords).
pub fn field(wire: &str) -> String {
    let cleaned: String = wire.chars().map(|c| if c.is_ascii_alphanumeric() || c == '_' { c } else { ' ' }).collect();
    let mut name = cleaned.to_snake_case();
    if name.is_empty() {
        name = "field".to_owned();
    }
    if name.starts_with(|c: char| c.is_ascii_digit()) {
        name.insert(0, '_');
    }
    if RAW_OK.contains(&name.as_str()) {
        return format!("r#{name}");
    }
    if NOT_RAW.contains(&name.as_str()) {
        name.push('_');
    }
    name
}

/// snake_case method names for a list of wire names (`item/commandExecution/requestApproval`
/// -> `item_command_execution_request_approval`), in order, unique among themselves and
/// against `taken` (the names of other methods of the same trait): a later name that equals an
/// earlier one after case conversion gets `2`, `3`, ...
pub fn methods<S: AsRef<str>>(wires: &[S], taken: &[&str]) -> Vec<String> {
    let mut names: Vec<String> = taken.iter().map(|t| (*t).to_owned()).chain(wires.iter().map(|w| field(w.as_ref()))).collect();
    dedupe(&mut names);
    names.split_off(taken.len())
}

/// The name without a `r#` prefix, for comparisons.
pub fn bare(ident: &str) -> &str {
    ident.strip_prefix("r#").unwrap_or(ident)
}

/// Makes `names` unique in order by appending `2`, `3`, ... to later duplicates.
/// Returns the positions that had to be renamed, so callers can report them.
pub fn dedupe(names: &mut [String]) -> Vec<usize> {
    dedupe_with(names, &[])
}

/// [`dedupe`], with `taken` names that no entry may have (the catch-all variant, a struct's
/// field for open members).
pub fn dedupe_with(names: &mut [String], taken: &[&str]) -> Vec<usize> {
    let mut seen: std::collections::BTreeSet<String> = taken.iter().map(|t| (*t).to_owned()).collect();
    let mut renamed = Vec::new();
    for (i, name) in names.iter_mut().enumerate() {
        if !seen.insert(bare(name).to_owned()) {
            let base = name.clone();
            let mut n = 2;
            while !seen.insert(format!("{}{n}", bare(&base))) {
                n += 1;
            }
            *name = format!("{base}{n}");
            renamed.push(i);
        }
    }
    renamed
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pascal_cases() {
        assert_eq!(pascal("thread/start"), "ThreadStart");
        assert_eq!(pascal("on-request"), "OnRequest");
        assert_eq!(pascal("project_roots"), "ProjectRoots");
        assert_eq!(pascal("openai/form"), "OpenaiForm");
        assert_eq!(pascal("mcpServer/oauthLogin/completed"), "McpServerOauthLoginCompleted");
        assert_eq!(pascal("Sessionsv2::AccountSessionsSwitchResponse"), "Sessionsv2AccountSessionsSwitchResponse");
        assert_eq!(pascal("5h"), "V5h");
        assert_eq!(pascal(""), "Empty");
        assert_eq!(pascal("self"), "Self_");
    }

    #[test]
    fn field_names() {
        assert_eq!(field("threadId"), "thread_id");
        assert_eq!(field("type"), "r#type");
        assert_eq!(field("_meta"), "meta");
        assert_eq!(field("self"), "self_");
        assert_eq!(field("image_url"), "image_url");
        assert_eq!(field("httpStatusCode"), "http_status_code");
    }

    #[test]
    fn clashing_variants_spell_separators() {
        assert_eq!(variants(&["form", "openai/form", "openaiForm"]), ["Form", "OpenaiSlashForm", "OpenaiForm"]);
        assert_eq!(variants(&["on-request", "never"]), ["OnRequest", "Never"]);
        assert_eq!(variants(&["a", "A"]), ["A", "A2"]);
    }

    #[test]
    fn reserved_names_get_a_suffix() {
        assert_eq!(type_name("Option"), "OptionType");
        assert_eq!(type_name("value"), "ValueType");
        assert_eq!(type_name("ThreadStartParams"), "ThreadStartParams");
        assert_eq!(variants_except(&["unrecognized", "known"], "Unrecognized"), ["UnrecognizedValue", "Known"]);
        assert_eq!(variants_except(&["unrecognized", "unrecognizedValue"], "Unrecognized"), ["UnrecognizedValue", "UnrecognizedValue2"]);
    }

    #[test]
    fn method_names() {
        let wires = ["item/commandExecution/requestApproval", "applyPatchApproval", "other", "apply/patchApproval", "type"];
        assert_eq!(
            methods(&wires, &["other", "handle"]),
            ["item_command_execution_request_approval", "apply_patch_approval", "other2", "apply_patch_approval2", "r#type"]
        );
        assert!(methods::<&str>(&[], &["other"]).is_empty());
    }

    #[test]
    fn dedupe_appends_numbers() {
        let mut v = vec!["a".to_owned(), "b".to_owned(), "a".to_owned(), "a".to_owned()];
        assert_eq!(dedupe(&mut v), vec![2, 3]);
        assert_eq!(v, ["a", "b", "a2", "a3"]);
    }
}
