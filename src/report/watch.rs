//! What `git prove-it watch` says as it goes. On a terminal, each check of a run in flight has
//! a line updated in place (its state and seconds); elsewhere every event is one plain line, so
//! that whatever reads the output (a test, a log) reads it as it comes.

use std::io::{self, Write};
use std::time::{Duration, Instant};

use super::{FailureReport, RunReport, RunResult, short};

/// The live output of `watch` on `out`.
pub(crate) struct WatchOutput<'w> {
    out: &'w mut dyn Write,
    terminal: bool,
    /// The checks of the run in flight, oldest first.
    live: Vec<Live>,
    /// How many of `live`'s lines are on the terminal, to be drawn over.
    drawn: usize,
}

struct Live {
    name: String,
    started: Instant,
    /// Passed or not, after this long.
    ended: Option<(bool, Duration)>,
    /// Made for a run's first tick before any check said it started: verify.sh alone.
    placeholder: bool,
    /// Interrupted by a change before it ended.
    cancelled: bool,
}

impl<'w> WatchOutput<'w> {
    pub(crate) fn new(out: &'w mut dyn Write, terminal: bool) -> WatchOutput<'w> {
        WatchOutput {
            out,
            terminal,
            live: Vec::new(),
            drawn: 0,
        }
    }

    fn line(&mut self, line: &str) -> io::Result<()> {
        writeln!(self.out, "watch: {line}")?;
        self.out.flush()
    }

    /// The first line: what is watched, and how it ends.
    pub(crate) fn watching(
        &mut self,
        worktree: &str,
        range: Option<&str>,
        settle: Duration,
    ) -> io::Result<()> {
        let what = match range {
            None => format!(
                "the working state of {worktree}, proven once it has been quiet for {} ms",
                settle.as_millis()
            ),
            Some(range) => {
                format!("the commits of {range} in {worktree}, proven as the branch moves")
            }
        };
        self.line(&format!("watching {what}; Ctrl-C ends it"))
    }

    /// The state tree `tree` has a proof: nothing runs.
    pub(crate) fn state_proven(&mut self, tree: &str) -> io::Result<()> {
        self.line(&format!(
            "state {}: proven (recorded; nothing ran)",
            short(tree)
        ))
    }

    /// The state tree `tree` is new: it is looked up, and run unless proven.
    pub(crate) fn state_running(&mut self, tree: &str) -> io::Result<()> {
        self.line(&format!("state {}: proving", short(tree)))
    }

    /// A run of `commit` begins.
    pub(crate) fn commit_running(&mut self, commit: &str, subject: &str) -> io::Result<()> {
        self.line(&format!("commit {} {subject}: running", short(commit)))
    }

    /// What the records say of `commit`, when they spare its run.
    pub(crate) fn commit_known(
        &mut self,
        commit: &str,
        subject: &str,
        known: Known,
    ) -> io::Result<()> {
        let said = match known {
            Known::Proven => "proven (recorded; nothing ran)".to_string(),
            Known::NotArmed => "not armed: no verify.sh nor checks file to prove it".to_string(),
            Known::FailedBefore(exit) => format!(
                "failed before ({exit}, recorded); not run again, 'git prove-it run --retry-failed' runs it"
            ),
        };
        self.line(&format!("commit {} {subject}: {said}", short(commit)))
    }

    /// The run in flight has been going on for `elapsed`.
    pub(crate) fn tick(&mut self, elapsed: Duration) -> io::Result<()> {
        if self.live.is_empty() {
            self.live.push(Live {
                name: "verify.sh".to_string(),
                started: Instant::now()
                    .checked_sub(elapsed)
                    .unwrap_or_else(Instant::now),
                ended: None,
                placeholder: true,
                cancelled: false,
            });
            if !self.terminal {
                self.line("check verify.sh: running")?;
            }
        }
        self.draw()
    }

    /// A check of the run in flight started.
    pub(crate) fn check_started(&mut self, name: &str) -> io::Result<()> {
        self.live.retain(|live| !live.placeholder);
        self.live.push(Live {
            name: name.to_string(),
            started: Instant::now(),
            ended: None,
            placeholder: false,
            cancelled: false,
        });
        if !self.terminal {
            self.line(&format!("check {name}: running"))?;
        }
        self.draw()
    }

    /// A check of the run in flight ended.
    pub(crate) fn check_ended(
        &mut self,
        name: &str,
        passed: bool,
        took: Duration,
    ) -> io::Result<()> {
        if let Some(live) = self.live.iter_mut().find(|live| live.name == name) {
            live.ended = Some((passed, took));
        }
        if !self.terminal {
            self.line(&format!(
                "check {name}: {} in {}",
                if passed { "passed" } else { "failed" },
                super::seconds(u64::try_from(took.as_millis()).unwrap_or(u64::MAX))
            ))?;
        }
        self.draw()
    }

    /// Draw the live lines over the ones drawn before (a terminal only).
    fn draw(&mut self) -> io::Result<()> {
        if !self.terminal {
            return Ok(());
        }
        if self.drawn > 0 {
            write!(self.out, "\x1b[{}A", self.drawn)?;
        }
        for live in &self.live {
            let (state, secs) = match live.ended {
                None if live.cancelled => ("cancelled", live.started.elapsed().as_secs()),
                None => ("running", live.started.elapsed().as_secs()),
                Some((true, took)) => ("passed", took.as_secs()),
                Some((false, took)) => ("failed", took.as_secs()),
            };
            writeln!(self.out, "\r\x1b[2K  {:<16} {state} {secs}s", live.name)?;
        }
        self.drawn = self.live.len();
        self.out.flush()
    }

    /// The run ended: its live lines stay as they were last drawn, and the next run draws its
    /// own below them.
    fn end_run(&mut self) {
        self.live.clear();
        self.drawn = 0;
    }

    /// The run ended with this report, as `git prove-it run` words it.
    pub(crate) fn report(&mut self, report: &RunReport) -> io::Result<()> {
        // verify.sh alone says nothing of its end but the report: its line says it too.
        let passed = matches!(report.result, RunResult::Proven { .. });
        let mut drawn_over = false;
        for live in self.live.iter_mut().filter(|live| live.ended.is_none()) {
            live.ended = Some((passed, live.started.elapsed()));
            drawn_over = true;
        }
        if drawn_over {
            self.draw()?;
        }
        self.end_run();
        if let (RunResult::AlreadyProven { .. }, Some(tree)) = (&report.result, &report.tree) {
            return self.state_proven(tree);
        }
        report.human(self.out)?;
        self.out.flush()
    }

    /// The run was interrupted because what it proves is no longer what is watched.
    pub(crate) fn cancelled(&mut self, why: Cancelled) -> io::Result<()> {
        let mut drawn_over = false;
        for live in self.live.iter_mut().filter(|live| live.ended.is_none()) {
            live.cancelled = true;
            drawn_over = true;
        }
        if drawn_over {
            self.draw()?;
        }
        self.end_run();
        self.line(match why {
            Cancelled::StateChanged => {
                "cancelled: the working state changed while it ran; nothing was recorded for the state it ran, the new one is proven once quiet"
            }
            Cancelled::LeftRange => {
                "cancelled: the commit left the range while it ran; nothing was recorded for it"
            }
        })
    }

    /// The run could not be made: the error, its causes and hints; watching goes on.
    pub(crate) fn could_not_prove(&mut self, failure: &FailureReport) -> io::Result<()> {
        self.end_run();
        failure.human(self.out)?;
        self.line("still watching: the next change is proven again")
    }

    /// A commit's setup failed, so its checks never ran.
    pub(crate) fn setup_failed(&mut self, exit: &str) -> io::Result<()> {
        self.end_run();
        self.line(&format!(
            "cannot test: the checks file's setup failed ({exit}); its checks did not run"
        ))
    }

    /// The range could not be read (a ref deleted, a bad name): watched again at the next move.
    pub(crate) fn range_unreadable(&mut self, failure: &FailureReport) -> io::Result<()> {
        failure.human(self.out)?;
        self.line("still watching: the range is read again as the refs move")
    }

    /// The last line, once a signal ended it.
    pub(crate) fn ended(&mut self) -> io::Result<()> {
        self.end_run();
        self.line("ended: nothing runs any more, and nothing half-run was recorded")
    }
}

/// What the records say of a commit when they spare its run.
pub(crate) enum Known {
    Proven,
    NotArmed,
    /// Its checks failed on this very tree before, through the same scripts: how.
    FailedBefore(String),
}

/// Why a run in flight was interrupted.
pub(crate) enum Cancelled {
    StateChanged,
    LeftRange,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Off a terminal every event is one plain line, so that a reader can follow it as it comes.
    #[test]
    fn off_a_terminal_each_event_is_one_plain_line() {
        let mut bytes = Vec::new();
        let mut output = WatchOutput::new(&mut bytes, false);
        output.state_running("0123456789abcdef").unwrap();
        output.check_started("api").unwrap();
        output.tick(Duration::from_secs(1)).unwrap();
        output
            .check_ended("api", true, Duration::from_millis(1200))
            .unwrap();
        let text = String::from_utf8(bytes).unwrap();
        assert_eq!(
            text,
            "watch: state 0123456789ab: proving\nwatch: check api: running\nwatch: check api: passed in 1.2 s\n"
        );
    }

    /// On a terminal, a check's line is drawn over as it goes rather than repeated.
    #[test]
    fn on_a_terminal_a_checks_line_is_updated_in_place() {
        let mut bytes = Vec::new();
        let mut output = WatchOutput::new(&mut bytes, true);
        output.check_started("api").unwrap();
        output
            .check_ended("api", false, Duration::from_secs(2))
            .unwrap();
        let text = String::from_utf8(bytes).unwrap();
        assert!(
            text.contains("\x1b[1A\r\x1b[2K  api              failed 2s\n"),
            "{text:?}"
        );
    }

    /// A run a change cancelled leaves its line saying so, not "running" for ever.
    #[test]
    fn on_a_terminal_a_cancelled_runs_line_says_cancelled() {
        let mut bytes = Vec::new();
        let mut output = WatchOutput::new(&mut bytes, true);
        output.tick(Duration::from_secs(3)).unwrap();
        output.cancelled(Cancelled::StateChanged).unwrap();
        let text = String::from_utf8(bytes).unwrap();
        assert!(text.contains("  verify.sh        running 3s\n"), "{text:?}");
        assert!(
            text.contains("\x1b[1A\r\x1b[2K  verify.sh        cancelled 3s\n"),
            "{text:?}"
        );
        assert!(text.ends_with("watch: cancelled: the working state changed while it ran; nothing was recorded for the state it ran, the new one is proven once quiet\n"), "{text:?}");
    }
}
