//! The command line: one file per subcommand, each with its `Args` (whose doc comments are the
//! `--help` text) and a `run` function that resolves, acts, and hands values to `report`.
//!
//! Only this module uses `anyhow`; it never prints except through `report`.

mod accept;
mod app;
mod bisect;
mod check;
mod claim;
mod commits;
mod completions;
mod doctor;
mod failure;
mod hook;
mod init;
mod install;
mod install_man;
mod ledger;
mod log;
mod prove_ahead;
mod range;
mod revoke;
pub(crate) mod run;
mod signers;
mod status;
mod sync;
mod watch;

pub use app::{Cli, execute};
pub use failure::Failure;
