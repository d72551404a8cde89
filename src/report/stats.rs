//! `log --stats`: the share of a range's commits that are proven, and signed; how many proofs
//! were flaky, and how many commits have a failure on record.

use std::io::{self, Write};

use serde::Serialize;

use super::CommitReport;
use crate::proof::SignatureStatus;

/// How many of a range's commits are proven and signed.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct StatsReport {
    pub version: u32,
    /// The commits listed (the range, up to `-n`).
    pub commits: usize,
    /// Commits with a proof that counts, those through an edited verify.sh included.
    pub proven: usize,
    /// Of `proven`, those proven only through an edited verify.sh.
    pub proven_edited: usize,
    /// `proven` as a whole percentage of `commits`, rounded down; null without commits.
    pub proven_percent: Option<u64>,
    /// Proven commits whose proof has a good signature by an allowed signer; null when no
    /// allowed signers file was given or configured, so no signature was checked.
    pub signed: Option<usize>,
    pub signed_percent: Option<u64>,
    /// Of `proven`, those whose proof (or a check's) passed only after failed runs
    /// (`flaky: N` in the record, under `prove-it.retries`).
    pub flaky: usize,
    /// Commits not proven with a failure on record (`refs/notes/prove-it-failures`) for their
    /// state, or one of their checks.
    pub failed: usize,
}

impl StatsReport {
    /// The counts over `commits` (as `log` reports them, not strict); `signatures_checked`
    /// says whether an allowed signers file was in force.
    pub(crate) fn new(version: u32, commits: &[CommitReport], signatures_checked: bool) -> Self {
        let proven: Vec<&CommitReport> = commits.iter().filter(|c| c.proven).collect();
        let signed = signatures_checked.then(|| {
            proven
                .iter()
                .filter(|c| c.signature.as_ref().is_some_and(SignatureStatus::is_good))
                .count()
        });
        let total = commits.len();
        StatsReport {
            version,
            commits: total,
            proven: proven.len(),
            proven_edited: proven
                .iter()
                .filter(|c| c.status == "proven-edited")
                .count(),
            proven_percent: percent(proven.len(), total),
            signed,
            signed_percent: signed.and_then(|s| percent(s, total)),
            flaky: proven.iter().filter(|c| c.flaky() > 0).count(),
            failed: commits.iter().filter(|c| c.has_failure()).count(),
        }
    }

    /// `proven 41 of 50 commits (82%), signed 30 (60%)`, and what the numbers leave out.
    pub(crate) fn human(&self, out: &mut dyn Write) -> io::Result<()> {
        let share = |p: Option<u64>| p.map_or(String::new(), |p| format!(" ({p}%)"));
        write!(
            out,
            "proven {} of {} commit{}{}",
            self.proven,
            self.commits,
            if self.commits == 1 { "" } else { "s" },
            share(self.proven_percent)
        )?;
        match self.signed {
            Some(signed) => writeln!(out, ", signed {signed}{}", share(self.signed_percent))?,
            None => writeln!(out, "; signatures not checked")?,
        }
        if self.proven_edited > 0 {
            writeln!(
                out,
                "  {} of them only through an edited verify.sh (BOUNDED_CLAIM_SURVIVES)",
                self.proven_edited
            )?;
        }
        if self.flaky > 0 {
            writeln!(
                out,
                "  {} of them flaky: passed only after failed runs (prove-it.retries)",
                self.flaky
            )?;
        }
        if self.failed > 0 {
            writeln!(
                out,
                "failed {} of {} commit{}: a failure is on record ('git prove-it log' shows it)",
                self.failed,
                self.commits,
                if self.commits == 1 { "" } else { "s" }
            )?;
        }
        if self.signed.is_none() {
            writeln!(
                out,
                "hint: to count signed proofs, name an allowed signers file: git config prove-it.allowedSigners FILE, or --allowed-signers FILE"
            )?;
        }
        Ok(())
    }
}

/// `part` of `whole` as a whole percentage, rounded down so that 99.6% never reads as 100%.
fn percent(part: usize, whole: usize) -> Option<u64> {
    (whole > 0).then(|| (part as u64 * 100) / whole as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_share_is_rounded_down_and_none_without_commits() {
        assert_eq!(percent(41, 50), Some(82));
        assert_eq!(percent(199, 200), Some(99));
        assert_eq!(percent(3, 3), Some(100));
        assert_eq!(percent(0, 7), Some(0));
        assert_eq!(percent(0, 0), None);
    }

    #[test]
    fn flaky_proofs_and_failures_on_record_are_counted_and_said() {
        let stats = StatsReport {
            version: 1,
            commits: 4,
            proven: 2,
            proven_edited: 0,
            proven_percent: Some(50),
            signed: None,
            signed_percent: None,
            flaky: 1,
            failed: 2,
        };
        let mut out = Vec::new();
        stats.human(&mut out).unwrap();
        let out = String::from_utf8(out).unwrap();
        assert!(
            out.contains("  1 of them flaky: passed only after failed runs (prove-it.retries)\n"),
            "{out}"
        );
        assert!(
            out.contains(
                "failed 2 of 4 commits: a failure is on record ('git prove-it log' shows it)\n"
            ),
            "{out}"
        );
    }
}
