//! Host adapters: a host's stdin JSON becomes a normalised event, and the gate's message becomes
//! the host's stdout and exit code. Nothing here decides or touches the repository.
//!
//! ADAPTERS.md documents each host's protocol as this code implements it.

pub(crate) mod claude;
mod event;

pub(crate) use event::{Event, InputError, Start, Stop};
