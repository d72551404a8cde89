//! The elapsed time of a run on a terminal, one line rewritten in place; silent where stderr is
//! not a terminal.

use std::io::{IsTerminal, Write};
use std::time::Duration;

/// A one-line elapsed-time display on a terminal's stderr while verify.sh runs; silent elsewhere.
pub(crate) struct Progress {
    enabled: bool,
    shown: bool,
    /// What runs, as the line says it: `verify.sh`, `3 checks`.
    running: String,
}

/// A run longer than this earns the hint that slower checks belong in CI.
const SLOW: Duration = Duration::from_secs(60);

impl Progress {
    /// Show progress only when stderr is a terminal and output is not being streamed to it.
    pub(crate) fn new(streaming: bool) -> Self {
        Progress {
            enabled: !streaming && std::io::stderr().is_terminal(),
            shown: false,
            running: "verify.sh".to_string(),
        }
    }

    /// The same, for `checks` checks of a checks file running at once.
    pub(crate) fn for_checks(streaming: bool, checks: usize) -> Self {
        Progress {
            running: if checks == 1 {
                "1 check".to_string()
            } else {
                format!("{checks} checks")
            },
            ..Progress::new(streaming)
        }
    }

    /// The line, from now on, of a range proving `commits` commits of which `done` are done.
    pub(crate) fn commits(&mut self, commits: usize, done: usize) {
        self.running = format!("{commits} commits, {done} done,");
    }

    /// Clear the line, for a line of output to take its place; the next tick draws it again.
    pub(crate) fn clear(&mut self) {
        if self.shown {
            let mut err = std::io::stderr().lock();
            let _ = write!(err, "\r\x1b[2K");
            let _ = err.flush();
            self.shown = false;
        }
    }

    pub(crate) fn tick(&mut self, elapsed: Duration) {
        if self.enabled {
            let mut err = std::io::stderr().lock();
            let _ = write!(
                err,
                "\r\x1b[2Kprove-it: running {} ... {}s",
                self.running,
                elapsed.as_secs()
            );
            let _ = err.flush();
            self.shown = true;
        }
    }

    /// A check of several started or ended: its own line, above the running count.
    pub(crate) fn check(&mut self, check: &str, ended: Option<(bool, Duration)>) {
        if self.enabled {
            let mut err = std::io::stderr().lock();
            let _ = match ended {
                None => writeln!(err, "\r\x1b[2Kprove-it: {check} started"),
                Some((passed, took)) => writeln!(
                    err,
                    "\r\x1b[2Kprove-it: {check} {} in {}s",
                    if passed { "passed" } else { "failed" },
                    took.as_secs()
                ),
            };
            let _ = err.flush();
        }
    }

    /// Clear the line, and say so when the run was slow enough to belong in CI.
    pub(crate) fn finish(&mut self, elapsed: Duration, err: &mut dyn Write) {
        if self.shown {
            let _ = write!(err, "\r\x1b[2K");
        }
        if elapsed > SLOW {
            let _ = writeln!(
                err,
                "hint: verify.sh took {}s; keep it under a minute, slower checks belong in CI",
                elapsed.as_secs()
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_run_over_a_minute_earns_the_ci_hint_and_a_short_one_does_not() {
        let mut progress = Progress {
            enabled: false,
            shown: false,
            running: "verify.sh".into(),
        };
        let mut err = Vec::new();
        progress.finish(Duration::from_secs(59), &mut err);
        assert!(err.is_empty());
        progress.finish(Duration::from_secs(61), &mut err);
        assert_eq!(
            String::from_utf8(err).unwrap(),
            "hint: verify.sh took 61s; keep it under a minute, slower checks belong in CI\n"
        );
    }

    #[test]
    fn a_shown_progress_line_is_cleared() {
        let mut progress = Progress {
            enabled: true,
            shown: true,
            running: "verify.sh".into(),
        };
        let mut err = Vec::new();
        progress.finish(Duration::from_secs(1), &mut err);
        assert_eq!(err, b"\r\x1b[2K");
    }
}
