use std::io::{self, Write};

use crate::outcome::Outcome;
use serde::Serialize;

use super::ProofSummary;

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
}

impl StatusReport {
    pub(crate) fn human(&self, out: &mut dyn Write) -> io::Result<()> {
        match self.not_armed_reason {
            None => writeln!(out, "verify.sh:  armed")?,
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
        match &self.proof {
            Some(proof) => writeln!(out, "proof:      {} {}", proof.outcome, proof.by_line())?,
            None if self.armed && self.dirty_submodules.is_empty() => writeln!(
                out,
                "proof:      none (run 'git prove-it run' to prove this state)"
            )?,
            None => writeln!(out, "proof:      none")?,
        }
        for problem in &self.invalid {
            writeln!(out, "ignored:    {problem}")?;
        }
        for hint in &self.hints {
            writeln!(out, "hint: {hint}")?;
        }
        Ok(())
    }
}
