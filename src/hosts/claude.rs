//! Claude Code: hooks configured in `.claude/settings.json` (or a plugin's `hooks/hooks.json`)
//! get one JSON event on stdin. A block is `{"decision":"block","reason":...}` on stdout with
//! exit 0 (exit 2 with stderr has been misread as non-blocking); a user-visible notice that does
//! not continue the turn is `{"systemMessage":...}`. Plain SessionStart stdout would be added to
//! the model's context, so stdout is empty or one JSON object, always. Claude Code ends a turn
//! after 8 consecutive blocks (`CLAUDE_CODE_STOP_HOOK_BLOCK_CAP`). See ADAPTERS.md.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use super::adapter::Adapter;
use super::fields::{
    Object, background_tasks, optional_string, snake_after_tool, snake_prompt, snake_start,
    snake_stop, string,
};
use super::transcript;
use super::trust::{HooksOff, Switch, dir_from, home, read_json};
use super::wiring::{
    AFTER_TOOL_TIMEOUT, Layout, START_TIMEOUT, STOP_TIMEOUT, Scheme, after_tool_entry, entry,
};
use super::{Event, Host, InputError, Start, Stop, Subagent, vscode};
use crate::gate::Message;

/// Claude Code's own cap on consecutive blocks may be set in its environment.
pub(crate) const CLAUDE_BLOCK_CAP_ENV: &str = "CLAUDE_CODE_STOP_HOOK_BLOCK_CAP";

/// The project folder Claude Code was started in, set in every hook's environment.
const PROJECT_DIR_ENV: &str = "CLAUDE_PROJECT_DIR";
/// How Claude Code was started: `cli` interactively, `sdk-cli` for `claude -p`, `sdk-ts` and
/// `sdk-py` from the Agent SDK.
const ENTRYPOINT_ENV: &str = "CLAUDE_CODE_ENTRYPOINT";
/// `0` when no person attends the session (`claude -p`).
const ATTENDED_ENV: &str = "CLAUDE_CODE_SESSION_ATTENDED";

/// Claude Code's cap on consecutive blocks when its environment sets none.
const DEFAULT_BLOCK_CAP: u32 = 8;

const COMMAND: &str = "git prove-it hook claude";

/// The settings key that turns off every hook of Claude Code.
const DISABLE_ALL_HOOKS: &str = "disableAllHooks";

/// Where `init` wires Claude Code (the same as `hooks/claude-settings.json`).
const WIRING: Scheme = Scheme {
    path: ".claude/settings.json",
    layout: Layout::Grouped {
        timeout_key: "timeout",
    },
    entries: &[
        entry("SessionStart", COMMAND, START_TIMEOUT, false),
        entry("Stop", COMMAND, STOP_TIMEOUT, true),
        // A subagent in a worktree of its own is anchored at its start and gated at its stop.
        entry("SubagentStart", COMMAND, START_TIMEOUT, false),
        entry("SubagentStop", COMMAND, STOP_TIMEOUT, true),
        // Agent teams: a task marked complete, a teammate going idle.
        entry("TaskCompleted", COMMAND, STOP_TIMEOUT, true),
        entry("TeammateIdle", COMMAND, STOP_TIMEOUT, true),
        after_tool_entry("PostToolUse", COMMAND, AFTER_TOOL_TIMEOUT),
    ],
    timeout_unit_ms: 1000,
    default_timeout: Some(600),
    stamp: None,
    ms_from: None,
};

pub(super) struct Claude;

impl Adapter for Claude {
    fn name(&self) -> &'static str {
        "claude"
    }

    fn title(&self) -> &'static str {
        "Claude Code"
    }

    /// VS Code reads `.claude/settings.json` too, and calls `hook claude` with its own payload.
    fn dialect(&self, payload: &Object) -> Option<Host> {
        vscode::speaks(payload).then_some(Host::Vscode)
    }

    fn parse(&self, payload: &Object, _arg: Option<&str>) -> Result<Event, InputError> {
        parse_object(payload)
    }

    fn answer(&self, _event: Option<&Event>, message: &Message) -> Option<Value> {
        answer(message)
    }

    /// `TaskCompleted` and `TeammateIdle` take a block as exit status 2 with the reason on
    /// stderr, which Claude Code sends back to the teammate
    /// (<https://code.claude.com/docs/en/hooks>); their stdout is no decision.
    fn blocks_by_exit(&self, event: Option<&Event>) -> bool {
        matches!(event, Some(Event::TaskDone(_)))
    }

    fn cap(&self, var: &dyn Fn(&str) -> Option<String>) -> Option<u32> {
        Some(
            var(CLAUDE_BLOCK_CAP_ENV)
                .and_then(|cap| cap.trim().parse().ok())
                .filter(|cap| *cap > 0)
                .unwrap_or(DEFAULT_BLOCK_CAP),
        )
    }

    fn cap_setting(&self) -> Option<&'static str> {
        Some(CLAUDE_BLOCK_CAP_ENV)
    }

    /// `CLAUDE_ENV_FILE` is set for SessionStart only, `CLAUDE_EFFORT` for the other events
    /// (observed with 2.1.328), and the effort level is a person's choice mid-session.
    /// `CLAUDE_PROJECT_DIR` is read by the gate itself, to find the session's worktrees.
    fn per_event_env(&self) -> &'static [&'static str] {
        &["CLAUDE_ENV_FILE", "CLAUDE_EFFORT", "CLAUDE_PROJECT_DIR"]
    }

    fn shows_notices(&self) -> bool {
        true
    }

    /// Claude Code runs every hook with `CLAUDE_PROJECT_DIR`, the folder it was started in,
    /// whatever the agent's shell did to the payload's `cwd`.
    fn project_dir(&self, var: &dyn Fn(&str) -> Option<String>) -> Option<PathBuf> {
        var(PROJECT_DIR_ENV)
            .filter(|dir| !dir.is_empty())
            .map(PathBuf::from)
    }

    /// `claude -p` (and the Agent SDK) shows no `systemMessage` in its text or `json` result:
    /// Claude Code 2.1.328 runs hooks with `CLAUDE_CODE_ENTRYPOINT=sdk-cli` and
    /// `CLAUDE_CODE_SESSION_ATTENDED=0` there (`cli` for an interactive session).
    fn headless(&self, var: &dyn Fn(&str) -> Option<String>) -> bool {
        var(ENTRYPOINT_ENV).is_some_and(|entry| entry.starts_with("sdk"))
            || var(ATTENDED_ENV).is_some_and(|attended| attended.trim() == "0")
    }

    fn wiring(&self) -> &'static Scheme {
        &WIRING
    }

    /// Claude Code 2.1.328, started in a subdirectory, runs no hook of the root's
    /// `.claude/settings.json`, but those of the user's settings (and of plugins).
    fn reads_project_hooks_below_root(&self) -> bool {
        false
    }

    fn user_config(&self) -> Option<PathBuf> {
        Some(dir_from("CLAUDE_CONFIG_DIR", || home().join(".claude")).join("settings.json"))
    }

    /// `"disableAllHooks": true` in any settings layer Claude Code reads for the folder (the
    /// user's, the project's, the project's local file) turns off every hook, the gate's
    /// included (<https://code.claude.com/docs/en/settings>; the claim preset sets it itself).
    fn hooks_off(&self, workdir: &Path) -> Vec<HooksOff> {
        let user = self.user_config();
        let project =
            [".claude/settings.json", ".claude/settings.local.json"].map(|rel| workdir.join(rel));
        user.into_iter()
            .chain(project)
            .filter(|file| {
                read_json(file).is_some_and(|settings| {
                    settings.get(DISABLE_ALL_HOOKS) == Some(&Value::Bool(true))
                })
            })
            .map(|file| HooksOff {
                file,
                key: DISABLE_ALL_HOOKS,
                switch: Switch::DisabledTrue,
            })
            .collect()
    }

    /// `last_assistant_message`, else the transcript's last answer of this turn.
    fn claim(&self, stop: &Stop, previous_answer_ns: Option<u64>) -> Option<String> {
        stop.claim.clone().or_else(|| {
            let transcript = stop.transcript.as_deref()?;
            last_answer(transcript, previous_answer_ns)
        })
    }

    /// Claude Code asks once per folder, in an interactive session, whether to trust it, and
    /// records the answer as `projects.<path>.hasTrustDialogAccepted` in `~/.claude.json`
    /// (`$CLAUDE_CONFIG_DIR/.claude.json` when set); trusting a folder trusts what is below it.
    /// `claude -p` runs project hooks without asking.
    fn trust_record(&self, workdir: &Path) -> Option<(bool, PathBuf)> {
        let file = dir_from("CLAUDE_CONFIG_DIR", home).join(".claude.json");
        let trusted = read_json(&file)
            .as_ref()
            .and_then(|state| state.get("projects"))
            .is_some_and(|projects| {
                workdir.ancestors().any(|dir| {
                    projects
                        .get(dir.to_string_lossy().as_ref())
                        .and_then(|project| project.get("hasTrustDialogAccepted"))
                        .and_then(Value::as_bool)
                        == Some(true)
                })
            });
        Some((trusted, file))
    }
}

/// Claude Code's events. A stop without `last_assistant_message` (older and some headless
/// versions send none) keeps `transcript_path`, where the claim is read from then.
pub(super) fn parse_object(map: &Object) -> Result<Event, InputError> {
    match string(map, "hook_event_name")?.as_str() {
        "SubagentStart" => return subagent_start(map),
        "SubagentStop" => return subagent_stop(map),
        "TaskCompleted" => return task_done(map, "task_id"),
        "TeammateIdle" => return task_done(map, "teammate_name"),
        _ => {}
    }
    match parse_shape(map, "prompt_id")? {
        Event::Stop(mut stop) => {
            if stop.claim.is_none() {
                stop.transcript = optional_string(map, "transcript_path").map(PathBuf::from);
            }
            stop.background = background_tasks(map);
            Ok(Event::Stop(stop))
        }
        event => Ok(event),
    }
}

/// The subagent an event is about: `agent_id` in its session `session_id` (Claude Code
/// 2.1.328 sends both at `SubagentStart` and `SubagentStop`, with `agent_type`).
fn subagent(map: &Object) -> Result<Subagent, InputError> {
    Ok(Subagent {
        parent: string(map, "session_id")?,
        agent: string(map, "agent_id")?,
    })
}

/// `SubagentStart`: `cwd` is where the subagent works, its own worktree under
/// `.claude/worktrees/agent-<id>/` when it was started with `isolation: "worktree"`.
fn subagent_start(map: &Object) -> Result<Event, InputError> {
    let of = subagent(map)?;
    Ok(Event::SubagentStart {
        start: Start {
            session: of.session(),
            cwd: PathBuf::from(string(map, "cwd")?),
            source: None,
        },
        of,
    })
}

/// `SubagentStop`: a stop of the subagent's own session, whose claim is its
/// `last_assistant_message` (else the last answer in `agent_transcript_path`).
fn subagent_stop(map: &Object) -> Result<Event, InputError> {
    let of = subagent(map)?;
    let mut stop = snake_stop(map, Some("prompt_id"))?;
    stop.session = of.session();
    stop.background = background_tasks(map);
    if stop.claim.is_none() {
        stop.transcript = optional_string(map, "agent_transcript_path").map(PathBuf::from);
    }
    Ok(Event::SubagentStop { stop, of })
}

/// `TaskCompleted` and `TeammateIdle` (agent teams): a stop of the session `session_id` in
/// `cwd`. Claude Code 2.1.328 fires both at a teammate's turn end, once its Stop hooks let
/// the turn end (and `TaskCompleted` also when `TaskUpdate` marks a task completed), with
/// that turn's `prompt_id`: the turn is the prompt's, as at its Stop, so that the Stop and
/// both events spend one budget, though neither event carries `stop_hook_active`. Without `prompt_id`, the turn is the task (`task_id`) or the teammate
/// (`teammate_name`). The claim is the task's subject.
fn task_done(map: &Object, turn: &'static str) -> Result<Event, InputError> {
    let mut stop = snake_stop(map, Some("prompt_id"))?;
    if stop.turn.is_none() {
        stop.turn = optional_string(map, turn).map(|id| format!("{turn}:{id}"));
    }
    stop.stop_hook_active = stop.turn.is_some();
    stop.claim = optional_string(map, "task_subject");
    Ok(Event::TaskDone(stop))
}

/// The last assistant text in a Claude Code transcript (JSON lines of
/// `{"type":"assistant","message":{"content":[{"type":"text","text":...}]},"timestamp":...}`),
/// if it can be read and was written after `after` (the gate's previous answer in this
/// session, ns since the epoch): an older one is an earlier turn's, no claim of this one. The
/// path is the payload's, read only as a bounded regular file (`payload_file`).
fn last_answer(transcript: &Path, after: Option<u64>) -> Option<String> {
    transcript::last_answer(transcript, after, assistant_text)
}

/// The text of an assistant entry: its content's text blocks (a tool call alone has none).
fn assistant_text(event: &Value) -> Option<String> {
    if event["type"] != "assistant" {
        return None;
    }
    let content = &event["message"]["content"];
    let text = match content {
        Value::String(text) => text.clone(),
        Value::Array(blocks) => blocks
            .iter()
            .filter(|block| block["type"] == "text")
            .filter_map(|block| block["text"].as_str())
            .collect::<Vec<_>>()
            .join("\n"),
        _ => return None,
    };
    Some(text).filter(|text| !text.trim().is_empty())
}

/// Events in Claude Code's shape, whose turn id is in the field `turn` (Codex's differs).
pub(super) fn parse_shape(map: &Object, turn: &str) -> Result<Event, InputError> {
    let name = string(map, "hook_event_name")?;
    match name.as_str() {
        "SessionStart" => snake_start(map),
        "Stop" => Ok(Event::Stop(snake_stop(map, Some(turn))?)),
        // Not wired by `init`: the turn id already names a new prompt's turn. Read all the
        // same, so that a hand-wired one does what it says.
        "UserPromptSubmit" => snake_prompt(map),
        "PostToolUse" => snake_after_tool(map),
        _ => Ok(Event::Other { name }),
    }
}

/// The answer for Claude Code, and for Codex and Gemini, which read the same keys. Codex
/// rejects keys outside its schema (and then ignores the hook), so nothing else is ever added.
pub(super) fn answer(message: &Message) -> Option<Value> {
    match message {
        Message::Silent => None,
        Message::Notice(text) => Some(json!({ "systemMessage": text })),
        Message::Block(reason) => Some(json!({ "decision": "block", "reason": reason })),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hosts::{Start, Stop, Subagent};

    fn parse(input: &[u8]) -> Result<Event, InputError> {
        Host::Claude
            .parse(input, None)
            .map(|incoming| incoming.event)
    }

    fn render(message: &Message) -> String {
        Host::Claude.render(None, message)
    }

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
                transcript: None,
                background: Vec::new(),
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
        let input = br#"{"session_id":"86ca","cwd":"/repo","hook_event_name":"Notification","message":"hi"}"#;
        assert_eq!(
            parse(input).unwrap(),
            Event::Other {
                name: "Notification".into()
            }
        );
    }

    /// As Claude Code 2.1.328 sent them for a subagent started with `isolation: "worktree"`.
    #[test]
    fn parses_a_subagents_start_and_stop_as_a_session_of_its_own() {
        let of = Subagent {
            parent: "82b7".into(),
            agent: "ac7c".into(),
        };
        let input = br#"{"session_id":"82b7","transcript_path":"/t.jsonl","cwd":"/repo/.claude/worktrees/agent-ac7c","prompt_id":"bf6b","agent_id":"ac7c","agent_type":"general-purpose","hook_event_name":"SubagentStart"}"#;
        assert_eq!(
            parse(input).unwrap(),
            Event::SubagentStart {
                start: Start {
                    session: "82b7/subagent/ac7c".into(),
                    cwd: "/repo/.claude/worktrees/agent-ac7c".into(),
                    source: None,
                },
                of: of.clone(),
            }
        );
        let input = br#"{"session_id":"82b7","transcript_path":"/t.jsonl","cwd":"/repo/.claude/worktrees/agent-ac7c","prompt_id":"bf6b","permission_mode":"default","agent_id":"ac7c","agent_type":"general-purpose","effort":{"level":"medium"},"hook_event_name":"SubagentStop","stop_hook_active":false,"agent_transcript_path":"/s/agent-ac7c.jsonl","background_tasks":[],"session_crons":[]}"#;
        assert_eq!(
            parse(input).unwrap(),
            Event::SubagentStop {
                stop: Stop {
                    session: "82b7/subagent/ac7c".into(),
                    turn: Some("bf6b".into()),
                    cwd: "/repo/.claude/worktrees/agent-ac7c".into(),
                    stop_hook_active: false,
                    claim: None,
                    transcript: Some("/s/agent-ac7c.jsonl".into()),
                    background: Vec::new(),
                },
                of,
            }
        );
        let input = br#"{"session_id":"82b7","cwd":"/repo","hook_event_name":"SubagentStop"}"#;
        assert_eq!(
            parse(input).unwrap_err().to_string(),
            "the hook input has no agent_id (a non-empty string)"
        );
    }

    /// Without `prompt_id`, a task's completion is counted per task; it is blocked by the
    /// exit status.
    #[test]
    fn parses_task_completed_as_a_stop_answered_by_exit_status() {
        let input = br#"{"session_id":"82b7","cwd":"/repo","hook_event_name":"TaskCompleted","task_id":"3","task_subject":"make it 5","task_description":"d","teammate_name":"impl","team_name":"t"}"#;
        let event = parse(input).unwrap();
        assert_eq!(
            event,
            Event::TaskDone(Stop {
                session: "82b7".into(),
                turn: Some("task_id:3".into()),
                cwd: "/repo".into(),
                stop_hook_active: true,
                claim: Some("make it 5".into()),
                transcript: None,
                background: Vec::new(),
            })
        );
        assert!(Host::Claude.blocks_by_exit(Some(&event)));
        let stop = parse(br#"{"session_id":"82b7","cwd":"/repo","hook_event_name":"Stop"}"#);
        assert!(!Host::Claude.blocks_by_exit(stop.as_ref().ok()));
    }

    /// As Claude Code 2.1.328 sends both at a teammate's turn end: with the turn's
    /// `prompt_id`, which the teammate's Stop of that turn carries too, so that the three
    /// spend one budget instead of each event resetting the other's count.
    #[test]
    fn a_teammates_task_completed_and_idle_count_in_the_turn_of_their_prompt_id() {
        let completed = br#"{"session_id":"c6f6","transcript_path":"/t.jsonl","cwd":"/repo","prompt_id":"704c","permission_mode":"default","hook_event_name":"TaskCompleted","task_id":"1","task_subject":"Write the answer","task_description":"Write answer.txt","teammate_name":"alice","team_name":"demo"}"#;
        let idle = br#"{"session_id":"c6f6","transcript_path":"/t.jsonl","cwd":"/repo","prompt_id":"704c","permission_mode":"default","hook_event_name":"TeammateIdle","teammate_name":"alice","team_name":"demo"}"#;
        let stop = |claim: Option<&str>| {
            Event::TaskDone(Stop {
                session: "c6f6".into(),
                turn: Some("704c".into()),
                cwd: "/repo".into(),
                stop_hook_active: true,
                claim: claim.map(Into::into),
                transcript: None,
                background: Vec::new(),
            })
        };
        assert_eq!(parse(completed).unwrap(), stop(Some("Write the answer")));
        assert_eq!(parse(idle).unwrap(), stop(None));
    }

    /// As HOSTS.md records Claude Code's `UserPromptSubmit`, and Codex's of the same shape.
    #[test]
    fn parses_user_prompt_submit_as_a_prompt() {
        let input = br#"{"session_id":"86ca","transcript_path":"/t.jsonl","cwd":"/repo","prompt_id":"99ce","permission_mode":"default","hook_event_name":"UserPromptSubmit","prompt":"make a file"}"#;
        let prompt = Event::Prompt(crate::hosts::Prompt {
            session: "86ca".into(),
            cwd: "/repo".into(),
        });
        assert_eq!(parse(input).unwrap(), prompt);
        let input = br#"{"session_id":"86ca","turn_id":"01b3","cwd":"/repo","hook_event_name":"UserPromptSubmit","prompt":"make a file"}"#;
        assert_eq!(Host::Codex.parse(input, None).unwrap().event, prompt);
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
