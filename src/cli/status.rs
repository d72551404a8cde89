use std::io::Write;

use crate::outcome::Outcome;
use anyhow::Context as _;

use crate::context::Context;
use crate::exit;
use crate::git::Repo;
use crate::proof::lookup_proof;
use crate::report::{self, JSON_VERSION, ProofSummary, StatusReport};

/// Show whether verify.sh is armed, the state tree of the working state, and whether (and by
/// whom, when) it was proven. Runs nothing.
///
/// Exit status: 0 proven, 1 not proven, 2 usage or repository error, 3 verify.sh not armed.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// Print the status as one JSON object on stdout.
    #[arg(long)]
    json: bool,
}

/// What makes a state with dirty submodules provable (as `run` says).
pub(super) const DIRTY_SUBMODULE_HINTS: [&str; 2] = [
    "commit inside the submodule, then stage its new commit here (git add <path>)",
    "or restore it to its commit (git -C <path> stash -u)",
];

pub(crate) fn run(args: &Args, out: &mut dyn Write) -> Result<u8, super::Failure> {
    let cwd = std::env::current_dir().context("could not read the current directory")?;
    let ctx = Context::resolve(Repo::discover(&cwd)?, None);
    let repo = &ctx.repo;
    let armed = repo.armed()?;
    let state = repo.state_tree(false)?;
    // The proof `run` and the gate would accept: with signing on, a signed one.
    let signed_only = ctx.signed_only;
    let found = lookup_proof(repo, state.id, state.verify)?;
    // A dirty submodule is a change its gitlink does not record: a proof of this tree never
    // tested it, so it does not count here, as the gate and `run` refuse the state (issue 19).
    let dirty = state.dirty_submodules().to_vec();
    let best = found.best(signed_only).filter(|_| dirty.is_empty());
    let (outcome, code) = match (armed.is_armed(), best) {
        (false, _) => (Outcome::InsufficientEvidence, exit::NOT_ARMED),
        (true, Some(record)) => (record.outcome, exit::OK),
        (true, None) => (Outcome::NotProven, exit::NOT_PROVEN),
    };
    let report = StatusReport {
        version: JSON_VERSION,
        outcome,
        armed: armed.is_armed(),
        not_armed_reason: (!armed.is_armed()).then(|| armed.reason()),
        hints: if !armed.is_armed() {
            super::run::unarmed(&armed).hints()
        } else if !dirty.is_empty() {
            DIRTY_SUBMODULE_HINTS.to_vec()
        } else {
            Vec::new()
        },
        dirty_submodules: dirty,
        tree: state.id.to_string(),
        head: repo.head_commit()?.map(|id| id.to_string()),
        proven: best.is_some(),
        proof: best.map(ProofSummary::from),
        invalid: found
            .invalid
            .iter()
            .map(|i| i.problem.to_string())
            .chain((found.unsigned_passed_over(signed_only) > 0).then(|| {
                "an unsigned proof, which does not count while prove-it.sign is on".to_string()
            }))
            .collect(),
    };
    if args.json {
        report::json(&report, out)?;
    } else {
        report.human(out)?;
    }
    Ok(code)
}
