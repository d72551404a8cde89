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
    let summaries: Vec<String> = tail
        .iter()
        .map(|line| line.trim())
        .filter(|line| is_summary_line(line))
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

/// A test runner's summary line ("3 failed, 41 passed"): a number and a test-runner word.
fn is_summary_line(line: &str) -> bool {
    const WORDS: [&str; 11] = [
        "passed", "failed", "failures", "failure", "errors", "error", "skipped", "ok", "pass",
        "fail", "warnings",
    ];
    let lower = line.to_ascii_lowercase();
    line.chars().any(|c| c.is_ascii_digit())
        && lower
            .split(|c: char| !c.is_ascii_alphabetic())
            .any(|word| WORDS.contains(&word))
}

/// How many of a failure's key lines found before the last lines a block adds.
const KEY_LINES: usize = 12;

/// A line that says how a run failed wherever it stands in the output: a summary line (as the
/// ledger's `actual` picks), a panic, an assertion and its `left:`/`right:` values, a
/// `FAILED`, `FAIL` or `Error` line, a traceback's start.
fn is_key_line(line: &str) -> bool {
    let line = line.trim();
    let lower = line.to_ascii_lowercase();
    is_summary_line(line)
        || line.contains("panicked at")
        || line.starts_with("left:")
        || line.starts_with("right:")
        || lower.contains("assertion")
        || line.contains("FAILED")
        || line.starts_with("FAIL")
        || line.starts_with("Error")
        || line.starts_with("ERROR")
        || line.starts_with("error:")
        || line.starts_with("error[")
        || line.contains("Error: ")
        || line.starts_with("Traceback")
}

/// The failure's key lines in `output` before its last `tail_len` lines (which the block shows
/// anyway), at most [`KEY_LINES`], first first: with `RUST_BACKTRACE=1` the last lines of a
/// failing `cargo test` are backtrace frames, and the assertion's values come before them.
pub(crate) fn earlier_key_lines(output: &str, tail_len: usize) -> Vec<String> {
    let lines: Vec<&str> = output.lines().collect();
    let earlier = &lines[..lines.len().saturating_sub(tail_len)];
    let mut keys: Vec<String> = Vec::new();
    for line in earlier.iter().filter(|line| is_key_line(line)) {
        let line = line.trim_end();
        if keys.last().is_none_or(|last| last != line) {
            keys.push(line.to_string());
        }
        if keys.len() == KEY_LINES {
            break;
        }
    }
    keys
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
    fn finds_the_assertion_before_a_backtrace() {
        let mut output = String::from(
            "running 1 test\ntest t ... FAILED\n\nfailures:\n\n---- t stdout ----\n\
             thread 't' panicked at src/lib.rs:5:9:\nassertion `left == right` failed\n  left: 1\n right: 2\n\
             stack backtrace:\n",
        );
        for frame in 0..40 {
            output.push_str(&format!("  {frame}: core::panicking::panic_fmt\n             at /rustc/x/library/core/src/panicking.rs:75:14\n"));
        }
        output.push_str("test result: FAILED. 0 passed; 1 failed\n");
        assert_eq!(
            earlier_key_lines(&output, 20),
            [
                "test t ... FAILED",
                "thread 't' panicked at src/lib.rs:5:9:",
                "assertion `left == right` failed",
                "  left: 1",
                " right: 2",
            ]
        );
        assert!(earlier_key_lines("a\nb\n", 20).is_empty());
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
