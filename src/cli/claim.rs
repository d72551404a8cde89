//! `git prove-it claim`: a claim put through the gauntlet, nine lenses and one oracle.

use std::io::{Read, Write};
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use anyhow::Context as _;
use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};

use crate::claim::{
    self, Claim, Completeness, Job, LENSES, ORACLE_ID, ORACLE_NAME, ORACLE_ROUND, OracleVerdict,
    Outcome, Rejected, Request, RoundEntry, Run, Status,
};
use crate::context::Settings;
use crate::exit;
use crate::git::{CLAIMS_REF, Repo, StateTree};
use crate::report::{
    self, ClaimProgress, ClaimReport, ClaimText, JSON_VERSION, NotRecorded, Recorded,
    RequiresSubagentsReport, RoundLine, could_not, hint, refusal,
};

/// Put a claim through the prove-it gauntlet: nine lenses at once, then one oracle that alone
/// gives the verdict.
///
/// The agent command runs once per round, through the shell, in the current directory, with
/// one assignment (a JSON object) on stdin, and must print one packet (JSON or YAML) on stdout.
/// Rounds 1-9 (counterexamples, logic traps, boundary cases, adversarial inputs, alternative
/// paradigms, operational constraints, probabilistic uncertainty, comparative baselines,
/// meta-test) start together; a failed, timed-out or invalid lens becomes an explicit missing
/// or compromised entry. Round 10, the oracle, gets all nine entries and chooses the outcome;
/// its packet is validated and its final_response printed as is. git-prove-it never gives a
/// verdict of its own. Nothing is written anywhere unless --record.
///
/// Each run gets PROVE_IT_ROUND (01..10), PROVE_IT_ROUND_NAME (prove_it_01_counterexamples ...
/// prove_it_10_oracle_synthesis) and PROVE_IT_PACKET_ROLE (evidence_lens or oracle_synthesis) in its
/// environment. Presets: "claude" is `claude -p --settings '{"disableAllHooks": true}'
/// --output-format text --append-system-prompt "This run is $PROVE_IT_ROUND_NAME ..."`,
/// "codex" is `codex exec --skip-git-repo-check -`, "gemini" is `gemini -p "This run is
/// $PROVE_IT_ROUND_NAME ..."` (gemini appends that prompt to the assignment on stdin). A preset
/// whose program is not on PATH, or whose host will not run in this folder (Gemini CLI in an
/// untrusted one), stops before any round with PROVE_IT_REQUIRES_SUBAGENTS and why.
///
/// The packets are the published Prove It skill's: lens packets optionally under
/// prove_it_round_packet, the oracle packet optionally under prove_it_oracle_packet, as JSON or
/// YAML, bare or in a fenced block. With --validate, a packet set produced elsewhere (a Prove It
/// skill run inside Claude Code or Codex) is read from stdin, judged by the same checks, and
/// reported as the gauntlet would report it, with the same exit status.
///
/// Works outside a git repository, except for --record; there, git config is not read.
///
/// Exit status: 0 PROVEN, 1 DISPROVEN, 4 NOT_PROVEN, 5 INSUFFICIENT_EVIDENCE, 6
/// BOUNDED_CLAIM_SURVIVES, 7 oracle packet missing or compromised (no verdict), 8
/// PROVE_IT_REQUIRES_SUBAGENTS (no agent command, or a preset that cannot run here), 2 usage or
/// repository error.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// The claim to test, e.g. "all tests pass" or "for every integer n, n + 0 = n".
    #[arg(required_unless_present = "validate")]
    claim: Option<String>,

    /// The agent command, or a preset: claude, codex or gemini
    /// [default: $PROVE_IT_AGENT, else git config prove-it.agent; none means
    /// PROVE_IT_REQUIRES_SUBAGENTS].
    #[arg(long, value_name = "COMMAND")]
    agent: Option<String>,

    /// What the claim is about (a path, a component, a version), passed to every round.
    #[arg(long, value_name = "TEXT")]
    scope: Option<String>,

    /// Kill a round (and everything it started) after this many seconds
    /// [default: $PROVE_IT_CLAIM_TIMEOUT, else git config prove-it.claimTimeout, else 600].
    #[arg(long, value_name = "SECONDS")]
    timeout: Option<u64>,

    /// Run nothing: read the nine lens packets and the oracle packet from stdin (JSON or YAML,
    /// one document, a stream, or fenced blocks), check them as the gauntlet checks its own,
    /// and print what it would print, with its exit status.
    #[arg(long, conflicts_with_all = ["claim", "agent", "scope", "timeout", "record"])]
    validate: bool,

    /// Print the oracle packet and every round's status as one JSON object on stdout.
    #[arg(long)]
    json: bool,

    /// Store the validated oracle packet as a note on the state tree, under
    /// refs/notes/prove-it-claims.
    #[arg(long)]
    record: bool,
}

pub(crate) fn run(
    args: &Args,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> Result<u8, super::Failure> {
    if args.validate {
        let mut text = String::new();
        std::io::stdin()
            .read_to_string(&mut text)
            .context(could_not::read_the_packets())?;
        return validate(&text, args.json, out, err);
    }
    let cwd = std::env::current_dir().context(could_not::read_the_current_directory())?;
    let repo = match Repo::discover(&cwd) {
        Ok(repo) => Some(repo),
        Err(error) if args.record => {
            return Err(super::Failure::from(error).hint(hint::record_inside_a_repository()));
        }
        // Outside a repository the gauntlet still runs: only git config is out of reach.
        Err(_) => None,
    };
    let sources = Settings::maybe(repo.as_ref());
    let Some(claim) = Claim::new(args.claim.as_deref().unwrap_or(""), args.scope.as_deref()) else {
        return Err(refusal::claim_is_empty().into());
    };
    let timeout = claim::resolve_timeout(args.timeout, &sources)?;
    let Some(agent) = claim::resolve_agent(args.agent.as_deref(), &sources) else {
        let report = RequiresSubagentsReport::new(JSON_VERSION);
        return requires_subagents(&report, args.json, out);
    };
    if let Some(preset) = agent.preset
        && let Some(report) = preset_unavailable(preset, &cwd)
    {
        return requires_subagents(&report, args.json, out);
    }

    // The state the claim is judged on, taken before any round could change it.
    let before = match (&repo, args.record) {
        (Some(repo), true) => Some(repo.state_tree(true)?),
        _ => None,
    };

    let interrupt = interrupt_flag()?;
    let request = Request {
        command: &agent.command,
        workdir: &cwd,
        timeout,
        interrupt: Some(&interrupt),
    };
    let mut progress = ClaimProgress::new();
    let (entries, mut lines) = lens_rounds(&claim, &request, &mut progress, err)?;
    if interrupt.load(Ordering::Relaxed) {
        return Err(refusal::claim_interrupted().into());
    }

    let (completeness, job, oracle_run) =
        oracle_round(&claim, &entries, &request, &mut progress, err)?;
    if interrupt.load(Ordering::Relaxed) {
        return Err(refusal::claim_interrupted().into());
    }
    let judged = claim::judge_oracle(&oracle_run, &completeness);
    lines.push(oracle_line(&job, &oracle_run, &judged));

    let mut report = claim_report(
        ClaimText {
            original: Some(claim.original.clone()),
            normalized: Some(claim.normalized.clone()),
            scope: claim.scope.clone(),
        },
        &completeness,
        lines,
        &judged,
    );
    report.agent = Some(agent.preset.map_or(agent.command.clone(), String::from));
    report.timeout_s = Some(timeout.as_secs());

    if let (Some(repo), Some(before)) = (&repo, &before) {
        match &judged {
            Ok(verdict) => record(repo, before, verdict, &mut report)?,
            Err(_) => {
                report.not_recorded = Some(NotRecorded::NoValidPacket);
            }
        }
    }

    finish(&report, &judged, args.json, out, err)
}

/// Print that the gauntlet needs an agent command it does not have, or cannot run here, and
/// give its exit status.
fn requires_subagents(
    report: &RequiresSubagentsReport,
    json: bool,
    out: &mut dyn Write,
) -> Result<u8, super::Failure> {
    if json {
        report::json(report, out)?;
    } else {
        report.human(out)?;
    }
    Ok(exit::REQUIRES_SUBAGENTS)
}

/// Round 10: the oracle, given the nine lenses' entries, run once they have all ended. How
/// complete those entries were, the oracle's job, and its run.
fn oracle_round(
    claim: &Claim,
    entries: &[RoundEntry],
    request: &Request<'_>,
    progress: &mut ClaimProgress,
    err: &mut dyn Write,
) -> Result<(Completeness, Job, Run), super::Failure> {
    progress.oracle_started(err);
    let completeness = Completeness::of(entries);
    let input = serde_json::to_vec(&claim::oracle_assignment(claim, entries))
        .context(could_not::write_the_oracles_assignment())?;
    let job = Job {
        round: ORACLE_ROUND,
        name: claim::run_name(ORACLE_ROUND, ORACLE_ID),
        role: "oracle_synthesis",
        input,
    };
    let oracle_run = claim::run_round(request, &job);
    Ok((completeness, job, oracle_run))
}

/// Print the report and give the exit status: the outcome's, or 7 without a verdict.
fn finish(
    report: &ClaimReport,
    judged: &Result<OracleVerdict, Rejected>,
    json: bool,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> Result<u8, super::Failure> {
    if json {
        report::json(report, out)?;
    } else {
        report.human(out, err)?;
    }
    Ok(match judged {
        Ok(verdict) => exit_code(verdict.outcome),
        Err(_) => exit::ORACLE_COMPROMISED,
    })
}

/// The report of a gauntlet, run here or (`--validate`) elsewhere.
fn claim_report(
    claim: ClaimText,
    completeness: &Completeness,
    rounds: Vec<RoundLine>,
    judged: &Result<OracleVerdict, Rejected>,
) -> ClaimReport {
    ClaimReport {
        version: JSON_VERSION,
        result: if judged.is_ok() {
            "verdict"
        } else {
            "oracle_compromised"
        },
        outcome: judged.as_ref().ok().map(|v| v.outcome),
        claim,
        agent: None,
        timeout_s: None,
        complete: completeness.is_complete(),
        rounds,
        oracle_packet: match judged {
            Ok(verdict) => Some(serde_json::Value::Object(verdict.packet.clone())),
            Err(Rejected::Compromised { packet, .. }) => {
                packet.clone().map(serde_json::Value::Object)
            }
            Err(Rejected::Missing(_)) => None,
        },
        oracle_problems: judged
            .as_ref()
            .err()
            .map(Rejected::reasons)
            .unwrap_or_default(),
        final_response: judged.as_ref().ok().map(|v| v.final_response.clone()),
        recorded: None,
        not_recorded: None,
    }
}

/// `--validate`: judge a packet set read from stdin and report it as the gauntlet would.
fn validate(
    text: &str,
    json: bool,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> Result<u8, super::Failure> {
    let judged = claim::validate(text)
        .map_err(|error| super::Failure::from(error).hint(hint::give_each_packet_its_role()))?;
    let mut rounds: Vec<RoundLine> = judged
        .entries
        .iter()
        .map(|entry| RoundLine {
            round: entry.round,
            name: claim::run_name(entry.round, entry.lens_id),
            lens: entry.lens,
            status: entry.status.as_str(),
            reason: entry.reason.clone(),
            duration_ms: None,
        })
        .collect();
    let (status, reason) = oracle_status(&judged.oracle);
    rounds.push(RoundLine {
        round: ORACLE_ROUND,
        name: claim::run_name(ORACLE_ROUND, ORACLE_ID),
        lens: ORACLE_NAME,
        status: status.as_str(),
        reason,
        duration_ms: None,
    });
    let report = claim_report(
        ClaimText {
            original: judged.original_claim.clone(),
            normalized: judged.normalized_claim.clone(),
            scope: None,
        },
        &judged.completeness,
        rounds,
        &judged.oracle,
    );
    finish(&report, &judged.oracle, json, out, err)
}

/// Why a preset cannot run here, and what to do, or `None` when it can: said once, before any
/// round starts, rather than ten times over by the rounds.
fn preset_unavailable(preset: &str, cwd: &Path) -> Option<RequiresSubagentsReport> {
    if !on_path(preset) {
        return Some(RequiresSubagentsReport::preset_missing(
            JSON_VERSION,
            preset,
        ));
    }
    if preset == "gemini"
        && let Some((false, record)) = crate::hosts::Host::Gemini.trust_record(cwd)
    {
        return Some(RequiresSubagentsReport::gemini_untrusted(
            JSON_VERSION,
            &record,
            cwd,
        ));
    }
    None
}

/// Whether `program` is an executable file in a directory of PATH.
fn on_path(program: &str) -> bool {
    use std::os::unix::fs::PermissionsExt as _;
    std::env::var_os("PATH").is_some_and(|path| {
        std::env::split_paths(&path).any(|dir| {
            std::fs::metadata(dir.join(program))
                .is_ok_and(|meta| meta.is_file() && meta.permissions().mode() & 0o111 != 0)
        })
    })
}

/// Rounds 1-9, all at once: the entries the oracle gets, and a line per round for the report.
fn lens_rounds(
    claim: &Claim,
    request: &Request<'_>,
    progress: &mut ClaimProgress,
    err: &mut dyn Write,
) -> Result<(Vec<RoundEntry>, Vec<RoundLine>), super::Failure> {
    let mut jobs = Vec::new();
    for lens in &LENSES {
        jobs.push(Job {
            round: lens.round,
            name: lens.run_name(),
            role: "evidence_lens",
            input: serde_json::to_vec(&lens.assignment(claim))
                .context(could_not::write_a_lens_assignment())?,
        });
    }
    let mut done: Vec<Option<(RoundEntry, RoundLine)>> = vec![None; jobs.len()];
    progress.started(jobs.len(), err);
    claim::run_all(request, &jobs, &mut |index, run| {
        let entry = claim::judge_lens(&LENSES[index], &run);
        let line = RoundLine {
            round: entry.round,
            name: jobs[index].name.clone(),
            lens: entry.lens,
            status: entry.status.as_str(),
            reason: entry.reason.clone(),
            duration_ms: Some(millis(run.duration)),
        };
        progress.round_done(&line, err);
        done[index] = Some((entry, line));
    });
    Ok(done
        .into_iter()
        .map(|d| d.expect("every job reports once"))
        .unzip())
}

fn oracle_status(judged: &Result<OracleVerdict, Rejected>) -> (Status, Option<String>) {
    match judged {
        Ok(_) => (Status::Received, None),
        Err(rejected @ Rejected::Missing(_)) => (Status::Missing, Some(rejected.summary())),
        Err(rejected) => (Status::Compromised, Some(rejected.summary())),
    }
}

fn oracle_line(job: &Job, run: &Run, judged: &Result<OracleVerdict, Rejected>) -> RoundLine {
    let (status, reason) = oracle_status(judged);
    RoundLine {
        round: job.round,
        name: job.name.clone(),
        lens: ORACLE_NAME,
        status: status.as_str(),
        reason,
        duration_ms: Some(millis(run.duration)),
    }
}

/// Store the validated oracle packet in the state tree's note, after the packets already there,
/// unless the working state changed while the rounds ran: a verdict is for the state judged.
fn record(
    repo: &Repo,
    before: &StateTree,
    verdict: &OracleVerdict,
    report: &mut ClaimReport,
) -> Result<(), super::Failure> {
    let after = repo.state_tree(false)?;
    if after.id != before.id {
        report.not_recorded = Some(NotRecorded::StateChanged {
            before: before.id.to_string(),
            after: after.id.to_string(),
        });
        return Ok(());
    }
    let text = serde_json::to_string_pretty(&verdict.packet)
        .context(could_not::write_the_oracle_packet())?;
    repo.notes(CLAIMS_REF).update(
        before.id,
        &format!(
            "prove-it: claim verdict {} for tree {}",
            verdict.outcome, before.id
        ),
        |existing| append(existing, &text),
    )?;
    let note = repo.notes(CLAIMS_REF).lookup(&before.id)?;
    report.recorded = Some(Recorded {
        notes_ref: CLAIMS_REF,
        tree: before.id.to_string(),
        verdicts: claim::read_note(note.as_deref().unwrap_or("")),
    });
    Ok(())
}

/// A note holds one pretty JSON packet per recorded claim, one after another (a JSON stream).
fn append(existing: &str, packet: &str) -> String {
    let existing = existing.trim_end();
    if existing.is_empty() {
        format!("{packet}\n")
    } else {
        format!("{existing}\n{packet}\n")
    }
}

fn exit_code(outcome: Outcome) -> u8 {
    match outcome {
        Outcome::Proven => exit::OK,
        Outcome::Disproven => exit::DISPROVEN,
        Outcome::NotProven => exit::CLAIM_NOT_PROVEN,
        Outcome::InsufficientEvidence => exit::INSUFFICIENT_EVIDENCE,
        Outcome::BoundedClaimSurvives => exit::BOUNDED_CLAIM_SURVIVES,
    }
}

/// A flag raised by Ctrl-C, SIGTERM or SIGHUP, so that every round's process group is killed
/// rather than left running after we are gone.
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_outcome_has_its_own_documented_exit_code() {
        let codes: Vec<u8> = Outcome::ALL.into_iter().map(exit_code).collect();
        assert_eq!(codes, [0, 1, 4, 5, 6]);
        assert_eq!(exit::ORACLE_COMPROMISED, 7);
        assert_eq!(exit::REQUIRES_SUBAGENTS, 8);
    }

    #[test]
    fn recorded_packets_follow_one_another_in_the_note() {
        assert_eq!(append("", "{\n  \"a\": 1\n}"), "{\n  \"a\": 1\n}\n");
        assert_eq!(
            append("{\n  \"a\": 1\n}\n", "{\n  \"b\": 2\n}"),
            "{\n  \"a\": 1\n}\n{\n  \"b\": 2\n}\n"
        );
    }
}
