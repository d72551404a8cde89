//! What `doctor` says: one line per check, `ok`, `warn` or `FAIL`, with a `fix:` line for each
//! that is not ok.

use std::io::{self, Write};

use serde::Serialize;

use crate::setup::doctor::{Finding, Health};

/// Everything `git prove-it doctor` found.
#[derive(Debug, Serialize)]
pub(crate) struct DoctorReport {
    pub version: u32,
    /// No check failed.
    pub ok: bool,
    /// Records put back by `--restore`.
    pub restored: usize,
    /// Notes of trees no commit holds dropped by `--prune-unreachable`.
    pub pruned: usize,
    pub checks: Vec<Finding>,
}

impl DoctorReport {
    pub(crate) fn human(&self, out: &mut dyn Write) -> io::Result<()> {
        if self.restored > 0 {
            writeln!(
                out,
                "restored {} overwritten proof note{} into refs/notes/prove-it",
                self.restored,
                if self.restored == 1 { "" } else { "s" }
            )?;
        }
        if self.pruned > 0 {
            writeln!(
                out,
                "dropped {} note{} of trees no commit holds from refs/notes/prove-it",
                self.pruned,
                if self.pruned == 1 { "" } else { "s" }
            )?;
        }
        for finding in &self.checks {
            let status = match finding.status {
                Health::Ok => "ok",
                Health::Warn => "warn",
                Health::Fail => "FAIL",
            };
            writeln!(out, "{status:<4}  {}", finding.what)?;
            if let Some(fix) = &finding.fix {
                writeln!(out, "      fix: {fix}")?;
            }
        }
        let failed = self
            .checks
            .iter()
            .filter(|f| f.status == Health::Fail)
            .count();
        if failed > 0 {
            writeln!(
                out,
                "{failed} problem{} to fix",
                if failed == 1 { "" } else { "s" }
            )?;
        }
        Ok(())
    }
}
