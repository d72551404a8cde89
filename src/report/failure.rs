use std::io::Write;

/// Print an error the way git does: the message, its causes, then what to do about it.
pub(crate) fn render_failure(
    error: &(dyn std::error::Error + 'static),
    hints: &[String],
    err: &mut dyn Write,
) -> std::io::Result<()> {
    writeln!(err, "error: {error}")?;
    let mut source = error.source();
    while let Some(cause) = source {
        writeln!(err, "caused by: {cause}")?;
        source = cause.source();
    }
    for hint in hints {
        writeln!(err, "hint: {hint}")?;
    }
    Ok(())
}

pub(crate) use crate::gate::error_chain;
