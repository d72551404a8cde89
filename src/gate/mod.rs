//! The gate at an agent's stop, as one pipeline: `observe` gathers facts (armed, anchor, state
//! tree, proof, turn state), `decide` turns them into a verdict (pure; SPEC section 8, "The decision", is the
//! contract, every branch table-tested), `act` runs verify.sh when asked, records, counts and
//! writes the ledger, and `turn` is the state saved between stops, as data. `pipeline` runs
//! them in order for an agent host's hook; `report` words the reply and `hosts` deliver it.
//! `push` is the same pipeline at git's pre-push hook, over the pushed commits.
//!
//! The gate never prints, never parses a host's payload and never names a host: what it needs
//! of one is `HostRules`.

mod act;
mod ahead;
mod anchor;
mod decide;
mod diff;
mod error;
mod event;
mod host;
mod ledger;
mod message;
mod observe;
mod pipeline;
mod push;
mod scope;
mod session_index;
mod turn;

/// The hook's environment, as a session records it and its hook calls are compared with it.
pub(crate) use crate::verify::Environment;
pub(crate) use ahead::{View as AheadView, after_tool, prover, view as ahead_view};
pub(crate) use decide::{
    AnchorFacts, Decision, Ending, Failing, Observed, Quiet, RunFacts, State, Tampered, Untestable,
    Verdict, Weakened, WeakeningFound, Why, decide,
};
pub(crate) use error::error_chain;
pub(crate) use event::{AfterTool, Prompt, Start, Stop, Subagent};
pub(crate) use host::HostRules;
pub(crate) use ledger::{
    AnsweredAhead, LedgerActual, LedgerEntry, LedgerSummary, summarize as summarize_ledger,
};
pub(crate) use message::Message;
pub(crate) use pipeline::{
    Part, Reply, prompt, session_start, stop, subagent_start, subagent_stop,
};
pub(crate) use push::{Update, push, travelling};
pub(crate) use turn::{Answer, Facts};
