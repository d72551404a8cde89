//! `git prove-it check`: CI's command, whether commits are proven. Runs nothing.

use crate::outcome::Outcome;
use std::io::Write;
use std::path::PathBuf;

use anyhow::Context as _;

use crate::context::Context;
use crate::exit;
use crate::git::Repo;
use crate::report::{
    self, CheckReport, CommitReport, JSON_VERSION, VerifyChangeReport, WeakenedReport, could_not,
    hint, refusal,
};

/// Check that commits are proven: CI's command. Runs nothing.
///
/// A commit is proven when the note on its tree under refs/notes/prove-it holds a valid record:
/// one for that tree, written by a run of the verify.sh that tree holds. Hand-written, malformed
/// or mismatched records never count. Proofs live in notes, which clones do not fetch: run
/// 'git prove-it sync' (or fetch refs/notes/prove-it) first. It reads only commits, trees and
/// notes, so it works in a bare repository too: a mirror, or a server's post-receive hook.
///
/// A commit whose tree has a checks file (prove-it.toml) is proven only when every check it
/// declares is proven for that commit's input trees; the list names the checks that are not
/// ("proven 1/2 checks, missing: docs"), and a checks file in error fails the commit, naming
/// the line.
///
/// A proof through an edited verify.sh (BOUNDED_CLAIM_SURVIVES) counts unless --strict, and is
/// always listed. For a range (BASE..HEAD), a checked commit whose verify.sh is not the base's
/// is listed as "verify.sh changed since BASE", whatever the proofs say: that needs no anchor of
/// the agent's session. So is one whose prove-it.toml, or a check's script, is not the base's. --strict refuses such a range unless --allow-verify-change.
///
/// A commit whose verify.sh (or a check) failed on that very tree says so: "failed (exit 1, 3
/// min ago)", from the local refs/notes/prove-it-failures. A failure on record changes whether a
/// commit counts only as a contest: a pass and a failure of the same script on one tree make
/// its proof "contested", stored in refs/notes/prove-it, never proven until a person runs 'git
/// prove-it revoke' or 'git prove-it accept'.
///
/// A range's protected paths (prove-it.toml's protect list, as the base holds it) are compared
/// with its base's too: a checked commit in which a protected file was deleted, a test gone or
/// newly skipped, or a count fell is listed as "weakened since BASE", naming each. --strict
/// refuses such a range, and a proof made through a weakening (BOUNDED_CLAIM_SURVIVES), unless
/// --allow-weakened; --allow-verify-change never accepts them.
///
/// With --require-signed, a proof counts only with a good SSH signature by a signer of the
/// allowed signers file (ssh-keygen(1), ALLOWED SIGNERS); unsigned proofs, bad signatures,
/// unknown signers and records copied from another tree do not.
///
/// Exit status: 0 every commit is proven, 1 some commit is not (each is listed), 2 usage or
/// repository error.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// Commits to check: revisions, or ranges such as main..HEAD, of which the tip is checked
    /// [default: HEAD].
    #[arg(value_name = "REV")]
    revs: Vec<String>,

    /// Check every commit of the range, not only its tip.
    #[arg(long)]
    all: bool,

    /// Refuse proofs made through an edited verify.sh (BOUNDED_CLAIM_SURVIVES).
    #[arg(long)]
    strict: bool,

    /// With --strict, accept a range in which verify.sh changed since its base (a person
    /// reviewed the change).
    #[arg(long)]
    allow_verify_change: bool,

    /// With --strict, accept a range whose protected tests or configs were weakened since its
    /// base, and proofs made through such a weakening (a person reviewed it). Implies
    /// --allow-verify-change; never implied by it.
    #[arg(long)]
    allow_weakened: bool,

    /// Count only proofs with a good signature by an allowed signer.
    #[arg(long)]
    require_signed: bool,

    /// Count only proofs whose run could see no other checkout than its own: a commit's run
    /// in a mount namespace (isolation: namespace) or a working state's in its own checkout;
    /// not isolation: none, nor records made before the isolation line existed.
    #[arg(long)]
    require_isolated: bool,

    /// The allowed signers file for --require-signed [default: git config
    /// prove-it.allowedSigners, else gpg.ssh.allowedSignersFile, relative to the worktree root, or in
    /// a bare repository to the current directory].
    #[arg(long, value_name = "FILE", requires = "require_signed")]
    allowed_signers: Option<PathBuf>,

    /// How to print the result: text for a person, json (one JSON object, as --json), junit
    /// (a JUnit XML report, one test case per commit, for GitLab's reports:junit, Jenkins and
    /// test-reporter actions), or github (GitHub Actions' workflow commands: one ::error
    /// annotation per commit not proven, at most 10, the last counting the rest; then the text).
    /// The exit status is the same in every format.
    #[arg(long, value_enum, value_name = "FORMAT", default_value_t = Format::Text)]
    format: Format,

    /// Print the result as one JSON object on stdout: --format json.
    #[arg(long, conflicts_with = "format")]
    json: bool,

    /// Append a Markdown summary to FILE: a table of the commits checked (commit, subject,
    /// proof, who, when, duration, signature, verify.sh edited), for $GITHUB_STEP_SUMMARY.
    #[arg(long, value_name = "FILE")]
    summary: Option<PathBuf>,

    /// Append the result to FILE in $GITHUB_OUTPUT's syntax: proven=true|false, proven-count=N,
    /// and unproven, the full ids of the commits not proven, one a line.
    #[arg(long, value_name = "FILE")]
    outputs: Option<PathBuf>,

    /// Count the proofs made by this script from outside the history ('git prove-it run
    /// RANGE --exec SCRIPT', the same bytes) for the commits that have neither verify.sh nor
    /// a checks file; every other commit stands by its own verify.sh or checks, as without it.
    #[arg(long, value_name = "SCRIPT")]
    exec: Option<PathBuf>,
}

/// The check of the script at `path` from outside the history, as `run --exec` names it, read
/// without writing anything.
fn exec_check(repo: &Repo, path: &std::path::Path) -> Result<crate::proof::Check, super::Failure> {
    let bytes = std::fs::read(path).with_context(|| could_not::read_the_script(path))?;
    let name = std::path::absolute(path)
        .ok()
        .and_then(|path| {
            path.file_name()
                .and_then(|n| n.to_str())
                .map(str::to_string)
        })
        .ok_or_else(|| refusal::script_without_a_name(path))?;
    let script = crate::proof::Script {
        blob: repo.hash_blob(&bytes),
        mode: 0o100_755,
    };
    Ok(crate::proof::Check::exec(
        &name,
        path.display().to_string(),
        script,
    ))
}

/// What `check --format` takes; a new renderer is one more variant here and one more arm in
/// [`print()`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum Format {
    /// Lines for a person.
    Text,
    /// One JSON object.
    Json,
    /// A JUnit XML report.
    Junit,
    /// GitHub Actions' annotations, then the text.
    Github,
}

pub(crate) fn run(args: &Args, out: &mut dyn Write) -> Result<u8, super::Failure> {
    let cwd = std::env::current_dir().context(could_not::read_the_current_directory())?;
    let ctx = Context::resolve(Repo::discover_history(&cwd)?, None);
    let repo = &ctx.repo;
    let now = ctx.clock.now();
    let selection = select(repo, &args.revs)?;
    let ids = if args.all {
        repo.walk(&selection, None)?
    } else {
        let mut tips = selection.tips.clone();
        let mut seen = std::collections::HashSet::new();
        tips.retain(|id| seen.insert(*id));
        tips
    };
    let verifier = verifier(repo, args)?;
    let exec = match &args.exec {
        Some(path) => Some(exec_check(repo, path)?),
        None => None,
    };
    let standings = super::signers::standings(
        repo,
        &ids,
        verifier.as_ref(),
        exec.as_ref()
            .map_or(crate::proof::Exec::None, crate::proof::Exec::Unarmed),
    )?;
    let verify_changed = verify_changes(repo, &selection.hidden, &standings)?;
    let allow_verify_change = args.allow_verify_change || args.allow_weakened;
    let weakened = weakened_since(repo, &selection.hidden, &standings)?;
    // A failure on record is said, never counted: the exit status is the proofs' alone.
    let commits: Vec<_> = standings
        .iter()
        .map(|checked| commit_report(checked, args, now))
        .collect();
    let proven = commits.iter().all(|c| c.proven)
        && !CheckReport::refuses_verify_change(args.strict, allow_verify_change, &verify_changed)
        && !(args.strict && !args.allow_weakened && !weakened.is_empty());
    let report = CheckReport {
        version: JSON_VERSION,
        outcome: if proven {
            Outcome::Proven
        } else {
            Outcome::NotProven
        },
        proven,
        strict: args.strict,
        require_signed: args.require_signed,
        allow_verify_change,
        allow_weakened: args.allow_weakened,
        commits,
        verify_changed,
        weakened,
    };
    print(&report, args, out)?;
    Ok(if proven { exit::OK } else { exit::NOT_PROVEN })
}

/// The commits `revs` name, with a hint when a push's new commits are out of reach.
fn select(repo: &Repo, revs: &[String]) -> Result<crate::git::Selection, super::Failure> {
    repo.select(revs).map_err(|error| {
        let failure = super::Failure::from(error);
        // Until pre-receive accepts a push, git keeps its objects in a quarantine directory named
        // only by GIT_OBJECT_DIRECTORY, which gix does not read.
        if std::env::var_os("GIT_QUARANTINE_PATH").is_some() {
            failure.hint(hint::quarantined_push())
        } else {
            failure
        }
    })
}

/// The verifier of the proofs' signatures with --require-signed, else `None`: signatures are
/// checked only when they are required, as each costs a few ssh-keygen runs. An error when no
/// allowed signers file is given or configured.
fn verifier(repo: &Repo, args: &Args) -> Result<Option<crate::signing::Verifier>, super::Failure> {
    if !args.require_signed {
        return Ok(None);
    }
    let verifier = super::signers::verifier(repo, args.allowed_signers.as_deref())?;
    Ok(Some(verifier.ok_or_else(refusal::no_allowed_signers)?))
}

/// What `check` says of one commit, as `args` count its proof: bounded by a weakening alone
/// counts under --strict --allow-weakened, and only an isolated proof under
/// --require-isolated.
fn commit_report(
    checked: &crate::proof::CommitStatus,
    args: &Args,
    now: time::OffsetDateTime,
) -> CommitReport {
    let mut report =
        CommitReport::new(checked, args.strict, args.require_signed).with_failures(checked, now);
    // A proof bounded by a weakening alone counts under --allow-weakened.
    if args.strict
        && args.allow_weakened
        && !report.proven
        && checked.standing.is_proven(false)
        && checked.standing.record().is_some_and(|record| {
            record.verify_diff.is_none()
                && (!record.protection.weakened.is_empty() || !record.tests_weakened.is_empty())
        })
        && (!args.require_signed
            || checked
                .signature
                .as_ref()
                .is_some_and(crate::proof::SignatureStatus::is_good))
    {
        report.proven = true;
    }
    if args.require_isolated {
        report.requiring_isolation(checked)
    } else {
        report
    }
}

/// Write `report` to the files of --summary and --outputs, then print it in its format.
fn print(report: &CheckReport, args: &Args, out: &mut dyn Write) -> Result<(), super::Failure> {
    for (file, render) in [
        (&args.summary, report::github_summary as Render),
        (&args.outputs, report::github_outputs),
    ] {
        if let Some(path) = file {
            append(path, report, render)?;
        }
    }
    let format = if args.json { Format::Json } else { args.format };
    match format {
        Format::Text => report.human(out)?,
        Format::Json => report::json(report, out)?,
        Format::Junit => report::junit(report, out)?,
        Format::Github => {
            report::github_annotations(report, out)?;
            report.human(out)?;
        }
    }
    Ok(())
}

type Render = fn(&CheckReport, &mut dyn Write) -> std::io::Result<()>;

/// Append what `render` makes of `report` to the file at `path` (a CI's step file, which other
/// steps write to as well).
fn append(path: &std::path::Path, report: &CheckReport, render: Render) -> anyhow::Result<()> {
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .with_context(|| could_not::open(path))?;
    render(report, &mut file).with_context(|| could_not::write(path))
}

/// The checked commits whose protected paths were weakened since each of `bases`, by the
/// base's `protect` list.
pub(crate) fn weakened_since(
    repo: &Repo,
    bases: &[crate::git::ObjectId],
    checked: &[crate::proof::CommitStatus],
) -> Result<Vec<WeakenedReport>, super::Failure> {
    let mut unique = bases.to_vec();
    unique.dedup();
    let mut found = Vec::new();
    for base in crate::proof::commit_standings(repo, &unique)? {
        let tree = base.commit.tree;
        let Some((blob, _)) = repo.tree_entry(tree, crate::proof::CHECKS_FILE)? else {
            continue;
        };
        let text = String::from_utf8_lossy(&repo.read_blob(blob)?).into_owned();
        let Ok(protected) = crate::proof::Protected::of_text(&text) else {
            continue;
        };
        if protected.is_empty() {
            continue;
        }
        for commit in checked {
            let protection =
                crate::proof::tree_protection(repo, tree, commit.commit.tree, &protected)?;
            if !protection.weakened.is_empty() {
                found.push(WeakenedReport {
                    base: base.commit.id.to_string(),
                    commit: commit.commit.id.to_string(),
                    findings: protection
                        .weakened
                        .iter()
                        .map(ToString::to_string)
                        .collect(),
                });
            }
        }
    }
    Ok(found)
}

/// verify.sh changes (with checks, of the checks file and the checks' scripts too) since each
/// of `bases` (the commits a range excludes) among `checked`.
pub(crate) fn verify_changes(
    repo: &Repo,
    bases: &[crate::git::ObjectId],
    checked: &[crate::proof::CommitStatus],
) -> Result<Vec<VerifyChangeReport>, super::Failure> {
    let mut unique = bases.to_vec();
    unique.dedup();
    let bases = crate::proof::commit_standings(repo, &unique)?;
    Ok(crate::proof::verify_changes(&bases, checked)
        .iter()
        .map(VerifyChangeReport::from)
        .collect())
}
