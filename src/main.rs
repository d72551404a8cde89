//! The `git-prove-it` binary: parses the command line and runs it (`cli::execute`).

use std::process::ExitCode;

use git_prove_it::{cli, exit};

/// A stop allocates and frees a path per file of the worktree: mimalloc does it for less.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    let cli = cli::Cli::from_env();
    match cli::execute(cli) {
        Ok(code) => ExitCode::from(code),
        Err(failure) if failure.is_broken_pipe() => ExitCode::from(exit::BROKEN_PIPE),
        Err(failure) => {
            let _ = failure.render(&mut std::io::stdout().lock(), &mut std::io::stderr().lock());
            ExitCode::from(exit::ERROR)
        }
    }
}
