//! Fake model servers on 127.0.0.1, for driving real agent hosts with no login and no network.
//!
//! One HTTP/1.1 server (keep-alive, `Content-Length` or chunked bodies) answers every request
//! through an [`Api`]: the wire format of one model API. Requests that the API calls agent
//! turns take the next scripted [`Reply`]; others (titles, routing, side questions) get the
//! API's small default answer. Every request is logged, so a test reads what the model was shown.

pub mod anthropic;
pub mod chat;
pub mod gemini;
pub mod responses;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::thread;

use serde_json::Value;

/// What the model answers to one agent turn.
#[derive(Debug, Clone)]
pub enum Reply {
    /// A call of the host's shell tool, running this command.
    Shell(&'static str),
    /// A final answer: the agent's claim.
    Text(&'static str),
}

/// One request as the server saw it.
#[derive(Debug, Clone)]
pub struct Request {
    pub method: String,
    /// The target without its query.
    pub path: String,
    pub body: Value,
    /// Whether the API took it for an agent turn.
    pub agent_turn: bool,
    /// The texts the user side sent, message by message: prompts, tool results, hook feedback.
    pub user_texts: Vec<String>,
}

impl Request {
    /// The last message of the user side (the newest prompt, tool result or feedback).
    pub fn last_user_text(&self) -> String {
        self.user_texts.last().cloned().unwrap_or_default()
    }

    /// Every message of the user side in the conversation so far, joined.
    pub fn user_text(&self) -> String {
        self.user_texts.join("\n")
    }
}

/// An HTTP answer.
pub struct Response {
    pub status: u16,
    pub content_type: &'static str,
    pub body: String,
}

impl Response {
    pub fn json(body: &Value) -> Self {
        Response {
            status: 200,
            content_type: "application/json",
            body: body.to_string(),
        }
    }

    /// Server-sent events, a `data:` line each; `named`: with an `event:` line giving the
    /// event's `type` first (as the Anthropic and Responses APIs stream).
    pub fn events(events: &[Value], named: bool) -> Self {
        let body = events
            .iter()
            .map(|data| match data["type"].as_str() {
                Some(name) if named => format!("event: {name}\ndata: {data}\n\n"),
                _ => format!("data: {data}\n\n"),
            })
            .collect();
        Response {
            status: 200,
            content_type: "text/event-stream",
            body,
        }
    }

    pub fn not_found(body: &Value) -> Self {
        Response {
            status: 404,
            content_type: "application/json",
            body: body.to_string(),
        }
    }
}

/// The wire format of one model API.
pub trait Api: Send + Sync + 'static {
    /// Whether the request is one of the agent's turns (it takes the next scripted reply).
    fn is_agent_turn(&self, method: &str, path: &str, body: &Value) -> bool;
    /// The user side's messages in the request, in order (see [`Request::user_texts`]).
    fn user_texts(&self, body: &Value) -> Vec<String>;
    /// The answer: to an agent turn with its `reply`, else with `None`.
    fn respond(&self, method: &str, path: &str, body: &Value, reply: Option<&Reply>) -> Response;
}

/// What the model answers to the agent's turns: `turns` in order, then `then` for every turn
/// after them.
pub struct Script {
    turns: Vec<Reply>,
    then: Reply,
    next: usize,
}

impl Script {
    pub fn new(turns: Vec<Reply>, then: Reply) -> Self {
        Script {
            turns,
            then,
            next: 0,
        }
    }

    fn next(&mut self) -> Reply {
        let reply = self.turns.get(self.next).unwrap_or(&self.then).clone();
        self.next += 1;
        reply
    }
}

pub struct FakeModel {
    port: u16,
    log: Arc<Mutex<Vec<Request>>>,
    stop: Arc<AtomicBool>,
    accept: Option<thread::JoinHandle<()>>,
}

impl FakeModel {
    /// Serve `script` to the agent's turns through `api`.
    pub fn start(api: impl Api, script: Script) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind a loopback port");
        let port = listener.local_addr().unwrap().port();
        let log = Arc::new(Mutex::new(Vec::new()));
        let stop = Arc::new(AtomicBool::new(false));
        let script = Arc::new(Mutex::new(script));
        let api: Arc<dyn Api> = Arc::new(api);
        let accept = {
            let (log, stop) = (log.clone(), stop.clone());
            thread::spawn(move || {
                for stream in listener.incoming() {
                    if stop.load(Ordering::SeqCst) {
                        break;
                    }
                    let Ok(stream) = stream else { continue };
                    let (log, script, api) = (log.clone(), script.clone(), api.clone());
                    thread::spawn(move || serve(stream, &*api, &log, &script));
                }
            })
        };
        FakeModel {
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
            .filter(|request| request.agent_turn)
            .collect()
    }

    /// The user side of the conversation as the model last saw it: every user message, tool
    /// result and hook feedback of the last agent turn, joined.
    pub fn final_user_text(&self) -> String {
        let turns = self.agent_turns();
        turns.last().map(Request::user_text).unwrap_or_default()
    }

    /// Every request, a line each, with the user side's last message: for failure messages.
    pub fn describe(&self) -> String {
        let mut out = String::new();
        for request in self.requests() {
            let turn = if request.agent_turn {
                "agent turn"
            } else {
                "side"
            };
            let last = request.last_user_text();
            let last: String = last
                .chars()
                .rev()
                .take(600)
                .collect::<Vec<_>>()
                .into_iter()
                .rev()
                .collect();
            out.push_str(&format!(
                "{} {} ({turn}): ...{last:?}\n",
                request.method, request.path
            ));
        }
        out
    }
}

impl Drop for FakeModel {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        let _ = TcpStream::connect(("127.0.0.1", self.port));
        if let Some(accept) = self.accept.take() {
            let _ = accept.join();
        }
    }
}

/// A fresh id for a tool call, unique in the test process.
pub fn call_id(prefix: &str) -> String {
    static NEXT: AtomicU64 = AtomicU64::new(1);
    format!("{prefix}{:04}", NEXT.fetch_add(1, Ordering::SeqCst))
}

/// Whether the request offers the model tools: in every API, what tells an agent's turn from a
/// side request (a title, a classification).
pub fn offers_tools(body: &Value) -> bool {
    body["tools"]
        .as_array()
        .is_some_and(|tools| !tools.is_empty())
}

/// The texts of the `messages` whose role is one of `roles`, a message each (the Anthropic and
/// Chat Completions shapes).
pub fn message_texts(body: &Value, roles: &[&str]) -> Vec<String> {
    let messages = body["messages"].as_array().into_iter().flatten();
    messages
        .filter(|message| roles.iter().any(|role| message["role"] == *role))
        .map(|message| {
            let mut text = String::new();
            collect_text(&message["content"], &mut text);
            text
        })
        .collect()
}

/// Every string under `value`'s `text`, `content` and `output` keys (or `value` itself), a line
/// each: the text of a message in any of the APIs' shapes.
pub fn collect_text(value: &Value, out: &mut String) {
    match value {
        Value::String(s) => {
            out.push_str(s);
            out.push('\n');
        }
        Value::Array(items) => items.iter().for_each(|item| collect_text(item, out)),
        Value::Object(map) => {
            for key in ["text", "content", "output"] {
                if let Some(inner) = map.get(key) {
                    collect_text(inner, out);
                }
            }
        }
        _ => {}
    }
}

/// Serve one connection: HTTP/1.1 requests with a body, kept alive.
fn serve(stream: TcpStream, api: &dyn Api, log: &Mutex<Vec<Request>>, script: &Mutex<Script>) {
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
        let agent_turn = api.is_agent_turn(method, &path, &body);
        let reply = agent_turn.then(|| script.lock().unwrap().next());
        let response = api.respond(method, &path, &body, reply.as_ref());
        log.lock().unwrap().push(Request {
            method: method.to_owned(),
            user_texts: api.user_texts(&body),
            path,
            body,
            agent_turn,
        });
        let head = format!(
            "HTTP/1.1 {} {}\r\ncontent-type: {}\r\ncontent-length: {}\r\n\r\n",
            response.status,
            if response.status == 200 {
                "OK"
            } else {
                "Not Found"
            },
            response.content_type,
            response.body.len()
        );
        if writer.write_all(head.as_bytes()).is_err()
            || writer.write_all(response.body.as_bytes()).is_err()
        {
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
