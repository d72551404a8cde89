//! The ledger as `git prove-it ledger` prints it.

use std::io::{self, Write};

use serde::Serialize;

use crate::gate::LedgerEntry;

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
