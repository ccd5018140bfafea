//! Request -> response pairing. The schema never links a method to its result type.
//!
//! Convention: a method answers with the type named after it (`thread/search/stream` ->
//! `ThreadSearchStreamResponse`) when the schema has one, else a method whose params are
//! `FooParams` answers with `FooResponse`. The
//! exceptions (params that are `null`, or names that do not match) are reviewed data: the
//! `responses` of `vendor-schemas/decisions.json` ([`crate::decisions`]), which covers every
//! codex release the generator supports. An entry is consulted when the convention finds
//! nothing; one that names a type the schema lacks is an error, and so is a method that
//! neither rule pairs.

use std::collections::BTreeSet;

use crate::decisions::{Decisions, ANY_REPLY, DECISIONS_FILE};
use crate::ir::*;
use crate::naming;
use crate::Error;

/// Fills `response` for every request method, or fails listing what could not be paired.
pub fn pair(ir: &mut Ir, decisions: &Decisions) -> Result<(), Error> {
    let mut unpaired = Vec::new();
    for direction in [Direction::ClientRequest, Direction::ServerRequest] {
        let types = &ir.types;
        let mut responses = Vec::new();
        for m in ir.methods(direction) {
            let by_params = match m.params.ty() {
                Some(Ty::Named(p)) => p.strip_suffix("Params").map(|base| format!("{base}Response")),
                _ => None,
            };
            // Named after the method itself is the stronger sign: several methods can share
            // one params type (`thread/search` and `thread/search/stream`).
            let by_marker = Some(naming::type_name(&format!("{}Response", m.rust))).filter(|t| types.contains_key(t));
            let by_name = by_marker.or(by_params);
            let by_decision = decisions.responses.get(&m.wire).map(String::as_str);
            let response = match (by_name, by_decision) {
                (Some(ty), _) if types.contains_key(&ty) => Some(Ty::Named(ty)),
                (_, Some(ANY_REPLY)) => Some(Ty::Any),
                (_, Some(ty)) if types.contains_key(ty) => Some(Ty::Named(ty.to_owned())),
                (_, Some(ty)) => {
                    return Err(Error::new(
                        format!("#/definitions/{}", direction.union_name()),
                        format!("the response decided for `{}` in {DECISIONS_FILE} is `{ty}`, which the schema does not define", m.wire),
                    ));
                }
                (_, None) => None,
            };
            if response.is_none() {
                unpaired.push(format!("{} ({})", m.wire, direction.union_name()));
            }
            responses.push(response);
        }
        for (m, r) in ir.methods_mut(direction).iter_mut().zip(responses) {
            m.response = r;
        }
    }
    if unpaired.is_empty() {
        return Ok(());
    }
    let used: BTreeSet<&Ty> = ir.client_requests.iter().chain(&ir.server_requests).filter_map(|m| m.response.as_ref()).collect();
    let candidates: Vec<&str> = ir
        .types
        .keys()
        .filter(|n| n.ends_with("Response") && !used.contains(&Ty::Named((*n).clone())))
        .map(String::as_str)
        .collect();
    Err(Error::new(
        "",
        format!(
            "no response type for {} method(s); add them to \"responses\" in {DECISIONS_FILE} \
             (`\"method\": \"TypeName\"`, or `\"any\"` when the schema defines none):\n  unpaired: {}\n  unused *Response types (candidates): {}",
            unpaired.len(),
            unpaired.join(", "),
            if candidates.is_empty() { "none".to_owned() } else { candidates.join(", ") },
        ),
    ))
}
