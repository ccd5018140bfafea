//! Which functions of the workspace use what a release broke: for each breaking change of the
//! changelog, the Rust names that reach it (from the IR of the supported range, which still
//! types what the newest release removed, so the code that uses it compiles), and the functions
//! whose bodies name them.
//!
//! The range keeps tests written for an older release of it compiling (`written_for_codex!`):
//! a member the new release removed is still a member, marked with its last release. So the
//! compiler says nothing about them, and this reads the sources instead, as
//! [`super::workspace`] does for the invocations: a function uses a change when its body names
//! every word of one of the change's [`Words`] (the type and its member, the variant of a
//! removed method or its wire name, ...). It finds a use through the Rust names the code
//! writes; a function that reaches a member without naming its type (`response.thread.status`)
//! is found only through a change that names the member's type.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use codex_app_codegen::diff::{Change, Kind, Report};
use codex_app_codegen::ir::{Direction, Ir, TypeKind};

/// One way code names a change: every word must appear (identifiers, or a string literal
/// written with its quotes).
pub type Words = Vec<String>;

/// A function that uses a breaking change.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Use {
    /// Relative to the workspace root.
    pub file: PathBuf,
    /// The line of its `fn`.
    pub line: usize,
    pub function: String,
    /// Marked `#[test]` (or `#[tokio::test]`, ...).
    pub test: bool,
}

/// A breaking change and what uses it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Broken {
    /// The changelog's line for it.
    pub change: String,
    pub uses: Vec<Use>,
}

/// The breaking changes of `report`, each with the functions of `files` (relative to `root`)
/// that use it.
pub fn broken(report: &Report, ir: &Ir, root: &Path, files: &[PathBuf]) -> Vec<Broken> {
    let functions: Vec<(PathBuf, Function)> = files
        .iter()
        .filter_map(|f| Some((f, std::fs::read_to_string(root.join(f)).ok()?)))
        .flat_map(|(f, text)| functions(&text).into_iter().map(move |func| (f.clone(), func)))
        .collect();
    report
        .changes
        .iter()
        .filter(|c| c.is_breaking())
        .map(|change| {
            let alternatives = words(change, ir);
            let hits = |body: &Body| alternatives.iter().any(|words| words.iter().all(|w| body.has(w)));
            let mut uses: Vec<Use> = functions
                .iter()
                .filter(|(_, f)| hits(&f.body))
                // The innermost function that names it: not the one around it as well.
                .filter(|(file, f)| {
                    !functions
                        .iter()
                        .any(|(other_file, g)| other_file == file && g.span != f.span && f.contains(g) && hits(&g.body))
                })
                .map(|(file, f)| Use { file: file.clone(), line: f.line, function: f.name.clone(), test: f.test })
                .collect();
            uses.sort();
            uses.dedup();
            Broken { change: format!("{}: {}", change.path, change.sentence()), uses }
        })
        .collect()
}

/// The ways code names what `change` is about, from the range's IR.
pub fn words(change: &Change, ir: &Ir) -> Vec<Words> {
    let path = change.path.as_str();
    // A method's own change: `thread/start`, `thread/start params`.
    if !path.starts_with(|c: char| c.is_ascii_uppercase()) {
        let wire = path.split(' ').next().unwrap_or(path);
        let mut out = vec![vec![format!("{wire:?}")]];
        let rust: BTreeSet<&str> = Direction::ALL
            .iter()
            .flat_map(|d| ir.methods(*d))
            .filter(|m| m.wire == wire)
            .map(|m| m.rust.as_str())
            .collect();
        for r in rust {
            out.push(vec![r.to_owned()]);
            out.push(vec![snake(r)]);
        }
        return out;
    }
    let owner = path.split(['.', ':', '[', '{']).next().unwrap_or(path).to_owned();
    let member = path.rsplit_once('.').map(|(_, m)| m.trim_end_matches(['[', ']', '{', '}']));
    // The params of a client request: also the code that sends that method by its name (a
    // handle whose params no release lacks is typed; the others are written as JSON).
    let sent: Vec<Words> = ir
        .client_requests
        .iter()
        .filter(|m| {
            m.params.ty().is_some_and(|t| {
                matches!(t, codex_app_codegen::ir::Ty::Named(n)
                    if *n == owner || ir.types.get(n).is_some_and(|d| d.schema == owner))
            })
        })
        .map(|m| vec![format!("{:?}", m.wire)])
        .collect();
    let mut out = of_type(change, ir, owner, member);
    out.extend(sent);
    out
}

/// The ways code names a change of the type `owner` (or of its `member`).
fn of_type(change: &Change, ir: &Ir, owner: String, member: Option<&str>) -> Vec<Words> {
    match (&change.kind, member) {
        // A value or variant: the enum it is in, and its variant.
        (Kind::ValueRemoved { value } | Kind::ValueRenamed { old: value, .. } | Kind::VariantRemoved { value }, _) => {
            let mut out: Vec<Words> = Vec::new();
            for (name, def) in &ir.types {
                let variants: Vec<&str> = match &def.kind {
                    TypeKind::StringEnum(e) => {
                        e.values.iter().filter(|v| &v.wire == value).map(|v| v.rust.as_str()).collect()
                    }
                    TypeKind::Tagged(t) => {
                        t.arms.iter().filter(|a| &a.wire == value).map(|a| a.rust.as_str()).collect()
                    }
                    TypeKind::External(e) => {
                        e.arms.iter().filter(|a| &a.wire == value).map(|a| a.rust.as_str()).collect()
                    }
                    TypeKind::Untagged(u) => {
                        u.arms.iter().filter(|a| &a.rust == value).map(|a| a.rust.as_str()).collect()
                    }
                    _ => Vec::new(),
                };
                // The enum the path leads to: the owner itself or a type named from it.
                if name.starts_with(&owner) {
                    out.extend(variants.into_iter().map(|v| vec![name.clone(), v.to_owned()]));
                }
            }
            if out.is_empty() {
                out.push(vec![owner]);
            }
            out
        }
        // A required member added, or a member that became required: every value of the type
        // a client sends must carry it, and the code that builds one need not name it.
        (Kind::FieldAdded { .. }, _) => vec![vec![owner]],
        (Kind::PresenceChanged { new, .. }, _) if new.starts_with("required") => vec![vec![owner]],
        // A member of the owner, or of a type named from it (an inline type).
        (_, Some(member)) => {
            let mut out: Vec<Words> = Vec::new();
            for (name, def) in &ir.types {
                let TypeKind::Struct(s) = &def.kind else { continue };
                if !name.starts_with(&owner) {
                    continue;
                }
                out.extend(s.fields.iter().filter(|f| f.wire == member).map(|f| vec![name.clone(), f.rust.clone()]));
            }
            if out.is_empty() {
                out.push(vec![owner]);
            }
            out
        }
        // The type itself.
        _ => vec![vec![owner]],
    }
}

/// `ThreadList` -> `thread_list`.
fn snake(camel: &str) -> String {
    let mut out = String::new();
    for (i, c) in camel.chars().enumerate() {
        if c.is_ascii_uppercase() {
            if i > 0 {
                out.push('_');
            }
            out.push(c.to_ascii_lowercase());
        } else {
            out.push(c);
        }
    }
    out
}

/// What a function's body names: its identifiers, and its text for string literals.
#[derive(Debug)]
struct Body {
    idents: BTreeSet<String>,
    text: String,
}

impl Body {
    fn new(text: &str) -> Body {
        let idents = text
            .split(|c: char| !(c.is_alphanumeric() || c == '_'))
            .filter(|w| !w.is_empty())
            .map(str::to_owned)
            .collect();
        Body { idents, text: text.to_owned() }
    }

    fn has(&self, word: &str) -> bool {
        if word.starts_with('"') {
            self.text.contains(word)
        } else {
            self.idents.contains(word)
        }
    }
}

/// A function of a source file.
#[derive(Debug)]
struct Function {
    name: String,
    /// The line of its `fn` (1-based).
    line: usize,
    test: bool,
    /// Its body's byte range in the file.
    span: (usize, usize),
    body: Body,
}

impl Function {
    fn contains(&self, other: &Function) -> bool {
        self.span.0 <= other.span.0 && other.span.1 <= self.span.1
    }
}

/// Every function with a body in `text`: `fn NAME`, its body from the first `{` after it to
/// the matching `}` (braces in strings, chars and comments do not count), and whether an
/// attribute right above it names `test`.
fn functions(text: &str) -> Vec<Function> {
    let code = blank_literals(text);
    let bytes = code.as_bytes();
    let mut out = Vec::new();
    let mut at = 0;
    while let Some(found) = code[at..].find("fn ") {
        let start = at + found;
        at = start + 3;
        let before_ok = start == 0 || !(bytes[start - 1].is_ascii_alphanumeric() || bytes[start - 1] == b'_');
        if !before_ok {
            continue;
        }
        let rest = &code[start + 3..];
        let name: String = rest.trim_start().chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
        if name.is_empty() {
            continue;
        }
        // The body: the first `{` before any `;` (a declaration without a body has none).
        let Some(open) = code[start..].find(['{', ';']).map(|i| start + i).filter(|&i| bytes[i] == b'{') else {
            continue;
        };
        let mut depth = 0usize;
        let mut close = None;
        for (i, b) in bytes.iter().enumerate().skip(open) {
            match b {
                b'{' => depth += 1,
                b'}' => {
                    depth -= 1;
                    if depth == 0 {
                        close = Some(i);
                        break;
                    }
                }
                _ => {}
            }
        }
        let Some(close) = close else { continue };
        let line = text[..start].matches('\n').count() + 1;
        out.push(Function {
            name,
            line,
            test: is_test(&code[..start]),
            span: (open, close),
            body: Body::new(&text[open..=close]),
        });
    }
    out
}

/// Whether the attributes right before a `fn` (after the previous item) name a test.
fn is_test(before: &str) -> bool {
    let mut lines = before.lines().rev();
    // The `fn` line's own start (`pub async `), then the lines of attributes above it.
    let first = lines.next().unwrap_or_default();
    let attrs = std::iter::once(first)
        .chain(lines.take_while(|l| {
            let l = l.trim();
            l.starts_with("#[") || l.starts_with("#![") || l.is_empty() || l.ends_with(")]") || l.ends_with(',')
        }))
        .collect::<Vec<_>>()
        .join("\n");
    attrs.contains("test]") || attrs.contains("test(") || attrs.contains("::test")
}

/// `text` with the contents of comments, string and char literals replaced by spaces (same
/// length, same lines), so braces and `fn` in them do not count.
fn blank_literals(text: &str) -> String {
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    // Pushes `c` blanked but keeping its UTF-8 length (so byte offsets match the text).
    let push_blank = |out: &mut String, c: char| {
        if c == '\n' {
            out.push('\n');
        } else {
            out.extend(std::iter::repeat_n(' ', c.len_utf8()));
        }
    };
    while i < chars.len() {
        let c = chars[i];
        let next = chars.get(i + 1).copied();
        if c == '/' && next == Some('/') {
            while i < chars.len() && chars[i] != '\n' {
                push_blank(&mut out, chars[i]);
                i += 1;
            }
        } else if c == '/' && next == Some('*') {
            let mut depth = 0;
            while i < chars.len() {
                if chars[i] == '/' && chars.get(i + 1) == Some(&'*') {
                    depth += 1;
                    out.push_str("  ");
                    i += 2;
                } else if chars[i] == '*' && chars.get(i + 1) == Some(&'/') {
                    depth -= 1;
                    out.push_str("  ");
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    push_blank(&mut out, chars[i]);
                    i += 1;
                }
            }
        } else if c == 'r' && (next == Some('"') || next == Some('#')) && !ident_before(&chars, i) {
            // A raw string: r"..." or r#"..."#.
            let mut j = i + 1;
            let mut hashes = 0;
            while chars.get(j) == Some(&'#') {
                hashes += 1;
                j += 1;
            }
            if chars.get(j) != Some(&'"') {
                out.push(c);
                i += 1;
                continue;
            }
            let end: String = std::iter::once('"').chain(std::iter::repeat_n('#', hashes)).collect();
            let rest: String = chars[j + 1..].iter().collect();
            let len = rest.find(&end).map_or(chars.len() - j - 1, |k| rest[..k].chars().count());
            for &ch in &chars[i..j + 1] {
                out.push(ch);
            }
            for &ch in &chars[j + 1..j + 1 + len] {
                push_blank(&mut out, ch);
            }
            i = j + 1 + len;
            // The closing quote and hashes, when there.
            for _ in 0..=hashes {
                if i < chars.len() {
                    out.push(chars[i]);
                    i += 1;
                }
            }
        } else if c == '"' {
            out.push('"');
            i += 1;
            while i < chars.len() && chars[i] != '"' {
                if chars[i] == '\\' && i + 1 < chars.len() {
                    push_blank(&mut out, chars[i]);
                    i += 1;
                }
                push_blank(&mut out, chars[i]);
                i += 1;
            }
            if i < chars.len() {
                out.push('"');
                i += 1;
            }
        } else if c == '\'' && (chars.get(i + 2) == Some(&'\'') || next == Some('\\')) {
            // A char literal ('{', '\n', '\u{7b}'); a lifetime has no closing quote.
            out.push('\'');
            i += 1;
            while i < chars.len() && chars[i] != '\'' {
                if chars[i] == '\\' {
                    push_blank(&mut out, chars[i]);
                    i += 1;
                }
                if i < chars.len() {
                    push_blank(&mut out, chars[i]);
                    i += 1;
                }
            }
            if i < chars.len() {
                out.push('\'');
                i += 1;
            }
        } else {
            out.push(c);
            i += 1;
        }
    }
    out
}

fn ident_before(chars: &[char], i: usize) -> bool {
    i > 0 && (chars[i - 1].is_alphanumeric() || chars[i - 1] == '_')
}

#[cfg(test)]
mod tests {
    use super::*;

    const SOURCE: &str = r##"
//! fn in_a_comment() { "}" }
use x::ThreadListParams;

#[tokio::test(flavor = "current_thread")]
async fn lists_by_cursor() {
    let p = ThreadListParams { cursor: Some("{".into()), ..Default::default() };
    let c = '{';
    let raw = r#"{"method":"thread/list"}"#;
}

fn helper<'a>(s: &'a str) -> &'a str {
    fn inner() { let _ = "thread/list"; }
    s
}

#[test]
fn other() { let _ = ThreadSortKey::CreatedAt; }

trait T { fn declared(&self); }
"##;

    #[test]
    fn functions_of_a_file() {
        let found: Vec<(String, usize, bool)> =
            functions(SOURCE).into_iter().map(|f| (f.name, f.line, f.test)).collect();
        assert_eq!(
            found,
            [
                ("lists_by_cursor".to_owned(), 6, true),
                ("helper".to_owned(), 12, false),
                ("inner".to_owned(), 13, false),
                ("other".to_owned(), 18, true),
            ]
        );
        let f = functions(SOURCE);
        assert!(f[0].body.has("ThreadListParams") && f[0].body.has("cursor"));
        assert!(f[0].body.has("\"thread/list\""), "a wire name in a raw string");
        assert!(!f[3].body.has("\"thread/list\"") && f[3].body.has("CreatedAt"));
        assert!(f[1].contains(&f[2]));
        assert!(!f[0].contains(&f[1]));
    }

    #[test]
    fn blanked_literals_keep_offsets() {
        let text = "let s = \"é{\"; // }\nlet c = '}';";
        let blanked = blank_literals(text);
        assert_eq!(blanked.len(), text.len());
        assert!(!blanked.contains('{') && !blanked.contains('}'), "{blanked}");
        assert_eq!(blanked.lines().count(), 2);
    }

    #[test]
    fn snake_case_of_a_variant() {
        assert_eq!(snake("ThreadList"), "thread_list");
        assert_eq!(snake("Initialize"), "initialize");
    }

    fn change(path: &str, kind: Kind) -> Change {
        use codex_app_codegen::diff::{Effect, FiledUnder, Severity};
        Change {
            filed_under: FiledUnder::Unused { name: path.split('.').next().unwrap().into(), experimental: false },
            path: path.into(),
            kind,
            experimental: false,
            severity: Severity::Breaking,
            sends: Some(Effect { breaking: true, why: String::new() }),
            receives: None,
        }
    }

    /// The names come from the IR of the vendored range: a member, a value, a method, a type.
    #[test]
    fn the_names_of_a_change_in_the_vendored_range() {
        let (ir, _) = crate::regen::range_ir(&crate::root()).unwrap();
        let field = || Kind::FieldRemoved { ty: "Option<u32>".into(), presence: "optional".into() };
        let list = || vec!["\"thread/list\"".to_owned()];
        assert_eq!(
            words(&change("ThreadListParams.limit", field()), &ir),
            [vec!["ThreadListParams".to_owned(), "limit".to_owned()], list()]
        );
        let added = Kind::FieldAdded { ty: "String".into(), presence: "required".into() };
        assert_eq!(
            words(&change("ThreadListParams.projectId", added), &ir),
            [vec!["ThreadListParams".to_owned()], list()]
        );
        let required = Kind::PresenceChanged {
            old: "optional".into(),
            new: "required".into(),
            old_ty: "Option<u32>".into(),
            new_ty: "u32".into(),
        };
        assert_eq!(
            words(&change("ThreadListParams.limit", required), &ir),
            [vec!["ThreadListParams".to_owned()], list()]
        );
        let optional = Kind::PresenceChanged {
            old: "required".into(),
            new: "optional".into(),
            old_ty: "String".into(),
            new_ty: "Option<String>".into(),
        };
        assert_eq!(
            words(&change("ThreadListParams.limit", optional), &ir),
            [vec!["ThreadListParams".to_owned(), "limit".to_owned()], list()]
        );
        let value = Kind::ValueRemoved { value: "created_at".into() };
        assert_eq!(words(&change("ThreadSortKey", value), &ir), [["ThreadSortKey", "CreatedAt"]]);
        assert_eq!(
            (words(&change("thread/list", Kind::MethodRemoved), &ir)),
            [vec!["\"thread/list\""], vec!["ThreadList"], vec!["thread_list"]]
        );
        let shape = Kind::ShapeChanged { old: "struct".into(), new: "tagged union".into() };
        assert_eq!(words(&change("AgentMessageDisplay", shape), &ir), [["AgentMessageDisplay"]]);
    }

    /// The functions that name a change, innermost, with their file, line and test mark.
    #[test]
    fn functions_that_use_a_change() {
        let (ir, _) = crate::regen::range_ir(&crate::root()).unwrap();
        let root = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(root.path().join("client/tests")).unwrap();
        std::fs::write(root.path().join("client/tests/a.rs"), SOURCE).unwrap();
        std::fs::write(
            root.path().join("client/tests/b.rs"),
            "fn limited() -> ThreadListParams {\n    ThreadListParams { limit: Some(5), ..Default::default() }\n}\n\
             fn unrelated() { let limit = 3; }\n",
        )
        .unwrap();
        let report = codex_app_codegen::diff::Report {
            old_version: "0.171.0".into(),
            new_version: "0.172.0".into(),
            old_has_experimental: true,
            new_has_experimental: true,
            counts: Default::default(),
            changes: vec![
                change(
                    "ThreadListParams.limit",
                    Kind::FieldRemoved { ty: "Option<u32>".into(), presence: "optional".into() },
                ),
                change("thread/list", Kind::MethodRemoved),
                change("ThreadSortKey", Kind::ValueRemoved { value: "created_at".into() }),
            ],
            types: Default::default(),
        };
        let files = [PathBuf::from("client/tests/a.rs"), PathBuf::from("client/tests/b.rs")];
        let found: Vec<(String, Vec<String>)> = broken(&report, &ir, root.path(), &files)
            .into_iter()
            .map(|b| {
                let uses = b
                    .uses
                    .iter()
                    .map(|u| {
                        format!("{}:{} {}{}", u.file.display(), u.line, u.function, if u.test { " (test)" } else { "" })
                    })
                    .collect();
                (b.change, uses)
            })
            .collect();
        assert_eq!(
            found[0].0,
            "ThreadListParams.limit: field `ThreadListParams.limit` removed (was `Option<u32>`) — breaks senders"
        );
        // `limited` names the member; the other two send `thread/list` by name, with params
        // written as JSON that may hold it.
        assert_eq!(
            found[0].1,
            ["client/tests/a.rs:6 lists_by_cursor (test)", "client/tests/a.rs:13 inner", "client/tests/b.rs:1 limited"]
        );
        // `helper` holds `inner`, which names it: only `inner`.
        assert_eq!(found[1].1, ["client/tests/a.rs:6 lists_by_cursor (test)", "client/tests/a.rs:13 inner"]);
        assert_eq!(found[2].1, ["client/tests/a.rs:18 other (test)"]);
    }

    /// A simulated breaking release (0.171.0 without `ThreadListParams.limit`, with a required
    /// `reason` in `ThreadArchiveParams`): the client's handle that sends `thread/archive` is
    /// named, typed or not.
    #[test]
    fn a_breaking_release_names_the_handles_that_send_what_it_broke() {
        use codex_app_codegen::SchemaSet;
        let root = crate::root();
        let old = codex_app_codegen::vendor::read_vendored(&root.join(crate::regen::VENDOR_DIR)).unwrap();
        let edit = |text: &str| {
            let mut bundle: serde_json::Value = serde_json::from_str(text).unwrap();
            let list = bundle.pointer_mut("/definitions/v2/ThreadListParams/properties").unwrap();
            list.as_object_mut().unwrap().remove("limit");
            let archive = bundle.pointer_mut("/definitions/v2/ThreadArchiveParams").unwrap();
            archive["properties"]["reason"] = serde_json::json!({"type": "string"});
            archive["required"].as_array_mut().unwrap().push("reason".into());
            serde_json::to_string_pretty(&bundle).unwrap()
        };
        let new = SchemaSet {
            stable: edit(&old.stable),
            experimental: old.experimental.as_deref().map(edit),
            codex_version: "0.172.0".into(),
        };
        let settings = codex_app_codegen::Settings::codex().unwrap();
        let report = codex_app_codegen::diff::diff_sets_with(&old, &new, &settings).unwrap();
        let (ir, _) = crate::regen::range_ir(&root).unwrap();
        let files: Vec<PathBuf> = std::fs::read_dir(root.join("client/src"))
            .unwrap()
            .map(|e| Path::new("client/src").join(e.unwrap().file_name()))
            .filter(|p| p.extension().is_some_and(|e| e == "rs"))
            .collect();
        let found = broken(&report, &ir, &root, &files);
        let uses_of = |path: &str| -> Vec<String> {
            let b = found.iter().find(|b| b.change.starts_with(path)).unwrap_or_else(|| panic!("{path}: {found:#?}"));
            b.uses.iter().map(|u| format!("{} {}", u.file.display(), u.function)).collect()
        };
        let archive = uses_of("ThreadArchiveParams.reason");
        assert!(archive.iter().any(|u| u.ends_with("thread_archive")), "{archive:?}");
        // The handle sends the params its caller built: what breaks is the caller's code.
        let list = uses_of("ThreadListParams.limit");
        assert!(!list.iter().any(|u| u.ends_with("thread_archive")), "{list:?}");
    }
}
