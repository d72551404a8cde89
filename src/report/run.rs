//! What `run` says about the working state or a commit: proven, failed, found on record, not
//! armed, or not testable, for a person and in JSON.

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
    /// The script said the state cannot be tested (exit 125): neither proven nor failing.
    CannotTest {
        reason: String,
        exit_code: Option<i32>,
        duration_ms: u64,
        tail: Vec<String>,
        log: Option<String>,
        /// The notes ref the cannot-test record was written to, if it was.
        cannot_test_recorded: Option<&'static str>,
    },
    /// A state with a checks file: each check's own result (never `Checks` or `NotArmed`).
    Checks {
        checks: Vec<CheckRun>,
        /// The paths of the state no check reads (the first ones), and how many there are.
        #[serde(skip_serializing_if = "Vec::is_empty")]
        uncovered: Vec<String>,
        #[serde(skip_serializing_if = "is_zero")]
        uncovered_count: usize,
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

/// Why `run <rev>`'s verify.sh is not armed when the commit's tree does not hold it (the
/// repository words the other reasons); it reads after "verify.sh ".
pub(crate) const NOT_IN_COMMIT: &str = "does not exist at the root of that commit's tree";

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
        let tree = self.tree.as_deref().map_or("?", short);
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
            } => proven_human(tree, proof, proofs_ref, *contested, out)?,
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
                failed_output_human(*failure_recorded, tail, log.as_deref(), out)?;
            }
            RunResult::CannotTest {
                reason,
                duration_ms,
                tail,
                log,
                cannot_test_recorded,
                ..
            } => cannot_test_human(
                tree,
                reason,
                *duration_ms,
                *cannot_test_recorded,
                tail,
                log.as_deref(),
                out,
            )?,
            RunResult::Checks {
                checks,
                uncovered,
                uncovered_count,
            } => {
                checks_human(tree, checks, out)?;
                uncovered_human(uncovered, *uncovered_count, out)?;
            }
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

/// verify.sh's pass: proven (or passed and contested), the tests it counted and any that fell
/// short of the baseline's, where the proof is recorded, and what protected paths it went
/// through.
fn proven_human(
    tree: &str,
    proof: &ProofSummary,
    proofs_ref: &str,
    contested: bool,
    out: &mut dyn Write,
) -> io::Result<()> {
    writeln!(
        out,
        "{}: tree {tree}, verify.sh exit 0 in {}{}",
        if contested { "passed" } else { "proven" },
        seconds(proof.duration_ms),
        flaky(proof.flaky)
    )?;
    if contested {
        writeln!(out, "{CONTESTED_RUN}")?;
    }
    if let Some(tests) = &proof.tests {
        writeln!(
            out,
            "tests: {} passed, {} failed, {} skipped (from {})",
            tests.passed,
            tests.failed,
            tests.skipped,
            if tests.source == "junit" {
                "the JUnit reports in PROVE_IT_REPORTS"
            } else {
                "the runners' summary lines"
            }
        )?;
    }
    if !proof.tests_weakened.is_empty() {
        writeln!(
            out,
            "BOUNDED_CLAIM_SURVIVES: the tests fell short of the baseline's (the proof of HEAD's tree, or its first parent's):"
        )?;
        for finding in &proof.tests_weakened {
            writeln!(out, "  - {finding}")?;
        }
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
    protection_human(proof, out)
}

/// Under a failed run's line: where its failure is recorded, its last lines, and the log that
/// keeps its whole output.
fn failed_output_human(
    failure_recorded: Option<&str>,
    tail: &[String],
    log: Option<&str>,
    out: &mut dyn Write,
) -> io::Result<()> {
    if let Some(failures_ref) = failure_recorded {
        writeln!(
            out,
            "the failure is recorded in {failures_ref} (local; git prove-it log shows it)"
        )?;
    }
    lines_and_log(tail, log, out)?;
    if log.is_some() {
        writeln!(
            out,
            "(this failing run's, kept until the next failing run; last-run.log beside it holds the latest run's, whatever its result)"
        )?;
    }
    Ok(())
}

/// verify.sh said the state cannot be tested (or a commit's run lacked its setup): why, where
/// that is recorded, its last lines, and what makes the state testable.
fn cannot_test_human(
    tree: &str,
    reason: &str,
    duration_ms: u64,
    recorded: Option<&str>,
    tail: &[String],
    log: Option<&str>,
    out: &mut dyn Write,
) -> io::Result<()> {
    if reason.starts_with(NO_SETUP) {
        writeln!(
            out,
            "cannot test: verify.sh failed on tree {tree} after {}, but with {reason}; not proven, and not a failure of the code",
            seconds(duration_ms)
        )?;
    } else {
        writeln!(
            out,
            "cannot test: verify.sh says tree {tree} cannot be tested ({reason} after {}); not proven, and not a failure of the code",
            seconds(duration_ms)
        )?;
    }
    if let Some(notes_ref) = recorded {
        writeln!(
            out,
            "recorded as cannot test in {notes_ref} (local; git prove-it log shows it)"
        )?;
    }
    lines_and_log(tail, log, out)?;
    if reason.starts_with(NO_SETUP) {
        writeln!(out, "{SETUP_HINT}")?;
    } else {
        writeln!(
            out,
            "hint: verify.sh exits 125 when something it needs is missing; make the state testable, or let verify.sh tell a failure by another code"
        )?;
    }
    Ok(())
}

/// How the reason of a commit's run that failed without a setup starts (`run --without-setup`).
const NO_SETUP: &str = "no setup";

/// What fixes a commit's run that lacks the checkout's dependencies.
const SETUP_HINT: &str = "hint: declare how to set a commit's worktree up in prove-it.toml: setup = \"<script>\" (npm ci, uv sync, pip install -e .), and setup-inputs = [...] to run it again only when those paths change";

/// A run's last lines and where its full output is.
fn lines_and_log(tail: &[String], log: Option<&str>, out: &mut dyn Write) -> io::Result<()> {
    if !tail.is_empty() {
        writeln!(out, "last {} lines of its output:", tail.len())?;
        for line in tail {
            writeln!(out, "  {line}")?;
        }
    }
    if let Some(log) = log {
        writeln!(out, "full output: {log}")?;
    }
    Ok(())
}

fn is_zero(count: &usize) -> bool {
    *count == 0
}

/// The paths no check reads, when there are any: a count, the first ones, and the fix.
pub(crate) fn uncovered_human(
    paths: &[String],
    count: usize,
    out: &mut dyn Write,
) -> io::Result<()> {
    if count == 0 {
        return Ok(());
    }
    writeln!(
        out,
        "uncovered: {count} {} of the state {} in no check's inputs, so no check tested {}:",
        if count == 1 { "path" } else { "paths" },
        if count == 1 { "is" } else { "are" },
        if count == 1 { "it" } else { "them" },
    )?;
    for path in paths {
        writeln!(out, "  {path}")?;
    }
    if count > paths.len() {
        writeln!(out, "  ... and {} more", count - paths.len())?;
    }
    writeln!(
        out,
        "hint: add them to the inputs of the checks that read them in prove-it.toml"
    )
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
    for check in checks {
        let input = short(&check.input_tree);
        let what = check_words(&check.result);
        writeln!(out, "  {:width$}  input tree {input}  {what}", check.name)?;
    }
    let failed: Vec<&CheckRun> = checks
        .iter()
        .filter(|check| {
            matches!(
                check.result,
                RunResult::Failed { .. } | RunResult::StateChanged { .. }
            )
        })
        .collect();
    let untestable: Vec<&CheckRun> = checks
        .iter()
        .filter(|check| matches!(check.result, RunResult::CannotTest { .. }))
        .collect();
    for check in &failed {
        failed_check_human(check, out)?;
    }
    for check in &untestable {
        if let RunResult::CannotTest { tail, log, .. } = &check.result {
            writeln!(
                out,
                "check {} ({}) cannot test its inputs:",
                check.name, check.run
            )?;
            lines_and_log(tail, log.as_deref(), out)?;
        }
    }
    if failed.is_empty() && !untestable.is_empty() {
        untestable_verdict(tree, checks.len(), &untestable, out)
    } else if failed.is_empty() {
        proven_verdict(tree, checks, out)
    } else {
        let names: Vec<&str> = failed.iter().map(|c| c.name.as_str()).collect();
        writeln!(
            out,
            "not proven: tree {tree}, {} of {} checks failed: {}",
            failed.len(),
            checks.len(),
            names.join(", ")
        )
    }
}

/// What a check's line says of its result, after its name and input tree.
fn check_words(result: &RunResult) -> String {
    match result {
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
        RunResult::StateChanged { .. } => "not proven: its inputs changed while it ran".to_string(),
        RunResult::CannotTest { reason, .. } => format!("cannot test: {reason}"),
        RunResult::NotArmed { reason, .. } => format!("not armed: {reason}"),
        RunResult::Checks { .. } => String::new(),
    }
}

/// A check that failed, or whose inputs changed while it ran, in full: its last lines and log,
/// or the paths that changed.
fn failed_check_human(check: &CheckRun, out: &mut dyn Write) -> io::Result<()> {
    match &check.result {
        RunResult::Failed { tail, log, .. } => {
            writeln!(out, "check {} ({}):", check.name, check.run)?;
            lines_and_log(tail, log.as_deref(), out)?;
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
    Ok(())
}

/// The verdict when no check failed and some cannot test the state: which, of how many, and
/// the setup hint when a commit's run lacked its setup.
fn untestable_verdict(
    tree: &str,
    count: usize,
    untestable: &[&CheckRun],
    out: &mut dyn Write,
) -> io::Result<()> {
    let names: Vec<&str> = untestable.iter().map(|c| c.name.as_str()).collect();
    writeln!(
        out,
        "cannot test: tree {tree}, {} of {count} checks cannot test it: {}; not proven, and not a failure of the code",
        untestable.len(),
        names.join(", ")
    )?;
    let no_setup = untestable.iter().find_map(|check| match &check.result {
        RunResult::CannotTest { reason, .. } if reason.starts_with(NO_SETUP) => Some(reason),
        _ => None,
    });
    if let Some(reason) = no_setup {
        writeln!(out, "they failed with {reason}")?;
        writeln!(out, "{SETUP_HINT}")?;
    }
    Ok(())
}

/// The verdict when every check stands: proven, the protected paths the proofs went through,
/// and that nothing ran when every proof was found.
fn proven_verdict(tree: &str, checks: &[CheckRun], out: &mut dyn Write) -> io::Result<()> {
    writeln!(out, "proven: tree {tree}, all {} checks", checks.len())?;
    // Every check of one run is made against the same baseline: the first proof says it.
    if let Some(proof) = checks.iter().find_map(|c| match &c.result {
        RunResult::Proven { proof, .. } => Some(proof),
        _ => None,
    }) {
        protection_human(proof, out)?;
    }
    let ran = checks
        .iter()
        .filter(|c| matches!(c.result, RunResult::Proven { .. }))
        .count();
    if ran == 0 {
        writeln!(out, "nothing was run; use --force to run the checks again")?;
    }
    Ok(())
}

/// After a proof made through weakened or changed protected paths (SPEC.md section 2.2): what
/// was weakened and changed since the baseline (HEAD, or its first parent for a clean checkout).
fn protection_human(proof: &ProofSummary, out: &mut dyn Write) -> io::Result<()> {
    if !proof.weakened.is_empty() {
        writeln!(
            out,
            "BOUNDED_CLAIM_SURVIVES: protected tests or configs weakened since HEAD (or its first parent):"
        )?;
        for finding in &proof.weakened {
            writeln!(out, "  {finding}")?;
        }
        writeln!(
            out,
            "hint: review it with 'git prove-it log -p' once committed; 'git prove-it check --strict' refuses it unless --allow-weakened"
        )?;
    }
    if !proof.changed.is_empty() {
        writeln!(
            out,
            "protected files changed (shown for review): {}",
            proof.changed.join(" ")
        )?;
    }
    Ok(())
}
