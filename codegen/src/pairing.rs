//! Request -> response pairing. The schema never links a method to its result type.
//!
//! Convention: a method answers with the type named after it (`thread/search/stream` ->
//! `ThreadSearchStreamResponse`) when the schema has one, else a method whose params are
//! `FooParams` answers with `FooResponse`. The
//! exceptions (params that are `null`, or names that do not match) are reviewed data: the
//! `responses` of `vendor-schemas/decisions.json` ([`crate::decisions`]), which covers every
//! codex release the generator supports. An entry is consulted when the convention finds
//! nothing; one that names a type the schema lacks is an error. A method that neither rule
//! pairs gets a proposal ([`propose_response`]) and is returned as a missing decision.

use std::collections::{BTreeMap, BTreeSet};

use crate::decisions::{ResponseProposal, ANY_REPLY, DECISIONS_FILE};
use crate::ir::*;
use crate::naming::{self, words};
use crate::settings::Settings;
use crate::Error;

/// Fills `response` for every request method, from the names and `settings`' decisions. A
/// method neither rule pairs takes its proposal and is returned; a decision that names a type
/// the schema lacks is an error.
pub fn pair(ir: &mut Ir, settings: &Settings) -> Result<Vec<ResponseProposal>, Error> {
    let decisions = &settings.decisions;
    let mut unpaired = Vec::new();
    for direction in [Direction::ClientRequest, Direction::ServerRequest] {
        let types = &ir.types;
        let mut responses = Vec::new();
        for m in ir.methods(direction) {
            let by_params = match m.params.ty() {
                Some(Ty::Named(p)) => naming::response_by_params(p),
                _ => None,
            };
            // Named after the method itself is the stronger sign: several methods can share
            // one params type (`thread/search` and `thread/search/stream`).
            let by_marker = Some(naming::response_by_method(settings, &m.rust)).filter(|t| types.contains_key(t));
            let by_name = by_marker.or(by_params);
            let by_decision = decisions.responses.get(&m.wire).map(String::as_str);
            let response = match (by_name, by_decision) {
                (Some(ty), _) if types.contains_key(&ty) => Ty::Named(ty),
                (_, Some(ANY_REPLY)) => Ty::Any,
                (_, Some(ty)) if types.contains_key(ty) => Ty::Named(ty.to_owned()),
                (_, Some(ty)) => {
                    return Err(Error::new(
                        format!("#/definitions/{}", direction.union_name()),
                        format!("the response decided for `{}` in {DECISIONS_FILE} is `{ty}`, which the schema does not define", m.wire),
                    ));
                }
                (_, None) => {
                    let (proposal, why) = propose_response(&m.wire, types);
                    let ty = if proposal == ANY_REPLY { Ty::Any } else { Ty::Named(proposal.clone()) };
                    unpaired.push(ResponseProposal {
                        method: m.wire.clone(),
                        direction: direction.union_name(),
                        proposal,
                        why,
                    });
                    ty
                }
            };
            responses.push(response);
        }
        for (m, r) in ir.methods_mut(direction).iter_mut().zip(responses) {
            m.response = Some(r);
        }
    }
    // For a request left with "any": the `*Response` types no request answers with, which the
    // reviewer may want instead.
    let used: BTreeSet<&Ty> =
        ir.client_requests.iter().chain(&ir.server_requests).filter_map(|m| m.response.as_ref()).collect();
    let unused: Vec<&str> = ir
        .types
        .keys()
        .filter(|n| naming::is_response(n) && !used.contains(&Ty::Named((*n).clone())))
        .map(String::as_str)
        .collect();
    for r in unpaired.iter_mut().filter(|r| r.proposal == ANY_REPLY) {
        r.why = format!(
            "{}; `*Response` types no request answers with: {}",
            r.why,
            if unused.is_empty() { "none".to_owned() } else { unused.join(", ") }
        );
    }
    Ok(unpaired)
}

/// The proposal for a request the decisions do not pair, and why: a `*Response` definition
/// named after the method, else [`ANY_REPLY`]. Named after the method means, in this order
/// (the first rule that finds exactly one type wins): its words in the method's order
/// (`memory/reset`: `MemoryResetResponse`), after dropping leading path segments
/// (`account/gatewayOAuth/cancel`: `GatewayOAuthCancelResponse`); the method's words in another
/// order (`account/logout`: `LogoutAccountResponse`); every word of the method among others.
pub fn propose_response(method: &str, types: &BTreeMap<String, TypeDef>) -> (String, String) {
    let responses: Vec<(&str, Vec<String>)> =
        types.keys().filter_map(|name| Some((name.as_str(), words(naming::response_base(name)?)))).collect();
    let segments: Vec<&str> = method.split('/').collect();
    let method_words = words(method);
    let sorted = |w: &[String]| {
        let mut w = w.to_vec();
        w.sort();
        w
    };
    let unique = |found: Vec<&str>| match found.as_slice() {
        [one] => Some(one.to_string()),
        _ => None,
    };

    for skip in 0..segments.len() {
        let wanted = words(&segments[skip..].join("/"));
        if let Some(ty) = unique(responses.iter().filter(|(_, w)| *w == wanted).map(|(n, _)| *n).collect()) {
            let why = if skip == 0 {
                "named after the method".to_owned()
            } else {
                format!("named after `{}`", segments[skip..].join("/"))
            };
            return (ty, why);
        }
    }
    let wanted = sorted(&method_words);
    if let Some(ty) = unique(responses.iter().filter(|(_, w)| sorted(w) == wanted).map(|(n, _)| *n).collect()) {
        return (ty, "named with the method's words".to_owned());
    }
    let found: Vec<&str> =
        responses.iter().filter(|(_, w)| method_words.iter().all(|m| w.contains(m))).map(|(n, _)| *n).collect();
    if let Some(ty) = unique(found.clone()) {
        return (ty, "the one `*Response` type whose name has every word of the method".to_owned());
    }
    let why = if found.is_empty() {
        "no `*Response` type is named after the method".to_owned()
    } else {
        format!("several `*Response` types have every word of the method: {}", found.join(", "))
    };
    (ANY_REPLY.to_owned(), why)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn types(names: &[&str]) -> BTreeMap<String, TypeDef> {
        names
            .iter()
            .map(|n| {
                let def = TypeDef {
                    name: (*n).to_owned(),
                    pointer: format!("#/definitions/{n}"),
                    schema: String::new(),
                    former_name: None,
                    doc: None,
                    kind: TypeKind::Alias(Ty::Any),
                    experimental: false,
                };
                ((*n).to_owned(), def)
            })
            .collect()
    }

    #[test]
    fn proposals_name_a_type_after_the_method_or_any() {
        let t = types(&[
            "MemoryResetResponse",
            "GatewayOAuthCancelResponse",
            "LogoutAccountResponse",
            "GetAccountTokenUsageResponse",
            "ThreadReadResponse",
            "ThreadReadAllResponse",
            "Response",
            "MemoryReset",
        ]);
        let proposal = |m: &str| propose_response(m, &t).0;
        assert_eq!(proposal("memory/reset"), "MemoryResetResponse");
        assert_eq!(proposal("account/gatewayOAuth/cancel"), "GatewayOAuthCancelResponse");
        assert_eq!(proposal("account/logout"), "LogoutAccountResponse");
        assert_eq!(proposal("account/usage"), "GetAccountTokenUsageResponse");
        assert_eq!(proposal("thread/read"), "ThreadReadResponse");
        // Two types have every word of `read`: no guess.
        let (any, why) = propose_response("read", &t);
        assert_eq!(any, ANY_REPLY);
        assert!(why.contains("ThreadReadAllResponse, ThreadReadResponse"), "{why}");
        assert_eq!(proposal("review/start"), ANY_REPLY);
    }
}
