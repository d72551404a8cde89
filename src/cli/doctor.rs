use std::io::Write;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use anyhow::Context as _;

use super::init::MERGE_STRATEGY;
use super::sources::Sources;
use super::{install, install_man};
use crate::exit;
use crate::git::{self, PROOFS_REF, Repo};
use crate::policy::Policy;
use crate::report::{self, DoctorReport, Finding, Health, JSON_VERSION};
use crate::setup::Host;
use crate::setup::host::{Error as HostError, Wiring};

/// Check the set-up and say how to fix what is not right.
///
/// One line per check, `ok`, `warn` or `FAIL`, with a `fix:` line when it is not ok: verify.sh
/// armed; the hooks of each agent host whose project configuration exists (and whether the host
/// likely trusts this folder); git-prove-it on PATH; the pre-push hook; the git identity proofs
/// are signed off by; the proofs ref and its merge strategy; proof records dropped by other
/// writers (stock `git notes add -f`, say) according to the ref's reflog; whether the remote
/// has the proofs (asked with git ls-remote, which may use the network; given up after 10 s);
/// whether `git help prove-it` finds the man page. Exit status: 0 nothing failed (warnings
/// allowed), 1 something is broken, 2 error.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// Print the checks as one JSON object on stdout.
    #[arg(long)]
    json: bool,

    /// Put proof records that other writers dropped (see the reflog check) back into
    /// refs/notes/prove-it, beside whatever the notes hold now.
    #[arg(long)]
    restore: bool,
}

pub(crate) fn run(args: &Args, out: &mut dyn Write) -> Result<u8, super::Failure> {
    let cwd = std::env::current_dir().context("could not read the current directory")?;
    let repo = Repo::discover(&cwd)?;
    let mut restored = 0;
    if args.restore {
        for overwrite in repo.overwritten_proofs()? {
            if repo.restore(&overwrite)? {
                restored += 1;
            }
        }
    }
    let workdir = repo.workdir()?;
    let mut checks = Vec::new();
    verify_sh(repo.armed()?, &mut checks);
    hosts(&repo, workdir, &mut checks);
    on_path(&mut checks);
    pre_push(&install::hooks_dir(&repo)?, &mut checks);
    identity(&repo, &mut checks);
    proofs(&repo, &mut checks);
    remote(&repo, &mut checks);
    man_page(&mut checks);
    let report = DoctorReport {
        version: JSON_VERSION,
        ok: checks.iter().all(|c| c.status != Health::Fail),
        restored,
        checks,
    };
    if args.json {
        report::json(&report, out)?;
    } else {
        report.human(out)?;
    }
    Ok(if report.ok {
        exit::OK
    } else {
        exit::NOT_PROVEN
    })
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
        other => fail(
            format!("verify.sh {}: nothing is gated", other.reason()),
            "make verify.sh a file at the worktree root, or: git prove-it init --force",
        ),
    });
}

fn hosts(repo: &Repo, workdir: &Path, checks: &mut Vec<Finding>) {
    let timeout = Policy::resolve(None, &Sources::of(repo)).map(|p| p.timeout.as_secs());
    for host in Host::ALL {
        let path = workdir.join(host.config_path());
        let Ok(text) = std::fs::read_to_string(&path) else {
            continue;
        };
        let rel = host.config_path();
        let wire = format!("git prove-it init --host {}", host_flag(host));
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
                    .filter(|(_, wiring)| *wiring == Wiring::Missing)
                    .map(|(entry, _)| entry.event)
                    .collect();
                if !missing.is_empty() {
                    checks.push(fail(
                        format!(
                            "{}: the gate's {} hook{} not wired in {rel}",
                            host.title(),
                            missing.join(" and "),
                            if missing.len() == 1 { " is" } else { "s are" }
                        ),
                        wire,
                    ));
                    continue;
                }
                let stop = wired
                    .iter()
                    .find(|(entry, _)| entry.stop)
                    .and_then(|(_, wiring)| match wiring {
                        Wiring::Wired(timeout) => *timeout,
                        Wiring::Missing => None,
                    });
                match (stop, &timeout) {
                    (Some(stop), Ok(verify)) if stop <= *verify => checks.push(fail(
                        format!(
                            "{}: the Stop hook's timeout ({stop} s) does not exceed verify.sh's ({verify} s): a slow run would end the turn unverified",
                            host.title()
                        ),
                        format!("raise the Stop hook's \"timeout\" in {rel} above {verify}, or lower git config prove-it.timeout"),
                    )),
                    (_, Err(error)) => checks.push(fail(
                        format!("{}: {error}", host.title()),
                        "fix the value named above",
                    )),
                    _ => checks.push(ok(format!(
                        "{}: the gate's hooks are wired in {rel}",
                        host.title()
                    ))),
                }
                checks.extend(trust(host, workdir));
            }
        }
    }
}

fn host_flag(host: Host) -> &'static str {
    host.name()
}

fn describe(error: &HostError) -> String {
    match error {
        HostError::Json(source) => format!("{error}: {source}"),
        HostError::Shape { .. } => error.to_string(),
    }
}

/// Whether the host is likely to run this folder's project hooks, where it asks for trust and
/// records it somewhere this can read; None for hosts that do not ask.
fn trust(host: Host, workdir: &Path) -> Option<Finding> {
    let workdir = workdir
        .canonicalize()
        .unwrap_or_else(|_| workdir.to_owned());
    let step = host.trust_step()?;
    let (trusted, record) = match host {
        Host::Claude => claude_trusts(&workdir),
        Host::Gemini => gemini_trusts(&workdir),
        Host::Copilot => copilot_trusts(&workdir),
        // Codex needs two trusts: the project's (readable, in its config.toml) before it reads
        // .codex/ at all, and the hooks' own approval, kept where this cannot read it. Untrusted
        // hooks are skipped silently, so even a trusted project is only a warning.
        Host::Codex => {
            let (trusted, record) = codex_trusts(&workdir);
            return Some(warn(
                if trusted {
                    "Codex CLI: this project is trusted, but whether Codex approved its hooks cannot be checked from here; unapproved hooks are skipped silently".to_string()
                } else {
                    format!(
                        "Codex CLI: {record} does not record trusting this project, so Codex does not read its .codex/hooks.json"
                    )
                },
                step,
            ));
        }
        Host::Cursor | Host::Vscode => return None,
    };
    Some(if trusted {
        ok(format!(
            "{}: this folder is trusted, so its project hooks run",
            host.title()
        ))
    } else {
        warn(
            format!(
                "{}: {record} does not record trusting this folder, so its project hooks likely do not run",
                host.title()
            ),
            step,
        )
    })
}

fn home() -> PathBuf {
    std::env::var_os("HOME").map_or_else(|| PathBuf::from("."), PathBuf::from)
}

fn read_json(file: &Path) -> Option<serde_json::Value> {
    serde_json::from_str(&std::fs::read_to_string(file).ok()?).ok()
}

fn env_true(name: &str) -> bool {
    std::env::var(name).is_ok_and(|value| matches!(value.trim(), "1" | "true" | "yes"))
}

/// Claude Code asks once per folder, in an interactive session, whether to trust it, and records
/// the answer as `projects.<path>.hasTrustDialogAccepted` in `~/.claude.json`
/// (`$CLAUDE_CONFIG_DIR/.claude.json` when set); trusting a folder trusts what is below it.
/// `claude -p` runs project hooks without asking.
fn claude_trusts(workdir: &Path) -> (bool, String) {
    let file = std::env::var_os("CLAUDE_CONFIG_DIR")
        .map_or_else(home, PathBuf::from)
        .join(".claude.json");
    let trusted = read_json(&file)
        .as_ref()
        .and_then(|state| state.get("projects"))
        .is_some_and(|projects| {
            workdir.ancestors().any(|dir| {
                projects
                    .get(dir.to_string_lossy().as_ref())
                    .and_then(|project| project.get("hasTrustDialogAccepted"))
                    .and_then(serde_json::Value::as_bool)
                    == Some(true)
            })
        });
    (trusted, file.display().to_string())
}

/// Codex CLI records a trusted project in `~/.codex/config.toml` (`$CODEX_HOME/config.toml`
/// when set) as a table `[projects."<path>"]` holding `trust_level = "trusted"`, written by its
/// trust prompt or `codex exec --trust`. Read line by line, in the shape Codex writes, rather
/// than with a TOML parser for this one key; a project below a trusted one counts as trusted.
fn codex_trusts(workdir: &Path) -> (bool, String) {
    let file = std::env::var_os("CODEX_HOME")
        .map_or_else(|| home().join(".codex"), PathBuf::from)
        .join("config.toml");
    let text = std::fs::read_to_string(&file).unwrap_or_default();
    let mut project: Option<&str> = None;
    let mut trusted = false;
    for line in text.lines().map(str::trim) {
        if line.starts_with('[') {
            project = line
                .strip_prefix("[projects.")
                .and_then(|rest| rest.strip_suffix(']'))
                .and_then(|key| {
                    let quoted = |q: char| key.strip_prefix(q)?.strip_suffix(q);
                    quoted('"').or_else(|| quoted('\''))
                });
        } else if let Some(path) = project
            && workdir.starts_with(path)
            && let Some((key, value)) = line.split_once('=')
            && key.trim() == "trust_level"
            && value.trim() == "\"trusted\""
        {
            trusted = true;
        }
    }
    (trusted, file.display().to_string())
}

/// Gemini CLI records trusted folders in `~/.gemini/trustedFolders.json` (under
/// `$GEMINI_CLI_HOME` when set) as `{"<path>": "TRUST_FOLDER" | "TRUST_PARENT" | "DO_NOT_TRUST"}`;
/// `GEMINI_CLI_TRUST_WORKSPACE=true` trusts the workspace of a headless run.
pub(super) fn gemini_trusts(workdir: &Path) -> (bool, String) {
    let file = std::env::var_os("GEMINI_CLI_HOME")
        .map_or_else(home, PathBuf::from)
        .join(".gemini/trustedFolders.json");
    let trusted = env_true("GEMINI_CLI_TRUST_WORKSPACE")
        || read_json(&file)
            .as_ref()
            .and_then(serde_json::Value::as_object)
            .is_some_and(|folders| {
                folders.iter().any(|(path, rule)| {
                    let path = Path::new(path);
                    match rule.as_str() {
                        Some("TRUST_FOLDER") => workdir.starts_with(path),
                        Some("TRUST_PARENT") => {
                            path.parent().is_some_and(|p| workdir.starts_with(p))
                        }
                        _ => false,
                    }
                })
            });
    (trusted, file.display().to_string())
}

/// Copilot CLI records trusted folders as `trusted_folders` in `~/.copilot/config.json` (under
/// `$COPILOT_HOME` when set); `COPILOT_ALLOW_ALL=true` trusts everything.
fn copilot_trusts(workdir: &Path) -> (bool, String) {
    let file = std::env::var_os("COPILOT_HOME")
        .map_or_else(|| home().join(".copilot"), PathBuf::from)
        .join("config.json");
    let trusted = env_true("COPILOT_ALLOW_ALL")
        || read_json(&file)
            .as_ref()
            .and_then(|config| config.get("trusted_folders"))
            .and_then(serde_json::Value::as_array)
            .is_some_and(|folders| {
                folders
                    .iter()
                    .filter_map(serde_json::Value::as_str)
                    .any(|folder| workdir.starts_with(folder))
            });
    (trusted, file.display().to_string())
}

/// Hosts run `git prove-it`, which git finds as `git-prove-it` on PATH.
fn on_path(checks: &mut Vec<Finding>) {
    let found = std::env::var_os("PATH").and_then(|path| {
        std::env::split_paths(&path)
            .map(|dir| dir.join("git-prove-it"))
            .find(|file| {
                std::fs::metadata(file)
                    .is_ok_and(|meta| meta.is_file() && meta.permissions().mode() & 0o111 != 0)
            })
    });
    checks.push(match found {
        Some(file) => ok(format!("git-prove-it is on PATH: {}", file.display())),
        None => fail(
            "git-prove-it is not on PATH: 'git prove-it' in hooks would fail",
            "cargo install --locked --path <this tool's source> (or put git-prove-it on PATH)",
        ),
    });
}

fn pre_push(hooks_dir: &Path, checks: &mut Vec<Finding>) {
    let path = hooks_dir.join("pre-push");
    checks.push(match std::fs::read_to_string(&path) {
        Ok(text) if text == install::PRE_PUSH => {
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

fn proofs(repo: &Repo, checks: &mut Vec<Finding>) {
    let tip = match repo.git.try_find_reference(PROOFS_REF) {
        Ok(None) => None,
        Ok(Some(mut reference)) => match reference.peel_to_id() {
            Ok(id) => Some(id.detach()),
            Err(error) => {
                checks.push(fail(
                    format!("{PROOFS_REF} cannot be read: {error}"),
                    format!("git fsck; git update-ref -d {PROOFS_REF} drops it (and every proof)"),
                ));
                return;
            }
        },
        Err(error) => {
            checks.push(fail(
                format!("{PROOFS_REF} cannot be read: {error}"),
                "git fsck",
            ));
            return;
        }
    };
    checks.push(match tip.map(|tip| git::all_notes(&repo.git, tip)) {
        None => ok(format!("{PROOFS_REF}: no proofs yet")),
        Some(Ok(notes)) => ok(format!("{PROOFS_REF}: {} proven trees", notes.len())),
        Some(Err(error)) => fail(
            format!(
                "{PROOFS_REF} cannot be read: {}",
                crate::report::error_chain(&error)
            ),
            "git fsck, then fetch the proofs again: git prove-it sync",
        ),
    });
    if repo
        .config_string(MERGE_STRATEGY)
        .is_none_or(|value| value != "union")
    {
        checks.push(warn(
            format!("{MERGE_STRATEGY} is not union: a stock 'git notes merge' would scramble proof records"),
            format!("git config {MERGE_STRATEGY} union"),
        ));
    }
    checks.push(match repo.overwritten_proofs() {
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
            format!("the reflog of {PROOFS_REF} cannot be read: {}", crate::report::error_chain(&error)),
            "git reflog show refs/notes/prove-it",
        ),
    });
}

/// How long doctor waits for the remote to list its proofs.
const REMOTE_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(10);

/// The remote's proofs, asked with `git ls-remote`: gix cannot talk to every remote git can
/// (credential helpers, ssh configuration), and sync already relies on git for the same.
fn remote(repo: &Repo, checks: &mut Vec<Finding>) {
    if repo.git.remote_names().is_empty() {
        checks.push(ok("no remote: proofs stay in this clone"));
        return;
    }
    let remote = repo.default_remote();
    let answer = repo.remote_proofs_tip_within(&remote, REMOTE_TIMEOUT);
    checks.push(match answer {
        Ok(Some(_)) => ok(format!("{remote} has {PROOFS_REF}")),
        Ok(None) => warn(
            format!("{remote} has no {PROOFS_REF}: CI and other clones cannot see any proof"),
            format!("git prove-it sync {remote}"),
        ),
        Err(error) => warn(
            format!(
                "could not ask {remote} for its proofs: {}",
                crate::report::error_chain(&error)
            ),
            format!("git ls-remote {remote} {PROOFS_REF}"),
        ),
    });
}

fn man_page(checks: &mut Vec<Finding>) {
    checks.push(match install_man::man_page_location() {
        Some(page) => ok(format!("git help prove-it opens {}", page.display())),
        None => warn(
            "git help prove-it finds no man page (git prove-it --help shows none either)",
            "git prove-it install-man",
        ),
    });
}
