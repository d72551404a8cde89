//! Integration tests: one binary, real temporary repositories, real git.

mod check;
mod claim;
mod doctor;
mod gate;
mod harness;
mod init;
mod log;
mod manuals;
mod notes;
mod pre_push;
mod run;
mod run_rev;
mod state_tree;
mod status;
mod sync;
