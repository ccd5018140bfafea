//! Rust identifiers from wire names. Every name the generator emits is made here.

use heck::{ToSnakeCase, ToUpperCamelCase};

use crate::settings::Settings;

/// Keywords that can be written as raw identifiers (`r#type`).
const RAW_OK: &[&str] = &[
    "abstract", "as", "async", "await", "become", "box", "break", "const", "continue", "do", "dyn", "else", "enum",
    "extern", "false", "final", "fn", "for", "gen", "if", "impl", "in", "let", "loop", "macro", "match", "mod", "move",
    "mut", "override", "priv", "pub", "ref", "return", "static", "struct", "trait", "true", "try", "type", "typeof",
    "unsafe", "unsized", "use", "virtual", "where", "while", "yield",
];
/// Keywords that cannot be raw identifiers; they get a trailing underscore.
const NOT_RAW: &[&str] = &["self", "Self", "super", "crate", "_"];

/// The name of the top-level definition of a name the `v2` namespace also defines
/// ([`Settings::v1_prefix`]).
pub fn v1_type_name(settings: &Settings, name: &str) -> String {
    type_name(settings, &format!("{}{name}", settings.v1_prefix))
}

/// Whether `name` is the plain or the [`v1_type_name`] form of the definition `definition`
/// (before the suffix of reserved names and numbering).
pub fn is_named_after(settings: &Settings, name: &str, definition: &str) -> bool {
    let base = pascal(definition);
    name == base || name.strip_prefix(settings.v1_prefix.as_str()) == Some(base.as_str())
}

/// The field that keeps the members of an open object, given the struct's field names:
/// `extra`, or `extra_members` when a member is named `extra`.
pub fn extra_field<S: AsRef<str>>(fields: &[S]) -> &'static str {
    if fields.iter().any(|f| bare(f.as_ref()) == "extra") {
        "extra_members"
    } else {
        "extra"
    }
}

/// A type name from a definition name or title: [`pascal`], with the suffix `Type` when it
/// would shadow one of the [`Settings::reserved_type_names`].
pub fn type_name(settings: &Settings, wire: &str) -> String {
    let name = pascal(wire);
    // `Self` comes out of `pascal` as `Self_`; reserved is the name before that suffix.
    let base = if NOT_RAW.contains(&name.trim_end_matches('_')) { name.trim_end_matches('_') } else { name.as_str() };
    if settings.reserved_type_names.iter().any(|r| r == base) || NOT_RAW.contains(&base) {
        format!("{base}Type")
    } else {
        name
    }
}

/// A title without the namespace codex glues to its first part: `Chatgptv2::LoginAccountParams`
/// (an arm `Chatgpt` of the `v2` definition `LoginAccountParams`) -> `ChatgptLoginAccountParams`.
/// Only a namespace of the bundle's definitions (`namespaces`) is taken off, and only where it
/// ends the part before a `::`.
pub fn without_namespace(title: &str, namespaces: &[&str]) -> String {
    let Some((head, tail)) = title.split_once("::") else { return title.to_owned() };
    let head = namespaces.iter().find_map(|ns| head.strip_suffix(ns).filter(|h| !h.is_empty())).unwrap_or(head);
    format!("{head}{tail}")
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
            if clashes && has_separator {
                pascal(&spell_separators(w.as_ref()))
            } else {
                p.clone()
            }
        })
        .collect();
    dedupe(&mut names);
    names
}

/// [`variants`], where `reserved` (the catch-all variant) is taken: a value that would get
/// that name gets the suffix `Value` (`Unrecognized` -> `UnrecognizedValue`).
pub fn variants_except<S: AsRef<str>>(wires: &[S], reserved: &str) -> Vec<String> {
    let mut names = variants(wires);
    keep_free(&mut names, reserved);
    names
}

/// `reserved` kept free among `names`: one equal to it gets the suffix `Value`, then the names
/// are made unique without it.
fn keep_free(names: &mut [String], reserved: &str) {
    for name in names.iter_mut() {
        if name == reserved {
            name.push_str("Value");
        }
    }
    dedupe_with(names, &[reserved]);
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
    let mut names: Vec<String> =
        taken.iter().map(|t| (*t).to_owned()).chain(wires.iter().map(|w| field(w.as_ref()))).collect();
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
            while !seen.insert(numbered(bare(&base), n)) {
                n += 1;
            }
            *name = numbered(&base, n);
            renamed.push(i);
        }
    }
    renamed
}

/// The `n`th of several things that would share `name` (`Foo2`, `Foo3`, ...).
pub fn numbered(name: &str, n: usize) -> String {
    format!("{name}{n}")
}

/// Where an inline schema sits, for the name it gets without a title: its parent's name (a
/// type name, or the name a parent of its own would get) and a word for the position.
#[derive(Debug, Clone, Copy)]
pub enum Inline<'a> {
    /// A member, by its wire name: `ThreadStartParams` + `sandbox` -> `ThreadStartParamsSandbox`.
    Member(&'a str),
    /// An array's items, and the further items of a tuple: `+ Item`.
    Item,
    /// A map's values, and the union a named nullable definition wraps: `+ Value`.
    Value,
    /// A tuple's position, counted from 1: `+ 1`.
    Position(usize),
    /// The schema of the members an open struct keeps: `+ Extra`.
    Extra,
    /// One JSON type of a schema of several types, by its arm's variant: `+ String`.
    TypeArm(&'a str),
    /// A union arm, by its variant: `Variant +` (tagged payloads, external and untagged arms).
    Arm(&'a str),
    /// A method's params, by the method's variant: `+ Params`.
    Params,
}

/// The name hint of an inline schema at `at` in `parent` (made a type name by [`type_name`]).
pub fn inline(parent: &str, at: Inline) -> String {
    match at {
        Inline::Member(wire) => format!("{parent}{}", pascal(wire)),
        Inline::Item => format!("{parent}Item"),
        Inline::Value => format!("{parent}Value"),
        Inline::Position(n) => format!("{parent}{n}"),
        Inline::Extra => format!("{parent}Extra"),
        Inline::TypeArm(variant) => format!("{parent}{variant}"),
        Inline::Arm(variant) => format!("{variant}{parent}"),
        Inline::Params => format!("{parent}Params"),
    }
}

/// What an untagged union's arm is named after.
#[derive(Debug, Clone, Copy)]
pub enum ArmHint<'a> {
    /// A `$ref` arm: the Rust name of the definition.
    Reference(&'a str),
    /// An object schema: its title, its first required member (else its first member), its
    /// JSON type when it has one.
    Schema { title: Option<&'a str>, key: Option<&'a str>, json_type: Option<&'a str> },
    /// Anything else (a boolean schema, a `$ref` into a definition): `Any`.
    Other,
}

/// Variant names for an untagged union's arms, in order: a referenced definition's name; a
/// title without the union's name around it; the first member; the JSON type; `Value`. Words
/// every name starts or ends with are dropped when each keeps one
/// (`[McpElicitationStringSchema, McpElicitationNumberSchema]` -> `[String, Number]`), then
/// the catch-all is kept free and the names made unique.
pub fn untagged_variants(arms: &[ArmHint], union: &str, catch_all: &str) -> Vec<String> {
    let mut names: Vec<String> = arms.iter().map(|arm| untagged_variant(arm, union)).collect();
    strip_common_affixes(&mut names);
    keep_free(&mut names, catch_all);
    names
}

fn untagged_variant(arm: &ArmHint, union: &str) -> String {
    let (title, key, json_type) = match arm {
        ArmHint::Reference(name) => return (*name).to_owned(),
        ArmHint::Other => return "Any".to_owned(),
        ArmHint::Schema { title, key, json_type } => (title, key, json_type),
    };
    if let Some(title) = title {
        let t = pascal(title);
        let stripped = t.strip_suffix(union).or_else(|| t.strip_prefix(union)).unwrap_or(&t);
        if !stripped.is_empty() {
            return stripped.to_owned();
        }
    }
    match (key, json_type) {
        (Some(key), _) => pascal(key),
        (None, Some(t)) => pascal(t),
        (None, None) => "Value".to_owned(),
    }
}

fn strip_common_affixes(names: &mut [String]) {
    if names.len() < 2 {
        return;
    }
    let words: Vec<Vec<String>> = names.iter().map(|n| split_words(n)).collect();
    let prefix = (0..).take_while(|&i| words.iter().all(|w| w.len() > i && w[i] == words[0][i])).count();
    let suffix = (0..)
        .take_while(|&i| words.iter().all(|w| w.len() > i && w[w.len() - 1 - i] == words[0][words[0].len() - 1 - i]))
        .count();
    if words.iter().all(|w| w.len() > prefix + suffix) {
        for (name, w) in names.iter_mut().zip(&words) {
            *name = w[prefix..w.len() - suffix].concat();
        }
    }
}

/// The words of a PascalCase name, each starting at a capital.
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

/// The JSON-RPC id type the hand-written envelope uses, and its arms (a string or an integer).
pub const REQUEST_ID: &str = "RequestId";
pub const REQUEST_ID_ARMS: [&str; 2] = ["String", "Integer"];

/// The response type the naming convention pairs with a params type (`FooParams` ->
/// `FooResponse`), if the params type is named that way.
pub fn response_by_params(params: &str) -> Option<String> {
    params.strip_suffix("Params").map(|base| format!("{base}Response"))
}

/// The response type named after a method, by the method's variant (`ThreadSearchStream` ->
/// `ThreadSearchStreamResponse`).
pub fn response_by_method(settings: &Settings, variant: &str) -> String {
    type_name(settings, &format!("{variant}Response"))
}

/// A response type's name without its `Response` (`GetAccountRateLimits`); `None` for a name
/// that is not a response's.
pub fn response_base(name: &str) -> Option<&str> {
    name.strip_suffix("Response").filter(|base| !base.is_empty())
}

/// Whether a type is named like a response (`*Response`).
pub fn is_response(name: &str) -> bool {
    name.ends_with("Response")
}

/// The lowercase words of a wire name or type name (`account/rateLimits/read`: account, rate,
/// limits, read; `GetAccountRateLimits`: get, account, rate, limits).
pub fn words(name: &str) -> Vec<String> {
    name.split(|c: char| !c.is_ascii_alphanumeric())
        .flat_map(|part| part.to_snake_case().split('_').map(str::to_owned).collect::<Vec<_>>())
        .filter(|w| !w.is_empty())
        .collect()
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
        let settings = Settings::with_decisions(Default::default());
        assert_eq!(type_name(&settings, "Option"), "OptionType");
        assert_eq!(type_name(&settings, "value"), "ValueType");
        assert_eq!(type_name(&settings, "ThreadStartParams"), "ThreadStartParams");
        assert_eq!(v1_type_name(&settings, "Thread"), "V1Thread");
        let other = Settings { reserved_type_names: vec!["Thread".into()], v1_prefix: "Legacy".into(), ..settings };
        assert_eq!(type_name(&other, "Option"), "Option");
        assert_eq!(type_name(&other, "thread"), "ThreadType");
        assert_eq!(v1_type_name(&other, "Thread"), "LegacyThread");
        assert_eq!(variants_except(&["unrecognized", "known"], "Unrecognized"), ["UnrecognizedValue", "Known"]);
        assert_eq!(
            variants_except(&["unrecognized", "unrecognizedValue"], "Unrecognized"),
            ["UnrecognizedValue", "UnrecognizedValue2"]
        );
    }

    #[test]
    fn untagged_variant_names() {
        let schema = |title, key, json_type| ArmHint::Schema { title, key, json_type };
        let affixes = [
            schema(Some("McpElicitationStringSchema"), None, None),
            schema(Some("McpElicitationNumberSchema"), None, None),
        ];
        assert_eq!(untagged_variants(&affixes, "Primitive", "Unrecognized"), ["String", "Number"]);
        let kinds = [
            ArmHint::Reference("Foo"),
            ArmHint::Other,
            schema(None, Some("unrecognized"), None),
            schema(None, None, Some("array")),
        ];
        assert_eq!(untagged_variants(&kinds, "U", "Unrecognized"), ["Foo", "Any", "UnrecognizedValue", "Array"]);
        assert_eq!(
            untagged_variants(&[schema(Some("UItem"), None, None), schema(None, None, None)], "U", "Unrecognized"),
            ["Item", "Value"]
        );
    }

    #[test]
    fn method_names() {
        let wires =
            ["item/commandExecution/requestApproval", "applyPatchApproval", "other", "apply/patchApproval", "type"];
        assert_eq!(
            methods(&wires, &["other", "handle"]),
            [
                "item_command_execution_request_approval",
                "apply_patch_approval",
                "other2",
                "apply_patch_approval2",
                "r#type"
            ]
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
