//! What `revoke` and `accept` say they wrote.

use std::io::{self, Write};

use serde::Serialize;

/// What `revoke` or `accept` wrote; `cli/revoke.rs` and `cli/accept.rs` fill it.
#[derive(Debug, Serialize)]
pub(crate) struct ResolveReport {
    pub version: u32,
    /// `revoke` or `accept`.
    pub action: &'static str,
    pub reason: String,
    pub resolved: Vec<Resolved>,
}

/// One record written: the proofs of one check on one key it names.
#[derive(Debug, Serialize)]
pub(crate) struct Resolved {
    pub key: String,
    /// `verify.sh` for the root verify.sh, else the check's name.
    pub check: String,
    /// How many proofs it names, and how many contests.
    pub proofs: usize,
    pub contests: usize,
    pub signed: bool,
}

impl ResolveReport {
    pub(crate) fn human(&self, out: &mut dyn Write) -> io::Result<()> {
        let (verb, after) = match self.action {
            "revoke" => ("revoked", "they never count again"),
            _ => ("accepted", "they count, and the failures stay on record"),
        };
        for r in &self.resolved {
            let plural = if r.proofs == 1 { "" } else { "s" };
            let contests = match r.contests {
                0 => String::new(),
                1 => ", and the contest of it".to_string(),
                n => format!(", and {n} contests of them"),
            };
            let signed = if r.signed { " (signed)" } else { "" };
            writeln!(
                out,
                "{verb} {} proof{plural} of {} on tree {}{contests}{signed}",
                r.proofs,
                r.check,
                &r.key[..r.key.len().min(12)]
            )?;
        }
        writeln!(out, "{after}; reason: {}", self.reason)
    }
}
