//! The OpenAI Responses API, as Codex CLI calls it: `POST /v1/responses`.
