//! The Gemini API, as Gemini CLI calls it: `POST /v1beta/models/<model>:<method>`.
//!
//! The agent's turns are `:streamGenerateContent?alt=sse` requests that offer `tools`; their
//! answer streams `GenerateContentResponse` objects as `data:` lines. A shell call is a
//! `functionCall` of `run_shell_command`. Side requests are `:generateContent` asking for JSON
//! by a schema: the router's complexity classifier, and the next-speaker check (off by default
//! in 0.61.0), which is told that the user speaks next, so the model is never re-prompted on
//! its own; `:countTokens` gets a count.

use serde_json::{Value, json};

use super::{Api, Reply, Response, collect_text, offers_tools};

pub struct Gemini;

impl Api for Gemini {
    fn is_agent_turn(&self, _method: &str, path: &str, body: &Value) -> bool {
        path.ends_with(":streamGenerateContent") && offers_tools(body)
    }

    /// Each user `content` in order: its text parts and its function responses' outputs. The
    /// hook's feedback after a block is a user content of one text part.
    fn user_texts(&self, body: &Value) -> Vec<String> {
        let contents = body["contents"].as_array().into_iter().flatten();
        contents
            .filter(|content| content["role"] == "user")
            .map(|content| {
                let mut text = String::new();
                for part in content["parts"].as_array().into_iter().flatten() {
                    if let Some(response) = part.get("functionResponse") {
                        let before = text.len();
                        collect_text(&response["response"], &mut text);
                        if text.len() == before {
                            text.push_str(&response["response"].to_string());
                            text.push('\n');
                        }
                    } else {
                        collect_text(&part["text"], &mut text);
                    }
                }
                text
            })
            .collect()
    }

    fn respond(&self, method: &str, path: &str, body: &Value, reply: Option<&Reply>) -> Response {
        let model = path
            .rsplit('/')
            .next()
            .and_then(|last| last.split(':').next())
            .unwrap_or("gemini-fake");
        if method != "POST" {
            return not_found();
        }
        if path.ends_with(":streamGenerateContent") {
            let reply = reply.unwrap_or(&Reply::Text("ok"));
            Response::events(&[candidate(model, part(reply))], false)
        } else if path.ends_with(":generateContent") {
            Response::json(&candidate(model, json!({"text": side_answer(body)})))
        } else if path.ends_with(":countTokens") {
            Response::json(&json!({"totalTokens": 10}))
        } else {
            not_found()
        }
    }
}

fn not_found() -> Response {
    Response::not_found(
        &json!({"error": {"code": 404, "message": "fake server", "status": "NOT_FOUND"}}),
    )
}

fn part(reply: &Reply) -> Value {
    match reply {
        Reply::Shell(command) => json!({"functionCall": {"name": "run_shell_command",
            "args": {"command": command, "description": "run a command"}}}),
        Reply::Text(text) => json!({"text": text}),
    }
}

/// A whole `GenerateContentResponse` of one part. A stream may be one such object: a function
/// call ends the turn with `STOP` too, as the real API does.
fn candidate(model: &str, part: Value) -> Value {
    json!({
        "candidates": [{"content": {"role": "model", "parts": [part]}, "finishReason": "STOP", "index": 0}],
        "usageMetadata": {"promptTokenCount": 10, "candidatesTokenCount": 10, "totalTokenCount": 20},
        "modelVersion": model,
    })
}

/// The text of a side request's answer: JSON for the schema it asks for, else a short word.
fn side_answer(body: &Value) -> String {
    let config = &body["generationConfig"];
    let schema = if config["responseJsonSchema"].is_object() {
        &config["responseJsonSchema"]
    } else {
        &config["responseSchema"]
    };
    let properties = &schema["properties"];
    if properties.get("complexity_score").is_some() {
        json!({"complexity_reasoning": "a scripted test turn", "complexity_score": 10}).to_string()
    } else if properties.get("next_speaker").is_some() {
        json!({"reasoning": "the model answered; the user speaks next", "next_speaker": "user"})
            .to_string()
    } else if config["responseMimeType"] == "application/json" {
        "{}".to_string()
    } else {
        "ok".to_string()
    }
}
