pub(crate) use crate::gate::{AfterTool, Prompt, Start, Stop};

/// A hook event, normalised across hosts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Event {
    Start(Start),
    Stop(Stop),
    /// A person submitted a prompt, where the host says so.
    Prompt(Prompt),
    /// A tool call ended: wake the worktree's prover; answered with nothing the host shows.
    AfterTool(AfterTool),
    /// An event the gate has nothing to do with (SubagentStop, notifications, ...).
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
