//! Setting a repository up for the gate and checking the set-up: recognising its stack, the
//! verify.sh `init` writes, the packages of a repository that holds several and the
//! prove-it.toml of checks `init` offers for them, how `init --pre-push` wires the push gate beside a hook manager or
//! hook already there, `init`'s demonstration, and `doctor`'s checks. Wiring each agent
//! host is that host's module's (`crate::hosts`).
//!
//! It never prints and never writes the user's files itself: `cli/init.rs` acts on what it
//! returns, and `report` renders it.

pub(crate) mod demo;
pub(crate) mod doctor;
pub(crate) mod pre_push;
pub(crate) mod stack;
pub(crate) mod workspace;

pub(crate) use stack::Stack;
