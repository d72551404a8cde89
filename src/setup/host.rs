//! Wiring an agent host's hooks to the gate: where each host keeps its project configuration, and
//! how our hook entries are merged into it without dropping anything that is already there.
//!
//! Pure: text in, text out. `cli/init.rs` reads and writes the files. A new host (issue 7) adds
//! a variant, its configuration path and its hook entries.

use serde_json::{Map, Value, json};

/// An agent host `init --host` can wire.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum Host {
    /// Claude Code: SessionStart and Stop hooks in .claude/settings.json.
    Claude,
}

/// One hook entry the gate needs in a host's configuration.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct HookEntry {
    pub event: &'static str,
    /// In the host's unit (seconds for Claude Code).
    pub timeout: u64,
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

impl Host {
    /// The host's name for people.
    pub(crate) fn title(self) -> &'static str {
        match self {
            Host::Claude => "Claude Code",
        }
    }

    /// The project configuration file, relative to the worktree root.
    pub(crate) fn config_path(self) -> &'static str {
        match self {
            Host::Claude => ".claude/settings.json",
        }
    }

    /// The command line the host runs, as hooks/claude-settings.json has it.
    pub(crate) fn command(self) -> &'static str {
        match self {
            Host::Claude => "git prove-it hook claude",
        }
    }

    /// The entries the gate needs. The Stop hook's timeout must exceed verify.sh's (300 s by
    /// default): Claude Code ignores a hook that times out, which would end the turn unverified.
    pub(crate) fn entries(self) -> &'static [HookEntry] {
        match self {
            Host::Claude => &[
                HookEntry {
                    event: "SessionStart",
                    timeout: 60,
                },
                HookEntry {
                    event: "Stop",
                    timeout: 900,
                },
            ],
        }
    }

    /// Merge our hook entries into the configuration `existing` (None: no file yet). Every key
    /// and hook already there is kept, in its order; an entry whose command is already wired
    /// for an event is not added again, so wiring twice changes nothing.
    pub(crate) fn wire(self, existing: Option<&str>) -> Result<Wired, Error> {
        let mut root = match existing {
            Some(text) if !text.trim().is_empty() => {
                serde_json::from_str::<Value>(text).map_err(Error::Json)?
            }
            _ => Value::Object(Map::new()),
        };
        let root_map = root
            .as_object_mut()
            .ok_or_else(|| shape("the file", "object"))?;
        let hooks = root_map
            .entry("hooks")
            .or_insert_with(|| Value::Object(Map::new()))
            .as_object_mut()
            .ok_or_else(|| shape("\"hooks\"", "object"))?;
        let mut added = Vec::new();
        for entry in self.entries() {
            let list = hooks
                .entry(entry.event)
                .or_insert_with(|| Value::Array(Vec::new()))
                .as_array_mut()
                .ok_or_else(|| shape(&format!("\"hooks\".\"{}\"", entry.event), "array"))?;
            if list.iter().any(|group| self.group_has_ours(group)) {
                continue;
            }
            list.push(json!({
                "hooks": [{ "type": "command", "command": self.command(), "timeout": entry.timeout }]
            }));
            added.push(entry.event);
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

    /// Per event: the timeout of our hook in `config`, `None` when it is not wired there.
    pub(crate) fn wired_timeouts(
        self,
        config: &str,
    ) -> Result<Vec<(HookEntry, Option<u64>)>, Error> {
        let root: Value = serde_json::from_str(config).map_err(Error::Json)?;
        let hooks = root.get("hooks");
        Ok(self
            .entries()
            .iter()
            .map(|entry| {
                let ours = hooks
                    .and_then(|hooks| hooks.get(entry.event))
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                    .filter_map(|group| group.get("hooks")?.as_array())
                    .flatten()
                    .find(|hook| self.is_ours(hook));
                // Claude Code's default hook timeout is 600 s.
                let timeout =
                    ours.map(|hook| hook.get("timeout").and_then(Value::as_u64).unwrap_or(600));
                (*entry, timeout)
            })
            .collect())
    }

    fn group_has_ours(self, group: &Value) -> bool {
        group
            .get("hooks")
            .and_then(Value::as_array)
            .is_some_and(|hooks| hooks.iter().any(|hook| self.is_ours(hook)))
    }

    /// A hook running our command, however it is spaced (or called as `git-prove-it`).
    fn is_ours(self, hook: &Value) -> bool {
        let Some(command) = hook.get("command").and_then(Value::as_str) else {
            return false;
        };
        let words: Vec<&str> = command.split_whitespace().collect();
        let ours: Vec<&str> = self.command().split_whitespace().collect();
        words == ours || (words.first() == Some(&"git-prove-it") && words[1..] == ours[2..])
    }
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

    const SNIPPET: &str = include_str!("../../hooks/claude-settings.json");

    #[test]
    fn wiring_nothing_gives_the_documented_snippet() {
        let wired = Host::Claude.wire(None).unwrap();
        assert_eq!(wired.added, ["SessionStart", "Stop"]);
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
        assert_eq!(wired.added, ["SessionStart", "Stop"]);
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
        assert_eq!(wired.added, ["SessionStart"]);
        let timeouts = Host::Claude.wired_timeouts(&wired.text).unwrap();
        assert_eq!(timeouts[0].1, Some(60));
        assert_eq!(timeouts[1].1, Some(1200));
        assert_eq!(Host::Claude.wired_timeouts("{}").unwrap()[1].1, None);
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
