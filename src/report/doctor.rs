//! What `doctor` says: one line per check, `ok`, `warn` or `FAIL`, with a `fix:` line for each
//! that is not ok. Each finding comes from `setup/doctor.rs` as values (`Found`, and its
//! `Health`); its sentence and its fix are made here, and `--json` prints them as they read.

use std::io::{self, Write};
use std::path::Path;

use serde::Serialize;

use super::armed::verify;
use super::{and_list, seconds, short};
use crate::armed::Armed;
use crate::hosts::{Host, Trust};
use crate::setup::doctor::{
    ChecksFound, Found, Health, HostFound, InForce, OnPathFound, PolicyFound, PrePushFound,
    ProofsFound, RemoteFound, RunFound, StopTooShort, TestsFound, VerifyFound,
};

/// The notes ref of the proofs (`git::PROOFS_REF`, which a renderer does not name).
const PROOFS_REF: &str = "refs/notes/prove-it";

/// Everything `git prove-it doctor` found.
#[derive(Debug, Serialize)]
pub(crate) struct DoctorReport {
    pub version: u32,
    /// No check failed.
    pub ok: bool,
    /// Records put back by `--restore`.
    pub restored: usize,
    /// Notes of trees no commit holds dropped by `--prune-unreachable`.
    pub pruned: usize,
    pub checks: Vec<Finding>,
}

/// One line of `git prove-it doctor`, worded: what was checked, and how to fix it when it is
/// not ok. The JSON of `--json` is this, so that a script reads what a person reads.
#[derive(Debug, Serialize)]
pub(crate) struct Finding {
    pub status: Health,
    pub what: String,
    pub fix: Option<String>,
}

impl DoctorReport {
    /// The report of `found`, each finding worded; `restored` and `pruned` count what
    /// `--restore` and `--prune-unreachable` did.
    pub(crate) fn new(found: &[Found], restored: usize, pruned: usize) -> DoctorReport {
        DoctorReport {
            version: super::JSON_VERSION,
            ok: found.iter().all(|found| found.health() != Health::Fail),
            restored,
            pruned,
            checks: found.iter().map(Finding::of).collect(),
        }
    }

    pub(crate) fn human(&self, out: &mut dyn Write) -> io::Result<()> {
        if self.restored > 0 {
            writeln!(
                out,
                "restored {} overwritten proof note{} into {PROOFS_REF}",
                self.restored,
                if self.restored == 1 { "" } else { "s" }
            )?;
        }
        if self.pruned > 0 {
            writeln!(
                out,
                "dropped {} note{} of trees no commit holds from {PROOFS_REF}",
                self.pruned,
                if self.pruned == 1 { "" } else { "s" }
            )?;
        }
        for finding in &self.checks {
            let status = match finding.status {
                Health::Ok => "ok",
                Health::Warn => "warn",
                Health::Fail => "FAIL",
            };
            writeln!(out, "{status:<4}  {}", finding.what)?;
            if let Some(fix) = &finding.fix {
                writeln!(out, "      fix: {fix}")?;
            }
        }
        let failed = self
            .checks
            .iter()
            .filter(|f| f.status == Health::Fail)
            .count();
        if failed > 0 {
            writeln!(
                out,
                "{failed} problem{} to fix",
                if failed == 1 { "" } else { "s" }
            )?;
        }
        Ok(())
    }
}

/// A finding's sentence, and how to fix what it found where that is not right.
type Words = (String, Option<String>);

fn said(what: impl Into<String>) -> Words {
    (what.into(), None)
}

fn fixed(what: impl Into<String>, fix: impl Into<String>) -> Words {
    (what.into(), Some(fix.into()))
}

/// `one` or `many`, by `n`.
fn plural<'a>(n: usize, one: &'a str, many: &'a str) -> &'a str {
    if n == 1 { one } else { many }
}

impl Finding {
    /// `found` in words.
    pub(crate) fn of(found: &Found) -> Finding {
        let (what, fix) = match found {
            Found::Checks(found) => checks_file(found),
            Found::Verify(found) => verify_sh(found),
            Found::Tests(found) => last_tests(found),
            Found::Run(found) => run(found),
            Found::Policy(found) => policy(found),
            Found::Host(host, found) => host_found(*host, found),
            Found::OnPath(found) => on_path(found),
            Found::PrePush(found) => pre_push(found),
            Found::Identity {
                display,
                missing: true,
            } => fixed(
                format!(
                    "no git identity: proofs are signed off by {display} and marked 'identity: missing'"
                ),
                "git config --global user.name 'Your Name' && git config --global user.email you@example.com",
            ),
            Found::Identity { display, .. } => said(format!("proofs are signed off by {display}")),
            Found::Proofs(found) => proofs(found),
            Found::Remote(found) => remote(found),
            Found::ManPage(Some(page)) => {
                said(format!("git help prove-it opens {}", page.display()))
            }
            Found::ManPage(None) => fixed(
                "git help prove-it finds no man page (git prove-it --help shows none either)",
                "git prove-it install-man",
            ),
        };
        Finding {
            status: found.health(),
            what,
            fix,
        }
    }
}

fn checks_file(found: &ChecksFound) -> Words {
    match found {
        ChecksFound::Unreadable { error, needs_newer } => fixed(
            error.clone(),
            if *needs_newer {
                "install the git-prove-it it names or a later one: cargo install git-prove-it, or the release's install.sh"
            } else {
                "fix prove-it.toml at the line named (SPEC.md section 2.1 gives its format)"
            },
        ),
        ChecksFound::Declared { names } => said(format!(
            "prove-it.toml declares {} check{}: {}",
            names.len(),
            plural(names.len(), "", "s"),
            names.join(", ")
        )),
        ChecksFound::NotRunnable { check, script, why } => fixed(
            format!(
                "check {check}: its script {script} {}: every stop is refused until it can run",
                super::armed::script(*why)
            ),
            format!(
                "make {script} an executable file (chmod +x), or remove check {check} from prove-it.toml"
            ),
        ),
        ChecksFound::Uncovered { count, shown } => {
            let more = count - shown.len();
            fixed(
                format!(
                    "{count} path{} of the state {} in no check's inputs, so no check tests {}: {}{}",
                    plural(*count, "", "s"),
                    plural(*count, "is", "are"),
                    plural(*count, "it", "them"),
                    shown.join(", "),
                    if more > 0 {
                        format!(" and {more} more")
                    } else {
                        String::new()
                    }
                ),
                "add them to the inputs of the checks that read them in prove-it.toml (git prove-it status lists them)",
            )
        }
    }
}

fn verify_sh(found: &VerifyFound) -> Words {
    match found {
        VerifyFound::Armed => said("verify.sh is armed"),
        VerifyFound::Missing => fixed(
            format!("verify.sh {}: nothing is gated", verify(Armed::Missing)),
            "git prove-it init",
        ),
        VerifyFound::NotExecutable => fixed(
            format!(
                "verify.sh {}: nothing is gated",
                verify(Armed::NotExecutable)
            ),
            "chmod u+x verify.sh",
        ),
        VerifyFound::BadLink { armed } => fixed(
            format!(
                "verify.sh {}: every stop says it could not check",
                verify(*armed)
            ),
            "make verify.sh a relative link to an executable file of the worktree, or the file itself",
        ),
        VerifyFound::Unarmed { armed } => fixed(
            format!("verify.sh {}: nothing is gated", verify(*armed)),
            "make verify.sh a file at the worktree root, or: git prove-it init --force",
        ),
        VerifyFound::ProgramMissing { program } => fixed(
            format!(
                "verify.sh runs {program}, which is not found here: that check fails whatever the work is"
            ),
            format!("install {program}, or take its line out of verify.sh"),
        ),
    }
}

fn last_tests(found: &TestsFound) -> Words {
    match found {
        TestsFound::Unreadable { check, what } => fixed(
            format!(
                "the last run's test reports could not be read ({check}: {what}): its proof says so as weakened"
            ),
            "write well-formed JUnit XML into $PROVE_IT_REPORTS (at most 256 files of 32 MiB)",
        ),
        TestsFound::NoCounts { without } => fixed(
            format!(
                "the last run produced no test counts ({}): a test deleted or skipped would not show in its proof",
                without.join(", ")
            ),
            "have verify.sh write JUnit XML into \"$PROVE_IT_REPORTS\" (pytest --junitxml=\"$PROVE_IT_REPORTS/pytest.xml\"), or run a test runner whose summary line SPEC.md section 5.2 lists",
        ),
        TestsFound::Counted { counts } => said(format!(
            "the last run produced test counts ({})",
            counts
                .iter()
                .map(|(check, what)| format!("{check}: {what}"))
                .collect::<Vec<_>>()
                .join("; ")
        )),
    }
}

fn run(found: &RunFound) -> Words {
    match found {
        RunFound::NotArmed => fixed(
            "--run: verify.sh is not armed, so the gate has nothing to run",
            "arm verify.sh (see above), then: git prove-it doctor --run",
        ),
        RunFound::ChecksOnly => fixed(
            "--run: there is no root verify.sh to run; the checks of prove-it.toml are run by 'git prove-it run', which records their proofs",
            "git prove-it run --force",
        ),
        RunFound::Passed { tree, duration_ms } => said(format!(
            "--run: verify.sh passed on the working state (tree {}) in {}: the gate would let the turn end (nothing was recorded)",
            short(tree),
            seconds(*duration_ms)
        )),
        RunFound::ChangedState { tree } => fixed(
            format!(
                "--run: verify.sh passed but changed the working state (tree {}) while it ran: the gate would send the agent back",
                short(tree)
            ),
            "add files that verify.sh generates to .gitignore, or make it leave the worktree as it found it",
        ),
        RunFound::Failed {
            tree,
            exit,
            duration_ms,
        } => fixed(
            format!(
                "--run: verify.sh {exit} on the working state (tree {}) in {}: the gate would send the agent back",
                short(tree),
                seconds(*duration_ms)
            ),
            "fix what it reports (git prove-it run --verbose shows all of it), then: git prove-it doctor --run",
        ),
    }
}

fn policy(found: &PolicyFound) -> Words {
    match found {
        PolicyFound::Unresolved { error } => fixed(
            format!("the gate's policy cannot be resolved: {error}"),
            "fix the value named above",
        ),
        PolicyFound::Skipped => fixed(
            "PROVE_IT_SKIP is set: the gate ends every turn in this environment without running verify.sh",
            "unset PROVE_IT_SKIP",
        ),
        PolicyFound::InForce(policy) => said(in_force(policy)),
    }
}

fn in_force(policy: &InForce) -> String {
    let timeout = match policy.timeout {
        Some((secs, 0)) => format!("{secs} s"),
        Some((secs, retries)) => format!("{secs} s, retries {retries}"),
        None => "unreadable (see below)".to_string(),
    };
    let budget = match policy.max_blocks {
        0 => "0 blocks a turn (warn only)".to_string(),
        1 => "1 block a turn".to_string(),
        n => format!("{n} blocks a turn"),
    };
    let on = |on: bool| if on { "on" } else { "off" };
    format!(
        "policy in force: verify.sh timeout {timeout}, budget {budget}, ledger {}, signing {}, verify.sh edits {}{}",
        on(policy.ledger),
        on(policy.signed),
        if policy.verify_edits_blocked {
            "blocked"
        } else {
            "shown"
        },
        if policy.uncovered_blocked {
            ", changes no check reads blocked"
        } else {
            ""
        }
    )
}

/// What was found of one host, its title first.
fn host_found(host: Host, found: &HostFound) -> Words {
    let title = host.title();
    let rel = host.config_path();
    let wire = || format!("git prove-it init --host {}", host.name());
    match found {
        HostFound::Unreadable { error } => fixed(
            format!("{title}: {rel} cannot be read ({error})"),
            format!("fix the file, then: {}", wire()),
        ),
        HostFound::NotWired { events } => fixed(
            format!(
                "{title}: the gate's {} hook{} not wired in {rel}",
                and_list(events),
                plural(events.len(), " is", "s are")
            ),
            wire(),
        ),
        HostFound::Wired => said(format!("{title}: the gate's hooks are wired in {rel}")),
        HostFound::StopTooShort(short) => stop_too_short(host, short),
        HostFound::TimeoutUnresolved { error } => {
            fixed(format!("{title}: {error}"), "fix the value named above")
        }
        HostFound::AfterToolMissing { event } => fixed(
            format!(
                "{title}: the after-tool hook ({event}) is not wired in {rel}, so nothing is proven ahead of a stop"
            ),
            wire(),
        ),
        HostFound::Trust(trust) => host_trust(host, trust),
        HostFound::WiredEverywhere { user } => said(format!(
            "{title}: the gate's hooks are wired in {} too, so a session started in any subdirectory is gated",
            user.display()
        )),
        HostFound::StartedBelow {
            below,
            workdir,
            user,
        } => fixed(
            format!(
                "{title} reads {rel} only in the directory it is started in: started here, in {}/, it runs no gate",
                below.display()
            ),
            start_at_root(host, workdir, user),
        ),
        HostFound::StartAtRootOnly { workdir, user } => fixed(
            format!(
                "{title} reads {rel} only in the directory it is started in: started in a subdirectory (such as src/), it runs no gate"
            ),
            start_at_root(host, workdir, user),
        ),
        HostFound::CapBelow {
            setting,
            cap,
            policy,
            budget,
            raise_above,
        } => {
            let blocks = |n: u32| match n {
                1 => "1 block".to_string(),
                n => format!("{n} blocks"),
            };
            fixed(
                format!(
                    "{title}: {setting} ends a turn after {} in this environment, below the gate's budget ({} a turn): the gate gives at most {} a turn, then its yield",
                    blocks(*cap),
                    blocks(*policy),
                    blocks(*budget),
                ),
                format!(
                    "raise {setting} above {raise_above}, or lower git config prove-it.maxBlocks to {budget}"
                ),
            )
        }
        HostFound::WorktreesNotIgnored => fixed(
            format!(
                "{title}: .claude/worktrees/ is not ignored: a subagent's worktree there would count as an embedded repository of this worktree's state, and a session's stop would be refused while it holds changes"
            ),
            "echo .claude/worktrees/ >> .gitignore",
        ),
        HostFound::HooksOff(off) => fixed(
            format!(
                "{title}: {} in {} keeps it from running the gate's hooks: no stop is gated",
                off.key,
                off.file.display()
            ),
            format!(
                "{}: {}",
                off.file.display(),
                super::host::switch_back(off.switch, off.key)
            ),
        ),
    }
}

/// A stop hook that may end before verify.sh's longest run, said in the host's own names and
/// units: Gemini's AfterAgent hook counts milliseconds.
fn stop_too_short(host: Host, short: &StopTooShort) -> Words {
    let StopTooShort {
        event,
        key,
        unit_ms,
        stop,
        verify,
        retries,
    } = short;
    let unit = if *unit_ms == 1 { "ms" } else { "s" };
    let in_units = |secs: u64| secs * 1000 / unit_ms;
    // The longest a stop may run verify.sh: each of its runs under the retries.
    let longest = verify * (1 + u64::from(*retries));
    fixed(
        format!(
            "{}: the {event} hook's timeout ({} {unit}) does not exceed verify.sh's ({longest} s{}): a slow run would end the turn unverified",
            host.title(),
            in_units(*stop),
            if *retries > 0 {
                format!(
                    ": {verify} s for each of {} runs under prove-it.retries {retries}",
                    retries + 1
                )
            } else {
                String::new()
            }
        ),
        format!(
            "raise the {event} hook's \"{key}\" in {} above {} ({unit}), or lower git config prove-it.timeout{}",
            host.config_path(),
            in_units(longest),
            if *retries > 0 {
                " or prove-it.retries"
            } else {
                ""
            }
        ),
    )
}

/// The fix for a host that reads the project's hooks only where it starts.
fn start_at_root(host: Host, workdir: &Path, user: &Path) -> String {
    format!(
        "start {} at {}, or wire the gate for every folder: merge the hooks of {} into {} (ADAPTERS.md; the gate stays silent in repositories without verify.sh)",
        host.title(),
        workdir.display(),
        host.config_path(),
        user.display()
    )
}

/// The host's trust in the folder, as its module reads it; a fix is the host's own step.
fn host_trust(host: Host, trust: &Trust) -> Words {
    let title = host.title();
    let step = || super::host::step(host).unwrap_or("trust this folder in the host");
    match trust {
        Trust::Trusted => said(format!(
            "{title}: this folder is trusted, so its project hooks run"
        )),
        Trust::NotRecorded { record } => fixed(
            format!(
                "{title}: {} does not record trusting this folder, so its project hooks likely \
                 do not run",
                record.display()
            ),
            step(),
        ),
        Trust::ProjectNotTrusted {
            record,
            agent,
            hooks_file,
        } => fixed(
            format!(
                "{title}: {} does not record trusting this project, so {agent} does not read its \
                 {hooks_file}",
                record.display()
            ),
            step(),
        ),
        Trust::ApprovalUnknown { agent } => fixed(
            format!(
                "{title}: this project is trusted, but whether {agent} approved its hooks cannot \
                 be checked from here; unapproved hooks are skipped silently"
            ),
            step(),
        ),
    }
}

fn on_path(found: &OnPathFound) -> Words {
    let listed = |found: &[std::path::PathBuf]| {
        found
            .iter()
            .map(|file| file.display().to_string())
            .collect::<Vec<_>>()
            .join(", ")
    };
    match found {
        OnPathFound::Missing => fixed(
            "git-prove-it is not on PATH: 'git prove-it' in hooks would fail",
            "cargo install --locked --path <this tool's source> (or put git-prove-it on PATH)",
        ),
        OnPathFound::Shadowed { running, found } => fixed(
            format!(
                "git runs {} for 'git prove-it', not this git-prove-it ({}): the hooks run that one; every git-prove-it git finds, in its order: {}",
                found[0].display(),
                running.display(),
                listed(found)
            ),
            format!(
                "remove {} or put {} before it on PATH",
                found[0].display(),
                running.parent().unwrap_or(running).display()
            ),
        ),
        OnPathFound::Ours { found } if found.len() > 1 => said(format!(
            "git-prove-it is on PATH: {}, which git runs first of: {}",
            found[0].display(),
            listed(found)
        )),
        OnPathFound::Ours { found } => {
            said(format!("git-prove-it is on PATH: {}", found[0].display()))
        }
    }
}

fn pre_push(found: &PrePushFound) -> Words {
    match found {
        PrePushFound::HuskyWithoutHook => fixed(
            "husky runs this repository's hooks, and .husky/pre-push does not exist: unproven commits can be pushed",
            "git prove-it init --pre-push",
        ),
        PrePushFound::Manager { file, wired: true } => {
            said(format!("{file} runs git prove-it before a push"))
        }
        PrePushFound::Manager { file, wired: false } => fixed(
            format!(
                "{file} runs this repository's hooks but not git prove-it before a push: unproven commits can be pushed"
            ),
            "git prove-it init --pre-push (it wires husky, and prints the snippet for lefthook and pre-commit)",
        ),
        PrePushFound::Installed { path } => said(format!(
            "the pre-push hook is installed at {}",
            path.display()
        )),
        PrePushFound::Calls { path } => said(format!(
            "the pre-push hook at {} calls git prove-it",
            path.display()
        )),
        PrePushFound::Foreign { path } => fixed(
            format!(
                "the pre-push hook at {} does not call git prove-it: unproven commits can be pushed",
                path.display()
            ),
            "make it pass its arguments and stdin to: git prove-it hook git pre-push \"$@\"",
        ),
        PrePushFound::Missing => fixed(
            "no pre-push hook: unproven commits can be pushed and proofs do not travel with pushes",
            "git prove-it install pre-push",
        ),
    }
}

fn proofs(found: &ProofsFound) -> Words {
    match found {
        ProofsFound::RefBroken { cause } => fixed(
            format!("{PROOFS_REF} cannot be read: {cause}"),
            format!("git fsck; git update-ref -d {PROOFS_REF} drops it (and every proof)"),
        ),
        ProofsFound::Unreadable { cause } => {
            fixed(format!("{PROOFS_REF} cannot be read: {cause}"), "git fsck")
        }
        ProofsFound::NotesUnreadable { cause } => fixed(
            format!("{PROOFS_REF} cannot be read: {cause}"),
            "git fsck, then fetch the proofs again: git prove-it sync",
        ),
        ProofsFound::NoProofs => said(format!("{PROOFS_REF}: no proofs yet")),
        ProofsFound::Proven { trees } => said(format!(
            "{PROOFS_REF}: {trees} proven tree{}",
            plural(*trees, "", "s")
        )),
        ProofsFound::Unheld { notes } => said(format!(
            "{PROOFS_REF}: {notes} note{} of trees no commit holds (working states proven and never committed): they stay in this clone, never sent; git prove-it doctor --prune-unreachable drops them",
            plural(*notes, "", "s"),
        )),
        ProofsFound::UnheldUnreadable { cause } => fixed(
            format!("which proven trees a commit holds cannot be read: {cause}"),
            "git fsck",
        ),
        ProofsFound::MergeNotUnion { key } => fixed(
            format!("{key} is not union: a stock 'git notes merge' would scramble proof records"),
            format!("git config {key} union"),
        ),
        ProofsFound::Unisolated { records, first } => fixed(
            format!(
                "{records} proof record{} made outside an agent session carr{} no isolation line: earlier versions proved commits (run <rev>, bisect, the pre-push hook) in a worktree inside the checkout, where a run could test the checkout's code instead of the commit's; first: tree {first}",
                plural(*records, "", "s"),
                plural(*records, "ies", "y"),
            ),
            "review them with git prove-it log; take back those made by commit runs with git prove-it revoke --unisolated --reason '<why>', then prove again",
        ),
        ProofsFound::IsolationUnreadable { cause } => fixed(
            format!("the proofs' isolation cannot be read: {cause}"),
            "git fsck",
        ),
        ProofsFound::NoneDropped => said(format!(
            "no proof records dropped by other writers (the reflog of {PROOFS_REF})"
        )),
        ProofsFound::Dropped { notes, messages } => fixed(
            format!(
                "{notes} proof note{} lost records to updates not made by git-prove-it ({}), according to the reflog of {PROOFS_REF}",
                plural(*notes, "", "s"),
                messages.join("; ")
            ),
            "git prove-it doctor --restore",
        ),
        ProofsFound::ReflogUnreadable { cause } => fixed(
            format!("the reflog of {PROOFS_REF} cannot be read: {cause}"),
            format!("git reflog show {PROOFS_REF}"),
        ),
    }
}

/// Where a contributor's proofs belong: their fork, not the project they cloned.
const TO_A_FORK: &str = "add your fork as a remote and push there: git remote add fork <your fork's URL> && git config remote.pushDefault fork && git prove-it sync fork";

fn remote(found: &RemoteFound) -> Words {
    match found {
        RemoteFound::NoRemote => said("no remote: proofs stay in this clone"),
        RemoteFound::Foreign { remote, looked } => fixed(
            format!(
                "{remote} looks like someone else's project (none of the last {looked} commits on {remote}'s branches are yours): syncing proofs there pushes them upstream"
            ),
            TO_A_FORK,
        ),
        RemoteFound::HasProofs { remote } => said(format!("{remote} has {PROOFS_REF}")),
        RemoteFound::NoProofs { remote, foreign } => fixed(
            format!("{remote} has no {PROOFS_REF}: CI and other clones cannot see any proof"),
            if *foreign {
                TO_A_FORK.to_string()
            } else {
                format!("git prove-it sync {remote}")
            },
        ),
        RemoteFound::Unanswered { remote, cause } => fixed(
            format!("could not ask {remote} for its proofs: {cause}"),
            format!("git ls-remote {remote} {PROOFS_REF}"),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(found: Found) -> (Health, String, Option<String>) {
        let finding = Finding::of(&found);
        (finding.status, finding.what, finding.fix)
    }

    /// Counts are said in English: one tree, two trees; one path is in no check's inputs, twelve
    /// are, ten of them named.
    #[test]
    fn counts_are_said_in_english() {
        let proven = |trees| words(Found::Proofs(ProofsFound::Proven { trees })).1;
        assert_eq!(proven(1), "refs/notes/prove-it: 1 proven tree");
        assert_eq!(proven(2), "refs/notes/prove-it: 2 proven trees");
        let one = words(Found::Checks(ChecksFound::Uncovered {
            count: 1,
            shown: vec!["a.txt".to_string()],
        }));
        assert_eq!(
            one.1,
            "1 path of the state is in no check's inputs, so no check tests it: a.txt"
        );
        let shown: Vec<String> = (0..10).map(|n| format!("f{n}")).collect();
        let twelve = words(Found::Checks(ChecksFound::Uncovered { count: 12, shown }));
        assert!(
            twelve.1.starts_with(
                "12 paths of the state are in no check's inputs, so no check tests them: f0, f1,"
            ),
            "{}",
            twelve.1
        );
        assert!(twelve.1.ends_with("f9 and 2 more"), "{}", twelve.1);
    }

    /// A stop hook too short for verify.sh is told in the host's own event, key and unit:
    /// Gemini CLI's AfterAgent counts milliseconds, and the retries multiply the longest run.
    #[test]
    fn a_stop_hook_too_short_is_said_in_the_hosts_units() {
        let (status, what, fix) = words(Found::Host(
            Host::Gemini,
            HostFound::StopTooShort(StopTooShort {
                event: "AfterAgent",
                key: "timeout",
                unit_ms: 1,
                stop: 900,
                verify: 600,
                retries: 1,
            }),
        ));
        assert_eq!(status, Health::Fail);
        assert_eq!(
            what,
            "Gemini CLI: the AfterAgent hook's timeout (900000 ms) does not exceed verify.sh's \
             (1200 s: 600 s for each of 2 runs under prove-it.retries 1): a slow run would end \
             the turn unverified"
        );
        assert_eq!(
            fix.as_deref(),
            Some(
                "raise the AfterAgent hook's \"timeout\" in .gemini/settings.json above 1200000 \
                 (ms), or lower git config prove-it.timeout or prove-it.retries"
            )
        );
    }

    /// Every finding that is not ok says how to fix it, and none that is ok does: `--json`
    /// readers rely on `fix` being null exactly when `status` is ok.
    #[test]
    fn a_fix_is_said_exactly_where_a_finding_is_not_ok() {
        let found = [
            Found::Verify(VerifyFound::Armed),
            Found::Verify(VerifyFound::Missing),
            Found::Verify(VerifyFound::ProgramMissing {
                program: "ruff".to_string(),
            }),
            Found::Tests(TestsFound::NoCounts {
                without: vec!["verify.sh".to_string()],
            }),
            Found::Run(RunFound::ChecksOnly),
            Found::Policy(PolicyFound::Skipped),
            Found::Host(Host::Claude, HostFound::Wired),
            Found::Host(Host::Claude, HostFound::Trust(Trust::Trusted)),
            Found::Host(Host::Claude, HostFound::WorktreesNotIgnored),
            Found::OnPath(OnPathFound::Missing),
            Found::PrePush(PrePushFound::Manager {
                file: "lefthook.yml",
                wired: true,
            }),
            Found::PrePush(PrePushFound::Missing),
            Found::Identity {
                display: "A <a@example.com>".to_string(),
                missing: false,
            },
            Found::Proofs(ProofsFound::NoneDropped),
            Found::Proofs(ProofsFound::MergeNotUnion {
                key: "notes.prove-it.mergeStrategy",
            }),
            Found::Remote(RemoteFound::NoRemote),
            Found::Remote(RemoteFound::NoProofs {
                remote: "origin".to_string(),
                foreign: true,
            }),
            Found::ManPage(None),
        ];
        for found in found {
            let (status, what, fix) = words(found);
            assert_eq!(status == Health::Ok, fix.is_none(), "{what}: {fix:?}");
        }
    }

    /// `--json` prints each finding as it reads, never the values it was made from.
    #[test]
    fn json_holds_the_words() {
        let report = DoctorReport::new(
            &[
                Found::Remote(RemoteFound::NoRemote),
                Found::PrePush(PrePushFound::Missing),
            ],
            0,
            0,
        );
        let json = serde_json::to_value(&report).unwrap();
        assert_eq!(
            json,
            serde_json::json!({
                "version": 1,
                "ok": true,
                "restored": 0,
                "pruned": 0,
                "checks": [
                    {"status": "ok", "what": "no remote: proofs stay in this clone", "fix": null},
                    {
                        "status": "warn",
                        "what": "no pre-push hook: unproven commits can be pushed and proofs do not travel with pushes",
                        "fix": "git prove-it install pre-push"
                    }
                ]
            })
        );
    }
}
