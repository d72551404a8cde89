//! The words of `git prove-it bisect`: a line per step on stderr as the search goes, then the
//! first failing commit (or the candidates, when commits that cannot be tested hide it) on
//! stdout, in human text or one JSON object.

use std::io::{self, Write};

use serde::Serialize;

use super::short;

/// Where a step's result came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum How {
    /// A proof or a failure on record for the commit's exact state.
    Recorded,
    /// Its checks were run, in the temporary worktree.
    Ran,
}

/// One check that failed on a commit: the root verify.sh is named `verify.sh`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub(crate) struct FailedCheck {
    pub name: String,
    /// How it ended, as a person reads it: `exit code 1`, `timed out after 300 s`.
    pub exit: String,
    pub exit_code: Option<i32>,
    /// Its last lines of output, from the run or the failure record.
    pub output: Vec<String>,
}

impl FailedCheck {
    /// `exit 1`, or the whole ending when there is no exit code (`timed out after 300 s`).
    fn ending(&self) -> String {
        match self.exit_code {
            Some(code) => format!("exit {code}"),
            None => self.exit.clone(),
        }
    }
}

/// What one step found about its commit.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "result", rename_all = "snake_case")]
pub(crate) enum StepResult {
    Proven,
    Failed {
        checks: Vec<FailedCheck>,
        /// For a failure on record: how many seconds ago it was recorded.
        #[serde(skip_serializing_if = "Option::is_none")]
        recorded_secs_ago: Option<i64>,
    },
    /// Nothing could say whether it passes (no verify.sh nor checks, a checks file in error, a
    /// check's script missing): skipped, as `git bisect skip` does.
    Untestable {
        reason: String,
    },
}

/// One commit the search looked at, in the order it did.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct BisectStep {
    pub commit: String,
    pub subject: String,
    pub how: How,
    #[serde(flatten)]
    pub result: StepResult,
}

impl BisectStep {
    /// `commit <short> <subject>: proven (recorded)`, `...: ran: failed (exit 1)`, ...
    pub(crate) fn human(&self, err: &mut dyn Write) -> io::Result<()> {
        let what = match (&self.how, &self.result) {
            (How::Recorded, StepResult::Proven) => "proven (recorded)".to_string(),
            (How::Ran, StepResult::Proven) => "ran: proven".to_string(),
            (
                How::Recorded,
                StepResult::Failed {
                    checks,
                    recorded_secs_ago,
                },
            ) => {
                let ago = recorded_secs_ago.map_or(String::new(), |secs| {
                    format!(", {}", super::commits::ago_secs(secs))
                });
                format!("failed (recorded, {}{ago})", endings(checks))
            }
            (How::Ran, StepResult::Failed { checks, .. }) => {
                format!("ran: failed ({})", endings(checks))
            }
            (How::Recorded, StepResult::Untestable { reason }) => {
                format!("cannot be tested ({reason}), skipped")
            }
            (How::Ran, StepResult::Untestable { reason }) => {
                format!("ran: cannot be tested ({reason}), skipped")
            }
        };
        writeln!(
            err,
            "commit {} {}: {what}",
            &self.commit[..self.commit.len().min(7)],
            self.subject
        )
    }
}

/// `exit 1` for the root verify.sh alone, else `check docs: exit 1, check api: exit 2`.
fn endings(checks: &[FailedCheck]) -> String {
    match checks {
        [only] if only.name == crate::proof::VERIFY_CHECK => only.ending(),
        _ => checks
            .iter()
            .map(|c| format!("check {}: {}", c.name, c.ending()))
            .collect::<Vec<_>>()
            .join(", "),
    }
}

/// The first failing commit, and how it failed.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct FirstBad {
    pub commit: String,
    pub subject: String,
    /// Each check that failed on it.
    pub checks: Vec<FailedCheck>,
    /// How the first of them ended.
    pub exit: String,
    /// The first failing check's last lines of output.
    pub output: Vec<String>,
}

/// A commit the first failing one may be, when commits that cannot be tested hide which.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct BisectCandidate {
    pub commit: String,
    pub subject: String,
    /// Why it cannot be tested; `None` for the failing commit after them.
    pub untestable: Option<String>,
}

/// What `git prove-it bisect` found.
#[derive(Debug, Serialize)]
pub(crate) struct BisectReport {
    pub version: u32,
    /// `None` when commits that cannot be tested hide it: then `candidates` names them.
    pub first_bad: Option<FirstBad>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub candidates: Vec<BisectCandidate>,
    pub steps: Vec<BisectStep>,
    /// The commits on the first-parent line after `good`, up to and including `bad`.
    pub between: usize,
    /// How many of them were run.
    pub runs: usize,
    /// How many results came from records instead.
    pub recorded: usize,
}

impl BisectReport {
    pub(crate) fn human(&self, out: &mut dyn Write) -> io::Result<()> {
        match &self.first_bad {
            Some(first) => {
                writeln!(
                    out,
                    "first failing commit: {} {}",
                    first.commit, first.subject
                )?;
                for check in &first.checks {
                    let name = if check.name == crate::proof::VERIFY_CHECK {
                        check.name.clone()
                    } else {
                        format!("check {}", check.name)
                    };
                    writeln!(out, "{name} failed: {}", check.exit)?;
                    if !check.output.is_empty() {
                        writeln!(out, "last {} lines of its output:", check.output.len())?;
                        for line in &check.output {
                            writeln!(out, "  {line}")?;
                        }
                    }
                }
            }
            None => {
                writeln!(
                    out,
                    "could not narrow it down: only commits that cannot be tested are left; the first failing commit could be any of these {}:",
                    self.candidates.len()
                )?;
                for candidate in &self.candidates {
                    let why = match &candidate.untestable {
                        Some(reason) => format!("cannot be tested: {reason}"),
                        None => "fails".to_string(),
                    };
                    writeln!(
                        out,
                        "  {} {} ({why})",
                        short(&candidate.commit),
                        candidate.subject
                    )?;
                }
            }
        }
        writeln!(
            out,
            "{} {} between, {} run, {} from records",
            self.between,
            if self.between == 1 {
                "commit"
            } else {
                "commits"
            },
            self.runs,
            self.recorded
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn failed(name: &str, code: Option<i32>, exit: &str) -> FailedCheck {
        FailedCheck {
            name: name.into(),
            exit: exit.into(),
            exit_code: code,
            output: vec!["boom".into()],
        }
    }

    fn line(how: How, result: StepResult) -> String {
        let step = BisectStep {
            commit: "0123456789abcdef0123456789abcdef01234567".into(),
            subject: "add parser".into(),
            how,
            result,
        };
        let mut err = Vec::new();
        step.human(&mut err).unwrap();
        String::from_utf8(err).unwrap()
    }

    #[test]
    fn a_step_says_where_its_result_came_from() {
        assert_eq!(
            line(How::Recorded, StepResult::Proven),
            "commit 0123456 add parser: proven (recorded)\n"
        );
        assert_eq!(
            line(How::Ran, StepResult::Proven),
            "commit 0123456 add parser: ran: proven\n"
        );
        assert_eq!(
            line(
                How::Recorded,
                StepResult::Failed {
                    checks: vec![failed("verify.sh", Some(1), "exit code 1")],
                    recorded_secs_ago: Some(200),
                }
            ),
            "commit 0123456 add parser: failed (recorded, exit 1, 3 min ago)\n"
        );
        assert_eq!(
            line(
                How::Ran,
                StepResult::Failed {
                    checks: vec![
                        failed("api", Some(2), "exit code 2"),
                        failed("docs", None, "timed out after 5 s")
                    ],
                    recorded_secs_ago: None,
                }
            ),
            "commit 0123456 add parser: ran: failed (check api: exit 2, check docs: timed out after 5 s)\n"
        );
        assert_eq!(
            line(
                How::Ran,
                StepResult::Untestable {
                    reason: "verify.sh is missing".into()
                }
            ),
            "commit 0123456 add parser: ran: cannot be tested (verify.sh is missing), skipped\n"
        );
    }

    #[test]
    fn the_summary_names_the_commit_its_failing_checks_and_their_lines() {
        let report = BisectReport {
            version: 1,
            first_bad: Some(FirstBad {
                commit: "0123456789abcdef0123456789abcdef01234567".into(),
                subject: "break docs".into(),
                checks: vec![failed("docs", Some(1), "exit code 1")],
                exit: "exit code 1".into(),
                output: vec!["boom".into()],
            }),
            candidates: Vec::new(),
            steps: Vec::new(),
            between: 9,
            runs: 4,
            recorded: 1,
        };
        let mut out = Vec::new();
        report.human(&mut out).unwrap();
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "first failing commit: 0123456789abcdef0123456789abcdef01234567 break docs\n\
             check docs failed: exit code 1\n\
             last 1 lines of its output:\n  \
             boom\n\
             9 commits between, 4 run, 1 from records\n"
        );
    }
}
