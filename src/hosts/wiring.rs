//! Merging the gate's hook entries into a host's JSON configuration without dropping anything
//! that is already there, and reading back whether (and with which timeout) they are wired.
//!
//! Pure: text in, text out. `cli/init.rs` reads and writes the files, `setup/doctor.rs` reads
//! them. Each host's module says where its file is and which entries it needs ([`Scheme`]);
//! ADAPTERS.md shows each configuration this writes.

use serde_json::{Map, Value, json};

/// How one host is wired: its configuration file, the shape of its hooks and the entries the
/// gate needs there.
#[derive(Debug)]
pub(crate) struct Scheme {
    /// The project configuration file, relative to the worktree root.
    pub path: &'static str,
    pub layout: Layout,
    /// The entries the gate needs, in the host's units.
    pub entries: &'static [HookEntry],
    /// Milliseconds per unit of the host's timeouts (Gemini counts in milliseconds).
    pub timeout_unit_ms: u64,
    /// The host's timeout for a hook that sets none, in seconds.
    pub default_timeout: Option<u64>,
    /// A top-level key and number the host adds to its file by itself where it is missing
    /// (Qwen Code's settings version): written in a file of ours, so that the host's first
    /// run does not change a file just committed. Never added to a file already there, whose
    /// keys may be of an older version the host migrates by the missing key.
    pub stamp: Option<(&'static str, u64)>,
    /// A timeout at or above this is read as milliseconds, whatever the unit (Qwen Code reads
    /// a command hook's `timeout` of 1000 or more so, as its earlier releases counted).
    pub ms_from: Option<u64>,
}

/// One hook entry the gate needs in a host's configuration.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct HookEntry {
    pub event: &'static str,
    /// The command line the host runs.
    pub command: &'static str,
    /// In the host's unit (seconds; milliseconds for Gemini); None where the host has no
    /// timeout setting.
    pub timeout: Option<u64>,
    /// Whether this is the end-of-turn hook, whose timeout must exceed verify.sh's.
    pub stop: bool,
    /// Whether this is the after-tool hook, which only proves ahead: the gate holds without it.
    pub ahead: bool,
}

/// How a host's configuration file lists hooks under `"hooks"."<event>"`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Layout {
    /// Claude Code's shape: `[{"hooks": [{"type": "command", "command": C, "timeout": T}]}]`.
    Grouped { timeout_key: &'static str },
    /// A flat list of hooks: `[{..., <command_key>: C, <timeout_key>: T}]`, with `"version": 1`
    /// at the top where the host wants it.
    Flat {
        typed: bool,
        command_key: &'static str,
        timeout_key: Option<&'static str>,
        version: bool,
    },
}

/// Whether our hook is wired for an entry, and with which timeout.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Wiring {
    Missing,
    /// Wired; the timeout in seconds (the host's default when the entry sets none), None when
    /// the host has no timeout setting.
    Wired(Option<u64>),
}

/// What merging our entries into a configuration gave.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Wired {
    /// The configuration's new text; equal to the old one when nothing was missing.
    pub text: String,
    /// The events whose entry was added.
    pub added: Vec<&'static str>,
}

#[derive(Debug, thiserror::Error)]
pub(crate) enum Error {
    #[error("it is not valid JSON")]
    Json(#[source] serde_json::Error),
    #[error("{what} is not a JSON {expected}")]
    Shape {
        what: String,
        expected: &'static str,
    },
}

/// The session-start hook's timeout and the stop hook's, in seconds: the stop hook's must exceed
/// verify.sh's (300 s by default), since hosts ignore a hook that times out, which would end the
/// turn without a verdict.
pub(super) const START_TIMEOUT: u64 = 60;
pub(super) const STOP_TIMEOUT: u64 = 900;
/// The after-tool hook answers within milliseconds (it only wakes the prover); a host that
/// waited longer would hold the agent up.
pub(super) const AFTER_TOOL_TIMEOUT: u64 = 10;

/// An entry with a timeout in the host's unit.
pub(super) const fn entry(
    event: &'static str,
    command: &'static str,
    timeout: u64,
    stop: bool,
) -> HookEntry {
    HookEntry {
        event,
        command,
        timeout: Some(timeout),
        stop,
        ahead: false,
    }
}

/// The after-tool entry, which wakes the prover (SPEC section 8, "Proving ahead").
pub(super) const fn after_tool_entry(
    event: &'static str,
    command: &'static str,
    timeout: u64,
) -> HookEntry {
    HookEntry {
        ahead: true,
        ..entry(event, command, timeout, false)
    }
}

impl Scheme {
    /// The hook object for one entry, in the host's layout.
    fn hook(&self, entry: &HookEntry) -> Value {
        match self.layout {
            Layout::Grouped { timeout_key } => {
                let mut hook = json!({ "type": "command", "command": entry.command });
                if let Some(timeout) = entry.timeout {
                    hook[timeout_key] = json!(timeout);
                }
                json!({ "hooks": [hook] })
            }
            Layout::Flat {
                typed,
                command_key,
                timeout_key,
                ..
            } => {
                let mut hook = Map::new();
                if typed {
                    hook.insert("type".into(), json!("command"));
                }
                hook.insert(command_key.into(), json!(entry.command));
                if let (Some(key), Some(timeout)) = (timeout_key, entry.timeout) {
                    hook.insert(key.into(), json!(timeout));
                }
                Value::Object(hook)
            }
        }
    }

    /// Merge our hook entries into the configuration `existing` (None: no file yet). Every key
    /// and hook already there is kept, in its order; an entry whose command is already wired
    /// for an event is not added again, so wiring twice changes nothing.
    pub(crate) fn wire(&self, existing: Option<&str>) -> Result<Wired, Error> {
        let mut root = match existing {
            Some(text) if !text.trim().is_empty() => {
                serde_json::from_str::<Value>(text).map_err(Error::Json)?
            }
            _ => Value::Object(Map::new()),
        };
        let root_map = root
            .as_object_mut()
            .ok_or_else(|| shape("the file", "object"))?;
        if let Layout::Flat { version: true, .. } = self.layout {
            root_map.entry("version").or_insert(json!(1));
        }
        let fresh = existing.is_none_or(|text| text.trim().is_empty());
        let stamp = self
            .stamp
            .filter(|_| fresh)
            .map(|(key, value)| (key.to_string(), json!(value)));
        let hooks = root_map
            .entry("hooks")
            .or_insert_with(|| Value::Object(Map::new()))
            .as_object_mut()
            .ok_or_else(|| shape("\"hooks\"", "object"))?;
        let mut added = Vec::new();
        for entry in self.entries {
            let list = hooks
                .entry(entry.event)
                .or_insert_with(|| Value::Array(Vec::new()))
                .as_array_mut()
                .ok_or_else(|| shape(&format!("\"hooks\".\"{}\"", entry.event), "array"))?;
            if self.find(list, entry).is_some() {
                continue;
            }
            list.push(self.hook(entry));
            added.push(entry.event);
        }
        if let Some((key, value)) = stamp.filter(|_| !added.is_empty()) {
            root.as_object_mut()
                .expect("checked above")
                .entry(key)
                .or_insert(value);
        }
        let text = if added.is_empty() {
            existing.unwrap_or_default().to_string()
        } else {
            let mut text = serde_json::to_string_pretty(&root).expect("a Value always serialises");
            text.push('\n');
            text
        };
        Ok(Wired { text, added })
    }

    /// Per entry: whether our hook is wired in `config`, with its timeout in seconds.
    pub(crate) fn wired_timeouts(&self, config: &str) -> Result<Vec<(HookEntry, Wiring)>, Error> {
        let root: Value = serde_json::from_str(config).map_err(Error::Json)?;
        let hooks = root.get("hooks");
        Ok(self
            .entries
            .iter()
            .map(|entry| {
                let list = hooks
                    .and_then(|hooks| hooks.get(entry.event))
                    .and_then(Value::as_array)
                    .map(Vec::as_slice)
                    .unwrap_or_default();
                let wiring = match self.find(list, entry) {
                    None => Wiring::Missing,
                    Some(hook) => {
                        let key = match self.layout {
                            Layout::Grouped { timeout_key } => Some(timeout_key),
                            Layout::Flat { timeout_key, .. } => timeout_key,
                        };
                        let set = key
                            .and_then(|key| hook.get(key))
                            .and_then(Value::as_u64)
                            .map(|timeout| match self.ms_from {
                                Some(from) if timeout >= from => timeout / 1000,
                                _ => timeout * self.timeout_unit_ms / 1000,
                            });
                        Wiring::Wired(set.or(self.default_timeout))
                    }
                };
                (*entry, wiring)
            })
            .collect())
    }

    /// Our hook for `entry` in an event's list, if it is there.
    fn find<'a>(&self, list: &'a [Value], entry: &HookEntry) -> Option<&'a Value> {
        match self.layout {
            Layout::Grouped { .. } => list
                .iter()
                .filter_map(|group| group.get("hooks")?.as_array())
                .flatten()
                .find(|hook| is_ours(hook.get("command"), entry.command)),
            Layout::Flat { command_key, .. } => list
                .iter()
                .find(|hook| is_ours(hook.get(command_key), entry.command)),
        }
    }
}

/// A hook running our command, however it is spaced (or called as `git-prove-it`).
fn is_ours(command: Option<&Value>, ours: &str) -> bool {
    let Some(command) = command.and_then(Value::as_str) else {
        return false;
    };
    let words: Vec<&str> = command.split_whitespace().collect();
    let ours: Vec<&str> = ours.split_whitespace().collect();
    words == ours || (words.first() == Some(&"git-prove-it") && words[1..] == ours[2..])
}

fn shape(what: &str, expected: &'static str) -> Error {
    Error::Shape {
        what: what.to_string(),
        expected,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hosts::Host;

    const SNIPPET: &str = include_str!("../../hooks/claude-settings.json");

    #[test]
    fn wiring_nothing_gives_the_documented_snippet() {
        let wired = Host::Claude.wire(None).unwrap();
        assert_eq!(
            wired.added,
            [
                "SessionStart",
                "Stop",
                "SubagentStart",
                "SubagentStop",
                "TaskCompleted",
                "TeammateIdle",
                "PostToolUse"
            ]
        );
        let ours: Value = serde_json::from_str(&wired.text).unwrap();
        let snippet: Value = serde_json::from_str(SNIPPET).unwrap();
        assert_eq!(ours, snippet);
    }

    #[test]
    fn merging_keeps_every_key_and_hook_in_order_and_is_idempotent() {
        let existing = r#"{
  "permissions": {"allow": ["Bash(ls)"]},
  "hooks": {
    "Stop": [{"matcher": "", "hooks": [{"type": "command", "command": "./lint.sh"}]}],
    "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "guard"}]}]
  },
  "$schema": "https://json.schemastore.org/claude-code-settings.json"
}"#;
        let wired = Host::Claude.wire(Some(existing)).unwrap();
        assert_eq!(
            wired.added,
            [
                "SessionStart",
                "Stop",
                "SubagentStart",
                "SubagentStop",
                "TaskCompleted",
                "TeammateIdle",
                "PostToolUse"
            ]
        );
        let value: Value = serde_json::from_str(&wired.text).unwrap();
        let keys: Vec<&String> = value.as_object().unwrap().keys().collect();
        assert_eq!(keys, ["permissions", "hooks", "$schema"], "order kept");
        let stop = value["hooks"]["Stop"].as_array().unwrap();
        assert_eq!(stop.len(), 2);
        assert_eq!(stop[0]["hooks"][0]["command"], "./lint.sh");
        assert_eq!(stop[1]["hooks"][0]["command"], "git prove-it hook claude");
        assert_eq!(stop[1]["hooks"][0]["timeout"], 900);
        assert_eq!(
            value["hooks"]["PreToolUse"][0]["hooks"][0]["command"],
            "guard"
        );
        assert_eq!(value["hooks"]["SessionStart"][0]["hooks"][0]["timeout"], 60);

        let again = Host::Claude.wire(Some(&wired.text)).unwrap();
        assert!(again.added.is_empty());
        assert_eq!(again.text, wired.text);
    }

    #[test]
    fn a_hook_already_there_is_recognised_however_spelled() {
        let existing = r#"{"hooks": {"Stop": [{"hooks": [
            {"type": "command", "command": "git-prove-it  hook claude", "timeout": 1200}]}]}}"#;
        let wired = Host::Claude.wire(Some(existing)).unwrap();
        assert_eq!(
            wired.added,
            [
                "SessionStart",
                "SubagentStart",
                "SubagentStop",
                "TaskCompleted",
                "TeammateIdle",
                "PostToolUse"
            ]
        );
        let timeouts = Host::Claude.wired_timeouts(&wired.text).unwrap();
        assert_eq!(timeouts[0].1, Wiring::Wired(Some(60)));
        assert_eq!(timeouts[1].1, Wiring::Wired(Some(1200)));
        assert_eq!(
            Host::Claude.wired_timeouts("{}").unwrap()[1].1,
            Wiring::Missing
        );
    }

    #[test]
    fn malformed_settings_are_an_error() {
        assert!(matches!(
            Host::Claude.wire(Some("{\"hooks\": ")),
            Err(Error::Json(_))
        ));
        assert!(matches!(
            Host::Claude.wire(Some("[]")),
            Err(Error::Shape { .. })
        ));
        let err = Host::Claude
            .wire(Some(r#"{"hooks": {"Stop": {}}}"#))
            .unwrap_err();
        assert_eq!(err.to_string(), "\"hooks\".\"Stop\" is not a JSON array");
    }
}
