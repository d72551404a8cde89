//! The gate's decision at an agent's stop: observed facts and policy in, a verdict out.
//!
//! Pure: nothing here touches git, files, processes or stdio (DESIGN section 4 is the contract,
//! and every branch is table-tested below `decide`). The hook commands observe, call `decide`,
//! act on `Decision::Run`, call it again with the run's result, and render the verdict.

mod decide;
mod diff;
mod message;

pub(crate) use decide::{
    AnchorFacts, Decision, Observed, Quiet, RunFacts, State, Verdict, Weakened, Why, decide,
};
pub(crate) use diff::verify_diff;
pub(crate) use message::Message;
