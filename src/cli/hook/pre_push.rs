//! `git prove-it hook git pre-push`: git's pre-push hook. Protocol (githooks(5)): git runs
//! `pre-push <remote> <url>` with one line per ref on stdin, `<local ref> <local sha> <remote ref>
//! <remote sha>`; a non-zero exit refuses the whole push, and whatever the hook prints on stderr
//! is shown to the person pushing. This file parses that and calls `gate::push`.

use std::io::{Read, Write};

use anyhow::Context as _;
use gix::ObjectId;

use crate::context::Context;
use crate::context::policy::{self, PrePush};
use crate::exit;
use crate::gate::{self, Update};
use crate::git::Repo;
use crate::report::{self, CommitReport, JSON_VERSION, PushRefusal, SyncReport, could_not};

use super::super::commits::{CommitRun, prove_commit};

/// git's own hooks (pre-push).
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    #[command(subcommand)]
    event: Event,
}

#[derive(Debug, clap::Subcommand)]
enum Event {
    /// git's pre-push hook: refuse pushing commits that are not proven (or prove them), and send
    /// the proofs along with a push that goes through: those of trees the pushed commits (and
    /// the remote's branches) hold, never those of states no commit holds.
    ///
    /// Policy: PROVE_IT_PRE_PUSH, else git config prove-it.prePush: tip (each pushed tip must be
    /// proven; the default), all (every commit the remote lacks), prove (prove unproven tips in
    /// a temporary worktree instead of refusing) or off. Deleting a ref is never refused. Every
    /// pushed commit proven only through an edited verify.sh (BOUNDED_CLAIM_SURVIVES) is warned
    /// of. Exit status: 0 the push may go on, 1 refused, 2 error (git refuses the push then too).
    PrePush {
        /// Read the push from pre-commit's variables instead of git's stdin:
        /// PRE_COMMIT_TO_REF (else PRE_COMMIT_LOCAL_BRANCH, else HEAD) is the pushed tip,
        /// PRE_COMMIT_FROM_REF what the remote has (none: a new branch), both any revision git
        /// understands, and PRE_COMMIT_REMOTE_NAME the remote; without one (`pre-commit run
        /// --hook-stage pre-push --from-ref A --to-ref B`), nothing is pushed and no proofs are
        /// sent.
        #[arg(long)]
        pre_commit: bool,
        /// The remote's name, or its URL when the push names no configured remote.
        #[arg(required_unless_present = "pre_commit")]
        remote: Option<String>,
        /// The remote's URL.
        url: Option<String>,
    },
}

pub(crate) fn run(
    args: &Args,
    stdin: &mut dyn Read,
    _out: &mut dyn Write,
    err: &mut dyn Write,
) -> Result<u8, crate::cli::Failure> {
    match &args.event {
        Event::PrePush {
            pre_commit, remote, ..
        } => pre_push(*pre_commit, remote.as_deref(), stdin, err),
    }
}

fn pre_push(
    pre_commit: bool,
    remote: Option<&str>,
    stdin: &mut dyn Read,
    err: &mut dyn Write,
) -> Result<u8, crate::cli::Failure> {
    let cwd = std::env::current_dir().context(could_not::read_the_current_directory())?;
    let ctx = Context::resolve(Repo::discover(&cwd)?, None);
    let repo = &ctx.repo;
    let (updates, remote) = if pre_commit {
        let push = PreCommitPush::from_env();
        (vec![push.update(repo)?], push.remote)
    } else {
        let mut input = String::new();
        stdin
            .read_to_string(&mut input)
            .context(could_not::read_the_pushed_refs())?;
        (
            parse_updates(&input)?,
            remote.unwrap_or_default().to_string(),
        )
    };
    let remote = remote.as_str();
    let mode = ctx.pre_push.clone()?;
    if mode == PrePush::Off {
        return Ok(exit::OK);
    }
    let pushed = gate::push(repo, mode, remote, &updates, &mut |commit| {
        let info = repo.commit_info(commit)?;
        report::commit_heading(&info.id.to_string(), &info.subject, err)?;
        // Its verdict is read back from the notes: the run's report, or the error that ended
        // it, is for the person pushing.
        match prove_commit(
            repo,
            &info,
            &CommitRun {
                host: "pre-push",
                timeout: ctx.policy.clone()?.timeout,
                verbose: false,
                force: false,
                progress: true,
                jobs: None,
                log: None,
                exec: None,
            },
        )? {
            Ok((_, report)) => report.human(err)?,
            Err(failure) => failure.render(&mut std::io::sink(), err)?,
        }
        Ok::<(), crate::cli::Failure>(())
    })?;
    let edited: Vec<_> = pushed
        .edited
        .iter()
        .map(|checked| CommitReport::new(checked, false, false))
        .collect();
    report::pushed_through_edited_verify(&edited, err)?;
    let weakened = pushed_weakenings(repo, &updates, &pushed.edited)?;
    let block = ctx.gate.clone()?.weakening == policy::Weakening::Block && !ctx.allow_weakened;
    report::pushed_weakened(&weakened, block, err)?;
    if block && !weakened.is_empty() {
        return Ok(exit::NOT_PROVEN);
    }
    if let Some(refused) = pushed.refused {
        PushRefusal {
            remote: remote.to_string(),
            // A failure on record says why a commit is not proven, as `log` says it.
            unproven: refused
                .unproven
                .iter()
                .map(|checked| {
                    CommitReport::new(checked, false, false)
                        .with_failures(checked, ctx.clock.now_seconds())
                })
                .collect(),
            tried: refused.tried,
        }
        .human(err)?;
        return Ok(exit::NOT_PROVEN);
    }

    // The push goes on: send the proofs with it. Failing to is worth a warning, not a refusal:
    // the commits are proven here, and `git prove-it sync` can send the proofs later. A check
    // run by hand names no remote: nothing is pushed, so nothing is sent.
    if remote.is_empty() {
        return Ok(exit::OK);
    }
    let travelling = |keys: &[gix::ObjectId]| gate::travelling(repo, remote, &updates, keys);
    match repo.sync_proofs(remote, &crate::proof::merge, &travelling) {
        Ok(synced) => report::proofs_sent(&SyncReport::new(JSON_VERSION, &synced), err)?,
        Err(error) => {
            let failure = crate::cli::Failure::from(error);
            report::proofs_not_sent(remote, &failure.report(), err)?;
        }
    }
    Ok(exit::OK)
}

/// The push as pre-commit describes it in its `PRE_COMMIT_*` variables (its `run` command,
/// <https://github.com/pre-commit/pre-commit/blob/main/pre_commit/commands/run.py>). Its
/// pre-push stage sets them from git's first line that is not a deletion; run by hand
/// (`--from-ref A --to-ref B`) it sets only the two refs, as given (`origin/main`, `HEAD`);
/// a push of a branch down to its root commit sets only the branch names.
#[derive(Debug, Default)]
struct PreCommitPush {
    from: String,
    to: String,
    local_branch: String,
    remote: String,
}

impl PreCommitPush {
    fn from_env() -> Self {
        let var = |name: &str| std::env::var(name).unwrap_or_default().trim().to_string();
        PreCommitPush {
            from: var("PRE_COMMIT_FROM_REF"),
            to: var("PRE_COMMIT_TO_REF"),
            local_branch: var("PRE_COMMIT_LOCAL_BRANCH"),
            remote: var("PRE_COMMIT_REMOTE_NAME"),
        }
    }

    /// The pushed tip names: the "to" ref, else the local branch, else HEAD.
    fn tip_spec(&self) -> &str {
        [self.to.as_str(), self.local_branch.as_str()]
            .into_iter()
            .find(|spec| !spec.is_empty())
            .unwrap_or("HEAD")
    }

    /// The one update it describes, its revisions resolved. A "from" ref that names no commit
    /// here is what the remote has and we do not: as for a new branch, nothing is taken as
    /// the remote's.
    fn update(&self, repo: &Repo) -> Result<Update, crate::cli::Failure> {
        let commit = |spec: &str| -> Result<ObjectId, crate::git::Error> {
            let selection = repo.select(&[spec.to_string()])?;
            selection
                .tips
                .first()
                .copied()
                .ok_or_else(|| crate::git::Error::NotACommit {
                    spec: spec.to_string(),
                })
        };
        let tip = self.tip_spec();
        let local = commit(tip)?;
        let remote = if self.from.is_empty() {
            ObjectId::null(local.kind())
        } else {
            commit(&self.from).unwrap_or_else(|_| ObjectId::null(local.kind()))
        };
        Ok(Update {
            local_ref: tip.to_string(),
            local,
            remote,
        })
    }
}

/// The pushed commits that weaken protected paths (SPEC.md section 2.2): each pushed tip
/// against the commit the remote has, by that commit's `protect` list, and each pushed commit
/// whose proof was made through a weakening.
fn pushed_weakenings(
    repo: &Repo,
    updates: &[Update],
    edited: &[crate::proof::CommitStatus],
) -> Result<Vec<crate::report::WeakenedReport>, crate::cli::Failure> {
    let mut found = Vec::new();
    for update in updates {
        // A deletion, a new branch, or a remote commit this clone lacks: nothing to compare.
        if update.local.is_null()
            || update.remote.is_null()
            || repo.commit_info(update.remote).is_err()
        {
            continue;
        }
        let tips = crate::proof::commit_standings(repo, &[update.local])?;
        found.extend(crate::cli::check::weakened_since(
            repo,
            &[update.remote],
            &tips,
        )?);
    }
    for checked in edited {
        let commit = checked.commit.id.to_string();
        let Some(record) = checked.standing.record() else {
            continue;
        };
        if (record.protection.weakened.is_empty() && record.tests_weakened.is_empty())
            || found.iter().any(|w| w.commit == commit)
        {
            continue;
        }
        found.push(crate::report::WeakenedReport {
            base: crate::report::PROOFS_BASELINE.to_string(),
            commit,
            findings: record
                .protection
                .weakened
                .iter()
                .map(ToString::to_string)
                .chain(record.tests_weakened.iter().cloned())
                .collect(),
        });
    }
    Ok(found)
}

/// The lines git passes on stdin. A line that does not follow the protocol is an error, which
/// refuses the push: better than checking something other than what is pushed.
fn parse_updates(input: &str) -> Result<Vec<Update>, crate::cli::Failure> {
    input
        .lines()
        .filter(|line| !line.trim().is_empty())
        .map(|line| {
            let fields: Vec<&str> = line.split_whitespace().collect();
            let id = |hex: &str| ObjectId::from_hex(hex.as_bytes()).ok();
            match fields.as_slice() {
                [local_ref, local, _remote_ref, remote] => match (id(local), id(remote)) {
                    (Some(local), Some(remote)) => Some(Update {
                        local_ref: (*local_ref).to_string(),
                        local,
                        remote,
                    }),
                    _ => None,
                },
                _ => None,
            }
            .ok_or_else(|| {
                crate::cli::Failure::from(crate::report::refusal::unexpected_push_line(line))
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_gits_pre_push_lines_and_refuses_anything_else() {
        let zero = "0".repeat(40);
        let one = "1".repeat(40);
        let input = format!(
            "refs/heads/main {one} refs/heads/main {zero}\n(delete) {zero} refs/heads/old {one}\n"
        );
        let updates = parse_updates(&input).unwrap();
        assert_eq!(updates.len(), 2);
        assert_eq!(updates[0].local_ref, "refs/heads/main");
        assert!(updates[1].local.is_null());
        assert!(parse_updates("").unwrap().is_empty());
        assert!(parse_updates("refs/heads/main nothex refs/heads/main x\n").is_err());
    }
}
