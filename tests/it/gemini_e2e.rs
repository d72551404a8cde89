//! End to end with the real Gemini CLI binary against a fake Gemini API on 127.0.0.1.
