//! The claim under test, and what became of each round's run: a packet received, or an explicit
//! missing or compromised entry with its reason.

use serde::Serialize;
use serde_json::Value;

use super::lens::Lens;
use super::packet::{self, Problem};
use super::rounds::{Ended, Run};

/// The claim as given, and normalised once: trimmed, with every run of whitespace made one space.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Claim {
    pub original: String,
    pub normalized: String,
    pub scope: Option<String>,
}

impl Claim {
    /// `None` when the claim is blank: there is nothing to prove.
    pub fn new(original: &str, scope: Option<&str>) -> Option<Claim> {
        let normalized = collapse(original);
        if normalized.is_empty() {
            return None;
        }
        Some(Claim {
            original: original.to_string(),
            normalized,
            scope: scope.map(collapse).filter(|s| !s.is_empty()),
        })
    }
}

fn collapse(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// What arrived from one round.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    /// A packet that parsed and passed every check.
    Received,
    /// No packet: the run failed, timed out, was interrupted or printed nothing.
    Missing,
    /// Output that is not a valid packet for this round; it is not evidence.
    Compromised,
}

impl Status {
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Received => "received",
            Status::Missing => "missing",
            Status::Compromised => "compromised",
        }
    }
}

/// One lens's entry in the oracle's `round_packets`.
#[derive(Debug, Clone, Serialize)]
pub struct RoundEntry {
    pub round: u8,
    pub lens_id: &'static str,
    pub lens: &'static str,
    pub status: Status,
    /// Why the packet is missing or compromised; null when received.
    pub reason: Option<String>,
    /// The validated packet; null unless received, so that nothing unchecked reaches the oracle.
    pub packet: Option<Value>,
}

/// Judge one lens run: a valid packet, or a missing or compromised entry saying why.
pub fn judge_lens(lens: &Lens, run: &Run) -> RoundEntry {
    if let Some(reason) = missing_reason(run) {
        return entry(lens, Status::Missing, Some(reason), None);
    }
    judged(lens, packet::read_lens(&run.stdout, run.stdout_cut, lens))
}

/// The entry for a lens packet read and checked: received, or compromised saying why.
pub fn judged(lens: &Lens, read: Result<packet::Object, Vec<Problem>>) -> RoundEntry {
    match read {
        Ok(packet) => entry(lens, Status::Received, None, Some(Value::Object(packet))),
        Err(problems) => entry(lens, Status::Compromised, Some(describe(&problems)), None),
    }
}

pub fn entry(
    lens: &Lens,
    status: Status,
    reason: Option<String>,
    packet: Option<Value>,
) -> RoundEntry {
    RoundEntry {
        round: lens.round,
        lens_id: lens.id,
        lens: lens.name,
        status,
        reason,
        packet,
    }
}

/// Why a run gave no output to judge, if it did not.
pub fn missing_reason(run: &Run) -> Option<String> {
    let stderr = last_line(&run.stderr_tail);
    let with_stderr = |what: String| match stderr {
        Some(line) => format!("{what}: {line}"),
        None => what,
    };
    match &run.ended {
        Ended::NotStarted(error) => Some(format!("the agent command could not start: {error}")),
        Ended::Exited(0) if String::from_utf8_lossy(&run.stdout).trim().is_empty() => {
            Some(with_stderr("the agent command printed nothing".into()))
        }
        Ended::Exited(0) => None,
        Ended::Exited(code) => Some(with_stderr(format!(
            "the agent command exited with code {code}"
        ))),
        Ended::Signal(number) => Some(format!("the agent command was killed by signal {number}")),
        Ended::TimedOut(after) => Some(format!("timed out after {} s", after.as_secs())),
        Ended::Interrupted => Some("interrupted".into()),
    }
}

/// The last line of `text` with something in it, once terminal escapes are gone: a host that
/// colours its errors must not paint the report.
fn last_line(text: &str) -> Option<String> {
    strip_escapes(text)
        .lines()
        .map(str::trim)
        .rfind(|line| !line.is_empty())
        .map(String::from)
}

/// `text` without terminal escape sequences (CSI such as colours and cursor moves, OSC such as
/// titles and links, and two-byte escapes) and without other control characters but newlines
/// and tabs.
pub fn strip_escapes(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\u{1b}' => match chars.next() {
                // CSI: parameters and intermediates, then one final byte in @..~.
                Some('[') => {
                    for c in chars.by_ref() {
                        if ('@'..='~').contains(&c) {
                            break;
                        }
                    }
                }
                // OSC, DCS, APC, PM, SOS: up to BEL or ESC \.
                Some(']' | 'P' | '_' | '^' | 'X') => {
                    while let Some(c) = chars.next() {
                        if c == '\u{7}' {
                            break;
                        }
                        if c == '\u{1b}' {
                            chars.next_if_eq(&'\\');
                            break;
                        }
                    }
                }
                _ => {}
            },
            '\u{9b}' => {
                for c in chars.by_ref() {
                    if ('@'..='~').contains(&c) {
                        break;
                    }
                }
            }
            '\n' | '\t' => out.push(c),
            '\r' => out.push('\n'),
            c if c.is_control() => {}
            c => out.push(c),
        }
    }
    out
}

/// Problems as one line: "a; b; c".
pub fn describe(problems: &[Problem]) -> String {
    problems
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join("; ")
}

/// Which rounds arrived intact, which are missing and which are compromised.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Completeness {
    pub received: Vec<u8>,
    pub missing: Vec<u8>,
    pub compromised: Vec<u8>,
}

impl Completeness {
    pub fn of(entries: &[RoundEntry]) -> Completeness {
        let rounds = |status| {
            entries
                .iter()
                .filter(|e| e.status == status)
                .map(|e| e.round)
                .collect()
        };
        Completeness {
            received: rounds(Status::Received),
            missing: rounds(Status::Missing),
            compromised: rounds(Status::Compromised),
        }
    }

    pub fn is_complete(&self) -> bool {
        self.missing.is_empty() && self.compromised.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::lens::LENSES;

    fn run(ended: Ended, stdout: &str, stderr: &str) -> Run {
        Run {
            ended,
            stdout: stdout.as_bytes().to_vec(),
            stdout_cut: false,
            stderr_tail: stderr.to_string(),
            duration: Duration::from_millis(5),
        }
    }

    const GOOD: &str = r#"{"packet_role": "evidence_lens", "round": 1,
        "lens_id": "counterexamples", "lens": "Counterexamples", "lens_mode": "falsify",
        "original_claim": "n + 0 = n", "normalized_claim": "n + 0 = n", "scope_assumptions": [],
        "pressure_question": "q", "strongest_attack": "a",
        "smallest_counterexample_or_boundary": "none found",
        "strongest_support_found": "s", "effect_on_original_claim": "survives",
        "effect_on_refined_claim": "survives", "candidate_fatal_pressure": null,
        "candidate_decisive_support": "d", "refined_claim_delta": "none",
        "uncertainty": "u", "oracle_notes": "n"}"#;

    #[test]
    fn claims_are_trimmed_and_whitespace_collapsed_keeping_the_original() {
        let claim = Claim::new("\t for every  integer n,\n n + 0 = n ", Some("  ")).unwrap();
        assert_eq!(claim.normalized, "for every integer n, n + 0 = n");
        assert_eq!(claim.original, "\t for every  integer n,\n n + 0 = n ");
        assert_eq!(claim.scope, None);
        assert_eq!(Claim::new(" \n\t", None), None);
    }

    #[test]
    fn a_good_packet_is_received() {
        let entry = judge_lens(&LENSES[0], &run(Ended::Exited(0), GOOD, ""));
        assert_eq!(entry.status, Status::Received);
        assert_eq!(entry.reason, None);
        assert_eq!(entry.packet.unwrap()["strongest_attack"], "a");
    }

    #[test]
    fn failures_are_missing_with_their_reason() {
        let cases = [
            (
                run(Ended::Exited(3), GOOD, "warming up\nboom\n\n"),
                "the agent command exited with code 3: boom",
            ),
            (
                run(Ended::TimedOut(Duration::from_secs(7)), "", ""),
                "timed out after 7 s",
            ),
            (
                run(Ended::Signal(9), "", ""),
                "the agent command was killed by signal 9",
            ),
            (
                run(Ended::Exited(0), " \n", ""),
                "the agent command printed nothing",
            ),
            (run(Ended::Interrupted, "", ""), "interrupted"),
            (
                run(
                    Ended::Exited(1),
                    "",
                    "\u{1b}[31mError:\u{1b}[0m folder \u{1b}]8;;file:///x\u{7}not trusted\u{1b}]8;;\u{1b}\\\u{7}\r\n\u{1b}[2K",
                ),
                "the agent command exited with code 1: Error: folder not trusted",
            ),
        ];
        for (run, reason) in cases {
            let entry = judge_lens(&LENSES[0], &run);
            assert_eq!(entry.status, Status::Missing);
            assert_eq!(entry.reason.as_deref(), Some(reason));
            assert!(entry.packet.is_none());
        }
    }

    #[test]
    fn garbage_is_compromised_and_never_forwarded() {
        let entry = judge_lens(&LENSES[0], &run(Ended::Exited(0), "I think it holds.", ""));
        assert_eq!(entry.status, Status::Compromised);
        assert!(entry.packet.is_none());
        assert!(entry.reason.unwrap().contains("no JSON or YAML object"));
        // The right packet for the wrong round is not evidence for this one.
        let entry = judge_lens(&LENSES[1], &run(Ended::Exited(0), GOOD, ""));
        assert_eq!(entry.status, Status::Compromised);
        assert_eq!(
            entry.reason.as_deref(),
            Some("round is 1, not 2; lens_id is \"counterexamples\", not logic_traps")
        );
    }

    #[test]
    fn completeness_sorts_rounds_by_what_arrived() {
        let mut entries: Vec<RoundEntry> = LENSES
            .iter()
            .map(|l| judge_lens(l, &run(Ended::Exited(0), "", "")))
            .collect();
        for entry in &mut entries {
            entry.status = Status::Received;
        }
        assert!(Completeness::of(&entries).is_complete());
        entries[3].status = Status::Compromised;
        entries[5].status = Status::Missing;
        let completeness = Completeness::of(&entries);
        assert!(!completeness.is_complete());
        assert_eq!(completeness.received, [1, 2, 3, 5, 7, 8, 9]);
        assert_eq!(completeness.missing, [6]);
        assert_eq!(completeness.compromised, [4]);
    }
}
