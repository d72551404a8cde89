//! The OpenAI Responses API, as Codex CLI calls it: `POST /v1/responses`, streamed.
//!
//! Requests that carry `tools` are the agent's turns; others get a short plain answer (Codex
//! 0.171.0 sends none in `codex exec`). A shell call is a `function_call` to Codex's
//! `exec_command` tool with arguments `{"cmd": …}`. Each request carries the whole conversation
//! in `input`: the user side is its `user` messages (prompt, environment context, and a Stop
//! hook's reason as `<hook_prompt …>R</hook_prompt>`) and its `function_call_output` items.

use serde_json::{Value, json};

use super::{Api, Reply, Response, call_id, collect_text, offers_tools};

pub struct Responses;

impl Api for Responses {
    fn is_agent_turn(&self, method: &str, path: &str, body: &Value) -> bool {
        method == "POST" && path == "/v1/responses" && offers_tools(body)
    }

    fn user_texts(&self, body: &Value) -> Vec<String> {
        let input = body["input"].as_array().into_iter().flatten();
        input
            .filter_map(|item| {
                let inner = match item["type"].as_str() {
                    Some("function_call_output") => &item["output"],
                    Some("message") | None if item["role"] == "user" => &item["content"],
                    _ => return None,
                };
                let mut text = String::new();
                collect_text(inner, &mut text);
                Some(text)
            })
            .collect()
    }

    fn respond(&self, method: &str, path: &str, body: &Value, reply: Option<&Reply>) -> Response {
        match (method, path) {
            ("POST", "/v1/responses") => {}
            // The model listing, should a version ask for it: none, so the config's model stands.
            ("GET", "/v1/models") => {
                return Response::json(&json!({"object": "list", "data": [], "models": []}));
            }
            _ => {
                return Response::not_found(
                    &json!({"error": {"type": "invalid_request_error", "message": "fake server", "code": "not_found"}}),
                );
            }
        }
        let reply = reply.unwrap_or(&Reply::Text("ok"));
        let model = body["model"].as_str().unwrap_or("gpt-fake");
        let id = call_id("resp_fake");
        let item = output_item(reply);
        if body["stream"] == true {
            stream_events(&id, model, &item)
        } else {
            Response::json(&response(&id, model, "completed", vec![item]))
        }
    }
}

/// The one output item of a reply: a call of the shell tool, or an assistant message.
fn output_item(reply: &Reply) -> Value {
    match reply {
        Reply::Shell(command) => json!({
            "type": "function_call", "id": call_id("fc_fake"), "call_id": call_id("call_fake"),
            "name": "exec_command", "arguments": json!({"cmd": command}).to_string(),
            "status": "completed",
        }),
        Reply::Text(text) => json!({
            "type": "message", "id": call_id("msg_fake"), "role": "assistant", "status": "completed",
            "content": [{"type": "output_text", "text": text, "annotations": []}],
        }),
    }
}

fn usage() -> Value {
    json!({"input_tokens": 10, "input_tokens_details": {"cached_tokens": 0},
           "output_tokens": 10, "output_tokens_details": {"reasoning_tokens": 0},
           "total_tokens": 20})
}

/// A response object, as `response.created` and `response.completed` carry it.
fn response(id: &str, model: &str, status: &str, output: Vec<Value>) -> Value {
    let usage = if status == "completed" {
        usage()
    } else {
        Value::Null
    };
    json!({"id": id, "object": "response", "created_at": 0, "status": status, "model": model,
           "output": output, "usage": usage})
}

/// The reply as the Responses API streams it: named events, the item added, its text streamed,
/// the item done, the response completed.
fn stream_events(id: &str, model: &str, item: &Value) -> Response {
    let mut events = vec![
        json!({"type": "response.created", "sequence_number": 0,
               "response": response(id, model, "in_progress", vec![])}),
        json!({"type": "response.in_progress", "sequence_number": 1,
               "response": response(id, model, "in_progress", vec![])}),
    ];
    let mut added = item.clone();
    added["status"] = json!("in_progress");
    if item["type"] == "message" {
        added["content"] = json!([]);
    }
    events.push(json!({"type": "response.output_item.added", "output_index": 0, "item": added}));
    if let Some(text) = item["content"][0]["text"].as_str() {
        let item_id = &item["id"];
        events.extend([
            json!({"type": "response.content_part.added", "item_id": item_id, "output_index": 0,
                   "content_index": 0, "part": {"type": "output_text", "text": "", "annotations": []}}),
            json!({"type": "response.output_text.delta", "item_id": item_id, "output_index": 0,
                   "content_index": 0, "delta": text}),
            json!({"type": "response.output_text.done", "item_id": item_id, "output_index": 0,
                   "content_index": 0, "text": text}),
            json!({"type": "response.content_part.done", "item_id": item_id, "output_index": 0,
                   "content_index": 0, "part": item["content"][0]}),
        ]);
    } else {
        events.push(
            json!({"type": "response.function_call_arguments.done", "item_id": item["id"],
                           "output_index": 0, "arguments": item["arguments"]}),
        );
    }
    events.extend([
        json!({"type": "response.output_item.done", "output_index": 0, "item": item}),
        json!({"type": "response.completed",
               "response": response(id, model, "completed", vec![item.clone()])}),
    ]);
    for (n, event) in events.iter_mut().enumerate() {
        event["sequence_number"] = json!(n);
    }
    Response::events(&events, true)
}
