//! Acting on a decision to prove: run verify.sh on a state tree, check that the state did not
//! move under it (nor changed and changed back: every path's ctime is checked against the
//! run's start, on the filesystem's clock), and record the proof.
//!
//! Shared by `git prove-it run`, the agent hooks and the pre-push hook, so every proof is made
//! the same way. It never prints: progress goes through `on_tick`, results are values.

use std::io::Write;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

use super::record::{self, Outcome, Record, Script, Signature};
use crate::context::Clock;
use crate::git::{self, PROOFS_REF, Repo, StateTree};
use crate::signing::{self, Signer};
use crate::verify;

/// How many lines of a failing run's output are kept for the person or agent.
pub(crate) const TAIL_LINES: usize = 20;

#[derive(Debug, thiserror::Error)]
pub(crate) enum Error {
    #[error(transparent)]
    Verify(#[from] verify::Error),
    #[error(transparent)]
    Git(#[from] git::Error),
    /// `prove-it.sign` is on and the proof could not be signed: nothing was recorded.
    #[error("could not sign the proof; nothing was recorded")]
    Sign(#[from] signing::Error),
}

/// How to prove: everything about one run of verify.sh but the repository and the state tree.
pub(crate) struct ProveOptions<'a> {
    /// `PROVE_IT_HOST` for verify.sh and `host:` in the record.
    pub host: &'a str,
    pub session: Option<&'a str>,
    /// verify.sh as it was when the session started, if there is a session.
    pub anchor: Option<Script>,
    /// The unified diff of verify.sh since the anchor, when it was edited.
    pub verify_diff: Option<String>,
    pub timeout: Duration,
    /// Where to stream verify.sh's output as it runs (`--verbose`).
    pub echo: Option<Box<dyn Write + Send>>,
    /// Raised by a signal: kill verify.sh's process group and give up.
    pub interrupt: Option<&'a AtomicBool>,
    /// Where the full output goes; `None` for the state directory's last-run.log. Agent sessions
    /// keep their own, so that two sessions running at once do not write over each other's.
    pub log: Option<std::path::PathBuf>,
    /// The record's `time:`.
    pub clock: Clock,
}

/// What happened when verify.sh ran.
#[derive(Debug)]
pub(crate) enum Attempted {
    Proven(Record),
    Failed {
        /// "exit code 1", "timed out after 300 s", ...
        exit: String,
        exit_code: Option<i32>,
        duration_ms: u64,
        output_bytes: u64,
        tail: Vec<String>,
        /// The copy of this failing run's full output, kept apart from the log the next run
        /// writes over (`Repo::keep_failing_log`).
        log: std::path::PathBuf,
    },
    /// verify.sh passed but the working state after the run is not the one it tested, or some
    /// of its paths changed while it ran (and maybe changed back).
    StateChanged {
        duration_ms: u64,
        after: git::ObjectId,
        changed_paths: Vec<String>,
    },
}

/// Run verify.sh on `before` (the state tree computed just now, which must hold verify.sh) and
/// record a proof if it exits 0 and leaves the state as it found it. With `prove-it.sign` on,
/// the proof is signed, and a signer that cannot work is an error before verify.sh runs.
pub(crate) fn prove(
    repo: &Repo,
    before: &StateTree,
    attempt: ProveOptions<'_>,
    on_tick: &mut dyn FnMut(Duration),
) -> Result<Attempted, Error> {
    // Every proof is recorded here, so this is where signing is decided: asked for and
    // impossible is an error, never an unsigned proof.
    let home = std::env::var_os("HOME").map(std::path::PathBuf::from);
    let signer =
        Signer::from_config(&|key| repo.config_string(key), home.as_deref())?.map(|signer| {
            // Only a person at `git prove-it run` can answer a passphrase prompt.
            if attempt.host == "cli" {
                signer
            } else {
                signer.without_prompt()
            }
        });
    let log = match attempt.log {
        Some(log) => log,
        None => repo.last_run_log()?,
    };
    let env = verify::env(&before.id.to_string(), attempt.host);
    let program = repo.verify_path()?;
    // Whole seconds: a record is read by people, and sub-second precision adds nothing there.
    let started = attempt.clock.now_seconds();
    // A submodule is recorded by its commit only: its uncommitted changes would run untested
    // by any proof of this tree, so none is made (issue 19).
    if !before.dirty_submodules().is_empty() {
        return Err(git::Error::DirtySubmodules {
            paths: before.dirty_submodules().to_vec(),
        }
        .into());
    }
    // Last before the run: whatever changes the state from here on is seen by its ctime.
    let run_start = repo.mark_run_start()?;
    let outcome = verify::run(
        verify::Request {
            program: &program,
            workdir: repo.workdir()?,
            env: &env,
            timeout: attempt.timeout,
            log_path: Some(&log),
            log_cap: verify::LOG_CAP,
            tail_lines: TAIL_LINES,
            echo: attempt.echo,
            interrupt: attempt.interrupt,
        },
        on_tick,
    )?;
    let duration_ms = millis(outcome.duration);

    if !outcome.passed() {
        let exit_code = match outcome.exit {
            verify::Exit::Code(code) => Some(code),
            _ => None,
        };
        let exit = outcome.exit.describe(attempt.timeout);
        if matches!(
            outcome.exit,
            verify::Exit::TimedOut | verify::Exit::Interrupted
        ) {
            note_the_end(&log, &exit);
        }
        return Ok(Attempted::Failed {
            exit,
            exit_code,
            duration_ms,
            output_bytes: outcome.output_bytes,
            tail: outcome.tail,
            log: repo.keep_failing_log(&log)?,
        });
    }

    // The proof must be for the state that was tested: if verify.sh (or anything else) changed
    // it while it ran, record nothing, even if the state is back as it was: a helper could have
    // put good content in place for the run and restored the broken one before it ended.
    let after = repo.state_tree_since(run_start)?;
    if after.id != before.id || !after.touched().is_empty() || !after.dirty_submodules().is_empty()
    {
        let mut changed_paths = before.changed_paths(&after);
        changed_paths.extend_from_slice(after.touched());
        changed_paths.extend_from_slice(after.dirty_submodules());
        changed_paths.sort();
        changed_paths.dedup();
        return Ok(Attempted::StateChanged {
            duration_ms,
            after: after.id,
            changed_paths,
        });
    }

    let (blob, mode) = after
        .verify
        .expect("the state after the run equals the one before, which holds verify.sh");
    let verify = Script { blob, mode };
    let edited = attempt.anchor.is_some_and(|anchor| anchor != verify);
    let identity = repo.identity();
    let record = Record {
        outcome: if edited {
            Outcome::BoundedClaimSurvives
        } else {
            Outcome::Proven
        },
        tree: after.id,
        head: repo.head_commit()?,
        verify,
        verify_anchor: attempt.anchor,
        exit_code: 0,
        duration_ms,
        time: started,
        host: attempt.host.to_string(),
        session: attempt.session.map(str::to_string),
        tool: format!("git-prove-it {}", env!("CARGO_PKG_VERSION")),
        identity_missing: identity.missing,
        verify_diff: if edited { attempt.verify_diff } else { None },
        signed_off_by: identity.display.clone(),
        signature: None,
    };
    let record = match signer {
        None => record,
        Some(signer) => {
            let signed = record.canonical();
            Record {
                signature: Some(Signature {
                    armor: signer.sign(&signed)?,
                    signed,
                }),
                ..record
            }
        }
    };
    repo.notes(PROOFS_REF).update(
        after.id,
        &format!("prove-it: proof for tree {}", after.id),
        |existing| record::append(existing, &record),
    )?;
    Ok(Attempted::Proven(record))
}

pub(crate) fn millis(duration: Duration) -> u64 {
    u64::try_from(duration.as_millis()).unwrap_or(u64::MAX)
}

/// Ends the log of a run we killed (timed out, interrupted) with what ended it: a run killed at the
/// timeout may have printed nothing (cargo is silent until it finishes), and an empty log says
/// nothing about why (issue 21, item 1). Best effort: the run's verdict stands without it.
fn note_the_end(log: &std::path::Path, exit: &str) {
    use std::io::Write as _;
    if let Ok(mut file) = std::fs::OpenOptions::new().append(true).open(log) {
        let _ = writeln!(
            file,
            "[git-prove-it: verify.sh {exit}; it and everything it started were killed]"
        );
    }
}
