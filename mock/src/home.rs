//! A throw-away `CODEX_HOME` for a real `codex app-server` that talks to the loopback mock.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use anyhow::{Context as _, Result};

/// The `config.toml` written into the fresh `CODEX_HOME`: the model provider is the mock (no
/// retries, so a failure shows at once). The rest keeps the server off the network beyond
/// loopback: no update check, no analytics, no plugin sync (which otherwise tries github.com
/// and chatgpt.com at start-up); none of it changes what the model or the client sees, apart
/// from `config/read` echoing these settings.
pub fn config_toml(mock_base_url: &str) -> String {
    format!(
        r#"model = "mock-model"
approval_policy = "never"
sandbox_mode = "workspace-write"
model_provider = "mock_provider"
check_for_update_on_startup = false

[model_providers.mock_provider]
name = "Mock provider"
base_url = "{mock_base_url}"
wire_api = "responses"
request_max_retries = 0
stream_max_retries = 0

[analytics]
enabled = false

[features]
plugins = false
remote_plugin = false
"#
    )
}

/// Variables of the caller's environment the server must not see: credentials and endpoints
/// of a real provider, and XDG folders that would point it at the user's own files.
pub const REMOVED_ENV: &[&str] = &[
    "OPENAI_API_KEY",
    "OPENAI_BASE_URL",
    "CODEX_API_KEY",
    "XDG_CONFIG_HOME",
    "XDG_DATA_HOME",
    "XDG_STATE_HOME",
    "XDG_CACHE_HOME",
];

/// A fresh `CODEX_HOME` (deleted on drop) holding `config.toml` for the mock, a working
/// directory `work/` and a clean `home/` for `$HOME` (the user's shell start-up files, which
/// codex's shell snapshot runs, must not leak output or timing into commands).
pub struct CodexHome {
    dir: tempfile::TempDir,
}

impl CodexHome {
    /// Creates the folders and writes `config.toml` pointing at `mock_base_url`
    /// (`http://127.0.0.1:PORT/v1`, see [`crate::MockServer::base_url`]).
    pub fn new(mock_base_url: &str) -> Result<CodexHome> {
        let dir =
            tempfile::Builder::new().prefix("codex-home-").tempdir().context("cannot create a temporary CODEX_HOME")?;
        std::fs::write(dir.path().join("config.toml"), config_toml(mock_base_url))?;
        std::fs::create_dir_all(dir.path().join("work"))?;
        std::fs::create_dir_all(dir.path().join("home"))?;
        Ok(CodexHome { dir })
    }

    /// The `CODEX_HOME` folder.
    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    /// The working directory to start the server in.
    pub fn work_dir(&self) -> PathBuf {
        self.dir.path().join("work")
    }

    /// The variables to set for the server: `CODEX_HOME`, a clean `HOME`, `RUST_LOG=warn`.
    /// Remove [`REMOVED_ENV`] as well.
    pub fn env(&self) -> Vec<(&'static str, OsString)> {
        vec![
            ("CODEX_HOME", self.dir.path().into()),
            ("HOME", self.dir.path().join("home").into()),
            ("RUST_LOG", "warn".into()),
        ]
    }

    /// Sets [`CodexHome::env`], removes [`REMOVED_ENV`] and sets the working directory on a
    /// `std::process::Command`.
    pub fn configure(&self, cmd: &mut std::process::Command) {
        cmd.current_dir(self.work_dir()).envs(self.env());
        for key in REMOVED_ENV {
            cmd.env_remove(key);
        }
    }
}
