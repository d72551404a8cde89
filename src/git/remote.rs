//! Proofs on a remote: fetch its notes ref, merge it into ours by record union, push the result.
//!
//! gix can neither fetch over every transport git supports nor push at all, so this module runs
//! `git` itself for the network; everything else (the merge, the ref updates) happens here.

use std::time::Duration;

use gix::ObjectId;

use crate::process::{self, Exit, Finished};

use super::names::{PROOFS_REF, REMOTE_PROOFS_PREFIX};
use super::notes::backoff;
use super::notes_sync::{Merge, Merged, merge_notes, ref_tip};
use super::{Error, RefusedRef, RemoteSaid, Repo};

/// How often fetch, merge and push are retried when the remote's proofs moved between our fetch
/// and our push, or another push was updating them at that moment. Enough that a fleet of
/// clones syncing at once all get through (tests/it/sync.rs pins eight), with the pauses of
/// [`push_backoff`] between attempts.
const MAX_PUSH_ATTEMPTS: u32 = 12;

/// How long `remote_proofs_tip_within` waits for the end of git's output once git is gone: a
/// process that left git's group (an ssh control master) may hold the pipes for ever.
const EOF_GRACE: Duration = Duration::from_millis(250);

/// What `sync` did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Synced {
    pub remote: String,
    /// The remote had proofs to fetch.
    pub fetched: bool,
    /// What merging them into the local proofs did (`UpToDate` when there was nothing to merge).
    pub merged: Merged,
    /// The remote's proofs were behind and the local ones were pushed.
    pub pushed: bool,
}

/// The local ref where the proofs of `remote` are kept as last fetched. A remote given as a URL
/// or path gets a name made of its characters that are safe in a ref name.
pub(crate) fn tracking_ref(remote: &str) -> String {
    let safe: String = remote
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '-' | '_') {
                c
            } else {
                '_'
            }
        })
        .collect();
    format!("{REMOTE_PROOFS_PREFIX}{safe}")
}

impl Repo {
    /// Run git in this repository and return its stdout, or its stderr as the error.
    fn run_git(&self, args: &[&str]) -> Result<String, Error> {
        let output = self.git_output(args)?;
        if output.success() {
            Ok(String::from_utf8_lossy(&output.stdout).into_owned())
        } else {
            Err(failed(args, &output))
        }
    }

    /// `git` for this repository, stdin from `/dev/null`: run from the worktree root, or in a
    /// bare repository from our own directory with our environment, where git finds it as we
    /// did.
    fn git_command(&self, args: &[&str]) -> process::Request<'static> {
        let git = process::Request::new("git").args(args);
        match self.workdir() {
            Ok(root) => git.current_dir(root),
            Err(_) => git,
        }
    }

    fn git_output(&self, args: &[&str]) -> Result<Finished, Error> {
        self.git_command(args)
            .run()
            .map_err(|error| spawn_failed(args, error))
    }

    /// `branch.<current branch>.<key>`; `None` on a detached HEAD or when it is not set.
    fn branch_config(&self, key: &str) -> Option<String> {
        let name = self.git.head_name().ok().flatten()?;
        let branch = name.shorten().to_string();
        self.config_string(&format!("branch.{branch}.{key}"))
    }

    /// The remote to sync with when none is named: the current branch's upstream remote, else
    /// `origin`.
    pub(crate) fn default_remote(&self) -> String {
        self.branch_config("remote")
            .filter(|remote| remote != ".")
            .unwrap_or_else(|| "origin".to_string())
    }

    /// The remote `git push` sends the current branch to: `branch.<b>.pushRemote`, then
    /// `remote.pushDefault`, then [`Repo::default_remote`]. In a contributor's clone of a
    /// project they do not own, that is their fork, not origin (issue 21, item 5).
    pub(crate) fn push_remote(&self) -> String {
        self.branch_config("pushRemote")
            .or_else(|| self.config_string("remote.pushDefault"))
            .filter(|remote| remote != ".")
            .unwrap_or_else(|| self.default_remote())
    }

    /// Whether any of the last `limit` commits of HEAD was authored with `email` (git's own
    /// comparison of addresses: case-insensitive). An unborn HEAD has none.
    pub(crate) fn authored_any(&self, email: &str, limit: usize) -> Result<bool, Error> {
        if self.head_commit()?.is_none() {
            return Ok(false);
        }
        let limit = limit.to_string();
        let authors = self.run_git(&["log", "-n", &limit, "--format=%ae", "HEAD", "--"])?;
        Ok(authors
            .lines()
            .any(|author| author.trim().eq_ignore_ascii_case(email)))
    }

    /// The commit the remote's proofs ref points at, or `None` when it has none.
    pub(crate) fn remote_proofs_tip(&self, remote: &str) -> Result<Option<ObjectId>, Error> {
        // Asked first rather than fetched blindly: a fetch of a missing ref fails, and telling
        // that failure from others would mean parsing git's (translated) messages.
        let listed = self.run_git(&["ls-remote", "--", remote, PROOFS_REF])?;
        Ok(proofs_tip(&listed))
    }

    /// The same question, given up after `limit`, and never asking for credentials: for
    /// `doctor`, which must not hang on an unreachable remote or wait for a password. The git
    /// process and whatever it started (ssh, a credential helper) are killed as one group.
    pub(crate) fn remote_proofs_tip_within(
        &self,
        remote: &str,
        limit: Duration,
    ) -> Result<Option<ObjectId>, Error> {
        let args = ["ls-remote", "--", remote, PROOFS_REF];
        let output = self
            .git_command(&args)
            .env("GIT_TERMINAL_PROMPT", "0")
            .timeout(limit)
            .eof_grace(EOF_GRACE)
            .run()
            .map_err(|error| spawn_failed(&args, error))?;
        if output.exit == Exit::TimedOut {
            return Err(Error::GitTimedOut {
                command: args.join(" "),
                seconds: limit.as_secs(),
            });
        }
        if !output.success() {
            return Err(failed(&args, &output));
        }
        Ok(proofs_tip(&String::from_utf8_lossy(&output.stdout)))
    }

    /// Fetch the remote's proofs, merge them into ours (`merge` joins the two texts of a note
    /// both sides hold: the proofs' record union), and push the result when the remote lacks
    /// some of ours. Retried when the remote moved before our push.
    pub(crate) fn sync_proofs(&self, remote: &str, merge: Merge<'_>) -> Result<Synced, Error> {
        let tracking = tracking_ref(remote);
        for attempt in 1..=MAX_PUSH_ATTEMPTS {
            let remote_tip = self.remote_proofs_tip(remote)?;
            let mut merged = Merged::UpToDate;
            if let Some(tip) = remote_tip {
                let refspec = format!("+{PROOFS_REF}:{tracking}");
                self.run_git(&[
                    "fetch",
                    "--quiet",
                    "--no-write-fetch-head",
                    "--no-recurse-submodules",
                    remote,
                    &refspec,
                ])?;
                let fetched = ref_tip(&self.git, &tracking)?.unwrap_or(tip);
                merged = merge_notes(
                    &self.git,
                    PROOFS_REF,
                    fetched,
                    &format!("prove-it: merge proofs from {remote}"),
                    merge,
                )?;
            }
            let local = ref_tip(&self.git, PROOFS_REF)?;
            let synced = |pushed| Synced {
                remote: remote.to_string(),
                fetched: remote_tip.is_some(),
                merged,
                pushed,
            };
            if local.is_none() || local == remote_tip {
                return Ok(synced(false));
            }
            // --no-verify: pushing proofs must never run the pre-push hook, which may be the
            // very process doing this.
            let refspec = format!("{PROOFS_REF}:{PROOFS_REF}");
            let args = [
                "push",
                "--quiet",
                "--no-verify",
                "--porcelain",
                remote,
                &refspec,
            ];
            let output = self.git_output(&args)?;
            if output.success() {
                return Ok(synced(true));
            }
            let porcelain = String::from_utf8_lossy(&output.stdout);
            match refusal(&porcelain) {
                // Another writer got there first, or was updating the remote's proofs at that
                // very moment: give it a moment, a different one for each loser, so that they
                // do not collide again in step. On the last attempt, git's own words say what
                // is in the way (a lock left on the remote, say).
                Refusal::Moved | Refusal::Busy if attempt < MAX_PUSH_ATTEMPTS => {
                    std::thread::sleep(push_backoff(attempt));
                }
                Refusal::Moved => {}
                Refusal::Busy | Refusal::Final => {
                    let refused = refused_refs(&porcelain);
                    if refused.is_empty() {
                        return Err(failed(&args, &output));
                    }
                    return Err(Error::PushRefused {
                        remote: remote.to_string(),
                        refused,
                        said: remote_said(&output.stderr_text()),
                    });
                }
            }
        }
        Err(Error::RefContention {
            name: format!("{PROOFS_REF} on {remote}"),
            attempts: MAX_PUSH_ATTEMPTS,
        })
    }
}

/// The pause before push attempt `attempt + 1`: the local notes writer's jittered, growing
/// pause, scaled from its microseconds to a network round trip's tens of milliseconds (30 to
/// 60 ms first, doubling up to 0.5 to 1 s), so that a lock that never clears is reported after
/// about six seconds.
fn push_backoff(attempt: u32) -> Duration {
    backoff(attempt.saturating_sub(1).min(4)) * 60
}

/// The refs `git push --porcelain` reports as refused, each with git's own status and reason.
fn refused_refs(porcelain: &str) -> Vec<RefusedRef> {
    // `!<TAB><from>:<to><TAB><summary>`, the summary `[remote rejected] (<reason>)` and the like.
    porcelain
        .lines()
        .filter_map(|line| line.strip_prefix('!'))
        .filter_map(|line| {
            let mut fields = line.trim_start_matches('\t').splitn(2, '\t');
            let refspec = fields.next()?;
            let reason = fields.next()?.trim();
            let name = refspec.rsplit_once(':').map_or(refspec, |(_, to)| to);
            Some(RefusedRef {
                name: name.to_string(),
                reason: reason.to_string(),
            })
        })
        .collect()
}

/// What git printed on a refused push, less its summary line that says nothing more.
fn remote_said(stderr: &str) -> Option<RemoteSaid> {
    // The remote pads its lines with spaces to wipe progress output; they say nothing.
    let said: Vec<&str> = stderr
        .lines()
        .map(str::trim_end)
        .filter(|line| {
            let text = line.strip_prefix("remote:").unwrap_or(line).trim();
            !text.is_empty() && !line.contains("failed to push some refs")
        })
        .collect();
    (!said.is_empty()).then(|| RemoteSaid(said.join("\n")))
}

/// The proofs ref's commit in `git ls-remote` output.
fn proofs_tip(listed: &str) -> Option<ObjectId> {
    listed
        .lines()
        .filter_map(|line| line.split_once('\t'))
        .find(|(_, name)| *name == PROOFS_REF)
        .and_then(|(id, _)| ObjectId::from_hex(id.as_bytes()).ok())
}

fn failed(args: &[&str], output: &Finished) -> Error {
    Error::GitFailed {
        command: args.join(" "),
        stderr: output.stderr_text(),
    }
}

fn spawn_failed(args: &[&str], error: process::Error) -> Error {
    Error::GitSpawn {
        command: args.join(" "),
        source: error.into_source(),
    }
}

/// Why a push of the proofs was refused, as far as a retry is concerned.
#[derive(Debug, PartialEq, Eq)]
enum Refusal {
    /// The remote's ref moved (not a fast-forward): a new fetch and merge fixes it.
    Moved,
    /// The remote could not update its ref: it moved between the push's start and its update,
    /// or its lock was held, both the mark of another writer at the same moment. A new fetch
    /// and merge, a moment later, fixes it.
    Busy,
    /// Anything else, a remote hook's refusal among them: final.
    Final,
}

fn refusal(output: &str) -> Refusal {
    // `git push --porcelain` prints `!<TAB><refspec><TAB>[rejected] (fetch first)` for a ref
    // that moved, and `[remote rejected] (<reason>)` for the remote's refusals, where the
    // reason is receive-pack's own, untranslated: `failed to update ref` when its ref update
    // failed, `pre-receive hook declined` and the like when a hook refused.
    let refused = output.lines().filter(|line| line.starts_with('!'));
    let mut answer = Refusal::Final;
    for line in refused {
        if line.contains("[rejected]") {
            answer = Refusal::Moved;
        } else if line.contains("[remote rejected] (failed to update ref)") {
            answer = Refusal::Busy;
        } else {
            return Refusal::Final;
        }
    }
    answer
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_remote_given_as_a_url_gets_a_safe_tracking_ref() {
        assert_eq!(tracking_ref("origin"), "refs/notes/prove-it-remotes/origin");
        assert_eq!(
            tracking_ref("/srv/git/repo.git"),
            "refs/notes/prove-it-remotes/_srv_git_repo_git"
        );
        assert!(gix::refs::FullName::try_from(tracking_ref("git@host:a/b c..d")).is_ok());
    }

    #[test]
    fn a_moved_or_busy_ref_is_worth_another_fetch_and_merge_and_a_refusal_is_not() {
        let moved = "To ../remote.git\n!\trefs/notes/prove-it:refs/notes/prove-it\t[rejected] (fetch first)\nDone\n";
        assert_eq!(refusal(moved), Refusal::Moved);
        let busy = "To ../remote.git\n!\trefs/notes/prove-it:refs/notes/prove-it\t[remote rejected] (failed to update ref)\nDone\n";
        assert_eq!(refusal(busy), Refusal::Busy);
        let declined =
            "!\trefs/notes/prove-it:refs/notes/prove-it\t[remote rejected] (hook declined)\n";
        assert_eq!(refusal(declined), Refusal::Final);
        assert_eq!(refusal(""), Refusal::Final);
    }

    #[test]
    fn each_refused_ref_keeps_gits_own_reason() {
        let declined = "To /srv/remote.git\n!\trefs/notes/prove-it:refs/notes/prove-it\t[remote rejected] (pre-receive hook declined)\nDone\n";
        assert_eq!(
            refused_refs(declined),
            [RefusedRef {
                name: "refs/notes/prove-it".into(),
                reason: "[remote rejected] (pre-receive hook declined)".into(),
            }]
        );
        assert!(refused_refs("To x\n=\trefs/a:refs/a\t[up to date]\nDone\n").is_empty());
    }

    #[test]
    fn the_pauses_between_pushes_grow_and_differ() {
        assert!(push_backoff(1) >= Duration::from_millis(30));
        assert!(push_backoff(1) <= Duration::from_millis(60));
        assert!(push_backoff(5) >= Duration::from_millis(480));
        assert!(push_backoff(40) <= Duration::from_millis(960));
    }
}
