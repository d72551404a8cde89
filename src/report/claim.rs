//! What the claim gauntlet says: each round's packet read, the oracle's verdict, and the marker
//! printed when no agent command can run it.

use std::io::{self, IsTerminal, Write};
use std::path::Path;

use serde::Serialize;
use serde_json::Value;

use super::seconds;
use crate::claim::StoredVerdict;
use crate::outcome::Outcome;

/// The marker printed when the gauntlet cannot run, for people and scripts alike.
pub(crate) const REQUIRES_SUBAGENTS: &str = "PROVE_IT_REQUIRES_SUBAGENTS";

/// What `git prove-it claim` printed when no agent command was configured.
#[derive(Debug, Serialize)]
pub(crate) struct RequiresSubagentsReport {
    pub version: u32,
    pub result: &'static str,
    pub status: &'static str,
    pub reason: String,
    pub hint: String,
}

impl RequiresSubagentsReport {
    pub(crate) fn new(version: u32) -> Self {
        RequiresSubagentsReport::unavailable(
            version,
            "no agent command is configured: the gauntlet needs nine independent lens runs and \
             one oracle run, and never fakes them in-process"
                .into(),
            "pass --agent claude|codex|gemini|<command>, set PROVE_IT_AGENT, or set git config \
             prove-it.agent"
                .into(),
        )
    }

    /// The preset `preset`, whose program of the same name is not on PATH.
    pub(crate) fn preset_missing(version: u32, preset: &str) -> Self {
        RequiresSubagentsReport::unavailable(
            version,
            format!("the {preset} preset runs `{preset}`, which is not on PATH"),
            format!("install {preset} or put it on PATH, or pass --agent <command>"),
        )
    }

    /// The gemini preset in `folder`, which Gemini CLI's trust file `record` does not trust:
    /// headless, it would run nothing.
    pub(crate) fn gemini_untrusted(version: u32, record: &Path, folder: &Path) -> Self {
        RequiresSubagentsReport::unavailable(
            version,
            format!(
                "Gemini CLI runs nothing headless in an untrusted folder, and {} does not \
                 record trusting {}",
                record.display(),
                folder.display()
            ),
            "trust the folder in interactive Gemini CLI (/trust), or set \
             GEMINI_CLI_TRUST_WORKSPACE=true for this run"
                .into(),
        )
    }

    /// A preset that cannot run here: its program is missing, or its host will not run in this
    /// folder. Said once, before any round starts.
    fn unavailable(version: u32, reason: String, hint: String) -> Self {
        RequiresSubagentsReport {
            version,
            result: "requires_subagents",
            status: REQUIRES_SUBAGENTS,
            reason,
            hint,
        }
    }

    pub(crate) fn human(&self, out: &mut dyn Write) -> io::Result<()> {
        writeln!(out, "{}", self.status)?;
        writeln!(out, "{}", self.reason)?;
        writeln!(out, "hint: {}", self.hint)
    }
}

/// The claim as given and as normalised (with `--validate`, as the lens packets give it).
#[derive(Debug, Serialize)]
pub(crate) struct ClaimText {
    pub original: Option<String>,
    pub normalized: Option<String>,
    pub scope: Option<String>,
}

/// What became of one round, lens or oracle.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct RoundLine {
    pub round: u8,
    /// `prove_it_01_counterexamples`, ...
    pub name: String,
    pub lens: &'static str,
    /// received, missing or compromised.
    pub status: &'static str,
    pub reason: Option<String>,
    /// How long the run took; null with `--validate`, where nothing ran.
    pub duration_ms: Option<u64>,
}

/// Where a verdict was recorded.
#[derive(Debug, Serialize)]
pub(crate) struct Recorded {
    pub notes_ref: &'static str,
    pub tree: String,
    /// Every verdict now in the tree's note, oldest first, read back, earlier shapes included.
    pub verdicts: Vec<StoredVerdict>,
}

/// What `git prove-it claim` found: the oracle's verdict, or why there is none.
#[derive(Debug, Serialize)]
pub(crate) struct ClaimReport {
    pub version: u32,
    /// `verdict` or `oracle_compromised`.
    pub result: &'static str,
    /// The oracle's outcome; null without a valid oracle packet.
    pub outcome: Option<Outcome>,
    pub claim: ClaimText,
    /// The preset or command; null with `--validate`.
    pub agent: Option<String>,
    pub timeout_s: Option<u64>,
    /// Whether all nine lens packets were received.
    pub complete: bool,
    /// Rounds 1 to 10, the oracle last.
    pub rounds: Vec<RoundLine>,
    /// The oracle packet as parsed: validated when `result` is `verdict`.
    pub oracle_packet: Option<Value>,
    /// Why the oracle packet is missing or compromised.
    pub oracle_problems: Vec<String>,
    pub final_response: Option<String>,
    pub recorded: Option<Recorded>,
    /// Why `--record` recorded nothing, when it was asked to.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub not_recorded: Option<NotRecorded>,
}

/// Why `--record` recorded nothing: said on stderr, and as the same sentence in the JSON.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum NotRecorded {
    /// No verdict: the oracle's packet is missing or compromised.
    NoValidPacket,
    /// The working state moved while the rounds ran, from the state tree `before` to `after`:
    /// the verdict is of a state no longer there.
    StateChanged { before: String, after: String },
}

impl std::fmt::Display for NotRecorded {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            NotRecorded::NoValidPacket => f.write_str("there is no valid oracle packet to record"),
            NotRecorded::StateChanged { before, after } => write!(
                f,
                "the working state changed while the gauntlet ran (state tree {before} became {after})"
            ),
        }
    }
}

impl Serialize for NotRecorded {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

impl ClaimReport {
    /// A verdict prints the oracle's `final_response` as it is, and notes on stderr; no verdict
    /// prints why, round by round.
    pub(crate) fn human(&self, out: &mut dyn Write, err: &mut dyn Write) -> io::Result<()> {
        if let Some(response) = &self.final_response {
            out.write_all(response.as_bytes())?;
            if !response.ends_with('\n') {
                writeln!(out)?;
            }
            if !self.complete {
                writeln!(err, "warning: {}", self.incomplete_summary())?;
            }
        } else {
            writeln!(
                out,
                "ORACLE_COMPROMISED: the oracle packet is missing or compromised, so there is no verdict"
            )?;
            for problem in &self.oracle_problems {
                writeln!(out, "  - {problem}")?;
            }
            writeln!(out, "rounds:")?;
            self.rounds_human(out)?;
            writeln!(
                out,
                "git prove-it gives no verdict of its own; rerun, or fix the agent command"
            )?;
        }
        if let Some(recorded) = &self.recorded {
            writeln!(
                err,
                "recorded in {} on state tree {}",
                recorded.notes_ref, recorded.tree
            )?;
        }
        if let Some(reason) = &self.not_recorded {
            writeln!(err, "not recorded: {reason}")?;
        }
        Ok(())
    }

    /// A line per round, except that rounds which failed for one and the same reason share one
    /// line: ten `codex: not found` are one fact.
    fn rounds_human(&self, out: &mut dyn Write) -> io::Result<()> {
        let mut said: Vec<(&str, &str)> = Vec::new();
        for line in &self.rounds {
            let Some(reason) = line.reason.as_deref() else {
                writeln!(out, "  {:02} {:<27} {}", line.round, line.lens, line.status)?;
                continue;
            };
            if said.contains(&(line.status, reason)) {
                continue;
            }
            said.push((line.status, reason));
            let same: Vec<String> = self
                .rounds
                .iter()
                .filter(|other| {
                    other.status == line.status && other.reason.as_deref() == Some(reason)
                })
                .map(|other| format!("{:02}", other.round))
                .collect();
            if same.len() == 1 {
                writeln!(
                    out,
                    "  {:02} {:<27} {}: {reason}",
                    line.round, line.lens, line.status
                )?;
            } else {
                writeln!(out, "  {} {}: {reason}", same.join(", "), line.status)?;
            }
        }
        Ok(())
    }

    fn incomplete_summary(&self) -> String {
        let rounds = |status| {
            let list: Vec<String> = self.rounds[..self.rounds.len().min(9)]
                .iter()
                .filter(|l| l.status == status)
                .map(|l| l.round.to_string())
                .collect();
            if list.is_empty() {
                "none".to_string()
            } else {
                list.join(", ")
            }
        };
        let received = self.rounds[..self.rounds.len().min(9)]
            .iter()
            .filter(|l| l.status == "received")
            .count();
        format!(
            "incomplete gauntlet: {received} of 9 lens packets received (missing: {}; compromised: {})",
            rounds("missing"),
            rounds("compromised")
        )
    }
}

/// Rounds as they complete, one line each on a terminal's stderr; silent elsewhere.
pub(crate) struct ClaimProgress {
    enabled: bool,
    done: usize,
}

impl ClaimProgress {
    pub(crate) fn new() -> Self {
        ClaimProgress {
            enabled: std::io::stderr().is_terminal(),
            done: 0,
        }
    }

    pub(crate) fn started(&mut self, lenses: usize, err: &mut dyn Write) {
        if self.enabled {
            let _ = writeln!(err, "prove-it: {lenses} lens rounds started");
        }
    }

    pub(crate) fn round_done(&mut self, line: &RoundLine, err: &mut dyn Write) {
        self.done += 1;
        if self.enabled {
            let _ = write!(
                err,
                "prove-it: [{}/9] round {:02} {}: {} in {}",
                self.done,
                line.round,
                line.lens,
                line.status,
                seconds(line.duration_ms.unwrap_or(0))
            );
            let _ = match &line.reason {
                Some(reason) => writeln!(err, " ({reason})"),
                None => writeln!(err),
            };
        }
    }

    pub(crate) fn oracle_started(&mut self, err: &mut dyn Write) {
        if self.enabled {
            let _ = writeln!(err, "prove-it: round 10 oracle synthesis started");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(round: u8, status: &'static str, reason: Option<&str>) -> RoundLine {
        RoundLine {
            round,
            name: format!("prove_it_{round:02}_x"),
            lens: "Counterexamples",
            status,
            reason: reason.map(String::from),
            duration_ms: Some(1500),
        }
    }

    fn report(final_response: Option<&str>, rounds: Vec<RoundLine>) -> ClaimReport {
        ClaimReport {
            version: 1,
            result: if final_response.is_some() {
                "verdict"
            } else {
                "oracle_compromised"
            },
            outcome: final_response.map(|_| Outcome::Proven),
            claim: ClaimText {
                original: Some("x".into()),
                normalized: Some("x".into()),
                scope: None,
            },
            agent: Some("./agent".into()),
            timeout_s: Some(600),
            complete: rounds.iter().take(9).all(|l| l.status == "received"),
            rounds,
            oracle_packet: None,
            oracle_problems: vec!["final_response is missing".into()],
            final_response: final_response.map(String::from),
            recorded: None,
            not_recorded: None,
        }
    }

    #[test]
    fn a_verdict_prints_the_final_response_as_is_and_warns_when_incomplete() {
        let mut rounds: Vec<RoundLine> = (1..=10).map(|r| line(r, "received", None)).collect();
        let mut out = Vec::new();
        let mut err = Vec::new();
        report(Some("# Prove It\nOutcome: PROVEN"), rounds.clone())
            .human(&mut out, &mut err)
            .unwrap();
        assert_eq!(out, b"# Prove It\nOutcome: PROVEN\n");
        assert!(err.is_empty());

        rounds[3] = line(4, "compromised", Some("bad"));
        rounds[5] = line(6, "missing", Some("timed out after 5 s"));
        let (mut out, mut err) = (Vec::new(), Vec::new());
        report(Some("# Prove It\n"), rounds)
            .human(&mut out, &mut err)
            .unwrap();
        assert_eq!(out, b"# Prove It\n");
        assert_eq!(
            String::from_utf8(err).unwrap(),
            "warning: incomplete gauntlet: 7 of 9 lens packets received (missing: 6; compromised: 4)\n"
        );
    }

    #[test]
    fn no_verdict_prints_why_round_by_round() {
        let mut rounds: Vec<RoundLine> = (1..=9).map(|r| line(r, "received", None)).collect();
        rounds.push(line(10, "compromised", Some("final_response is missing")));
        let (mut out, mut err) = (Vec::new(), Vec::new());
        report(None, rounds).human(&mut out, &mut err).unwrap();
        let text = String::from_utf8(out).unwrap();
        assert!(text.starts_with("ORACLE_COMPROMISED: "), "{text}");
        assert!(text.contains("  - final_response is missing\n"));
        assert!(
            text.contains(
                "  10 Counterexamples             compromised: final_response is missing\n"
            )
        );
        assert!(text.contains("no verdict of its own"));
    }

    /// Regression: with `codex` not on PATH the report once said `sh: 1: codex: not found` ten
    /// times over.
    #[test]
    fn rounds_that_failed_alike_share_one_line() {
        let reason = Some("the agent command exited with code 127: sh: 1: codex: not found");
        let mut rounds: Vec<RoundLine> = (1..=10).map(|r| line(r, "missing", reason)).collect();
        rounds[2] = line(3, "received", None);
        rounds[4] = line(5, "compromised", Some("round is 4, not 5"));
        let (mut out, mut err) = (Vec::new(), Vec::new());
        report(None, rounds).human(&mut out, &mut err).unwrap();
        let text = String::from_utf8(out).unwrap();
        let listed =
            &text[text.find("rounds:\n").unwrap()..text.find("git prove-it gives").unwrap()];
        assert_eq!(
            listed,
            "rounds:\n  \
             01, 02, 04, 06, 07, 08, 09, 10 missing: the agent command exited with code 127: sh: 1: codex: not found\n  \
             03 Counterexamples             received\n  \
             05 Counterexamples             compromised: round is 4, not 5\n"
        );
    }

    #[test]
    fn progress_shows_each_round_as_it_completes() {
        let mut progress = ClaimProgress {
            enabled: true,
            done: 0,
        };
        let mut err = Vec::new();
        progress.round_done(&line(3, "received", None), &mut err);
        progress.round_done(&line(6, "missing", Some("timed out after 5 s")), &mut err);
        assert_eq!(
            String::from_utf8(err).unwrap(),
            "prove-it: [1/9] round 03 Counterexamples: received in 1.5 s\n\
             prove-it: [2/9] round 06 Counterexamples: missing in 1.5 s (timed out after 5 s)\n"
        );
        let mut quiet = ClaimProgress {
            enabled: false,
            done: 0,
        };
        let mut err = Vec::new();
        quiet.started(9, &mut err);
        quiet.round_done(&line(1, "received", None), &mut err);
        quiet.oracle_started(&mut err);
        assert!(err.is_empty());
    }

    #[test]
    fn requires_subagents_names_the_marker_and_the_way_out() {
        let mut out = Vec::new();
        RequiresSubagentsReport::new(1).human(&mut out).unwrap();
        let text = String::from_utf8(out).unwrap();
        assert!(text.starts_with("PROVE_IT_REQUIRES_SUBAGENTS\n"));
        assert!(text.contains("never fakes them"));
        assert!(text.contains("hint: pass --agent"));
    }
}
