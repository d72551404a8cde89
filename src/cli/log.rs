//! `git prove-it log`: commits as `git log --oneline` lists them, with a proof column.

use std::io::{IsTerminal, Write};
use std::path::PathBuf;

use anyhow::Context as _;

use crate::context::Context;
use crate::git::Repo;
use crate::report::{
    self, CommitReport, JSON_VERSION, LogReport, LogStyle, StatsReport, could_not,
};

/// List commits as 'git log --oneline' does, with a proof column.
///
/// Each commit is proven, proven through an edited verify.sh (proven-edited), unproven, not
/// armed (its tree has no verify.sh), or invalid (the problem is named); for a proof, the line
/// says who signed it off, when, how long verify.sh ran, and on which host. Records that are
/// malformed, hand-written or do not match the commit's tree or verify.sh are shown as invalid,
/// never as proven.
///
/// Each proof also shows its signature: good signature by PRINCIPAL, unsigned, BAD signature,
/// unknown signer, or tree mismatch for a record copied from another tree. Signatures are
/// checked against --allowed-signers, else git config prove-it.allowedSigners, else
/// gpg.ssh.allowedSignersFile; with none of them, a signed proof shows as not verified.
///
/// A commit whose tree has a checks file (prove-it.toml) is proven only when all its checks are:
/// its line says "proven 1/2 checks, missing: docs", and -p lists each check with its input tree
/// and proof.
///
/// A commit not proven whose verify.sh failed on that very tree (a failure on record in the local
/// refs/notes/prove-it-failures) says "failed (exit 1, 3 min ago)" instead of "unproven"; with a
/// checks file, its line names the check: "failed: docs (exit 1, 3 min ago)", and -p shows the
/// failed run's last lines. A failure counts against a proof only as a contest: a pass and a
/// failure of the same script on one tree show "contested" (see 'git prove-it revoke' and
/// 'git prove-it accept'), read from refs/notes/prove-it alone. A proof that passed
/// only after failed runs (git config prove-it.retries) says "proven (flaky: 1)".
///
/// For a range (BASE..HEAD), a listed commit whose verify.sh is not the base's is named after the
/// list: "verify.sh changed since BASE" (and so for prove-it.toml and the checks' scripts).
///
/// With --stats, it prints instead the share of the listed commits that are proven, and signed:
/// "proven 41 of 50 commits (82%), signed 30 (60%)". Proofs through an edited verify.sh count
/// as proven, and are said; signed counts proofs with a good signature by an allowed signer, so
/// it needs an allowed signers file. Flaky proofs and commits with a failure on record are
/// counted too. --format svg writes that share as a badge CI can publish.
///
/// It reads only commits, trees and notes, so it works in a bare repository too.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// Commits to list: a revision or range, as git log takes them [default: HEAD].
    #[arg(value_name = "RANGE")]
    revs: Vec<String>,

    /// Show at most this many commits.
    #[arg(short = 'n', long = "max-count", value_name = "N")]
    max_count: Option<usize>,

    /// Show the diff of verify.sh that a proof through an edited verify.sh carries, and the last
    /// lines of a failure on record.
    #[arg(short = 'p', long = "patch")]
    patch: bool,

    /// Check signatures against this allowed signers file [default: git config
    /// prove-it.allowedSigners, else gpg.ssh.allowedSignersFile, relative to the worktree root, or in
    /// a bare repository to the current directory].
    #[arg(long, value_name = "FILE")]
    allowed_signers: Option<PathBuf>,

    /// Print the share of commits proven (and signed) instead of the list.
    #[arg(long)]
    stats: bool,

    /// How to print: text for a person, json (one JSON object, as --json), or svg (the share of
    /// commits proven as a small badge, shields-like; implies --stats).
    #[arg(long, value_enum, value_name = "FORMAT", default_value_t = Format::Text)]
    format: Format,

    /// Write the output to FILE instead of stdout (a badge CI publishes, say).
    #[arg(long, short = 'o', value_name = "FILE")]
    output: Option<PathBuf>,

    /// Print the list (or the stats) as one JSON object on stdout: --format json.
    #[arg(long, conflicts_with = "format")]
    json: bool,

    /// Colour the output: auto (on a terminal, unless NO_COLOR is set), always or never.
    #[arg(long, value_name = "WHEN", default_value = "auto", value_parser = ["auto", "always", "never"])]
    color: String,
}

/// What `log --format` takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum Format {
    /// Lines for a person.
    Text,
    /// One JSON object.
    Json,
    /// An SVG badge of the share of commits proven.
    Svg,
}

pub(crate) fn run(args: &Args, out: &mut dyn Write) -> Result<u8, super::Failure> {
    let Some(path) = &args.output else {
        return list(args, out);
    };
    let mut buffer = Vec::new();
    let code = list(args, &mut buffer)?;
    std::fs::write(path, &buffer).with_context(|| could_not::write(path))?;
    Ok(code)
}

fn list(args: &Args, out: &mut dyn Write) -> Result<u8, super::Failure> {
    let cwd = std::env::current_dir().context(could_not::read_the_current_directory())?;
    let ctx = Context::resolve(Repo::discover_history(&cwd)?, None);
    let repo = &ctx.repo;
    let now = ctx.clock.now();
    let selection = repo.select(&args.revs)?;
    let ids = repo.walk(&selection, args.max_count)?;
    let verifier = super::signers::verifier(repo, args.allowed_signers.as_deref())?;
    let standings =
        super::signers::standings(repo, &ids, verifier.as_ref(), crate::proof::Exec::None)?;
    let verify_changed = super::check::verify_changes(repo, &selection.hidden, &standings)?;
    let commits: Vec<_> = standings
        .iter()
        .map(|checked| CommitReport::new(checked, false, false).with_failures(checked, now))
        .collect();
    let format = if args.json { Format::Json } else { args.format };
    if args.stats || format == Format::Svg {
        let stats = StatsReport::new(JSON_VERSION, &commits, verifier.is_some());
        match format {
            Format::Text => stats.human(out)?,
            Format::Json => report::json(&stats, out)?,
            Format::Svg => report::badge(&stats, out)?,
        }
        return Ok(crate::exit::OK);
    }
    let report = LogReport {
        version: JSON_VERSION,
        commits,
        verify_changed,
    };
    if format == Format::Json {
        report::json(&report, out)?;
    } else {
        let no_color = std::env::var("NO_COLOR").ok();
        let style = LogStyle {
            color: report::use_color(
                &args.color,
                no_color.as_deref(),
                std::io::stdout().is_terminal(),
            ),
            patch: args.patch,
        };
        report.human(style, out)?;
    }
    Ok(crate::exit::OK)
}
