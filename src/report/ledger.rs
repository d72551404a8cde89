//! The ledger as `git prove-it ledger` prints it.

use std::io::{self, Write};

use serde::Serialize;

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
