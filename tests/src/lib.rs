//! Recorded codex app-server traffic: the transcript format and the drift check.
