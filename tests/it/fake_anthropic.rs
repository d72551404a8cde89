//! A fake Anthropic Messages API on 127.0.0.1, for driving the real Claude Code binary.
//!
//! It answers `POST /v1/messages` with scripted turns streamed as server-sent events, and logs
//! every request it receives so a test can read what the model was shown. Requests that carry
//! `tools` are the agent's turns and take the next scripted reply; others (titles, summaries)
//! get a short plain answer. Anything else is answered 404 and logged.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread;

use serde_json::{Value, json};

/// What the model answers to one agent turn.
#[derive(Debug, Clone)]
pub enum Reply {
    /// A `Bash` tool call running this command.
    Bash(&'static str),
    /// A final answer: the agent's claim.
    Text(&'static str),
}

/// One request as the server saw it.
#[derive(Debug, Clone)]
pub struct Request {
    pub path: String,
    pub body: Value,
}

impl Request {
    /// An agent turn: the request offers tools.
    pub fn is_agent_turn(&self) -> bool {
        self.body["tools"].as_array().is_some_and(|t| !t.is_empty())
    }

    /// Every text of the last user message (text blocks and tool results), joined.
    pub fn last_user_text(&self) -> String {
        let mut out = String::new();
        if let Some(last) = self.user_messages().last() {
            collect_text(&last["content"], &mut out);
        }
        out
    }

    /// Every text of every user message in the conversation so far, joined.
    pub fn user_text(&self) -> String {
        let mut out = String::new();
        for message in self.user_messages() {
            collect_text(&message["content"], &mut out);
        }
        out
    }

    fn user_messages(&self) -> Vec<&Value> {
        let messages = self.body["messages"].as_array();
        messages
            .into_iter()
            .flatten()
            .filter(|message| message["role"] == "user")
            .collect()
    }
}

fn collect_text(value: &Value, out: &mut String) {
    match value {
        Value::String(s) => {
            out.push_str(s);
            out.push('\n');
        }
        Value::Array(items) => items.iter().for_each(|item| collect_text(item, out)),
        Value::Object(map) => {
            for key in ["text", "content"] {
                if let Some(inner) = map.get(key) {
                    collect_text(inner, out);
                }
            }
        }
        _ => {}
    }
}

struct Script {
    turns: Vec<Reply>,
    then: Reply,
    next: usize,
}

impl Script {
    fn next(&mut self) -> Reply {
        let reply = self
            .turns
            .get(self.next)
            .cloned()
            .unwrap_or_else(|| self.then.clone());
        self.next += 1;
        reply
    }
}

pub struct FakeAnthropic {
    port: u16,
    log: Arc<Mutex<Vec<Request>>>,
    stop: Arc<AtomicBool>,
    accept: Option<thread::JoinHandle<()>>,
}

impl FakeAnthropic {
    /// Serve `turns` to the agent's turns in order, then `then` for every turn after them.
    pub fn start(turns: Vec<Reply>, then: Reply) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind a loopback port");
        let port = listener.local_addr().unwrap().port();
        let log = Arc::new(Mutex::new(Vec::new()));
        let stop = Arc::new(AtomicBool::new(false));
        let script = Arc::new(Mutex::new(Script {
            turns,
            then,
            next: 0,
        }));
        let accept = {
            let (log, stop) = (log.clone(), stop.clone());
            thread::spawn(move || {
                for stream in listener.incoming() {
                    if stop.load(Ordering::SeqCst) {
                        break;
                    }
                    let Ok(stream) = stream else { continue };
                    let (log, script) = (log.clone(), script.clone());
                    thread::spawn(move || serve(stream, &log, &script));
                }
            })
        };
        FakeAnthropic {
            port,
            log,
            stop,
            accept: Some(accept),
        }
    }

    pub fn base_url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    pub fn requests(&self) -> Vec<Request> {
        self.log.lock().unwrap().clone()
    }

    pub fn agent_turns(&self) -> Vec<Request> {
        self.requests()
            .into_iter()
            .filter(Request::is_agent_turn)
            .collect()
    }
}

impl Drop for FakeAnthropic {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        let _ = TcpStream::connect(("127.0.0.1", self.port));
        if let Some(accept) = self.accept.take() {
            let _ = accept.join();
        }
    }
}

/// Serve one connection: HTTP/1.1 requests with a Content-Length body, kept alive.
fn serve(stream: TcpStream, log: &Mutex<Vec<Request>>, script: &Mutex<Script>) {
    let mut reader = BufReader::new(stream.try_clone().expect("clone the stream"));
    let mut writer = stream;
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).unwrap_or(0) == 0 {
            return;
        }
        let mut parts = line.split_whitespace();
        let (method, target) = (parts.next().unwrap_or(""), parts.next().unwrap_or(""));
        let path = target.split('?').next().unwrap_or("").to_owned();
        let mut length = 0usize;
        let mut chunked = false;
        loop {
            let mut header = String::new();
            if reader.read_line(&mut header).unwrap_or(0) == 0 {
                return;
            }
            let header = header.trim_end();
            if header.is_empty() {
                break;
            }
            let (name, value) = header.split_once(':').unwrap_or((header, ""));
            match name.trim().to_ascii_lowercase().as_str() {
                "content-length" => length = value.trim().parse().unwrap_or(0),
                "transfer-encoding" => chunked = value.to_ascii_lowercase().contains("chunked"),
                _ => {}
            }
        }
        let body = if chunked {
            read_chunked(&mut reader)
        } else {
            let mut body = vec![0; length];
            if reader.read_exact(&mut body).is_err() {
                return;
            }
            body
        };
        let body: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
        let request = Request { path, body };
        log.lock().unwrap().push(request.clone());

        let response = if method == "POST" && request.path == "/v1/messages" {
            let reply = if request.is_agent_turn() {
                script.lock().unwrap().next()
            } else {
                Reply::Text("ok")
            };
            let model = request.body["model"].as_str().unwrap_or("claude-fake");
            if request.body["stream"] == true {
                http(200, "text/event-stream", &stream_events(model, &reply))
            } else {
                http(200, "application/json", &message(model, &reply).to_string())
            }
        } else {
            let error = json!({"type": "error", "error": {"type": "not_found_error", "message": "fake server"}});
            http(404, "application/json", &error.to_string())
        };
        if writer.write_all(response.as_bytes()).is_err() {
            return;
        }
    }
}

fn read_chunked(reader: &mut BufReader<TcpStream>) -> Vec<u8> {
    let mut body = Vec::new();
    loop {
        let mut size = String::new();
        if reader.read_line(&mut size).unwrap_or(0) == 0 {
            return body;
        }
        let size = usize::from_str_radix(size.trim(), 16).unwrap_or(0);
        let mut chunk = vec![0; size + 2];
        if reader.read_exact(&mut chunk).is_err() || size == 0 {
            return body;
        }
        body.extend_from_slice(&chunk[..size]);
    }
}

fn http(status: u16, content_type: &str, body: &str) -> String {
    let reason = if status == 200 { "OK" } else { "Not Found" };
    format!(
        "HTTP/1.1 {status} {reason}\r\ncontent-type: {content_type}\r\ncontent-length: {}\r\n\r\n{body}",
        body.len()
    )
}

fn content(reply: &Reply) -> (Value, &'static str) {
    match reply {
        Reply::Bash(command) => (
            json!({"type": "tool_use", "id": tool_id(), "name": "Bash",
                   "input": {"command": command, "description": "run a command"}}),
            "tool_use",
        ),
        Reply::Text(text) => (json!({"type": "text", "text": text}), "end_turn"),
    }
}

fn tool_id() -> String {
    use std::sync::atomic::AtomicU64;
    static NEXT: AtomicU64 = AtomicU64::new(1);
    format!("toolu_fake{:04}", NEXT.fetch_add(1, Ordering::SeqCst))
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
fn stream_events(model: &str, reply: &Reply) -> String {
    let (block, stop_reason) = content(reply);
    let (start, delta) = match reply {
        Reply::Bash(_) => (
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
    events
        .iter()
        .map(|event| {
            format!(
                "event: {}\ndata: {event}\n\n",
                event["type"].as_str().unwrap()
            )
        })
        .collect()
}
