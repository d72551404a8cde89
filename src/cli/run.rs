use std::ffi::OsString;
use std::io::Write;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

use anyhow::Context as _;
use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
use time::OffsetDateTime;

use crate::exit;
use crate::git::{self, Notes, PROOFS_REF, Repo, StateTree};
use crate::policy::Policy;
use crate::proof::{self, Outcome, Proofs, Record, Script};
use crate::report::{self, JSON_VERSION, Progress, ProofSummary, RunReport, RunResult};
use crate::verify;

/// How many lines of a failing run's output are shown.
const TAIL_LINES: usize = 20;
/// The run log keeps at most this much of verify.sh's output.
const LOG_CAP: u64 = 8 * 1024 * 1024;

/// Prove the working state: run verify.sh unless a proof for this exact state already exists,
/// and record a proof when it exits 0.
///
/// The working state is the tree `git add -A` would stage (tracked and untracked files that are
/// not ignored), computed without touching the index. Exit status: 0 proven, 1 verify.sh failed
/// or changed the working state while it ran, 2 usage or repository error, 3 verify.sh not armed.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// Stream verify.sh's output to stderr while it runs.
    #[arg(short, long)]
    verbose: bool,

    /// Print the result as one JSON object on stdout.
    #[arg(long)]
    json: bool,

    /// Run verify.sh even if this state was proven before.
    #[arg(short, long)]
    force: bool,

    /// Kill verify.sh (and everything it started) after this many seconds
    /// [default: $PROVE_IT_TIMEOUT, else git config prove-it.timeout, else 300].
    #[arg(long, value_name = "SECONDS")]
    timeout: Option<u64>,
}

/// Reads policy from the process environment and the repository's git config.
struct Sources<'a>(&'a Repo);

impl crate::policy::Sources for Sources<'_> {
    fn env(&self, name: &str) -> Option<String> {
        std::env::var(name).ok()
    }
    fn config(&self, key: &str) -> Option<String> {
        self.0.config_string(key)
    }
}

pub(crate) fn run(
    args: &Args,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> Result<u8, super::Failure> {
    let cwd = std::env::current_dir().context("could not read the current directory")?;
    let repo = Repo::discover(&cwd)?;
    let policy = Policy::resolve(args.timeout, &Sources(&repo))?;
    let (code, report) = prove(&repo, &policy, args, err)?;
    if args.json {
        report::json(&report, out)?;
    } else {
        report.human(out)?;
    }
    Ok(code)
}

fn prove(
    repo: &Repo,
    policy: &Policy,
    args: &Args,
    err: &mut dyn Write,
) -> Result<(u8, RunReport), super::Failure> {
    let armed = repo.armed();
    if !armed.is_armed() {
        let report = RunReport {
            version: JSON_VERSION,
            outcome: "INSUFFICIENT_EVIDENCE",
            tree: None,
            result: RunResult::NotArmed {
                reason: armed.reason(),
            },
        };
        return Ok((exit::NOT_ARMED, report));
    }

    let before = StateTree::compute(&repo.git, false).map_err(content_hint)?;
    if before.verify.is_none() {
        // A proof names the verify.sh it ran, so one that is not part of the state cannot prove it.
        return Err(super::Failure::from(anyhow::anyhow!(
            "verify.sh is not part of the working state, so no proof could name it"
        ))
        .hint("verify.sh is ignored: remove it from .gitignore or .git/info/exclude"));
    }
    let tree = Some(before.id.to_string());
    let mut notes = Notes::new(&repo.git, PROOFS_REF);
    if !args.force
        && let Some(note) = notes.lookup(&before.id)?
        && let Some(record) = Proofs::from_note(&note, &before.id, before.verify).best()
    {
        let report = RunReport {
            version: JSON_VERSION,
            outcome: record.outcome.as_str(),
            tree,
            result: RunResult::AlreadyProven {
                proof: ProofSummary::from(record),
            },
        };
        return Ok((exit::OK, report));
    }

    let log = repo.state_dir()?.join(git::LAST_RUN_LOG);
    let env: Vec<(OsString, OsString)> = [
        ("PROVE_IT", "1".to_string()),
        ("PROVE_IT_TREE", before.id.to_string()),
        ("PROVE_IT_HOST", "cli".to_string()),
    ]
    .into_iter()
    .map(|(k, v)| (k.into(), v.into()))
    .collect();
    let program = repo.verify_path();
    let interrupt = interrupt_flag()?;
    let mut progress = Progress::new(args.verbose);
    // Whole seconds: a record is read by people, and sub-second precision adds nothing there.
    let started = OffsetDateTime::now_utc()
        .replace_nanosecond(0)
        .expect("0 is a valid nanosecond");
    let outcome = verify::run(
        verify::Request {
            program: &program,
            workdir: repo.workdir(),
            env: &env,
            timeout: policy.timeout,
            log_path: Some(&log),
            log_cap: LOG_CAP,
            tail_lines: TAIL_LINES,
            echo: args
                .verbose
                .then(|| Box::new(std::io::stderr()) as Box<dyn Write + Send>),
            interrupt: Some(&interrupt),
        },
        &mut |elapsed| progress.tick(elapsed),
    )
    .map_err(|e| {
        super::Failure::from(e)
            .hint("verify.sh must be executable and start with a line such as #!/bin/sh")
    })?;
    progress.finish(outcome.duration, err);
    let duration_ms = millis(outcome.duration);

    if !outcome.passed() {
        let exit_code = match outcome.exit {
            verify::Exit::Code(code) => Some(code),
            _ => None,
        };
        let report = RunReport {
            version: JSON_VERSION,
            outcome: "DISPROVEN",
            tree,
            result: RunResult::Failed {
                exit: outcome.exit.describe(policy.timeout),
                exit_code,
                duration_ms,
                output_bytes: outcome.output_bytes,
                tail: outcome.tail,
                log: Some(log.display().to_string()),
            },
        };
        return Ok((exit::NOT_PROVEN, report));
    }

    // The proof must be for the state that was tested: if verify.sh changed it, record nothing.
    let after = StateTree::compute(&repo.git, true).map_err(content_hint)?;
    if after.id != before.id {
        let report = RunReport {
            version: JSON_VERSION,
            outcome: "DISPROVEN",
            tree,
            result: RunResult::StateChanged {
                duration_ms,
                after: after.id.to_string(),
                changed_paths: before.changed_paths(&after),
            },
        };
        return Ok((exit::NOT_PROVEN, report));
    }

    let (blob, mode) = after
        .verify
        .expect("the state after the run equals the one before, which holds verify.sh");
    let identity = repo.identity();
    let record = Record {
        outcome: Outcome::Proven,
        tree: after.id,
        head: repo.head_commit()?,
        verify: Script { blob, mode },
        verify_anchor: None,
        exit_code: 0,
        duration_ms,
        time: started,
        host: "cli".into(),
        session: None,
        tool: format!("git-prove-it {}", env!("CARGO_PKG_VERSION")),
        identity_missing: identity.missing,
        verify_diff: None,
        signed_off_by: identity.display.clone(),
    };
    notes.update(
        after.id,
        &format!("prove-it: proof for tree {}", after.id),
        |existing| proof::append(existing, &record),
    )?;
    let report = RunReport {
        version: JSON_VERSION,
        outcome: record.outcome.as_str(),
        tree,
        result: RunResult::Proven {
            proof: ProofSummary::from(&record),
            proofs_ref: PROOFS_REF,
        },
    };
    Ok((exit::OK, report))
}

/// A flag raised by Ctrl-C, SIGTERM or SIGHUP while verify.sh runs, so that its process group
/// is killed rather than left running after we are gone.
fn interrupt_flag() -> std::io::Result<Arc<AtomicBool>> {
    let flag = Arc::new(AtomicBool::new(false));
    for signal in [SIGINT, SIGTERM, SIGHUP] {
        signal_hook::flag::register(signal, Arc::clone(&flag))?;
    }
    Ok(flag)
}

fn millis(duration: Duration) -> u64 {
    u64::try_from(duration.as_millis()).unwrap_or(u64::MAX)
}

/// Errors caused by the worktree's content are the repository's to fix; say how.
fn content_hint(error: git::Error) -> super::Failure {
    let content = error.is_worktree_content();
    let failure = super::Failure::from(error);
    if content {
        failure.hint("fix or remove the path named above; git add -A would fail on it too")
    } else {
        failure
    }
}
