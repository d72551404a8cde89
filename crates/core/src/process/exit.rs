//! How a child ended, read from its wait status or from what the supervisor did to it: data
//! only (a failure record's `exit:` value says it in words, `proof::exit_value`).

use std::os::unix::process::ExitStatusExt;
use std::process::ExitStatus;

/// How a child ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum Exit {
    /// It exited with this code.
    Code(i32),
    /// It was killed by this signal.
    Signal(i32),
    /// It ran past the timeout and its process group was killed.
    TimedOut,
    /// We were interrupted (Ctrl-C, SIGTERM, SIGHUP) and killed its process group.
    Interrupted,
}

impl Exit {
    /// The code it exited with, when it exited rather than being killed.
    pub fn code(&self) -> Option<i32> {
        match *self {
            Exit::Code(code) => Some(code),
            _ => None,
        }
    }

    pub(super) fn from_status(status: ExitStatus) -> Exit {
        match (status.code(), status.signal()) {
            (Some(code), _) => Exit::Code(code),
            (None, Some(number)) => Exit::Signal(number),
            // `wait` only reports processes that ended, and an ended process
            // has either a code or a signal; this arm only satisfies the types.
            (None, None) => Exit::Code(-1),
        }
    }
}

/// How a run that did not pass ended, with the timeout it ran under (which names a time-out).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Ended {
    pub exit: Exit,
    pub timeout_ms: u64,
}

impl Ended {
    pub fn new(exit: Exit, timeout: std::time::Duration) -> Ended {
        Ended {
            exit,
            timeout_ms: u64::try_from(timeout.as_millis()).unwrap_or(u64::MAX),
        }
    }
}
