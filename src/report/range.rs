//! The words of `git prove-it run <range>`: a line per commit in history order as results
//! arrive, then a table and a sum; or one JSON object.

use std::io::{self, Write};

use serde::Serialize;

use super::{seconds, short};
use crate::outcome::Outcome;

/// How many of a failing commit's last lines the line per commit shows; the rest is in its log
/// (and `--json` has all the run kept).
const LINES_SHOWN: usize = 5;

/// What `run <range>` found and did.
#[derive(Debug, Serialize)]
pub(crate) struct RangeReport {
    pub version: u32,
    /// PROVEN when every commit is proven (BOUNDED_CLAIM_SURVIVES when one only through an
    /// edited script), else DISPROVEN.
    pub outcome: Outcome,
    /// At most this many commits were proven at once, each in its own temporary worktree.
    pub jobs: usize,
    /// Oldest first, as they were proven.
    pub commits: Vec<RangeCommit>,
    /// Whether Ctrl-C, SIGTERM or SIGHUP stopped the run before every commit was tried.
    pub interrupted: bool,
}

/// One commit of the range and what became of it.
#[derive(Debug, Serialize)]
pub(crate) struct RangeCommit {
    pub commit: String,
    pub subject: String,
    #[serde(flatten)]
    pub result: RangeResult,
}

/// What became of one commit.
#[derive(Debug, Clone, Serialize)]
#[serde(tag = "result", rename_all = "snake_case")]
pub(crate) enum RangeResult {
    /// A proof was on record: nothing ran.
    AlreadyProven { outcome: Outcome },
    /// It ran now and passed (`flaky`: runs that failed first, under `prove-it.retries`).
    Proven {
        outcome: Outcome,
        duration_ms: u64,
        flaky: u32,
    },
    /// It ran now and failed: which checks (empty for verify.sh alone), how, the last lines.
    Failed {
        checks: Vec<String>,
        exit: String,
        duration_ms: u64,
        tail: Vec<String>,
        log: Option<String>,
    },
    /// A failure of the same script on that exact state is on record, so it was not run again
    /// (`--retry-failed` runs it).
    FailedBefore {
        checks: Vec<String>,
        exit: String,
        /// The failure's time, RFC 3339, and how long ago that is.
        time: String,
        ago: String,
        output: Vec<String>,
    },
    /// Its checks passed but changed their inputs while they ran, so nothing was recorded.
    StateChanged { changed_paths: Vec<String> },
    /// It ran now and said it cannot be tested (exit 125): neither proven nor failing, and
    /// never skipped as a failure on record is.
    CannotTest { reason: String },
    /// Its tree has no verify.sh and no checks: nothing can prove it.
    NotArmed,
    /// It could not be proven as it stands: a checks file in error, a check's script missing,
    /// a checkout that does not give its tree; the message says which.
    CannotProve { message: String },
    /// Stopped by Ctrl-C, SIGTERM or SIGHUP before it ended, or before it started.
    Interrupted,
}

impl RangeResult {
    /// Whether the commit counts as proven.
    pub(crate) fn proven(&self) -> bool {
        matches!(
            self,
            RangeResult::AlreadyProven { .. } | RangeResult::Proven { .. }
        )
    }

    /// The word of the table.
    fn label(&self) -> &'static str {
        match self {
            RangeResult::AlreadyProven { .. } => "proven (recorded)",
            RangeResult::Proven { flaky: 0, .. } => "proven",
            RangeResult::Proven { .. } => "proven (flaky)",
            RangeResult::Failed { .. } => "failed",
            RangeResult::FailedBefore { .. } => "failed (recorded)",
            RangeResult::StateChanged { .. } => "not proven: inputs changed",
            RangeResult::CannotTest { .. } => "cannot test",
            RangeResult::NotArmed => "not armed",
            RangeResult::CannotProve { .. } => "cannot be proven",
            RangeResult::Interrupted => "interrupted",
        }
    }
}

/// `exit code 1` as `exit 1`, the short form a line of history shows.
fn short_exit(exit: &str) -> String {
    exit.strip_prefix("exit code ")
        .map_or_else(|| exit.to_string(), |code| format!("exit {code}"))
}

fn checks_of(checks: &[String]) -> String {
    match checks {
        [] => String::new(),
        [one] => format!("check {one}: "),
        many => format!("checks {}: ", many.join(", ")),
    }
}

impl RangeCommit {
    /// The commit's line (and, for a failure, its last lines) as its result arrives.
    pub(crate) fn human(&self, out: &mut dyn Write) -> io::Result<()> {
        let id = short(&self.commit);
        let what = match &self.result {
            RangeResult::AlreadyProven { .. } => "proven (recorded; nothing ran)".to_string(),
            RangeResult::Proven {
                duration_ms, flaky, ..
            } => match flaky {
                0 => format!("proven in {}", seconds(*duration_ms)),
                n => format!(
                    "proven in {} after {n} failed run{} (flaky: {n})",
                    seconds(*duration_ms),
                    if *n == 1 { "" } else { "s" }
                ),
            },
            RangeResult::Failed {
                checks,
                exit,
                duration_ms,
                ..
            } => format!(
                "failed: {}{} after {}",
                checks_of(checks),
                exit,
                seconds(*duration_ms)
            ),
            RangeResult::FailedBefore {
                checks, exit, ago, ..
            } => format!(
                "failed (recorded: {}{}, {ago}); not run again, --retry-failed runs it",
                checks_of(checks),
                short_exit(exit)
            ),
            RangeResult::StateChanged { changed_paths } => format!(
                "not proven: the run changed {} while it ran, so nothing was recorded",
                changed_paths.join(", ")
            ),
            RangeResult::CannotTest { reason } => {
                format!("cannot test: {reason}; not proven, and not a failure of the code")
            }
            RangeResult::NotArmed => {
                "not armed: its tree has no verify.sh and no prove-it.toml".to_string()
            }
            RangeResult::CannotProve { message } => format!("cannot be proven: {message}"),
            RangeResult::Interrupted => "interrupted".to_string(),
        };
        writeln!(out, "{id} {}: {what}", self.subject)?;
        let (lines, log) = match &self.result {
            RangeResult::Failed { tail, log, .. } => (tail.as_slice(), log.as_deref()),
            RangeResult::FailedBefore { output, .. } => (output.as_slice(), None),
            _ => (&[][..], None),
        };
        for line in &lines[lines.len().saturating_sub(LINES_SHOWN)..] {
            writeln!(out, "    {line}")?;
        }
        if let Some(log) = log {
            writeln!(out, "    full output: {log}")?;
        }
        Ok(())
    }
}

impl RangeReport {
    /// What a range is about to do: prove `to_run` of its `total` commits (the others from
    /// records) in up to `workers` worktrees at once.
    pub(crate) fn starting(
        to_run: usize,
        total: usize,
        workers: usize,
        out: &mut dyn Write,
    ) -> io::Result<()> {
        writeln!(
            out,
            "proving {to_run} of {total} commits in up to {workers} temporary worktree{} at once ({} from records)",
            if workers == 1 { "" } else { "s" },
            total - to_run
        )
    }

    /// The table of every commit, then the sum and what to do next.
    pub(crate) fn human_summary(&self, out: &mut dyn Write) -> io::Result<()> {
        let width = self
            .commits
            .iter()
            .map(|c| c.result.label().len())
            .max()
            .unwrap_or(0);
        writeln!(out)?;
        for commit in &self.commits {
            let time = match &commit.result {
                RangeResult::Proven { duration_ms, .. }
                | RangeResult::Failed { duration_ms, .. } => seconds(*duration_ms),
                _ => String::new(),
            };
            writeln!(
                out,
                "{}  {:width$}  {time:>7}  {}",
                short(&commit.commit),
                commit.result.label(),
                commit.subject
            )?;
        }
        let count =
            |f: &dyn Fn(&RangeResult) -> bool| self.commits.iter().filter(|c| f(&c.result)).count();
        let proven = count(&|r| r.proven());
        let ran = count(&|r| {
            matches!(
                r,
                RangeResult::Proven { .. }
                    | RangeResult::Failed { .. }
                    | RangeResult::StateChanged { .. }
                    | RangeResult::CannotTest { .. }
            )
        });
        let recorded = count(&|r| {
            matches!(
                r,
                RangeResult::AlreadyProven { .. } | RangeResult::FailedBefore { .. }
            )
        });
        let total = self.commits.len();
        let plural = |n: usize| if n == 1 { "" } else { "s" };
        let how = if ran == 0 {
            format!("nothing run, {recorded} from records")
        } else {
            format!(
                "{ran} run in up to {} temporary worktree{} at once, {recorded} from records",
                self.jobs,
                plural(self.jobs)
            )
        };
        writeln!(
            out,
            "{proven} of {total} commit{} proven; {how}",
            plural(total)
        )?;
        if self.interrupted {
            writeln!(
                out,
                "interrupted: the commits not tried are listed as such; run the same command again to go on"
            )?;
        }
        if count(&|r| matches!(r, RangeResult::FailedBefore { .. })) > 0 {
            writeln!(
                out,
                "hint: commits that failed before were not run again; add --retry-failed to run them"
            )?;
        }
        if count(&|r| matches!(r, RangeResult::CannotTest { .. })) > 0 {
            writeln!(
                out,
                "hint: a commit that cannot be tested (its script exited 125) is not proven; git prove-it bisect skips such commits"
            )?;
        }
        if count(&|r| matches!(r, RangeResult::NotArmed)) > 0 {
            writeln!(
                out,
                "hint: a commit from before verify.sh (or prove-it.toml) existed cannot be proven; start the range after it: git prove-it run <the commit that added it>..HEAD"
            )?;
        }
        if proven < total && count(&|r| matches!(r, RangeResult::Failed { .. })) > 0 {
            writeln!(
                out,
                "hint: git prove-it bisect <good> <bad> finds the first failing commit; git prove-it log shows every failure on record"
            )?;
        }
        Ok(())
    }
}
