//! The Gemini API, as Gemini CLI calls it: `POST /v1beta/models/<model>:streamGenerateContent`.
