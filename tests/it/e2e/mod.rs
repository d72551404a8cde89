//! End to end with the real agent hosts, each against a fake model server on 127.0.0.1: one
//! table of scenarios (`scenarios.rs`) run for every host, and the machinery that drives a
//! host (`harness.rs`). Each host's own module (`tests/it/<host>_e2e.rs`) says only how that
//! host is launched and wired, and how to read its wire format; it instantiates the table with
//! `scenarios_for!`, so each (host, scenario) is its own test, e.g.
//! `codex_e2e::failing_change_is_blocked`.
//!
//! Every such test is `#[ignore]`d: a plain `cargo test` lists them as ignored. Run them with
//! `cargo test _e2e -- --ignored` (`.ci/run` runs those of the hosts it installed); then a
//! missing host binary fails the test, saying which and how to install it.

pub mod harness;
pub mod headless;
pub mod scenarios;

pub use harness::{Agent, Feedback, HostInfo, describe, json_lines, last_answers, run_bounded};
pub(crate) use scenarios::scenarios_for;
