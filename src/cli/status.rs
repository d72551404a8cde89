//! `git prove-it status`: whether the working state is armed and proven. Runs nothing.

use std::io::Write;

use crate::outcome::Outcome;
use anyhow::Context as _;

use crate::context::Context;
use crate::exit;
use crate::gate::AheadView;
use crate::git::{Armed, FAILURES_REF, ObjectId, Repo, StateTree};
use crate::proof::{
    CHECKS_FILE, CheckProof, CheckSet, ChecksError, Record, Script, Uncovered, VERIFY_CHECK,
    lookup_failure, lookup_proof, state_check_proofs,
};
use crate::report::{
    self, AheadSummary, ContestSummary, FailureSummary, JSON_VERSION, ProofSummary, StatusCheck,
    StatusReport, could_not,
};

/// Show whether verify.sh is armed, the state tree of the working state, and whether (and by
/// whom, when) it was proven. Runs nothing.
///
/// With a checks file (prove-it.toml), it lists each check: its input tree, and whether (and by
/// whom) it was proven; the state is proven when every check is.
///
/// For the state (or a check) not proven, it says when a failure of the same script is on
/// record for it (refs/notes/prove-it-failures): "last run failed: exit 1, 3 min ago".
///
/// Exit status: 0 proven, 1 not proven, 2 usage or repository error, 3 verify.sh not armed
/// (and no check declared).
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// Print the status as one JSON object on stdout.
    #[arg(long)]
    json: bool,
}

/// What to do about a state `status` cannot call proven as it is: arm it (`armed`: verify.sh's
/// state, `any_armed`: whether verify.sh or a check is armed), or settle its dirty submodules.
fn hints(armed: &crate::git::Armed, any_armed: bool, dirty: &[String]) -> Vec<&'static str> {
    if !any_armed {
        super::run::unarmed(armed).hints()
    } else if !dirty.is_empty() {
        report::hint::DIRTY_SUBMODULE_HINTS.to_vec()
    } else {
        Vec::new()
    }
}

pub(crate) fn run(args: &Args, out: &mut dyn Write) -> Result<u8, super::Failure> {
    let cwd = std::env::current_dir().context(could_not::read_the_current_directory())?;
    let ctx = Context::resolve(Repo::discover(&cwd)?, None);
    let repo = &ctx.repo;
    let armed = repo.armed()?;
    let state = repo.state_tree(false)?;
    // The proof `run` and the gate would accept: with signing on, a signed one.
    let signed_only = ctx.signed_only;
    // A dirty submodule is a change its gitlink does not record: a proof of this tree never
    // tested it, so it does not count here, as the gate and `run` refuse the state.
    let dirty = state.dirty_submodules().to_vec();
    let failures = Failures {
        repo,
        now: ctx.clock.now(),
    };
    if state.entry(CHECKS_FILE).is_some() {
        let report = with_checks(repo, &state, &armed, signed_only, dirty, &failures)?;
        return print(args, &report, out);
    }
    let found = lookup_proof(repo, state.id, state.verify)?;
    let best = found.best(signed_only).filter(|_| dirty.is_empty());
    let failure = match (best, state.verify) {
        (None, Some((blob, mode))) if dirty.is_empty() => {
            failures.newest(state.id, None, Script { blob, mode })?
        }
        _ => None,
    };
    let contested = found
        .contest()
        .filter(|_| best.is_none() && dirty.is_empty())
        .map(ContestSummary::from);
    let outcome = match (armed.is_armed(), best) {
        (false, _) => Outcome::InsufficientEvidence,
        (true, Some(record)) => record.outcome,
        (true, None) => Outcome::NotProven,
    };
    let report = StatusReport {
        version: JSON_VERSION,
        outcome,
        armed: armed.is_armed(),
        not_armed_reason: (!armed.is_armed()).then(|| report::armed::verify(armed)),
        hints: hints(&armed, armed.is_armed(), &dirty),
        dirty_submodules: dirty,
        tree: state.id.to_string(),
        head: repo.head_commit()?.map(|id| id.to_string()),
        proven: best.is_some(),
        proof: best.map(ProofSummary::from),
        invalid: report::status::not_counting(
            None,
            found.invalid.iter().map(|i| i.problem.to_string()),
            found.unsigned_passed_over(signed_only),
            found.revoked.len(),
        ),
        checks: None,
        checks_error: None,
        failure,
        uncovered: Vec::new(),
        uncovered_count: 0,
        contested,
        ahead: ahead(repo)?,
    };
    print(args, &report, out)
}

/// Where `status` looks up the failures on record, and the time their age is told from.
struct Failures<'a> {
    repo: &'a Repo,
    now: time::OffsetDateTime,
}

impl Failures<'_> {
    /// The newest failure on record of `check` (`None`: the root verify.sh) through `script`
    /// for the tree `key`.
    fn newest(
        &self,
        key: ObjectId,
        check: Option<&str>,
        script: Script,
    ) -> Result<Option<FailureSummary>, crate::git::Error> {
        if !self.repo.has_ref(FAILURES_REF)? {
            return Ok(None);
        }
        let mut notes = self.repo.notes(FAILURES_REF);
        Ok(lookup_failure(&mut notes, key, check, Some(script))?
            .map(|failure| FailureSummary::new(&failure, self.now)))
    }
}

fn print(args: &Args, report: &StatusReport, out: &mut dyn Write) -> Result<u8, super::Failure> {
    if args.json {
        report::json(report, out)?;
    } else {
        report.human(out)?;
    }
    Ok(match report.outcome {
        _ if !report.armed => exit::NOT_ARMED,
        Outcome::Proven | Outcome::BoundedClaimSurvives => exit::OK,
        _ => exit::NOT_PROVEN,
    })
}

/// The status of a state with a checks file (SPEC.md section 2.1): each check with its input
/// tree and its proof, the state proven only when every check is. verify.sh, when it can run,
/// is one of them; the state is armed by any check.
fn with_checks(
    repo: &Repo,
    state: &StateTree,
    armed: &Armed,
    signed_only: bool,
    dirty: Vec<String>,
    failures: &Failures<'_>,
) -> Result<StatusReport, super::Failure> {
    let (checks, checks_error, uncovered) = match CheckSet::of_state(repo, state) {
        Ok(set) => (
            state_check_proofs(repo, state, &set)?,
            None,
            set.uncovered(repo, state)?,
        ),
        Err(ChecksError::Git(error)) => return Err(error.into()),
        Err(error) => (Vec::new(), Some(error.to_string()), Uncovered::default()),
    };
    let any_check = !checks.is_empty() || checks_error.is_some();
    let best: Vec<Option<&Record>> = checks
        .iter()
        .map(|check| match check.check.runnable() {
            Ok(_) => check.best(signed_only).filter(|_| dirty.is_empty()),
            Err(_) => None,
        })
        .collect();
    let outcome = if !any_check {
        Outcome::InsufficientEvidence
    } else if checks_error.is_some() {
        Outcome::NotProven
    } else {
        crate::proof::set_outcome(best.iter().map(|record| crate::proof::Stands::by(*record)))
            .unwrap_or(Outcome::NotProven)
    };
    let proven = matches!(outcome, Outcome::Proven | Outcome::BoundedClaimSurvives);
    let invalid = checks_invalid(&checks, signed_only);
    let statuses = check_statuses(&checks, &best, &dirty, failures)?;
    Ok(StatusReport {
        version: JSON_VERSION,
        outcome,
        armed: any_check,
        not_armed_reason: (!armed.is_armed()).then(|| report::armed::verify(*armed)),
        hints: hints(armed, any_check, &dirty),
        dirty_submodules: dirty,
        tree: state.id.to_string(),
        head: repo.head_commit()?.map(|id| id.to_string()),
        proven,
        proof: best
            .first()
            .copied()
            .flatten()
            .filter(|_| proven)
            .map(ProofSummary::from),
        invalid,
        checks: Some(statuses),
        checks_error,
        failure: None,
        uncovered: uncovered.paths,
        uncovered_count: uncovered.count,
        contested: None,
        ahead: ahead(repo)?,
    })
}

/// What keeps the records of each check from counting, each said as of its check: invalid
/// records, an unsigned proof passed over, proofs revoked.
fn checks_invalid(checks: &[CheckProof], signed_only: bool) -> Vec<String> {
    checks
        .iter()
        .flat_map(|check| {
            report::status::not_counting(
                Some(&check.check.name),
                check.found.invalid.iter().map(|i| i.problem.to_string()),
                check.found.unsigned_passed_over(signed_only),
                check.found.revoked.len(),
            )
        })
        .collect()
}

/// Each check's line: its input tree and its proof (`best`, the one that counts), else the
/// newest failure on record, its script's problem, and a contest; a state with a dirty
/// submodule (`dirty`) has neither proof, failure nor contest.
fn check_statuses(
    checks: &[CheckProof],
    best: &[Option<&Record>],
    dirty: &[String],
    failures: &Failures<'_>,
) -> Result<Vec<StatusCheck>, crate::git::Error> {
    checks
        .iter()
        .zip(best)
        .map(|(check, best)| {
            let failure = match (best, check.check.runnable()) {
                (None, Ok(script)) if dirty.is_empty() => {
                    let name = (check.check.name != VERIFY_CHECK).then_some(&*check.check.name);
                    failures.newest(check.input_tree, name, script)?
                }
                _ => None,
            };
            Ok(StatusCheck {
                name: check.check.name.clone(),
                run: check.check.run.clone(),
                input_tree: check.input_tree.to_string(),
                proven: best.is_some(),
                proof: best.map(ProofSummary::from),
                script_problem: check.check.runnable().err().map(report::armed::script),
                failure,
                contested: check
                    .found
                    .contest()
                    .filter(|_| best.is_none() && dirty.is_empty())
                    .map(ContestSummary::from),
            })
        })
        .collect()
}

/// What the worktree's prover does, for its line.
fn ahead(repo: &Repo) -> Result<Option<AheadSummary>, crate::git::Error> {
    let summary = |state| AheadSummary {
        state,
        checks: Vec::new(),
        seconds: None,
        wrote: Vec::new(),
        failed: None,
    };
    Ok(crate::gate::ahead_view(repo)?.map(|view| match view {
        AheadView::Off { wrote } => AheadSummary {
            wrote,
            ..summary("off")
        },
        AheadView::NotRunning => summary("stopped"),
        AheadView::Idle { failed } => AheadSummary {
            // With checks, the exit names each one already.
            failed: failed.map(|failed| report::status::failed_ahead(&failed.checks, failed.exit)),
            ..summary("idle")
        },
        AheadView::Running { checks, secs } => AheadSummary {
            checks,
            seconds: Some(secs),
            ..summary("running")
        },
    }))
}
