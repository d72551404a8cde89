//! The ledger as `git prove-it ledger` prints it, and the summary lines a ledger entry keeps.

use std::io::{self, Write};

use serde::Serialize;

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

/// One ledger line as `ledger` shows it, field for field as the ledger stores it (its JSON is
/// the ledger's own).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
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

#[derive(Debug, Serialize)]
pub(crate) struct LedgerReport {
    pub version: u32,
    pub entries: Vec<LedgerEntry>,
    /// Lines that are not ledger entries, kept verbatim.
    pub unreadable: Vec<String>,
}

impl LedgerReport {
    pub(crate) fn human(&self, out: &mut dyn Write) -> io::Result<()> {
        if self.entries.is_empty() {
            writeln!(out, "the ledger is empty")?;
        }
        for entry in &self.entries {
            let exit = entry
                .exit_code
                .map_or_else(|| "-".to_string(), |c| c.to_string());
            writeln!(
                out,
                "{} {} session {} attempt {} exit {}",
                entry.ts,
                entry.host,
                super::short(&entry.session),
                entry.attempt,
                exit
            )?;
            if let Some(claim) = &entry.claim {
                writeln!(out, "    claimed: {}", one_line(claim, 200))?;
            }
            writeln!(out, "    demanded: {}", entry.evidence_demanded)?;
            writeln!(out, "    actual: {}", entry.actual.join(" | "))?;
        }
        for line in &self.unreadable {
            writeln!(out, "unreadable ledger line: {}", one_line(line, 200))?;
        }
        Ok(())
    }
}

fn one_line(text: &str, cap: usize) -> String {
    let flat = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if flat.chars().count() <= cap {
        flat
    } else {
        let mut cut: String = flat.chars().take(cap).collect();
        cut.push_str(" [...]");
        cut
    }
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
