//! Codex CLI: hooks in `$CODEX_HOME/hooks.json` or `.codex/hooks.json`, in Claude Code's shape.
//! Its events are Claude Code's with `turn_id` for the turn (the same through a block loop), and
//! `last_assistant_message` and `transcript_path` may be null. It reads the same answer keys
//! (`claude::answer`) and rejects any others. It has no cap on consecutive blocks, and
//! `codex exec` prints no `systemMessage`.
//!
//! Codex needs two trusts: the project's (recorded in its `config.toml`) before it reads
//! `.codex/` at all, and the hooks' own approval, kept where nothing outside Codex can read it.

use std::path::Path;

use serde_json::Value;

use super::adapter::Adapter;
use super::fields::Object;
use super::trust::{HooksOff, Switch, Trust, dir_from, home, read_record};
use super::wiring::{
    AFTER_TOOL_TIMEOUT, Layout, START_TIMEOUT, STOP_TIMEOUT, Scheme, after_tool_entry, entry,
};
use super::{Event, InputError};
use crate::gate::Message;

const COMMAND: &str = "git prove-it hook codex";

const WIRING: Scheme = Scheme {
    path: ".codex/hooks.json",
    layout: Layout::Grouped {
        timeout_key: "timeout",
    },
    entries: &[
        entry("SessionStart", COMMAND, START_TIMEOUT, false),
        entry("Stop", COMMAND, STOP_TIMEOUT, true),
        after_tool_entry("PostToolUse", COMMAND, AFTER_TOOL_TIMEOUT),
    ],
    timeout_unit_ms: 1000,
    default_timeout: Some(600),
    stamp: None,
    ms_from: None,
};

pub(super) struct Codex;

impl Adapter for Codex {
    fn name(&self) -> &'static str {
        "codex"
    }

    fn title(&self) -> &'static str {
        "Codex CLI"
    }

    fn parse(&self, payload: &Object, _arg: Option<&str>) -> Result<Event, InputError> {
        super::claude::parse_shape(payload, "turn_id")
    }

    fn answer(&self, _event: Option<&Event>, message: &Message) -> Option<Value> {
        super::claude::answer(message)
    }

    fn shows_notices(&self) -> bool {
        false
    }

    /// Copilot's rule: `codex exec` prints no `systemMessage`, so a skip or the gate's own
    /// failure would leave no trace in its output.
    fn notices_as_blocks(&self, event: Option<&Event>) -> bool {
        super::copilot::notice_becomes_a_block(event)
    }

    fn wiring(&self) -> &'static Scheme {
        &WIRING
    }

    /// `[features] hooks = false` (or its older alias `codex_hooks`) in the user's
    /// `config.toml` or the project's `.codex/config.toml` turns Codex's hooks off
    /// (<https://developers.openai.com/codex/hooks>). An admin's `requirements.toml` can too,
    /// and is not read here.
    fn hooks_off(&self, workdir: &Path) -> Vec<HooksOff> {
        let user = dir_from("CODEX_HOME", || home().join(".codex")).join("config.toml");
        [user, workdir.join(".codex/config.toml")]
            .into_iter()
            .flat_map(|file| {
                let config = read_record(&file)
                    .and_then(|bytes| String::from_utf8(bytes).ok())
                    .unwrap_or_default();
                features_off(&config).into_iter().map(move |key| HooksOff {
                    file: file.clone(),
                    key,
                    switch: Switch::EnabledFalse,
                })
            })
            .collect()
    }

    /// The project's trust is readable; the hooks' approval is not, and unapproved hooks are
    /// skipped silently, so even a trusted project is only a warning.
    fn trust(&self, workdir: &Path) -> Option<Trust> {
        let file = dir_from("CODEX_HOME", || home().join(".codex")).join("config.toml");
        let config = read_record(&file)
            .and_then(|bytes| String::from_utf8(bytes).ok())
            .unwrap_or_default();
        Some(if trusts(&config, workdir) {
            Trust::ApprovalUnknown { agent: "Codex" }
        } else {
            Trust::ProjectNotTrusted {
                record: file,
                agent: "Codex",
                hooks_file: WIRING.path,
            }
        })
    }
}

/// The feature keys of a `config.toml` that turn hooks off: `hooks` or `codex_hooks` set to
/// false in its `[features]` table. A file that is not TOML turns nothing off.
fn features_off(config: &str) -> Vec<&'static str> {
    let Ok(document) = toml::de::DeTable::parse(config) else {
        return Vec::new();
    };
    let Some(features) = document
        .get_ref()
        .get("features")
        .and_then(|features| features.get_ref().as_table())
    else {
        return Vec::new();
    };
    [
        ("hooks", "[features] hooks"),
        ("codex_hooks", "[features] codex_hooks"),
    ]
    .into_iter()
    .filter(|(key, _)| {
        features
            .get(*key)
            .and_then(|value| value.get_ref().as_bool())
            == Some(false)
    })
    .map(|(_, named)| named)
    .collect()
}

/// Whether Codex's `config.toml` trusts `workdir`: a table `[projects."<path>"]` holding
/// `trust_level = "trusted"`, as its trust prompt and `codex exec --trust` write it, for the
/// folder or one above it. A file that is not TOML trusts nothing.
fn trusts(config: &str, workdir: &Path) -> bool {
    let Ok(document) = toml::de::DeTable::parse(config) else {
        return false;
    };
    let Some(projects) = document.get_ref().get("projects") else {
        return false;
    };
    let Some(projects) = projects.get_ref().as_table() else {
        return false;
    };
    projects.iter().any(|(path, project)| {
        workdir.starts_with(path.get_ref().as_ref())
            && project
                .get_ref()
                .as_table()
                .and_then(|project| project.get("trust_level"))
                .and_then(|level| level.get_ref().as_str())
                == Some("trusted")
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hosts::{Host, Stop};

    #[test]
    fn parses_codex_stop_with_its_turn_id_and_a_null_claim() {
        let input = br#"{"session_id":"01a2","turn_id":"01b3","transcript_path":null,"cwd":"/repo","hook_event_name":"Stop","model":"gpt-5.1-codex","permission_mode":"bypassPermissions","stop_hook_active":true,"last_assistant_message":null}"#;
        let incoming = Host::Codex.parse(input, None).unwrap();
        assert_eq!(incoming.host, Host::Codex);
        assert_eq!(
            incoming.event,
            Event::Stop(Stop {
                session: "01a2".into(),
                turn: Some("01b3".into()),
                cwd: "/repo".into(),
                stop_hook_active: true,
                claim: None,
                transcript: None,
                background: Vec::new(),
            })
        );
    }

    #[test]
    fn answers_with_codex_keys_only() {
        let block = Host::Codex.render(None, &Message::Block("fix it".into()));
        let value: serde_json::Value = serde_json::from_str(&block).unwrap();
        let keys: Vec<&String> = value.as_object().unwrap().keys().collect();
        assert_eq!(keys, ["decision", "reason"]);
        assert_eq!(Host::Codex.render(None, &Message::Silent), "");
    }

    #[test]
    fn a_project_is_trusted_by_its_own_table_or_one_above_it() {
        let config = r#"model = "gpt-5.1-codex"

[projects."/work/repo"]
trust_level = "trusted"

[projects.'/work/other']
trust_level = "untrusted"

[projects]
"/srv" = { trust_level = "trusted" }
"#;
        assert!(trusts(config, Path::new("/work/repo")));
        assert!(trusts(config, Path::new("/work/repo/sub")));
        assert!(!trusts(config, Path::new("/work/other")));
        assert!(!trusts(config, Path::new("/work/repository")));
        assert!(!trusts(config, Path::new("/work")));
        // Inline tables are TOML too, though Codex writes none.
        assert!(trusts(config, Path::new("/srv/x")));
        assert!(!trusts("[projects.\"/work/repo\"", Path::new("/work/repo")));
        assert!(!trusts("", Path::new("/work/repo")));
    }
}
