use clap::{Parser, Subcommand};

use super::{Failure, run, status};

/// Turn "done" from a word into a check: a repository's verify.sh, recorded as proofs in git
/// notes keyed by the tree of the working state.
///
/// A repository declares how to prove itself in an executable verify.sh at its root. A passing
/// run is recorded as a signed-off note on the state tree under refs/notes/prove-it, so a state
/// proven once is never checked again.
#[derive(Debug, Parser)]
#[command(
    name = "git-prove-it",
    bin_name = "git prove-it",
    version,
    max_term_width = 100
)]
pub struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    Run(run::Args),
    Status(status::Args),
}

/// Run the parsed command line and return the process exit code (see `exit`).
pub fn execute(cli: Cli) -> Result<u8, Failure> {
    let mut out = std::io::stdout().lock();
    let mut err = std::io::stderr().lock();
    match cli.command {
        Command::Run(args) => run::run(&args, &mut out, &mut err),
        Command::Status(args) => status::run(&args, &mut out),
    }
}

#[cfg(test)]
mod tests {
    use clap::CommandFactory;

    use super::Cli;

    #[test]
    fn the_cli_definition_is_consistent() {
        Cli::command().debug_assert();
    }

    /// The committed man page is generated from the clap definitions; this fails when it is
    /// stale. Regenerate with `PROVE_IT_BLESS=1 cargo test man_page`.
    #[test]
    fn man_page_is_not_stale() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("man/git-prove-it.1");
        let mut rendered = Vec::new();
        clap_mangen::Man::new(Cli::command().name("git-prove-it"))
            .render(&mut rendered)
            .unwrap();
        for sub in Cli::command().get_subcommands() {
            let name = format!("git-prove-it-{}", sub.get_name());
            clap_mangen::Man::new(sub.clone().name(name))
                .render_subcommand_sections(&mut rendered)
                .ok();
        }
        if std::env::var_os("PROVE_IT_BLESS").is_some() {
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(&path, &rendered).unwrap();
        }
        let committed = std::fs::read(&path).unwrap_or_default();
        assert!(
            committed == rendered,
            "man/git-prove-it.1 is stale: run PROVE_IT_BLESS=1 cargo test man_page"
        );
    }
}
