//! The OpenAI Chat Completions API, as Copilot CLI and Qwen Code call it offline:
//! `POST /v1/chat/completions`.
//!
//! Requests that offer `tools` are the agent's turns; others get a short plain answer. A shell
//! call is a `tool_calls` entry naming the shell function the request offers: Qwen Code's
//! `run_shell_command`, else Copilot's `bash`. `GET /v1/models` lists one model.

use serde_json::{Value, json};

use super::{Api, Reply, Response, call_id, message_texts, offers_tools};

pub struct Chat;

impl Api for Chat {
    fn is_agent_turn(&self, _method: &str, _path: &str, body: &Value) -> bool {
        offers_tools(body)
    }

    fn user_texts(&self, body: &Value) -> Vec<String> {
        message_texts(body, &["user", "tool"])
    }

    fn respond(&self, method: &str, path: &str, body: &Value, reply: Option<&Reply>) -> Response {
        let model = body["model"].as_str().unwrap_or("gpt-4.1");
        match (method, path) {
            ("GET", "/v1/models") => Response::json(&json!({"object": "list", "data": [
                {"id": model, "object": "model", "created": 0, "owned_by": "fake"}]})),
            ("POST", "/v1/chat/completions") => {
                let reply = reply.unwrap_or(&Reply::Text("ok"));
                let shell = Shell::offered(body);
                if body["stream"] == true {
                    stream(model, reply, shell)
                } else {
                    Response::json(&completion(model, reply, shell))
                }
            }
            _ => Response::not_found(
                &json!({"error": {"message": "fake server", "type": "invalid_request_error"}}),
            ),
        }
    }
}

/// The shell function a request offers the model, with its arguments' shape.
#[derive(Clone, Copy)]
enum Shell {
    /// Copilot CLI's `bash`.
    Bash,
    /// Qwen Code's `run_shell_command`.
    RunShellCommand,
}

impl Shell {
    fn offered(body: &Value) -> Shell {
        let offers = |name: &str| {
            body["tools"]
                .as_array()
                .into_iter()
                .flatten()
                .any(|tool| tool["function"]["name"] == name)
        };
        if offers("run_shell_command") {
            Shell::RunShellCommand
        } else {
            Shell::Bash
        }
    }

    /// The function's name and its arguments for `command`.
    fn call(self, command: &str) -> (&'static str, Value) {
        match self {
            Shell::Bash => (
                "bash",
                json!({"command": command, "description": "run a command",
                       "mode": "sync", "initial_wait": 30}),
            ),
            Shell::RunShellCommand => (
                "run_shell_command",
                json!({"command": command, "description": "run a command",
                       "is_background": false}),
            ),
        }
    }
}

/// The assistant message and its finish reason.
fn message(reply: &Reply, shell: Shell) -> (Value, &'static str) {
    match reply {
        Reply::Shell(command) => {
            let (name, arguments) = shell.call(command);
            let call = json!({"id": call_id("call_fake"), "type": "function",
                              "function": {"name": name, "arguments": arguments.to_string()}});
            (
                json!({"role": "assistant", "content": null, "tool_calls": [call]}),
                "tool_calls",
            )
        }
        Reply::Text(text) => (json!({"role": "assistant", "content": text}), "stop"),
    }
}

fn usage() -> Value {
    json!({"prompt_tokens": 10, "completion_tokens": 10, "total_tokens": 20})
}

fn completion(model: &str, reply: &Reply, shell: Shell) -> Value {
    let (message, finish) = message(reply, shell);
    json!({"id": "chatcmpl-fake", "object": "chat.completion", "created": 0, "model": model,
           "choices": [{"index": 0, "message": message, "finish_reason": finish}],
           "usage": usage()})
}

/// The same completion as chunks, then `data: [DONE]`.
fn stream(model: &str, reply: &Reply, shell: Shell) -> Response {
    let (mut message, finish) = message(reply, shell);
    if let Some(calls) = message["tool_calls"].as_array_mut() {
        for (index, call) in calls.iter_mut().enumerate() {
            call["index"] = json!(index);
        }
    }
    let chunk = |delta: Value, finish: Value| {
        json!({"id": "chatcmpl-fake", "object": "chat.completion.chunk", "created": 0,
               "model": model, "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]})
    };
    let mut last = chunk(json!({}), json!(finish));
    last["usage"] = usage();
    let mut response = Response::events(&[chunk(message, Value::Null), last], false);
    response.body.push_str("data: [DONE]\n\n");
    response
}
