//! The OpenAI Chat Completions API, as Copilot CLI calls it offline: `POST /v1/chat/completions`.
