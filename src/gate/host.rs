//! What the gate needs to know of the host whose turn it gates. `hosts` implements it; the gate
//! never names a host.

use std::path::PathBuf;

use super::event::Stop;

/// A host's rules, as far as the gate goes.
pub(crate) trait HostRules {
    /// The name in `git prove-it hook <name>`, in proofs (`host:`) and in the ledger.
    fn name(&self) -> &'static str;
    /// The blocks the gate may give in one turn under a policy of `policy` blocks, kept below
    /// the host's own cap.
    fn block_budget(&self, policy: u32) -> u32;
    /// Whether the host shows a hook's notice to the user; where it does not, the gate tells it
    /// to the agent as one last block.
    fn shows_notices(&self) -> bool;
    /// The agent's last message, for the ledger; `previous_answer_ns` is when the gate last
    /// answered this session, so that an older message is not taken as this turn's claim.
    fn claim(&self, stop: &Stop, previous_answer_ns: Option<u64>) -> Option<String>;
    /// The directory the host says the session's project is in, whatever the agent's shell did
    /// to the stop's `cwd` (Claude Code's `CLAUDE_PROJECT_DIR`); `None` where the host says none.
    fn project_dir(&self) -> Option<PathBuf> {
        None
    }
    /// The hook's environment, to compare with the one its session was anchored with; `None`
    /// where it is not known, and nothing is compared.
    fn environment(&self) -> Option<&crate::verify::Environment> {
        None
    }
}
