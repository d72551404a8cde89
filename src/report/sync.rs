//! What `sync` (and the pre-push hook sending proofs along) says it fetched, merged and pushed.

use std::io::{self, Write};

use serde::Serialize;

/// What `git prove-it sync` (and the pre-push hook, sending proofs along) did; `cli/sync.rs`
/// fills it from what the repository reports.
#[derive(Debug, Serialize)]
pub(crate) struct SyncReport {
    pub version: u32,
    pub remote: String,
    /// The remote had proofs, and they were fetched.
    pub fetched: bool,
    /// up_to_date, fast_forward or merged.
    pub merge: &'static str,
    /// Notes that gained records from the remote in a merge.
    pub notes_merged: usize,
    /// The local proofs were pushed to the remote.
    pub pushed: bool,
    /// Local notes the remote lacks that stayed here: they name trees no commit holds.
    pub kept_local: usize,
    /// What became of the failure records, with `--with-failures` (absent without).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub failures: Option<SyncedNotes>,
}

/// What `sync --with-failures` did with the failure records (refs/notes/prove-it-failures).
#[derive(Debug, Serialize)]
pub(crate) struct SyncedNotes {
    /// The remote had failure records, and they were fetched.
    pub fetched: bool,
    /// up_to_date, fast_forward or merged.
    pub merge: &'static str,
    /// Notes that gained records from the remote in a merge.
    pub notes_merged: usize,
    /// The local failure records were pushed to the remote.
    pub pushed: bool,
    /// Local notes the remote lacks that stayed here: they name trees no commit holds.
    pub kept_local: usize,
}

impl SyncReport {
    pub(crate) fn human(&self, out: &mut dyn Write) -> io::Result<()> {
        let proofs = SyncedNotes {
            fetched: self.fetched,
            merge: self.merge,
            notes_merged: self.notes_merged,
            pushed: self.pushed,
            kept_local: self.kept_local,
        };
        writeln!(out, "sync: {}", proofs.words(&self.remote, "proofs"))?;
        if let Some(failures) = &self.failures {
            writeln!(
                out,
                "sync: failures: {}",
                failures.words(&self.remote, "failure records")
            )?;
        }
        Ok(())
    }
}

impl SyncedNotes {
    /// What happened to one notes ref, `what` naming its notes: `remote has no proofs yet;
    /// pushed our proofs to remote`.
    fn words(&self, remote: &str, what: &str) -> String {
        if !self.fetched && !self.pushed && self.kept_local == 0 {
            return format!("neither {remote} nor this repository has {what} yet");
        }
        let fetched = match (self.fetched, self.merge) {
            (false, _) => format!("{remote} has no {what} yet"),
            (true, "fast_forward") => format!("fetched new {what} from {remote}"),
            (true, "merged") => format!(
                "merged {what} from {remote} into ours ({} note{} gained records)",
                self.notes_merged,
                if self.notes_merged == 1 { "" } else { "s" }
            ),
            (true, _) => format!("nothing new from {remote}"),
        };
        let pushed = match (self.pushed, self.kept_local) {
            (true, _) => format!("pushed our {what} to {remote}"),
            (false, 0) => format!("{remote} has all our {what}"),
            (false, _) => format!("{remote} has all our {what} of committed trees"),
        };
        if self.kept_local == 0 {
            return format!("{fetched}; {pushed}");
        }
        format!(
            "{fetched}; {pushed}; {} note{} of trees no commit holds stay{} here",
            self.kept_local,
            if self.kept_local == 1 { "" } else { "s" },
            if self.kept_local == 1 { "s" } else { "" }
        )
    }
}
