use std::io::Write;

use anyhow::Context as _;

use crate::gate::LedgerEntry;
use crate::git::{Repo, ledger};
use crate::report::{self, JSON_VERSION, LedgerReport};

/// Print the ledger: one entry per agent turn the gate refused, skipped or could not check,
/// oldest first, newest last.
///
/// Each entry holds the time, the worktree, the host and session, what the agent claimed (its
/// last message), the evidence demanded (verify.sh exit 0), the exit code and the summary lines
/// verify.sh printed. The gate writes it only when PROVE_IT_LEDGER=1 or git config
/// prove-it.ledger is true. The ledger is local: $(git rev-parse --git-common-dir)/prove-it/ledger.jsonl.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// Print one JSON object holding every entry.
    #[arg(long)]
    json: bool,
}

pub(crate) fn run(args: &Args, out: &mut dyn Write) -> Result<u8, super::Failure> {
    let cwd = std::env::current_dir().context("could not read the current directory")?;
    let repo = Repo::discover(&cwd)?;
    let mut entries = Vec::new();
    let mut unreadable = Vec::new();
    for line in ledger::read::<LedgerEntry>(&repo)? {
        match line {
            Ok(entry) => entries.push(entry),
            Err(text) => unreadable.push(text),
        }
    }
    let report = LedgerReport {
        version: JSON_VERSION,
        entries,
        unreadable,
    };
    if args.json {
        report::json(&report, out)?;
    } else {
        report.human(out)?;
    }
    Ok(crate::exit::OK)
}
