//! The claim gauntlet (SPEC.md, "claim"): nine lens runs at once, then one oracle run, each
//! through the configured agent command, with every packet parsed and validated here.
//!
//! This module owns the protocol, in the published Prove It skill's shapes: the lenses and their
//! assignments, packet parsing and validation (of its own runs' packets, and of a packet set
//! produced elsewhere for `--validate`), the oracle's assignment and the checks on its verdict,
//! reading back recorded verdicts, and the spawning of the agent command. It never prints and
//! never decides a verdict of its own: the oracle alone does.

// The core's layers this one names, as the modules they are in the binary's crate.
use git_prove_it_core::{context, outcome, process};

mod agent;
mod gauntlet;
mod lens;
mod oracle;
mod packet;
mod record;
mod rounds;
mod validate;

pub use agent::{resolve_agent, resolve_timeout};
pub use gauntlet::{Claim, Completeness, RoundEntry, Status, judge_lens};
pub use lens::{LENSES, ORACLE_ID, ORACLE_NAME, ORACLE_ROUND, run_name};
pub use oracle::{OracleVerdict, Outcome, Rejected, judge_oracle, oracle_assignment};
pub use record::{StoredVerdict, read_note};
pub use rounds::{Job, ROUND_ENV, Request, Run, run as run_round, run_all};
pub use validate::validate;
