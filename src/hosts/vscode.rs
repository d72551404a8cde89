//! VS Code agent hooks: `.github/hooks/*.json`, and Claude Code's `.claude/settings.json`, which
//! VS Code reads too and then calls `git prove-it hook claude` with its own payload. Its common
//! fields are camelCase (`hookEventName`, `sessionId`, `timestamp`, `cwd`) beside snake_case
//! event fields (`stop_hook_active`, `transcript_path`); there is no turn id and no claim. A
//! Stop block is `{"hookSpecificOutput":{"hookEventName":"Stop","decision":"block","reason":R}}`;
//! `systemMessage` is shown to the user. `PostToolUse` wakes the prover.

use std::path::PathBuf;

use serde_json::{Value, json};

use super::adapter::Adapter;
use super::fields::{Object, flag, optional_string, string};
use super::wiring::{
    AFTER_TOOL_TIMEOUT, Layout, START_TIMEOUT, STOP_TIMEOUT, Scheme, after_tool_entry, entry,
};
use super::{AfterTool, Event, Host, InputError, Start, Stop};
use crate::gate::Message;

const COMMAND: &str = "git prove-it hook vscode";

const WIRING: Scheme = Scheme {
    path: ".github/hooks/prove-it-vscode.json",
    layout: Layout::Flat {
        typed: true,
        command_key: "command",
        timeout_key: Some("timeout"),
        version: false,
    },
    entries: &[
        entry("SessionStart", COMMAND, START_TIMEOUT, false),
        entry("Stop", COMMAND, STOP_TIMEOUT, true),
        after_tool_entry("PostToolUse", COMMAND, AFTER_TOOL_TIMEOUT),
    ],
    timeout_unit_ms: 1000,
    default_timeout: Some(30),
    stamp: None,
    ms_from: None,
};

pub(super) struct Vscode;

impl Adapter for Vscode {
    fn name(&self) -> &'static str {
        "vscode"
    }

    fn title(&self) -> &'static str {
        "VS Code"
    }

    /// A payload in Claude Code's dialect is answered as Claude Code.
    fn dialect(&self, payload: &Object) -> Option<Host> {
        (!speaks(payload)).then_some(Host::Claude)
    }

    fn parse(&self, payload: &Object, _arg: Option<&str>) -> Result<Event, InputError> {
        parse(payload)
    }

    fn answer(&self, event: Option<&Event>, message: &Message) -> Option<Value> {
        answer(event, message)
    }

    fn shows_notices(&self) -> bool {
        true
    }

    fn wiring(&self) -> &'static Scheme {
        &WIRING
    }
}

/// Whether a payload is VS Code's rather than Claude Code's.
pub(super) fn speaks(map: &Object) -> bool {
    map.contains_key("hookEventName") && !map.contains_key("hook_event_name")
}

fn parse(map: &Object) -> Result<Event, InputError> {
    let name = string(map, "hookEventName")?;
    match name.as_str() {
        "SessionStart" => Ok(Event::Start(Start {
            session: string(map, "sessionId")?,
            cwd: PathBuf::from(string(map, "cwd")?),
            source: optional_string(map, "source"),
        })),
        "Stop" => Ok(Event::Stop(Stop {
            session: string(map, "sessionId")?,
            turn: None,
            cwd: PathBuf::from(string(map, "cwd")?),
            stop_hook_active: flag(map, "stop_hook_active")?,
            claim: None,
            transcript: None,
            background: Vec::new(),
        })),
        "PostToolUse" => Ok(Event::AfterTool(AfterTool {
            session: string(map, "sessionId")?,
            cwd: PathBuf::from(string(map, "cwd")?),
        })),
        _ => Ok(Event::Other { name }),
    }
}

fn answer(event: Option<&Event>, message: &Message) -> Option<Value> {
    match message {
        Message::Silent => None,
        Message::Notice(text) => Some(json!({ "systemMessage": text })),
        Message::Block(reason) if matches!(event, Some(Event::Stop(_))) => Some(json!({
            "hookSpecificOutput": { "hookEventName": "Stop", "decision": "block", "reason": reason }
        })),
        // Only a stop is ever blocked; anything else said is a notice.
        Message::Block(text) => Some(json!({ "systemMessage": text })),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const STOP: &[u8] = br#"{"timestamp":"2026-11-29T10:30:00.000Z","cwd":"/repo","sessionId":"vs1","hookEventName":"Stop","transcript_path":"/t.json","stop_hook_active":false}"#;

    #[test]
    fn a_vscode_payload_sent_to_hook_claude_is_answered_in_vscode_dialect() {
        let incoming = Host::Claude.parse(STOP, None).unwrap();
        assert_eq!(incoming.host, Host::Vscode);
        assert!(matches!(
            incoming.event,
            Event::Stop(Stop { ref session, turn: None, stop_hook_active: false, .. }) if session == "vs1"
        ));
        let answer = incoming
            .host
            .render(Some(&incoming.event), &Message::Block("fix it".into()));
        let answer: Value = serde_json::from_str(&answer).unwrap();
        assert_eq!(
            answer,
            json!({"hookSpecificOutput": {"hookEventName": "Stop", "decision": "block", "reason": "fix it"}})
        );
    }

    #[test]
    fn a_claude_payload_sent_to_hook_vscode_is_answered_as_claude() {
        let input = br#"{"session_id":"s","cwd":"/repo","hook_event_name":"Stop","stop_hook_active":false}"#;
        assert_eq!(Host::Vscode.parse(input, None).unwrap().host, Host::Claude);
    }
}
