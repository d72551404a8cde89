//! The Anthropic Messages API, as Claude Code calls it: `POST /v1/messages`.
//!
//! Requests that carry `tools` are the agent's turns; others (titles, summaries) get a short
//! plain answer. A shell call is a `tool_use` block named `Bash`.

use serde_json::{Value, json};

use super::{Api, Reply, Response, call_id, message_texts, offers_tools};

pub struct Anthropic;

impl Api for Anthropic {
    fn is_agent_turn(&self, _method: &str, _path: &str, body: &Value) -> bool {
        offers_tools(body)
    }

    fn user_texts(&self, body: &Value) -> Vec<String> {
        message_texts(body, &["user"])
    }

    fn respond(&self, method: &str, path: &str, body: &Value, reply: Option<&Reply>) -> Response {
        if method != "POST" || path != "/v1/messages" {
            return Response::not_found(
                &json!({"type": "error", "error": {"type": "not_found_error", "message": "fake server"}}),
            );
        }
        let reply = reply.unwrap_or(&Reply::Text("ok"));
        let model = body["model"].as_str().unwrap_or("claude-fake");
        if body["stream"] == true {
            stream_events(model, reply)
        } else {
            Response::json(&message(model, reply))
        }
    }
}

fn content(reply: &Reply) -> (Value, &'static str) {
    match reply {
        Reply::Shell(command) => (
            json!({"type": "tool_use", "id": call_id("toolu_fake"), "name": "Bash",
                   "input": {"command": command, "description": "run a command"}}),
            "tool_use",
        ),
        Reply::Text(text) => (json!({"type": "text", "text": text}), "end_turn"),
    }
}

fn usage() -> Value {
    json!({"input_tokens": 10, "output_tokens": 10, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0})
}

/// A whole (non-streaming) message.
fn message(model: &str, reply: &Reply) -> Value {
    let (block, stop_reason) = content(reply);
    json!({"id": "msg_fake", "type": "message", "role": "assistant", "model": model,
           "content": [block], "stop_reason": stop_reason, "stop_sequence": null, "usage": usage()})
}

/// The same message as the Messages API streams it.
fn stream_events(model: &str, reply: &Reply) -> Response {
    let (block, stop_reason) = content(reply);
    let (start, delta) = match reply {
        Reply::Shell(_) => (
            json!({"type": "tool_use", "id": block["id"], "name": "Bash", "input": {}}),
            json!({"type": "input_json_delta", "partial_json": block["input"].to_string()}),
        ),
        Reply::Text(text) => (
            json!({"type": "text", "text": ""}),
            json!({"type": "text_delta", "text": text}),
        ),
    };
    let events = [
        json!({"type": "message_start", "message": {"id": "msg_fake", "type": "message",
               "role": "assistant", "model": model, "content": [], "stop_reason": null,
               "stop_sequence": null, "usage": usage()}}),
        json!({"type": "content_block_start", "index": 0, "content_block": start}),
        json!({"type": "content_block_delta", "index": 0, "delta": delta}),
        json!({"type": "content_block_stop", "index": 0}),
        json!({"type": "message_delta", "delta": {"stop_reason": stop_reason, "stop_sequence": null},
               "usage": {"output_tokens": 10}}),
        json!({"type": "message_stop"}),
    ];
    Response::events(&events, true)
}
