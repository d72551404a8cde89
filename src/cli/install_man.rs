//! `git prove-it install-man`: the manual pages, generated from this build's command line.

use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::Context as _;
use clap::CommandFactory as _;

use crate::exit;
use crate::process;
use crate::report::{InstallManReport, could_not, refusal};

/// Install the manual pages, so that `git prove-it --help` and `git help prove-it` open them.
///
/// Writes git-prove-it(1) and one page per subcommand (git-prove-it-run(1), ...), generated
/// from this build's command-line definitions, into DIR/man1. The default DIR,
/// $XDG_DATA_HOME/man or ~/.local/share/man, is on man-db's search path whenever ~/.local/bin
/// is on PATH; otherwise install-man says what to add to MANPATH. Exit status: 0 installed, 2
/// error.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// The man directory to install into (the pages go into its man1 subdirectory)
    /// [default: $XDG_DATA_HOME/man, else ~/.local/share/man].
    #[arg(long, value_name = "DIR")]
    dir: Option<PathBuf>,
}

pub(crate) fn run(args: &Args, out: &mut dyn Write) -> Result<u8, super::Failure> {
    let dir = match &args.dir {
        Some(dir) => dir.clone(),
        None => default_dir().ok_or_else(refusal::no_man_directory)?,
    };
    let man1 = dir.join("man1");
    std::fs::create_dir_all(&man1).with_context(|| could_not::create(&man1))?;
    let pages = man_pages().context(could_not::render_the_man_pages())?;
    for (name, page) in &pages {
        let path = man1.join(name);
        std::fs::write(&path, page).with_context(|| could_not::write(&path))?;
    }
    InstallManReport {
        pages: pages.len(),
        dir: man1,
        found: man_page_location(),
    }
    .human(out)?;
    Ok(exit::OK)
}

/// The per-user man directory: `$XDG_DATA_HOME/man`, else `~/.local/share/man`.
pub(crate) fn default_dir() -> Option<PathBuf> {
    match std::env::var_os("XDG_DATA_HOME") {
        Some(data) if Path::new(&data).is_absolute() => Some(Path::new(&data).join("man")),
        _ => std::env::var_os("HOME")
            .filter(|home| !home.is_empty())
            .map(|home| Path::new(&home).join(".local/share/man")),
    }
}

/// Where `man` finds git-prove-it(1), the page `git help prove-it` opens; `None` when it does
/// not, or there is no `man`.
pub(crate) fn man_page_location() -> Option<PathBuf> {
    let output = process::Request::new("man")
        .args(["-w", "git-prove-it"])
        .stderr(process::Stream::Null)
        .run()
        .ok()?;
    let path = String::from_utf8_lossy(&output.stdout).trim().to_string();
    (output.success() && !path.is_empty()).then(|| PathBuf::from(path))
}

/// Every man page, generated from the clap definitions: git-prove-it(1) and one page per
/// subcommand (git-prove-it-run(1), ...), as `git help prove-it` and `man git-prove-it-run`
/// expect them. The committed `man/` directory holds the same pages.
pub(crate) fn man_pages() -> std::io::Result<Vec<(String, Vec<u8>)>> {
    let root = super::Cli::command().name("git-prove-it");
    let mut pages = Vec::new();
    let mut page = Vec::new();
    clap_mangen::Man::new(root.clone()).render(&mut page)?;
    pages.push(("git-prove-it.1".to_string(), page));
    // A hidden command (the background prover) is no person's to run.
    for sub in root.get_subcommands().filter(|sub| !sub.is_hide_set()) {
        // clap names commands with 'static strings; this runs once per process.
        let name: &'static str =
            Box::leak(format!("git-prove-it-{}", sub.get_name()).into_boxed_str());
        let usage = format!("git prove-it {}", sub.get_name());
        let mut page = Vec::new();
        clap_mangen::Man::new(sub.clone().name(name).bin_name(usage)).render(&mut page)?;
        pages.push((format!("{name}.1"), page));
    }
    Ok(pages)
}

/// The command reference in markdown, generated from the clap definitions as the man pages
/// are: each command's `--help`, nested commands included. The committed `docs/reference.md`
/// holds the same text.
#[cfg(test)]
pub(crate) fn command_reference() -> String {
    let root = super::Cli::command()
        .name("git-prove-it")
        .bin_name("git prove-it")
        .term_width(100);
    let mut text = String::from(
        "# Command reference\n\nEvery command's `--help`, generated from the command line's \
         definitions (after changing them: `PROVE_IT_BLESS=1 cargo test --lib \
         command_reference`). The man pages hold the same text; SPEC.md section 6 is the \
         contract each command keeps.\n",
    );
    fn add(text: &mut String, command: &mut clap::Command, path: &str) {
        let help = command.render_long_help().to_string();
        text.push_str(&format!(
            "\n## `{path}`\n\n```text\n{}\n```\n",
            help.trim_end()
        ));
        let subs: Vec<clap::Command> = command
            .get_subcommands()
            // clap's own `help` command, added by `build`, says nothing the others do not.
            .filter(|sub| !sub.is_hide_set() && sub.get_name() != "help")
            .cloned()
            .collect();
        for sub in subs {
            let path = format!("{path} {}", sub.get_name());
            let mut sub = sub.bin_name(path.clone()).term_width(100);
            add(text, &mut sub, &path);
        }
    }
    let mut root = root;
    root.build();
    add(&mut text, &mut root, "git prove-it");
    text
}
