//! Proofs on a remote: fetch its notes ref, merge it into ours by record union, push the result.
//! Failure records go the same way, only when asked (`sync --with-failures`): the pre-push hook
//! sends proofs alone.
//!
//! gix can neither fetch over every transport git supports nor push at all, so this module runs
//! `git` itself for the network; everything else (the merge, the ref updates) happens here.

use std::time::Duration;

use gix::ObjectId;

use crate::process::{self, Exit, Finished};

use super::names::{FAILURES_REF, PROOFS_REF, REMOTE_FAILURES_PREFIX, REMOTE_PROOFS_PREFIX};
use super::notes::backoff;
use super::notes_sync::{Merge, Merged, Travels, merge_notes, notes_ahead, notes_onto, ref_tip};
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
pub struct Synced {
    pub remote: String,
    /// The remote had proofs to fetch.
    pub fetched: bool,
    /// What merging them into the local proofs did (`UpToDate` when there was nothing to merge).
    pub merged: Merged,
    /// The remote's proofs were behind and the local ones were pushed.
    pub pushed: bool,
    /// The local notes the remote lacks (or holds otherwise) that were not sent: they name
    /// trees no commit holds.
    pub kept: usize,
}

/// A notes ref `sync` exchanges with a remote.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Exchanged {
    /// `refs/notes/prove-it`: always.
    Proofs,
    /// `refs/notes/prove-it-failures`: only with `--with-failures`.
    Failures,
}

impl Exchanged {
    /// The ref's name, here and on the remote.
    fn name(self) -> &'static str {
        match self {
            Exchanged::Proofs => PROOFS_REF,
            Exchanged::Failures => FAILURES_REF,
        }
    }

    /// The local ref where the remote's notes of this ref are kept as last fetched.
    fn tracking(self, remote: &str) -> String {
        match self {
            Exchanged::Proofs => tracking_ref(remote),
            Exchanged::Failures => format!("{REMOTE_FAILURES_PREFIX}{}", safe_name(remote)),
        }
    }

    /// What the notes are, in the message of a merge commit.
    fn what(self) -> &'static str {
        match self {
            Exchanged::Proofs => "proofs",
            Exchanged::Failures => "failure records",
        }
    }
}

/// The local ref where the proofs of `remote` are kept as last fetched. A remote given as a URL
/// or path gets a name made of its characters that are safe in a ref name.
pub fn tracking_ref(remote: &str) -> String {
    format!("{REMOTE_PROOFS_PREFIX}{}", safe_name(remote))
}

/// `remote` with every character that is not safe in a ref name as `_`.
fn safe_name(remote: &str) -> String {
    remote
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '-' | '_') {
                c
            } else {
                '_'
            }
        })
        .collect()
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

    /// The directory git searches first for a `git-<command>` program (`git --exec-path`),
    /// before `PATH`; None when git cannot say.
    pub fn exec_path(&self) -> Option<std::path::PathBuf> {
        let dir = self.run_git(&["--exec-path"]).ok()?;
        let dir = dir.trim_end_matches('\n');
        (!dir.is_empty()).then(|| std::path::PathBuf::from(dir))
    }

    /// Whether git's ignore rules hold the path `rel` of the worktree (a directory when it
    /// ends with `/`), tracked or not; `None` when git cannot say.
    pub fn ignores(&self, rel: &str) -> Option<bool> {
        let output = self
            .git_output(&["check-ignore", "-q", "--no-index", "--", rel])
            .ok()?;
        match output.status.code() {
            Some(0) => Some(true),
            Some(1) => Some(false),
            _ => None,
        }
    }

    /// `branch.<current branch>.<key>`; `None` on a detached HEAD or when it is not set.
    fn branch_config(&self, key: &str) -> Option<String> {
        let name = self.git.head_name().ok().flatten()?;
        let branch = name.shorten().to_string();
        self.config_string(&format!("branch.{branch}.{key}"))
    }

    /// The remote to sync with when none is named: the current branch's upstream remote, else
    /// `origin`.
    pub fn default_remote(&self) -> String {
        self.branch_config("remote")
            .filter(|remote| remote != ".")
            .unwrap_or_else(|| "origin".to_string())
    }

    /// The remote `git push` sends the current branch to: `branch.<b>.pushRemote`, then
    /// `remote.pushDefault`, then [`Repo::default_remote`]. In a contributor's clone of a
    /// project they do not own, that is their fork, not origin.
    pub fn push_remote(&self) -> String {
        self.branch_config("pushRemote")
            .or_else(|| self.config_string("remote.pushDefault"))
            .filter(|remote| remote != ".")
            .unwrap_or_else(|| self.default_remote())
    }

    /// Whether any of the last `limit` commits on `remote`'s remote-tracking branches (what
    /// the clone knows the remote has, not the commits made here since) was authored with
    /// `email` (git's own comparison of addresses: case-insensitive); `None` when the clone
    /// knows of no commit there.
    pub fn authored_any_on(
        &self,
        remote: &str,
        email: &str,
        limit: usize,
    ) -> Result<Option<bool>, Error> {
        let limit = limit.to_string();
        let remotes = format!("--remotes={remote}");
        let authors = self.run_git(&["log", "-n", &limit, "--format=%ae", &remotes, "--"])?;
        if authors.trim().is_empty() {
            return Ok(None);
        }
        Ok(Some(
            authors
                .lines()
                .any(|author| author.trim().eq_ignore_ascii_case(email)),
        ))
    }

    /// The commit the remote's ref `name` (its proofs, its failures) points at, or `None` when
    /// it has none.
    fn remote_tip(&self, remote: &str, name: &str) -> Result<Option<ObjectId>, Error> {
        // Asked first rather than fetched blindly: a fetch of a missing ref fails, and telling
        // that failure from others would mean parsing git's (translated) messages.
        let listed = self.run_git(&["ls-remote", "--", remote, name])?;
        Ok(tip_in(&listed, name))
    }

    /// Where the remote's proofs are, given up after `limit`, and never asking for credentials: for
    /// `doctor`, which must not hang on an unreachable remote or wait for a password. The git
    /// process and whatever it started (ssh, a credential helper) are killed as one group.
    pub fn remote_proofs_tip_within(
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
        Ok(tip_in(&String::from_utf8_lossy(&output.stdout), PROOFS_REF))
    }

    /// Fetch the remote's proofs, merge them into ours (`merge` joins the two texts of a note
    /// both sides hold: the proofs' record union), and push, on top of the remote's, the notes
    /// it lacks that `travels` lets go (those of trees a commit holds); the local ref is never
    /// rewritten for it. Retried when the remote moved before our push.
    pub fn sync_proofs(
        &self,
        remote: &str,
        merge: Merge<'_>,
        travels: Travels<'_>,
    ) -> Result<Synced, Error> {
        self.sync_notes(Exchanged::Proofs, remote, merge, travels)
    }

    /// The same exchange for the failure records (`refs/notes/prove-it-failures`), which only
    /// `sync --with-failures` asks for: `merge` joins two texts of a note as for proofs.
    pub fn sync_failures(
        &self,
        remote: &str,
        merge: Merge<'_>,
        travels: Travels<'_>,
    ) -> Result<Synced, Error> {
        self.sync_notes(Exchanged::Failures, remote, merge, travels)
    }

    /// Fetch the remote's notes `notes` (whose tip is `tip`) into their tracking ref and merge
    /// them into ours: the tip fetched, and what the merge did.
    fn fetch_and_merge(
        &self,
        notes: Exchanged,
        remote: &str,
        tip: ObjectId,
        merge: Merge<'_>,
    ) -> Result<(ObjectId, Merged), Error> {
        let name = notes.name();
        let tracking = notes.tracking(remote);
        let refspec = format!("+{name}:{tracking}");
        self.run_git(&[
            "fetch",
            "--quiet",
            "--no-write-fetch-head",
            "--no-recurse-submodules",
            remote,
            &refspec,
        ])?;
        let fetched = ref_tip(&self.git, &tracking)?.unwrap_or(tip);
        let merged = merge_notes(
            &self.git,
            name,
            fetched,
            &format!("prove-it: merge {} from {remote}", notes.what()),
            merge,
        )?;
        Ok((fetched, merged))
    }

    fn sync_notes(
        &self,
        notes: Exchanged,
        remote: &str,
        merge: Merge<'_>,
        travels: Travels<'_>,
    ) -> Result<Synced, Error> {
        let name = notes.name();
        for attempt in 1..=MAX_PUSH_ATTEMPTS {
            let remote_tip = self.remote_tip(remote, name)?;
            // The remote's notes as fetched: what the push builds on, so that it is a
            // fast-forward there.
            let (theirs, merged) = match remote_tip {
                Some(tip) => {
                    let (fetched, merged) = self.fetch_and_merge(notes, remote, tip, merge)?;
                    (Some(fetched), merged)
                }
                None => (None, Merged::UpToDate),
            };
            let local = ref_tip(&self.git, name)?;
            let mut synced = Synced {
                remote: remote.to_string(),
                fetched: remote_tip.is_some(),
                merged,
                pushed: false,
                kept: 0,
            };
            let Some(local) = local.filter(|local| Some(*local) != remote_tip) else {
                return Ok(synced);
            };
            let (send, kept) = notes_that_travel(&self.git, local, theirs, travels)?;
            synced.kept = kept;
            if send.is_empty() {
                return Ok(synced);
            }
            // Everything the remote lacks travels: the local ref itself (built on the remote's
            // by the merge above) is pushed, and both keep one history.
            let commit = if synced.kept == 0 {
                local
            } else {
                notes_onto(
                    &self.git,
                    theirs,
                    &send,
                    &format!("prove-it: {} of committed trees", notes.what()),
                )?
            };
            // --no-verify: pushing proofs must never run the pre-push hook, which may be the
            // very process doing this.
            let refspec = format!("{commit}:{name}");
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
                synced.pushed = true;
                return Ok(synced);
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
            name: format!("{name} on {remote}"),
            attempts: MAX_PUSH_ATTEMPTS,
        })
    }
}

/// The notes of `local` the remote lacks that travel, as (key, blob), and how many stay here.
/// Only what others can use travels: the notes of trees a commit holds, and those the remote
/// holds a note of already (someone sent it: ours joins it). The rest (states proven and never
/// committed) stays here, the local ref as it is.
fn notes_that_travel(
    git: &gix::Repository,
    local: ObjectId,
    theirs: Option<ObjectId>,
    travels: Travels<'_>,
) -> Result<(Vec<(ObjectId, ObjectId)>, usize), Error> {
    let ahead = notes_ahead(git, local, theirs)?;
    let keys: Vec<ObjectId> = ahead
        .iter()
        .filter(|note| !note.on_remote)
        .map(|note| note.key)
        .collect();
    let held = if keys.is_empty() {
        std::collections::HashSet::new()
    } else {
        travels(&keys)?
    };
    let send: Vec<(ObjectId, ObjectId)> = ahead
        .iter()
        .filter(|note| note.on_remote || held.contains(&note.key))
        .map(|note| (note.key, note.blob))
        .collect();
    let kept = ahead.len() - send.len();
    Ok((send, kept))
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

/// The commit of the ref `name` in `git ls-remote` output.
fn tip_in(listed: &str, name: &str) -> Option<ObjectId> {
    listed
        .lines()
        .filter_map(|line| line.split_once('\t'))
        .find(|(_, listed)| *listed == name)
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
        // Failures are tracked apart: a ref may not be both a ref and a folder of refs.
        assert_eq!(
            Exchanged::Failures.tracking("origin"),
            "refs/notes/prove-it-failures-remotes/origin"
        );
        assert_eq!(Exchanged::Proofs.tracking("origin"), tracking_ref("origin"));
    }

    #[test]
    fn ls_remote_output_gives_the_tip_of_the_ref_asked_for_only() {
        let proofs = "1111111111111111111111111111111111111111";
        let failures = "2222222222222222222222222222222222222222";
        let listed =
            format!("{proofs}\trefs/notes/prove-it\n{failures}\trefs/notes/prove-it-failures\n");
        assert_eq!(tip_in(&listed, PROOFS_REF).unwrap().to_string(), proofs);
        assert_eq!(tip_in(&listed, FAILURES_REF).unwrap().to_string(), failures);
        let proofs_only = format!("{proofs}\trefs/notes/prove-it\n");
        assert_eq!(tip_in(&proofs_only, FAILURES_REF), None);
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
