//! Gemini CLI: hooks in `.gemini/settings.json`. The end of a turn is `AfterAgent`, with no turn
//! id (`prompt` stays the original prompt) and the turn's answers joined by newlines in
//! `prompt_response`. A block is `{"decision":"block","reason":...}` (the reason becomes the next
//! user turn); `systemMessage` is shown as a warning in an interactive session only, so a notice
//! at a stop also stops the agent, which headless output reports, and the turn's end unverified
//! is one last block. It has no cap on consecutive blocks, and its hook timeouts are in
//! milliseconds.
//!
//! `stop_hook_active` is true only for a stop that follows a block with no tool call in between:
//! once the agent runs a tool after a block, the next stop says `false` again (Gemini CLI 0.61.0),
//! and a budget counted by that flag would start over at every such stop, never ending the turn.
//! So the turn is named here instead: by its `prompt` and the first line of its cumulative
//! `prompt_response`, which both stay the same through the turn, block loop and tool calls
//! included, and every stop is read as possibly continuing the counted turn. A new prompt, or a
//! new turn's first answer, is a new turn id and a new budget. The same prompt answered with the
//! same first line (a person asking again after the turn ended unverified, in the session or a
//! resumed one) is the same id, so `BeforeAgent`, which Gemini CLI fires when a person submits
//! a prompt, is wired too and read as a prompt (`gate::Prompt`): the next stop is a new turn.
//! Gemini CLI fires `BeforeAgent` again for the continuation after each block, with the block's
//! reason as its `prompt`; the gate ignores a prompt while its last answer was a block.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use super::adapter::Adapter;
use super::fields::{
    Object, optional_string, snake_after_tool, snake_prompt, snake_start, snake_stop, string,
};
use super::trust::{HooksOff, Switch, dir_from, env_true, home, json_at, read_json};
use super::wiring::{
    AFTER_TOOL_TIMEOUT, Layout, START_TIMEOUT, STOP_TIMEOUT, Scheme, after_tool_entry, entry,
};
use super::{Event, InputError, Stop};
use crate::gate::Message;

const COMMAND: &str = "git prove-it hook gemini";

/// The settings that turn Gemini CLI's hook system off when false, by name and path.
const SWITCHES: [(&str, &[&str]); 3] = [
    ("hooksConfig.enabled", &["hooksConfig", "enabled"]),
    ("hooks.enabled", &["hooks", "enabled"]),
    ("tools.enableHooks", &["tools", "enableHooks"]),
];

/// The settings that list hooks Gemini CLI does not run.
const DISABLED_LISTS: [(&str, &[&str]); 2] = [
    ("hooksConfig.disabled", &["hooksConfig", "disabled"]),
    ("hooks.disabled", &["hooks", "disabled"]),
];

/// Gemini CLI counts hook timeouts in milliseconds.
const WIRING: Scheme = Scheme {
    path: ".gemini/settings.json",
    layout: Layout::Grouped {
        timeout_key: "timeout",
    },
    entries: &[
        entry("SessionStart", COMMAND, START_TIMEOUT * 1000, false),
        entry("BeforeAgent", COMMAND, START_TIMEOUT * 1000, false),
        entry("AfterAgent", COMMAND, STOP_TIMEOUT * 1000, true),
        after_tool_entry("AfterTool", COMMAND, AFTER_TOOL_TIMEOUT * 1000),
    ],
    timeout_unit_ms: 1,
    default_timeout: Some(60),
    stamp: None,
    ms_from: None,
};

pub(super) struct Gemini;

impl Adapter for Gemini {
    fn name(&self) -> &'static str {
        "gemini"
    }

    fn title(&self) -> &'static str {
        "Gemini CLI"
    }

    fn parse(&self, payload: &Object, _arg: Option<&str>) -> Result<Event, InputError> {
        parse(payload)
    }

    /// Gemini CLI reads Claude Code's answer keys. A notice at a stop (or in answer to input
    /// that could not be read) also stops the agent, whose turn was ending anyway: headless
    /// Gemini CLI prints a bare `systemMessage` only as a debug line on stderr, but reports a
    /// stop as `Agent execution stopped: <systemMessage>` on stderr in text output and among
    /// the `warnings` of the JSON result (Gemini CLI 0.61.0). Never at a session start, where
    /// stopping would end the session before its first prompt.
    fn answer(&self, event: Option<&Event>, message: &Message) -> Option<Value> {
        match (event, message) {
            (None | Some(Event::Stop(_)), Message::Notice(text)) => Some(json!({
                "continue": false,
                "stopReason": text,
                "systemMessage": text,
            })),
            _ => super::claude::answer(message),
        }
    }

    /// A person at Gemini CLI's screen sees a `systemMessage`; a headless run's output does not
    /// carry it, and the hook cannot tell the two apart (no variable of its environment and no
    /// field of its payload says which). So the turn's end unverified is told to the agent as
    /// one last block, to report it, as for Codex; Gemini has no cap to leave room in.
    fn shows_notices(&self) -> bool {
        false
    }

    fn wiring(&self) -> &'static Scheme {
        &WIRING
    }

    /// Gemini CLI 0.61.0 loads `.gemini/settings.json` only from the directory it is started
    /// in; its user settings (`~/.gemini/settings.json`) wherever it starts.
    fn reads_project_hooks_below_root(&self) -> bool {
        false
    }

    fn user_config(&self) -> Option<PathBuf> {
        Some(dir_from("GEMINI_CLI_HOME", home).join(".gemini/settings.json"))
    }

    /// Gemini CLI's switches of its hook system, in the user's settings or the project's
    /// (<https://geminicli.com/docs/reference/configuration>): `hooksConfig.enabled` false, as
    /// earlier releases spelled it `hooks.enabled` or `tools.enableHooks` false, runs no hook;
    /// `hooksConfig.disabled` (earlier `hooks.disabled`), a list of hook commands, runs none
    /// of those listed.
    fn hooks_off(&self, workdir: &Path) -> Vec<HooksOff> {
        let files = self
            .user_config()
            .into_iter()
            .chain([workdir.join(WIRING.path)]);
        let mut off = Vec::new();
        for file in files {
            let Some(settings) = read_json(&file) else {
                continue;
            };
            for (key, path) in SWITCHES {
                if json_at(&settings, path) == Some(&Value::Bool(false)) {
                    off.push(HooksOff {
                        file: file.clone(),
                        key,
                        switch: Switch::EnabledFalse,
                    });
                }
            }
            for (key, path) in DISABLED_LISTS {
                let lists_ours = json_at(&settings, path)
                    .and_then(Value::as_array)
                    .is_some_and(|names| {
                        names.iter().filter_map(Value::as_str).any(|name| {
                            name.contains("git prove-it") || name.contains("git-prove-it")
                        })
                    });
                if lists_ours {
                    off.push(HooksOff {
                        file: file.clone(),
                        key,
                        switch: Switch::ListsOurs,
                    });
                }
            }
        }
        off
    }

    /// Gemini CLI records trusted folders in `~/.gemini/trustedFolders.json` (under
    /// `$GEMINI_CLI_HOME` when set) as `{"<path>": "TRUST_FOLDER" | "TRUST_PARENT" |
    /// "DO_NOT_TRUST"}`; `GEMINI_CLI_TRUST_WORKSPACE=true` trusts the workspace of a headless run.
    fn trust_record(&self, workdir: &Path) -> Option<(bool, PathBuf)> {
        let file = dir_from("GEMINI_CLI_HOME", home).join(".gemini/trustedFolders.json");
        let trusted = env_true("GEMINI_CLI_TRUST_WORKSPACE")
            || read_json(&file)
                .as_ref()
                .and_then(Value::as_object)
                .is_some_and(|folders| {
                    folders.iter().any(|(path, rule)| {
                        let path = Path::new(path);
                        match rule.as_str() {
                            Some("TRUST_FOLDER") => workdir.starts_with(path),
                            Some("TRUST_PARENT") => {
                                path.parent().is_some_and(|p| workdir.starts_with(p))
                            }
                            _ => false,
                        }
                    })
                });
        Some((trusted, file))
    }
}

fn parse(map: &Object) -> Result<Event, InputError> {
    let name = string(map, "hook_event_name")?;
    match name.as_str() {
        "SessionStart" => snake_start(map),
        "AfterAgent" => {
            let response = optional_string(map, "prompt_response");
            let prompt = optional_string(map, "prompt").unwrap_or_default();
            Ok(Event::Stop(Stop {
                turn: Some(turn_id(&prompt, response.as_deref().unwrap_or(""))),
                // The turn id tells whether this stop continues the counted turn.
                stop_hook_active: true,
                claim: response.map(|all| last_answer(&all)),
                ..snake_stop(map, None)?
            }))
        }
        "BeforeAgent" => snake_prompt(map),
        "AfterTool" => snake_after_tool(map),
        _ => Ok(Event::Other { name }),
    }
}

/// The turn's name: a digest of its prompt and the first non-empty line of its answers so far.
fn turn_id(prompt: &str, response: &str) -> String {
    let first = response
        .lines()
        .find(|line| !line.trim().is_empty())
        .unwrap_or("");
    let mut data = b"prove-it gemini turn\0".to_vec();
    data.extend_from_slice(prompt.as_bytes());
    data.push(0);
    data.extend_from_slice(first.as_bytes());
    gix::objs::compute_hash(gix::hash::Kind::Sha1, gix::objs::Kind::Blob, &data)
        .expect("SHA-1 hashing of an in-memory buffer cannot fail")
        .to_string()
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
    use crate::hosts::{Event, Host, Prompt, Start, Stop};

    fn stop(prompt: &str, response: &str, active: bool) -> Stop {
        let input = serde_json::json!({"session_id": "cc95",
            "transcript_path": "/t/session.jsonl", "cwd": "/repo",
            "hook_event_name": "AfterAgent", "timestamp": "2026-11-29T18:49:48.461Z",
            "prompt": prompt, "prompt_response": response, "stop_hook_active": active});
        match Host::Gemini
            .parse(input.to_string().as_bytes(), None)
            .unwrap()
            .event
        {
            Event::Stop(stop) => stop,
            other => panic!("not a stop: {other:?}"),
        }
    }

    #[test]
    fn parses_after_agent_as_a_stop_claiming_the_last_answer() {
        let input = br#"{"session_id":"cc95","transcript_path":"/t/session.jsonl","cwd":"/repo","hook_event_name":"AfterAgent","timestamp":"2026-11-29T18:49:48.461Z","prompt":"make a file","prompt_response":"I made the file.\nAll tests pass.\n","stop_hook_active":false}"#;
        let Event::Stop(stop) = Host::Gemini.parse(input, None).unwrap().event else {
            panic!("AfterAgent is a stop");
        };
        assert_eq!(
            stop,
            Stop {
                session: "cc95".into(),
                turn: stop.turn.clone(),
                cwd: "/repo".into(),
                stop_hook_active: true,
                claim: Some("All tests pass.".into()),
                transcript: None,
                background: Vec::new(),
            }
        );
        assert_eq!(stop.turn.unwrap().len(), 40);
    }

    #[test]
    fn a_turn_keeps_its_id_through_blocks_and_tool_calls() {
        // As Gemini CLI 0.61.0 sent them: a block, a tool call, and the flag is false again.
        let first = stop("make a file", "All tests pass.", false);
        let after_block = stop("make a file", "All tests pass.\nStill done.", true);
        let after_a_tool = stop("make a file", "All tests pass.\nStill done.\nFixed.", false);
        assert_eq!(first.turn, after_block.turn);
        assert_eq!(first.turn, after_a_tool.turn);
        assert!(after_a_tool.stop_hook_active);
        assert_eq!(after_a_tool.claim.as_deref(), Some("Fixed."));
        // A new prompt, or a new first answer to the same prompt, is a new turn.
        assert_ne!(
            first.turn,
            stop("make another", "All tests pass.", false).turn
        );
        assert_ne!(first.turn, stop("make a file", "Done.", false).turn);
        // Leading blank lines do not change the name; a missing response is a turn too.
        assert_eq!(
            first.turn,
            stop("make a file", "\nAll tests pass.", false).turn
        );
        assert!(stop("make a file", "", false).turn.is_some());
    }

    /// `BeforeAgent` is a prompt; Gemini CLI also fires it with a block's
    /// reason as the `prompt` of the continuation, which the gate tells apart by its last
    /// answer (a block), not by the payload. Other events are passed by.
    #[test]
    fn parses_session_start_and_before_agent_and_passes_other_events_by() {
        let input = br#"{"session_id":"cc95","cwd":"/repo","hook_event_name":"SessionStart","source":"startup"}"#;
        assert_eq!(
            Host::Gemini.parse(input, None).unwrap().event,
            Event::Start(Start {
                session: "cc95".into(),
                cwd: "/repo".into(),
                source: Some("startup".into()),
            })
        );
        let input = br#"{"session_id":"cc95","transcript_path":"/t/session.jsonl","cwd":"/repo","hook_event_name":"BeforeAgent","timestamp":"2026-11-29T18:49:40.000Z","prompt":"make a file"}"#;
        assert_eq!(
            Host::Gemini.parse(input, None).unwrap().event,
            Event::Prompt(Prompt {
                session: "cc95".into(),
                cwd: "/repo".into(),
            })
        );
        let input = br#"{"session_id":"cc95","cwd":"/repo","hook_event_name":"BeforeTool"}"#;
        assert!(matches!(
            Host::Gemini.parse(input, None).unwrap().event,
            Event::Other { .. }
        ));
    }
}
