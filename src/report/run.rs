use std::io::{self, Write};

use crate::outcome::Outcome;
use serde::Serialize;

use super::{ProofSummary, seconds, short};

/// What `git prove-it run` found and did.
#[derive(Debug, Serialize)]
pub(crate) struct RunReport {
    pub version: u32,
    /// The verdict vocabulary shared by every command: PROVEN, DISPROVEN, INSUFFICIENT_EVIDENCE.
    pub outcome: Outcome,
    pub tree: Option<String>,
    #[serde(flatten)]
    pub result: RunResult,
}

#[derive(Debug, Serialize)]
#[serde(tag = "result", rename_all = "snake_case")]
pub(crate) enum RunResult {
    NotArmed {
        reason: &'static str,
        /// What fixes it, as the human output's `hint:` lines say it.
        hints: Vec<&'static str>,
    },
    AlreadyProven {
        proof: ProofSummary,
    },
    Proven {
        proof: ProofSummary,
        proofs_ref: &'static str,
        /// A run of the same script failed on this tree: the proof is recorded, and does not
        /// count until a person resolves the contest.
        #[serde(skip_serializing_if = "std::ops::Not::not")]
        contested: bool,
    },
    Failed {
        exit: String,
        exit_code: Option<i32>,
        duration_ms: u64,
        output_bytes: u64,
        tail: Vec<String>,
        log: Option<String>,
        /// How many runs failed: 1, or more under `prove-it.retries`.
        attempts: u32,
        /// The notes ref the failure was recorded in (`refs/notes/prove-it-failures`), if it
        /// was: not when the run was interrupted or changed its inputs.
        failure_recorded: Option<&'static str>,
    },
    StateChanged {
        duration_ms: u64,
        after: String,
        changed_paths: Vec<String>,
    },
    /// A state with a checks file: each check's own result (never `Checks` or `NotArmed`).
    Checks {
        checks: Vec<CheckRun>,
    },
}

/// One check of `prove-it.toml` (or the root verify.sh beside them) in a `run`.
#[derive(Debug, Serialize)]
pub(crate) struct CheckRun {
    pub name: String,
    /// The script's path.
    pub run: String,
    /// The check's key: the state tree pruned to its inputs.
    pub input_tree: String,
    #[serde(flatten)]
    pub result: RunResult,
}

/// Why verify.sh is not armed, as far as the fix differs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Unarmed {
    /// There is no verify.sh at all.
    Missing,
    /// verify.sh is there but its owner may not execute it.
    NotExecutable,
    /// The commit being proven has no verify.sh.
    NotInCommit,
    /// Not a regular file, or a link that leads nowhere the gate accepts.
    NotAFile,
}

impl Unarmed {
    /// The `hint:` lines that fix it.
    pub(crate) fn hints(self) -> Vec<&'static str> {
        match self {
            Unarmed::Missing => vec![
                "write one for this project's stack: git prove-it init",
                "or create an executable verify.sh at the repository root that exits 0 when the work is done",
            ],
            Unarmed::NotExecutable => vec!["make it executable: chmod +x verify.sh"],
            Unarmed::NotInCommit => vec![
                "commit an executable verify.sh (git prove-it init writes one), then prove a commit that has it",
            ],
            Unarmed::NotAFile => vec![
                "make verify.sh a regular executable file at the repository root (a link must lead to one inside the worktree)",
            ],
        }
    }
}

/// What `run` says of a pass a failing run of the same script contests.
const CONTESTED_RUN: &str = "contested: a run of the same script failed on this very tree, so this proof does not count until a person resolves it ('git prove-it status' says how)";

impl RunReport {
    pub(crate) fn human(&self, out: &mut dyn Write) -> io::Result<()> {
        let tree = self.tree.as_deref().map(short).unwrap_or("?");
        match &self.result {
            RunResult::NotArmed { reason, hints } => {
                writeln!(out, "not armed: verify.sh {reason}")?;
                for hint in hints {
                    writeln!(out, "hint: {hint}")?;
                }
            }
            RunResult::AlreadyProven { proof } => {
                writeln!(out, "already proven: tree {tree} {}", proof.by_line())?;
                writeln!(out, "nothing was run; use --force to run verify.sh again")?;
            }
            RunResult::Proven {
                proof,
                proofs_ref,
                contested,
            } => {
                writeln!(
                    out,
                    "{}: tree {tree}, verify.sh exit 0 in {}{}",
                    if *contested { "passed" } else { "proven" },
                    seconds(proof.duration_ms),
                    flaky(proof.flaky)
                )?;
                if *contested {
                    writeln!(out, "{CONTESTED_RUN}")?;
                }
                writeln!(
                    out,
                    "recorded in {proofs_ref}, signed off by {}{}",
                    proof.signed_off_by,
                    if proof.signed {
                        ", with an SSH signature"
                    } else {
                        ""
                    }
                )?;
            }
            RunResult::Failed {
                exit,
                exit_code,
                duration_ms,
                tail,
                log,
                attempts,
                failure_recorded,
                ..
            } => {
                // A timeout already says how long it ran: "timed out after 300 s".
                if exit_code.is_none() && exit.starts_with("timed out") {
                    writeln!(
                        out,
                        "not proven: verify.sh {exit} on tree {tree}{}",
                        runs(*attempts)
                    )?;
                } else {
                    writeln!(
                        out,
                        "not proven: verify.sh {exit} after {} on tree {tree}{}",
                        seconds(*duration_ms),
                        runs(*attempts)
                    )?;
                }
                if let Some(failures_ref) = failure_recorded {
                    writeln!(
                        out,
                        "the failure is recorded in {failures_ref} (local; git prove-it log shows it)"
                    )?;
                }
                if !tail.is_empty() {
                    writeln!(out, "last {} lines of its output:", tail.len())?;
                    for line in tail {
                        writeln!(out, "  {line}")?;
                    }
                }
                if let Some(log) = log {
                    writeln!(out, "full output: {log}")?;
                    writeln!(
                        out,
                        "(this failing run's, kept until the next failing run; last-run.log beside it holds the latest run's, whatever its result)"
                    )?;
                }
            }
            RunResult::Checks { checks } => checks_human(tree, checks, out)?,
            RunResult::StateChanged { changed_paths, .. } => {
                writeln!(
                    out,
                    "not proven: the working state changed while verify.sh ran (by verify.sh or anything else), so the state it tested is not the one on disk"
                )?;
                for path in changed_paths {
                    writeln!(out, "  changed: {path}")?;
                }
                writeln!(
                    out,
                    "hint: add files that verify.sh generates to .gitignore, or make it leave the worktree as it found it"
                )?;
            }
        }
        Ok(())
    }
}

/// `, after 2 failed runs (flaky: 2)` for a pass under `prove-it.retries`, else nothing.
fn flaky(failures: u32) -> String {
    match failures {
        0 => String::new(),
        1 => ", after 1 failed run (flaky: 1)".to_string(),
        n => format!(", after {n} failed runs (flaky: {n})"),
    }
}

/// `, failing all 3 runs` for a failure under `prove-it.retries`, else nothing.
fn runs(attempts: u32) -> String {
    if attempts > 1 {
        format!(", failing all {attempts} runs")
    } else {
        String::new()
    }
}

/// Several checks: one line each, what failed in full below them, then the verdict.
fn checks_human(tree: &str, checks: &[CheckRun], out: &mut dyn Write) -> io::Result<()> {
    let width = checks.iter().map(|c| c.name.len()).max().unwrap_or(0);
    let mut failed = Vec::new();
    for check in checks {
        let input = short(&check.input_tree);
        let what = match &check.result {
            RunResult::AlreadyProven { proof } => format!("already proven {}", proof.by_line()),
            RunResult::Proven {
                proof, contested, ..
            } => {
                format!(
                    "{}: exit 0 in {}{}",
                    if *contested { "contested" } else { "proven" },
                    seconds(proof.duration_ms),
                    flaky(proof.flaky)
                )
            }
            RunResult::Failed {
                exit,
                duration_ms,
                attempts,
                ..
            } => {
                failed.push(check);
                if exit.starts_with("timed out") {
                    format!("not proven: {exit}{}", runs(*attempts))
                } else {
                    format!(
                        "not proven: {exit} after {}{}",
                        seconds(*duration_ms),
                        runs(*attempts)
                    )
                }
            }
            RunResult::StateChanged { .. } => {
                failed.push(check);
                "not proven: its inputs changed while it ran".to_string()
            }
            RunResult::NotArmed { reason, .. } => format!("not armed: {reason}"),
            RunResult::Checks { .. } => String::new(),
        };
        writeln!(out, "  {:width$}  input tree {input}  {what}", check.name)?;
    }
    for check in &failed {
        match &check.result {
            RunResult::Failed { tail, log, .. } => {
                writeln!(out, "check {} ({}):", check.name, check.run)?;
                if !tail.is_empty() {
                    writeln!(out, "last {} lines of its output:", tail.len())?;
                    for line in tail {
                        writeln!(out, "  {line}")?;
                    }
                }
                if let Some(log) = log {
                    writeln!(out, "full output: {log}")?;
                }
            }
            RunResult::StateChanged { changed_paths, .. } => {
                writeln!(out, "check {} ({}):", check.name, check.run)?;
                for path in changed_paths {
                    writeln!(out, "  changed: {path}")?;
                }
                writeln!(
                    out,
                    "hint: add files that the check generates to .gitignore, or make it leave its inputs as it found them"
                )?;
            }
            _ => {}
        }
    }
    if failed.is_empty() {
        writeln!(out, "proven: tree {tree}, all {} checks", checks.len())?;
        let ran = checks
            .iter()
            .filter(|c| matches!(c.result, RunResult::Proven { .. }))
            .count();
        if ran == 0 {
            writeln!(out, "nothing was run; use --force to run the checks again")?;
        }
    } else {
        let names: Vec<&str> = failed.iter().map(|c| c.name.as_str()).collect();
        writeln!(
            out,
            "not proven: tree {tree}, {} of {} checks failed: {}",
            failed.len(),
            checks.len(),
            names.join(", ")
        )?;
    }
    Ok(())
}
