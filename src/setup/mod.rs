//! Setting a repository up for the gate: recognising its stack, the verify.sh `init` writes,
//! wiring agent hosts, and `init`'s demonstration.
//!
//! It never prints and never writes the user's files itself: `cli/init.rs` acts on what it
//! returns, and `report` renders it.

pub(crate) mod demo;
pub(crate) mod host;
pub(crate) mod stack;

pub(crate) use host::Host;
pub(crate) use stack::Stack;
