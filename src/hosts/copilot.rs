//! GitHub Copilot CLI: hooks in `.github/hooks/*.json` (`{"version":1,"hooks":{...}}`). Its
//! camelCase payloads (`sessionStart`, `agentStop`) carry no event name, so the hook's command
//! line names it (`git prove-it hook copilot agentStop`); its snake_case dialect (`Stop`, with
//! `hook_event_name`) is read as well. There is no turn id and no claim in the payload: the
//! claim is the last assistant message of the transcript (`transcriptPath`), when readable.
//! Only a JSON block blocks (exit 2 does not), no notice reliably reaches the user (see
//! [`notice_becomes_a_block`]), and Copilot ends a turn after 8 consecutive blocks.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use super::adapter::Adapter;
use super::fields::{
    Object, flag, optional_string, snake_after_tool, snake_prompt, snake_start, snake_stop, string,
};
use super::transcript;
use super::trust::{dir_from, env_true, home, read_json};
use super::wiring::{
    AFTER_TOOL_TIMEOUT, Layout, START_TIMEOUT, STOP_TIMEOUT, Scheme, after_tool_entry, entry,
};
use super::{AfterTool, Event, InputError, Prompt, Start, Stop};
use crate::gate::Message;

/// Copilot CLI ends a turn after this many consecutive blocks.
const BLOCK_CAP: u32 = 8;

/// The camelCase payloads carry no event name: each command line names its own.
const WIRING: Scheme = Scheme {
    path: ".github/hooks/prove-it-copilot.json",
    layout: Layout::Flat {
        typed: true,
        command_key: "bash",
        timeout_key: Some("timeoutSec"),
        version: true,
    },
    entries: &[
        entry(
            "sessionStart",
            "git prove-it hook copilot sessionStart",
            START_TIMEOUT,
            false,
        ),
        entry(
            "agentStop",
            "git prove-it hook copilot agentStop",
            STOP_TIMEOUT,
            true,
        ),
        after_tool_entry(
            "postToolUse",
            "git prove-it hook copilot postToolUse",
            AFTER_TOOL_TIMEOUT,
        ),
    ],
    timeout_unit_ms: 1000,
    default_timeout: None,
    stamp: None,
    ms_from: None,
};

pub(super) struct Copilot;

impl Adapter for Copilot {
    fn name(&self) -> &'static str {
        "copilot"
    }

    fn title(&self) -> &'static str {
        "Copilot CLI"
    }

    /// Copilot's camelCase payloads carry no event name: the command line gives it.
    fn takes_event_arg(&self) -> bool {
        true
    }

    fn parse(&self, payload: &Object, arg: Option<&str>) -> Result<Event, InputError> {
        parse(payload, arg)
    }

    fn answer(&self, _event: Option<&Event>, message: &Message) -> Option<Value> {
        answer(message)
    }

    fn cap(&self, _var: &dyn Fn(&str) -> Option<String>) -> Option<u32> {
        Some(BLOCK_CAP)
    }

    /// Copilot only logs a hook's notice.
    /// `COPILOT_MODEL` follows the model a person picks mid-session (`/model`).
    fn per_event_env(&self) -> &'static [&'static str] {
        &["COPILOT_MODEL"]
    }

    fn shows_notices(&self) -> bool {
        false
    }

    fn notices_as_blocks(&self, event: Option<&Event>) -> bool {
        notice_becomes_a_block(event)
    }

    /// The payload carries no claim: it is the transcript's last answer of this turn.
    fn claim(&self, stop: &Stop, previous_answer_ns: Option<u64>) -> Option<String> {
        stop.claim.clone().or_else(|| {
            let transcript = stop.transcript.as_deref()?;
            last_answer(transcript, previous_answer_ns)
        })
    }

    fn wiring(&self) -> &'static Scheme {
        &WIRING
    }

    /// Copilot CLI records trusted folders as `trusted_folders` in `~/.copilot/config.json`
    /// (under `$COPILOT_HOME` when set); `COPILOT_ALLOW_ALL=true` trusts everything.
    fn trust_record(&self, workdir: &Path) -> Option<(bool, PathBuf)> {
        let file = dir_from("COPILOT_HOME", || home().join(".copilot")).join("config.json");
        let trusted = env_true("COPILOT_ALLOW_ALL")
            || read_json(&file)
                .as_ref()
                .and_then(|config| config.get("trusted_folders"))
                .and_then(Value::as_array)
                .is_some_and(|folders| {
                    folders
                        .iter()
                        .filter_map(Value::as_str)
                        .any(|folder| workdir.starts_with(folder))
                });
        Some((trusted, file))
    }
}

/// Copilot's protocol rule for notices: it shows the user none, so a notice from outside the
/// gate's count of blocks (the gate could not check, say) is answered as a block where that is
/// safe, for the agent to report: on a turn's first stop, or when the input could not be read.
/// After a block (`stop_hook_active`) it is dropped, so that notices never loop; Copilot's cap
/// bounds any repetition. Cursor, which shows no notice either, follows the same rule.
pub(super) fn notice_becomes_a_block(event: Option<&Event>) -> bool {
    match event {
        None => true,
        Some(Event::Stop(stop)) => !stop.stop_hook_active,
        Some(_) => false,
    }
}

fn parse(map: &Object, arg: Option<&str>) -> Result<Event, InputError> {
    if map.contains_key("hook_event_name") {
        return parse_snake_case(map);
    }
    let Some(name) = arg else {
        return Err(InputError::Field {
            field: "event name",
            expected: "command-line argument such as agentStop or sessionStart, since the payload has no hook_event_name",
        });
    };
    match name {
        "sessionStart" | "SessionStart" => Ok(Event::Start(Start {
            session: string(map, "sessionId")?,
            cwd: PathBuf::from(string(map, "cwd")?),
            source: optional_string(map, "source"),
        })),
        "agentStop" | "Stop" => Ok(Event::Stop(Stop {
            session: string(map, "sessionId")?,
            turn: None,
            cwd: PathBuf::from(string(map, "cwd")?),
            stop_hook_active: flag(map, "stop_hook_active")?,
            claim: None,
            transcript: optional_string(map, "transcriptPath").map(PathBuf::from),
            background: Vec::new(),
        })),
        // Not wired by `init`: a new prompt's first stop says `stop_hook_active: false`, which
        // starts a new turn already. Read all the same, so that a hand-wired one does what it
        // says.
        "userPromptSubmitted" | "UserPromptSubmit" => Ok(Event::Prompt(Prompt {
            session: string(map, "sessionId")?,
            cwd: PathBuf::from(string(map, "cwd")?),
        })),
        "postToolUse" | "PostToolUse" => Ok(Event::AfterTool(AfterTool {
            session: string(map, "sessionId")?,
            cwd: PathBuf::from(string(map, "cwd")?),
        })),
        _ => Ok(Event::Other {
            name: name.to_string(),
        }),
    }
}

fn parse_snake_case(map: &Object) -> Result<Event, InputError> {
    let name = string(map, "hook_event_name")?;
    match name.as_str() {
        "SessionStart" | "sessionStart" => snake_start(map),
        "Stop" | "agentStop" => Ok(Event::Stop(Stop {
            transcript: optional_string(map, "transcript_path").map(PathBuf::from),
            background: Vec::new(),
            ..snake_stop(map, None)?
        })),
        "UserPromptSubmit" | "userPromptSubmitted" => snake_prompt(map),
        "PostToolUse" | "postToolUse" => snake_after_tool(map),
        _ => Ok(Event::Other { name }),
    }
}

/// Blocks only. Copilot shows no notice: the gate turns its own into one block a turn, and
/// other notices are worded as blocks where [`notice_becomes_a_block`] says so; any notice
/// left is dropped.
fn answer(message: &Message) -> Option<Value> {
    let reason = match message {
        Message::Block(reason) => reason.clone(),
        Message::Silent | Message::Notice(_) => return None,
    };
    Some(json!({ "decision": "block", "reason": reason }))
}

/// The last assistant message in a Copilot transcript (`events.jsonl`), if it can be read and
/// was written after `after` (the gate's previous answer in this session, in ns since the
/// epoch). Copilot writes the file lazily: at a stop its newest message may not be there yet,
/// and an older one found in its place belongs to an earlier turn, so it is no claim.
/// The path is the payload's: a FIFO, a device or a directory there is no transcript, and
/// is never waited on (`payload_file`).
fn last_answer(transcript: &Path, after: Option<u64>) -> Option<String> {
    transcript::last_answer(transcript, after, assistant_text)
}

/// `{"type":"assistant.message","data":{"content":...}}`, or a message with role assistant.
fn assistant_text(event: &Value) -> Option<String> {
    let text = if event["type"] == "assistant.message" {
        &event["data"]["content"]
    } else if event["role"] == "assistant" {
        &event["content"]
    } else {
        return None;
    };
    text.as_str()
        .filter(|text| !text.trim().is_empty())
        .map(str::to_string)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hosts::Host;

    #[test]
    fn the_claim_is_the_payloads_or_else_the_transcripts() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("events.jsonl");
        std::fs::write(&path, OBSERVED).unwrap();
        let stop = |claim: Option<&str>, transcript: Option<&Path>| Stop {
            session: "s".into(),
            turn: None,
            cwd: "/r".into(),
            stop_hook_active: false,
            claim: claim.map(str::to_string),
            transcript: transcript.map(Path::to_path_buf),
            background: Vec::new(),
        };
        let claim = |stop: &Stop, after| Host::Copilot.claim(stop, after);
        assert_eq!(
            claim(&stop(None, Some(&path)), None).as_deref(),
            Some("All tests pass.")
        );
        // The previous answer's time reaches the transcript reader.
        assert_eq!(
            claim(&stop(None, Some(&path)), Some(1_796_000_065_538_000_000)),
            None
        );
        assert_eq!(
            claim(&stop(Some("said"), Some(&path)), None).as_deref(),
            Some("said")
        );
        assert_eq!(claim(&stop(None, None), None), None);
        // Other hosts take the payload's claim only.
        assert_eq!(Host::Claude.claim(&stop(None, Some(&path)), None), None);
    }

    #[test]
    fn camel_case_payloads_take_the_event_from_the_command_line() {
        let stop = br#"{"sessionId":"0447","timestamp":1795978336226,"cwd":"/repo","transcriptPath":"/t/events.jsonl","stopReason":"end_turn","stop_hook_active":false}"#;
        assert_eq!(
            Host::Copilot.parse(stop, Some("agentStop")).unwrap().event,
            Event::Stop(Stop {
                session: "0447".into(),
                turn: None,
                cwd: "/repo".into(),
                stop_hook_active: false,
                claim: None,
                transcript: Some("/t/events.jsonl".into()),
                background: Vec::new(),
            })
        );
        let start = br#"{"sessionId":"0447","timestamp":1795978336226,"cwd":"/repo","source":"new","initialPrompt":"make a file"}"#;
        assert!(matches!(
            Host::Copilot.parse(start, Some("sessionStart")).unwrap().event,
            Event::Start(Start { ref session, .. }) if session == "0447"
        ));
        let error = Host::Copilot.parse(stop, None).unwrap_err().to_string();
        assert!(error.contains("has no event name"), "{error}");
    }

    #[test]
    fn the_snake_case_dialect_names_its_event() {
        let stop = br#"{"session_id":"0447","cwd":"/repo","hook_event_name":"Stop","stop_hook_active":true}"#;
        let event = Host::Copilot.parse(stop, None).unwrap().event;
        assert!(matches!(
            event,
            Event::Stop(Stop {
                stop_hook_active: true,
                turn: None,
                ..
            })
        ));
    }

    /// Copilot CLI's `userPromptSubmitted` (camelCase, named on the command line) and the
    /// snake_case `UserPromptSubmit` are prompts.
    #[test]
    fn a_submitted_prompt_is_a_prompt_in_both_dialects() {
        let prompt = Event::Prompt(Prompt {
            session: "0447".into(),
            cwd: "/repo".into(),
        });
        let camel = br#"{"sessionId":"0447","timestamp":1795978336226,"cwd":"/repo","prompt":"make a file"}"#;
        let incoming = Host::Copilot.parse(camel, Some("userPromptSubmitted"));
        assert_eq!(incoming.unwrap().event, prompt);
        let snake = br#"{"session_id":"0447","cwd":"/repo","hook_event_name":"UserPromptSubmit","prompt":"make a file"}"#;
        assert_eq!(Host::Copilot.parse(snake, None).unwrap().event, prompt);
    }

    #[test]
    fn only_blocks_are_answered() {
        assert_eq!(
            Host::Copilot.render(None, &Message::Block("r".into())),
            "{\"decision\":\"block\",\"reason\":\"r\"}\n"
        );
        // Unreadable input and a turn's first stop get notices as blocks (worded by
        // `report::reply`); after a block they are dropped.
        assert!(Host::Copilot.notices_as_blocks(None));
        let after_block = Event::Stop(Stop {
            session: "s".into(),
            turn: None,
            cwd: "/r".into(),
            stop_hook_active: true,
            claim: None,
            transcript: None,
            background: Vec::new(),
        });
        assert!(!Host::Copilot.notices_as_blocks(Some(&after_block)));
        let notice = Message::Notice("n".into());
        assert_eq!(Host::Copilot.render(Some(&after_block), &notice), "");
        assert_eq!(Host::Copilot.render(None, &notice), "");
    }

    #[test]
    fn the_claim_is_the_transcripts_last_assistant_message() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("events.jsonl");
        std::fs::write(
            &path,
            concat!(
                r#"{"type":"user.message","data":{"content":"make a file"}}"#,
                "\n",
                r#"{"type":"assistant.message","data":{"content":"All tests pass."}}"#,
                "\n",
                r#"{"type":"assistant.message","data":{"content":""}}"#,
                "\n",
                "not json\n",
                r#"{"type":"session.idle","data":{}}"#,
                "\n",
            ),
        )
        .unwrap();
        assert_eq!(last_answer(&path, None).as_deref(), Some("All tests pass."));
        assert_eq!(last_answer(&dir.path().join("missing"), None), None);
    }

    /// Two events as Copilot CLI 1.0.102 wrote them (ids shortened), with the turn's claim.
    const OBSERVED: &str = concat!(
        r#"{"type":"assistant.message","data":{"messageId":"1a39","model":"gpt-4.1","content":"All tests pass.","toolRequests":[],"turnId":"1"},"id":"da5c","timestamp":"2026-11-30T00:54:25.538Z","parentId":"9c99"}"#,
        "\n",
        r#"{"type":"hook.start","data":{"hookType":"agentStop","input":{"sessionId":"158b","stopReason":"end_turn","stop_hook_active":false}},"id":"5742","timestamp":"2026-11-30T00:54:25.541Z","parentId":"c326"}"#,
        "\n",
    );

    #[test]
    fn a_claim_older_than_the_previous_answer_belongs_to_an_earlier_turn() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("events.jsonl");
        std::fs::write(&path, OBSERVED).unwrap();
        // 2026-11-30T00:54:25.538Z in ns since the epoch.
        let written: u64 = 1_796_000_065_538_000_000;
        let claim = |after| last_answer(&path, after);
        assert_eq!(claim(None).as_deref(), Some("All tests pass."));
        assert_eq!(claim(Some(written - 1)).as_deref(), Some("All tests pass."));
        assert_eq!(claim(Some(written)), None);
        assert_eq!(claim(Some(written + 1_000_000_000)), None);
        // Without a timestamp a message cannot be placed after anything.
        std::fs::write(
            &path,
            r#"{"type":"assistant.message","data":{"content":"x"}}"#,
        )
        .unwrap();
        assert_eq!(claim(None).as_deref(), Some("x"));
        assert_eq!(claim(Some(1)), None);
    }
}
