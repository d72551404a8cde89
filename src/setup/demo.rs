//! `init`'s demonstration: verify.sh runs on the working state and the gate's decision about it
//! is shown; then a copy of verify.sh with `exit 1` appended runs on the same state and the gate
//! refuses it. Both runs are real; nothing is recorded.
//!
//! The repository is left as it was: no proof, no anchor, no run log, no objects (the state tree
//! is computed without writing), and the copy lives in a temporary directory outside it. It never
//! prints; the report renders what it returns.

use std::os::unix::fs::{DirBuilderExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::time::Duration;

use crate::gate::{self, AnchorFacts, Answer, Decision, Facts, Observed, RunFacts, State};
use crate::git::{self, Repo, StateTree};
use crate::proof::{Outcome, Script};
use crate::verify;

/// The lines appended to the copy: the second is the `exit 1` that must make the gate refuse.
pub(crate) const APPENDED: &str = "echo 'prove-it init: exit 1 appended to a copy of verify.sh, to see the gate refuse it' >&2\nexit 1\n";

#[derive(Debug, thiserror::Error)]
pub(crate) enum Error {
    #[error(transparent)]
    Git(#[from] git::Error),
    #[error(transparent)]
    Verify(#[from] verify::Error),
    #[error("could not prepare the demonstration's copy of verify.sh in {path}")]
    Copy {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

/// One run of the demonstration and what the gate made of it.
#[derive(Debug)]
pub(crate) struct Shown {
    /// "exit code 0", "timed out after 300 s", ...
    pub exit: String,
    pub passed: bool,
    pub duration_ms: u64,
    /// The outcome the gate gave (PROVEN, DISPROVEN, ...).
    pub outcome: crate::outcome::Outcome,
    /// What the gate would answer: a block for the agent, a notice for the user, or nothing.
    pub answer: Answer,
}

#[derive(Debug)]
pub(crate) struct Demo {
    pub tree: String,
    /// verify.sh itself.
    pub verify: Shown,
    /// The copy with `exit 1` appended.
    pub copy: Shown,
}

/// The policy the gate would apply.
pub(crate) struct DemoRun<'a> {
    pub timeout: Duration,
    pub max_blocks: u32,
    pub interrupt: Option<&'a AtomicBool>,
}

/// verify.sh run once on the working state, as the gate would run it, and what the gate would
/// answer (`doctor --run`). Nothing is recorded.
#[derive(Debug)]
pub(crate) struct Checked {
    pub tree: String,
    pub shown: Shown,
}

/// Run verify.sh alone on the working state of `repo`, whose verify.sh must be armed.
pub(crate) fn check(repo: &Repo, settings: &DemoRun<'_>) -> Result<Checked, Error> {
    let (checked, ..) = first(repo, settings)?;
    Ok(checked)
}

/// Run the demonstration on the working state of `repo`, whose verify.sh must be armed.
pub(crate) fn run(repo: &Repo, settings: &DemoRun<'_>) -> Result<Demo, Error> {
    let (Checked { tree, shown }, before, head_tree, verify) = first(repo, settings)?;
    let verify_shown = shown;
    let verify_path = repo.verify_path()?;

    let dir = TempDir::new()?;
    let copy_path = dir.path.join("verify.sh");
    let mut text = verify_text(repo, &verify_path)?;
    if !text.is_empty() && !text.ends_with('\n') {
        text.push('\n');
    }
    text.push_str(APPENDED);
    std::fs::write(&copy_path, text)
        .and_then(|()| std::fs::set_permissions(&copy_path, PermissionsExt::from_mode(0o700)))
        .map_err(|source| Error::Copy {
            path: copy_path.clone(),
            source,
        })?;
    let ran = execute(repo, &copy_path, &tree, settings)?;
    let facts = if ran.passed() {
        // The copy passed despite `exit 1`: verify.sh ends before its last line. Say so, as the
        // gate would have let such a turn end.
        RunFacts::Passed(Outcome::Proven)
    } else {
        failed(&ran, settings.timeout)
    };
    let copy_shown = judge(&ran, facts, &before, head_tree, verify, &tree, settings);
    drop(dir);

    Ok(Demo {
        tree,
        verify: verify_shown,
        copy: copy_shown,
    })
}

/// verify.sh on the working state, judged as at a session's first stop; with what the copy's
/// run needs of the state.
fn first(
    repo: &Repo,
    settings: &DemoRun<'_>,
) -> Result<(Checked, StateTree, Option<git::ObjectId>, Option<Script>), Error> {
    let before = repo.state_tree(false)?;
    let head_tree = repo.head_tree()?;
    let verify = before.verify.map(|(blob, mode)| Script { blob, mode });
    let tree = before.id.to_string();

    let verify_path = repo.verify_path()?;
    let ran = execute(repo, &verify_path, &tree, settings)?;
    let facts = if ran.passed() {
        // As the gate does: a run that changed the state it tested proves nothing.
        let after = repo.state_tree(false)?;
        if after.id == before.id {
            RunFacts::Passed(Outcome::Proven)
        } else {
            RunFacts::StateChanged {
                paths: before.changed_paths(&after),
            }
        }
    } else {
        failed(&ran, settings.timeout)
    };
    let shown = judge(&ran, facts, &before, head_tree, verify, &tree, settings);
    Ok((Checked { tree, shown }, before, head_tree, verify))
}

/// verify.sh's text, to copy. It just ran, so it is there; reading it can still fail (it is
/// not text, say), which is an error about the copy, as reading it in place always was.
fn verify_text(repo: &Repo, path: &Path) -> Result<String, Error> {
    let copy = |source| Error::Copy {
        path: path.to_owned(),
        source,
    };
    let data = match repo.read_verify() {
        Ok(Some(data)) => data,
        Ok(None) => return Err(copy(rustix::io::Errno::NOENT.into())),
        Err(git::Error::Unreadable { source, .. }) => return Err(copy(source)),
        Err(error) => return Err(error.into()),
    };
    // In the words `std::fs::read_to_string` has for it.
    String::from_utf8(data).map_err(|_| {
        copy(std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            "stream did not contain valid UTF-8",
        ))
    })
}

/// Run `program` from the worktree root as the gate would (section 5), without a log file.
fn execute(
    repo: &Repo,
    program: &Path,
    tree: &str,
    settings: &DemoRun<'_>,
) -> Result<verify::Ran, Error> {
    let env = verify::env(tree, "cli");
    Ok(verify::run(
        verify::Request {
            program,
            workdir: repo.workdir()?,
            env: &env,
            timeout: settings.timeout,
            log_path: None,
            log_cap: 0,
            tail_lines: crate::proof::TAIL_LINES,
            echo: None,
            interrupt: settings.interrupt,
            view: &crate::process::Wrap::Plain,
            env_remove: &[],
        },
        &mut |_| {},
    )?)
}

fn failed(ran: &verify::Ran, timeout: Duration) -> RunFacts {
    RunFacts::Failed {
        failing: vec![gate::Failing {
            check: None,
            ending: gate::Ending::Ended(crate::process::Ended::new(ran.exit, timeout)),
            log: None,
            lines: ran.tail.clone(),
        }],
        exit_code: ran.exit.code(),
        predates: Vec::new(),
    }
}

/// The gate's decision on a run, as at the first stop of a session that changed the working
/// state: the anchor holds this verify.sh and HEAD, and a state other than this one.
fn judge(
    ran: &verify::Ran,
    facts: RunFacts,
    state: &StateTree,
    head_tree: Option<git::ObjectId>,
    verify: Option<Script>,
    tree: &str,
    settings: &DemoRun<'_>,
) -> Shown {
    let timeout_secs = settings.timeout.as_secs();
    let observed = Observed {
        uncovered: (Vec::new(), 0),
        uncovered_policy: crate::context::policy::UncoveredPolicy::Notice,
        weakened: Vec::new(),
        weakened_refused: Vec::new(),
        weakening: crate::context::policy::VerifyEdits::default(),
        skip: false,
        armed_now: Ok(()),
        anchor: Some(AnchorFacts {
            armed: true,
            state_tree: None,
            head_tree,
            verify,
            max_blocks: settings.max_blocks,
            timeout_secs,
            retries: 0,
            sign: false,
            verify_edits: crate::context::policy::VerifyEdits::default(),
            provers: None,
            weakening: crate::context::policy::VerifyEdits::default(),
        }),
        armed_at_head: true,
        state: Some(State::Tree {
            tree: state.id,
            head_tree,
            verify,
            // The demonstration runs whatever proofs exist: it shows the gate deciding on a run.
            proof: None,
            checks: None,
        }),
        max_blocks: settings.max_blocks,
        timeout_secs,
        retries: 0,
        sign: false,
        verify_edits: crate::context::policy::VerifyEdits::default(),
        tampered: None,
        provers_at_head: None,
        checks_file_now: false,
        checks_file_at_head: false,
        filters_changed: false,
        ignores_changed: false,
        hiding_rules: Vec::new(),
        verify_at_head: None,
        blocks: 0,
        run: Some(facts),
    };
    let verdict = match gate::decide(&observed) {
        Decision::Verdict(verdict) => verdict,
        Decision::Run => unreachable!("the run's result is part of what was observed"),
    };
    let outcome = verdict.outcome();
    Shown {
        exit: crate::proof::exit_value(crate::process::Ended::new(ran.exit, settings.timeout)),
        passed: ran.passed(),
        duration_ms: crate::proof::millis(ran.duration),
        outcome,
        answer: Answer {
            verdict,
            facts: Facts {
                tree: Some(tree.to_string()),
                ..Facts::default()
            },
            to_the_agent: false,
        },
    }
}

/// A private directory under the system's temporary directory, removed when dropped.
struct TempDir {
    path: PathBuf,
}

impl TempDir {
    fn new() -> Result<TempDir, Error> {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.subsec_nanos());
        let path =
            std::env::temp_dir().join(format!("git-prove-it-demo-{}-{nanos}", std::process::id()));
        std::fs::DirBuilder::new()
            .mode(0o700)
            .create(&path)
            .map_err(|source| Error::Copy {
                path: path.clone(),
                source,
            })?;
        Ok(TempDir { path })
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.path);
    }
}
