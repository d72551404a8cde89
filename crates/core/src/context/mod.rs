//! The one resolved context of a process: the repository, the policy in force (`policy`:
//! a flag, else the environment, else git config, else the default), whether proofs are
//! signed, and the clock. Resolved once at the edge (`cli/`, or the gate's pipeline for a
//! hook's event), then handed down; nothing below re-reads the environment or git config for
//! these mid-operation.

mod clock;
pub mod policy;
mod resolved;

pub use clock::Clock;
#[cfg(any(test, feature = "testing"))]
pub use resolved::Hermetic;
pub use resolved::{Context, Settings, env_var};
