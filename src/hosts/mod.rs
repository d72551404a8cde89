//! Host adapters: a host's stdin JSON becomes a normalised event, and the gate's message becomes
//! the host's stdout and exit code. Nothing here decides or touches the repository.
//!
//! ADAPTERS.md documents each host's protocol as this code implements it.

pub(crate) mod claude;
mod codex;
pub(crate) mod copilot;
mod cursor;
mod event;
mod fields;
mod gemini;
mod vscode;

pub(crate) use event::{Event, InputError, Start, Stop};

use crate::gate::Message;

/// An agent host, as its hook protocol (its dialect) identifies it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum Host {
    /// Claude Code: .claude/settings.json
    Claude,
    /// Codex CLI: .codex/hooks.json
    Codex,
    /// Gemini CLI: .gemini/settings.json
    Gemini,
    /// GitHub Copilot CLI: .github/hooks/prove-it-copilot.json
    Copilot,
    /// Cursor: .cursor/hooks.json (follow-up messages; Cursor cannot block)
    Cursor,
    /// VS Code agent hooks: .github/hooks/prove-it-vscode.json
    Vscode,
}

/// Claude Code's own cap on consecutive blocks may be set in its environment.
pub(crate) const CLAUDE_BLOCK_CAP_ENV: &str = "CLAUDE_CODE_STOP_HOOK_BLOCK_CAP";

impl Host {
    pub(crate) const ALL: [Host; 6] = [
        Host::Claude,
        Host::Codex,
        Host::Gemini,
        Host::Copilot,
        Host::Cursor,
        Host::Vscode,
    ];

    /// The name in `git prove-it hook <name>`, in proofs and in the ledger.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Host::Claude => "claude",
            Host::Codex => "codex",
            Host::Gemini => "gemini",
            Host::Copilot => "copilot",
            Host::Cursor => "cursor",
            Host::Vscode => "vscode",
        }
    }

    /// Consecutive blocks after which the host ends the turn by itself (or stops calling the
    /// hook), if it has such a cap. `claude_cap` is `CLAUDE_CODE_STOP_HOOK_BLOCK_CAP`'s value.
    fn cap(self, claude_cap: Option<&str>) -> Option<u32> {
        match self {
            Host::Claude => Some(
                claude_cap
                    .and_then(|cap| cap.trim().parse().ok())
                    .filter(|cap| *cap > 0)
                    .unwrap_or(8),
            ),
            Host::Copilot => Some(8),
            // Cursor's `loop_limit` for follow-up messages, by default.
            Host::Cursor => Some(5),
            Host::Codex | Host::Gemini | Host::Vscode => None,
        }
    }

    /// Whether the host shows a hook's notice (`systemMessage`) to the user. Where it does not,
    /// the turn's end unverified is told to the agent as one last block, to report it.
    pub(crate) fn shows_notices(self) -> bool {
        match self {
            Host::Claude | Host::Gemini | Host::Vscode => true,
            // `codex exec` does not print it; Copilot only logs it; Cursor has no such answer.
            Host::Codex | Host::Copilot | Host::Cursor => false,
        }
    }

    /// The blocks the gate may give in one turn: the policy's, kept below the host's cap so
    /// that the gate's own "ended unverified" (and, where notices are not shown, the last block
    /// that carries it) is what ends the turn, never the host giving up silently.
    pub(crate) fn block_budget(self, policy: u32, claude_cap: Option<&str>) -> u32 {
        let Some(cap) = self.cap(claude_cap) else {
            return policy;
        };
        let last_block = u32::from(!self.shows_notices());
        policy.min(cap.saturating_sub(1 + last_block))
    }

    /// Read one event from the hook's stdin. `arg` is the event name given on the command line
    /// (Copilot's camelCase payloads carry none). The host in the answer is the dialect the
    /// payload speaks: VS Code reads Claude Code's settings and sends its own payload.
    pub(crate) fn parse(self, input: &[u8], arg: Option<&str>) -> Result<Incoming, InputError> {
        let object = fields::object(input)?;
        match self {
            Host::Claude | Host::Vscode if vscode::speaks(&object) => Ok(Incoming {
                host: Host::Vscode,
                event: vscode::parse(&object)?,
            }),
            Host::Claude | Host::Vscode => Ok(Incoming {
                host: Host::Claude,
                event: claude::parse_object(&object)?,
            }),
            Host::Codex => Ok(Incoming {
                host: self,
                event: codex::parse(&object)?,
            }),
            Host::Gemini => Ok(Incoming {
                host: self,
                event: gemini::parse(&object)?,
            }),
            Host::Copilot => Ok(Incoming {
                host: self,
                event: copilot::parse(&object, arg)?,
            }),
            Host::Cursor => Ok(Incoming {
                host: self,
                event: cursor::parse(&object)?,
            }),
        }
    }

    /// The hook's stdout for a message in answer to `event` (None: the input could not be read);
    /// the exit code is always 0.
    pub(crate) fn render(self, event: Option<&Event>, message: &Message) -> String {
        let value = match self {
            Host::Claude | Host::Codex | Host::Gemini => claude::answer(message),
            Host::Copilot => copilot::answer(event, message),
            Host::Cursor => cursor::answer(event, message),
            Host::Vscode => vscode::answer(event, message),
        };
        value.map(|value| format!("{value}\n")).unwrap_or_default()
    }
}

/// Whether an answer is to a turn's first stop, or to input that could not be read. Hosts that
/// show no notices get those as blocks there, where the host's cap bounds any repetition.
fn first_stop_or_unread(event: Option<&Event>) -> bool {
    match event {
        None => true,
        Some(Event::Stop(stop)) => !stop.stop_hook_active,
        Some(_) => false,
    }
}

/// An event, and the host whose dialect it came in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Incoming {
    pub host: Host,
    pub event: Event,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_budget_stays_below_each_hosts_cap() {
        // Claude Code ends a turn after 8 blocks: at most 7, and its notice shows the yield.
        assert_eq!(Host::Claude.block_budget(3, None), 3);
        assert_eq!(Host::Claude.block_budget(7, None), 7);
        assert_eq!(Host::Claude.block_budget(7, Some("5")), 4);
        assert_eq!(Host::Claude.block_budget(7, Some("not a number")), 7);
        // Copilot shows no notice: the yield is one more block, and both stay below 8.
        assert_eq!(Host::Copilot.block_budget(7, None), 6);
        assert_eq!(Host::Cursor.block_budget(7, None), 3);
        // No cap of their own: the policy is the only loop guard.
        assert_eq!(Host::Codex.block_budget(7, None), 7);
        assert_eq!(Host::Gemini.block_budget(3, None), 3);
        assert_eq!(Host::Claude.block_budget(3, Some("1")), 0);
    }
}
