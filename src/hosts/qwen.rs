//! Qwen Code: hooks in `.qwen/settings.json` (or the user's `~/.qwen/settings.json`) in Claude
//! Code's shape, with timeouts in seconds (a command hook's value of 1000 or more is read as
//! milliseconds). The end of a turn is `Stop`, with the turn named by `prompt_id` (the same
//! through the block loop and tool calls, new at each prompt) and the claim in
//! `last_assistant_message`. A block is `{"decision":"block","reason":...}`: the reason is the
//! model's next user message, raw. Qwen Code ends a turn after 8 consecutive blocks
//! (`QWEN_CODE_STOP_HOOK_BLOCK_CAP` sets another cap for a run). A `systemMessage` shows in an
//! interactive session and on stderr of `qwen -p`'s text output, never in its JSON output, and
//! the hook cannot tell the two apart: the turn's end unverified is one last block. See
//! ADAPTERS.md.

use std::path::{Path, PathBuf};

use serde_json::Value;

use super::adapter::Adapter;
use super::fields::{Object, background_tasks, snake_after_tool, snake_start, snake_stop, string};
use super::trust::{HooksOff, Switch, dir_from, home, json_at, read_json};
use super::wiring::{
    AFTER_TOOL_TIMEOUT, Layout, START_TIMEOUT, STOP_TIMEOUT, Scheme, after_tool_entry, entry,
};
use super::{Event, InputError, claude, copilot};
use crate::gate::Message;

/// Qwen Code's own cap on consecutive blocks may be set in its environment, for one run.
const BLOCK_CAP_ENV: &str = "QWEN_CODE_STOP_HOOK_BLOCK_CAP";
/// The settings key of the same cap, for every run.
const BLOCK_CAP_SETTING: &str = "stopHookBlockingCap";
/// Qwen Code's cap when nothing sets one, and the largest it accepts.
const DEFAULT_BLOCK_CAP: u32 = 8;
const MAX_BLOCK_CAP: u32 = 100;

/// The folder Qwen Code was started in, set in every command hook's environment.
const PROJECT_DIR_ENV: &str = "QWEN_PROJECT_DIR";
/// Qwen Code's user directory, `~/.qwen` unless this names another.
const HOME_ENV: &str = "QWEN_HOME";

const COMMAND: &str = "git prove-it hook qwen";

/// The settings key that turns off every hook of Qwen Code.
const DISABLE_ALL_HOOKS: &str = "disableAllHooks";

/// Qwen Code counts a command hook's timeout in seconds.
const WIRING: Scheme = Scheme {
    path: ".qwen/settings.json",
    layout: Layout::Grouped {
        timeout_key: "timeout",
    },
    entries: &[
        entry("SessionStart", COMMAND, START_TIMEOUT, false),
        entry("Stop", COMMAND, STOP_TIMEOUT, true),
        after_tool_entry("PostToolUse", COMMAND, AFTER_TOOL_TIMEOUT),
    ],
    timeout_unit_ms: 1000,
    default_timeout: Some(60),
    stamp: Some(("$version", 4)),
    ms_from: Some(1000),
};

pub(super) struct Qwen;

impl Adapter for Qwen {
    fn name(&self) -> &'static str {
        "qwen"
    }

    fn title(&self) -> &'static str {
        "Qwen Code"
    }

    fn parse(&self, payload: &Object, _arg: Option<&str>) -> Result<Event, InputError> {
        parse(payload)
    }

    /// Qwen Code reads Claude Code's answer keys.
    fn answer(&self, _event: Option<&Event>, message: &Message) -> Option<Value> {
        claude::answer(message)
    }

    fn cap_setting(&self) -> Option<&'static str> {
        Some("QWEN_CODE_STOP_HOOK_BLOCK_CAP (or stopHookBlockingCap in its settings)")
    }

    /// As Qwen Code 0.24.4 resolves it: `QWEN_CODE_STOP_HOOK_BLOCK_CAP` when set and not
    /// blank, an integer from 1 (above 100 reads as 100) and anything else the default 8;
    /// else `stopHookBlockingCap` of the settings, the project's (in the folder Qwen Code was
    /// started in) over the user's, a number from 1 (its whole part, at most 100). A value
    /// edited mid-session, which Qwen Code reads only at its start, can only lower the budget:
    /// the gate then yields sooner, never proves more.
    fn cap(&self, var: &dyn Fn(&str) -> Option<String>) -> Option<u32> {
        if let Some(value) = var(BLOCK_CAP_ENV).filter(|value| !value.trim().is_empty()) {
            return Some(match value.trim().parse::<u32>() {
                Ok(cap) if cap >= 1 => cap.min(MAX_BLOCK_CAP),
                _ => DEFAULT_BLOCK_CAP,
            });
        }
        let project = self
            .project_dir(var)
            .map(|dir| dir.join(WIRING.path))
            .and_then(|file| read_json(&file));
        let user = user_dir_in(var).and_then(|dir| read_json(&dir.join("settings.json")));
        let set = [project, user]
            .into_iter()
            .flatten()
            .find_map(|settings| settings.get(BLOCK_CAP_SETTING).cloned());
        Some(set.map_or(DEFAULT_BLOCK_CAP, |value| match value.as_f64() {
            Some(cap) if cap.is_finite() && cap >= 1.0 => {
                // Whole blocks, from 1 to 100.
                (1..=MAX_BLOCK_CAP)
                    .take_while(|blocks| f64::from(*blocks) <= cap)
                    .last()
                    .unwrap_or(DEFAULT_BLOCK_CAP)
            }
            _ => DEFAULT_BLOCK_CAP,
        }))
    }

    /// Qwen Code 0.24.4 sets these in every hook's environment from the call's own context:
    /// `QWEN_CODE_PROMPT_ID` is empty at SessionStart and the prompt's id at a stop,
    /// `QWEN_CODE_AGENT_ID` names the subagent a call comes from, the model's pair follows
    /// the model a person picks with `/model`, and the trace pair is set per call when trace
    /// propagation is on.
    fn per_event_env(&self) -> &'static [&'static str] {
        &[
            "QWEN_CODE_AGENT_ID",
            "QWEN_CODE_MODEL",
            "QWEN_CODE_MODEL_IDENTITY",
            "QWEN_CODE_PROMPT_ID",
            "TRACEPARENT",
            "TRACESTATE",
        ]
    }

    /// A person at Qwen Code's screen sees a `systemMessage`, `qwen -p` prints it on stderr
    /// in text output only, and no variable of the hook's environment or field of its payload
    /// tells a headless run: the yield is told to the agent as one last block.
    fn shows_notices(&self) -> bool {
        false
    }

    fn notices_as_blocks(&self, event: Option<&Event>) -> bool {
        copilot::notice_becomes_a_block(event)
    }

    /// Qwen Code runs every command hook with `QWEN_PROJECT_DIR`, the folder it was started in.
    fn project_dir(&self, var: &dyn Fn(&str) -> Option<String>) -> Option<PathBuf> {
        var(PROJECT_DIR_ENV)
            .filter(|dir| !dir.is_empty())
            .map(PathBuf::from)
    }

    fn wiring(&self) -> &'static Scheme {
        &WIRING
    }

    /// Qwen Code 0.24.4, started in a subdirectory, runs no hook of the root's
    /// `.qwen/settings.json`, but those of the user's settings.
    fn reads_project_hooks_below_root(&self) -> bool {
        false
    }

    fn user_config(&self) -> Option<PathBuf> {
        Some(user_dir().join("settings.json"))
    }

    /// `"disableAllHooks": true` in the user's settings or the project's turns off every hook.
    fn hooks_off(&self, workdir: &Path) -> Vec<HooksOff> {
        self.user_config()
            .into_iter()
            .chain([workdir.join(WIRING.path)])
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

    /// Folder trust is off unless the user's settings set `security.folderTrust.enabled`, and
    /// every folder's project hooks run then. When on, the trusted folders are in
    /// `~/.qwen/trustedFolders.json` (`$QWEN_CODE_TRUSTED_FOLDERS_PATH` when set) as
    /// `{"<path>": "TRUST_FOLDER" | "TRUST_PARENT" | "DO_NOT_TRUST"}`.
    fn trust_record(&self, workdir: &Path) -> Option<(bool, PathBuf)> {
        let file = dir_from("QWEN_CODE_TRUSTED_FOLDERS_PATH", || {
            user_dir().join("trustedFolders.json")
        });
        let asks = self
            .user_config()
            .and_then(|settings| read_json(&settings))
            .is_some_and(|settings| {
                json_at(&settings, &["security", "folderTrust", "enabled"])
                    == Some(&Value::Bool(true))
            });
        let trusted = !asks
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

/// Qwen Code's user directory: `$QWEN_HOME`, else `~/.qwen`.
fn user_dir() -> PathBuf {
    dir_from(HOME_ENV, || home().join(".qwen"))
}

/// [`user_dir`] as the hook's environment (`var`) names it; None without a home.
fn user_dir_in(var: &dyn Fn(&str) -> Option<String>) -> Option<PathBuf> {
    let set = |name: &str| {
        var(name)
            .filter(|value| !value.is_empty())
            .map(PathBuf::from)
    };
    set(HOME_ENV).or_else(|| set("HOME").map(|home| home.join(".qwen")))
}

/// Qwen Code's events. `UserPromptSubmit` is not a person's prompt here: Qwen Code 0.24.4
/// fires it before every model call, for tool results and a block's continuation too; the
/// turn id (`prompt_id`) already names a new prompt's turn.
fn parse(map: &Object) -> Result<Event, InputError> {
    let name = string(map, "hook_event_name")?;
    match name.as_str() {
        "SessionStart" => snake_start(map),
        "Stop" => {
            let mut stop = snake_stop(map, Some("prompt_id"))?;
            stop.background = background_tasks(map);
            Ok(Event::Stop(stop))
        }
        "PostToolUse" => snake_after_tool(map),
        _ => Ok(Event::Other { name }),
    }
}

#[cfg(test)]
mod tests {
    use crate::gate::Message;
    use crate::hosts::{Event, Host, Start, Stop};

    /// As Qwen Code 0.24.4 sent them, in a `qwen -p` run blocked once.
    const START: &[u8] = br#"{"session_id":"5f3b","transcript_path":"/h/.qwen/projects/-r/chats/5f3b.jsonl","cwd":"/repo","hook_event_name":"SessionStart","timestamp":"2026-12-04T21:42:22.701Z","permission_mode":"yolo","source":"startup","model":"gpt-4.1"}"#;
    const STOP: &[u8] = br#"{"session_id":"5f3b","transcript_path":"/h/.qwen/projects/-r/chats/5f3b.jsonl","cwd":"/repo","hook_event_name":"Stop","timestamp":"2026-12-04T21:42:25.087Z","permission_mode":"yolo","prompt_id":"5f3b########0","stop_hook_active":true,"last_assistant_message":"Done 2","background_tasks":[],"crons":[],"context_usage":0.0000076,"context_limit":131072,"input_tokens":1}"#;
    const PROMPT: &[u8] = br#"{"session_id":"5f3b","cwd":"/repo","hook_event_name":"UserPromptSubmit","prompt_id":"5f3b########0","prompt":""}"#;

    fn parse(input: &[u8]) -> Event {
        Host::Qwen.parse(input, None).unwrap().event
    }

    #[test]
    fn a_stop_names_its_background_tasks() {
        let input = br#"{"session_id":"5f3b","cwd":"/repo","hook_event_name":"Stop","prompt_id":"5f3b########1","stop_hook_active":false,"last_assistant_message":"Done","background_tasks":[{"id":"bg-1","status":"running","agent_type":"general-purpose","started_at":"2026-12-04T21:42:25.087Z","description":"run the e2e suite"}],"crons":[]}"#;
        let Event::Stop(stop) = parse(input) else {
            panic!("a stop");
        };
        assert_eq!(
            stop.background,
            ["general-purpose bg-1 (running): run the e2e suite"]
        );
    }

    #[test]
    fn parses_a_stop_named_by_its_prompt_id_claiming_the_last_message() {
        assert_eq!(
            parse(STOP),
            Event::Stop(Stop {
                session: "5f3b".into(),
                turn: Some("5f3b########0".into()),
                cwd: "/repo".into(),
                stop_hook_active: true,
                claim: Some("Done 2".into()),
                transcript: None,
                background: Vec::new(),
            })
        );
        assert_eq!(
            parse(START),
            Event::Start(Start {
                session: "5f3b".into(),
                cwd: "/repo".into(),
                source: Some("startup".into()),
            })
        );
    }

    /// Qwen Code fires UserPromptSubmit for tool results and a block's continuation too: read
    /// as a new prompt, it would start the budget over inside the turn.
    #[test]
    fn user_prompt_submit_is_no_prompt() {
        assert!(matches!(parse(PROMPT), Event::Other { .. }));
    }

    /// The budget under the cap that the project's settings (`project`) and the user's
    /// (`user`) set, and the variable (`env_cap`).
    fn budget_with(project: &str, user: &str, env_cap: Option<&str>) -> u32 {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join(".qwen")).unwrap();
        std::fs::write(dir.path().join(".qwen/settings.json"), project).unwrap();
        std::fs::create_dir(dir.path().join("home")).unwrap();
        std::fs::write(dir.path().join("home/settings.json"), user).unwrap();
        let project_dir = dir.path().display().to_string();
        let env_cap = env_cap.map(str::to_owned);
        let var = move |name: &str| match name {
            "QWEN_PROJECT_DIR" => Some(project_dir.clone()),
            "QWEN_HOME" => Some(format!("{project_dir}/home")),
            "QWEN_CODE_STOP_HOOK_BLOCK_CAP" => env_cap.clone(),
            _ => None,
        };
        crate::gate::HostRules::block_budget(&Host::Qwen.rules(&var), 7)
    }

    /// A cap set in Qwen Code's settings ends its turns as surely as its variable's: the
    /// budget and the last block stay below it; the project's settings win over the user's,
    /// and the variable over both, as in Qwen Code.
    #[test]
    fn the_settings_block_cap_bounds_the_budget_unless_the_variable_sets_one() {
        let cap = |n: &str| format!(r#"{{"stopHookBlockingCap": {n}}}"#);
        assert_eq!(budget_with(&cap("4"), "{}", None), 2);
        assert_eq!(budget_with(&cap("4.9"), "{}", None), 2);
        assert_eq!(budget_with(&cap("0"), "{}", None), 6);
        assert_eq!(budget_with(&cap("\"4\""), "{}", None), 6);
        assert_eq!(budget_with(&cap("500"), "{}", None), 7);
        assert_eq!(budget_with("{}", "{}", None), 6);
        assert_eq!(budget_with("{}", &cap("5"), None), 3);
        assert_eq!(budget_with(&cap("4"), &cap("5"), None), 2);
        assert_eq!(budget_with(&cap("4"), &cap("5"), Some("6")), 4);
    }

    /// Qwen Code adds `"$version": 4` to a settings file without one, rewriting it at its first
    /// run: in a file init creates it is there already. A file already there keeps its own
    /// keys, whose version Qwen Code tells by the key missing.
    #[test]
    fn a_new_settings_file_carries_qwen_codes_version_and_an_old_one_is_left_to_qwen_code() {
        let new: serde_json::Value =
            serde_json::from_str(&Host::Qwen.wire(None).unwrap().text).unwrap();
        assert_eq!(new["$version"], 4);
        let old = r#"{"ui": {"theme": "dark"}}"#;
        let wired: serde_json::Value =
            serde_json::from_str(&Host::Qwen.wire(Some(old)).unwrap().text).unwrap();
        assert!(wired.get("$version").is_none(), "{wired}");
        assert_eq!(wired["ui"]["theme"], "dark");
        let versioned = r#"{"$version": 3}"#;
        let wired: serde_json::Value =
            serde_json::from_str(&Host::Qwen.wire(Some(versioned)).unwrap().text).unwrap();
        assert_eq!(wired["$version"], 3);
    }

    /// A `timeout` of 1000 or more is milliseconds to Qwen Code, as its earlier releases wrote
    /// them: doctor reads 120000 as the 120 s Qwen Code gives the hook, not 120000 s.
    #[test]
    fn a_timeout_of_1000_or_more_is_read_as_milliseconds() {
        let config = |timeout: u64| {
            format!(
                r#"{{"hooks": {{"Stop": [{{"hooks": [{{"type": "command", "command": "git prove-it hook qwen", "timeout": {timeout}}}]}}]}}}}"#
            )
        };
        let stop = |timeout| {
            let entries = Host::Qwen.wired_timeouts(&config(timeout)).unwrap();
            entries.into_iter().find(|(entry, _)| entry.stop).unwrap().1
        };
        use crate::hosts::Wiring;
        assert_eq!(stop(900), Wiring::Wired(Some(900)));
        assert_eq!(stop(999), Wiring::Wired(Some(999)));
        assert_eq!(stop(120_000), Wiring::Wired(Some(120)));
        assert_eq!(stop(1_800_000), Wiring::Wired(Some(1800)));
    }

    #[test]
    fn answers_in_claude_codes_keys() {
        assert_eq!(
            Host::Qwen.render(None, &Message::Block("fix it".into())),
            "{\"decision\":\"block\",\"reason\":\"fix it\"}\n"
        );
        assert_eq!(Host::Qwen.render(None, &Message::Silent), "");
    }
}
