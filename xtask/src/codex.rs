//! Finding and running the real `codex` binary.

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{bail, Context};

/// Where the project's install script puts the pinned codex (`scripts/install-codex.sh`).
pub fn pinned_path() -> PathBuf {
    crate::root().join(".codex-bin/node_modules/.bin/codex")
}

/// `--codex PATH`, else `$CODEX_BIN`, else the project's pinned install, else `codex` on PATH.
pub fn find(explicit: Option<&Path>) -> Option<PathBuf> {
    if let Some(p) = explicit {
        return Some(p.to_owned());
    }
    if let Some(p) = std::env::var_os("CODEX_BIN").filter(|p| !p.is_empty()) {
        return Some(PathBuf::from(p));
    }
    let pinned = pinned_path();
    if pinned.exists() {
        return Some(pinned);
    }
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path).map(|dir| dir.join("codex")).find(|p| p.is_file())
}

/// `codex --version` without the `codex-cli ` prefix (`0.169.0`).
pub fn version(codex: &Path) -> anyhow::Result<String> {
    let out = Command::new(codex).arg("--version").output().with_context(|| format!("running {} --version", codex.display()))?;
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
