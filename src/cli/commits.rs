//! Proving commits rather than the working state: each in a temporary linked worktree, by this
//! same program (`git prove-it run`) started there. `run <rev>`, `run <range>`, `bisect` and
//! the pre-push hook prove commits through here, so a commit is proven one way whoever asks.
//!
//! gix cannot add linked worktrees; `git::TempWorktree` runs `git worktree` for that.

use anyhow::Context as _;

use crate::exit;
use crate::git::{self, Repo, TempWorktree};
use crate::isolation::{self, Isolation};
use crate::outcome::Outcome;

/// Where the run in the worktree writes its report.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Output {
    /// Our stdout.
    Inherit,
    /// Our stderr (a hook's stdout is not for people).
    ToStderr,
    /// Kept, for the caller to read (with `json`, one JSON object).
    Capture,
}

/// How to prove a commit in a temporary worktree.
#[derive(Clone)]
pub(crate) struct CommitRun<'a> {
    pub host: &'a str,
    pub timeout: std::time::Duration,
    pub verbose: bool,
    pub json: bool,
    pub force: bool,
    pub output: Output,
    /// How many checks the run may run at once (`PROVE_IT_JOBS`), when not the policy's: a
    /// range proves several commits at once and shares the cores between them.
    pub jobs: Option<usize>,
    /// Where the run keeps its output (`run --log`), when not in the state directory's
    /// last-run.log: a range gives each commit its own.
    pub log: Option<std::path::PathBuf>,
}

/// The one commit `rev` names, or an error with `hint` for a range: a proof, a step of a
/// search, is for one tree.
pub(crate) fn one_commit(
    repo: &Repo,
    rev: &str,
    hint: impl Into<String>,
) -> Result<git::CommitInfo, super::Failure> {
    let selection = repo.select(&[rev.to_string()])?;
    match (selection.tips.as_slice(), selection.hidden.is_empty()) {
        ([id], true) => Ok(repo.commit_info(*id)?),
        _ => {
            Err(super::Failure::from(anyhow::anyhow!("{rev:?} is not a single commit")).hint(hint))
        }
    }
}

/// A commit proven in a worktree: `run`'s exit code, and its report when it was captured.
pub(crate) struct Proved {
    pub code: u8,
    pub stdout: Vec<u8>,
    /// The commit could not be tested: its setup failed, so its checks never ran.
    pub cannot_test: Option<FailedRun>,
}

/// Prove `commit` in a new temporary worktree and return `run`'s exit code for it. The
/// worktree is removed afterwards, whatever happened, and on Ctrl-C, SIGTERM or SIGHUP once
/// the run has stopped.
pub(crate) fn prove_commit(
    repo: &Repo,
    commit: &git::CommitInfo,
    how: &CommitRun<'_>,
) -> Result<u8, super::Failure> {
    let interrupt = crate::process::interrupt_flag()?;
    let worktree = repo.add_temp_worktree(commit.id)?;
    let proved = prove_in(repo, &worktree, commit, how, &interrupt);
    worktree.remove()?;
    let proved = proved?;
    match proved.cannot_test {
        None => Ok(proved.code),
        Some(setup) => {
            let mut failure = super::Failure::from(anyhow::anyhow!(
                "cannot test commit {}: {}; its checks did not run",
                commit.id,
                setup.exit
            ));
            for line in setup.tail.iter().rev().take(5).rev() {
                failure = failure.hint(format!("setup printed: {line}"));
            }
            if let Some(log) = &setup.log {
                failure = failure.hint(format!("its full output: {log}"));
            }
            Err(failure.hint("fix the setup script of prove-it.toml, or run it by hand in a fresh clone to see why it fails there"))
        }
    }
}

/// Prove `commit`, checked out in `worktree`, there.
///
/// The proving is done by this same program (`git prove-it run`) started inside the worktree
/// with the caller's repository-locating variables (`GIT_DIR`, `GIT_WORK_TREE`, ...) removed,
/// so that neither it nor verify.sh acts on the caller's repository by mistake: git sets those
/// variables for hooks. When `interrupt` is raised, the request is passed on (SIGTERM) and the
/// run waited for, so that the worktree is removed only once nothing runs in it.
pub(crate) fn prove_in(
    repo: &Repo,
    worktree: &TempWorktree,
    commit: &git::CommitInfo,
    how: &CommitRun<'_>,
    interrupt: &std::sync::atomic::AtomicBool,
) -> Result<Proved, super::Failure> {
    let state = repo
        .open_linked_worktree(worktree.path())
        .and_then(|wt| wt.state_tree(false))?;
    if state.id != commit.tree {
        return Err(super::Failure::from(anyhow::anyhow!(
            "checking out {} gives the state tree {}, not the commit's tree {}, so no proof made there would prove the commit",
            commit.id,
            state.id,
            commit.tree
        ))
        .hint("clean or smudge filters (.gitattributes, git-lfs) or ignored files committed anyway change what a checkout holds")
        .hint("prove the working state instead: check the commit out and run 'git prove-it run'"));
    }
    if interrupt.load(std::sync::atomic::Ordering::SeqCst) {
        return Err(anyhow::anyhow!("interrupted before verify.sh started").into());
    }
    let set_up = set_up(repo, worktree, commit, how, interrupt)?;
    // Without a setup, a run that lacks the checkout's dependency folders cannot test.
    let lacking = match &set_up {
        SetUp::Undeclared => dependency_folders(repo, commit.tree),
        _ => Vec::new(),
    };
    // The setup's output goes into the commit's log, before the checks'.
    let commit_log = match &how.log {
        Some(log) => log.clone(),
        None => repo.last_run_log()?,
    };
    if let SetUp::Failed { exit, tail, log } = &set_up {
        into_commit_log(log, &commit_log, false);
        return Ok(Proved {
            code: exit::NOT_PROVEN,
            stdout: Vec::new(),
            cannot_test: Some(FailedRun {
                name: "setup".to_string(),
                exit: exit.clone(),
                exit_code: None,
                duration_ms: 0,
                tail: tail.clone(),
                log: Some(commit_log.display().to_string()),
                state_changed: false,
            }),
        });
    }
    let exe = std::env::current_exe().context("could not find the git-prove-it executable")?;
    let (isolation, request) = isolated(repo, worktree, exe.as_os_str())?;
    let mut cmd = request
        .arg("run")
        .args(["--host", how.host])
        .args(["--isolation", isolation.as_str()])
        .arg("--shown-git-dir")
        .arg(repo.common_dir_real())
        .args(["--timeout", &how.timeout.as_secs().to_string()])
        .stdout(match how.output {
            Output::Inherit => crate::process::Stream::Inherit,
            Output::ToStderr => crate::process::Stream::ToStderr,
            Output::Capture => crate::process::Stream::ALL,
        })
        .stderr(crate::process::Stream::Inherit)
        .forward_interrupt(interrupt);
    for (flag, on) in [
        ("--verbose", how.verbose),
        ("--json", how.json),
        ("--force", how.force),
    ] {
        if on {
            cmd = cmd.arg(flag);
        }
    }
    for name in git::LOCAL_ENV {
        cmd = cmd.env_remove(name);
    }
    if let Some(log) = &how.log {
        // The run may not see the common git directory at its own path (the checkout is
        // mounted over it): name the log through the link the worktree's `.git` names.
        let common = repo.common_dir_real();
        let log = std::fs::canonicalize(log.parent().unwrap_or(log))
            .ok()
            .and_then(|dir| {
                let rest = dir.strip_prefix(&common).ok()?;
                Some(
                    worktree
                        .git_link()
                        .join("dir")
                        .join(rest)
                        .join(log.file_name()?),
                )
            })
            .unwrap_or_else(|| log.clone());
        cmd = cmd.arg("--log").arg(log);
    }
    if let Some(jobs) = how.jobs {
        cmd = cmd.env(crate::context::policy::JOBS_ENV, jobs.to_string());
    }
    if !lacking.is_empty() {
        cmd = cmd.arg("--without-setup").arg(lacking.join(", "));
    }
    let finished = cmd
        .run()
        .map_err(crate::process::Error::into_source)
        .context("could not run git-prove-it in the temporary worktree");
    if let SetUp::Ran { log } = &set_up {
        into_commit_log(log, &commit_log, true);
    }
    let finished = finished?;
    Ok(Proved {
        cannot_test: None,
        code: finished
            .status
            .code()
            .and_then(|code| u8::try_from(code).ok())
            .unwrap_or(exit::ERROR),
        stdout: finished.stdout,
    })
}

/// What became of the checks file's `setup` in a commit's worktree.
enum SetUp {
    /// The commit declares no setup.
    Undeclared,
    /// Its inputs are as the worktree's last setup had them.
    Nothing,
    /// It ran and passed; its output is in `log`, for the commit's log.
    Ran { log: std::path::PathBuf },
    /// It failed: the commit cannot be tested, which says nothing of its checks.
    Failed {
        exit: String,
        tail: Vec<String>,
        log: std::path::PathBuf,
    },
}

/// Run the `setup` script the commit's checks file declares in `worktree`, as its checks will
/// run (isolated the same way, under the same timeout), unless the worktree was already set up
/// for a commit with the same `setup-inputs`. Its output goes to a `.setup.log` beside the
/// commit's log, which [`into_commit_log`] then moves into it.
fn set_up(
    repo: &Repo,
    worktree: &TempWorktree,
    commit: &git::CommitInfo,
    how: &CommitRun<'_>,
    interrupt: &std::sync::atomic::AtomicBool,
) -> Result<SetUp, super::Failure> {
    // A checks file that cannot be read is the run's to report, with the checks it declares.
    let setup = crate::proof::CheckSet::of_tree(repo, commit.tree)
        .map_err(drop)
        .and_then(|set| set.setup().map_err(drop));
    let setup = match setup {
        Ok(Some(setup)) => setup,
        Ok(None) => return Ok(SetUp::Undeclared),
        Err(()) => return Ok(SetUp::Nothing),
    };
    let key = match &setup.inputs {
        Some(inputs) => repo.tree_input_tree(commit.tree, inputs)?,
        None => commit.id,
    };
    if worktree.set_up_for() == Some(key) {
        return Ok(SetUp::Nothing);
    }
    let log = match &how.log {
        Some(log) => log.with_extension("setup.log"),
        None => repo.state_dir()?.join("last-setup.log"),
    };
    let program = worktree.path().join(&setup.run);
    let (_, request) = isolated(repo, worktree, program.as_os_str())?;
    let mut request = request
        .stdin(crate::process::Stdin::Null)
        .combined(crate::process::Combined {
            tail_lines: crate::proof::TAIL_LINES,
            log: Some((log.clone(), crate::verify::LOG_CAP)),
            echo: how
                .verbose
                .then(|| Box::new(std::io::stderr()) as Box<dyn std::io::Write + Send>),
        })
        .timeout(how.timeout)
        .interrupt(interrupt)
        .env("PROVE_IT_SETUP", &setup.run);
    for name in git::LOCAL_ENV {
        request = request.env_remove(name);
    }
    // Set up again from scratch next time if this one does not finish.
    worktree.mark_set_up(None);
    let finished = request
        .run()
        .map_err(crate::process::Error::into_source)
        .with_context(|| format!("could not run the setup script {}", setup.run))?;
    if finished.success() {
        // The checks must run on the commit's files: a setup may write only what the state
        // leaves out (ignored files such as node_modules), never change a file of the commit.
        let after = repo
            .open_linked_worktree(worktree.path())
            .and_then(|wt| wt.state_tree(false))?;
        if after.id == commit.tree {
            worktree.mark_set_up(Some(key));
            return Ok(SetUp::Ran { log });
        }
        let exit = format!(
            "setup {} changed the commit's files (its state tree became {}); a setup may write only ignored files, such as node_modules",
            setup.run, after.id
        );
        record_setup_failure(repo, commit, how, &exit, &finished.tail);
        return Ok(SetUp::Failed {
            exit,
            tail: finished.tail,
            log,
        });
    }
    let exit = format!(
        "setup {} failed: {}",
        setup.run,
        finished.exit.describe(how.timeout)
    );
    record_setup_failure(repo, commit, how, &exit, &finished.tail);
    Ok(SetUp::Failed {
        exit,
        tail: finished.tail,
        log,
    })
}

/// Move the setup's output, `setup_log`, into the commit's log: before the checks' output when
/// `checks_ran` (the run wrote the log after the setup), else on its own. Best effort, as a
/// log is: a log that cannot be written costs its reader the setup's lines, nothing else.
fn into_commit_log(setup_log: &std::path::Path, commit_log: &std::path::Path, checks_ran: bool) {
    use std::io::Write as _;
    use std::os::unix::fs::OpenOptionsExt as _;
    let Ok(setup) = std::fs::read(setup_log) else {
        return;
    };
    let checks = if checks_ran {
        std::fs::read(commit_log).unwrap_or_default()
    } else {
        Vec::new()
    };
    let written = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .open(commit_log)
        .and_then(|mut file| {
            file.write_all(b"--- setup ---\n")?;
            file.write_all(&setup)?;
            if checks_ran {
                file.write_all(b"--- checks ---\n")?;
                file.write_all(&checks)?;
            }
            Ok(())
        });
    if written.is_ok() {
        let _ = std::fs::remove_file(setup_log);
    }
}

/// Record that each check of `commit` could not be tested because its setup failed (a
/// cannot-test record, never a failure of its code). A record that cannot be written does not
/// change the result, as for failure records.
fn record_setup_failure(
    repo: &Repo,
    commit: &git::CommitInfo,
    how: &CommitRun<'_>,
    reason: &str,
    tail: &[String],
) {
    let Ok(set) = crate::proof::CheckSet::of_tree(repo, commit.tree) else {
        return;
    };
    let now = time::OffsetDateTime::now_utc();
    for check in &set.checks {
        let Ok(script) = check.runnable() else {
            continue;
        };
        let key = if check.is_root() {
            Ok(commit.tree)
        } else {
            repo.tree_input_tree(commit.tree, &check.inputs)
        };
        let Ok(key) = key else { continue };
        let mut record = crate::proof::CannotTest::new(
            repo,
            key,
            check.record_name(),
            script,
            reason,
            how.host,
            now,
        );
        record.head = Some(commit.id);
        record.output = crate::proof::bounded_output(tail);
        let _ = crate::proof::record_cannot_test(repo, &record);
    }
}

/// Folders where installed dependencies live.
const DEPENDENCY_FOLDERS: &[&str] = &["node_modules", "vendor", "bower_components"];

/// The checkout's dependency folders (`node_modules`, `vendor/`, a virtualenv: a folder holding
/// `pyvenv.cfg`), at its root or one folder down (`packages/x/node_modules`), that the commit's
/// tree does not hold: a commit's worktree lacks them.
fn dependency_folders(repo: &Repo, tree: git::ObjectId) -> Vec<String> {
    let Ok(checkout) = repo.workdir() else {
        return Vec::new();
    };
    let is_dependency = |path: &std::path::Path| {
        path.file_name()
            .is_some_and(|name| DEPENDENCY_FOLDERS.iter().any(|folder| name == *folder))
            || path.join("pyvenv.cfg").is_file()
    };
    let mut found = Vec::new();
    let look = |dir: &std::path::Path, depth: u8, found: &mut Vec<String>| {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return Vec::new();
        };
        let mut below = Vec::new();
        for entry in entries.flatten() {
            let path = entry.path();
            if !entry.file_type().is_ok_and(|kind| kind.is_dir()) || entry.file_name() == ".git" {
                continue;
            }
            let Ok(relative) = path.strip_prefix(checkout) else {
                continue;
            };
            let relative = relative.to_string_lossy().into_owned();
            if is_dependency(&path) {
                if !repo.tree_has(tree, &relative).unwrap_or(true) {
                    found.push(relative);
                }
            } else if depth == 0 {
                below.push(path);
            }
        }
        below
    };
    for dir in look(checkout, 0, &mut found) {
        look(&dir, 1, &mut found);
    }
    found.sort();
    found.truncate(5);
    found
}

/// How a run in `worktree` is kept from the checkout the command was started from, and the
/// request that starts `program` there so: in a mount namespace that shows the worktree at
/// the checkout's path where the machine allows it; else plainly, once no link from this
/// environment into the checkout was found (a run that could follow one would prove the
/// checkout's code under the commit's name, so it is refused).
fn isolated(
    repo: &Repo,
    worktree: &TempWorktree,
    program: &std::ffi::OsStr,
) -> Result<(Isolation, crate::process::Request<'static>), super::Failure> {
    let Ok(checkout) = repo.workdir() else {
        // A bare repository has no checkout to leak from.
        return Ok((
            Isolation::None,
            crate::process::Request::new(program).current_dir(worktree.path()),
        ));
    };
    if isolation::namespaces_work()
        && let Some(outer) = repo.enclosing_worktree()?
    {
        // Started from a worktree nested in another: the commit is shown at the nested
        // worktree's path, and the outer one is hidden, as a stop there hides it.
        let stage = repo.commit_worktrees()?.join("stage");
        std::fs::create_dir_all(&stage)
            .with_context(|| format!("could not create {}", stage.display()))?;
        let view = isolation::Nested {
            outer,
            source: worktree.path().to_owned(),
            target: std::fs::canonicalize(checkout).unwrap_or_else(|_| checkout.to_owned()),
            common_dir: repo.common_dir_real(),
            stage,
        };
        return Ok((Isolation::Namespace, view.request(program, worktree.path())));
    }
    if isolation::namespaces_work() {
        let view = isolation::View {
            checkout: checkout.to_owned(),
            worktree: worktree.path().to_owned(),
            common_dir: repo.common_dir_real(),
            git_link: worktree.git_link().to_owned(),
        };
        return Ok((Isolation::Namespace, view.request(program, worktree.path())));
    }
    let vars: Vec<_> = std::env::vars_os()
        .filter(|(name, _)| !git::LOCAL_ENV.iter().any(|local| name == *local))
        .collect();
    let leaks = isolation::leaks(checkout, worktree.path(), &vars);
    if !leaks.is_empty() {
        let named: Vec<String> = leaks.iter().map(ToString::to_string).collect();
        let failure = super::Failure::from(anyhow::anyhow!(
            "not run: the run could reach the checkout's code ({}), and this machine cannot mount the commit's worktree at {}, so a proof would not be the commit's",
            named.join("; "),
            checkout.display()
        ));
        return Err(failure
            .hint("run it where unprivileged user namespaces are allowed (util-linux unshare 2.38 or later), so that the commit is mounted at the checkout's path")
            .hint("or run it without the link: unset the variable, deactivate the virtualenv, or install the package from the commit in a `setup` script of prove-it.toml"));
    }
    Ok((
        Isolation::None,
        crate::process::Request::new(program).current_dir(worktree.path()),
    ))
}

/// What `run --json` printed in a worktree, as the commands that prove commits read it: the
/// run's report (for verify.sh, or for each check), or a failure's message.
#[derive(Debug, Default, serde::Deserialize)]
#[serde(default)]
struct Report {
    name: Option<String>,
    outcome: Option<String>,
    result: Option<String>,
    exit: Option<String>,
    exit_code: Option<i32>,
    duration_ms: u64,
    tail: Vec<String>,
    log: Option<String>,
    changed_paths: Vec<String>,
    proof: Option<ProofReport>,
    checks: Vec<Report>,
    /// A run that found nothing armed: why.
    reason: Option<String>,
    /// A run that ended in an error: what it said.
    message: Option<String>,
    /// A pass whose proof a failing run of the same script contests.
    contested: bool,
}

#[derive(Debug, Default, serde::Deserialize)]
#[serde(default)]
struct ProofReport {
    duration_ms: u64,
    flaky: u32,
}

/// One check (or verify.sh) that failed on a commit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct FailedRun {
    /// `verify.sh` for the root verify.sh, else the check's name.
    pub name: String,
    /// "exit code 1", "timed out after 300 s", or "changed its inputs while it ran".
    pub exit: String,
    pub exit_code: Option<i32>,
    pub duration_ms: u64,
    /// Its last lines (for inputs that changed, `changed: <path>` lines).
    pub tail: Vec<String>,
    pub log: Option<String>,
    /// Passed, but its inputs changed while it ran: nothing was recorded.
    pub state_changed: bool,
}

/// What became of a commit proven in a worktree.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Ran {
    /// Proven: `ran` when something ran (a proof made now), with the longest run's time and
    /// the most failures before a pass (`flaky`).
    Proven {
        outcome: Outcome,
        ran: bool,
        duration_ms: u64,
        flaky: u32,
        /// It passed, and a failing run of the same script on the same key contests the proof
        /// it made: a pass to `bisect`, not proven to a range.
        contested: bool,
    },
    /// Each check (or verify.sh) that failed, or changed its inputs while it ran.
    Failed(Vec<FailedRun>),
    /// Nothing is armed at the commit: why.
    NotArmed(String),
    /// verify.sh (or a check) said the commit cannot be tested (exit 125): why, with the
    /// checks that said so ("check api: exit 125").
    CannotTest(String),
    /// The run ended in an error (exit 2): what it said.
    Error(String),
}

impl Proved {
    /// The run's result, read from its exit code and its `run --json` report.
    pub(crate) fn ran(&self) -> Ran {
        if let Some(setup) = &self.cannot_test {
            return Ran::CannotTest(setup.exit.clone());
        }
        let report = serde_json::from_slice::<Report>(&self.stdout);
        let outcome = |report: &Report| {
            report
                .outcome
                .as_deref()
                .and_then(Outcome::parse)
                .unwrap_or(Outcome::Proven)
        };
        match (self.code, report) {
            (exit::NOT_ARMED, report) => {
                Ran::NotArmed(report.ok().and_then(|report| report.reason).map_or_else(
                    || "verify.sh is not armed".to_string(),
                    |r| format!("verify.sh {r}"),
                ))
            }
            (exit::OK, Ok(report)) => {
                let proofs: Vec<&ProofReport> = match report.result.as_deref() {
                    Some("checks") => report
                        .checks
                        .iter()
                        .filter(|c| c.result.as_deref() == Some("proven"))
                        .filter_map(|c| c.proof.as_ref())
                        .collect(),
                    Some("proven") => report.proof.iter().collect(),
                    _ => Vec::new(),
                };
                Ran::Proven {
                    outcome: outcome(&report),
                    ran: !proofs.is_empty(),
                    duration_ms: proofs.iter().map(|p| p.duration_ms).max().unwrap_or(0),
                    flaky: proofs.iter().map(|p| p.flaky).max().unwrap_or(0),
                    contested: false,
                }
            }
            (exit::NOT_PROVEN, Ok(report)) => {
                let (failed, contested): (Vec<FailedRun>, Vec<&Report>) =
                    match report.result.as_deref() {
                        Some("checks") => (
                            report.checks.iter().filter_map(failed_run).collect(),
                            report.checks.iter().filter(|c| c.contested).collect(),
                        ),
                        _ => (
                            failed_run(&report).into_iter().collect(),
                            [&report].into_iter().filter(|r| r.contested).collect(),
                        ),
                    };
                if failed.is_empty() && !contested.is_empty() {
                    let proofs: Vec<&ProofReport> =
                        contested.iter().filter_map(|c| c.proof.as_ref()).collect();
                    return Ran::Proven {
                        outcome: Outcome::NotProven,
                        ran: true,
                        duration_ms: proofs.iter().map(|p| p.duration_ms).max().unwrap_or(0),
                        flaky: proofs.iter().map(|p| p.flaky).max().unwrap_or(0),
                        contested: true,
                    };
                }
                if failed.is_empty() {
                    Ran::Error("its run exited 1, but its report names no check that failed".into())
                } else {
                    Ran::Failed(failed)
                }
            }
            (exit::CANNOT_TEST, Ok(report)) => Ran::CannotTest(cannot_test(&report)),
            (exit::ERROR, report) => Ran::Error(
                report
                    .ok()
                    .and_then(|report| report.message)
                    .unwrap_or_else(|| "its run ended in an error".to_string()),
            ),
            (code, _) => Ran::Error(format!("git prove-it run exited with {code} and no report")),
        }
    }
}

/// Why a run that exited 125 could not test its commit: `exit 125` for verify.sh alone, else
/// each check that said so (`check api: exit 125`).
fn cannot_test(report: &Report) -> String {
    let reason = |report: &Report| {
        report
            .reason
            .clone()
            .unwrap_or_else(|| crate::proof::EXIT_125.to_string())
    };
    if report.result.as_deref() != Some("checks") {
        return reason(report);
    }
    let checks: Vec<String> = report
        .checks
        .iter()
        .filter(|check| check.result.as_deref() == Some("cannot_test"))
        .map(|check| {
            let name = check.name.as_deref().unwrap_or(crate::proof::VERIFY_CHECK);
            format!("check {name}: {}", reason(check))
        })
        .collect();
    if checks.is_empty() {
        reason(report)
    } else {
        checks.join(", ")
    }
}

/// `report` as a failed run, if it failed or changed its inputs.
fn failed_run(report: &Report) -> Option<FailedRun> {
    let name = report
        .name
        .clone()
        .unwrap_or_else(|| crate::proof::VERIFY_CHECK.to_string());
    match report.result.as_deref()? {
        "failed" => Some(FailedRun {
            name,
            exit: report.exit.clone().unwrap_or_else(|| "failed".to_string()),
            exit_code: report.exit_code,
            duration_ms: report.duration_ms,
            tail: report.tail.clone(),
            log: report.log.clone(),
            state_changed: false,
        }),
        "state_changed" => Some(FailedRun {
            name,
            exit: "changed its inputs while it ran".to_string(),
            exit_code: None,
            duration_ms: report.duration_ms,
            tail: report
                .changed_paths
                .iter()
                .map(|path| format!("changed: {path}"))
                .collect(),
            log: None,
            state_changed: true,
        }),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ran(code: u8, json: &str) -> Ran {
        Proved {
            code,
            stdout: json.as_bytes().to_vec(),
            cannot_test: None,
        }
        .ran()
    }

    /// Regression: a contested pass exits 1 with a `proven` result, which read as "exited 1,
    /// but its report names no check that failed" instead of the pass it was.
    #[test]
    fn a_contested_pass_reads_as_not_a_pass() {
        assert_eq!(
            ran(
                1,
                r#"{"outcome":"NOT_PROVEN","result":"proven","contested":true,"proof":{"duration_ms":40}}"#,
            ),
            Ran::Proven {
                outcome: Outcome::NotProven,
                ran: true,
                duration_ms: 40,
                flaky: 0,
                contested: true,
            }
        );
    }

    #[test]
    fn a_run_report_reads_as_the_result_it_says() {
        assert_eq!(
            ran(
                0,
                r#"{"outcome":"PROVEN","result":"proven","proof":{"duration_ms":40,"flaky":1}}"#
            ),
            Ran::Proven {
                outcome: Outcome::Proven,
                ran: true,
                duration_ms: 40,
                flaky: 1,
                contested: false,
            }
        );
        assert!(matches!(
            ran(
                0,
                r#"{"outcome":"PROVEN","result":"already_proven","proof":{}}"#
            ),
            Ran::Proven { ran: false, .. }
        ));
        let Ran::Failed(failed) = ran(
            1,
            r#"{"outcome":"DISPROVEN","result":"checks","checks":[
                {"name":"api","result":"already_proven"},
                {"name":"docs","result":"failed","exit":"exit code 3","exit_code":3,"tail":["x"]},
                {"name":"web","result":"state_changed","changed_paths":["web/a"]}]}"#,
        ) else {
            panic!("not a failure")
        };
        assert_eq!(failed.len(), 2);
        assert_eq!(
            (failed[0].name.as_str(), failed[0].exit_code),
            ("docs", Some(3))
        );
        assert!(failed[1].state_changed && failed[1].tail == ["changed: web/a"]);
        assert_eq!(
            ran(3, r#"{"result":"not_armed","reason":"does not exist"}"#),
            Ran::NotArmed("verify.sh does not exist".into())
        );
        assert_eq!(
            ran(2, r#"{"code":"error","message":"boom"}"#),
            Ran::Error("boom".into())
        );
        assert!(matches!(ran(1, "not json"), Ran::Error(_)));
        assert_eq!(
            ran(125, r#"{"result":"cannot_test","reason":"exit 125"}"#),
            Ran::CannotTest("exit 125".into())
        );
        assert_eq!(
            ran(
                125,
                r#"{"result":"checks","checks":[{"name":"api","result":"proven"},
                {"name":"docs","result":"cannot_test","reason":"exit 125"}]}"#
            ),
            Ran::CannotTest("check docs: exit 125".into())
        );
    }
}
