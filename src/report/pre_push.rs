use std::io::{self, Write};

use super::SyncReport;

/// After a push went through the hook: where its proofs went.
pub(crate) fn proofs_sent(sync: &SyncReport, err: &mut dyn Write) -> io::Result<()> {
    if sync.pushed {
        writeln!(err, "prove-it: proofs sent to {}", sync.remote)
    } else {
        Ok(())
    }
}

/// After a push went through the hook but its proofs could not follow.
pub(crate) fn proofs_not_sent(
    remote: &str,
    error: &(dyn std::error::Error + 'static),
    err: &mut dyn Write,
) -> io::Result<()> {
    writeln!(
        err,
        "prove-it: warning: the push goes on, but its proofs were not sent to {remote}: {error}"
    )?;
    let mut source = error.source();
    while let Some(cause) = source {
        writeln!(err, "caused by: {cause}")?;
        source = cause.source();
    }
    writeln!(
        err,
        "hint: send them later with 'git prove-it sync {remote}'"
    )
}
