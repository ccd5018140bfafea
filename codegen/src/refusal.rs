//! The safe default answer of each server request, read from the IR: the one rule behind the
//! defaults of the client's generated `ServerRequestHandler`. Nothing is ever approved.
//!
//! A request is answered with a **typed refusal** when both hold:
//!
//! 1. **Its response can be filled with refusing values only.** The response is a struct with at
//!    least one required member (an empty answer could read as consent); each required member
//!    takes a refusing value and every optional member is left absent. A refusing value is
//!    - a value of a string enum (or a plain string of an externally tagged union) whose wire
//!      name, lower-cased without separators, is in [`REFUSALS`]: the first group of that
//!      list that the enum has wins (`decline` before `cancel` before `abort` ...);
//!    - the empty value of a struct whose members are all optional (its `Default`: it grants
//!      nothing);
//!    - a struct whose required members take refusing values by this same rule.
//!
//!    Nothing else refuses: no boolean, number, string, array, map, union or "any" value is
//!    guessed, and a required member that may be `null` is not filled with `null`.
//! 2. **The request is an approval**: its refusal holds a refusing enum value, or its wire name
//!    says approval (`approval`, `approve`).
//!
//! Every other request (user input, tool calls, token refresh, a response the rule cannot fill,
//! a response that is any JSON value) is answered with a JSON-RPC error. Experimental enum
//! values and members are used only in the answer of an experimental request (both are
//! compiled only with the `experimental` feature).

use std::collections::BTreeMap;

use crate::ir::*;

/// Enum values that refuse, as groups in order of preference: the refusal of an enum is its
/// value in the first group it has a value of. Compared with the wire value lower-cased, its
/// separators removed. No group holds a word that approves, grants or accepts.
pub const REFUSALS: &[&[&str]] = &[
    &["decline", "declined"],
    &["cancel", "cancelled", "canceled"],
    &["abort", "aborted"],
    &["deny", "denied"],
    &["reject", "rejected"],
];

/// Words of a wire name that make a request an approval.
const APPROVAL_WORDS: &[&str] = &["approval", "approve"];

/// The rule as one paragraph, for the generated docs.
pub const RULE_DOC: &str =
    "The defaults never approve anything. They follow one rule, read from the schema: a request \
is refused with a typed answer when it is an approval (its response has an enum member with a refusing value, or \
its method name says approval) and every required member of its response can take a refusing value: the first \
enum value of `decline`, `cancel`, `abort`, `deny`/`denied`, `reject` (in that order) that the member's enum has, or \
the empty value of a struct whose members are all optional (it grants nothing); optional members are left absent. \
Every other request (user input, tool calls, token refresh, anything whose response the rule cannot fill) is \
answered with a JSON-RPC error.";

/// What a request's default handler method answers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DefaultAnswer {
    /// A typed answer that refuses.
    Refuse(Fill),
    /// A JSON-RPC error, and why the request gets no typed refusal (for the docs).
    Error(String),
}

/// A refusing value of one type.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Fill {
    /// A value of a string enum or a plain string of an externally tagged union:
    /// `Decision::Decline`.
    Value { ty: String, variant: String, wire: String },
    /// `Ty::default()`: a struct whose members are all optional, every one absent.
    Empty { ty: String },
    /// A struct with its required members filled and every other member absent.
    Struct { ty: String, build: Build, members: Vec<Member> },
}

/// A filled required member of a struct.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Member {
    /// The Rust field name.
    pub rust: String,
    pub wire: String,
    pub fill: Fill,
}

/// How a struct with required members is written: the generated `new(required...)` when it has
/// other members too, else a literal naming every member.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Build {
    New,
    Literal,
}

/// The most values a refusal holds (a schema whose required members nest wide and deep would
/// otherwise make an answer, and its source, exponentially large).
const MAX_FILL: usize = 64;

impl Fill {
    /// How many values the refusal holds.
    fn size(&self) -> usize {
        match self {
            Fill::Value { .. } | Fill::Empty { .. } => 1,
            Fill::Struct { members, .. } => 1 + members.iter().map(|m| m.fill.size()).sum::<usize>(),
        }
    }

    /// Whether the value holds a refusing enum value (as opposed to only empty structs).
    pub fn has_refusing_value(&self) -> bool {
        match self {
            Fill::Value { .. } => true,
            Fill::Empty { .. } => false,
            Fill::Struct { members, .. } => members.iter().any(|m| m.fill.has_refusing_value()),
        }
    }

    /// The answer as JSON text, for the docs: `{"decision": "decline"}`.
    pub fn json(&self) -> String {
        match self {
            Fill::Value { wire, .. } => format!("{wire:?}"),
            Fill::Empty { .. } => "{}".to_owned(),
            Fill::Struct { members, .. } => {
                let members: Vec<String> = members.iter().map(|m| format!("{:?}: {}", m.wire, m.fill.json())).collect();
                format!("{{{}}}", members.join(", "))
            }
        }
    }
}

/// The default answer of the server request `m`, by the rule of the module docs.
pub fn default_answer(ir: &Ir, m: &Method) -> DefaultAnswer {
    let response = match &m.response {
        None | Some(Ty::Any) => return DefaultAnswer::Error("its response is any JSON value".to_owned()),
        Some(response) => response,
    };
    let mut filler = Filler { ir, experimental_ok: m.experimental, seen: BTreeMap::new() };
    let fill = match filler.fill(response) {
        Ok(fill) => fill,
        Err(why) => return DefaultAnswer::Error(why),
    };
    if let Fill::Empty { .. } = fill {
        return DefaultAnswer::Error(
            "its response has no required member (an empty answer could read as consent)".to_owned(),
        );
    }
    if !fill.has_refusing_value() && !says_approval(&m.wire) {
        return DefaultAnswer::Error(
            "it is not an approval (no refusing enum value in its response, no approval in its name)".to_owned(),
        );
    }
    DefaultAnswer::Refuse(fill)
}

/// Whether a method's wire name says approval (`item/fileChange/requestApproval`).
pub fn says_approval(wire: &str) -> bool {
    let wire = wire.to_ascii_lowercase();
    APPROVAL_WORDS.iter().any(|w| wire.contains(w))
}

/// Finds refusing values, each named type once (a type on the way to itself has none: a
/// recursive type has no finite refusal through its required members).
struct Filler<'a> {
    ir: &'a Ir,
    /// Experimental values and members may be used (the request itself is experimental).
    experimental_ok: bool,
    /// The refusal of each named type seen; `None` while it is being worked out.
    seen: BTreeMap<String, Option<Result<Fill, String>>>,
}

impl Filler<'_> {
    /// The refusing value of `ty`, or why there is none.
    fn fill(&mut self, ty: &Ty) -> Result<Fill, String> {
        let Ty::Named(name) = ty else {
            return Err(format!("{} has no refusing value", describe(ty)));
        };
        match self.seen.get(name) {
            Some(Some(done)) => return done.clone(),
            Some(None) => return Err(format!("`{name}` contains itself")),
            None => {}
        }
        self.seen.insert(name.clone(), None);
        let result = self.fill_named(name);
        self.seen.insert(name.clone(), Some(result.clone()));
        result
    }

    fn fill_named(&mut self, name: &str) -> Result<Fill, String> {
        let Some(def) = self.ir.types.get(name) else {
            return Err(format!("`{name}` is not in the schema"));
        };
        let experimental_ok = self.experimental_ok;
        if def.experimental && !experimental_ok {
            return Err(format!("`{name}` is experimental"));
        }
        match &def.kind {
            TypeKind::Alias(inner) => self.fill(inner),
            TypeKind::StringEnum(e) => {
                let values = e
                    .values
                    .iter()
                    .filter(|v| experimental_ok || !v.experimental)
                    .map(|v| (v.wire.as_str(), v.rust.as_str()));
                refusing_value(name, values)
            }
            TypeKind::External(e) => {
                let values = e
                    .arms
                    .iter()
                    .filter(|a| a.payload.is_none() && (experimental_ok || !a.experimental))
                    .map(|a| (a.wire.as_str(), a.rust.as_str()));
                refusing_value(name, values)
            }
            TypeKind::Struct(s) => self.fill_struct(name, s),
            TypeKind::Tagged(_) | TypeKind::Untagged(_) => Err(format!("`{name}` (a union) has no refusing value")),
        }
    }

    fn fill_struct(&mut self, name: &str, s: &Struct) -> Result<Fill, String> {
        let mut members = Vec::new();
        for f in &s.fields {
            match f.presence() {
                Presence::Optional | Presence::OptionalNullable => continue,
                Presence::RequiredNullable => return Err(format!("`{name}.{}` is required and may be null", f.wire)),
                Presence::Required if matches!(f.ty, Ty::Option(_)) => {
                    return Err(format!("`{name}.{}` is required and may be null", f.wire));
                }
                Presence::Required => {}
            }
            if f.experimental && !self.experimental_ok {
                return Err(format!("`{name}.{}` is a required experimental member", f.wire));
            }
            let fill = self.fill(&f.ty).map_err(|why| format!("`{name}.{}`: {why}", f.wire))?;
            members.push(Member { rust: f.rust.clone(), wire: f.wire.clone(), fill });
            if members.iter().map(|m| m.fill.size()).sum::<usize>() > MAX_FILL {
                return Err(format!("the refusal of `{name}` would have more than {MAX_FILL} values"));
            }
        }
        if members.is_empty() {
            return Ok(Fill::Empty { ty: name.to_owned() });
        }
        // The generated types have `new(required...)` exactly when a struct has other members too.
        let build = if members.len() < s.fields.len() || s.extra.is_some() { Build::New } else { Build::Literal };
        Ok(Fill::Struct { ty: name.to_owned(), build, members })
    }
}

/// The first value of the first group of [`REFUSALS`] that `values` (wire, variant) has.
fn refusing_value<'a>(ty: &str, values: impl Iterator<Item = (&'a str, &'a str)> + Clone) -> Result<Fill, String> {
    let normal = |wire: &str| wire.chars().filter(char::is_ascii_alphanumeric).collect::<String>().to_ascii_lowercase();
    for group in REFUSALS {
        if let Some((wire, variant)) = values.clone().find(|(wire, _)| group.contains(&normal(wire).as_str())) {
            return Ok(Fill::Value { ty: ty.to_owned(), variant: variant.to_owned(), wire: wire.to_owned() });
        }
    }
    Err(format!("`{ty}` has no refusing value"))
}

fn describe(ty: &Ty) -> &'static str {
    match ty {
        Ty::String => "a string",
        Ty::Bool => "a boolean",
        Ty::Int(_) | Ty::Float => "a number",
        Ty::Any => "any JSON value",
        Ty::Unit => "`null`",
        Ty::Vec(_) => "an array",
        Ty::Map(_) => "a map",
        Ty::Option(_) | Ty::Named(_) => "a nullable value",
        Ty::Boxed(t) => describe(t),
        Ty::Tuple(_) => "a tuple",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn field(wire: &str, ty: Ty, required: bool) -> Field {
        Field {
            wire: wire.into(),
            rust: crate::naming::field(wire),
            ty,
            required,
            nullable: false,
            null_meaningful: false,
            doc: None,
            experimental: false,
        }
    }

    fn def(name: &str, kind: TypeKind) -> (String, TypeDef) {
        (
            name.to_owned(),
            TypeDef {
                name: name.into(),
                pointer: format!("#/definitions/{name}"),
                schema: String::new(),
                former_name: None,
                doc: None,
                experimental: false,
                kind,
            },
        )
    }

    fn string_enum(name: &str, values: &[&str]) -> (String, TypeDef) {
        let values = values
            .iter()
            .map(|w| EnumValue { wire: (*w).into(), rust: crate::naming::pascal(w), doc: None, experimental: false })
            .collect();
        def(name, TypeKind::StringEnum(StringEnum { values }))
    }

    fn structure(name: &str, fields: Vec<Field>) -> (String, TypeDef) {
        def(name, TypeKind::Struct(Struct { fields, extra: None }))
    }

    fn request(wire: &str, response: Ty) -> Method {
        Method {
            wire: wire.into(),
            rust: crate::naming::pascal(wire),
            params: Params::None,
            response: Some(response),
            doc: None,
            experimental: false,
        }
    }

    fn ir(types: Vec<(String, TypeDef)>) -> Ir {
        Ir {
            types: types.into_iter().collect::<BTreeMap<_, _>>(),
            client_requests: vec![],
            server_requests: vec![],
            server_notifications: vec![],
            client_notifications: vec![],
            notification_envelope: vec![],
            has_experimental: false,
            floor: None,
            releases: Vec::new(),
            availability: Default::default(),
            type_availability: Default::default(),
            warnings: vec![],
        }
    }

    fn named(n: &str) -> Ty {
        Ty::Named(n.into())
    }

    fn decision_response(name: &str, decision: &str) -> (String, TypeDef) {
        structure(name, vec![field("decision", named(decision), true)])
    }

    fn answer_json(ir: &Ir, m: &Method) -> Result<String, String> {
        match default_answer(ir, m) {
            DefaultAnswer::Refuse(fill) => Ok(fill.json()),
            DefaultAnswer::Error(why) => Err(why),
        }
    }

    #[test]
    fn approvals_are_declined_before_cancelled() {
        let ir = ir(vec![
            string_enum("Decision", &["accept", "acceptForSession", "decline", "cancel"]),
            decision_response("R", "Decision"),
        ]);
        let m = request("item/commandExecution/requestApproval", named("R"));
        let DefaultAnswer::Refuse(fill) = default_answer(&ir, &m) else { panic!() };
        assert_eq!(fill.json(), r#"{"decision": "decline"}"#);
        assert_eq!(
            fill,
            Fill::Struct {
                ty: "R".into(),
                build: Build::Literal,
                members: vec![Member {
                    rust: "decision".into(),
                    wire: "decision".into(),
                    fill: Fill::Value { ty: "Decision".into(), variant: "Decline".into(), wire: "decline".into() }
                }]
            }
        );
    }

    #[test]
    fn an_enum_of_accept_and_cancel_is_cancelled() {
        // A made-up approval whose enum cannot decline: it is cancelled, whatever its name.
        let ir = ir(vec![string_enum("Choice", &["accept", "cancel"]), decision_response("R", "Choice")]);
        assert_eq!(answer_json(&ir, &request("widget/confirm", named("R"))), Ok(r#"{"decision": "cancel"}"#.into()));
    }

    #[test]
    fn the_preference_order_is_fixed_and_separators_do_not_matter() {
        let ir = ir(vec![
            string_enum("E", &["approved", "Denied", "ABORT", "timed_out"]),
            string_enum("F", &["ok", "user_rejected"]),
            string_enum("G", &["allow", "reject"]),
            decision_response("R", "E"),
            decision_response("S", "F"),
            decision_response("T", "G"),
        ]);
        assert_eq!(answer_json(&ir, &request("x", named("R"))), Ok(r#"{"decision": "ABORT"}"#.into()));
        // Only whole values count: `user_rejected` is not `rejected`.
        assert!(answer_json(&ir, &request("xApproval", named("S"))).is_err());
        assert_eq!(answer_json(&ir, &request("x", named("T"))), Ok(r#"{"decision": "reject"}"#.into()));
    }

    #[test]
    fn no_refusing_value_is_an_error_even_for_an_approval() {
        let ir = ir(vec![string_enum("Decision", &["accept", "acceptForSession"]), decision_response("R", "Decision")]);
        let answer = default_answer(&ir, &request("item/thing/requestApproval", named("R")));
        assert_eq!(answer, DefaultAnswer::Error("`R.decision`: `Decision` has no refusing value".into()));
    }

    #[test]
    fn a_response_of_any_json_is_an_error() {
        let ir = ir(vec![]);
        let answer = default_answer(&ir, &request("item/thing/requestApproval", Ty::Any));
        assert_eq!(answer, DefaultAnswer::Error("its response is any JSON value".into()));
    }

    #[test]
    fn externally_tagged_unions_refuse_with_a_plain_string() {
        // `denied` carries a payload here: only the plain strings are values the rule picks.
        let arms = [("approved", None), ("denied", Some(named("Why"))), ("abort", None)]
            .into_iter()
            .map(|(w, payload)| ExternalArm {
                wire: w.into(),
                rust: crate::naming::pascal(w),
                payload,
                doc: None,
                experimental: false,
            })
            .collect();
        let ir = ir(vec![
            def("ReviewDecision", TypeKind::External(External { arms })),
            decision_response("R", "ReviewDecision"),
        ]);
        assert_eq!(
            answer_json(&ir, &request("execCommandApproval", named("R"))),
            Ok(r#"{"decision": "abort"}"#.into())
        );
    }

    #[test]
    fn an_empty_grant_needs_an_approval_name() {
        let ir = ir(vec![
            structure("Granted", vec![field("network", Ty::Bool, false), field("fileSystem", Ty::String, false)]),
            structure("R", vec![field("permissions", named("Granted"), true), field("scope", Ty::String, false)]),
        ]);
        let DefaultAnswer::Refuse(fill) = default_answer(&ir, &request("item/permissions/requestApproval", named("R")))
        else {
            panic!()
        };
        assert_eq!(fill.json(), r#"{"permissions": {}}"#);
        assert!(matches!(fill, Fill::Struct { build: Build::New, .. }));
        // The same response for a request that is not an approval: an error.
        assert!(matches!(default_answer(&ir, &request("item/permissions/grant", named("R"))), DefaultAnswer::Error(_)));
    }

    #[test]
    fn members_the_rule_cannot_fill_make_an_error() {
        let ir = ir(vec![
            string_enum("Action", &["accept", "decline"]),
            structure("Answers", vec![field("answers", Ty::Map(Box::new(Ty::String)), true)]),
            structure("Tokens", vec![field("accessToken", Ty::String, true)]),
            structure("Tool", vec![field("success", Ty::Bool, true), field("action", named("Action"), true)]),
            structure("Nullable", vec![Field { nullable: true, ..field("action", named("Action"), true) }]),
            structure("Nothing", vec![field("note", Ty::String, false)]),
        ]);
        for (response, why) in [
            ("Answers", "`Answers.answers`: a map has no refusing value"),
            ("Tokens", "`Tokens.accessToken`: a string has no refusing value"),
            ("Tool", "`Tool.success`: a boolean has no refusing value"),
            ("Nullable", "`Nullable.action` is required and may be null"),
            ("Nothing", "its response has no required member (an empty answer could read as consent)"),
        ] {
            assert_eq!(
                default_answer(&ir, &request("someApproval", named(response))),
                DefaultAnswer::Error(why.into()),
                "{response}"
            );
        }
    }

    #[test]
    fn optional_members_stay_absent_and_other_requests_with_a_refusing_enum_qualify() {
        // MCP elicitation: not named an approval, but its action can decline.
        let ir = ir(vec![
            string_enum("Action", &["accept", "decline", "cancel"]),
            structure(
                "R",
                vec![
                    field("_meta", Ty::Any, false),
                    field("action", named("Action"), true),
                    field("content", Ty::Any, false),
                ],
            ),
        ]);
        let DefaultAnswer::Refuse(fill) = default_answer(&ir, &request("mcpServer/elicitation/request", named("R")))
        else {
            panic!()
        };
        assert_eq!(fill.json(), r#"{"action": "decline"}"#);
        assert!(matches!(fill, Fill::Struct { build: Build::New, .. }));
    }

    #[test]
    fn experimental_values_and_members_only_for_experimental_requests() {
        let mut decision = string_enum("Decision", &["accept", "decline"]);
        let TypeKind::StringEnum(e) = &mut decision.1.kind else { unreachable!() };
        e.values[1].experimental = true;
        let ir = ir(vec![decision, decision_response("R", "Decision")]);
        let mut m = request("thing/requestApproval", named("R"));
        assert!(matches!(default_answer(&ir, &m), DefaultAnswer::Error(_)));
        m.experimental = true;
        assert_eq!(answer_json(&ir, &m), Ok(r#"{"decision": "decline"}"#.into()));
    }

    #[test]
    fn recursive_responses_end() {
        let ir = ir(vec![structure("R", vec![field("next", named("R"), true)])]);
        assert!(matches!(default_answer(&ir, &request("loopApproval", named("R"))), DefaultAnswer::Error(_)));
    }

    #[test]
    fn wide_and_deep_responses_end_quickly() {
        // T0 { a: T1, b: T1 }, T1 { a: T2, b: T2 }, ... T40 { decision }: 2^40 paths.
        let mut types = vec![string_enum("Decision", &["accept", "decline"]), decision_response("T40", "Decision")];
        for i in 0..40 {
            let next = named(&format!("T{}", i + 1));
            types.push(structure(&format!("T{i}"), vec![field("a", next.clone(), true), field("b", next, true)]));
        }
        let answer = default_answer(&ir(types), &request("deepApproval", named("T0")));
        let DefaultAnswer::Error(why) = answer else { panic!("{answer:?}") };
        assert!(
            why.starts_with("`T0.a`: `T1.a`") && why.ends_with("the refusal of `T35` would have more than 64 values"),
            "{why}"
        );
    }

    #[test]
    fn no_refusal_word_approves() {
        for word in REFUSALS.iter().flat_map(|g| g.iter()) {
            for approving in ["accept", "approv", "allow", "grant", "yes", "ok"] {
                assert!(!word.contains(approving), "{word}");
            }
        }
    }
}
