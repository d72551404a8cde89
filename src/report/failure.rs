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

/// An error and its causes on one line, `: `-separated, for messages that must stay one line.
pub(crate) fn error_chain(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
}
