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
//! Requests are sent with the release's typed params. The `account/login/start` answer is kept
//! as JSON ([`LoginHandle::start_result`]); `account` and `models` are typed by the release's
//! response types.

use std::sync::{Arc, OnceLock};

use codex_app_protocol::roundtrip::reencode;
use codex_app_protocol::*;
use serde_json::Value;

use crate::client::Client;
use crate::error::ClientError;
use crate::events::{Event, Notifications};

/// The notification that ends a login.
const LOGIN_COMPLETED: &str = "account/login/completed";

/// How many login completions a login's stream holds (it takes only those of its login).
const LOGIN_BUFFER: usize = 16;

/// Whether `notification` (its `params` as JSON) is `account/login/completed` of the login
/// `login` (any login while `None`). A notification of another login is not ours; one without
/// an id (older releases) is.
fn is_completion_of(notification: &ServerNotification, params: &Value, login: Option<&str>) -> bool {
    notification.method() == LOGIN_COMPLETED
        && match (params["loginId"].as_str(), login) {
            (Some(id), Some(ours)) => id == ours,
            _ => true,
        }
}

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
    ///
    /// The completion is never lost to lag: the handle's stream, subscribed before the login
    /// started, takes only `account/login/completed` of this login (or without a login id,
    /// as older releases send it), so however many other notifications come before `wait`
    /// is called, it is still there.
    ///
    /// Cancel safe: dropping the future (or the handle) releases the stream; the login goes
    /// on at the server until it ends or is cancelled.
    pub async fn wait(mut self) -> Result<(), ClientError> {
        while let Some(event) = self.events.next().await {
            let Event::Notification(notification) = event else { continue };
            let params = reencode(&*notification).map(|v| v["params"].clone()).unwrap_or_default();
            if !is_completion_of(&notification, &params, Some(&self.login_id)) {
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
    ///
    /// Cancel safe: dropping the future forgets the request (its answer, when it comes, is an
    /// [`Event::Orphan`]); the connection holds nothing for it and goes
    /// on.
    pub async fn cancel(self) -> Result<(), ClientError> {
        let params = CancelLoginAccountParams::new(self.login_id.clone());
        self.client.request_sent::<request::AccountLoginCancel>(&params).await.map(drop)
    }
}

impl Client {
    /// Logs in with an OpenAI API key (`account/login/start` with `type: "apiKey"`).
    ///
    /// Cancel safe: dropping the future forgets the request (its answer, when it comes, is an
    /// [`Event::Orphan`]); the connection holds nothing for it and goes
    /// on.
    pub async fn login_api_key(&self, api_key: &str) -> Result<(), ClientError> {
        let params = LoginAccountParams::ApiKey(ApiKeyLoginAccountParams::new(api_key.to_owned()));
        self.request_sent::<request::AccountLoginStart>(&params).await.map(drop)
    }

    /// Starts a ChatGPT login in the browser: open [`LoginHandle::auth_url`], then
    /// [`wait`](LoginHandle::wait).
    ///
    /// Cancel safe: dropping the future forgets the request and drops the stream it subscribed
    /// (a login the server started goes on there).
    pub async fn login_chatgpt(&self) -> Result<LoginHandle, ClientError> {
        self.login(LoginAccountParams::Chatgpt(ChatgptLoginAccountParams::default())).await
    }

    /// Starts a ChatGPT login with a device code: show [`LoginHandle::verification_url`] and
    /// [`LoginHandle::user_code`], then [`wait`](LoginHandle::wait).
    ///
    /// Cancel safe: dropping the future forgets the request and drops the stream it subscribed
    /// (a login the server started goes on there).
    pub async fn login_device_code(&self) -> Result<LoginHandle, ClientError> {
        self.login(LoginAccountParams::ChatgptDeviceCode(ChatgptDeviceCodeLoginAccountParams::default())).await
    }

    /// Cancel safe: dropping the future drops the stream it subscribed; a login the server
    /// started meanwhile goes on there (its id is not known to the caller).
    async fn login(&self, params: LoginAccountParams) -> Result<LoginHandle, ClientError> {
        let ours = Arc::new(OnceLock::<String>::new());
        let filter = {
            let ours = ours.clone();
            Box::new(move |event: &Event| match event {
                Event::Notification(n) if n.method() == LOGIN_COMPLETED => {
                    let params = reencode(&**n).map(|v| v["params"].clone()).unwrap_or_default();
                    // Before the answer names the login, every completion is kept.
                    is_completion_of(n, &params, ours.get().map(String::as_str))
                }
                _ => false,
            })
        };
        let events = self.filtered_notifications(LOGIN_BUFFER, filter);
        let start = self.request_sent::<request::AccountLoginStart>(&params).await?;
        let login_id = start["loginId"].as_str().unwrap_or_default().to_owned();
        let _ = ours.set(login_id.clone());
        Ok(LoginHandle { client: self.clone(), login_id, start, events })
    }

    /// `account/read`: the account the server is logged in with.
    ///
    /// Cancel safe: dropping the future forgets the request (its answer, when it comes, is an
    /// [`Event::Orphan`]); the connection holds nothing for it and goes
    /// on.
    pub async fn account(&self) -> Result<<request::AccountRead as Request>::Response, ClientError> {
        let result = self.request_sent::<request::AccountRead>(&GetAccountParams::default()).await?;
        crate::wire::result::<request::AccountRead>(result)
    }

    /// `account/logout`.
    ///
    /// Cancel safe: dropping the future forgets the request (its answer, when it comes, is an
    /// [`Event::Orphan`]); the connection holds nothing for it and goes
    /// on.
    pub async fn logout(&self) -> Result<(), ClientError> {
        self.request_sent::<request::AccountLogout>(&()).await.map(drop)
    }

    /// `model/list`: the models the server offers.
    ///
    /// Cancel safe: dropping the future forgets the request (its answer, when it comes, is an
    /// [`Event::Orphan`]); the connection holds nothing for it and goes
    /// on.
    pub async fn models(&self) -> Result<<request::ModelList as Request>::Response, ClientError> {
        let result = self.request_sent::<request::ModelList>(&ModelListParams::default()).await?;
        crate::wire::result::<request::ModelList>(result)
    }
}
