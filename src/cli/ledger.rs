//! `git prove-it ledger`: the gate's refusals and unverified turns, read back.

use std::io::Write;

use anyhow::Context as _;

use crate::context::Context;
use crate::gate::{LedgerEntry, summarize_ledger};
use crate::git::{Repo, ledger};
use crate::report::{self, JSON_VERSION, LedgerReport, LedgerSummaryReport, could_not};

/// Print the ledger: one entry for the first refusal of each agent turn the gate sent back,
/// one for each turn that ended unverified (after the last block, skipped, or not checked),
/// and one for each stop that passed on a run made ahead of it (proving ahead: "answered by a
/// run made ahead", with how long the stop waited), oldest first, newest last.
///
/// Each entry holds the time, the worktree, the host and session, what the agent claimed (its
/// last message, or Claude Code's transcript's last answer when the payload has none), the
/// evidence demanded (verify.sh exit 0), the exit code, the summary lines verify.sh printed,
/// the attempt, and the outcome (DISPROVEN for a block, NOT_PROVEN for a turn that ended
/// unverified). The gate writes it only when PROVE_IT_LEDGER=1 or git config prove-it.ledger
/// is true; when it is off, this says so and how to turn it on. The ledger is local:
/// $(git rev-parse --git-common-dir)/prove-it/ledger.jsonl.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// Print one JSON object holding every entry (or the summary).
    #[arg(long)]
    json: bool,

    /// Print counts instead of entries: per repository and host, how many turns ended
    /// unverified, and a hint when the same exit code recurs.
    #[arg(long)]
    summary: bool,
}

pub(crate) fn run(args: &Args, out: &mut dyn Write) -> Result<u8, super::Failure> {
    let cwd = std::env::current_dir().context(could_not::read_the_current_directory())?;
    let ctx = Context::resolve(Repo::discover(&cwd)?, None);
    let enabled = ctx.gate.clone()?.ledger;
    let repo = &ctx.repo;
    let mut entries = Vec::new();
    let mut unreadable = Vec::new();
    for line in ledger::read::<LedgerEntry>(repo)? {
        match line {
            Ok(entry) => entries.push(entry),
            Err(text) => unreadable.push(text),
        }
    }
    if args.summary {
        let report = LedgerSummaryReport {
            version: JSON_VERSION,
            enabled,
            summary: summarize_ledger(&entries),
            unreadable: unreadable.len(),
        };
        if args.json {
            report::json(&report, out)?;
        } else {
            report.human(out)?;
        }
        return Ok(crate::exit::OK);
    }
    let report = LedgerReport {
        version: JSON_VERSION,
        enabled,
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
