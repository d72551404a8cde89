//! Checking proof signatures for `check` and `log`: which allowed signers file, and each
//! commit's signatures checked against it.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, PoisonError};

use anyhow::Context as _;

use crate::git::{self, Repo};
use crate::proof::{CommitStatus, SignatureStatus, check_signatures};
use crate::report::hint::{self, SigningFix};
use crate::report::{Hint, could_not};
use crate::signing::{self, Verifier};

/// The verifier for `--allowed-signers FILE`, else `prove-it.allowedSigners`, else
/// `gpg.ssh.allowedSignersFile`; `None` when none is given or configured. A named file that
/// cannot be read is an error.
pub(crate) fn verifier(
    repo: &Repo,
    flag: Option<&Path>,
) -> Result<Option<Verifier>, super::Failure> {
    let config = |key: &str| repo.config_string(key);
    let home = std::env::var_os("HOME").map(PathBuf::from);
    let base = config_base(repo)?;
    let Some(path) = signing::allowed_signers(flag, &config, home.as_deref(), &base) else {
        return Ok(None);
    };
    Verifier::new(&config, path).map(Some).map_err(failure)
}

/// The directory a relative allowed signers path in git config is taken from: where git itself
/// runs for this repository, since git hands `gpg.ssh.allowedSignersFile` to ssh-keygen as it
/// is. That is the worktree root (git moves there from a subdirectory) or, in a bare
/// repository, the current directory: git stays where it was started, and runs a server's
/// hooks in the git dir.
fn config_base(repo: &Repo) -> anyhow::Result<PathBuf> {
    match repo.workdir() {
        Ok(root) => Ok(root.to_owned()),
        Err(_bare) => std::env::current_dir().context(could_not::read_the_current_directory()),
    }
}

/// Each commit's proofs, classified, with their signatures checked when there is a verifier:
/// what `check` and `log` report on.
pub(crate) fn standings(
    repo: &Repo,
    ids: &[git::ObjectId],
    verifier: Option<&Verifier>,
    exec: crate::proof::Exec<'_>,
) -> Result<Vec<CommitStatus>, super::Failure> {
    let mut checked = crate::proof::commit_standings_with(repo, ids, exec)?;
    if let Some(verifier) = verifier {
        check_all(&mut checked, verifier)?;
    }
    Ok(checked)
}

/// Check the signatures of every commit's proofs, each commit in its place. Each proof costs
/// an ssh-keygen run or two of a few milliseconds, independent of the others, so they run on
/// every core: worker threads take the next commit from one queue (commits differ in how many
/// proofs they hold), and nothing is held beyond the commits themselves. On failure, the error
/// is the first failing commit's among those checked, as one thread would have reported it.
fn check_all(commits: &mut [CommitStatus], verifier: &Verifier) -> Result<(), super::Failure> {
    let signed = commits
        .iter()
        .filter(|c| c.valid.iter().any(|r| r.signature.is_some()))
        .count();
    let threads = crate::process::cpus().min(signed);
    if threads <= 1 {
        return commits.iter_mut().try_for_each(|c| check(c, verifier));
    }
    let queue = Mutex::new(commits.iter_mut().enumerate());
    let failed = AtomicBool::new(false);
    let failures = std::thread::scope(|scope| {
        let workers: Vec<_> = (0..threads)
            .map(|_| {
                scope.spawn(|| {
                    while !failed.load(Ordering::Relaxed) {
                        // A panic elsewhere leaves the queue usable: it only hands out commits.
                        let next = queue.lock().unwrap_or_else(PoisonError::into_inner).next();
                        let (index, checked) = next?;
                        if let Err(failure) = check(checked, verifier) {
                            failed.store(true, Ordering::Relaxed);
                            return Some((index, failure));
                        }
                    }
                    None
                })
            })
            .collect();
        workers
            .into_iter()
            .filter_map(|worker| worker.join().expect("a signature worker does not panic"))
            .collect::<Vec<_>>()
    });
    match failures.into_iter().min_by_key(|(index, _)| *index) {
        Some((_, failure)) => Err(failure),
        None => Ok(()),
    }
}

/// Check the signatures of a commit's proofs, best first, until one is good.
fn check(checked: &mut CommitStatus, verifier: &Verifier) -> Result<(), super::Failure> {
    check_signatures(checked, &mut |record| {
        let signature = record
            .signature
            .as_ref()
            .expect("only signed records are checked");
        Ok(match verifier.check(signature, record.time)? {
            signing::SignatureCheck::Good { principal, key } => {
                SignatureStatus::Good { principal, key }
            }
            signing::SignatureCheck::Bad => SignatureStatus::Bad,
            signing::SignatureCheck::UnknownSigner { key } => {
                SignatureStatus::UnknownSigner { key }
            }
        })
    })
    .map_err(failure)
}

fn failure(error: signing::Error) -> super::Failure {
    let hint = signing_hint(&error);
    super::Failure::from(error).hint(hint)
}

/// What fixes signing, or checking a signature, after `error`.
pub(super) fn signing_hint(error: &signing::Error) -> Hint {
    hint::signing(match error {
        signing::Error::NotSsh { .. } => SigningFix::NotSsh,
        signing::Error::NoKey | signing::Error::KeyMissing { .. } => SigningFix::Key,
        signing::Error::ProgramMissing { .. } | signing::Error::Spawn { .. } => SigningFix::Program,
        signing::Error::SignFailed { .. } => SigningFix::Sign,
        signing::Error::AllowedSigners { .. } => SigningFix::AllowedSigners,
        signing::Error::TempFile { .. } => SigningFix::TempFile,
    })
}
