//! Login and account: an API key, a ChatGPT login in the browser or with a device code (as
//! handles that show the URL or the code, then `wait` for `account/login/completed` or
//! `cancel`), `account`, `logout`, `models`.
//!
//! ```no_run
//! # async fn run(client: codex_app_client::Client) -> Result<(), codex_app_client::ClientError> {
//! let login = client.login_device_code().await?;
//! println!("Open {} and enter {}", login.verification_url().unwrap_or_default(), login.user_code().unwrap_or_default());
//! login.wait().await?;
//! # Ok(()) }
//! ```
//!
//! Written as the wire's JSON (`account/login/start` and its answers differ between
//! releases); `account` and `models` are typed by the release's response types.

use codex_app_protocol::*;
use serde_json::{json, Value};

use crate::client::Client;
use crate::error::ClientError;
use crate::events::{Event, Notifications};

/// The notification that ends a login.
const LOGIN_COMPLETED: &str = "account/login/completed";

/// A login in progress: the URL to open or the code to enter; [`wait`](Self::wait) for its end
/// or [`cancel`](Self::cancel) it.
#[derive(Debug)]
pub struct LoginHandle {
    client: Client,
    login_id: String,
    /// The `account/login/start` result.
    start: Value,
    /// Subscribed before the login started, so its `account/login/completed` is never missed.
    events: Notifications,
}

impl LoginHandle {
    /// The login's id.
    pub fn login_id(&self) -> &str {
        &self.login_id
    }

    /// The URL to open in a browser (a ChatGPT browser login).
    pub fn auth_url(&self) -> Option<&str> {
        self.start["authUrl"].as_str()
    }

    /// The URL where the user enters [`user_code`](Self::user_code) (a device-code login).
    pub fn verification_url(&self) -> Option<&str> {
        self.start["verificationUrl"].as_str()
    }

    /// The one-time code the user enters (a device-code login).
    pub fn user_code(&self) -> Option<&str> {
        self.start["userCode"].as_str()
    }

    /// The `account/login/start` result as JSON.
    pub fn start_result(&self) -> &Value {
        &self.start
    }

    /// Waits for `account/login/completed` of this login: `Ok` when it succeeded,
    /// [`ClientError::LoginFailed`] with the server's message otherwise, or the connection's
    /// end.
    pub async fn wait(mut self) -> Result<(), ClientError> {
        while let Some(event) = self.events.next().await {
            let Event::Notification(notification) = event else { continue };
            if notification.method() != LOGIN_COMPLETED {
                continue;
            }
            let params = serde_json::to_value(&*notification).map(|v| v["params"].clone()).unwrap_or_default();
            // A notification of another login is not ours; one without an id (older releases) is.
            if params["loginId"].as_str().is_some_and(|id| id != self.login_id) {
                continue;
            }
            return match params["success"].as_bool() {
                Some(true) => Ok(()),
                _ => Err(ClientError::LoginFailed(
                    params["error"].as_str().unwrap_or("the login did not succeed").to_owned(),
                )),
            };
        }
        Err(self.client.closed().unwrap_or(ClientError::Closed))
    }

    /// `account/login/cancel` of this login.
    pub async fn cancel(self) -> Result<(), ClientError> {
        self.client.request_raw("account/login/cancel", json!({"loginId": self.login_id})).await.map(drop)
    }
}

impl Client {
    /// Logs in with an OpenAI API key (`account/login/start` with `type: "apiKey"`).
    pub async fn login_api_key(&self, api_key: &str) -> Result<(), ClientError> {
        self.request_raw("account/login/start", json!({"type": "apiKey", "apiKey": api_key})).await.map(drop)
    }

    /// Starts a ChatGPT login in the browser: open [`LoginHandle::auth_url`], then
    /// [`wait`](LoginHandle::wait).
    pub async fn login_chatgpt(&self) -> Result<LoginHandle, ClientError> {
        self.login(json!({"type": "chatgpt"})).await
    }

    /// Starts a ChatGPT login with a device code: show [`LoginHandle::verification_url`] and
    /// [`LoginHandle::user_code`], then [`wait`](LoginHandle::wait).
    pub async fn login_device_code(&self) -> Result<LoginHandle, ClientError> {
        self.login(json!({"type": "chatgptDeviceCode"})).await
    }

    async fn login(&self, params: Value) -> Result<LoginHandle, ClientError> {
        let events = self.notifications();
        let start = self.request_raw("account/login/start", params).await?;
        let login_id = start["loginId"].as_str().unwrap_or_default().to_owned();
        Ok(LoginHandle { client: self.clone(), login_id, start, events })
    }

    /// `account/read`: the account the server is logged in with.
    pub async fn account(&self) -> Result<<request::AccountRead as Request>::Response, ClientError> {
        // By name: the params of `account/read` differ between releases.
        let result = self.request_raw("account/read", json!({})).await?;
        crate::wire::result::<request::AccountRead>(result)
    }

    /// `account/logout`.
    pub async fn logout(&self) -> Result<(), ClientError> {
        self.request_raw("account/logout", Value::Null).await.map(drop)
    }

    /// `model/list`: the models the server offers.
    pub async fn models(&self) -> Result<<request::ModelList as Request>::Response, ClientError> {
        let result = self.request_raw("model/list", json!({})).await?;
        crate::wire::result::<request::ModelList>(result)
    }
}
