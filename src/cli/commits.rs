//! Proving commits rather than the working state: each in a temporary linked worktree, proven
//! there as `git prove-it run` proves a working state, in this process, with only the scripts
//! run in the commit's view. `run <rev>`, `run <range>`, `bisect` and the pre-push hook prove
//! commits through here, so a commit is proven one way whoever asks.
//!
//! gix cannot add linked worktrees; `git::TempWorktree` runs `git worktree` for that.

use anyhow::Context as _;

use crate::exit;
use crate::git::{self, Repo, TempWorktree};
use crate::isolation::{self, Isolation};
use crate::outcome::Outcome;
use crate::report::{self, Hint, RunReport, RunResult, could_not, hint, refusal};

/// How to prove a commit in a temporary worktree.
#[derive(Clone)]
pub(crate) struct CommitRun<'a> {
    pub host: &'a str,
    pub timeout: std::time::Duration,
    pub verbose: bool,
    pub force: bool,
    /// Draw a progress line on stderr while the checks run (not when several commits run).
    pub progress: bool,
    /// How many checks the run may run at once, when not the policy's: a range proves several
    /// commits at once and shares the cores between them.
    pub jobs: Option<usize>,
    /// Where the run keeps its output, when not in the state directory's last-run.log: a
    /// range gives each commit its own.
    pub log: Option<std::path::PathBuf>,
    /// A script from outside the history to run instead of the commit's own checks.
    pub exec: Option<&'a ExecScript>,
}

/// A script from outside the history (`--exec`), read once: its blob (written to the object
/// database, so that a record's `verify:` can be read back), and a private copy of its bytes
/// outside the checkout, which is what runs at each commit. A script of the working tree would
/// be hidden under a commit's view (the checkout's path shows the commit's worktree there),
/// and the copy keeps every commit's run to the same bytes.
pub(crate) struct ExecScript {
    /// The script as given, made absolute.
    source: std::path::PathBuf,
    /// The directory holding the copy, removed with this value.
    dir: std::path::PathBuf,
    /// The check that runs the copy, named `exec:<file name>`.
    pub check: crate::proof::Check,
}

impl ExecScript {
    /// Read the script at `path` (relative to the current directory) once, for `repo`.
    pub(crate) fn read(repo: &Repo, path: &std::path::Path) -> Result<Self, super::Failure> {
        use std::os::unix::fs::PermissionsExt as _;
        let source = std::path::absolute(path).with_context(|| could_not::find_the_script(path))?;
        let bytes = std::fs::read(&source)
            .with_context(|| could_not::read_the_script(&source))
            .map_err(|error| super::Failure::from(error).hint(hint::name_an_exec_file()))?;
        let file_name = source
            .file_name()
            .and_then(|name| name.to_str())
            .filter(|name| !name.chars().any(char::is_control))
            .ok_or_else(|| refusal::exec_without_a_name(&source))?
            .to_string();
        let blob = repo.write_blob(&bytes)?;
        let dir = repo
            .commit_worktrees()?
            .join(format!("exec-{}-{blob}", std::process::id()));
        std::fs::create_dir_all(&dir).with_context(|| could_not::create(&dir))?;
        let copy = dir.join(&file_name);
        std::fs::write(&copy, &bytes)
            .and_then(|()| std::fs::set_permissions(&copy, std::fs::Permissions::from_mode(0o500)))
            .with_context(|| could_not::write(&copy))?;
        let script = crate::proof::Script {
            blob,
            mode: 0o100_755,
        };
        Ok(ExecScript {
            source,
            dir,
            check: crate::proof::Check::exec(&file_name, copy.display().to_string(), script),
        })
    }

    /// An error when the script, or the copy that runs, no longer holds the bytes read at the
    /// start: a range or a search proven by two scripts would name one of them falsely.
    pub(crate) fn unchanged(&self, repo: &Repo) -> Result<(), super::Failure> {
        let blob = self.check.script.map(|script| script.blob);
        for path in [self.source.as_path(), std::path::Path::new(&self.check.run)] {
            let now = std::fs::read(path).ok().map(|bytes| repo.hash_blob(&bytes));
            if now != blob {
                let was = blob.map(|b| b.to_string()).unwrap_or_default();
                return Err(refusal::exec_changed(path, &was).into());
            }
        }
        Ok(())
    }
}

impl Drop for ExecScript {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// The one commit `rev` names, or an error with `hint` for a range: a proof, a step of a
/// search, is for one tree.
pub(crate) fn one_commit(
    repo: &Repo,
    rev: &str,
    hint: Hint,
) -> Result<git::CommitInfo, super::Failure> {
    let selection = repo.select(&[rev.to_string()])?;
    match (selection.tips.as_slice(), selection.hidden.is_empty()) {
        ([id], true) => Ok(repo.commit_info(*id)?),
        _ => Err(super::Failure::from(refusal::not_one_commit(rev)).hint(hint)),
    }
}

/// A commit proven in a worktree: `run`'s exit code and report, or the error that ended it.
pub(crate) struct Proved {
    pub run: Result<(u8, RunReport), super::Failure>,
    /// The commit could not be tested: its setup failed, so its checks never ran.
    pub cannot_test: Option<FailedRun>,
}

impl Proved {
    /// `run`'s exit code for the commit.
    pub(crate) fn code(&self) -> u8 {
        match (&self.cannot_test, &self.run) {
            (Some(_), _) => exit::NOT_PROVEN,
            (None, Ok((code, _))) => *code,
            (None, Err(_)) => exit::ERROR,
        }
    }
}

/// Prove `commit` in a new temporary worktree, and return what `run` found. The worktree is
/// removed afterwards, whatever happened, and on Ctrl-C, SIGTERM or SIGHUP once the run has
/// stopped. A commit whose setup failed is an error, with the setup's last lines as hints.
pub(crate) fn prove_commit(
    repo: &Repo,
    commit: &git::CommitInfo,
    how: &CommitRun<'_>,
) -> Result<Result<(u8, RunReport), super::Failure>, super::Failure> {
    let interrupt = crate::process::interrupt_flag()?;
    let worktree = repo.add_temp_worktree(commit.id)?;
    let proved = prove_in(repo, &worktree, commit, how, &interrupt);
    isolation::release(worktree.path());
    worktree.remove()?;
    let proved = proved?;
    match proved.cannot_test {
        None => Ok(proved.run),
        Some(setup) => {
            Err(
                refusal::setup_failed(commit.id, &setup.exit, &setup.tail, setup.log.as_deref())
                    .into(),
            )
        }
    }
}

/// Prove `commit`, checked out in `worktree`, there.
///
/// The commit's state is proven as `git prove-it run` proves a working state, with the
/// worktree's own context (its policy, read as a run there would read it), in this process;
/// its scripts (the setup, verify.sh, each check's) run in the view that keeps the checkout
/// from them, without the caller's repository-locating variables (`GIT_DIR`, `GIT_WORK_TREE`,
/// ...), which git sets for hooks. When `interrupt` is raised, the scripts are ended and
/// waited for, so that the worktree is removed only once nothing runs in it.
pub(crate) fn prove_in(
    repo: &Repo,
    worktree: &TempWorktree,
    commit: &git::CommitInfo,
    how: &CommitRun<'_>,
    interrupt: &std::sync::atomic::AtomicBool,
) -> Result<Proved, super::Failure> {
    let checkout = worktree.repo(repo)?.handle();
    let state = checked_out(repo, &checkout, worktree, commit)?;
    if interrupt.load(std::sync::atomic::Ordering::SeqCst) {
        return Err(refusal::interrupted_before_the_run().into());
    }
    let (isolation, view) = isolated(repo, worktree)?;
    let set_up = set_up(repo, worktree, commit, how, &view, interrupt)?;
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
        return Ok(setup_failed(commit, exit, tail, &commit_log));
    }
    let view = super::run::CommitView {
        isolation,
        view,
        untestable_failure: (!lacking.is_empty()).then(|| report::commits::no_setup(&lacking)),
        read: Some(worktree.last_read()),
        before: matches!(set_up, SetUp::Undeclared | SetUp::Nothing).then(|| state.clone()),
    };
    let run = prove_there(checkout, how, view, interrupt);
    if let SetUp::Ran { log } = &set_up {
        into_commit_log(log, &commit_log, true);
    }
    Ok(Proved {
        run,
        cannot_test: None,
    })
}

/// The state of `commit` as `worktree` (opened as `checkout`) holds it, which every run there
/// is keyed by: found as expected, or read from disk, after checking the commit out again
/// with git and cleaning the worktree while it is not the commit's tree. An error when it
/// still is not: no proof made there would prove the commit.
fn checked_out(
    repo: &Repo,
    checkout: &Repo,
    worktree: &TempWorktree,
    commit: &git::CommitInfo,
) -> Result<git::StateTree, super::Failure> {
    // Read from disk (only the files changed since the worktree's last reading): the state
    // every run here is keyed by, unless a setup changes it.
    let read = || -> Result<git::StateTree, super::Failure> {
        let prior = worktree.last_read().get().unwrap_or(git::IndexTrust::Disk);
        let (state, trust) = checkout.state_tree_from_disk(prior)?;
        worktree.last_read().set(Some(trust));
        Ok(state)
    };
    // A worktree moved in this process from the commit before, whose reading after its run
    // found it exactly that commit, holds this commit's files: nothing is read before the run.
    // The reading after it trusts only what that last reading found and the filesystem's clock
    // shows unchanged since, so the files the move wrote (and anything else changed since)
    // are read then, and the run is proven only if they are this commit's.
    let before = worktree.proving(commit.tree);
    let expected = worktree.moved_in_place()
        && matches!(
            worktree.last_read().get(),
            Some(git::IndexTrust::Since { tree, .. }) if Some(tree) == before
        )
        && !declares_setup(repo, commit.tree);
    let mut state = if expected {
        // On the handle that moved the worktree: its object cache holds the trees just read.
        worktree.repo(repo)?.expected_state(commit.tree)?
    } else {
        read()?
    };
    if state.id != commit.tree && worktree.moved_in_place() {
        // Moved in this process, only what differs between the commits was written: a file
        // the commit before's run changed in place is written back by git.
        worktree.checkout_with_git(commit.id)?;
        state = read()?;
    }
    if state.id != commit.tree {
        // What the commit before's run left untracked goes only where there is some.
        worktree.clean()?;
        state = read()?;
    }
    if state.id != commit.tree {
        return Err(refusal::checkout_differs(commit.id, state.id, commit.tree).into());
    }
    Ok(state)
}

/// A commit whose setup failed: not proven, and not tested, with the setup's exit and last
/// lines, and the commit's log that holds its output.
fn setup_failed(
    commit: &git::CommitInfo,
    exit: &str,
    tail: &[String],
    commit_log: &std::path::Path,
) -> Proved {
    Proved {
        run: Ok((exit::NOT_PROVEN, not_tested(commit))),
        cannot_test: Some(FailedRun {
            name: "setup".to_string(),
            exit: exit.to_string(),
            exit_code: None,
            duration_ms: 0,
            tail: tail.to_vec(),
            log: Some(commit_log.display().to_string()),
        }),
    }
}

/// Prove the commit's state in `checkout`, its worktree, as `run` proves a working state: with
/// the worktree's own context and policy (but `how.jobs` checks at once, when given), its
/// scripts run through `view`, and its words on stderr. `interrupt` ends the scripts as it
/// ends the setup: a signal's flag, or the caller's own (`watch` ends a commit that left its
/// range).
fn prove_there(
    checkout: Repo,
    how: &CommitRun<'_>,
    view: super::run::CommitView<'_>,
    interrupt: &std::sync::atomic::AtomicBool,
) -> Result<(u8, RunReport), super::Failure> {
    let timeout = how.timeout.as_secs();
    let ctx = crate::context::Context::resolve(checkout, Some(timeout));
    ctx.policy
        .clone()
        .map_err(super::Failure::from)
        .and_then(|mut policy| {
            if let Some(jobs) = how.jobs {
                policy.jobs = jobs;
            }
            let proving = super::run::Proving {
                host: how.host,
                force: how.force,
                verbose: how.verbose,
                progress: how.progress,
                log: how.log.clone(),
                exec: how.exec.map(|exec| &exec.check),
                commit: Some(view),
            };
            let mut live = super::run::Live {
                interrupt: Some(interrupt),
                events: None,
            };
            super::run::prove_live(
                &ctx,
                &ctx.repo,
                &policy,
                &proving,
                &mut live,
                &mut std::io::stderr(),
            )
        })
}

/// The report of a commit whose checks never ran.
fn not_tested(commit: &git::CommitInfo) -> RunReport {
    RunReport {
        version: crate::report::JSON_VERSION,
        outcome: Outcome::NotProven,
        tree: Some(commit.tree.to_string()),
        result: RunResult::Checks {
            checks: Vec::new(),
            uncovered: Vec::new(),
            uncovered_count: 0,
        },
    }
}

/// Whether the commit's checks file declares a `setup` (or cannot be read, which its run
/// reports).
fn declares_setup(repo: &Repo, tree: gix::ObjectId) -> bool {
    !matches!(
        crate::proof::CheckSet::of_tree(repo, tree)
            .map_err(drop)
            .and_then(|set| set.setup().map_err(drop)),
        Ok(None)
    )
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
    view: &crate::process::Wrap,
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
    let mut request = view
        .request(&program, worktree.path())
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
        .with_context(|| could_not::run_the_setup_script(&setup.run))?;
    if finished.success() {
        // The checks must run on the commit's files: a setup may write only what the state
        // leaves out (ignored files such as node_modules), never change a file of the commit.
        let after = worktree.repo(repo)?.state_tree(false)?;
        if after.id == commit.tree {
            worktree.mark_set_up(Some(key));
            return Ok(SetUp::Ran { log });
        }
        let exit = report::commits::setup_changed_files(&setup.run, after.id);
        record_setup_failure(repo, commit, how, &exit, &finished.tail);
        return Ok(SetUp::Failed {
            exit,
            tail: finished.tail,
            log,
        });
    }
    let exit = report::commits::setup_failed(
        &setup.run,
        crate::proof::exit_value(crate::process::Ended::new(finished.exit, how.timeout)),
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
    let mut found: Vec<String> = checkouts_dependency_folders(checkout)
        .into_iter()
        .filter(|relative| !repo.tree_has(tree, relative).unwrap_or(true))
        .collect();
    found.truncate(5);
    found
}

/// The dependency folders of `checkout`, sorted, looked for once a command: the checkout is the
/// same for every commit of a range.
fn checkouts_dependency_folders(checkout: &std::path::Path) -> Vec<String> {
    static FOUND: std::sync::Mutex<Option<(std::path::PathBuf, Vec<String>)>> =
        std::sync::Mutex::new(None);
    let mut cached = FOUND
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    if let Some((path, found)) = cached.as_ref()
        && path == checkout
    {
        return found.clone();
    }
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
            if is_dependency(&path) {
                found.push(relative.to_string_lossy().into_owned());
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
    *cached = Some((checkout.to_owned(), found.clone()));
    found
}

/// How a run in `worktree` is kept from the checkout the command was started from, and the
/// program and arguments that start each script there so (empty: plainly): in a mount namespace that shows the worktree at
/// the checkout's path where the machine allows it; else plainly, once no link from this
/// environment into the checkout was found (a run that could follow one would prove the
/// checkout's code under the commit's name, so it is refused).
fn isolated(
    repo: &Repo,
    worktree: &TempWorktree,
) -> Result<(Isolation, crate::process::Wrap), super::Failure> {
    let Ok(checkout) = repo.workdir() else {
        // A bare repository has no checkout to leak from.
        return Ok((Isolation::None, crate::process::Wrap::Plain));
    };
    // Kept along the worktree's commits once made: each script enters it.
    if let Some(wrap) = isolation::kept(checkout, worktree.path()) {
        return Ok((Isolation::Namespace, wrap));
    }
    let outer = repo.enclosing_worktree()?;
    let view = isolation::View {
        checkout: checkout.to_owned(),
        worktree: worktree.path().to_owned(),
        common_dir: repo.common_dir_real(),
        git_link: worktree.git_link().to_owned(),
    };
    if outer.is_none()
        && let Some(wrap) = isolation::enter(&view)
    {
        return Ok((Isolation::Namespace, wrap));
    }
    if isolation::namespaces_work() {
        let prefix = match outer {
            // Started from a worktree nested in another: the commit is shown at the nested
            // worktree's path, and the outer one is hidden, as a stop there hides it.
            Some(outer) => {
                let stage = repo.commit_worktrees()?.join("stage");
                std::fs::create_dir_all(&stage).with_context(|| could_not::create(&stage))?;
                isolation::Nested {
                    outer,
                    source: worktree.path().to_owned(),
                    target: std::fs::canonicalize(checkout).unwrap_or_else(|_| checkout.to_owned()),
                    common_dir: repo.common_dir_real(),
                    stage,
                }
                .prefix()
            }
            // Made, but not kept and entered: made again for each script.
            None => view.prefix(),
        };
        return Ok((Isolation::Namespace, crate::process::Wrap::Prefix(prefix)));
    }
    let vars: Vec<_> = std::env::vars_os()
        .filter(|(name, _)| !git::LOCAL_ENV.iter().any(|local| name == *local))
        .collect();
    let leaks = isolation::leaks(checkout, worktree.path(), &vars);
    if !leaks.is_empty() {
        let named: Vec<String> = leaks.iter().map(ToString::to_string).collect();
        return Err(refusal::commit_run_leaks(&named, checkout).into());
    }
    Ok((Isolation::None, crate::process::Wrap::Plain))
}

/// One check (or verify.sh, or a commit's setup) that failed on a commit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct FailedRun {
    /// `verify.sh` for the root verify.sh, else the check's name (`setup` for the setup).
    pub name: String,
    /// How it ended, as a failure record's `exit:` says it: "exit code 1", "timed out after
    /// 300 s".
    pub exit: String,
    pub exit_code: Option<i32>,
    pub duration_ms: u64,
    /// Its last lines.
    pub tail: Vec<String>,
    pub log: Option<String>,
}

/// A check (or verify.sh) that kept a commit from being proven.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Failed {
    /// It failed.
    Run(FailedRun),
    /// It passed, but the paths `paths` of its inputs changed while it ran: nothing was
    /// recorded.
    InputsChanged { name: String, paths: Vec<String> },
}

impl Failed {
    /// The failed run, unless its inputs changed.
    pub(crate) fn run(&self) -> Option<&FailedRun> {
        match self {
            Failed::Run(run) => Some(run),
            Failed::InputsChanged { .. } => None,
        }
    }
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
    Failed(Vec<Failed>),
    /// Nothing is armed at the commit: why.
    NotArmed(String),
    /// verify.sh (or a check) said the commit cannot be tested (exit 125): why, with the
    /// checks that said so ("check api: exit 125").
    CannotTest(String),
    /// The run ended in an error (exit 2): what it said.
    Error(String),
}

impl Proved {
    /// The run's result, from its exit code and its report.
    pub(crate) fn ran(&self) -> Ran {
        if let Some(setup) = &self.cannot_test {
            return Ran::CannotTest(setup.exit.clone());
        }
        match &self.run {
            Ok((code, report)) => ran_of(*code, report),
            Err(failure) => Ran::Error(failure.report().message),
        }
    }
}

/// The proofs a run made now (only the contested ones with `contested_only`), each as its
/// (duration, flaky).
fn made_now(report: &RunReport, contested_only: bool) -> Vec<(u64, u32)> {
    let made = |result: &RunResult| match result {
        RunResult::Proven {
            proof, contested, ..
        } if *contested || !contested_only => Some((proof.duration_ms, proof.flaky)),
        _ => None,
    };
    match &report.result {
        RunResult::Checks { checks, .. } => checks
            .iter()
            .filter_map(|check| made(&check.result))
            .collect(),
        result => made(result).into_iter().collect(),
    }
}

/// A run's result, from its exit code and its report.
fn ran_of(code: u8, report: &RunReport) -> Ran {
    let longest = |made: &[(u64, u32)]| made.iter().map(|(ms, _)| *ms).max().unwrap_or(0);
    let flakiest = |made: &[(u64, u32)]| made.iter().map(|(_, n)| *n).max().unwrap_or(0);
    match code {
        exit::NOT_ARMED => Ran::NotArmed(report::commits::verify_not_armed(match &report.result {
            RunResult::NotArmed { reason, .. } => Some(reason),
            _ => None,
        })),
        exit::OK => {
            let made = made_now(report, false);
            Ran::Proven {
                outcome: report.outcome,
                ran: !made.is_empty(),
                duration_ms: longest(&made),
                flaky: flakiest(&made),
                contested: false,
            }
        }
        exit::NOT_PROVEN => {
            let results: Vec<(&str, &RunResult)> = match &report.result {
                RunResult::Checks { checks, .. } => checks
                    .iter()
                    .map(|check| (check.name.as_str(), &check.result))
                    .collect(),
                result => vec![(crate::proof::VERIFY_CHECK, result)],
            };
            let failed: Vec<Failed> = results
                .iter()
                .filter_map(|(name, result)| failed_run(name, result))
                .collect();
            let contested = made_now(report, true);
            if failed.is_empty() && !contested.is_empty() {
                return Ran::Proven {
                    outcome: Outcome::NotProven,
                    ran: true,
                    duration_ms: longest(&contested),
                    flaky: flakiest(&contested),
                    contested: true,
                };
            }
            if failed.is_empty() {
                Ran::Error(report::commits::no_failing_check_named())
            } else {
                Ran::Failed(failed)
            }
        }
        exit::CANNOT_TEST => Ran::CannotTest(cannot_test(report)),
        code => Ran::Error(report::commits::run_exited(code)),
    }
}

/// Why a run that exited 125 could not test its commit: `exit 125` for verify.sh alone, else
/// each check that said so (`check api: exit 125`).
fn cannot_test(report: &RunReport) -> String {
    match &report.result {
        RunResult::CannotTest { reason, .. } => reason.clone(),
        RunResult::Checks { checks, .. } => {
            let checks: Vec<String> = checks
                .iter()
                .filter_map(|check| match &check.result {
                    RunResult::CannotTest { reason, .. } => {
                        Some(report::commits::of_check(&check.name, reason))
                    }
                    _ => None,
                })
                .collect();
            if checks.is_empty() {
                crate::proof::EXIT_125.to_string()
            } else {
                checks.join(", ")
            }
        }
        _ => crate::proof::EXIT_125.to_string(),
    }
}

/// `result` of the check `name` as a failure, if it failed or changed its inputs.
fn failed_run(name: &str, result: &RunResult) -> Option<Failed> {
    match result {
        RunResult::Failed {
            exit,
            exit_code,
            duration_ms,
            tail,
            log,
            ..
        } => Some(Failed::Run(FailedRun {
            name: name.to_string(),
            exit: exit.clone(),
            exit_code: *exit_code,
            duration_ms: *duration_ms,
            tail: tail.clone(),
            log: log.clone(),
        })),
        RunResult::StateChanged { changed_paths, .. } => Some(Failed::InputsChanged {
            name: name.to_string(),
            paths: changed_paths.clone(),
        }),
        _ => None,
    }
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;
    use crate::report::{CheckRun, ProofSummary};

    pub(crate) fn proof(duration_ms: u64, flaky: u32) -> ProofSummary {
        ProofSummary {
            outcome: Outcome::Proven,
            signed_off_by: String::new(),
            identity_missing: false,
            time: String::new(),
            host: "cli".into(),
            session: None,
            duration_ms,
            flaky,
            verify_edited: false,
            signed: false,
            uncovered: Vec::new(),
            uncovered_count: 0,
            isolation: None,
            renames_unwatched: false,
            weakened: Vec::new(),
            changed: Vec::new(),
            protect_diff: None,
            tests: None,
            tests_weakened: Vec::new(),
        }
    }

    pub(crate) fn report(outcome: Outcome, result: RunResult) -> RunReport {
        RunReport {
            version: crate::report::JSON_VERSION,
            outcome,
            tree: None,
            result,
        }
    }

    pub(crate) fn check(name: &str, result: RunResult) -> CheckRun {
        CheckRun {
            name: name.into(),
            run: format!("{name}.sh"),
            input_tree: String::new(),
            result,
        }
    }

    pub(crate) fn failed(exit: &str, exit_code: Option<i32>, tail: &[&str]) -> RunResult {
        RunResult::Failed {
            exit: exit.into(),
            exit_code,
            duration_ms: 0,
            output_bytes: 0,
            tail: tail.iter().map(ToString::to_string).collect(),
            log: None,
            attempts: 1,
            failure_recorded: None,
        }
    }

    fn cannot(reason: &str) -> RunResult {
        RunResult::CannotTest {
            reason: reason.into(),
            exit_code: Some(125),
            duration_ms: 0,
            tail: Vec::new(),
            log: None,
            cannot_test_recorded: None,
        }
    }

    fn checks(checks: Vec<CheckRun>) -> RunResult {
        RunResult::Checks {
            checks,
            uncovered: Vec::new(),
            uncovered_count: 0,
        }
    }

    /// Regression: a contested pass exits 1 with a `proven` result, which read as "exited 1,
    /// but its report names no check that failed" instead of the pass it was.
    #[test]
    fn a_contested_pass_reads_as_not_a_pass() {
        let contested = RunResult::Proven {
            proof: proof(40, 0),
            proofs_ref: crate::git::PROOFS_REF,
            contested: true,
        };
        assert_eq!(
            ran_of(1, &report(Outcome::NotProven, contested)),
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
        let proven = RunResult::Proven {
            proof: proof(40, 1),
            proofs_ref: crate::git::PROOFS_REF,
            contested: false,
        };
        assert_eq!(
            ran_of(0, &report(Outcome::Proven, proven)),
            Ran::Proven {
                outcome: Outcome::Proven,
                ran: true,
                duration_ms: 40,
                flaky: 1,
                contested: false,
            }
        );
        let already = RunResult::AlreadyProven {
            proof: proof(40, 0),
        };
        assert!(matches!(
            ran_of(0, &report(Outcome::Proven, already)),
            Ran::Proven { ran: false, .. }
        ));
        let Ran::Failed(failed) = ran_of(
            1,
            &report(
                Outcome::Disproven,
                checks(vec![
                    check("api", RunResult::AlreadyProven { proof: proof(1, 0) }),
                    check("docs", failed("exit code 3", Some(3), &["x"])),
                    check(
                        "web",
                        RunResult::StateChanged {
                            duration_ms: 0,
                            after: String::new(),
                            changed_paths: vec!["web/a".into()],
                        },
                    ),
                ]),
            ),
        ) else {
            panic!("not a failure")
        };
        assert_eq!(failed.len(), 2);
        let docs = failed[0].run().unwrap();
        assert_eq!((docs.name.as_str(), docs.exit_code), ("docs", Some(3)));
        assert_eq!(
            failed[1],
            Failed::InputsChanged {
                name: "web".into(),
                paths: vec!["web/a".into()]
            }
        );
        assert_eq!(
            ran_of(
                3,
                &report(
                    Outcome::InsufficientEvidence,
                    RunResult::NotArmed {
                        reason: "does not exist",
                        hints: Vec::new(),
                    }
                )
            ),
            Ran::NotArmed("verify.sh does not exist".into())
        );
        assert_eq!(
            ran_of(125, &report(Outcome::NotProven, cannot("exit 125"))),
            Ran::CannotTest("exit 125".into())
        );
        assert_eq!(
            ran_of(
                125,
                &report(
                    Outcome::NotProven,
                    checks(vec![
                        check("api", RunResult::AlreadyProven { proof: proof(1, 0) }),
                        check("docs", cannot("exit 125")),
                    ])
                )
            ),
            Ran::CannotTest("check docs: exit 125".into())
        );
        let error = Proved {
            run: Err(super::super::Failure::from(anyhow::anyhow!("boom"))),
            cannot_test: None,
        };
        assert_eq!(error.ran(), Ran::Error("boom".into()));
        assert_eq!(error.code(), exit::ERROR);
    }
}
