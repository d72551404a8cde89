//! Agent hosts: one module per host holds everything about it (parsing its payloads, answering
//! in its protocol, its block cap and whether it shows notices, how `init` wires it, how
//! `doctor` reads its trust), behind the `adapter::Adapter` trait; `host.rs` names the hosts and is
//! the registry. Shared machinery has its own files: `fields.rs` (a payload's JSON fields),
//! `wiring.rs` (merging a JSON hooks file), `trust.rs` (what doctor says of trust),
//! `payload_file.rs` (reading a file a payload names: never blocking, only a regular file,
//! bounded in size and time).
//!
//! Nothing here decides, touches the repository or prints: a host's stdin becomes a normalised
//! event, and the gate's message becomes the host's stdout. ADAPTERS.md documents each host's
//! protocol as this code implements it. To add a host, all in this folder: a module with a unit
//! struct implementing `adapter::Adapter`, its `mod` line, a variant of [`Host`], and its line
//! in `Host::adapter`; its `git prove-it hook <name>` command follows from the registry.

mod adapter;
mod claude;
mod codex;
mod copilot;
mod cursor;
mod event;
mod fields;
mod gemini;
mod host;
mod payload_file;
mod qwen;
mod transcript;
mod trust;
mod vscode;
mod wiring;

pub(crate) use event::{AfterTool, Event, InputError, Prompt, Start, Stop, Subagent};
pub(crate) use host::{Host, Incoming, Rules};
pub(crate) use trust::{HooksOff, Switch, Trust};
pub(crate) use wiring::{HookEntry, Wired, Wiring};
