//! The events the gate acts on, host-neutral: every host adapter parses its payloads into these.

use std::path::PathBuf;

/// An agent session started, resumed, was compacted or cleared.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Start {
    pub session: String,
    pub cwd: PathBuf,
    /// startup, resume, clear, compact, fork, as the host says.
    pub source: Option<String>,
}

/// A person submitted a prompt: a new turn begins (Claude Code's `UserPromptSubmit`, Gemini
/// CLI's `BeforeAgent`, ...). The agent can send one too, by running the hook from its shell,
/// so it only ever starts a new count for a turn whose last answer let it end
/// (`TurnState::prompt`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Prompt {
    pub session: String,
    pub cwd: PathBuf,
}

/// A tool call of the agent ended (Claude Code's `PostToolUse`, Gemini CLI's `AfterTool`, ...):
/// the working state may have changed, so the worktree's prover is woken to prove it ahead.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct AfterTool {
    pub session: String,
    pub cwd: PathBuf,
}

/// The agent tries to end its turn.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Stop {
    pub session: String,
    /// The host's id for the turn, when it sends one; the same through a block loop.
    pub turn: Option<String>,
    pub cwd: PathBuf,
    /// Set by hosts on every stop that follows a block. Not "let it through": see DESIGN 4.9.
    pub stop_hook_active: bool,
    /// The agent's last message.
    pub claim: Option<String>,
    /// Where the claim can be read when the event does not carry it (Copilot's transcript).
    pub transcript: Option<PathBuf>,
    /// The background tasks still alive as the agent stops, each as the host describes it
    /// (Claude Code's `background_tasks`): what is proven is the state as of this stop.
    pub background: Vec<String>,
}

/// A subagent of a session (Claude Code's `SubagentStart` and `SubagentStop`): the session it
/// works for, and its own id there. Its turn is gated as a session of its own, keyed by
/// [`Subagent::session`], in a worktree of its own only.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Subagent {
    /// The session that started it.
    pub parent: String,
    /// The host's id for the subagent, unique in its session.
    pub agent: String,
}

impl Subagent {
    /// The id the gate keeps the subagent's anchor, turn and budget under: apart from its
    /// session's, so that neither spends the other's blocks.
    pub(crate) fn session(&self) -> String {
        format!("{}/subagent/{}", self.parent, self.agent)
    }
}
