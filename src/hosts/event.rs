//! A hook event, the same for every host (`Event`), and why a hook's stdin could not be read as
//! one.

pub(crate) use crate::gate::{AfterTool, Prompt, Start, Stop, Subagent};

/// A hook event, normalised across hosts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Event {
    Start(Start),
    Stop(Stop),
    /// A person submitted a prompt, where the host says so.
    Prompt(Prompt),
    /// A tool call ended: wake the worktree's prover; answered with nothing the host shows.
    AfterTool(AfterTool),
    /// A subagent started: anchored as a session of its own where it works in a worktree of
    /// its own (Claude Code's `SubagentStart`). `start.session` is the subagent's session id.
    SubagentStart {
        start: Start,
        of: Subagent,
    },
    /// A subagent tries to end its work: gated as a stop where it was anchored (Claude Code's
    /// `SubagentStop`). `stop.session` is the subagent's session id.
    SubagentStop {
        stop: Stop,
        of: Subagent,
    },
    /// A task marked complete, or a teammate going idle (Claude Code's agent teams:
    /// `TaskCompleted`, `TeammateIdle`): gated as a stop of the session, and answered by the
    /// host's exit status rather than on stdout.
    TaskDone(Stop),
    /// An event the gate has nothing to do with (notifications, ...).
    Other {
        name: String,
    },
}

/// Why a hook's stdin could not be read as an event.
#[derive(Debug, thiserror::Error)]
pub(crate) enum InputError {
    #[error("could not read the hook input")]
    Read(#[source] std::io::Error),
    #[error("the hook input is not a JSON object")]
    NotJson(#[source] serde_json::Error),
    #[error("the hook input has no {field} (a {expected})")]
    Field {
        field: &'static str,
        expected: &'static str,
    },
}
