//! `git prove-it doctor`'s checks: each looks at one part of the set-up and says, as a
//! [`Finding`], whether it is right and how to fix it when it is not. Each agent host's trust
//! is read by its own module (`crate::hosts`).
//!
//! Never prints and never changes anything; `cli/doctor.rs` hands the findings to `report`.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::context::policy::{self, GatePolicy, VerifyEdits};
use crate::git::{self, PROOFS_REF, Repo};
use crate::hosts::{HookEntry, Host, Trust, Wiring, WiringError};
use crate::outcome::Outcome;
use crate::setup::demo;

/// How one check of `git prove-it doctor` came out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum Health {
    Ok,
    Warn,
    Fail,
}

/// One line of `git prove-it doctor`: what was checked, and how to fix it when it is not ok.
#[derive(Debug, Serialize)]
pub(crate) struct Finding {
    pub status: Health,
    pub what: String,
    pub fix: Option<String>,
}

/// What the checks are given: the repository, and what the command line resolved.
pub(crate) struct Inputs<'a> {
    pub repo: &'a Repo,
    /// verify.sh's timeout in force, in seconds, and the retries of a failing run
    /// (`prove-it.retries`), or why they cannot be resolved.
    pub verify_timeout: Result<(u64, u32), policy::Error>,
    /// Where git looks for this repository's hooks.
    pub hooks_dir: PathBuf,
    /// The pre-push hook `git prove-it install pre-push` writes.
    pub pre_push: &'a str,
    /// The git config `init` sets to union.
    pub merge_strategy: &'a str,
    /// The man page `git help prove-it` opens, if it finds one.
    pub man_page: Option<PathBuf>,
    /// Where doctor runs: a host started here may not read the project's hooks.
    pub cwd: PathBuf,
    /// The gate's policy in force (budget, ledger, `PROVE_IT_SKIP`, verify edits), or why it
    /// cannot be resolved.
    pub gate: Result<GatePolicy, policy::Error>,
    /// `prove-it.sign` is on.
    pub signed_only: bool,
    /// `doctor --run`: verify.sh's run on the working state, when it was asked for.
    pub ran: Option<Ran>,
    /// The directory git searches for `git-prove-it` before `PATH` (`git --exec-path`).
    pub exec_path: Option<PathBuf>,
    /// A variable of doctor's environment, where a host's own settings may be (its cap on
    /// blocks).
    pub env: &'a dyn Fn(&str) -> Option<String>,
}

/// What `doctor --run` came to.
#[derive(Debug)]
pub(crate) enum Ran {
    /// verify.sh is not armed: there was nothing to run (the verify.sh check says why).
    NotArmed,
    /// No root verify.sh, and a checks file: `--run` runs the root verify.sh only.
    ChecksOnly,
    Checked(Box<demo::Checked>),
}

/// Every check, in the order doctor shows them.
pub(crate) fn checks(inputs: &Inputs) -> Result<Vec<Finding>, git::Error> {
    let repo = inputs.repo;
    let mut checks = Vec::new();
    let has_checks = crate::proof::has_checks_file(repo)?;
    if has_checks {
        checks_file(repo, &mut checks)?;
    }
    let armed = repo.armed()?;
    if !(has_checks && armed == git::Armed::Missing) {
        verify_sh(armed, &mut checks);
    }
    verify_programs(repo, &mut checks);
    if let Some(ran) = &inputs.ran {
        checks.push(run(ran));
    }
    if let Some(finding) = last_tests(repo) {
        checks.push(finding);
    }
    gate_policy(inputs, &mut checks);
    hosts(
        repo.workdir()?,
        &inputs.cwd,
        &inputs.verify_timeout,
        &mut checks,
    );
    if let Ok(gate) = &inputs.gate {
        host_caps(repo.workdir()?, gate.max_blocks, inputs.env, &mut checks);
    }
    checks.extend(nested_worktrees(repo)?);
    hooks_off(repo.workdir()?, &mut checks);
    on_path(inputs.exec_path.as_deref(), &mut checks);
    pre_push(
        repo.workdir()?,
        &inputs.hooks_dir,
        inputs.pre_push,
        &mut checks,
    );
    identity(repo, &mut checks);
    proofs(repo, inputs.merge_strategy, &mut checks);
    remote(repo, &mut checks);
    man_page(inputs.man_page.as_deref(), &mut checks);
    Ok(checks)
}

fn ok(what: impl Into<String>) -> Finding {
    Finding {
        status: Health::Ok,
        what: what.into(),
        fix: None,
    }
}

fn warn(what: impl Into<String>, fix: impl Into<String>) -> Finding {
    Finding {
        status: Health::Warn,
        what: what.into(),
        fix: Some(fix.into()),
    }
}

fn fail(what: impl Into<String>, fix: impl Into<String>) -> Finding {
    Finding {
        status: Health::Fail,
        what: what.into(),
        fix: Some(fix.into()),
    }
}

/// The checks of `prove-it.toml` as the working state holds them: readable, and each able to run.
fn checks_file(repo: &Repo, checks: &mut Vec<Finding>) -> Result<(), git::Error> {
    let state = match repo.state_tree(false) {
        Ok(state) => state,
        // The state's own problem is told where it is met (status, run, the gate).
        Err(error) if error.is_worktree_content() => return Ok(()),
        Err(error) => return Err(error),
    };
    let set = match crate::proof::CheckSet::of_state(repo, &state) {
        Ok(set) => set,
        Err(error) => {
            let text = error.to_string();
            let fix = if text.contains("(min-version)") {
                "install the git-prove-it it names or a later one: cargo install git-prove-it, or the release's install.sh"
            } else {
                "fix prove-it.toml at the line named (SPEC.md section 2.1 gives its format)"
            };
            checks.push(fail(text, fix));
            return Ok(());
        }
    };
    let names: Vec<&str> = set.checks.iter().map(|c| c.name.as_str()).collect();
    checks.push(ok(format!(
        "prove-it.toml declares {} check{}: {}",
        names.len(),
        if names.len() == 1 { "" } else { "s" },
        names.join(", ")
    )));
    for check in &set.checks {
        if let Err(why) = check.runnable() {
            checks.push(fail(
                format!(
                    "check {}: its script {} {why}: every stop is refused until it can run",
                    check.name, check.run
                ),
                format!(
                    "make {} an executable file (chmod +x), or remove check {} from prove-it.toml",
                    check.run, check.name
                ),
            ));
        }
    }
    let uncovered = set.uncovered(repo, &state)?;
    if uncovered.count > 0 {
        let shown = uncovered.paths.iter().take(10).cloned().collect::<Vec<_>>();
        let more = uncovered.count - shown.len();
        checks.push(warn(
            format!(
                "{} path{} of the state {} in no check's inputs, so no check tests {}: {}{}",
                uncovered.count,
                if uncovered.count == 1 { "" } else { "s" },
                if uncovered.count == 1 { "is" } else { "are" },
                if uncovered.count == 1 { "it" } else { "them" },
                shown.join(", "),
                if more > 0 {
                    format!(" and {more} more")
                } else {
                    String::new()
                }
            ),
            "add them to the inputs of the checks that read them in prove-it.toml (git prove-it status lists them)",
        ));
    }
    Ok(())
}

fn verify_sh(armed: git::Armed, checks: &mut Vec<Finding>) {
    checks.push(match armed {
        git::Armed::Yes => ok("verify.sh is armed"),
        git::Armed::Missing => fail(
            "verify.sh does not exist at the worktree root: nothing is gated",
            "git prove-it init",
        ),
        git::Armed::NotExecutable => fail(
            "verify.sh is not executable by its owner: nothing is gated",
            "chmod u+x verify.sh",
        ),
        other if other.link_problem().is_some() => fail(
            format!(
                "verify.sh {}: every stop says it could not check",
                other.reason()
            ),
            "make verify.sh a relative link to an executable file of the worktree, or the file itself",
        ),
        other => fail(
            format!("verify.sh {}: nothing is gated", other.reason()),
            "make verify.sh a file at the worktree root, or: git prove-it init --force",
        ),
    });
}

/// The programs verify.sh's active lines run that are not on PATH: such a check fails here
/// whatever the work is, and an agent is sent back for it.
fn verify_programs(repo: &Repo, checks: &mut Vec<Finding>) {
    let Ok(Some(text)) = repo.read_verify() else {
        return;
    };
    let text = String::from_utf8_lossy(&text);
    let mut missing: Vec<&str> = Vec::new();
    for line in text.lines().map(str::trim) {
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let Some(program) = crate::setup::stack::program_of(line) else {
            continue;
        };
        let found = if program.contains('/') {
            repo.workdir().is_ok_and(|root| root.join(program).exists())
        } else {
            crate::setup::stack::on_path(program).is_some()
        };
        if !found && !missing.contains(&program) {
            missing.push(program);
        }
    }
    for program in missing {
        checks.push(warn(
            format!("verify.sh runs {program}, which is not found here: that check fails whatever the work is"),
            format!("install {program}, or take its line out of verify.sh"),
        ));
    }
}

/// Whether the last run that could record a proof counted its tests (SPEC.md section 5.2);
/// nothing before any run.
fn last_tests(repo: &Repo) -> Option<Finding> {
    let text = std::fs::read_to_string(repo.last_run_tests().ok()?).ok()?;
    let lines: Vec<(&str, &str)> = text
        .lines()
        .filter_map(|line| line.split_once(' '))
        .collect();
    let named = |(check, what): &(&str, &str)| format!("{check}: {what}");
    if let Some(error) = lines.iter().find(|(_, what)| what.starts_with("error: ")) {
        return Some(warn(
            format!(
                "the last run's test reports could not be read ({}): its proof says so as weakened",
                named(error)
            ),
            "write well-formed JUnit XML into $PROVE_IT_REPORTS (at most 256 files of 32 MiB)",
        ));
    }
    let without: Vec<&str> = lines
        .iter()
        .filter(|(_, what)| *what == "none")
        .map(|(check, _)| *check)
        .collect();
    if lines.is_empty() || !without.is_empty() {
        return Some(warn(
            format!(
                "the last run produced no test counts ({}): a test deleted or skipped would not show in its proof",
                without.join(", ")
            ),
            "have verify.sh write JUnit XML into \"$PROVE_IT_REPORTS\" (pytest --junitxml=\"$PROVE_IT_REPORTS/pytest.xml\"), or run a test runner whose summary line SPEC.md section 5.2 lists",
        ));
    }
    Some(ok(format!(
        "the last run produced test counts ({})",
        lines.iter().map(named).collect::<Vec<_>>().join("; ")
    )))
}

/// `doctor --run`: verify.sh on the working state, judged as the gate would judge it.
fn run(ran: &Ran) -> Finding {
    let checked = match ran {
        Ran::NotArmed => {
            return fail(
                "--run: verify.sh is not armed, so the gate has nothing to run",
                "arm verify.sh (see above), then: git prove-it doctor --run",
            );
        }
        Ran::ChecksOnly => {
            return warn(
                "--run: there is no root verify.sh to run; the checks of prove-it.toml are run by 'git prove-it run', which records their proofs",
                "git prove-it run --force",
            );
        }
        Ran::Checked(checked) => checked,
    };
    let shown = &checked.shown;
    let tree = &checked.tree[..checked.tree.len().min(12)];
    let took = format!("{:.1} s", shown.duration_ms as f64 / 1000.0);
    match shown.outcome {
        Outcome::Proven if shown.passed => ok(format!(
            "--run: verify.sh passed on the working state (tree {tree}) in {took}: the gate would let the turn end (nothing was recorded)"
        )),
        _ if shown.passed => fail(
            format!(
                "--run: verify.sh passed but changed the working state (tree {tree}) while it ran: the gate would send the agent back"
            ),
            "add files that verify.sh generates to .gitignore, or make it leave the worktree as it found it",
        ),
        _ => fail(
            format!(
                "--run: verify.sh {} on the working state (tree {tree}) in {took}: the gate would send the agent back",
                shown.exit
            ),
            "fix what it reports (git prove-it run --verbose shows all of it), then: git prove-it doctor --run",
        ),
    }
}

/// The gate's policy in force, and `PROVE_IT_SKIP`, which turns it off for every stop.
fn gate_policy(inputs: &Inputs, checks: &mut Vec<Finding>) {
    let gate = match &inputs.gate {
        Ok(gate) => gate,
        Err(error) => {
            checks.push(fail(
                format!("the gate's policy cannot be resolved: {error}"),
                "fix the value named above",
            ));
            return;
        }
    };
    if gate.skip {
        checks.push(fail(
            format!(
                "{} is set: the gate ends every turn in this environment without running verify.sh",
                policy::SKIP_ENV
            ),
            format!("unset {}", policy::SKIP_ENV),
        ));
    }
    let timeout = match &inputs.verify_timeout {
        Ok((secs, 0)) => format!("{secs} s"),
        Ok((secs, retries)) => format!("{secs} s, retries {retries}"),
        Err(_) => "unreadable (see below)".to_string(),
    };
    let budget = match gate.max_blocks {
        0 => "0 blocks a turn (warn only)".to_string(),
        1 => "1 block a turn".to_string(),
        n => format!("{n} blocks a turn"),
    };
    let on = |on: bool| if on { "on" } else { "off" };
    checks.push(ok(format!(
        "policy in force: verify.sh timeout {timeout}, budget {budget}, ledger {}, signing {}, verify.sh edits {}{}",
        on(gate.ledger),
        on(inputs.signed_only),
        match gate.verify_edits {
            VerifyEdits::Show => "shown",
            VerifyEdits::Block => "blocked",
        },
        match gate.uncovered {
            policy::UncoveredPolicy::Notice => "",
            policy::UncoveredPolicy::Block => ", changes no check reads blocked",
        }
    )));
}

fn hosts(
    workdir: &Path,
    cwd: &Path,
    timeout: &Result<(u64, u32), policy::Error>,
    checks: &mut Vec<Finding>,
) {
    for &host in Host::all() {
        let path = workdir.join(host.config_path());
        let Ok(text) = std::fs::read_to_string(&path) else {
            continue;
        };
        let rel = host.config_path();
        let wire = format!("git prove-it init --host {}", host.name());
        match host.wired_timeouts(&text) {
            Err(error) => checks.push(fail(
                format!(
                    "{}: {rel} cannot be read ({})",
                    host.title(),
                    describe(&error)
                ),
                format!("fix the file, then: {wire}"),
            )),
            Ok(wired) => {
                let missing: Vec<&str> = wired
                    .iter()
                    .filter(|(entry, wiring)| *wiring == Wiring::Missing && !entry.ahead)
                    .map(|(entry, _)| entry.event)
                    .collect();
                // Without the after-tool hook the gate holds; only nothing is proven ahead.
                let ahead_missing = wired
                    .iter()
                    .find(|(entry, wiring)| *wiring == Wiring::Missing && entry.ahead);
                if !missing.is_empty() {
                    checks.push(fail(
                        format!(
                            "{}: the gate's {} hook{} not wired in {rel}",
                            host.title(),
                            and_list(&missing),
                            if missing.len() == 1 { " is" } else { "s are" }
                        ),
                        wire,
                    ));
                    continue;
                }
                checks.push(stop_timeout(host, &wired, timeout));
                if let Some((entry, _)) = ahead_missing {
                    checks.push(warn(
                        format!(
                            "{}: the after-tool hook ({}) is not wired in {rel}, so nothing is proven ahead of a stop",
                            host.title(),
                            entry.event
                        ),
                        wire.clone(),
                    ));
                }
                checks.extend(trust(host, workdir));
                checks.extend(start_dir(host, workdir, cwd));
            }
        }
    }
}

/// Whether the host's stop hook may outlast verify.sh's longest run (each of its runs under the
/// retries), said in the host's own names and units.
fn stop_timeout(
    host: Host,
    wired: &[(HookEntry, Wiring)],
    timeout: &Result<(u64, u32), policy::Error>,
) -> Finding {
    let rel = host.config_path();
    let stop_entry = wired.iter().find(|(entry, _)| entry.stop);
    let event = stop_entry.map_or("Stop", |(entry, _)| entry.event);
    let stop = stop_entry.and_then(|(_, wiring)| match wiring {
        Wiring::Wired(timeout) => *timeout,
        Wiring::Missing => None,
    });
    // Said in the host's own names and units: Gemini's AfterAgent hook counts
    // milliseconds.
    let (key, unit_ms) = host.timeout_field().unwrap_or(("timeout", 1000));
    let unit = if unit_ms == 1 { "ms" } else { "s" };
    let in_units = |secs: u64| secs * 1000 / unit_ms;
    // The longest a stop may run verify.sh: each of its runs under the retries.
    let longest = timeout
        .as_ref()
        .map(|&(secs, retries)| (secs * (1 + u64::from(retries)), secs, retries));
    match (stop, longest) {
        (Some(stop), Ok((verify, secs, retries))) if stop <= verify => fail(
            format!(
                "{}: the {event} hook's timeout ({} {unit}) does not exceed verify.sh's ({verify} s{}): a slow run would end the turn unverified",
                host.title(),
                in_units(stop),
                if retries > 0 {
                    format!(
                        ": {secs} s for each of {} runs under prove-it.retries {retries}",
                        retries + 1
                    )
                } else {
                    String::new()
                }
            ),
            format!(
                "raise the {event} hook's \"{key}\" in {rel} above {} ({unit}), or lower git config prove-it.timeout{}",
                in_units(verify),
                if retries > 0 {
                    " or prove-it.retries"
                } else {
                    ""
                }
            ),
        ),
        (_, Err(error)) => fail(
            format!("{}: {error}", host.title()),
            "fix the value named above",
        ),
        _ => ok(format!(
            "{}: the gate's hooks are wired in {rel}",
            host.title()
        )),
    }
}

/// A wired host whose own cap on blocks, as this environment sets it, is below the gate's
/// budget: the gate gives fewer blocks, so that its yield still reaches the agent before the
/// host stops honouring blocks. Said, so that a person does not wonder where the blocks went.
fn host_caps(
    workdir: &Path,
    policy: u32,
    env: &dyn Fn(&str) -> Option<String>,
    checks: &mut Vec<Finding>,
) {
    for &host in Host::all() {
        if std::fs::metadata(workdir.join(host.config_path())).is_err() {
            continue;
        }
        let Some((cap, budget, setting)) = host.cap_below(policy, env) else {
            continue;
        };
        let blocks = |n: u32| match n {
            1 => "1 block".to_string(),
            n => format!("{n} blocks"),
        };
        checks.push(warn(
            format!(
                "{}: {setting} ends a turn after {} in this environment, below the gate's budget ({} a turn): the gate gives at most {} a turn, then its yield",
                host.title(),
                blocks(cap),
                blocks(policy),
                blocks(budget),
            ),
            format!(
                "raise {setting} above {}, or lower git config prove-it.maxBlocks to {budget}",
                policy + u32::from(!host.shows_notices())
            ),
        ));
    }
}

/// Claude Code puts the worktrees of subagents (and of `--worktree` sessions) in
/// `.claude/worktrees/` of the checkout. Unless ignored, the session's own state holds each as
/// an embedded repository, and its stop is refused while a subagent's worktree holds changes.
fn nested_worktrees(repo: &Repo) -> Result<Option<Finding>, git::Error> {
    let workdir = repo.workdir()?;
    if std::fs::metadata(workdir.join(Host::Claude.config_path())).is_err() {
        return Ok(None);
    }
    Ok(match repo.ignores(".claude/worktrees/agent") {
        Some(false) => Some(warn(
            "Claude Code: .claude/worktrees/ is not ignored: a subagent's worktree there would count as an embedded repository of this worktree's state, and a session's stop would be refused while it holds changes",
            "echo .claude/worktrees/ >> .gitignore",
        )),
        _ => None,
    })
}

/// Where the host runs no gate although its project file wires it: a host that reads the
/// project's hooks only in the directory it starts in, started in a subdirectory.
/// Run from a subdirectory, that is where doctor is, and a failure; from the root, a warning.
fn start_dir(host: Host, workdir: &Path, cwd: &Path) -> Option<Finding> {
    if host.reads_project_hooks_below_root() {
        return None;
    }
    let (user, wired) = host.user_wiring()?;
    let title = host.title();
    let rel = host.config_path();
    let user = user.display();
    if wired {
        return Some(ok(format!(
            "{title}: the gate's hooks are wired in {user} too, so a session started in any subdirectory is gated"
        )));
    }
    let fix = format!(
        "start {title} at {}, or wire the gate for every folder: merge the hooks of {rel} into {user} (ADAPTERS.md; the gate stays silent in repositories without verify.sh)",
        workdir.display()
    );
    let here = canonical(cwd);
    let root = canonical(workdir);
    Some(match here.strip_prefix(&root) {
        Ok(below) if !below.as_os_str().is_empty() => fail(
            format!(
                "{title} reads {rel} only in the directory it is started in: started here, in {}/, it runs no gate",
                below.display()
            ),
            fix,
        ),
        _ => warn(
            format!(
                "{title} reads {rel} only in the directory it is started in: started in a subdirectory (such as src/), it runs no gate"
            ),
            fix,
        ),
    })
}

fn canonical(path: &Path) -> PathBuf {
    path.canonicalize().unwrap_or_else(|_| path.to_owned())
}

fn describe(error: &WiringError) -> String {
    match error {
        WiringError::Json(source) => format!("{error}: {source}"),
        WiringError::Shape { .. } => error.to_string(),
    }
}

/// The host's trust in the folder, as its module reads it.
fn trust(host: Host, workdir: &Path) -> Option<Finding> {
    let title = host.title();
    Some(match host.trust(workdir)? {
        Trust::Trusted => ok(format!(
            "{title}: this folder is trusted, so its project hooks run"
        )),
        Trust::NotRecorded { record, step } => warn(
            format!(
                "{title}: {} does not record trusting this folder, so its project hooks likely \
                 do not run",
                record.display()
            ),
            step,
        ),
        Trust::ProjectNotTrusted {
            record,
            agent,
            hooks_file,
            step,
        } => warn(
            format!(
                "{title}: {} does not record trusting this project, so {agent} does not read its \
                 {hooks_file}",
                record.display()
            ),
            step,
        ),
        Trust::ApprovalUnknown { agent, step } => warn(
            format!(
                "{title}: this project is trusted, but whether {agent} approved its hooks cannot \
                 be checked from here; unapproved hooks are skipped silently"
            ),
            step,
        ),
    })
}

/// The settings of a host that keep it from running the gate's hooks, for each host wired here
/// (its project file) or for every folder (its user-level file): the gate is then never asked.
fn hooks_off(workdir: &Path, checks: &mut Vec<Finding>) {
    for &host in Host::all() {
        let wired = workdir.join(host.config_path()).is_file()
            || host.user_wiring().is_some_and(|(_, wired)| wired);
        if !wired {
            continue;
        }
        for off in host.hooks_off(workdir) {
            checks.push(fail(
                format!(
                    "{}: {} in {} keeps it from running the gate's hooks: no stop is gated",
                    host.title(),
                    off.key,
                    off.file.display()
                ),
                format!("{}: {}", off.file.display(), off.fix),
            ));
        }
    }
}

/// Hooks run `git prove-it`, for which git runs the first `git-prove-it` in its exec-path,
/// then on PATH: every one found is listed, and one that shadows the running binary is named.
fn on_path(exec_path: Option<&Path>, checks: &mut Vec<Finding>) {
    let path = std::env::var_os("PATH");
    let dirs = exec_path
        .map(Path::to_owned)
        .into_iter()
        .chain(path.iter().flat_map(std::env::split_paths));
    let mut found: Vec<PathBuf> = Vec::new();
    let mut seen: Vec<PathBuf> = Vec::new();
    for file in dirs.map(|dir| dir.join("git-prove-it")) {
        let is_program = std::fs::metadata(&file)
            .is_ok_and(|meta| meta.is_file() && meta.permissions().mode() & 0o111 != 0);
        if is_program && !seen.contains(&canonical(&file)) {
            seen.push(canonical(&file));
            found.push(file);
        }
    }
    let Some(first) = found.first() else {
        checks.push(fail(
            "git-prove-it is not on PATH: 'git prove-it' in hooks would fail",
            "cargo install --locked --path <this tool's source> (or put git-prove-it on PATH)",
        ));
        return;
    };
    let listed = found
        .iter()
        .map(|file| file.display().to_string())
        .collect::<Vec<_>>()
        .join(", ");
    let running = std::env::current_exe().ok().map(|exe| canonical(&exe));
    checks.push(match running {
        Some(running) if canonical(first) != running => warn(
            format!(
                "git runs {} for 'git prove-it', not this git-prove-it ({}): the hooks run that one; every git-prove-it git finds, in its order: {listed}",
                first.display(),
                running.display()
            ),
            format!(
                "remove {} or put {} before it on PATH",
                first.display(),
                running.parent().unwrap_or(&running).display()
            ),
        ),
        _ if found.len() > 1 => ok(format!(
            "git-prove-it is on PATH: {}, which git runs first of: {listed}",
            first.display()
        )),
        _ => ok(format!("git-prove-it is on PATH: {}", first.display())),
    });
}

fn pre_push(workdir: &Path, hooks_dir: &Path, ours: &str, checks: &mut Vec<Finding>) {
    // A hook manager runs the pre-push hooks where its set-up is at the root: the gate is
    // wired through it, or not at all (`init --pre-push` wires it or prints its snippet).
    let managers = std::iter::once(".husky/pre-push")
        .chain(crate::setup::pre_push::LEFTHOOK_FILES.iter().copied())
        .chain([".pre-commit-config.yaml"]);
    let husky = workdir.join(".husky").is_dir();
    for name in managers {
        let Ok(text) = std::fs::read_to_string(workdir.join(name)) else {
            if husky && name == ".husky/pre-push" {
                checks.push(warn(
                    "husky runs this repository's hooks, and .husky/pre-push does not exist: unproven commits can be pushed",
                    "git prove-it init --pre-push",
                ));
                return;
            }
            continue;
        };
        let wired = text.contains(crate::setup::pre_push::COMMAND) || text.contains("id: prove-it");
        checks.push(if wired {
            ok(format!("{name} runs git prove-it before a push"))
        } else {
            warn(
                format!("{name} runs this repository's hooks but not git prove-it before a push: unproven commits can be pushed"),
                "git prove-it init --pre-push (it wires husky, and prints the snippet for lefthook and pre-commit)",
            )
        });
        return;
    }
    let path = hooks_dir.join("pre-push");
    checks.push(match std::fs::read_to_string(&path) {
        Ok(text) if text == ours => {
            ok(format!("the pre-push hook is installed at {}", path.display()))
        }
        Ok(text) if text.contains("git prove-it hook git pre-push") => ok(format!(
            "the pre-push hook at {} calls git prove-it",
            path.display()
        )),
        Ok(_) => warn(
            format!(
                "the pre-push hook at {} does not call git prove-it: unproven commits can be pushed",
                path.display()
            ),
            "make it pass its arguments and stdin to: git prove-it hook git pre-push \"$@\"",
        ),
        Err(_) => warn(
            "no pre-push hook: unproven commits can be pushed and proofs do not travel with pushes",
            "git prove-it install pre-push",
        ),
    });
}

fn identity(repo: &Repo, checks: &mut Vec<Finding>) {
    let identity = repo.identity();
    checks.push(if identity.missing {
        warn(
            format!(
                "no git identity: proofs are signed off by {} and marked 'identity: missing'",
                identity.display
            ),
            "git config --global user.name 'Your Name' && git config --global user.email you@example.com",
        )
    } else {
        ok(format!("proofs are signed off by {}", identity.display))
    });
}

fn proofs(repo: &Repo, merge_strategy: &str, checks: &mut Vec<Finding>) {
    let tip = match repo.proofs_tip() {
        Ok(tip) => tip,
        Err(git::Error::RefUnpeelable { source, .. }) => {
            checks.push(fail(
                format!("{PROOFS_REF} cannot be read: {source}"),
                format!("git fsck; git update-ref -d {PROOFS_REF} drops it (and every proof)"),
            ));
            return;
        }
        Err(error) => {
            let cause = std::error::Error::source(&error)
                .map_or_else(|| error.to_string(), std::string::ToString::to_string);
            checks.push(fail(
                format!("{PROOFS_REF} cannot be read: {cause}"),
                "git fsck",
            ));
            return;
        }
    };
    checks.push(match tip.map(|tip| repo.all_notes(tip)) {
        None => ok(format!("{PROOFS_REF}: no proofs yet")),
        Some(Ok(notes)) => ok(format!(
            "{PROOFS_REF}: {} proven tree{}",
            notes.len(),
            if notes.len() == 1 { "" } else { "s" }
        )),
        Some(Err(error)) => fail(
            format!(
                "{PROOFS_REF} cannot be read: {}",
                crate::gate::error_chain(&error)
            ),
            "git fsck, then fetch the proofs again: git prove-it sync",
        ),
    });
    unheld(repo, checks);
    if repo
        .config_string(merge_strategy)
        .is_none_or(|value| value != "union")
    {
        checks.push(warn(
            format!("{merge_strategy} is not union: a stock 'git notes merge' would scramble proof records"),
            format!("git config {merge_strategy} union"),
        ));
    }
    match crate::proof::unisolated(repo) {
        Ok(found) if found.is_empty() => {}
        Ok(found) => checks.push(warn(
            format!(
                "{} proof record{} made outside an agent session carr{} no isolation line: earlier versions proved commits (run <rev>, bisect, the pre-push hook) in a worktree inside the checkout, where a run could test the checkout's code instead of the commit's; first: tree {}",
                found.len(),
                if found.len() == 1 { "" } else { "s" },
                if found.len() == 1 { "ies" } else { "y" },
                found[0].key
            ),
            "review them with git prove-it log; take back those made by commit runs with git prove-it revoke --unisolated --reason '<why>', then prove again",
        )),
        Err(error) => checks.push(warn(
            format!("the proofs' isolation cannot be read: {}", crate::gate::error_chain(&error)),
            "git fsck",
        )),
    }
    checks.push(match repo.overwritten_notes(&crate::proof::merge_unrevoked) {
        Ok(lost) if lost.is_empty() => ok(format!(
            "no proof records dropped by other writers (the reflog of {PROOFS_REF})"
        )),
        Ok(lost) => {
            let mut messages: Vec<&str> = lost.iter().map(|o| o.message.as_str()).collect();
            messages.dedup();
            fail(
                format!(
                    "{} proof note{} lost records to updates not made by git-prove-it ({}), according to the reflog of {PROOFS_REF}",
                    lost.len(),
                    if lost.len() == 1 { "" } else { "s" },
                    messages.join("; ")
                ),
                "git prove-it doctor --restore",
            )
        }
        Err(error) => warn(
            format!("the reflog of {PROOFS_REF} cannot be read: {}", crate::gate::error_chain(&error)),
            "git reflog show refs/notes/prove-it",
        ),
    });
}

/// How many notes name trees no commit here holds (working states proven and never
/// committed, many with proving ahead): harmless, never sent, and droppable.
fn unheld(repo: &Repo, checks: &mut Vec<Finding>) {
    match crate::proof::unheld_notes(repo) {
        Ok(unheld) if unheld.is_empty() => {}
        Ok(unheld) => checks.push(ok(format!(
            "{PROOFS_REF}: {} note{} of trees no commit holds (working states proven and never committed): they stay in this clone, never sent; git prove-it doctor --prune-unreachable drops them",
            unheld.len(),
            if unheld.len() == 1 { "" } else { "s" },
        ))),
        Err(error) => checks.push(warn(
            format!(
                "which proven trees a commit holds cannot be read: {}",
                crate::gate::error_chain(&error)
            ),
            "git fsck",
        )),
    }
}

/// How long doctor waits for the remote to list its proofs.
const REMOTE_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(10);

/// The remote's proofs, asked with `git ls-remote`: gix cannot talk to every remote git can
/// (credential helpers, ssh configuration), and sync already relies on git for the same.
fn remote(repo: &Repo, checks: &mut Vec<Finding>) {
    if repo.remote_names().is_empty() {
        checks.push(ok("no remote: proofs stay in this clone"));
        return;
    }
    // Proofs travel where pushes go: a contributor's fork, not the project they cloned.
    let remote = repo.push_remote();
    let fork = "add your fork as a remote and push there: git remote add fork <your fork's URL> && git config remote.pushDefault fork && git prove-it sync fork".to_string();
    let foreign = remote == repo.default_remote() && looks_foreign(repo, &remote);
    if foreign {
        checks.push(warn(
            format!(
                "{remote} looks like someone else's project (none of the last {OWN_COMMITS} commits on {remote}'s branches are yours): syncing proofs there pushes them upstream"
            ),
            fork.clone(),
        ));
    }
    let answer = repo.remote_proofs_tip_within(&remote, REMOTE_TIMEOUT);
    checks.push(match answer {
        Ok(Some(_)) => ok(format!("{remote} has {PROOFS_REF}")),
        Ok(None) => warn(
            format!("{remote} has no {PROOFS_REF}: CI and other clones cannot see any proof"),
            if foreign {
                fork
            } else {
                format!("git prove-it sync {remote}")
            },
        ),
        Err(error) => warn(
            format!(
                "could not ask {remote} for its proofs: {}",
                crate::gate::error_chain(&error)
            ),
            format!("git ls-remote {remote} {PROOFS_REF}"),
        ),
    });
}

/// How far back doctor looks for a commit of the user's own.
const OWN_COMMITS: usize = 200;

/// A clone whose remote's recent history holds nothing the user wrote: most likely a project
/// they contribute to rather than own. The remote's branches are what count, not HEAD: the
/// commits a contributor makes here are theirs, and the project stays someone else's. Without
/// an identity, or with no branch of the remote known here, there is nothing to compare.
fn looks_foreign(repo: &Repo, remote: &str) -> bool {
    let identity = repo.identity();
    if identity.missing {
        return false;
    }
    let Some(email) = identity
        .display
        .rsplit_once('<')
        .and_then(|(_, rest)| rest.strip_suffix('>'))
    else {
        return false;
    };
    matches!(
        repo.authored_any_on(remote, email, OWN_COMMITS),
        Ok(Some(false))
    )
}

fn man_page(page: Option<&Path>, checks: &mut Vec<Finding>) {
    checks.push(match page {
        Some(page) => ok(format!("git help prove-it opens {}", page.display())),
        None => warn(
            "git help prove-it finds no man page (git prove-it --help shows none either)",
            "git prove-it install-man",
        ),
    });
}

/// `a`, `a and b`, `a, b and c`.
fn and_list(items: &[&str]) -> String {
    match items {
        [] => String::new(),
        [one] => (*one).to_string(),
        [rest @ .., last] => format!("{} and {last}", rest.join(", ")),
    }
}
