//! The ledger of refused turns, as the gate writes it: what was demanded, what verify.sh (or
//! the gate) showed, and what the agent claimed. Stored by `git::ledger`.

use time::format_description::well_known::Rfc3339;

use super::decide::{Tampered, Why};
use super::error::Error;
use super::event::Stop;
use super::host::HostRules;
use super::observe::worktree;
use crate::context::Context;
use crate::git::ledger;

/// One ledger line (DESIGN section 3).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub(crate) struct LedgerEntry {
    pub ts: String,
    pub repo: String,
    pub host: String,
    pub session: String,
    /// The agent's last message: what it claimed when it tried to end the turn.
    pub claim: Option<String>,
    pub evidence_demanded: String,
    pub exit_code: Option<i32>,
    /// The summary line(s) seen in verify.sh's output, or what happened instead.
    pub actual: Vec<String>,
    pub attempt: u32,
}

/// What the ledger says was demanded of every turn.
const EVIDENCE_DEMANDED: &str = "verify.sh exit 0";

/// How many summary lines an entry keeps.
const SUMMARY_LINES: usize = 3;

/// The line(s) of verify.sh's output that say how it went ("3 failed, 41 passed"): lines with a
/// number and a test-runner word; else the last line; else how it exited.
pub(crate) fn summary_lines(tail: &[String], exit: &str) -> Vec<String> {
    const WORDS: [&str; 11] = [
        "passed", "failed", "failures", "failure", "errors", "error", "skipped", "ok", "pass",
        "fail", "warnings",
    ];
    let summaries: Vec<String> = tail
        .iter()
        .map(|line| line.trim())
        .filter(|line| {
            let lower = line.to_ascii_lowercase();
            line.chars().any(|c| c.is_ascii_digit())
                && lower
                    .split(|c: char| !c.is_ascii_alphabetic())
                    .any(|word| WORDS.contains(&word))
        })
        .map(str::to_string)
        .collect();
    if !summaries.is_empty() {
        let skip = summaries.len().saturating_sub(SUMMARY_LINES);
        return summaries.into_iter().skip(skip).collect();
    }
    match tail.iter().rev().map(|l| l.trim()).find(|l| !l.is_empty()) {
        Some(last) => vec![last.to_string()],
        None => vec![exit.to_string()],
    }
}

/// What the ledger says verify.sh (or the gate) showed for a refusal.
pub(crate) fn ledger_actual(why: &Why) -> (Option<i32>, Vec<String>) {
    match why {
        Why::Failed {
            exit,
            exit_code,
            tail,
        } => (*exit_code, summary_lines(tail, exit)),
        Why::Disarmed { reason } => (None, vec![format!("verify.sh {reason}")]),
        Why::Weakened(weakened) => (None, vec![weakened.to_string()]),
        Why::Content { message } => (None, vec![message.clone()]),
        Why::StateChanged { paths } => (
            None,
            vec![format!("verify.sh changed {} path(s)", paths.len())],
        ),
        Why::AnchorTampered(tampered) => (
            None,
            vec![
                match tampered {
                    Tampered::Missing => "the session's anchor was deleted",
                    Tampered::Changed => "the session's anchor was rewritten",
                    Tampered::Unsealed => "the session's own copy of its anchor is missing",
                }
                .to_string(),
            ],
        ),
        Why::VerifyEdited => (None, vec!["verify.sh edited (verifyEdits = block)".into()]),
        Why::DirtySubmodules { paths } => (
            None,
            vec![format!("dirty submodule(s): {}", paths.join(", "))],
        ),
    }
}

/// Append one line to the ledger of refused turns.
pub(crate) fn append_ledger(
    ctx: &Context,
    host: &dyn HostRules,
    event: &Stop,
    exit_code: Option<i32>,
    actual: Vec<String>,
    // The gate's previous answer in this session (ns since the epoch): a transcript message
    // older than it is no claim of this turn's.
    previous_answer: Option<u64>,
) -> Result<(), Error> {
    let entry = LedgerEntry {
        ts: ctx
            .clock
            .now_seconds()
            .format(&Rfc3339)
            .expect("a UTC time within the year range of the clock formats as RFC 3339"),
        repo: worktree(&ctx.repo)?.display().to_string(),
        host: host.name().to_string(),
        session: event.session.clone(),
        claim: host.claim(event, previous_answer),
        evidence_demanded: EVIDENCE_DEMANDED.to_string(),
        exit_code,
        actual,
        attempt: 1,
    };
    ledger::append(&ctx.repo, &entry)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(text: &str) -> Vec<String> {
        text.lines().map(str::to_string).collect()
    }

    #[test]
    fn picks_the_test_runners_summary() {
        let tail = lines(
            "running 44 tests\ntest a ... FAILED\n\ntest result: FAILED. 41 passed; 3 failed\nerror: test failed",
        );
        assert_eq!(
            summary_lines(&tail, "exit code 101"),
            vec!["test result: FAILED. 41 passed; 3 failed"]
        );
        assert_eq!(
            summary_lines(&lines("= 3 failed, 41 passed in 2.1s ="), "exit code 1"),
            vec!["= 3 failed, 41 passed in 2.1s ="]
        );
    }

    #[test]
    fn falls_back_to_the_last_line_then_the_exit() {
        assert_eq!(
            summary_lines(&lines("lint problems\nbad style here\n"), "exit code 1"),
            vec!["bad style here"]
        );
        assert_eq!(
            summary_lines(&[], "timed out after 5 s"),
            vec!["timed out after 5 s"]
        );
    }
}
