use std::io::Write;

use anyhow::Context as _;

use crate::exit;
use crate::git::Repo;
use crate::report::{self, CheckReport, CommitReport, JSON_VERSION};
use crate::standing::classify;

/// Check that commits are proven: CI's command. Runs nothing.
///
/// A commit is proven when the note on its tree under refs/notes/prove-it holds a valid record:
/// one for that tree, written by a run of the verify.sh that tree holds. Hand-written, malformed
/// or mismatched records never count. Proofs live in notes, which clones do not fetch: run
/// 'git prove-it sync' (or fetch refs/notes/prove-it) first.
///
/// Exit status: 0 every commit is proven, 1 some commit is not (each is listed), 2 usage or
/// repository error.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// Commits to check: revisions, or ranges such as main..HEAD, of which the tip is checked
    /// [default: HEAD].
    #[arg(value_name = "REV")]
    revs: Vec<String>,

    /// Check every commit of the range, not only its tip.
    #[arg(long)]
    all: bool,

    /// Refuse proofs made through an edited verify.sh (BOUNDED_CLAIM_SURVIVES).
    #[arg(long)]
    strict: bool,

    /// Print the result as one JSON object on stdout.
    #[arg(long)]
    json: bool,
}

pub(crate) fn run(args: &Args, out: &mut dyn Write) -> Result<u8, super::Failure> {
    let cwd = std::env::current_dir().context("could not read the current directory")?;
    let repo = Repo::discover(&cwd)?;
    let selection = repo.select(&args.revs)?;
    let ids = if args.all {
        repo.walk(&selection, None)?
    } else {
        let mut tips = selection.tips.clone();
        let mut seen = std::collections::HashSet::new();
        tips.retain(|id| seen.insert(*id));
        tips
    };
    let commits: Vec<CommitReport> = repo
        .commits_with_notes(&ids)?
        .into_iter()
        .map(|(info, note)| CommitReport::new(&classify(info, note.as_deref()), args.strict))
        .collect();
    let proven = commits.iter().all(|c| c.proven);
    let report = CheckReport {
        version: JSON_VERSION,
        outcome: if proven { "PROVEN" } else { "NOT_PROVEN" },
        proven,
        strict: args.strict,
        commits,
    };
    if args.json {
        report::json(&report, out)?;
    } else {
        report.human(out)?;
    }
    Ok(if proven { exit::OK } else { exit::NOT_PROVEN })
}
