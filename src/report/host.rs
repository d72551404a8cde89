//! What is said of each host beside its findings: what its `hook` subcommand is for (`--help`),
//! what a person must do before it runs a repository's hooks (trust the folder, approve the
//! hooks), and how to turn its hooks back on; worded here from the host and the kind of setting
//! `hosts/` found.

use crate::hosts::{Host, Switch};

/// What `git prove-it hook <host> --help` says the command is for.
pub(crate) fn hook_help(host: Host) -> &'static str {
    match host {
        Host::Claude => {
            "Claude Code's hooks (SessionStart, Stop, SubagentStart, SubagentStop, TaskCompleted, TeammateIdle, PostToolUse). VS Code's payloads, sent here when VS Code reads .claude/settings.json, are answered in VS Code's protocol"
        }
        Host::Codex => "Codex CLI's hooks (SessionStart, Stop, PostToolUse)",
        Host::Gemini => "Gemini CLI's hooks (SessionStart, BeforeAgent, AfterAgent, AfterTool)",
        Host::Copilot => {
            "GitHub Copilot CLI's hooks (sessionStart, agentStop, postToolUse; or the snake_case SessionStart, Stop, PostToolUse)"
        }
        Host::Cursor => {
            "Cursor's hooks (sessionStart or beforeSubmitPrompt, stop, afterFileEdit, afterShellExecution). Cursor cannot block: a block is a follow-up message"
        }
        Host::Vscode => "VS Code's agent hooks (SessionStart, Stop, PostToolUse)",
        Host::Qwen => "Qwen Code's hooks (SessionStart, Stop, PostToolUse)",
    }
}

/// The host's own instruction for trusting a folder, for the hosts that ask before they run a
/// repository's hooks.
pub(super) fn step(host: Host) -> Option<&'static str> {
    Some(match host {
        Host::Claude => {
            "start claude in this folder once and accept the trust dialog (claude -p runs project \
             hooks anyway)"
        }
        // Codex 0.171.0 reads a repository's .codex/ (hooks.json included) only in a trusted
        // project, and runs the hooks in `codex exec` only with the hook-trust bypass: the
        // bypass alone runs nothing (tests/it/e2e/codex.rs runs the real binary).
        Host::Codex => {
            "Codex skips hooks it does not trust, silently, and reads .codex/ only in a trusted \
             project: trust this folder and approve its hooks in interactive codex (codex exec: \
             --trust, and --dangerously-bypass-hook-trust)"
        }
        Host::Gemini => {
            "Gemini CLI loads a repository's hooks only in a trusted folder: run /trust in gemini \
             here (headless: GEMINI_CLI_TRUST_WORKSPACE=true)"
        }
        Host::Copilot => {
            "Copilot CLI loads repository hooks only in a trusted folder: start copilot here and \
             trust the folder (headless: COPILOT_ALLOW_ALL=true)"
        }
        Host::Qwen => {
            "where Qwen Code's settings turn on security.folderTrust.enabled, it loads a \
             repository's hooks only in a trusted folder: start qwen here and trust the folder"
        }
        Host::Cursor | Host::Vscode => return None,
    })
}

/// How to undo a setting (`key`) that turns a host's hooks off.
pub(super) fn switch_back(switch: Switch, key: &str) -> String {
    match switch {
        Switch::EnabledFalse => "set it to true, or remove it".to_string(),
        Switch::DisabledTrue => format!("remove \"{key}\": true"),
        Switch::ListsOurs => "remove git prove-it's hooks from that list".to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codex_trust_step_names_both_trusts_codex_exec_needs() {
        let step = step(Host::Codex).unwrap();
        assert!(step.contains("--trust"), "{step}");
        assert!(step.contains("--dangerously-bypass-hook-trust"), "{step}");
        assert!(step.contains("trusted project"), "{step}");
    }
}
