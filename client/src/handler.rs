//! Answering the server's requests: approvals, user input, dynamic tool calls, ...
//!
//! [`ServerRequestHandler`] has one typed async method per server request. Every method has a
//! default, and the defaults are the safe answers: approvals are declined (or cancelled where
//! the request has no "decline"), permissions are granted none, and everything else (user
//! input, dynamic tool calls, MCP elicitation is cancelled, token refresh, attestation) gets a
//! JSON-RPC error. Nothing is approved unless your code says so.
//!
//! Each request is answered on its own task. A method that returns `Err(ErrorObject)` sends
//! that error; a method that panics sends an internal error (-32603) naming the panic; the
//! connection goes on either way.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use codex_app_protocol::jsonrpc::ErrorObject;
use codex_app_protocol::*;
use serde::Serialize;
use serde_json::value::RawValue;

/// What a handler method returns: the typed result, or the error to answer with.
pub type HandlerResult<T> = Result<T, ErrorObject>;

/// The error the default handler answers with for requests it does not handle.
pub fn unhandled(method: &str) -> ErrorObject {
    ErrorObject::new(ErrorObject::METHOD_NOT_FOUND, format!("`{method}` is not handled by this client"))
}

/// Answers the server's requests. Override the methods your application handles; the others
/// keep their safe defaults (see the module docs).
pub trait ServerRequestHandler: Send + Sync + 'static {
    /// `item/commandExecution/requestApproval`: may the command run? Default: decline.
    fn command_execution_approval(
        &self,
        params: CommandExecutionRequestApprovalParams,
    ) -> impl Future<Output = HandlerResult<CommandExecutionRequestApprovalResponse>> + Send {
        let _ = params;
        async { Ok(CommandExecutionRequestApprovalResponse { decision: CommandExecutionApprovalDecision::Decline }) }
    }

    /// `item/fileChange/requestApproval`: may the change be applied? Default: decline.
    fn file_change_approval(
        &self,
        params: FileChangeRequestApprovalParams,
    ) -> impl Future<Output = HandlerResult<FileChangeRequestApprovalResponse>> + Send {
        let _ = params;
        async { Ok(FileChangeRequestApprovalResponse { decision: FileChangeApprovalDecision::Decline }) }
    }

    /// `item/permissions/requestApproval`: which of the requested permissions to grant.
    /// Default: none.
    fn permissions_approval(
        &self,
        params: PermissionsRequestApprovalParams,
    ) -> impl Future<Output = HandlerResult<PermissionsRequestApprovalResponse>> + Send {
        let _ = params;
        async { Ok(PermissionsRequestApprovalResponse { permissions: GrantedPermissionProfile::default(), scope: None, strict_auto_review: None }) }
    }

    /// `mcpServer/elicitation/request`: an MCP server asks the user for input. Default:
    /// cancel.
    fn mcp_elicitation(
        &self,
        params: McpServerElicitationRequestParams,
    ) -> impl Future<Output = HandlerResult<McpServerElicitationRequestResponse>> + Send {
        let _ = params;
        async { Ok(McpServerElicitationRequestResponse { meta: None, action: McpServerElicitationAction::Cancel, content: None }) }
    }

    /// `applyPatchApproval` (the v1 API): may the patch be applied? Default: abort.
    fn apply_patch_approval(&self, params: ApplyPatchApprovalParams) -> impl Future<Output = HandlerResult<ApplyPatchApprovalResponse>> + Send {
        let _ = params;
        async { Ok(ApplyPatchApprovalResponse { decision: ReviewDecision::Abort }) }
    }

    /// `execCommandApproval` (the v1 API): may the command run? Default: abort.
    fn exec_command_approval(&self, params: ExecCommandApprovalParams) -> impl Future<Output = HandlerResult<ExecCommandApprovalResponse>> + Send {
        let _ = params;
        async { Ok(ExecCommandApprovalResponse { decision: ReviewDecision::Abort }) }
    }

    /// `item/tool/requestUserInput`: the model asks the user questions. Default: an error.
    fn user_input(&self, params: ToolRequestUserInputParams) -> impl Future<Output = HandlerResult<ToolRequestUserInputResponse>> + Send {
        let _ = params;
        async { Err(unhandled(server_request::ItemToolRequestUserInput::METHOD)) }
    }

    /// `item/tool/call`: the model calls a dynamic tool declared on `thread/start`. Default:
    /// an error.
    fn dynamic_tool_call(&self, params: DynamicToolCallParams) -> impl Future<Output = HandlerResult<DynamicToolCallResponse>> + Send {
        let _ = params;
        async { Err(unhandled(server_request::ItemToolCall::METHOD)) }
    }

    /// `account/chatgptAuthTokens/refresh`. Default: an error.
    fn chatgpt_auth_tokens_refresh(
        &self,
        params: ChatgptAuthTokensRefreshParams,
    ) -> impl Future<Output = HandlerResult<ChatgptAuthTokensRefreshResponse>> + Send {
        let _ = params;
        async { Err(unhandled(server_request::AccountChatgptAuthTokensRefresh::METHOD)) }
    }

    /// `attestation/generate`. Default: an error.
    fn attestation_generate(&self, params: AttestationGenerateParams) -> impl Future<Output = HandlerResult<AttestationGenerateResponse>> + Send {
        let _ = params;
        async { Err(unhandled(server_request::AttestationGenerate::METHOD)) }
    }

    /// `currentTime/read` (experimental). Default: an error.
    #[cfg(feature = "experimental")]
    fn current_time_read(&self, params: CurrentTimeReadParams) -> impl Future<Output = HandlerResult<CurrentTimeReadResponse>> + Send {
        let _ = params;
        async { Err(unhandled(server_request::CurrentTimeRead::METHOD)) }
    }

    /// Any other server request (a method newer than this crate, or one of the experimental
    /// API when the `experimental` feature is off): the whole request. Default: an error.
    fn other(&self, request: ServerRequest) -> impl Future<Output = HandlerResult<serde_json::Value>> + Send {
        let method = request.method().to_owned();
        async move { Err(unhandled(&method)) }
    }
}

/// The safe defaults of every [`ServerRequestHandler`] method.
#[derive(Debug, Clone, Copy, Default)]
pub struct DefaultHandler;

impl ServerRequestHandler for DefaultHandler {}

pub(crate) type BoxFuture<T> = Pin<Box<dyn Future<Output = T> + Send>>;

/// A handler behind a pointer, answering with the encoded result.
pub(crate) trait DynHandler: Send + Sync + 'static {
    fn dispatch(self: Arc<Self>, request: ServerRequest) -> BoxFuture<HandlerResult<Box<RawValue>>>;
}

fn encode<T: Serialize>(result: HandlerResult<T>) -> HandlerResult<Box<RawValue>> {
    let value = result?;
    serde_json::value::to_raw_value(&value)
        .map_err(|e| ErrorObject::new(ErrorObject::INTERNAL_ERROR, format!("the client cannot encode its answer: {e}")))
}

impl<H: ServerRequestHandler> DynHandler for H {
    fn dispatch(self: Arc<Self>, request: ServerRequest) -> BoxFuture<HandlerResult<Box<RawValue>>> {
        Box::pin(async move {
            // A variant the match does not name (with the protocol crate's `experimental`
            // feature on but this crate's off) goes to `other`.
            #[allow(unreachable_patterns)]
            match request {
                ServerRequest::ItemCommandExecutionRequestApproval { params, .. } => encode(self.command_execution_approval(*params).await),
                ServerRequest::ItemFileChangeRequestApproval { params, .. } => encode(self.file_change_approval(*params).await),
                ServerRequest::ItemPermissionsRequestApproval { params, .. } => encode(self.permissions_approval(*params).await),
                ServerRequest::McpServerElicitationRequest { params, .. } => encode(self.mcp_elicitation(*params).await),
                ServerRequest::ApplyPatchApproval { params, .. } => encode(self.apply_patch_approval(*params).await),
                ServerRequest::ExecCommandApproval { params, .. } => encode(self.exec_command_approval(*params).await),
                ServerRequest::ItemToolRequestUserInput { params, .. } => encode(self.user_input(*params).await),
                ServerRequest::ItemToolCall { params, .. } => encode(self.dynamic_tool_call(*params).await),
                ServerRequest::AccountChatgptAuthTokensRefresh { params, .. } => encode(self.chatgpt_auth_tokens_refresh(*params).await),
                ServerRequest::AttestationGenerate { params, .. } => encode(self.attestation_generate(*params).await),
                #[cfg(feature = "experimental")]
                ServerRequest::CurrentTimeRead { params, .. } => encode(self.current_time_read(*params).await),
                other => encode(self.other(other).await),
            }
        })
    }
}

/// The text of a panic payload.
pub(crate) fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    payload
        .downcast_ref::<&str>()
        .map(|s| (*s).to_owned())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a panic".to_owned())
}
