//! Integration tests: one binary, real temporary repositories, real git.

mod claim;
mod gate;
mod harness;
mod notes;
mod run;
mod state_tree;
mod status;
