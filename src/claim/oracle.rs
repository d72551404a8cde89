//! Round 10: the oracle's assignment over the nine round entries, and the checks its packet must
//! pass before its verdict is relayed. The tool never substitutes a verdict of its own.

use serde::Serialize;
use serde_json::Value;

use super::gauntlet::{Claim, Completeness, RoundEntry, describe, missing_reason};
use super::lens::{LENSES, ORACLE_NAME, ORACLE_ROUND};
use super::packet::{
    self, ORACLE_WRAPPER, OUTPUT_CAP, Object, Problem, check_role_and_round, present, shown,
};
use super::rounds::Run;

pub(crate) use crate::outcome::Outcome;

/// The title line of every `final_response`.
pub(crate) const TITLE: &str = "Prove It — Parallel Subagent Gauntlet";

/// The labelled lines `final_response` must have, in the order the template gives them.
const LABELS: [&str; 15] = [
    "Original claim",
    "Normalized claim",
    "Execution mode",
    "Packets received",
    "Missing",
    "Compromised",
    "Oracle completeness",
    "Outcome",
    "Statement",
    "Decisive reasons",
    "Tightest surviving claim",
    "Valid when",
    "Invalid when",
    "Confidence",
    "Next tests",
];

/// The fields the oracle packet must carry besides `packet_role`, `round` and `outcome`.
const ORACLE_FIELDS: [&str; 9] = [
    "statement",
    "decisive_reasons",
    "tightest_surviving_claim",
    "valid_when",
    "invalid_when",
    "confidence",
    "next_tests",
    "completeness",
    "final_response",
];

/// What the oracle reads on stdin.
#[derive(Debug, Serialize)]
pub(crate) struct OracleAssignment<'a> {
    packet_role: &'static str,
    round: u8,
    lens: &'static str,
    original_claim: &'a str,
    normalized_claim: &'a str,
    claim_scope: Option<&'a str>,
    round_packets: &'a [RoundEntry],
    assignment: String,
}

pub(crate) fn oracle_assignment<'a>(
    claim: &'a Claim,
    entries: &'a [RoundEntry],
) -> OracleAssignment<'a> {
    let completeness = Completeness::of(entries);
    OracleAssignment {
        packet_role: "oracle_synthesis",
        round: ORACLE_ROUND,
        lens: ORACLE_NAME,
        original_claim: &claim.original,
        normalized_claim: &claim.normalized,
        claim_scope: claim.scope.as_deref(),
        round_packets: entries,
        assignment: instructions(claim, &completeness),
    }
}

fn list(rounds: &[u8]) -> String {
    if rounds.is_empty() {
        "none".into()
    } else {
        rounds
            .iter()
            .map(u8::to_string)
            .collect::<Vec<_>>()
            .join(", ")
    }
}

fn json_list(rounds: &[u8]) -> String {
    serde_json::to_string(rounds).expect("a list of numbers serialises")
}

fn instructions(claim: &Claim, completeness: &Completeness) -> String {
    let received = completeness.received.len();
    let state = if completeness.is_complete() {
        "complete".to_string()
    } else {
        format!("incomplete: {} of 9 lens packets arrived intact", received)
    };
    let rows: String = LENSES
        .iter()
        .map(|l| format!("| {} | {} | ... | ... | ... |\n", l.round, l.name))
        .collect();
    format!(
        "You are the oracle of a prove-it gauntlet, round {ORACLE_ROUND}, and you alone decide \
         the verdict. Nine independent lenses examined the claim; round_packets holds what each \
         returned. Only packets with status \"received\" are evidence; a missing or compromised \
         round is absent evidence, never support. Weigh fatal pressure against decisive \
         support, narrow the claim to the tightest version that survives, and cite round \
         numbers (R1 to R9) for every reason.\n\n\
         Choose exactly one outcome:\n\
         - PROVEN: the claim as stated holds; decisive support and no surviving fatal pressure.\n\
         - DISPROVEN: a concrete counterexample or fatal pressure breaks the claim as stated.\n\
         - NOT_PROVEN: nothing broke the claim, but the evidence does not establish it.\n\
         - INSUFFICIENT_EVIDENCE: too few intact packets or too little checkable evidence to judge.\n\
         - BOUNDED_CLAIM_SURVIVES: the claim as stated fails or is unproven, but a narrower claim \
         (the tightest surviving claim) holds.\n\n\
         What arrived: {received} of 9 packets received; missing rounds: {missing}; compromised \
         rounds: {compromised}. Say exactly this: a completeness claim that disagrees with what \
         arrived makes your packet compromised.\n\n\
         Answer with exactly one packet, as a JSON object (or YAML), and nothing else:\n\
         {{\"packet_role\": \"oracle_synthesis\", \"round\": {ORACLE_ROUND}, \
         \"outcome\": \"PROVEN|DISPROVEN|NOT_PROVEN|INSUFFICIENT_EVIDENCE|BOUNDED_CLAIM_SURVIVES\", \
         \"statement\": \"one sentence\", \"decisive_reasons\": [\"... (R1)\"], \
         \"tightest_surviving_claim\": \"...\", \"valid_when\": [\"...\"], \
         \"invalid_when\": [\"...\"], \"confidence\": \"low|medium|high, and why\", \
         \"next_tests\": [\"...\"], \"completeness\": {{\"packets_received\": {received}, \
         \"missing\": {missing_json}, \"compromised\": {compromised_json}}}, \
         \"final_response\": \"the text below, filled in\"}}\n\n\
         final_response must follow this shape line by line, keeping every label:\n\n\
         # {TITLE}\n\n\
         Original claim: {original}\n\
         Normalized claim: {normalized}\n\
         Execution mode: parallel subagents (git prove-it claim)\n\
         Packets received: {received}/9\n\
         Missing: {missing}\n\
         Compromised: {compromised}\n\
         Oracle completeness: {state}\n\n\
         ## Verdict\n\n\
         Outcome: <the outcome above>\n\
         Statement: <one sentence>\n\
         Decisive reasons: <reasons, citing rounds as R1..R9>\n\n\
         Tightest surviving claim: <claim>\n\n\
         ## Round pressure map\n\n\
         | Round | Lens | Effect on original | Effect on refined | Key pressure |\n\
         |---|---|---|---|---|\n\
         {rows}\n\
         Valid when: <conditions>\n\
         Invalid when: <conditions>\n\
         Confidence: <low|medium|high, and why>\n\
         Next tests: <the tests that would settle what remains>",
        missing = list(&completeness.missing),
        compromised = list(&completeness.compromised),
        missing_json = json_list(&completeness.missing),
        compromised_json = json_list(&completeness.compromised),
        original = claim.original,
        normalized = claim.normalized,
    )
}

/// A validated oracle packet: its verdict is the gauntlet's.
#[derive(Debug, Clone)]
pub(crate) struct Verdict {
    pub outcome: Outcome,
    pub packet: Object,
    pub final_response: String,
}

/// The oracle's verdict, or why its packet is missing or compromised.
pub(crate) fn judge_oracle(run: &Run, completeness: &Completeness) -> Result<Verdict, Rejected> {
    if let Some(reason) = missing_reason(run) {
        return Err(Rejected::Missing(reason));
    }
    if run.stdout_cut {
        return Err(Rejected::Compromised {
            problems: vec![Problem::TooLarge {
                cap_mib: OUTPUT_CAP / (1024 * 1024),
            }],
            packet: None,
        });
    }
    let text = String::from_utf8_lossy(&run.stdout);
    let Some(packet) = packet::parse(&text, ORACLE_WRAPPER) else {
        return Err(Rejected::Compromised {
            problems: vec![Problem::NoPacket],
            packet: None,
        });
    };
    check_oracle(packet, completeness)
}

/// Why the oracle gave no verdict that can be relayed.
#[derive(Debug, Clone)]
pub(crate) enum Rejected {
    /// The oracle run failed, timed out or printed nothing.
    Missing(String),
    /// Its output is not a valid oracle packet; the packet is kept for the report when one parsed.
    Compromised {
        problems: Vec<Problem>,
        packet: Option<Object>,
    },
}

impl Rejected {
    pub(crate) fn reasons(&self) -> Vec<String> {
        match self {
            Rejected::Missing(reason) => vec![reason.clone()],
            Rejected::Compromised { problems, .. } => {
                problems.iter().map(ToString::to_string).collect()
            }
        }
    }

    pub(crate) fn summary(&self) -> String {
        match self {
            Rejected::Missing(reason) => reason.clone(),
            Rejected::Compromised { problems, .. } => describe(problems),
        }
    }
}

/// Check a parsed oracle packet against the protocol and against what actually arrived.
pub(crate) fn check_oracle(
    packet: Object,
    completeness: &Completeness,
) -> Result<Verdict, Rejected> {
    let mut problems = Vec::new();
    check_role_and_round(&packet, "oracle_synthesis", ORACLE_ROUND, &mut problems);
    let outcome = packet
        .get("outcome")
        .and_then(Value::as_str)
        .and_then(Outcome::parse);
    if outcome.is_none() {
        problems.push(Problem::NotAllowed {
            field: "outcome",
            found: shown(packet.get("outcome")),
            allowed: Outcome::ALL.map(Outcome::as_str).join("|"),
        });
    }
    for field in ORACLE_FIELDS {
        if !present(packet.get(field)) {
            problems.push(Problem::Missing { field });
        }
    }
    if let Some(claimed) = packet.get("completeness")
        && present(Some(claimed))
    {
        check_completeness(claimed, completeness, &mut problems);
    }
    let response = packet.get("final_response").and_then(Value::as_str);
    if let Some(response) = response
        && present(packet.get("final_response"))
    {
        check_response(response, outcome, completeness, &mut problems);
    } else if present(packet.get("final_response")) {
        problems.push(Problem::NotAllowed {
            field: "final_response",
            found: shown(packet.get("final_response")),
            allowed: "text".into(),
        });
    }
    match (outcome, response) {
        (Some(outcome), Some(response)) if problems.is_empty() => Ok(Verdict {
            outcome,
            final_response: response.to_string(),
            packet,
        }),
        _ => Err(Rejected::Compromised {
            problems,
            packet: Some(packet),
        }),
    }
}

fn check_completeness(claimed: &Value, actual: &Completeness, problems: &mut Vec<Problem>) {
    let received = claimed.get("packets_received");
    if received.and_then(Value::as_u64) != Some(actual.received.len() as u64) {
        problems.push(Problem::FalseCompleteness {
            field: "completeness.packets_received",
            claimed: shown(received),
            actual: format!("{} packets", actual.received.len()),
        });
    }
    for (field, key, rounds) in [
        ("completeness.missing", "missing", &actual.missing),
        (
            "completeness.compromised",
            "compromised",
            &actual.compromised,
        ),
    ] {
        let value = claimed.get(key);
        if !same_rounds(value, rounds) {
            problems.push(Problem::FalseCompleteness {
                field,
                claimed: shown(value),
                actual: format!("{key} rounds {}", json_list(rounds)),
            });
        }
    }
}

/// Whether `value` lists exactly `rounds`, in any order, as numbers or digit strings.
fn same_rounds(value: Option<&Value>, rounds: &[u8]) -> bool {
    let Some(Value::Array(items)) = value else {
        return false;
    };
    let mut listed: Vec<u8> = Vec::new();
    for item in items {
        match (1..=9).find(|&r| packet::is_round(Some(item), r)) {
            Some(round) => listed.push(round),
            None => return false,
        }
    }
    listed.sort_unstable();
    listed == rounds
}

/// One line of `final_response` without markdown decoration: `- **Outcome:** X` is `Outcome: X`.
fn plain(line: &str) -> String {
    line.replace("**", "")
        .replace("__", "")
        .trim_start_matches(|c: char| "#>-*+ \t".contains(c))
        .trim()
        .to_string()
}

/// The text after `label:` on the first line that has it.
fn labelled(lines: &[String], label: &str) -> Option<String> {
    lines.iter().find_map(|line| {
        let head = line.get(..label.len())?;
        let rest = line.get(label.len()..)?.trim_start();
        (head.eq_ignore_ascii_case(label) && rest.starts_with(':'))
            .then(|| rest[1..].trim().to_string())
    })
}

fn heading(lines: &[String], words: &str) -> Option<usize> {
    lines
        .iter()
        .position(|line| line.to_lowercase().starts_with(words))
}

fn check_response(
    response: &str,
    outcome: Option<Outcome>,
    actual: &Completeness,
    problems: &mut Vec<Problem>,
) {
    let lines: Vec<String> = response.lines().map(plain).collect();
    // The title may use a plain hyphen for the dash.
    let has_title = lines.iter().any(|line| {
        let lower = line.to_lowercase();
        lower.starts_with("prove it") && lower.ends_with("parallel subagent gauntlet")
    });
    if !has_title {
        problems.push(Problem::NoLabel { label: TITLE });
    }
    if heading(&lines, "verdict").is_none() {
        problems.push(Problem::NoLabel { label: "Verdict" });
    }
    let table = heading(&lines, "round pressure map")
        .is_some_and(|at| lines[at..].iter().any(|line| line.starts_with('|')));
    if !table {
        problems.push(Problem::NoLabel {
            label: "Round pressure map (with its table)",
        });
    }
    for label in LABELS {
        let Some(value) = labelled(&lines, label) else {
            problems.push(Problem::NoLabel { label });
            continue;
        };
        match label {
            "Outcome" => {
                let said: String = value
                    .split_whitespace()
                    .next()
                    .unwrap_or("")
                    .trim_matches(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                    .to_string();
                if let Some(outcome) = outcome
                    && said != outcome.as_str()
                {
                    problems.push(Problem::OutcomeDisagrees {
                        said: format!("{said:?}"),
                        outcome: outcome.as_str(),
                    });
                }
            }
            "Packets received" => {
                let number: String = value
                    .trim_start()
                    .chars()
                    .take_while(char::is_ascii_digit)
                    .collect();
                if number.parse::<usize>().ok() != Some(actual.received.len()) {
                    problems.push(Problem::FalseCompleteness {
                        field: "the Packets received line",
                        claimed: format!("{value:?}"),
                        actual: format!("{} packets", actual.received.len()),
                    });
                }
            }
            "Oracle completeness" => {
                let lower = value.to_lowercase();
                let says_complete = lower.starts_with("complete");
                let says_incomplete = lower.starts_with("incomplete");
                if says_complete && !actual.is_complete() || says_incomplete && actual.is_complete()
                {
                    problems.push(Problem::FalseCompleteness {
                        field: "the Oracle completeness line",
                        claimed: format!("{value:?}"),
                        actual: format!("{} of 9 packets", actual.received.len()),
                    });
                }
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn complete() -> Completeness {
        Completeness {
            received: (1..=9).collect(),
            missing: vec![],
            compromised: vec![],
        }
    }

    fn two_lost() -> Completeness {
        Completeness {
            received: vec![1, 2, 3, 5, 7, 8, 9],
            missing: vec![6],
            compromised: vec![4],
        }
    }

    fn response(outcome: &str, received: usize, state: &str) -> String {
        format!(
            "# Prove It — Parallel Subagent Gauntlet\n\n\
             Original claim: n + 0 = n\nNormalized claim: n + 0 = n\n\
             Execution mode: parallel subagents (git prove-it claim)\n\
             Packets received: {received}/9\nMissing: none\nCompromised: none\n\
             Oracle completeness: {state}\n\n## Verdict\n\n**Outcome:** `{outcome}`\n\
             Statement: it holds\nDecisive reasons: identity (R1, R9)\n\n\
             Tightest surviving claim: for every integer n, n + 0 = n\n\n\
             ## Round pressure map\n\n| Round | Lens | a | b | c |\n|---|---|---|---|---|\n\
             | 1 | Counterexamples | survives | survives | none |\n\n\
             - Valid when: integers\n- Invalid when: never\nConfidence: high\nNext tests:\n- none\n"
        )
    }

    fn packet(outcome: &str, completeness: &Completeness) -> Object {
        let state = if completeness.is_complete() {
            "complete"
        } else {
            "incomplete: 7 of 9"
        };
        json!({
            "packet_role": "oracle_synthesis",
            "round": 10,
            "outcome": outcome,
            "statement": "it holds",
            "decisive_reasons": ["identity (R1)"],
            "tightest_surviving_claim": "for every integer n, n + 0 = n",
            "valid_when": ["integers"],
            "invalid_when": ["floating point NaN"],
            "confidence": "high",
            "next_tests": ["property test"],
            "completeness": {
                "packets_received": completeness.received.len(),
                "missing": completeness.missing,
                "compromised": completeness.compromised,
            },
            "final_response": response(outcome, completeness.received.len(), state),
        })
        .as_object()
        .unwrap()
        .clone()
    }

    fn problems(packet: Object, completeness: &Completeness) -> Vec<String> {
        match check_oracle(packet, completeness) {
            Ok(_) => vec![],
            Err(rejected) => rejected.reasons(),
        }
    }

    #[test]
    fn a_valid_packet_gives_the_oracles_verdict() {
        for outcome in Outcome::ALL {
            let verdict = check_oracle(packet(outcome.as_str(), &complete()), &complete()).unwrap();
            assert_eq!(verdict.outcome, outcome);
            assert!(verdict.final_response.starts_with("# Prove It"));
        }
        let lost = two_lost();
        assert!(check_oracle(packet("NOT_PROVEN", &lost), &lost).is_ok());
    }

    #[test]
    fn an_outcome_outside_the_five_is_compromised() {
        let problems = problems(packet("PROBABLY_FINE", &complete()), &complete());
        assert_eq!(
            problems[0],
            "outcome is \"PROBABLY_FINE\", not one of PROVEN|DISPROVEN|NOT_PROVEN|INSUFFICIENT_EVIDENCE|BOUNDED_CLAIM_SURVIVES"
        );
    }

    #[test]
    fn a_missing_final_response_is_compromised() {
        let mut packet = packet("PROVEN", &complete());
        packet.remove("final_response");
        assert_eq!(problems(packet, &complete()), ["final_response is missing"]);
    }

    #[test]
    fn claiming_nine_packets_when_two_were_lost_is_compromised() {
        let lost = two_lost();
        let problems = problems(packet("PROVEN", &complete()), &lost);
        assert_eq!(
            problems,
            [
                "completeness.packets_received claims 9, but 7 packets arrived",
                "completeness.missing claims [], but missing rounds [6] arrived",
                "completeness.compromised claims [], but compromised rounds [4] arrived",
                "the Packets received line claims \"9/9\", but 7 packets arrived",
                "the Oracle completeness line claims \"complete\", but 7 of 9 packets arrived",
            ]
        );
    }

    #[test]
    fn the_outcome_line_must_agree_with_the_packet() {
        let mut packet = packet("PROVEN", &complete());
        packet["outcome"] = json!("DISPROVEN");
        assert_eq!(
            problems(packet, &complete()),
            ["final_response says outcome \"PROVEN\", the packet DISPROVEN"]
        );
    }

    #[test]
    fn every_label_of_the_shape_is_required() {
        let mut packet = packet("PROVEN", &complete());
        let text = packet["final_response"]
            .as_str()
            .unwrap()
            .replace("Next tests:", "Later:")
            .replace("## Round pressure map", "## Map")
            .replace("Parallel Subagent Gauntlet", "Gauntlet");
        packet["final_response"] = json!(text);
        assert_eq!(
            problems(packet, &complete()),
            [
                "final_response has no Prove It — Parallel Subagent Gauntlet line",
                "final_response has no Round pressure map (with its table) line",
                "final_response has no Next tests line",
            ]
        );
    }

    #[test]
    fn role_round_and_fields_are_checked() {
        let mut packet = packet("PROVEN", &complete());
        packet["packet_role"] = json!("evidence_lens");
        packet["round"] = json!(9);
        packet.remove("confidence");
        packet["final_response"] = json!(["not", "text"]);
        assert_eq!(
            problems(packet, &complete()),
            [
                "packet_role is \"evidence_lens\", not oracle_synthesis",
                "round is 9, not 10",
                "confidence is missing",
                "final_response is [\"not\",\"text\"], not one of text",
            ]
        );
    }

    #[test]
    fn the_assignment_carries_the_nine_entries_and_what_arrived() {
        let claim = Claim::new("n + 0 = n", None).unwrap();
        let value = serde_json::to_value(oracle_assignment(&claim, &[])).unwrap();
        assert_eq!(value["packet_role"], "oracle_synthesis");
        assert_eq!(value["round"], 10);
        assert_eq!(value["lens"], "Oracle synthesis");
        assert_eq!(value["claim_scope"], Value::Null);
        let text = instructions(&claim, &two_lost());
        assert!(text.contains("Packets received: 7/9"));
        assert!(text.contains("Missing: 6\nCompromised: 4\n"));
        assert!(text.contains("\"missing\": [6]"));
        assert!(text.contains("Oracle completeness: incomplete"));
        for label in LABELS {
            assert!(text.contains(&format!("{label}:")), "{label}");
        }
        // The template the oracle is given passes the checks on its own shape.
        let mut lines: Vec<String> = text.lines().map(plain).collect();
        lines.retain(|l| !l.is_empty());
        assert!(heading(&lines, "round pressure map").is_some());
    }
}
