//! `git prove-it sync`: proofs exchanged with a remote by record union.

use std::io::Write;

use anyhow::Context as _;

use crate::exit;
use crate::git::{Merged, Repo, Synced, Tips};
use crate::report::{self, JSON_VERSION, SyncReport, SyncedNotes, could_not, hint};

/// Exchange proofs with a remote: fetch its refs/notes/prove-it, merge it into ours by record
/// union (no proof is ever lost, whichever side wrote it), and push the result.
///
/// Only what others can use travels: the proofs of trees a commit of the branches, tags or
/// remote-tracking branches holds (its tree, or with prove-it.toml its checks' input trees),
/// with the contests and revocations of them, and of trees the remote already has proofs of.
/// Proofs of working states no commit holds (made by stops, `run` or proving ahead) stay here,
/// counted in the report; `git prove-it doctor --prune-unreachable` drops them.
///
/// The remote's proofs are kept as last fetched in refs/notes/prove-it-remotes/REMOTE. When
/// the remote moved between our fetch and our push, it is fetched and merged again. A clone
/// without proofs of its own (CI, a bare clone included) only fetches.
///
/// Failure records (refs/notes/prove-it-failures: what failing runs printed last) stay local
/// unless --with-failures: then they are fetched, merged and pushed the same way, after the
/// proofs. The pre-push hook never sends them. Exit status: 0 done, 2 error.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// The remote to sync with [default: the current branch's upstream remote, else origin].
    remote: Option<String>,

    /// Also exchange the failure records (refs/notes/prove-it-failures), merged by record union
    /// as proofs are; their last lines of output go to whoever can read the remote.
    #[arg(long)]
    with_failures: bool,

    /// Print the result as one JSON object on stdout.
    #[arg(long)]
    json: bool,
}

pub(crate) fn run(args: &Args, out: &mut dyn Write) -> Result<u8, super::Failure> {
    let cwd = std::env::current_dir().context(could_not::read_the_current_directory())?;
    let repo = Repo::discover_history(&cwd)?;
    let remote = args.remote.clone().unwrap_or_else(|| repo.default_remote());
    let failed = |e: crate::git::Error| match e {
        // The remote was reached and said why it refused: its own hints fit better.
        crate::git::Error::PushRefused { .. } => super::Failure::from(e),
        e => super::Failure::from(e).hint(hint::check_the_remote(&remote)),
    };
    // Only what others can use travels: the notes of trees the branches, tags and
    // remote-tracking branches hold (and their checks' input trees).
    let tips = repo.commit_tips(Tips::Shared).map_err(failed)?;
    let travelling = |keys: &[gix::ObjectId]| crate::proof::held_keys(&repo, &tips, keys);
    let synced = repo
        .sync_proofs(&remote, &crate::proof::merge, &travelling)
        .map_err(failed)?;
    let mut report = SyncReport::new(JSON_VERSION, &synced);
    if args.with_failures {
        let failures = repo
            .sync_failures(&remote, &crate::proof::merge, &travelling)
            .map_err(failed)?;
        report.failures = Some(SyncedNotes::new(&failures));
    }
    if args.json {
        report::json(&report, out)?;
    } else {
        report.human(out)?;
    }
    Ok(exit::OK)
}

impl SyncReport {
    /// The report of what [`Repo::sync_proofs`] did: the renderer knows no repository types.
    pub(crate) fn new(version: u32, synced: &Synced) -> Self {
        let notes = SyncedNotes::new(synced);
        SyncReport {
            version,
            remote: synced.remote.clone(),
            fetched: notes.fetched,
            merge: notes.merge,
            notes_merged: notes.notes_merged,
            pushed: notes.pushed,
            kept_local: notes.kept_local,
            failures: None,
        }
    }
}

impl SyncedNotes {
    /// What [`Repo::sync_proofs`] or [`Repo::sync_failures`] did to one notes ref.
    fn new(synced: &Synced) -> Self {
        let (merge, notes_merged) = match synced.merged {
            Merged::UpToDate => ("up_to_date", 0),
            Merged::FastForward => ("fast_forward", 0),
            Merged::Joined { notes } => ("merged", notes),
        };
        SyncedNotes {
            fetched: synced.fetched,
            merge,
            notes_merged,
            pushed: synced.pushed,
            kept_local: synced.kept,
        }
    }
}
