//! Finding and running the real `codex` binary.

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{bail, Context};

// The one rule for finding codex, the client's (`find_codex_from`); included as source so that
// `cargo xtask regen` does not build the client and the protocol crate.
#[path = "../../client/src/transport/find_codex.rs"]
mod find_codex;

/// Where the project's install script puts the pinned codex (`scripts/install-codex.sh`).
pub fn pinned_path() -> PathBuf {
    crate::root().join(find_codex::PINNED)
}

/// `--codex PATH`, else `$CODEX_BIN`, else the project's pinned install, else `codex` on PATH.
pub fn find(explicit: Option<&Path>) -> Option<PathBuf> {
    find_codex::find_codex_from(explicit, Some(&crate::root())).map(|(path, _)| path)
}

/// `codex --version` without the `codex-cli ` prefix (`0.169.0`).
pub fn version(codex: &Path) -> anyhow::Result<String> {
    let out = Command::new(codex)
        .arg("--version")
        .output()
        .with_context(|| format!("running {} --version", codex.display()))?;
    if !out.status.success() {
        bail!("{} --version failed: {}", codex.display(), String::from_utf8_lossy(&out.stderr));
    }
    let text = String::from_utf8_lossy(&out.stdout);
    let version = text.trim().rsplit(' ').next().unwrap_or_default().to_owned();
    if version.is_empty() {
        bail!("{} --version printed nothing", codex.display());
    }
    Ok(version)
}

/// Runs `codex app-server generate-json-schema [--experimental] --out DIR`. Returns `false`
/// when this codex has no `--experimental` flag (0.60.1, 0.80.0).
pub fn generate_schema(codex: &Path, out: &Path, experimental: bool) -> anyhow::Result<bool> {
    let mut cmd = Command::new(codex);
    cmd.args(["app-server", "generate-json-schema"]);
    if experimental {
        cmd.arg("--experimental");
    }
    cmd.arg("--out").arg(out);
    let output = cmd.output().with_context(|| format!("running {}", codex.display()))?;
    if output.status.success() {
        return Ok(true);
    }
    let stderr = String::from_utf8_lossy(&output.stderr);
    if experimental && stderr.contains("--experimental") {
        return Ok(false);
    }
    bail!("{cmd:?} failed: {stderr}")
}
