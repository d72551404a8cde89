//! The command line (`Cli`, clap derive) and its dispatch to each command's module.

use clap::{CommandFactory, FromArgMatches, Parser, Subcommand};

use super::{
    Failure, accept, bisect, check, claim, completions, doctor, hook, init, install, install_man,
    ledger, log, prove_ahead, revoke, run, status, sync, watch,
};

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

    /// The command was asked for `--json`, so a failure is a JSON object on stdout too.
    #[arg(skip)]
    json: bool,
}

impl Cli {
    /// Parse the process's command line, noting whether the command asked for `--json`.
    pub fn from_env() -> Cli {
        let matches = Cli::command().get_matches();
        let mut cli = Cli::from_arg_matches(&matches).unwrap_or_else(|error| error.exit());
        cli.json = asks_for_json(&matches);
        cli
    }
}

/// Whether `--json` was given to the command or any subcommand on the way to it.
fn asks_for_json(matches: &clap::ArgMatches) -> bool {
    let here = matches
        .try_get_one::<bool>("json")
        .ok()
        .flatten()
        .copied()
        .unwrap_or(false);
    here || matches
        .subcommand()
        .is_some_and(|(_, sub)| asks_for_json(sub))
}

#[derive(Debug, Subcommand)]
enum Command {
    Init(init::Args),
    Run(run::Args),
    Status(status::Args),
    Check(check::Args),
    Bisect(bisect::Args),
    Log(log::Args),
    Sync(sync::Args),
    Revoke(revoke::Args),
    Accept(accept::Args),
    Doctor(doctor::Args),
    Install(install::Args),
    InstallMan(install_man::Args),
    Completions(completions::Args),
    Ledger(ledger::Args),
    Claim(claim::Args),
    Watch(watch::Args),
    Hook(hook::Args),
    #[command(hide = true)]
    ProveAhead(prove_ahead::Args),
}

impl Command {
    /// Whether the command may prove commits in worktrees of their own, whose scripts enter
    /// namespaces: its spawner is started first, while this process is small and has one
    /// thread (`process::start_spawner`).
    fn may_prove_commits(&self) -> bool {
        match self {
            Command::Run(args) => args.names_commits(),
            Command::Bisect(_) | Command::Watch(_) => true,
            Command::Hook(args) => args.is_pre_push(),
            _ => false,
        }
    }
}

/// Run the parsed command line and return the process exit code (see `exit`).
pub fn execute(cli: Cli) -> Result<u8, Failure> {
    let json = cli.json;
    dispatch(cli).map_err(|failure| failure.json(json))
}

fn dispatch(cli: Cli) -> Result<u8, Failure> {
    // Both change the whole process, so they come first, while it has one thread.
    if let Command::Hook(args) = &cli.command
        && args.is_agent()
    {
        hook::forget_callers_repository();
    }
    if cli.command.may_prove_commits() {
        crate::process::start_spawner();
    }
    let code = run_command(cli);
    crate::process::stop_spawner();
    code
}

fn run_command(cli: Cli) -> Result<u8, Failure> {
    let mut out = std::io::stdout().lock();
    // Not locked: verify.sh's output is streamed to stderr from another thread with --verbose.
    let mut err = std::io::stderr();
    match cli.command {
        Command::Init(args) => init::run(&args, &mut std::io::stdin().lock(), &mut out, &mut err),
        Command::Run(args) => run::run(&args, &mut out, &mut err),
        Command::Status(args) => status::run(&args, &mut out),
        Command::Ledger(args) => ledger::run(&args, &mut out),
        Command::Claim(args) => claim::run(&args, &mut out, &mut err),
        Command::Watch(args) => watch::run(&args, &mut out, &mut err),
        Command::Hook(args) => hook::run(&args, &mut std::io::stdin().lock(), &mut out, &mut err),
        Command::Check(args) => check::run(&args, &mut out),
        Command::Bisect(args) => bisect::run(&args, &mut out, &mut err),
        Command::Log(args) => log::run(&args, &mut out),
        Command::Sync(args) => sync::run(&args, &mut out),
        Command::Revoke(args) => revoke::run(&args, &mut out),
        Command::Accept(args) => accept::run(&args, &mut out),
        Command::Doctor(args) => doctor::run(&args, &mut out),
        Command::Install(args) => install::run(&args, &mut out),
        Command::InstallMan(args) => install_man::run(&args, &mut out),
        Command::Completions(args) => completions::run(&args, &mut out),
        Command::ProveAhead(args) => Ok(prove_ahead::run(&args)),
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

    /// The committed command reference must match the clap definitions. Regenerate it with
    /// `PROVE_IT_BLESS=1 cargo test --lib command_reference`.
    #[test]
    fn command_reference_is_not_stale() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/reference.md");
        let reference = super::super::install_man::command_reference();
        if std::env::var_os("PROVE_IT_BLESS").is_some() {
            std::fs::write(&path, &reference).unwrap();
        }
        let committed = std::fs::read_to_string(&path).unwrap_or_default();
        assert!(
            committed == reference,
            "docs/reference.md is stale: run PROVE_IT_BLESS=1 cargo test --lib command_reference"
        );
    }

    /// The committed man pages must match the clap definitions. Regenerate them with
    /// `PROVE_IT_BLESS=1 cargo test man_pages`.
    #[test]
    fn man_pages_are_not_stale() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("man");
        for (name, page) in super::super::install_man::man_pages().unwrap() {
            let path = dir.join(&name);
            if std::env::var_os("PROVE_IT_BLESS").is_some() {
                std::fs::create_dir_all(&dir).unwrap();
                std::fs::write(&path, &page).unwrap();
            }
            let committed = std::fs::read(&path).unwrap_or_default();
            assert!(
                committed == page,
                "man/{name} is stale: run PROVE_IT_BLESS=1 cargo test man_pages"
            );
        }
    }
}
