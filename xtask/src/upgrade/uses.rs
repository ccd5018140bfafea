//! Which functions of the workspace use what a release broke: for each breaking change of the
//! changelog, the Rust names that reach it (from the IR of the supported range, which still
//! types what the newest release removed, so the code that uses it compiles), and the functions
//! whose bodies name them.
//!
//! The range keeps tests written for an older release of it compiling (`written_for_codex!`):
//! a member the new release removed is still a member, marked with its last release. So the
//! compiler says nothing about them, and this parses the sources instead (`syn`: functions,
//! methods as `Type::method`, functions inside functions and inside macros that hold items such
//! as `written_for_codex!`): a function uses a change when its body names every word of one of
//! the change's [`Words`] (the type and its member, the variant of a removed method or its wire
//! name, the wire name of the method whose params it is, ...). It finds a use through the Rust names the code
//! writes; a function that reaches a member without naming its type (`response.thread.status`)
//! is found only through a change that names the member's type.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use codex_app_changelog::{Change, Kind, Report, Root};
use codex_app_codegen::ir::{Direction, Ir, TypeKind};
use proc_macro2::{TokenStream, TokenTree};
use quote::ToTokens;
use syn::ext::IdentExt;
use syn::{Attribute, Block, ImplItem, Item, Signature, Stmt, TraitItem, TraitItemFn};

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
    // Code names the generated Rust type, whatever the schema calls it.
    let (owner, schema) = match &change.path.root {
        // A method's own change: `thread/start`, `thread/start params`.
        Root::Method { wire, .. } => return of_method(wire, ir),
        Root::Type { rust, schema } => (rust.clone(), schema.as_str()),
        Root::Envelope => {
            let union = Direction::ServerNotification.union_name();
            (union.to_owned(), union)
        }
    };
    let member = change.path.last_member();
    // The params of a client request: also the code that sends that method by its name with
    // params written as JSON (`Client::request_raw`, the recorder's scenarios), which names no
    // type. The client's handles send typed params and are found by the type.
    let sent: Vec<Words> = ir
        .client_requests
        .iter()
        .filter(|m| {
            m.params.ty().is_some_and(|t| {
                matches!(t, codex_app_codegen::ir::Ty::Named(n)
                    if *n == owner || ir.types.get(n).is_some_and(|d| d.schema == schema))
            })
        })
        .map(|m| vec![format!("{:?}", m.wire)])
        .collect();
    let mut out = of_type(change, ir, owner, member);
    out.extend(sent);
    out
}

/// The ways code names a method's own change: its wire name, its variant and its handle's name.
fn of_method(wire: &str, ir: &Ir) -> Vec<Words> {
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

/// What a function's body names: its identifiers, and its literals' text (a string literal
/// written with its quotes).
#[derive(Debug, Default)]
struct Body {
    idents: BTreeSet<String>,
    literals: String,
}

impl Body {
    /// Every identifier and literal of `tokens`, macros' included (`json!({...})`).
    fn of(tokens: TokenStream) -> Body {
        fn walk(tokens: TokenStream, body: &mut Body) {
            for tree in tokens {
                match tree {
                    TokenTree::Ident(ident) => {
                        body.idents.insert(ident.unraw().to_string());
                    }
                    TokenTree::Literal(literal) => {
                        body.literals.push_str(&literal.to_string());
                        body.literals.push('\n');
                    }
                    TokenTree::Group(group) => walk(group.stream(), body),
                    TokenTree::Punct(_) => {}
                }
            }
        }
        let mut body = Body::default();
        walk(tokens, &mut body);
        body
    }

    fn has(&self, word: &str) -> bool {
        if word.starts_with('"') {
            self.literals.contains(word)
        } else {
            self.idents.contains(word)
        }
    }
}

/// A function of a source file.
#[derive(Debug)]
struct Function {
    /// `name`, or `Type::name` for a method.
    name: String,
    /// The line of its `fn` (1-based).
    line: usize,
    test: bool,
    /// Its body's start and end (line, column).
    span: ((usize, usize), (usize, usize)),
    body: Body,
}

impl Function {
    fn contains(&self, other: &Function) -> bool {
        self.span.0 <= other.span.0 && other.span.1 <= self.span.1
    }
}

/// Every function with a body in the Rust source `text`, as `syn` parses it: free functions,
/// methods (of impls and traits), functions inside functions and modules, and the items of
/// macro invocations that hold items (`written_for_codex! { "0.171.0", ... }`). A file that
/// does not parse has none.
fn functions(text: &str) -> Vec<Function> {
    let Ok(file) = syn::parse_file(text) else { return Vec::new() };
    let mut out = Vec::new();
    items(&file.items, None, &mut out);
    out
}

fn items(items: &[Item], owner: Option<&str>, out: &mut Vec<Function>) {
    for item in items {
        match item {
            Item::Fn(f) => function(&f.attrs, &f.sig, &f.block, owner, out),
            Item::Impl(imp) => {
                let ty = imp.self_ty.to_token_stream().to_string().replace(' ', "");
                for item in &imp.items {
                    if let ImplItem::Fn(f) = item {
                        function(&f.attrs, &f.sig, &f.block, Some(&ty), out);
                    }
                }
            }
            Item::Trait(t) => {
                for item in &t.items {
                    if let TraitItem::Fn(TraitItemFn { attrs, sig, default: Some(block), .. }) = item {
                        function(attrs, sig, block, Some(&t.ident.to_string()), out);
                    }
                }
            }
            Item::Mod(m) => {
                if let Some((_, content)) = &m.content {
                    self::items(content, None, out);
                }
            }
            Item::Macro(m) => self::items(&in_macro(m.mac.tokens.clone()), owner, out),
            _ => {}
        }
    }
}

/// The items among a macro invocation's tokens: each token tree that does not start an item
/// is skipped.
fn in_macro(tokens: TokenStream) -> Vec<Item> {
    let parser = |input: syn::parse::ParseStream| {
        let mut found = Vec::new();
        while !input.is_empty() {
            if input.fork().parse::<Item>().is_ok() {
                found.push(input.parse::<Item>()?);
            } else {
                input.parse::<TokenTree>()?;
            }
        }
        Ok(found)
    };
    syn::parse::Parser::parse2(parser, tokens).unwrap_or_default()
}

fn function(attrs: &[Attribute], sig: &Signature, block: &Block, owner: Option<&str>, out: &mut Vec<Function>) {
    let name = match owner {
        Some(owner) => format!("{owner}::{}", sig.ident),
        None => sig.ident.to_string(),
    };
    let span = block.brace_token.span;
    let (open, close) = (span.open().start(), span.close().end());
    out.push(Function {
        name,
        line: sig.fn_token.span.start().line,
        test: attrs.iter().any(|a| a.path().segments.last().is_some_and(|s| s.ident == "test")),
        span: ((open.line, open.column), (close.line, close.column)),
        body: Body::of(block.to_token_stream()),
    });
    // Functions declared in its body, and in the macros of its statements.
    for stmt in &block.stmts {
        match stmt {
            Stmt::Item(item) => items(std::slice::from_ref(item), None, out),
            Stmt::Macro(m) => items(&in_macro(m.mac.tokens.clone()), None, out),
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use codex_app_changelog::{self as diff, Part};

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
    fn methods_and_the_items_of_macros() {
        let text = "impl Client {\n    pub async fn archive(&self) { send(\"thread/archive\") }\n}\n\
                    trait T { fn given(&self) { r#\"x\"#; } }\n\
                    written_for_codex! { \"0.171.0\",\n#[tokio::test]\nasync fn in_a_macro() { let r#type = 1; }\n}\n";
        let found: Vec<(String, usize, bool)> = functions(text).into_iter().map(|f| (f.name, f.line, f.test)).collect();
        assert_eq!(
            found,
            [
                ("Client::archive".to_owned(), 2, false),
                ("T::given".to_owned(), 4, false),
                ("in_a_macro".to_owned(), 7, true)
            ]
        );
        let f = functions(text);
        assert!(f[0].body.has("\"thread/archive\"") && f[0].body.has("send") && !f[0].body.has("archive"));
        assert!(f[2].body.has("type"), "a raw identifier by its name");
        assert!(functions("fn broken( {").is_empty());
    }

    #[test]
    fn snake_case_of_a_variant() {
        assert_eq!(snake("ThreadList"), "thread_list");
        assert_eq!(snake("Initialize"), "initialize");
    }

    /// A definition, whose schema name is its Rust name.
    fn ty(name: &str) -> diff::Path {
        diff::Path::ty(name, name)
    }

    fn change(path: diff::Path, kind: Kind) -> Change {
        use codex_app_changelog::{Effect, FiledUnder, Severity};
        let name = path.rust_type().or(path.method_wire()).unwrap().to_owned();
        Change {
            filed_under: FiledUnder::Unused { name, experimental: false },
            path,
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
        if !crate::regen::tests::the_newest_release_is_vendored() {
            return;
        }
        let (ir, _) = crate::regen::range_ir(&crate::root()).unwrap();
        let field = || Kind::FieldRemoved { ty: "Option<u32>".into(), presence: "optional".into() };
        let list = || vec!["\"thread/list\"".to_owned()];
        assert_eq!(
            words(&change(ty("ThreadListParams").member("limit"), field()), &ir),
            [vec!["ThreadListParams".to_owned(), "limit".to_owned()], list()]
        );
        let added = Kind::FieldAdded { ty: "String".into(), presence: "required".into() };
        assert_eq!(
            words(&change(ty("ThreadListParams").member("projectId"), added), &ir),
            [vec!["ThreadListParams".to_owned()], list()]
        );
        let required = Kind::PresenceChanged {
            old: "optional".into(),
            new: "required".into(),
            old_ty: "Option<u32>".into(),
            new_ty: "u32".into(),
        };
        assert_eq!(
            words(&change(ty("ThreadListParams").member("limit"), required), &ir),
            [vec!["ThreadListParams".to_owned()], list()]
        );
        let optional = Kind::PresenceChanged {
            old: "required".into(),
            new: "optional".into(),
            old_ty: "String".into(),
            new_ty: "Option<String>".into(),
        };
        assert_eq!(
            words(&change(ty("ThreadListParams").member("limit"), optional), &ir),
            [vec!["ThreadListParams".to_owned(), "limit".to_owned()], list()]
        );
        let value = Kind::ValueRemoved { value: "created_at".into() };
        assert_eq!(words(&change(ty("ThreadSortKey"), value), &ir), [["ThreadSortKey", "CreatedAt"]]);
        assert_eq!(
            (words(&change(diff::Path::method("thread/list", Part::Method), Kind::MethodRemoved), &ir)),
            [vec!["\"thread/list\""], vec!["ThreadList"], vec!["thread_list"]]
        );
        let shape = Kind::ShapeChanged { old: "struct".into(), new: "tagged union".into() };
        assert_eq!(words(&change(ty("AgentMessageDisplay"), shape), &ir), [["AgentMessageDisplay"]]);
        // Printed `LoginAccountParams::chatgpt.appBrand`: the code names the Rust type the root
        // keeps (and no client request has that type as its params).
        let inline = diff::Path::ty("ChatgptLoginAccountParams", "LoginAccountParams::chatgpt").member("appBrand");
        assert_eq!(inline.to_string(), "LoginAccountParams::chatgpt.appBrand");
        let removed = Kind::FieldRemoved { ty: "Option<LoginAppBrand>".into(), presence: "optional".into() };
        assert_eq!(words(&change(inline, removed), &ir), [["ChatgptLoginAccountParams", "app_brand"]]);
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
        let report = codex_app_changelog::Report {
            old_version: "0.171.0".into(),
            new_version: "0.172.0".into(),
            old_has_experimental: true,
            new_has_experimental: true,
            counts: Default::default(),
            changes: vec![
                change(
                    ty("ThreadListParams").member("limit"),
                    Kind::FieldRemoved { ty: "Option<u32>".into(), presence: "optional".into() },
                ),
                change(diff::Path::method("thread/list", Part::Method), Kind::MethodRemoved),
                change(ty("ThreadSortKey"), Kind::ValueRemoved { value: "created_at".into() }),
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

    /// A simulated breaking release (0.171.0 without `ThreadListParams.limit` and
    /// `thread/compact/start`, with a required `reason` in `ThreadArchiveParams`, `source` in
    /// `ThreadSetNameParams` and `clientId` in `TurnSteerParams`): each client handle that sends
    /// what it broke is named, by the params type or the marker type it names.
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
            for (params, member) in [("ThreadSetNameParams", "source"), ("TurnSteerParams", "clientId")] {
                let def = bundle.pointer_mut(&format!("/definitions/v2/{params}")).unwrap();
                def["properties"][member] = serde_json::json!({"type": "string"});
                def["required"].as_array_mut().unwrap().push(member.into());
            }
            let requests = bundle.pointer_mut("/definitions/ClientRequest/oneOf").unwrap().as_array_mut().unwrap();
            requests.retain(|r| r["properties"]["method"]["enum"][0] != "thread/compact/start");
            serde_json::to_string_pretty(&bundle).unwrap()
        };
        let new = SchemaSet {
            stable: edit(&old.stable),
            experimental: old.experimental.as_deref().map(edit),
            codex_version: "0.172.0".into(),
        };
        let settings = codex_app_codegen::Settings::codex().unwrap();
        let report = codex_app_changelog::diff_sets_with(&old, &new, &settings).unwrap();
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
        assert!(archive.contains(&"client/src/thread.rs Client::thread_archive".to_owned()), "{archive:?}");
        assert_eq!(uses_of("ThreadSetNameParams.source"), ["client/src/thread.rs ThreadHandle::set_name"]);
        assert_eq!(uses_of("TurnSteerParams.clientId"), ["client/src/turn.rs TurnHandle::steer"]);
        assert_eq!(uses_of("thread/compact/start"), ["client/src/thread.rs ThreadHandle::compact"]);
        // The handle sends the params its caller built: what breaks is the caller's code.
        let list = uses_of("ThreadListParams.limit");
        assert!(!list.iter().any(|u| u.ends_with("thread_archive")), "{list:?}");
    }
}
