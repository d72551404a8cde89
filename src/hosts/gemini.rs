//! Gemini CLI: hooks in `.gemini/settings.json`. The end of a turn is `AfterAgent`, with no turn
//! id (`prompt` stays the original prompt) and the turn's answers joined by newlines in
//! `prompt_response`. A block is `{"decision":"block","reason":...}` (the reason becomes the next
//! user turn); `systemMessage` is shown as a warning. It has no cap on consecutive blocks, and its
//! hook timeouts are in milliseconds.

use super::fields::{Object, optional_string, snake_start, snake_stop, string};
use super::{Event, InputError, Stop};

pub(super) fn parse(map: &Object) -> Result<Event, InputError> {
    let name = string(map, "hook_event_name")?;
    match name.as_str() {
        "SessionStart" => snake_start(map),
        // No turn id: a stop that does not follow a block starts a new turn.
        "AfterAgent" => Ok(Event::Stop(Stop {
            claim: optional_string(map, "prompt_response").map(|all| last_answer(&all)),
            ..snake_stop(map, None)?
        })),
        _ => Ok(Event::Other { name }),
    }
}

/// The last answer of the cumulative `prompt_response`: its last non-empty line. Answers are
/// joined by newlines, so a multi-line last answer keeps only its last line; the claim is for
/// the ledger, where a line is what is shown.
fn last_answer(all: &str) -> String {
    all.lines()
        .rev()
        .find(|line| !line.trim().is_empty())
        .unwrap_or("")
        .to_string()
}

#[cfg(test)]
mod tests {
    use crate::hosts::{Event, Host, Start, Stop};

    #[test]
    fn parses_after_agent_as_a_turnless_stop_claiming_the_last_answer() {
        let input = br#"{"session_id":"cc95","transcript_path":"/t/session.jsonl","cwd":"/repo","hook_event_name":"AfterAgent","timestamp":"2026-11-29T18:49:48.461Z","prompt":"make a file","prompt_response":"I made the file.\nAll tests pass.\n","stop_hook_active":false}"#;
        assert_eq!(
            Host::Gemini.parse(input, None).unwrap().event,
            Event::Stop(Stop {
                session: "cc95".into(),
                turn: None,
                cwd: "/repo".into(),
                stop_hook_active: false,
                claim: Some("All tests pass.".into()),
                transcript: None,
            })
        );
    }

    #[test]
    fn parses_session_start_and_ignores_before_agent() {
        let input = br#"{"session_id":"cc95","cwd":"/repo","hook_event_name":"SessionStart","source":"startup"}"#;
        assert_eq!(
            Host::Gemini.parse(input, None).unwrap().event,
            Event::Start(Start {
                session: "cc95".into(),
                cwd: "/repo".into(),
                source: Some("startup".into()),
            })
        );
        let input = br#"{"session_id":"cc95","cwd":"/repo","hook_event_name":"BeforeAgent"}"#;
        assert!(matches!(
            Host::Gemini.parse(input, None).unwrap().event,
            Event::Other { .. }
        ));
    }
}
