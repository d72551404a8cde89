use std::io::{Read, Write};

/// git's own hooks (pre-push).
#[derive(Debug, clap::Args)]
pub(crate) struct Args {}

pub(crate) fn run(
    _args: &Args,
    _stdin: &mut dyn Read,
    _out: &mut dyn Write,
    _err: &mut dyn Write,
) -> Result<u8, crate::cli::Failure> {
    Err(anyhow::anyhow!("hook git is not wired yet").into())
}
