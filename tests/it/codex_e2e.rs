//! End to end with the real Codex CLI binary against a fake Responses API on 127.0.0.1.
