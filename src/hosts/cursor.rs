//! Cursor: hooks in `.cursor/hooks.json` (`{"version":1,"hooks":{"stop":[{"command":...}]}}`).
//! Cursor cannot block a stop: its `stop` hook may only answer `{"followup_message": R}`, which
//! Cursor sends as the next user message, at most `loop_limit` times (5 by default). The gate
//! counts those follow-ups as blocks, with `loop_count` (0 on the first stop of a prompt) as
//! Cursor's own count. A session is `conversation_id`; the repository is the first of
//! `workspace_roots`. `beforeSubmitPrompt` and `sessionStart` record the session's anchor;
//! `afterFileEdit` and `afterShellExecution`, Cursor's after-tool events, wake the prover.

use std::path::PathBuf;

use serde_json::{Value, json};

use super::adapter::Adapter;
use super::fields::{Object, optional_string, string};
use super::wiring::{HookEntry, Layout, Scheme};
use super::{AfterTool, Event, InputError, Start, Stop};
use crate::gate::Message;

/// Cursor's `loop_limit` for follow-up messages, by default.
const LOOP_LIMIT: u32 = 5;

const COMMAND: &str = "git prove-it hook cursor";

/// Cursor has no timeout setting for hooks.
const WIRING: Scheme = Scheme {
    path: ".cursor/hooks.json",
    layout: Layout::Flat {
        typed: false,
        command_key: "command",
        timeout_key: None,
        version: true,
    },
    entries: &[
        HookEntry {
            event: "beforeSubmitPrompt",
            command: COMMAND,
            timeout: None,
            stop: false,
            ahead: false,
        },
        HookEntry {
            event: "stop",
            command: COMMAND,
            timeout: None,
            stop: true,
            ahead: false,
        },
        HookEntry {
            event: "afterFileEdit",
            command: COMMAND,
            timeout: None,
            stop: false,
            ahead: true,
        },
        HookEntry {
            event: "afterShellExecution",
            command: COMMAND,
            timeout: None,
            stop: false,
            ahead: true,
        },
    ],
    timeout_unit_ms: 1000,
    default_timeout: None,
    stamp: None,
    ms_from: None,
};

pub(super) struct Cursor;

impl Adapter for Cursor {
    fn name(&self) -> &'static str {
        "cursor"
    }

    fn title(&self) -> &'static str {
        "Cursor"
    }

    fn parse(&self, payload: &Object, _arg: Option<&str>) -> Result<Event, InputError> {
        parse(payload)
    }

    fn answer(&self, event: Option<&Event>, message: &Message) -> Option<Value> {
        answer(event, message)
    }

    fn cap(&self, _var: &dyn Fn(&str) -> Option<String>) -> Option<u32> {
        Some(LOOP_LIMIT)
    }

    /// Cursor has no notice answer at all.
    fn shows_notices(&self) -> bool {
        false
    }

    /// Copilot's rule: Cursor shows no notice either.
    fn notices_as_blocks(&self, event: Option<&Event>) -> bool {
        super::copilot::notice_becomes_a_block(event)
    }

    fn wiring(&self) -> &'static Scheme {
        &WIRING
    }
}

fn parse(map: &Object) -> Result<Event, InputError> {
    let name = string(map, "hook_event_name")?;
    match name.as_str() {
        "sessionStart" | "beforeSubmitPrompt" => Ok(Event::Start(Start {
            session: string(map, "conversation_id")?,
            cwd: workspace_root(map)?,
            source: Some(name),
        })),
        // An aborted or failed generation ended by the user's or Cursor's hand, not as a claim.
        "stop" if optional_string(map, "status").is_some_and(|status| status != "completed") => {
            Ok(Event::Other { name })
        }
        "stop" => Ok(Event::Stop(Stop {
            session: string(map, "conversation_id")?,
            turn: None,
            cwd: workspace_root(map)?,
            stop_hook_active: loop_count(map)? > 0,
            claim: None,
            transcript: None,
            background: Vec::new(),
        })),
        // The agent edited a file or ran a command: the state may have moved.
        "afterFileEdit" | "afterShellExecution" => Ok(Event::AfterTool(AfterTool {
            session: string(map, "conversation_id")?,
            cwd: workspace_root(map)?,
        })),
        _ => Ok(Event::Other { name }),
    }
}

fn workspace_root(map: &Object) -> Result<PathBuf, InputError> {
    map.get("workspace_roots")
        .and_then(Value::as_array)
        .and_then(|roots| roots.first())
        .and_then(Value::as_str)
        .filter(|root| !root.is_empty())
        .map(PathBuf::from)
        .ok_or(InputError::Field {
            field: "workspace_roots",
            expected: "non-empty list of paths",
        })
}

fn loop_count(map: &Object) -> Result<u64, InputError> {
    match map.get("loop_count") {
        None | Some(Value::Null) => Ok(0),
        Some(value) => value.as_u64().ok_or(InputError::Field {
            field: "loop_count",
            expected: "non-negative integer",
        }),
    }
}

/// A block becomes a follow-up message; `beforeSubmitPrompt` must be told to continue. Cursor
/// shows no notice: by Copilot's rule (`copilot::notice_becomes_a_block`), one from outside the
/// gate's count comes worded as a block on a turn's first stop, for the agent to report.
fn answer(event: Option<&Event>, message: &Message) -> Option<Value> {
    match (event, message) {
        (Some(Event::Start(start)), _) if start.source.as_deref() == Some("beforeSubmitPrompt") => {
            Some(json!({ "continue": true }))
        }
        (_, Message::Block(reason)) => Some(json!({ "followup_message": reason })),
        _ => Some(json!({})),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hosts::Host;

    const STOP: &[u8] = br#"{"conversation_id":"c1","generation_id":"g2","hook_event_name":"stop","workspace_roots":["/repo","/other"],"status":"completed","loop_count":2}"#;

    #[test]
    fn a_stop_is_a_turnless_stop_in_the_first_workspace_root() {
        assert_eq!(
            Host::Cursor.parse(STOP, None).unwrap().event,
            Event::Stop(Stop {
                session: "c1".into(),
                turn: None,
                cwd: "/repo".into(),
                stop_hook_active: true,
                claim: None,
                transcript: None,
                background: Vec::new(),
            })
        );
        let aborted = br#"{"conversation_id":"c1","hook_event_name":"stop","workspace_roots":["/repo"],"status":"aborted","loop_count":0}"#;
        assert!(matches!(
            Host::Cursor.parse(aborted, None).unwrap().event,
            Event::Other { .. }
        ));
        let no_roots = br#"{"conversation_id":"c1","hook_event_name":"stop","workspace_roots":[]}"#;
        assert!(Host::Cursor.parse(no_roots, None).is_err());
    }

    #[test]
    fn a_block_is_a_follow_up_message_and_prompts_continue() {
        let event = Host::Cursor.parse(STOP, None).unwrap().event;
        assert_eq!(
            Host::Cursor.render(Some(&event), &Message::Block("fix it".into())),
            "{\"followup_message\":\"fix it\"}\n"
        );
        assert_eq!(Host::Cursor.render(Some(&event), &Message::Silent), "{}\n");
        let prompt = br#"{"conversation_id":"c1","hook_event_name":"beforeSubmitPrompt","workspace_roots":["/repo"],"prompt":"hi"}"#;
        let event = Host::Cursor.parse(prompt, None).unwrap().event;
        assert_eq!(
            Host::Cursor.render(Some(&event), &Message::Silent),
            "{\"continue\":true}\n"
        );
    }
}
