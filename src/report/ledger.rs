//! The ledger: the words of each line's `actual` as the gate writes it, and the ledger as
//! `git prove-it ledger` prints it.

use std::io::{self, Write};

use serde::Serialize;

use crate::gate::{AnsweredAhead, LedgerActual, LedgerEntry, LedgerSummary, Tampered, Why};
use crate::proof::CHECKS_FILE;

/// How to turn the ledger on, said wherever it is found off.
const TURN_IT_ON: &str = "hint: turn it on: git config prove-it.ledger true (or PROVE_IT_LEDGER=1 in the agent's environment)";

impl LedgerActual<'_> {
    /// What a ledger line says happened: the summary lines of a run's output where it printed
    /// some, else the gate's words for what happened.
    pub(crate) fn lines(&self) -> Vec<String> {
        let one = |line: String| vec![line];
        match *self {
            LedgerActual::Refused { summary, .. } if !summary.is_empty() => summary.to_vec(),
            LedgerActual::Refused { why, .. } => refused(why),
            LedgerActual::Skipped(None) => one("skipped by PROVE_IT_SKIP=1".to_string()),
            LedgerActual::Skipped(Some(checks)) => {
                one(format!("skipped by PROVE_IT_SKIP={}", checks.join(",")))
            }
            LedgerActual::CouldNotCheck(error) => one(format!("could not check: {error}")),
            LedgerActual::AnsweredAhead(ahead) => one(answered_ahead(ahead)),
        }
    }
}

/// A stop that passed on a run made ahead of it, and its whole wait to the tenth of a second.
fn answered_ahead(ahead: AnsweredAhead) -> String {
    let waited = format!(
        "{}.{} s",
        ahead.waited_ms / 1000,
        (ahead.waited_ms % 1000) / 100
    );
    if ahead.joined {
        format!("answered by a run made ahead: joined it, waited {waited}")
    } else {
        format!("answered by a run made ahead: proven before the stop, waited {waited}")
    }
}

/// A refusal in words, where its run printed nothing to sum it up: one line, or one per rule
/// that hides paths.
fn refused(why: &Why) -> Vec<String> {
    let line = match why {
        Why::HiddenByIgnoredRules { rules } => {
            return rules
                .iter()
                .map(|rule| format!("{} hides {} path(s) from the state", rule.rule, rule.count))
                .collect();
        }
        Why::Failed { failing, .. } => super::gate::exits(failing),
        Why::CannotTest { reason, .. } => format!("cannot test: {reason}"),
        Why::Disarmed { armed } => format!("verify.sh {}", super::armed::verify(*armed)),
        Why::ChecksFileDeleted => format!("check {CHECKS_FILE} was deleted"),
        Why::CheckDisarmed { check, script, why } => format!(
            "check {check} its script {script} {}",
            super::armed::script(*why)
        ),
        Why::Weakened(weakened) => weakened.to_string(),
        Why::Content { message } => message.clone(),
        Why::StateChanged { paths } => format!("verify.sh changed {} path(s)", paths.len()),
        Why::AnchorTampered(Tampered::Missing) => "the session's anchor was deleted".to_string(),
        Why::AnchorTampered(Tampered::Changed) => "the session's anchor was rewritten".to_string(),
        Why::AnchorTampered(Tampered::Unsealed) => {
            "the session's own copy of its anchor is missing".to_string()
        }
        Why::VerifyEdited => "verify.sh edited (verifyEdits = block)".to_string(),
        Why::DirtySubmodules { paths } => format!("dirty submodule(s): {}", paths.join(", ")),
        Why::Uncovered { count, .. } => {
            format!("{count} changed path(s) outside every check's inputs")
        }
        Why::ProtectedWeakened { findings } => format!(
            "weakened: {}",
            findings
                .iter()
                .map(super::gate::weakening)
                .collect::<Vec<_>>()
                .join("; ")
        ),
    };
    vec![line]
}

#[derive(Debug, Serialize)]
pub(crate) struct LedgerReport {
    pub version: u32,
    /// Whether the gate writes the ledger in this repository now (prove-it.ledger,
    /// PROVE_IT_LEDGER).
    pub enabled: bool,
    pub entries: Vec<LedgerEntry>,
    /// Lines that are not ledger entries, kept verbatim.
    pub unreadable: Vec<String>,
}

/// `ledger --summary`: the ledger counted.
#[derive(Debug, Serialize)]
pub(crate) struct LedgerSummaryReport {
    pub version: u32,
    pub enabled: bool,
    #[serde(flatten)]
    pub summary: LedgerSummary,
    pub unreadable: usize,
}

impl LedgerSummaryReport {
    pub(crate) fn human(&self, out: &mut dyn Write) -> io::Result<()> {
        let s = &self.summary;
        writeln!(
            out,
            "ledger: {} {}, {} turn{} ended unverified{}{}",
            s.entries,
            if s.entries == 1 { "entry" } else { "entries" },
            s.unverified,
            if s.unverified == 1 { "" } else { "s" },
            match s.answered_ahead {
                0 => String::new(),
                1 => ", 1 stop answered by a run made ahead".to_string(),
                n => format!(", {n} stops answered by a run made ahead"),
            },
            if self.enabled {
                ""
            } else {
                " (the ledger is off)"
            }
        )?;
        for group in &s.by_repo_and_host {
            writeln!(
                out,
                "  {}  {}: {} {}, {} unverified",
                group.repo,
                group.host,
                group.entries,
                if group.entries == 1 {
                    "entry"
                } else {
                    "entries"
                },
                group.unverified
            )?;
        }
        if self.unreadable > 0 {
            writeln!(out, "  {} unreadable ledger lines", self.unreadable)?;
        }
        for code in &s.recurring_exit_codes {
            writeln!(
                out,
                "hint: exit code {} recurs in {} entries: the same failure keeps coming back; see it with 'git prove-it run' and fix its cause, not its symptom",
                code.exit_code, code.entries
            )?;
        }
        if !self.enabled {
            writeln!(out, "{TURN_IT_ON}")?;
        }
        Ok(())
    }
}

impl LedgerReport {
    pub(crate) fn human(&self, out: &mut dyn Write) -> io::Result<()> {
        if self.entries.is_empty() && !self.enabled {
            writeln!(
                out,
                "the ledger is off: neither git config prove-it.ledger nor PROVE_IT_LEDGER turns it on here, so the gate records no refused turns"
            )?;
            writeln!(out, "{TURN_IT_ON}")?;
        } else if self.entries.is_empty() {
            writeln!(out, "the ledger is empty")?;
        } else if !self.enabled {
            writeln!(
                out,
                "the ledger is off here now (neither git config prove-it.ledger nor PROVE_IT_LEDGER turns it on); these entries were written while it was on"
            )?;
            writeln!(out, "{TURN_IT_ON}")?;
        }
        for entry in &self.entries {
            let exit = entry
                .exit_code
                .map_or_else(|| "-".to_string(), |c| c.to_string());
            writeln!(
                out,
                "{} {} session {} attempt {} exit {}{}",
                entry.ts,
                entry.host,
                super::short(&entry.session),
                entry.attempt,
                exit,
                entry
                    .outcome
                    .as_deref()
                    .map_or_else(String::new, |outcome| format!(" {outcome}"))
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
    use crate::gate::Failing;

    /// What a ledger line says when no run's output sums it up: the stop answered ahead (its
    /// wait to the tenth of a second), a skip, the gate's own error, a failure by its exit.
    #[test]
    fn a_ledger_line_says_what_happened_in_words() {
        let ahead = |joined| {
            LedgerActual::AnsweredAhead(AnsweredAhead {
                joined,
                waited_ms: 1234,
            })
            .lines()
        };
        assert_eq!(
            ahead(true),
            ["answered by a run made ahead: joined it, waited 1.2 s"]
        );
        assert_eq!(
            ahead(false),
            ["answered by a run made ahead: proven before the stop, waited 1.2 s"]
        );
        assert_eq!(
            LedgerActual::Skipped(None).lines(),
            ["skipped by PROVE_IT_SKIP=1"]
        );
        let checks = ["api".to_string(), "docs".to_string()];
        assert_eq!(
            LedgerActual::Skipped(Some(&checks)).lines(),
            ["skipped by PROVE_IT_SKIP=api,docs"]
        );
        assert_eq!(
            LedgerActual::CouldNotCheck("no HEAD").lines(),
            ["could not check: no HEAD"]
        );
        let failed = Why::Failed {
            failing: vec![Failing {
                check: None,
                ending: crate::gate::Ending::code(1),
                log: None,
                lines: Vec::new(),
            }],
            exit_code: Some(1),
            predates: Vec::new(),
        };
        assert_eq!(
            LedgerActual::Refused {
                why: &failed,
                summary: &[]
            }
            .lines(),
            ["exit code 1"]
        );
        let summary = ["3 failed, 41 passed".to_string()];
        assert_eq!(
            LedgerActual::Refused {
                why: &failed,
                summary: &summary
            }
            .lines(),
            summary
        );
    }
}
