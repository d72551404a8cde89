//! End to end with the real Copilot CLI binary against a fake Chat Completions API on 127.0.0.1.
