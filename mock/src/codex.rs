//! The real codex for the workspace's tests: the pinned release, installed on first use.
//!
//! README's test command runs the tests that drive the real `codex app-server`; on a fresh
//! checkout nothing has installed codex yet, so the first test that needs it installs the
//! pinned release into the workspace's `.codex-bin/` (with `scripts/install-codex.sh`, that is
//! npm) and every later test, in this process or another, uses that install.
//!
//! Once per checkout and safe in parallel: within a process the first caller installs and the
//! others wait for its outcome; across processes (test binaries run side by side) an exclusive
//! lock on `.codex-bin.lock` lets one install while the others wait, then find it installed.

use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Mutex, OnceLock};

/// The workspace root (the parent of this crate).
fn workspace() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("the mock crate sits in the workspace")
}

/// Where `scripts/install-codex.sh` puts codex (the path the workspace's tools look at).
pub fn pinned_path() -> PathBuf {
    workspace().join(".codex-bin/node_modules/.bin/codex")
}

/// The codex binary for a test that drives the real server, `version` being the release the
/// protocol crate was generated from (`codex_app_protocol::CODEX_VERSION`):
///
/// 1. `$CODEX_BIN` when it is set and not empty (your choice, whatever its version);
/// 2. the workspace's pinned install, `.codex-bin/`, when it reports `version`;
/// 3. `codex` on `PATH` when it reports `version`;
/// 4. else `version` installed into `.codex-bin/` now (`scripts/install-codex.sh`, with npm).
///
/// The error is one line that says what to install (npm, when it is missing) or what failed.
pub fn pinned(version: &str) -> Result<PathBuf, String> {
    if let Some(bin) = std::env::var_os("CODEX_BIN").filter(|v| !v.is_empty()) {
        return Ok(PathBuf::from(bin));
    }
    // One outcome per version for the whole process: concurrent tests wait for the first.
    type Outcomes = Vec<(String, Result<PathBuf, String>)>;
    static FOUND: OnceLock<Mutex<Outcomes>> = OnceLock::new();
    let mut found = FOUND.get_or_init(Mutex::default).lock().unwrap_or_else(|e| e.into_inner());
    if let Some((_, outcome)) = found.iter().find(|(v, _)| v == version) {
        return outcome.clone();
    }
    let outcome = find_or_install(version, std::env::var_os("PATH"));
    found.push((version.to_owned(), outcome.clone()));
    outcome
}

/// [`pinned`] without `$CODEX_BIN` and its memory, with `path` as `PATH`.
fn find_or_install(version: &str, path: Option<OsString>) -> Result<PathBuf, String> {
    let pinned = pinned_path();
    if reports(&pinned, version) {
        return Ok(pinned);
    }
    let dirs: Vec<PathBuf> = path.iter().flat_map(std::env::split_paths).filter(|dir| dir.is_absolute()).collect();
    let on_path =
        |name: &str| -> Vec<PathBuf> { dirs.iter().map(|dir| dir.join(name)).filter(|p| p.is_file()).collect() };
    if let Some(codex) = on_path("codex").into_iter().find(|p| reports(p, version)) {
        return Ok(codex);
    }
    if on_path("npm").is_empty() {
        return Err(format!(
            "the tests that drive the real codex install codex {version} with npm, and npm is not on PATH: install \
             Node.js (it ships npm), or set CODEX_BIN to a codex {version}"
        ));
    }
    let _lock = InstallLock::take(&workspace().join(".codex-bin.lock"))?;
    // Another process may have installed it while this one waited for the lock.
    if reports(&pinned, version) {
        return Ok(pinned);
    }
    install(version, path.as_deref())?;
    match reports(&pinned, version) {
        true => Ok(pinned),
        false => Err(format!("scripts/install-codex.sh ran, but {} does not report codex {version}", pinned.display())),
    }
}

/// Whether `bin` runs and prints `version` as its own (`codex-cli 0.171.0`).
fn reports(bin: &Path, version: &str) -> bool {
    bin.is_file()
        && Command::new(bin).arg("--version").output().is_ok_and(|o| {
            o.status.success() && String::from_utf8_lossy(&o.stdout).split_whitespace().last() == Some(version)
        })
}

fn install(version: &str, path: Option<&OsStr>) -> Result<(), String> {
    let script = workspace().join("scripts/install-codex.sh");
    eprintln!(
        "installing codex {version} into {} for the tests that drive it (npm)",
        workspace().join(".codex-bin").display()
    );
    let started = std::time::Instant::now();
    let mut command = Command::new("bash");
    if let Some(path) = path {
        command.env("PATH", path);
    }
    let output = command
        .arg(&script)
        .env("CODEX_VERSION", version)
        .env_remove("CODEX_INSTALL_DIR")
        .output()
        .map_err(|e| format!("cannot run {}: {e}", script.display()))?;
    if !output.status.success() {
        let stderr = String::from_utf8_lossy(&output.stderr);
        let tail: Vec<&str> = stderr.lines().rev().take(15).collect::<Vec<_>>().into_iter().rev().collect();
        return Err(format!(
            "installing codex {version} failed ({}, {}):\n{}",
            script.display(),
            output.status,
            tail.join("\n")
        ));
    }
    eprintln!("installed codex {version} in {:.1?}", started.elapsed());
    Ok(())
}

/// An exclusive advisory lock on a file, held until dropped (released by the system if the
/// process dies).
struct InstallLock {
    _file: std::fs::File,
}

impl InstallLock {
    fn take(path: &Path) -> Result<InstallLock, String> {
        let file = std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(path)
            .map_err(|e| format!("cannot open the install lock {}: {e}", path.display()))?;
        #[cfg(unix)]
        {
            use std::os::unix::io::AsRawFd;
            loop {
                // SAFETY: flock takes a descriptor and a flag and touches no memory; the
                // descriptor is `file`'s, open for the lock's lifetime. Exercised by
                // `tests::the_install_lock_is_exclusive`.
                if unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX) } == 0 {
                    break;
                }
                let error = std::io::Error::last_os_error();
                if error.kind() != std::io::ErrorKind::Interrupted {
                    return Err(format!("cannot lock {}: {error}", path.display()));
                }
            }
        }
        Ok(InstallLock { _file: file })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Without npm (a `PATH` without it) and without an install of the release asked for, the
    /// error is one line that says what to install.
    #[test]
    fn without_npm_the_error_says_to_install_it() {
        let empty = tempfile::tempdir().unwrap();
        let error = find_or_install("0.0.0-not-a-release", Some(empty.path().as_os_str().to_owned())).unwrap_err();
        assert!(error.contains("npm is not on PATH: install Node.js"), "{error}");
        assert!(!error.contains('\n'), "{error}");
    }

    /// The install lock (the `unsafe` `flock`) is held by one holder at a time.
    #[cfg(unix)]
    #[test]
    fn the_install_lock_is_exclusive() {
        use std::sync::mpsc;
        use std::time::Duration;

        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("lock");
        let first = InstallLock::take(&path).unwrap();
        let (taken, when_taken) = mpsc::channel();
        let second = std::thread::spawn({
            let path = path.clone();
            move || {
                let lock = InstallLock::take(&path).unwrap();
                taken.send(()).unwrap();
                drop(lock);
            }
        });
        assert!(when_taken.recv_timeout(Duration::from_millis(300)).is_err(), "taken while held");
        drop(first);
        when_taken.recv_timeout(Duration::from_secs(10)).expect("taken once released");
        second.join().unwrap();
    }

    /// A binary that prints another version is not taken for the release asked for.
    #[test]
    fn a_binary_is_taken_only_when_it_reports_the_version() {
        let dir = tempfile::tempdir().unwrap();
        let bin = dir.path().join("codex");
        std::fs::write(&bin, "#!/bin/sh\necho codex-cli 0.171.0\n").unwrap();
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&bin, std::fs::Permissions::from_mode(0o755)).unwrap();
        }
        assert!(reports(&bin, "0.171.0"));
        assert!(!reports(&bin, "0.170.0"));
        assert!(!reports(&dir.path().join("missing"), "0.171.0"));
    }
}
