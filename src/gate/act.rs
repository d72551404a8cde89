//! Acting on a stop: run verify.sh when the decision says so, then keep the count, write the
//! ledger and save the turn state. Nothing here decides; `decide` is asked again with what the
//! run showed.

use super::decide::{
    Decision, Ending, Failing, RunFacts, State, Untestable, Verdict, WeakeningFound, after_run,
};
use super::error::{Error, error_chain};
use super::event::Stop;
use super::host::HostRules;
use super::ledger::{
    LedgerActual, Refusal, append_answered_ahead, append_ledger, append_refusal, earlier_key_lines,
    refusal_facts,
};
use super::observe::Seen;
use super::turn::{Answer, Facts, LastAnswer};
use crate::context::Context;
use crate::outcome::Outcome;
use crate::proof::{self, Attempted};

/// Where a failed run's full output is, and its key lines found before the last lines.
pub(crate) struct FailedLog {
    path: String,
    earlier: Vec<String>,
}

/// Carry out what `decide` said of what a stop saw: its verdict as it is, or a run of the state
/// (under the run lock the observation took), judged by the same rules with what the run
/// showed (`decide::after_run`).
pub(crate) fn verdict(
    ctx: &Context,
    host: &dyn HostRules,
    event: &Stop,
    seen: &mut Seen,
    decision: Decision,
) -> Result<(Verdict, Option<FailedLog>), Error> {
    if let Decision::Verdict(verdict) = decision {
        return Ok((verdict, None));
    }
    // Sessions sharing a worktree (an agent team's teammates) never run on it at once.
    let _held = seen.hold_run(&ctx.repo)?;
    let interrupt = crate::process::interrupt_flag().map_err(Error::Interrupt)?;
    let how = How {
        interrupt: &interrupt,
        ahead: false,
    };
    let ran = run_seen(ctx, host, event, seen, how)?;
    // Whether this run left the state as it found it, passing or not, decides whether
    // proving ahead may run this worktree's scripts.
    super::ahead::note_run(ctx, ran.wrote.as_deref());
    seen.observed.run = Some(ran.facts);
    // The tests a run fell short by are weakenings as the protected paths' are: under
    // `prove-it.weakening = block`, each new one sends the agent back once.
    seen.observed.weakened.extend(ran.weakened.iter().cloned());
    seen.tests_weakened = ran.weakened;
    Ok((after_run(&seen.observed), ran.log))
}

/// A run for a stop, or ahead of one (`gate::ahead`), and what interrupts it.
#[derive(Clone, Copy)]
pub(super) struct How<'a> {
    /// Raised by a signal, or by the prover when its run can no longer match the state.
    pub interrupt: &'a std::sync::atomic::AtomicBool,
    /// Made ahead of a stop: into its own log beside the stop's, recording proofs only.
    pub ahead: bool,
}

/// Run what the stop `event` would run on what was `seen` (the checks pending, or verify.sh),
/// as a stop runs it, ahead of that stop: what it showed, nothing decided, and the paths it
/// changed in place (`None`: not known, as for an interrupted run).
pub(super) fn run_ahead(
    ctx: &Context,
    host: &dyn HostRules,
    event: &Stop,
    seen: &mut Seen,
    how: How<'_>,
) -> Result<(RunFacts, Option<Vec<String>>), Error> {
    let ran = run_seen(ctx, host, event, seen, how)?;
    Ok((ran.facts, ran.wrote))
}

/// What a run of what was seen showed.
struct Ran {
    facts: RunFacts,
    /// The failing run's own log, kept apart.
    log: Option<FailedLog>,
    /// The tests it ran fewer of than its baseline.
    weakened: Vec<WeakeningFound>,
    /// The paths it changed in place (`None`: not known).
    wrote: Option<Vec<String>>,
}

/// Run the checks pending on what was `seen` (taken from it), or verify.sh.
fn run_seen(
    ctx: &Context,
    host: &dyn HostRules,
    event: &Stop,
    seen: &mut Seen,
    how: How<'_>,
) -> Result<Ran, Error> {
    let pending = std::mem::take(&mut seen.pending);
    let mut weakened = Vec::new();
    let mut wrote = None;
    let (facts, log) = run(
        ctx,
        host,
        event,
        seen,
        pending,
        &mut weakened,
        &mut wrote,
        how,
    )?;
    Ok(Ran {
        facts,
        log,
        weakened,
        wrote,
    })
}

/// How the gate proves: for the session, into the session's own log, never streamed.
fn options<'a>(
    ctx: &'a Context,
    host: &'a dyn HostRules,
    event: &'a Stop,
    seen: &Seen,
    how: How<'a>,
) -> Result<proof::ProveOptions<'a>, Error> {
    let policy = ctx.policy.clone()?;
    let (isolation, view) = proof::working_view(&ctx.repo).map_err(Error::Run)?;
    Ok(proof::ProveOptions {
        signer: ctx.signer.clone(),
        host: host.name(),
        session: Some(&event.session),
        timeout: seen
            .run_within
            .map_or(policy.timeout, |left| left.min(policy.timeout)),
        retries: policy.retries,
        echo: None,
        interrupt: Some(how.interrupt),
        log: Some(if how.ahead {
            seen.files.log().with_extension("ahead.log")
        } else {
            seen.files.log()
        }),
        record_failures: !how.ahead,
        clock: ctx.clock,
        isolation,
        env: host.environment().map(crate::verify::Environment::digest),
        view,
        env_remove: &[],
        untestable_failure: None,
        uncovered: seen.uncovered.clone(),
        index_trust: super::observe::index_trust(seen.anchor.as_ref()),
        read: None,
        protection: seen.protection.clone(),
        baseline: seen
            .anchor
            .as_ref()
            .map(|anchor| session_baseline(&ctx.repo, anchor))
            .unwrap_or_default(),
    })
}

/// How many of HEAD's first parents are looked through for the commit the session started
/// from, and then for its nearest proven ancestor.
const ANCESTORS: usize = 50;

/// Where a session's runs find their tests' baseline: the proof of the state it started from,
/// else of HEAD's tree then, else of the nearest proven first-parent ancestor of that commit
/// (found among HEAD's first parents by its tree); each check's input tree at the start.
fn session_baseline(repo: &crate::git::Repo, anchor: &super::anchor::Anchor) -> proof::Baseline {
    let mut trees: Vec<crate::git::ObjectId> = anchor
        .state_tree
        .into_iter()
        .chain(anchor.head_tree)
        .collect();
    let first_parents: Vec<crate::git::ObjectId> = (0..ANCESTORS)
        .map_while(|n| {
            repo.named_tree(&format!("HEAD~{n}^{{tree}}"))
                .ok()
                .flatten()
        })
        .collect();
    if let Some(at) = first_parents
        .iter()
        .position(|tree| Some(*tree) == anchor.head_tree)
    {
        trees.extend(first_parents.into_iter().skip(at + 1));
    }
    proof::Baseline {
        trees,
        inputs: anchor.start_inputs.clone(),
    }
}

/// Run verify.sh (or, with a checks file, the checks in `pending`) on the state seen,
/// recording a proof of what passes; `wrote` gets the paths the run changed in place, whether
/// it passed or not (empty: none; left `None` when that is not known).
#[expect(
    clippy::too_many_arguments,
    reason = "the stop's own values, handed down as they are to the one run path"
)]
fn run(
    ctx: &Context,
    host: &dyn HostRules,
    event: &Stop,
    seen: &Seen,
    pending: Vec<proof::ToRun>,
    weakened: &mut Vec<WeakeningFound>,
    wrote: &mut Option<Vec<String>>,
    how: How<'_>,
) -> Result<(RunFacts, Option<FailedLog>), Error> {
    let before = seen
        .state
        .as_ref()
        .expect("a run is decided only on a computed state tree");
    if matches!(
        seen.observed.state,
        Some(State::Tree {
            checks: Some(_),
            ..
        })
    ) {
        return run_checks(
            ctx, host, event, seen, before, pending, weakened, wrote, how,
        );
    }
    if before.verify.is_none() {
        return Err(Error::VerifyNotInState);
    }
    let attempted = proof::prove(
        &ctx.repo,
        before,
        seen.baseline_verify,
        seen.diff.clone(),
        options(ctx, host, event, seen, how)?,
        &mut |_| {},
    );
    if let Ok(attempted) = &attempted {
        *wrote = wrote_in_place(std::slice::from_ref(attempted));
    }
    Ok(match attempted {
        Ok(Attempted::Proven(record)) if proof::is_contested(&ctx.repo, &record)? => {
            (RunFacts::Flaky { checks: Vec::new() }, None)
        }
        Ok(Attempted::Proven(record)) => {
            weakened.extend(record.tests_weakened.iter().map(WeakeningFound::of_state));
            (RunFacts::Passed(record.outcome), None)
        }
        Ok(Attempted::Failed {
            ended,
            exit_code,
            tail,
            log,
            ..
        }) => verify_failed(ctx, seen, ended, exit_code, tail, &log),
        Ok(Attempted::CannotTest {
            reason, tail, log, ..
        }) => (
            RunFacts::CannotTest {
                reason,
                said: vec![Untestable {
                    check: None,
                    log: log.display().to_string(),
                    lines: tail,
                }],
            },
            Some(FailedLog {
                path: log.display().to_string(),
                earlier: Vec::new(),
            }),
        ),
        Ok(Attempted::StateChanged { changed_paths, .. }) => (
            RunFacts::StateChanged {
                paths: changed_paths,
            },
            None,
        ),
        Err(proof::Error::Git(error)) if error.is_worktree_content() => {
            (RunFacts::ContentError(error_chain(&error)), None)
        }
        Err(error) => return Err(error.into()),
    })
}

/// verify.sh failed: its exit and last lines, whether the same failure predates the session,
/// and its log with the key lines of the run before it.
fn verify_failed(
    ctx: &Context,
    seen: &Seen,
    ended: crate::process::Ended,
    exit_code: Option<i32>,
    tail: Vec<String>,
    log: &std::path::Path,
) -> (RunFacts, Option<FailedLog>) {
    let earlier = crate::git::read_run_log(log, crate::verify::LOG_CAP)
        .map(|output| earlier_key_lines(&output, tail.len()))
        .unwrap_or_default();
    let log = FailedLog {
        path: log.display().to_string(),
        earlier,
    };
    let start = seen.anchor.as_ref().and_then(|anchor| anchor.state_tree);
    let predates = start
        .and_then(|start| predated(ctx, start, None, &tail))
        .into_iter()
        .collect();
    (
        RunFacts::Failed {
            failing: vec![Failing {
                check: None,
                ending: Ending::Ended(ended),
                log: None,
                lines: tail,
            }],
            exit_code,
            predates,
        },
        Some(log),
    )
}

/// The paths the runs `ran` changed in place, whatever each showed: any path one changed; else
/// none when each is known to have left the state as it was; `None` when one cannot say (it
/// was interrupted).
fn wrote_in_place<'a>(ran: impl IntoIterator<Item = &'a Attempted>) -> Option<Vec<String>> {
    let mut paths = Vec::new();
    let mut known = true;
    for attempted in ran {
        match attempted {
            Attempted::Proven(_) => {}
            Attempted::StateChanged { changed_paths, .. } => paths.extend(changed_paths.clone()),
            Attempted::Failed { wrote, .. } | Attempted::CannotTest { wrote, .. } => match wrote {
                Some(wrote) => paths.extend(wrote.iter().cloned()),
                None => known = false,
            },
        }
    }
    paths.sort();
    paths.dedup();
    (known || !paths.is_empty()).then_some(paths)
}

/// The checks of `ran` that could not test the state (exit 125), summed up as a failure's lines
/// are: each its own last lines, within the lines one run gets; `None` when there is none.
fn cannot_test(ran: &[(String, Attempted)]) -> Option<(RunFacts, Option<FailedLog>)> {
    let untestable: Vec<_> = ran
        .iter()
        .filter_map(|(name, attempted)| match attempted {
            Attempted::CannotTest {
                reason, tail, log, ..
            } => Some((name, reason, tail, log)),
            _ => None,
        })
        .collect();
    let (_, reason, _, log) = untestable.first()?;
    let each = (proof::TAIL_LINES / untestable.len()).max(3);
    let alone = untestable.len() == 1;
    let said = untestable
        .iter()
        .map(|(name, _, tail, log)| Untestable {
            check: (name.as_str() != proof::VERIFY_CHECK || !alone).then(|| (*name).clone()),
            log: log.display().to_string(),
            lines: tail[tail.len().saturating_sub(each)..].to_vec(),
        })
        .collect();
    Some((
        RunFacts::CannotTest {
            reason: (*reason).clone(),
            said,
        },
        Some(FailedLog {
            path: log.display().to_string(),
            earlier: Vec::new(),
        }),
    ))
}

/// With a checks file: run the checks without a proof, in parallel, and sum up what they
/// showed: any failure fails the turn (each failing check's last lines, within the lines one
/// run gets), else any check whose inputs changed, else a pass.
#[expect(
    clippy::too_many_arguments,
    reason = "the stop's own values, handed down as they are to the one run path"
)]
fn run_checks(
    ctx: &Context,
    host: &dyn HostRules,
    event: &Stop,
    seen: &Seen,
    before: &crate::git::StateTree,
    pending: Vec<proof::ToRun>,
    weakened: &mut Vec<WeakeningFound>,
    wrote: &mut Option<Vec<String>>,
    how: How<'_>,
) -> Result<(RunFacts, Option<FailedLog>), Error> {
    let ran = proof::prove_checks(
        &ctx.repo,
        before,
        pending,
        options(ctx, host, event, seen, how)?,
        ctx.policy.clone()?.jobs,
        &mut |_| {},
    );
    let ran = match ran {
        Ok(ran) => ran,
        Err(proof::Error::Git(error)) if error.is_worktree_content() => {
            return Ok((RunFacts::ContentError(error_chain(&error)), None));
        }
        Err(error) => return Err(error.into()),
    };
    *wrote = wrote_in_place(ran.iter().map(|(_, attempted)| attempted));
    let failed: Vec<_> = ran
        .iter()
        .filter(|(_, attempted)| matches!(attempted, Attempted::Failed { .. }))
        .collect();
    if !failed.is_empty() {
        return Ok(failures(ctx, seen, &failed));
    }
    if let Some(cannot) = cannot_test(&ran) {
        return Ok(cannot);
    }
    let mut paths: Vec<String> = ran
        .iter()
        .filter_map(|(_, attempted)| match attempted {
            Attempted::StateChanged { changed_paths, .. } => Some(changed_paths.clone()),
            _ => None,
        })
        .flatten()
        .collect();
    if !paths.is_empty() {
        paths.sort();
        paths.dedup();
        return Ok((RunFacts::StateChanged { paths }, None));
    }
    passed(ctx, seen, &ran, weakened)
}

/// The failing checks of a run, summed up: each its exit, its own last lines within the lines
/// one run gets, and whether its failure predates the session; the first one's log.
fn failures(
    ctx: &Context,
    seen: &Seen,
    failed: &[&(String, Attempted)],
) -> (RunFacts, Option<FailedLog>) {
    // The lines one run gets, shared: each failing check keeps its own last lines.
    let each = (proof::TAIL_LINES / failed.len()).max(3);
    let mut failing = Vec::new();
    let mut predates = Vec::new();
    let mut first: Option<(Option<i32>, std::path::PathBuf, usize)> = None;
    for (name, attempted) in failed {
        let Attempted::Failed {
            ended,
            exit_code,
            tail: lines,
            log,
            ..
        } = attempted
        else {
            continue;
        };
        let kept = &lines[lines.len().saturating_sub(each)..];
        failing.push(Failing {
            check: Some(name.clone()),
            ending: Ending::Ended(*ended),
            log: Some(log.display().to_string()),
            lines: kept.to_vec(),
        });
        // Where the session started, this check's key: a failure there predates it.
        let start = seen.anchor.as_ref().and_then(|anchor| {
            anchor
                .start_inputs
                .iter()
                .find(|(check, _)| check == name)
                .map(|(_, tree)| *tree)
        });
        let record_name = (name != proof::VERIFY_CHECK).then_some(name.as_str());
        predates.extend(start.and_then(|start| predated(ctx, start, record_name, lines)));
        first.get_or_insert((*exit_code, log.clone(), kept.len()));
    }
    let (exit_code, log, kept) = first.expect("at least one failure");
    let earlier = crate::git::read_run_log(&log, crate::verify::LOG_CAP)
        .map(|output| earlier_key_lines(&output, kept))
        .unwrap_or_default();
    (
        RunFacts::Failed {
            failing,
            exit_code,
            predates,
        },
        Some(FailedLog {
            path: log.display().to_string(),
            earlier,
        }),
    )
}

/// Every check run passed: flaky where a failing run contests its proof, else the set stands
/// as its worst check, run now or proven before. The tests each proof lost go to `weakened`.
fn passed(
    ctx: &Context,
    seen: &Seen,
    ran: &[(String, Attempted)],
    weakened: &mut Vec<WeakeningFound>,
) -> Result<(RunFacts, Option<FailedLog>), Error> {
    // Every check run passed; a pass a failing run contests settles nothing.
    let mut contested = Vec::new();
    for (name, attempted) in ran {
        if let Attempted::Proven(record) = attempted
            && proof::is_contested(&ctx.repo, record)?
        {
            contested.push(name.clone());
        }
    }
    if !contested.is_empty() {
        return Ok((RunFacts::Flaky { checks: contested }, None));
    }
    for (name, attempted) in ran {
        if let Attempted::Proven(record) = attempted {
            weakened.extend(
                record
                    .tests_weakened
                    .iter()
                    .map(|line| WeakeningFound::of_check(name, line)),
            );
        }
    }
    // The set stands as its worst check, run now or proven before.
    let before = match seen.observed.state {
        Some(State::Tree {
            proof: Some(outcome),
            ..
        }) => Some(proof::Stands::by_outcome(Some(outcome))),
        _ => None,
    };
    let outcome = proof::set_outcome(
        ran.iter()
            .filter_map(|(_, attempted)| match attempted {
                Attempted::Proven(record) => Some(proof::Stands::by(Some(record))),
                _ => None,
            })
            .chain(before),
    )
    .unwrap_or(Outcome::Proven);
    Ok((RunFacts::Passed(outcome), None))
}

/// The failure on record of `check` (`None`: the root verify.sh) for `start`, its key in the
/// state the session started from, when it failed with the same last lines as `tail` did now.
/// Only words depend on it: the gate never takes a recorded failure for a verdict.
fn predated(
    ctx: &Context,
    start: crate::git::ObjectId,
    check: Option<&str>,
    tail: &[String],
) -> Option<super::decide::Predated> {
    // The same check, whichever script it ran then: the session may have edited it since.
    let mut notes = ctx.repo.notes(proof::FAILURES_REF);
    let failure = proof::lookup_failure(&mut notes, start, check, None).ok()??;
    failure.same_lines(tail).then(|| super::decide::Predated {
        check: check.map(str::to_string),
        time: failure
            .time
            .format(&time::format_description::well_known::Rfc3339)
            .unwrap_or_default(),
        host: failure.host,
    })
}

/// Count the verdict, write the ledger on a turn's first refusal, and save the turn state; the
/// answer to give.
pub(crate) fn record(
    ctx: &Context,
    host: &dyn HostRules,
    event: &Stop,
    mut seen: Seen,
    verdict: Verdict,
    log: Option<FailedLog>,
) -> Result<Answer, Error> {
    let blocks = seen.observed.blocks;
    write_ledger(ctx, host, event, &seen, &verdict)?;
    let facts = facts(&mut seen, log);
    // Each weakening the agent is sent back for is refused once: a person accepts it.
    if let Verdict::Block {
        why: super::decide::Why::ProtectedWeakened { findings },
        ..
    } = &verdict
    {
        seen.turn
            .weakenings_refused
            .extend(findings.iter().cloned());
    }
    // Where the host shows no notice, a notice (the turn's end unverified, a bounded proof) is
    // told to the agent as one last block, once a turn, for it to report; the host's cap
    // leaves room for it.
    let to_the_agent =
        Answer::is_notice(&verdict, &facts) && !host.shows_notices() && !seen.turn.notice_told;
    let turn = &mut seen.turn;
    turn.notice_told |= to_the_agent;
    turn.turn.clone_from(&event.turn);
    turn.blocks = match verdict {
        Verdict::Block { attempt, .. } => attempt,
        _ => blocks,
    };
    let answer = Answer {
        verdict,
        facts,
        to_the_agent,
    };
    turn.last = Some(LastAnswer {
        at_ns: ctx.clock.now_ns(),
        turn: event.turn.clone(),
        answer: answer.clone(),
    });
    seen.files.store(&turn.to_bytes())?;
    Ok(answer)
}

/// The ledger's lines for this verdict: the first refusal of a turn and its unverified end, a
/// stop answered by a run made ahead, checks skipped by a person.
fn write_ledger(
    ctx: &Context,
    host: &dyn HostRules,
    event: &Stop,
    seen: &Seen,
    verdict: &Verdict,
) -> Result<(), Error> {
    let gate_policy = ctx.gate.clone()?;
    let blocks = seen.observed.blocks;
    // The first refusal of a turn goes into the ledger, and so does the turn's unverified end:
    // a turn blocked three times is one entry for its first block and one for its yield. Where
    // the yield is told to the agent as a last block, the turn's next stops yield again: the
    // end is on the ledger already.
    let yielded_already = seen.same_turn
        && seen
            .turn
            .last
            .as_ref()
            .is_some_and(|last| matches!(last.answer.verdict, Verdict::Yield { .. }));
    let refusal = match verdict {
        Verdict::Block {
            why, attempt: 1, ..
        } => Some((why, 1, Outcome::Disproven)),
        Verdict::Yield { why, .. } if !yielded_already => {
            Some((why, blocks + 1, Outcome::NotProven))
        }
        _ => None,
    };
    // A stop that passed on a run made ahead of it, without a run of its own: on the ledger,
    // with its wait, so that what proving ahead spares is seen.
    if gate_policy.ledger
        && let Some(ahead) = seen.answered_ahead
        && matches!(
            verdict.outcome(),
            Outcome::Proven | Outcome::BoundedClaimSurvives
        )
    {
        let previous = seen.turn.last.as_ref().map(|last| last.at_ns);
        append_answered_ahead(ctx, host, event, ahead, verdict.outcome(), previous)?;
    }
    // Checks skipped by a person end the turn unverified: on the ledger, as a whole skip is.
    if gate_policy.ledger
        && let Verdict::SkippedChecks { checks } = verdict
    {
        let actual = LedgerActual::Skipped(Some(checks));
        let previous = seen.turn.last.as_ref().map(|last| last.at_ns);
        append_ledger(ctx, host, event, None, actual, previous)?;
    }
    if gate_policy.ledger
        && let Some((why, attempt, outcome)) = refusal
    {
        let (exit_code, summary) = refusal_facts(why);
        let previous = seen.turn.last.as_ref().map(|last| last.at_ns);
        let refusal = Refusal {
            exit_code,
            actual: LedgerActual::Refused {
                why,
                summary: &summary,
            },
            attempt,
            outcome,
        };
        append_refusal(ctx, host, event, refusal, previous)?;
    }
    Ok(())
}

/// What the words of an answer need besides its verdict, taken from what the stop saw.
fn facts(seen: &mut Seen, log: Option<FailedLog>) -> Facts {
    Facts {
        tree: match &seen.observed.state {
            Some(State::Tree { tree, .. }) => Some(tree.to_string()),
            _ => None,
        },
        earlier: log
            .as_ref()
            .map(|log| log.earlier.clone())
            .unwrap_or_default(),
        log: log.map(|log| log.path),
        diff: seen.diff.take(),
        tests_weakened: std::mem::take(&mut seen.tests_weakened).into(),
        anchor_missing: seen.anchor.is_none(),
        checks: matches!(
            seen.observed.state,
            Some(State::Tree {
                checks: Some(_),
                ..
            })
        ),
        protection: (!seen.protection.weakened.is_empty() || !seen.protection.changed.is_empty())
            .then(|| {
                Box::new(super::turn::ProtectionFacts {
                    weakened: seen
                        .protection
                        .weakened
                        .iter()
                        .map(ToString::to_string)
                        .collect(),
                    changed: seen.protection.changed.clone(),
                    diff: seen.protection.diff.clone(),
                })
            }),
    }
}
