//! How a child ended, read from its wait status or from what the supervisor did to it.

use std::os::unix::process::ExitStatusExt;
use std::process::ExitStatus;
use std::time::Duration;

use rustix::process::Signal;

/// How a child ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
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

    /// A short lowercase phrase such as "exit code 3",
    /// "killed by signal 9 (SIGKILL)" or "timed out after 5 s".
    pub fn describe(&self, timeout: Duration) -> String {
        match *self {
            Exit::Code(code) => format!("exit code {code}"),
            Exit::Signal(number) => match signal_name(number) {
                Some(name) => format!("killed by signal {number} ({name})"),
                None => format!("killed by signal {number}"),
            },
            Exit::TimedOut => format!("timed out after {} s", seconds(timeout)),
            Exit::Interrupted => "interrupted".to_string(),
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

fn signal_name(number: i32) -> Option<&'static str> {
    const NAMES: [(Signal, &str); 9] = [
        (Signal::HUP, "SIGHUP"),
        (Signal::INT, "SIGINT"),
        (Signal::QUIT, "SIGQUIT"),
        (Signal::ABORT, "SIGABRT"),
        (Signal::KILL, "SIGKILL"),
        (Signal::SEGV, "SIGSEGV"),
        (Signal::PIPE, "SIGPIPE"),
        (Signal::ALARM, "SIGALRM"),
        (Signal::TERM, "SIGTERM"),
    ];
    NAMES
        .iter()
        .find(|(signal, _)| signal.as_raw() == number)
        .map(|&(_, name)| name)
}

/// Seconds as "5" or "1.5", without trailing zeros.
fn seconds(duration: Duration) -> String {
    let millis = duration.subsec_millis();
    if millis == 0 {
        duration.as_secs().to_string()
    } else {
        let text = format!("{}.{millis:03}", duration.as_secs());
        text.trim_end_matches('0').to_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn describe_names_common_signals_and_fractional_timeouts() {
        let timeout = Duration::from_millis(1500);
        assert_eq!(
            Exit::Signal(9).describe(timeout),
            "killed by signal 9 (SIGKILL)"
        );
        assert_eq!(Exit::Signal(64).describe(timeout), "killed by signal 64");
        assert_eq!(Exit::TimedOut.describe(timeout), "timed out after 1.5 s");
        assert_eq!(Exit::Code(0).describe(timeout), "exit code 0");
    }
}
