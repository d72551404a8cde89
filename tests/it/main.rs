//! Integration tests: one binary, real temporary repositories, real git.

mod check;
mod harness;
mod log;
mod notes;
mod run;
mod state_tree;
mod status;
mod sync;
