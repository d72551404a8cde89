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
}

impl SyncReport {
    pub(crate) fn human(&self, out: &mut dyn Write) -> io::Result<()> {
        let remote = &self.remote;
        if !self.fetched && !self.pushed {
            return writeln!(
                out,
                "sync: neither {remote} nor this repository has proofs yet"
            );
        }
        let fetched = match (self.fetched, self.merge) {
            (false, _) => format!("{remote} has no proofs yet"),
            (true, "fast_forward") => format!("fetched new proofs from {remote}"),
            (true, "merged") => format!(
                "merged proofs from {remote} into ours ({} note{} gained records)",
                self.notes_merged,
                if self.notes_merged == 1 { "" } else { "s" }
            ),
            (true, _) => format!("nothing new from {remote}"),
        };
        let pushed = if self.pushed {
            format!("pushed our proofs to {remote}")
        } else {
            format!("{remote} has all our proofs")
        };
        writeln!(out, "sync: {fetched}; {pushed}")
    }
}
