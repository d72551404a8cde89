//! Which agent command runs the rounds, and for how long each may run: a flag, else the
//! environment, else git config, else a default (there is no default agent).

use std::time::Duration;

use crate::context::policy::Sources;

pub const AGENT_ENV: &str = "PROVE_IT_AGENT";
pub const AGENT_CONFIG: &str = "prove-it.agent";
pub const TIMEOUT_ENV: &str = "PROVE_IT_CLAIM_TIMEOUT";
pub const TIMEOUT_CONFIG: &str = "prove-it.claimTimeout";
/// How long one round may run: an agent reading a repository to answer takes minutes.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(600);

/// The presets: host name, then the shell command it expands to. Each is the host's
/// non-interactive mode reading the prompt (the assignment) from stdin, with the host's hooks
/// off where the host has a switch for it, so that a round is never gated by this very tool.
const PRESETS: [(&str, &str); 3] = [
    (
        "claude",
        "claude -p --settings '{\"disableAllHooks\": true}' --output-format text \
         --append-system-prompt \"This run is $PROVE_IT_ROUND_NAME of a git prove-it claim \
         gauntlet. Answer with exactly one packet.\"",
    ),
    ("codex", "codex exec --skip-git-repo-check -"),
    (
        "gemini",
        "gemini -p \"This run is $PROVE_IT_ROUND_NAME of a git prove-it claim gauntlet: answer \
         the assignment above with exactly one packet.\"",
    ),
];

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Error {
    #[error("{source_name} must be a whole number of seconds above 0, not {value:?}")]
    BadTimeout { source_name: String, value: String },
}

/// The agent command, and where it came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Agent {
    /// The shell command run once per round.
    pub command: String,
    /// `--agent`, `PROVE_IT_AGENT` or `prove-it.agent`.
    pub source: &'static str,
    /// The preset it expanded from, if any.
    pub preset: Option<&'static str>,
}

/// The shell command a preset name expands to.
#[cfg(test)]
fn preset(name: &str) -> Option<&'static str> {
    find_preset(name).map(|(_, command)| command)
}

fn find_preset(name: &str) -> Option<(&'static str, &'static str)> {
    PRESETS
        .iter()
        .find(|(preset, _)| *preset == name.trim())
        .copied()
}

/// The agent command from `--agent`, else `PROVE_IT_AGENT`, else `prove-it.agent`; a blank value
/// counts as none. `None` means no agent: the gauntlet cannot run.
pub fn resolve_agent(flag: Option<&str>, sources: &dyn Sources) -> Option<Agent> {
    let (value, source) = [
        (flag.map(String::from), "--agent"),
        (sources.env(AGENT_ENV), AGENT_ENV),
        (sources.config(AGENT_CONFIG), AGENT_CONFIG),
    ]
    .into_iter()
    .find_map(|(value, source)| value.filter(|v| !v.trim().is_empty()).map(|v| (v, source)))?;
    let (command, preset) = match find_preset(&value) {
        Some((name, command)) => (command.to_string(), Some(name)),
        None => (value, None),
    };
    Some(Agent {
        command,
        source,
        preset,
    })
}

/// The per-round timeout from `--timeout`, else `PROVE_IT_CLAIM_TIMEOUT`, else
/// `prove-it.claimTimeout`, else 600 s.
pub fn resolve_timeout(flag: Option<u64>, sources: &dyn Sources) -> Result<Duration, Error> {
    let (value, source_name) = match (
        flag,
        sources.env(TIMEOUT_ENV),
        sources.config(TIMEOUT_CONFIG),
    ) {
        (Some(secs), _, _) => (secs.to_string(), "--timeout"),
        (None, Some(value), _) => (value, TIMEOUT_ENV),
        (None, None, Some(value)) => (value, TIMEOUT_CONFIG),
        (None, None, None) => return Ok(DEFAULT_TIMEOUT),
    };
    match value.trim().parse::<u64>() {
        Ok(secs) if secs > 0 => Ok(Duration::from_secs(secs)),
        _ => Err(Error::BadTimeout {
            source_name: source_name.to_string(),
            value,
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Default)]
    struct Fake {
        env: Vec<(&'static str, &'static str)>,
        config: Vec<(&'static str, &'static str)>,
    }

    impl Sources for Fake {
        fn env(&self, name: &str) -> Option<String> {
            self.env
                .iter()
                .find(|(k, _)| *k == name)
                .map(|(_, v)| v.to_string())
        }
        fn config(&self, key: &str) -> Option<String> {
            self.config
                .iter()
                .find(|(k, _)| *k == key)
                .map(|(_, v)| v.to_string())
        }
    }

    #[test]
    fn presets_expand_to_each_hosts_non_interactive_mode() {
        let claude = preset("claude").unwrap();
        assert!(claude.starts_with("claude -p --settings '{\"disableAllHooks\": true}'"));
        assert!(claude.contains("--output-format text"));
        assert!(claude.contains("$PROVE_IT_ROUND_NAME"));
        assert_eq!(preset("codex"), Some("codex exec --skip-git-repo-check -"));
        let gemini = preset("gemini").unwrap();
        assert!(gemini.starts_with("gemini -p \"This run is $PROVE_IT_ROUND_NAME "));
        assert_eq!(preset("claude-code"), None);
    }

    #[test]
    fn the_flag_beats_the_environment_beats_config_and_presets_apply_to_each() {
        let all = Fake {
            env: vec![(AGENT_ENV, "codex")],
            config: vec![(AGENT_CONFIG, "./my-agent --fast")],
        };
        let agent = resolve_agent(Some("claude"), &all).unwrap();
        assert_eq!(agent.source, "--agent");
        assert_eq!(agent.preset, Some("claude"));
        assert_eq!(agent.command, preset("claude").unwrap());

        let agent = resolve_agent(None, &all).unwrap();
        assert_eq!((agent.source, agent.preset), (AGENT_ENV, Some("codex")));
        assert_eq!(agent.command, "codex exec --skip-git-repo-check -");

        let config_only = Fake {
            env: vec![(AGENT_ENV, "  ")],
            config: vec![(AGENT_CONFIG, "./my-agent --fast")],
        };
        let agent = resolve_agent(None, &config_only).unwrap();
        assert_eq!(
            agent,
            Agent {
                command: "./my-agent --fast".into(),
                source: AGENT_CONFIG,
                preset: None
            }
        );
    }

    #[test]
    fn no_agent_anywhere_is_none() {
        assert_eq!(resolve_agent(None, &Fake::default()), None);
        assert_eq!(resolve_agent(Some(""), &Fake::default()), None);
    }

    #[test]
    fn the_timeout_comes_from_the_flag_the_environment_config_or_the_default() {
        let all = Fake {
            env: vec![(TIMEOUT_ENV, "7")],
            config: vec![(TIMEOUT_CONFIG, "9")],
        };
        assert_eq!(resolve_timeout(Some(5), &all).unwrap().as_secs(), 5);
        assert_eq!(resolve_timeout(None, &all).unwrap().as_secs(), 7);
        let config = Fake {
            env: vec![],
            config: vec![(TIMEOUT_CONFIG, "9")],
        };
        assert_eq!(resolve_timeout(None, &config).unwrap().as_secs(), 9);
        assert_eq!(
            resolve_timeout(None, &Fake::default()).unwrap(),
            DEFAULT_TIMEOUT
        );
        for bad in ["0", "ten", "-1", ""] {
            let fake = Fake {
                env: vec![(TIMEOUT_ENV, bad)],
                config: vec![],
            };
            let err = resolve_timeout(None, &fake).unwrap_err();
            assert!(
                err.to_string()
                    .starts_with("PROVE_IT_CLAIM_TIMEOUT must be a whole number"),
                "{err}"
            );
        }
        assert!(resolve_timeout(Some(0), &Fake::default()).is_err());
    }
}
