use std::io::Write;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

use crate::exit;
use crate::git::{self, Notes, PROOFS_REF, Repo, StateTree};
use crate::policy::Policy;
use crate::proof::Proofs;
use crate::prove::{self, Attempted};
use crate::report::{self, JSON_VERSION, Progress, ProofSummary, RunReport, RunResult};
use anyhow::Context as _;
use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};

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

    let interrupt = interrupt_flag()?;
    let mut progress = Progress::new(args.verbose);
    let attempted = prove::attempt(
        repo,
        &before,
        prove::Attempt {
            host: "cli",
            session: None,
            anchor: None,
            verify_diff: None,
            timeout: policy.timeout,
            echo: args
                .verbose
                .then(|| Box::new(std::io::stderr()) as Box<dyn Write + Send>),
            interrupt: Some(&interrupt),
        },
        &mut |elapsed| progress.tick(elapsed),
    );
    let attempted = match attempted {
        Ok(attempted) => attempted,
        Err(prove::Error::Git(error)) => return Err(content_hint(error)),
        Err(error @ prove::Error::Verify(_)) => {
            return Err(super::Failure::from(error)
                .hint("verify.sh must be executable and start with a line such as #!/bin/sh"));
        }
    };
    let duration_ms = match &attempted {
        Attempted::Proven(record) => record.duration_ms,
        Attempted::Failed { duration_ms, .. } | Attempted::StateChanged { duration_ms, .. } => {
            *duration_ms
        }
    };
    progress.finish(Duration::from_millis(duration_ms), err);

    let report = match attempted {
        Attempted::Failed {
            exit,
            exit_code,
            duration_ms,
            output_bytes,
            tail,
            log,
        } => RunReport {
            version: JSON_VERSION,
            outcome: "DISPROVEN",
            tree,
            result: RunResult::Failed {
                exit,
                exit_code,
                duration_ms,
                output_bytes,
                tail,
                log: Some(log.display().to_string()),
            },
        },
        Attempted::StateChanged {
            duration_ms,
            after,
            changed_paths,
        } => RunReport {
            version: JSON_VERSION,
            outcome: "DISPROVEN",
            tree,
            result: RunResult::StateChanged {
                duration_ms,
                after: after.to_string(),
                changed_paths,
            },
        },
        Attempted::Proven(record) => {
            let report = RunReport {
                version: JSON_VERSION,
                outcome: record.outcome.as_str(),
                tree,
                result: RunResult::Proven {
                    proof: ProofSummary::from(&record),
                    proofs_ref: PROOFS_REF,
                },
            };
            return Ok((exit::OK, report));
        }
    };
    Ok((exit::NOT_PROVEN, report))
}

/// A flag raised by Ctrl-C, SIGTERM or SIGHUP while verify.sh runs, so that its process group
/// is killed rather than left running after we are gone.
pub(crate) fn interrupt_flag() -> std::io::Result<Arc<AtomicBool>> {
    let flag = Arc::new(AtomicBool::new(false));
    for signal in [SIGINT, SIGTERM, SIGHUP] {
        signal_hook::flag::register(signal, Arc::clone(&flag))?;
    }
    Ok(flag)
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
