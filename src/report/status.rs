//! What `status` says of the working state: armed or not, its state tree, its proof or its
//! checks, the worktree's prover, and what a person does about what it found.

use std::io::{self, Write};

use crate::outcome::Outcome;
use serde::Serialize;

use super::{ContestSummary, ProofSummary};

/// What a person does about a contested proof of the state tree `tree`.
fn contested_hint(tree: &str) -> String {
    let tree = super::short(tree);
    format!(
        "a pass and a failure of the same script on one state: find out which is true, then 'git prove-it revoke {tree} --reason TEXT' (the proof stops counting) or 'git prove-it accept {tree} --reason TEXT' (the pass counts)"
    )
}
use super::commits::FailureSummary;

/// What `git prove-it status` observed about the working state.
#[derive(Debug, Serialize)]
pub(crate) struct StatusReport {
    pub version: u32,
    pub outcome: Outcome,
    pub armed: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub not_armed_reason: Option<&'static str>,
    pub tree: String,
    pub head: Option<String>,
    pub proven: bool,
    pub proof: Option<ProofSummary>,
    /// Records attached to this tree that cannot be trusted, each with its problem.
    pub invalid: Vec<String>,
    /// Submodules whose worktree holds changes their commit does not: the state cannot be
    /// proven until they are committed or restored.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub dirty_submodules: Vec<String>,
    /// What arms verify.sh when it is not armed, or what makes a state with dirty submodules
    /// provable (as `run` says it).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub hints: Vec<&'static str>,
    /// Each check, when the state has a checks file (absent without one): the state is proven
    /// only when every check is.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub checks: Option<Vec<StatusCheck>>,
    /// Why the state's checks file cannot be used, naming the line.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub checks_error: Option<String>,
    /// Without a checks file: the newest failure on record of this verify.sh for this state,
    /// when it is not proven (with one, each check has its own).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub failure: Option<FailureSummary>,
    /// With a checks file: the paths of the state no check reads (the first ones), and how
    /// many there are.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub uncovered: Vec<String>,
    #[serde(skip_serializing_if = "is_zero")]
    pub uncovered_count: usize,
    /// Without a checks file: the proof a failing run contests, when that keeps the state from
    /// being proven.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub contested: Option<ContestSummary>,
    /// What the worktree's prover does (SPEC section 8, "Proving ahead"); absent where none
    /// was ever started.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ahead: Option<AheadSummary>,
}

/// What the worktree's background prover does, as the kernel's locks and its status file say.
#[derive(Debug, Serialize)]
pub(crate) struct AheadSummary {
    /// `running`, `idle`, `stopped` (no prover holds the lock) or `off`.
    pub state: &'static str,
    /// Running: the checks it runs (empty: verify.sh), and for how long.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub checks: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub seconds: Option<u64>,
    /// Off: the paths the last run changed in place.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub wrote: Vec<String>,
    /// Idle: what failed ahead on the last state it ran (kept for the session only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub failed: Option<String>,
}

impl AheadSummary {
    fn line(&self) -> String {
        let what = |checks: &[String]| match checks {
            [] => "verify.sh".to_string(),
            [one] => format!("check {one}"),
            many => format!("checks {}", many.join(", ")),
        };
        match self.state {
            "running" => format!(
                "proving ahead: {}, {} s",
                what(&self.checks),
                self.seconds.unwrap_or(0)
            ),
            "off" => format!(
                "off: the last run of verify.sh changed files in place ({}), which would race the agent's edits; it is on again once a stop's run leaves every file as it was",
                self.wrote.join(", ")
            ),
            "idle" => match &self.failed {
                Some(failed) => format!(
                    "idle; the last run ahead failed ({failed}), which the stop confirms with its own run"
                ),
                None => "idle".to_string(),
            },
            _ => "no prover runs".to_string(),
        }
    }
}

/// What keeps a state's records from counting, a line each as `status` lists them (`invalid`):
/// each invalid record's `problems` (as the proof layer says them), an unsigned proof passed
/// over, proofs revoked; each said as of the check `check` where the state has checks.
pub(crate) fn not_counting(
    check: Option<&str>,
    problems: impl IntoIterator<Item = String>,
    unsigned_passed_over: usize,
    revoked: usize,
) -> Vec<String> {
    let unsigned = (unsigned_passed_over > 0)
        .then(|| "an unsigned proof, which does not count while prove-it.sign is on".to_string());
    let revoked = match revoked {
        0 => None,
        1 => Some(
            "a proof revoked by a person ('git prove-it revoke'), which never counts again"
                .to_string(),
        ),
        n => Some(format!(
            "{n} proofs revoked by a person ('git prove-it revoke'), which never count again"
        )),
    };
    problems
        .into_iter()
        .chain(unsigned)
        .chain(revoked)
        .map(|problem| match check {
            Some(check) => format!("check {check}: {problem}"),
            None => problem,
        })
        .collect()
}

/// What failed when the prover last ran ahead, from how it ended (`exit`): with checks, the
/// exit names each one already; verify.sh alone is named here.
pub(crate) fn failed_ahead(checks: &[String], exit: String) -> String {
    match checks {
        [] => format!("verify.sh: {exit}"),
        _ => exit,
    }
}

fn is_zero(count: &usize) -> bool {
    *count == 0
}

/// One check of the working state, as `status` reports it.
#[derive(Debug, Serialize)]
pub(crate) struct StatusCheck {
    /// `verify.sh` for the root verify.sh, else the name `prove-it.toml` gives it.
    pub name: String,
    /// The script's repository-relative path.
    pub run: String,
    /// The state tree pruned to the check's inputs: the key of its proofs.
    pub input_tree: String,
    /// Whether a proof `run` and the gate would accept is there.
    pub proven: bool,
    pub proof: Option<ProofSummary>,
    /// Why the script cannot run: "does not exist", "is not executable", ...
    #[serde(skip_serializing_if = "Option::is_none")]
    pub script_problem: Option<&'static str>,
    /// The newest failure on record of this check through this script for its input tree,
    /// when it is not proven.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub failure: Option<FailureSummary>,
    /// The proof of this check a failing run contests, when that keeps it from being proven.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub contested: Option<ContestSummary>,
}

impl StatusReport {
    pub(crate) fn human(&self, out: &mut dyn Write) -> io::Result<()> {
        match self.not_armed_reason {
            None => writeln!(out, "verify.sh:  armed")?,
            // The checks of prove-it.toml arm the state without it.
            Some(reason) if self.armed => writeln!(out, "verify.sh:  not a check: it {reason}")?,
            Some(reason) => writeln!(out, "verify.sh:  not armed: it {reason}")?,
        }
        writeln!(out, "state tree: {}", self.tree)?;
        if !self.dirty_submodules.is_empty() {
            writeln!(
                out,
                "submodules: dirty: {} (changes their commits do not hold: this state cannot be proven)",
                self.dirty_submodules.join(", ")
            )?;
        }
        if let Some(checks) = &self.checks {
            self.checks_lines(checks, out)?;
        } else {
            self.proof_line(out)?;
        }
        if let Some(ahead) = &self.ahead {
            writeln!(out, "ahead:      {}", ahead.line())?;
        }
        for problem in &self.invalid {
            writeln!(out, "ignored:    {problem}")?;
        }
        for hint in &self.hints {
            writeln!(out, "hint: {hint}")?;
        }
        Ok(())
    }

    /// `checks:     1 of 2 proven (prove-it.toml)`, then one line per check: its name, input
    /// tree, and its proof or what it lacks.
    fn checks_lines(&self, checks: &[StatusCheck], out: &mut dyn Write) -> io::Result<()> {
        if let Some(error) = &self.checks_error {
            return writeln!(out, "checks:     {}", error.replace('\n', "\n            "));
        }
        let proven = checks.iter().filter(|c| c.proven).count();
        writeln!(
            out,
            "checks:     {proven} of {} proven (prove-it.toml)",
            checks.len()
        )?;
        // The names make one column, as wide as the longest (and at least 12), so that the
        // input trees and standings line up whatever the names.
        let width = checks
            .iter()
            .map(|check| check.name.chars().count())
            .max()
            .unwrap_or(0)
            .max(12);
        for check in checks {
            let standing = match (&check.proof, check.script_problem, &check.failure) {
                (Some(proof), _, _) => format!("{} {}", proof.outcome, proof.by_line()),
                (None, None, _) if check.contested.is_some() => {
                    let contest = check.contested.as_ref().map(ContestSummary::words);
                    format!("not proven, {}", contest.unwrap_or_default())
                }
                (None, Some(why), _) => format!("not proven: {} {why}", check.run),
                (None, None, Some(failure)) => {
                    format!("not proven, {}", last_run_failed(failure))
                }
                (None, None, None) => "not proven".to_string(),
            };
            writeln!(
                out,
                "  {:<width$} {} {standing}",
                check.name,
                super::short(&check.input_tree)
            )?;
        }
        super::run::uncovered_human(&self.uncovered, self.uncovered_count, out)?;
        if self.armed && !self.proven && self.dirty_submodules.is_empty() {
            writeln!(
                out,
                "hint: run 'git prove-it run' to prove the checks not proven"
            )?;
        }
        if checks.iter().any(|c| c.contested.is_some()) {
            writeln!(out, "hint: {}", contested_hint(&self.tree))?;
        }
        Ok(())
    }

    fn proof_line(&self, out: &mut dyn Write) -> io::Result<()> {
        match &self.proof {
            Some(proof) => writeln!(out, "proof:      {} {}", proof.outcome, proof.by_line())?,
            None if self.contested.is_some() => {
                let contest = self.contested.as_ref().map(ContestSummary::words);
                writeln!(out, "proof:      none, {}", contest.unwrap_or_default())?;
                writeln!(out, "hint: {}", contested_hint(&self.tree))?;
            }
            None if self.armed && self.dirty_submodules.is_empty() => {
                let failed = self
                    .failure
                    .as_ref()
                    .map_or(String::new(), |f| format!(", {}", last_run_failed(f)));
                writeln!(
                    out,
                    "proof:      none{failed} (run 'git prove-it run' to prove this state)"
                )?;
            }
            None => writeln!(out, "proof:      none")?,
        }
        Ok(())
    }
}

/// `last run failed: exit 1, 3 min ago`: a failure on record for what is not proven.
fn last_run_failed(failure: &FailureSummary) -> String {
    format!("last run failed: {}", failure.brief())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_keeps_records_from_counting_is_said_of_its_check() {
        assert_eq!(
            not_counting(None, ["bad signature".to_string()], 1, 2),
            [
                "bad signature",
                "an unsigned proof, which does not count while prove-it.sign is on",
                "2 proofs revoked by a person ('git prove-it revoke'), which never count again",
            ]
        );
        assert_eq!(
            not_counting(Some("api"), [], 0, 1),
            [
                "check api: a proof revoked by a person ('git prove-it revoke'), which never counts again"
            ]
        );
        assert!(not_counting(Some("api"), [], 0, 0).is_empty());
        assert_eq!(
            failed_ahead(&[], "exit code 1".into()),
            "verify.sh: exit code 1"
        );
    }
}
