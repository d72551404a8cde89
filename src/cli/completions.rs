//! `git prove-it completions`: a shell completion script, generated from the command line.

use std::io::Write;

use clap::CommandFactory as _;

use crate::exit;

/// Print a shell completion script, generated from this command line's definition.
///
/// bash: add `eval "$(git prove-it completions bash)"` to ~/.bashrc; it completes both
/// `git-prove-it` and `git prove-it` (through git's own completion, which calls
/// `_git_prove_it`). zsh: write it as `_git-prove-it` into a directory of $fpath; git's zsh
/// completion uses it for `git prove-it`. fish: write it to
/// ~/.config/fish/completions/git-prove-it.fish; fish's git completion hands `git prove-it` to it.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// The shell to complete for.
    #[arg(value_enum)]
    shell: clap_complete::Shell,
}

/// For bash: git's completion (git-completion.bash) completes `git prove-it ...` by calling
/// `_git_prove_it`; hand the words over to clap's function as if `git-prove-it` had been typed.
const BASH_GIT_SHIM: &str = r#"
# `git prove-it ...`: git's completion calls _git_prove_it; complete as for `git-prove-it ...`.
_git_prove_it() {
    local COMP_WORDS=(git-prove-it "${COMP_WORDS[@]:2}")
    local COMP_CWORD=$((COMP_CWORD - 1))
    local prev=""
    if [ "$COMP_CWORD" -gt 0 ]; then prev="${COMP_WORDS[COMP_CWORD-1]}"; fi
    _git__prove__it git-prove-it "${COMP_WORDS[COMP_CWORD]}" "$prev"
}
"#;

pub(crate) fn run(args: &Args, out: &mut dyn Write) -> Result<u8, super::Failure> {
    // One word: clap_complete names its functions after the binary, and "git prove-it" (the
    // name in usage lines) would make the bash script look up functions it never defined.
    let mut command = super::Cli::command().bin_name("git-prove-it");
    let mut script = Vec::new();
    clap_complete::generate(args.shell, &mut command, "git-prove-it", &mut script);
    if args.shell == clap_complete::Shell::Bash {
        // clap_complete 4.6 turns the dashes of the binary's name into "__" in the labels it
        // dispatches on but into "__subcmd__" in the branches, so no subcommand of a dashed
        // binary ever completes its options; make the branches match the labels.
        let script = String::from_utf8_lossy(&script)
            .replace("git__subcmd__prove__subcmd__it", "git__prove__it");
        out.write_all(script.as_bytes())?;
        out.write_all(BASH_GIT_SHIM.as_bytes())?;
    } else {
        out.write_all(&script)?;
    }
    Ok(exit::OK)
}
