//! Request -> response pairing. The schema never links a method to its result type.
//!
//! Convention: a method whose params are `FooParams` answers with `FooResponse`. The
//! exceptions (params that are `null`, or names that do not match) are listed in
//! [`OVERRIDES`], which covers every codex release the generator supports. An override is
//! consulted when the convention finds nothing; one that names a type the schema lacks is an
//! error, and so is a method that neither rule pairs.

use std::collections::BTreeSet;

use crate::ir::*;
use crate::Error;

/// What a request answers with, when the naming convention cannot tell.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reply {
    /// A schema type.
    Type(&'static str),
    /// Any JSON value: the schema defines no response type at all.
    Any,
}

/// `(method, reply)` for the methods the naming convention does not pair, across every
/// supported codex release. The convention is tried first, so an entry only matters for the
/// releases where the method's params are `null` or its names do not match.
pub const OVERRIDES: &[(&str, Reply)] = &[
    // params `null`
    ("account/gatewayOAuth/cancel", Reply::Type("GatewayOAuthCancelResponse")),
    ("account/gatewayOAuth/login", Reply::Type("GatewayOAuthLoginResponse")),
    ("account/gatewayOAuth/read", Reply::Type("GatewayOAuthReadResponse")),
    ("account/logout", Reply::Type("LogoutAccountResponse")),
    ("account/rateLimits/read", Reply::Type("GetAccountRateLimitsResponse")),
    ("account/securitySetup/read", Reply::Type("GetAccountSecuritySetupResponse")),
    ("account/usage/read", Reply::Type("GetAccountTokenUsageResponse")),
    ("account/workspaceMessages/read", Reply::Type("GetWorkspaceMessagesResponse")),
    ("config/mcpServer/reload", Reply::Type("McpServerRefreshResponse")),
    ("configRequirements/read", Reply::Type("ConfigRequirementsReadResponse")),
    ("externalAgentConfig/import/readHistories", Reply::Type("ExternalAgentConfigImportHistoriesReadResponse")),
    ("memory/reset", Reply::Type("MemoryResetResponse")),
    ("remoteControl/status/read", Reply::Type("RemoteControlStatusReadResponse")),
    ("rollout/compress", Reply::Type("RolloutCompressResponse")),
    ("windowsSandbox/readiness", Reply::Type("WindowsSandboxReadinessResponse")),
    // v1 API (0.60.1 to 0.100.0), params `null`
    ("getUserAgent", Reply::Type("GetUserAgentResponse")),
    ("getUserSavedConfig", Reply::Type("GetUserSavedConfigResponse")),
    ("loginChatGpt", Reply::Type("LoginChatGptResponse")),
    ("logoutChatGpt", Reply::Type("LogoutChatGptResponse")),
    ("userInfo", Reply::Type("UserInfoResponse")),
    // names that do not match
    ("accountSession/list", Reply::Type("AccountSessionsResponse")),
    ("addConversationListener", Reply::Type("AddConversationSubscriptionResponse")),
    ("config/batchWrite", Reply::Type("ConfigWriteResponse")),
    ("config/value/write", Reply::Type("ConfigWriteResponse")),
    ("removeConversationListener", Reply::Type("RemoveConversationSubscriptionResponse")),
    // 0.60.1 defines no `ReviewStartResponse`
    ("review/start", Reply::Any),
];

/// Fills `response` for every request method, or fails listing what could not be paired.
pub fn pair(ir: &mut Ir) -> Result<(), Error> {
    let mut unpaired = Vec::new();
    for direction in [Direction::ClientRequest, Direction::ServerRequest] {
        let types = &ir.types;
        let mut responses = Vec::new();
        for m in ir.methods(direction) {
            let by_name = match m.params.ty() {
                Some(Ty::Named(p)) => p.strip_suffix("Params").map(|base| format!("{base}Response")),
                _ => None,
            };
            let by_override = OVERRIDES.iter().find(|(method, _)| *method == m.wire).map(|(_, reply)| *reply);
            let response = match (by_name, by_override) {
                (Some(ty), _) if types.contains_key(&ty) => Some(Ty::Named(ty)),
                (_, Some(Reply::Any)) => Some(Ty::Any),
                (_, Some(Reply::Type(ty))) if types.contains_key(ty) => Some(Ty::Named(ty.to_owned())),
                (_, Some(Reply::Type(ty))) => {
                    return Err(Error::new(
                        format!("#/definitions/{}", direction.union_name()),
                        format!("the pairing override for `{}` names `{ty}`, which the schema does not define", m.wire),
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
            "no response type for {} method(s); add them to OVERRIDES in codegen/src/pairing.rs:\n  unpaired: {}\n  unused *Response types (candidates): {}",
            unpaired.len(),
            unpaired.join(", "),
            if candidates.is_empty() { "none".to_owned() } else { candidates.join(", ") },
        ),
    ))
}
