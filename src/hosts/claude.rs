//! Claude Code: hooks configured in `.claude/settings.json` (or a plugin's `hooks/hooks.json`)
//! get one JSON event on stdin. A block is `{"decision":"block","reason":...}` on stdout with
//! exit 0 (exit 2 with stderr has been misread as non-blocking); a user-visible notice that does
//! not continue the turn is `{"systemMessage":...}`. Plain SessionStart stdout would be added to
//! the model's context, so stdout is empty or one JSON object, always. See ADAPTERS.md.

use std::path::PathBuf;

use serde_json::{Map, Value, json};

use super::{Event, InputError, Start, Stop};
use crate::report::Message;

pub(crate) const HOST: &str = "claude";

pub(crate) fn parse(input: &[u8]) -> Result<Event, InputError> {
    let value: Value = serde_json::from_slice(input).map_err(InputError::NotJson)?;
    let Value::Object(map) = value else {
        return Err(InputError::NotJson(serde::de::Error::custom(
            "expected an object",
        )));
    };
    let name = string(&map, "hook_event_name")?;
    match name.as_str() {
        "SessionStart" => Ok(Event::Start(Start {
            session: string(&map, "session_id")?,
            cwd: PathBuf::from(string(&map, "cwd")?),
            source: optional_string(&map, "source"),
        })),
        "Stop" => Ok(Event::Stop(Stop {
            session: string(&map, "session_id")?,
            turn: optional_string(&map, "prompt_id"),
            cwd: PathBuf::from(string(&map, "cwd")?),
            stop_hook_active: match map.get("stop_hook_active") {
                None | Some(Value::Null) => false,
                Some(Value::Bool(active)) => *active,
                Some(_) => {
                    return Err(InputError::Field {
                        field: "stop_hook_active",
                        expected: "boolean",
                    });
                }
            },
            claim: optional_string(&map, "last_assistant_message"),
        })),
        _ => Ok(Event::Other { name }),
    }
}

fn string(map: &Map<String, Value>, field: &'static str) -> Result<String, InputError> {
    match map.get(field) {
        Some(Value::String(value)) if !value.is_empty() => Ok(value.clone()),
        _ => Err(InputError::Field {
            field,
            expected: "non-empty string",
        }),
    }
}

fn optional_string(map: &Map<String, Value>, field: &str) -> Option<String> {
    map.get(field).and_then(Value::as_str).map(str::to_string)
}

/// The hook's stdout for a message; the exit code is always 0.
pub(crate) fn render(message: &Message) -> String {
    let value = match message {
        Message::Silent => return String::new(),
        Message::Notice(text) => json!({ "systemMessage": text }),
        Message::Block(reason) => json!({ "decision": "block", "reason": reason }),
    };
    format!("{value}\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_a_stop_event_as_claude_code_sends_it() {
        let input = br#"{"session_id":"86ca","transcript_path":"/t.jsonl","cwd":"/repo","prompt_id":"99ce","permission_mode":"default","effort":{"level":"medium"},"hook_event_name":"Stop","stop_hook_active":false,"last_assistant_message":"All tests pass. Ready to merge.","background_tasks":[],"session_crons":[]}"#;
        assert_eq!(
            parse(input).unwrap(),
            Event::Stop(Stop {
                session: "86ca".into(),
                turn: Some("99ce".into()),
                cwd: "/repo".into(),
                stop_hook_active: false,
                claim: Some("All tests pass. Ready to merge.".into()),
            })
        );
    }

    #[test]
    fn parses_session_start_and_passes_other_events_by() {
        let input = br#"{"session_id":"86ca","cwd":"/repo","hook_event_name":"SessionStart","source":"compact"}"#;
        assert_eq!(
            parse(input).unwrap(),
            Event::Start(Start {
                session: "86ca".into(),
                cwd: "/repo".into(),
                source: Some("compact".into()),
            })
        );
        let input = br#"{"session_id":"86ca","cwd":"/repo","hook_event_name":"SubagentStop","stop_hook_active":true}"#;
        assert_eq!(
            parse(input).unwrap(),
            Event::Other {
                name: "SubagentStop".into()
            }
        );
    }

    #[test]
    fn malformed_input_is_an_error_naming_what_is_wrong() {
        for (input, message) in [
            (&b"not json"[..], "the hook input is not a JSON object"),
            (b"[1,2]", "the hook input is not a JSON object"),
            (b"{}", "the hook input has no hook_event_name (a non-empty string)"),
            (
                br#"{"hook_event_name":"Stop","session_id":"s"}"#,
                "the hook input has no cwd (a non-empty string)",
            ),
            (
                br#"{"hook_event_name":"Stop","session_id":"s","cwd":"/r","stop_hook_active":"yes"}"#,
                "the hook input has no stop_hook_active (a boolean)",
            ),
        ] {
            assert_eq!(parse(input).unwrap_err().to_string(), message);
        }
    }

    #[test]
    fn renders_blocks_and_notices_as_one_json_object() {
        assert_eq!(render(&Message::Silent), "");
        assert_eq!(
            render(&Message::Block("fix \"it\"".into())),
            "{\"decision\":\"block\",\"reason\":\"fix \\\"it\\\"\"}\n"
        );
        assert_eq!(
            render(&Message::Notice("n".into())),
            "{\"systemMessage\":\"n\"}\n"
        );
    }
}
