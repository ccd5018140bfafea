//! Executable scripts the tests write, then start.

use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};

/// Writes `text` to `path` as an executable script, through a child process: the file is never
/// open for writing in this one. The tests start programs from several threads at once, and a
/// child forked by another thread while this process held the file open for writing keeps it
/// open until that child runs its own program; starting the script in that moment fails with
/// "Text file busy" (`ETXTBSY`).
pub fn write(path: &Path, text: &str) {
    let mut child = Command::new("sh")
        .args(["-c", r#"cat > "$1" && chmod 755 "$1""#, "sh"])
        .arg(path)
        .stdin(Stdio::piped())
        .spawn()
        .expect("sh");
    child.stdin.take().expect("a pipe").write_all(text.as_bytes()).expect("writing to sh");
    assert!(child.wait().expect("sh").success(), "could not write {}", path.display());
}
