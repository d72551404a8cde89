//! Integration tests: one binary, real temporary repositories, real git.

mod check;
mod claim;
mod claude_e2e;
mod codex_e2e;
mod copilot_e2e;
mod crash;
mod doctor;
mod e2e;
mod fake_model;
mod gate;
mod gemini_e2e;
mod harness;
mod hostile;
mod hosts;
mod init;
mod log;
mod manuals;
mod notes;
mod odd_states;
mod pre_push;
mod run;
mod run_rev;
mod signed;
mod state_tree;
mod status;
mod sync;
