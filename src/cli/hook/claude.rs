use std::io::{Read, Write};

/// Claude Code's hooks (SessionStart, Stop): one JSON event on stdin, the decision on stdout.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {}

pub(crate) fn run(
    _args: &Args,
    _stdin: &mut dyn Read,
    _out: &mut dyn Write,
    _err: &mut dyn Write,
) -> Result<u8, crate::cli::Failure> {
    Err(anyhow::anyhow!("hook claude is not wired yet").into())
}
