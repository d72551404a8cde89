//! Round 10: the oracle's assignment over the nine round entries, and the checks its packet must
//! pass before its verdict is relayed. The tool never substitutes a verdict of its own.
//!
//! The packet and its `final_response` are the published Prove It skill's, field for field and
//! line for line (SPEC.md section 9, "Oracle packet checks").

use serde::Serialize;
use serde_json::Value;

use super::gauntlet::{Claim, Completeness, RoundEntry, describe, missing_reason};
use super::lens::{LENSES, ORACLE_NAME, ORACLE_ROUND};
use super::packet::{
    self, ORACLE_WRAPPER, OUTPUT_CAP, Object, Problem, check_list, check_one_of, check_present,
    check_role_and_round, shown,
};
use super::rounds::Run;

pub use crate::outcome::Outcome;

/// The title line of every `final_response`.
pub const TITLE: &str = "Prove It — Parallel Subagent Gauntlet";
/// The values of `confidence.level`.
const LEVELS: [&str; 3] = ["low", "medium", "high"];
/// The values of the `Execution mode:` line.
const MODES: [&str; 2] = ["custom-agent", "custom-agent fallback"];
/// The header of the round pressure map's table.
const TABLE_HEADER: &str = "| Round | Lens | Effect | Key pressure/support |";

/// The oracle packet's lists at the top level, each of any length.
const LISTS: [&str; 5] = [
    "valid_when",
    "invalid_when",
    "fatal_pressures_resolved",
    "decisive_support_resolved",
    "next_tests",
];

/// What the oracle reads on stdin.
#[derive(Debug, Serialize)]
pub struct OracleAssignment<'a> {
    packet_role: &'static str,
    round: u8,
    lens: &'static str,
    original_claim: &'a str,
    normalized_claim: &'a str,
    claim_scope: Option<&'a str>,
    round_packets: &'a [RoundEntry],
    assignment: String,
}

pub fn oracle_assignment<'a>(claim: &'a Claim, entries: &'a [RoundEntry]) -> OracleAssignment<'a> {
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

/// Rounds as the published template writes them: `1, 2, 3, 5`, or `none`.
pub fn list(rounds: &[u8]) -> String {
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
    let state = if completeness.is_complete() {
        "complete"
    } else {
        "incomplete"
    };
    let rows: String = LENSES
        .iter()
        .map(|l| {
            format!(
                "| {} | {} | <effect> | <key pressure or support> |\n",
                l.round, l.name
            )
        })
        .collect();
    let outcomes = Outcome::ALL.map(Outcome::as_str).join("|");
    format!(
        "You are the prove_it_oracle, round {ORACLE_ROUND} of a Prove It gauntlet, and you alone \
         decide the verdict. Nine independent lenses examined the claim; round_packets holds what \
         each returned. Only packets with status \"received\" are evidence; a missing or \
         compromised round is absent evidence, never support. Adjudicate the packet set without \
         rerunning it: resolve candidate fatal pressures and candidate decisive support, \
         distinguish the original claim from the refined one, do not overclaim beyond the \
         packets, and cite round numbers (R1 to R9) in decisive_reasons, \
         fatal_pressures_resolved, decisive_support_resolved or next_tests.\n\n\
         Choose exactly one outcome:\n\
         - PROVEN: the claim as stated holds; decisive support and no surviving fatal pressure.\n\
         - DISPROVEN: a concrete counterexample or fatal pressure breaks the claim as stated.\n\
         - NOT_PROVEN: nothing broke the claim, but the evidence does not establish it.\n\
         - INSUFFICIENT_EVIDENCE: too few intact packets or too little checkable evidence to judge.\n\
         - BOUNDED_CLAIM_SURVIVES: the claim as stated fails or is unproven, but a narrower claim \
         (the tightest surviving claim) holds.\n\n\
         What arrived: received rounds {received_json}, missing rounds {missing_json}, \
         compromised rounds {compromised_json}. Say exactly this in packet_completeness and in \
         final_response: a completeness that disagrees with what arrived makes your packet \
         compromised.\n\n\
         Answer with exactly one packet, as YAML (or JSON), and nothing else:\n\n\
         prove_it_oracle_packet:\n  packet_role: oracle_synthesis\n  round: {ORACLE_ROUND}\n  \
         lens: {ORACLE_NAME}\n  packet_completeness:\n    received_rounds: {received_json}\n    \
         missing_rounds: {missing_json}\n    compromised_rounds: {compromised_json}\n  \
         final_verdict:\n    outcome: {outcomes}\n    statement: <one sentence>\n    \
         decisive_reasons: [<reason, citing rounds>]\n  tightest_surviving_claim: <claim>\n  \
         valid_when: [<condition>]\n  invalid_when: [<condition>]\n  \
         fatal_pressures_resolved: [<pressure and how it was resolved>]\n  \
         decisive_support_resolved: [<support and how it was weighed>]\n  confidence:\n    \
         level: low|medium|high\n    why: <why>\n    main_gaps: [<gap>]\n  \
         next_tests: [<test>]\n  final_response: |\n    <the text below, filled in>\n\n\
         final_response must follow this template line by line, keeping every label:\n\n\
         {TITLE}\n\n\
         Original claim: {original}\n\
         Normalized claim: {normalized}\n\
         Execution mode: custom-agent\n\
         Packets received: {received}\n\
         Missing packets: {missing}\n\
         Compromised packets: {compromised}\n\
         Oracle completeness: {state}\n\n\
         Verdict:\n\
         - Outcome: <the outcome above>\n\
         - Statement: <one sentence>\n\
         - Decisive reasons: <reasons, citing rounds>\n\n\
         Tightest surviving claim: <claim>\n\n\
         Round pressure map:\n\
         {TABLE_HEADER}\n\
         |---|---|---|---|\n\
         {rows}\n\
         Valid when:\n\
         - <condition>\n\n\
         Invalid when:\n\
         - <condition>\n\n\
         Confidence:\n\
         - Level: <low|medium|high>\n\
         - Why: <why>\n\
         - Gaps: <what remains open>\n\n\
         Next tests:\n\
         - <the test that would settle what remains>",
        received = list(&completeness.received),
        missing = list(&completeness.missing),
        compromised = list(&completeness.compromised),
        received_json = json_list(&completeness.received),
        missing_json = json_list(&completeness.missing),
        compromised_json = json_list(&completeness.compromised),
        original = claim.original,
        normalized = claim.normalized,
    )
}

/// A validated oracle packet: its verdict is the gauntlet's.
#[derive(Debug, Clone)]
pub struct OracleVerdict {
    pub outcome: Outcome,
    pub packet: Object,
    pub final_response: String,
}

/// The oracle's verdict, or why its packet is missing or compromised.
pub fn judge_oracle(run: &Run, completeness: &Completeness) -> Result<OracleVerdict, Rejected> {
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
pub enum Rejected {
    /// The oracle run failed, timed out or printed nothing.
    Missing(String),
    /// Its output is not a valid oracle packet; the packet is kept for the report when one parsed.
    Compromised {
        problems: Vec<Problem>,
        packet: Option<Object>,
    },
}

impl Rejected {
    pub fn reasons(&self) -> Vec<String> {
        match self {
            Rejected::Missing(reason) => vec![reason.clone()],
            Rejected::Compromised { problems, .. } => {
                problems.iter().map(ToString::to_string).collect()
            }
        }
    }

    pub fn summary(&self) -> String {
        match self {
            Rejected::Missing(reason) => reason.clone(),
            Rejected::Compromised { problems, .. } => describe(problems),
        }
    }
}

/// The object under `field`, or a problem saying it is missing or not one.
fn object<'a>(
    packet: &'a Object,
    field: &'static str,
    problems: &mut Vec<Problem>,
) -> Option<&'a Object> {
    match packet.get(field) {
        Some(Value::Object(inner)) => Some(inner),
        None | Some(Value::Null) => {
            problems.push(Problem::Missing { field });
            None
        }
        Some(other) => {
            problems.push(Problem::WrongType {
                field,
                found: shown(Some(other)),
                expected: "a mapping",
            });
            None
        }
    }
}

/// Check a parsed oracle packet against the published shape and against what actually arrived.
pub fn check_oracle(
    packet: Object,
    completeness: &Completeness,
) -> Result<OracleVerdict, Rejected> {
    let mut problems = Vec::new();
    check_role_and_round(&packet, "oracle_synthesis", ORACLE_ROUND, &mut problems);
    check_one_of(&packet, "lens", &[ORACLE_NAME], &mut problems);
    if let Some(claimed) = object(&packet, "packet_completeness", &mut problems) {
        check_completeness(claimed, completeness, &mut problems);
    }
    let mut outcome = None;
    if let Some(verdict) = object(&packet, "final_verdict", &mut problems) {
        let allowed = Outcome::ALL.map(Outcome::as_str);
        let before = problems.len();
        check_one_of(verdict, "final_verdict.outcome", &allowed, &mut problems);
        if problems.len() == before {
            outcome = verdict
                .get("outcome")
                .and_then(Value::as_str)
                .and_then(Outcome::parse);
        }
        check_present(verdict, "final_verdict.statement", &mut problems);
        check_list(verdict, "final_verdict.decisive_reasons", &mut problems);
    }
    check_present(&packet, "tightest_surviving_claim", &mut problems);
    for field in LISTS {
        check_list(&packet, field, &mut problems);
    }
    if let Some(confidence) = object(&packet, "confidence", &mut problems) {
        check_one_of(confidence, "confidence.level", &LEVELS, &mut problems);
        check_present(confidence, "confidence.why", &mut problems);
        check_list(confidence, "confidence.main_gaps", &mut problems);
    }
    let response = match packet.get("final_response") {
        Some(Value::String(text)) if !text.trim().is_empty() => Some(text.clone()),
        None | Some(Value::Null | Value::String(_)) => {
            problems.push(Problem::Missing {
                field: "final_response",
            });
            None
        }
        Some(other) => {
            problems.push(Problem::WrongType {
                field: "final_response",
                found: shown(Some(other)),
                expected: "text",
            });
            None
        }
    };
    if let Some(response) = &response {
        check_response(response, outcome, completeness, &mut problems);
    }
    match (outcome, response) {
        (Some(outcome), Some(final_response)) if problems.is_empty() => Ok(OracleVerdict {
            outcome,
            final_response,
            packet,
        }),
        _ => Err(Rejected::Compromised {
            problems,
            packet: Some(packet),
        }),
    }
}

fn check_completeness(claimed: &Object, actual: &Completeness, problems: &mut Vec<Problem>) {
    for (field, key, rounds) in [
        (
            "packet_completeness.received_rounds",
            "received_rounds",
            &actual.received,
        ),
        (
            "packet_completeness.missing_rounds",
            "missing_rounds",
            &actual.missing,
        ),
        (
            "packet_completeness.compromised_rounds",
            "compromised_rounds",
            &actual.compromised,
        ),
    ] {
        let value = claimed.get(key);
        if !same_rounds(value, rounds) {
            problems.push(Problem::FalseCompleteness {
                field,
                claimed: shown(value),
                actual: format!("rounds {}", json_list(rounds)),
            });
        }
    }
}

/// Whether `value` lists exactly `rounds`, each once, in any order, as numbers or digit strings.
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

/// One line of `final_response`: whether it is a bullet, and its text without markdown
/// decoration (`## Verdict:` is `Verdict:`, `- **Outcome:** X` is a bullet `Outcome: X`).
struct Line {
    bullet: bool,
    text: String,
}

impl Line {
    fn of(raw: &str) -> Line {
        let raw = raw.replace("**", "").replace("__", "");
        let trimmed = raw.trim();
        let bullet = ["- ", "* ", "+ "].iter().any(|b| trimmed.starts_with(b));
        let text = trimmed
            .trim_start_matches(|c: char| "#>-*+ \t".contains(c))
            .trim()
            .to_string();
        Line { bullet, text }
    }
}

/// Walks `final_response` in the template's order: each label is looked for after the last one
/// found, so that a label out of place counts as absent.
struct Template<'a> {
    lines: Vec<Line>,
    at: usize,
    problems: &'a mut Vec<Problem>,
}

impl Template<'_> {
    /// The value after `label` (which ends in `:`) on the next line that starts with it.
    fn label(&mut self, label: &'static str, bullet: bool) -> Option<String> {
        let found = self.lines[self.at..]
            .iter()
            .position(|line| line.bullet == bullet && line.text.starts_with(label));
        match found {
            Some(offset) => {
                let index = self.at + offset;
                self.at = index + 1;
                Some(self.lines[index].text[label.len()..].trim().to_string())
            }
            None => {
                self.problems.push(Problem::NoLabel { label });
                None
            }
        }
    }

    /// A label whose value is one of `allowed`.
    fn one_of(&mut self, label: &'static str, bullet: bool, allowed: &'static [&'static str]) {
        if let Some(value) = self.label(label, bullet)
            && !allowed.contains(&value.as_str())
        {
            self.problems.push(Problem::LineNotAllowed {
                label,
                found: format!("{value:?}"),
                allowed: allowed.join("|"),
            });
        }
    }

    /// A label followed by at least one bullet line.
    fn bullets(&mut self, label: &'static str) {
        if self.label(label, false).is_none() {
            return;
        }
        let bullets = self.lines[self.at..]
            .iter()
            .skip_while(|line| line.text.is_empty())
            .take_while(|line| line.bullet)
            .count();
        if bullets == 0 {
            self.problems.push(Problem::NoBullets { label });
        }
        self.at += bullets;
    }

    /// A label listing rounds that must be exactly `rounds`.
    fn rounds(&mut self, label: &'static str, rounds: &[u8]) {
        let Some(value) = self.label(label, false) else {
            return;
        };
        if value != list(rounds) {
            self.problems.push(Problem::FalseCompleteness {
                field: label,
                claimed: format!("{value:?}"),
                actual: format!("rounds {:?}", list(rounds)),
            });
        }
    }
}

fn check_response(
    response: &str,
    outcome: Option<Outcome>,
    actual: &Completeness,
    problems: &mut Vec<Problem>,
) {
    let lines: Vec<Line> = response.lines().map(Line::of).collect();
    if lines
        .iter()
        .find(|line| !line.text.is_empty())
        .map(|l| l.text.as_str())
        != Some(TITLE)
    {
        problems.push(Problem::NoLabel { label: TITLE });
    }
    let mut template = Template {
        lines,
        at: 0,
        problems,
    };
    template.label("Original claim:", false);
    template.label("Normalized claim:", false);
    if let Some(mode) = template.label("Execution mode:", false) {
        if !MODES.contains(&mode.as_str()) {
            template.problems.push(Problem::LineNotAllowed {
                label: "Execution mode:",
                found: format!("{mode:?}"),
                allowed: MODES.join("|"),
            });
        } else if mode == MODES[1] {
            // The fallback must be surfaced right after the mode line.
            let next = template.lines[template.at..]
                .iter()
                .find(|line| !line.text.is_empty());
            if !next.is_some_and(|line| line.text.to_lowercase().contains("warning")) {
                template.problems.push(Problem::NoLabel {
                    label: "custom-agent fallback warning",
                });
            }
        }
    }
    template.rounds("Packets received:", &actual.received);
    template.rounds("Missing packets:", &actual.missing);
    template.rounds("Compromised packets:", &actual.compromised);
    if let Some(value) = template.label("Oracle completeness:", false) {
        let expected = if actual.is_complete() {
            "complete"
        } else {
            "incomplete"
        };
        if value != expected {
            template.problems.push(Problem::FalseCompleteness {
                field: "Oracle completeness:",
                claimed: format!("{value:?}"),
                actual: format!("{} of 9 packets", actual.received.len()),
            });
        }
    }
    template.label("Verdict:", false);
    if let Some(said) = template.label("Outcome:", true)
        && let Some(outcome) = outcome
        && said.trim_matches('`') != outcome.as_str()
    {
        template.problems.push(Problem::OutcomeDisagrees {
            said: format!("{said:?}"),
            outcome,
        });
    }
    template.label("Statement:", true);
    template.label("Decisive reasons:", true);
    template.label("Tightest surviving claim:", false);
    if template.label("Round pressure map:", false).is_some() {
        let header = template.lines[template.at..]
            .iter()
            .find(|line| !line.text.is_empty())
            .map(|line| line.text.split_whitespace().collect::<Vec<_>>().join(" "));
        if header.as_deref() != Some(TABLE_HEADER) {
            template.problems.push(Problem::NoLabel {
                label: TABLE_HEADER,
            });
        }
    }
    template.bullets("Valid when:");
    template.bullets("Invalid when:");
    template.label("Confidence:", false);
    template.one_of("Level:", true, &LEVELS);
    template.label("Why:", true);
    template.label("Gaps:", true);
    template.bullets("Next tests:");
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

    /// A `final_response` exactly in the published template.
    fn response(outcome: &str, arrived: &Completeness) -> String {
        let state = if arrived.is_complete() {
            "complete"
        } else {
            "incomplete"
        };
        format!(
            "Prove It — Parallel Subagent Gauntlet\n\n\
             Original claim: n + 0 = n\nNormalized claim: n + 0 = n\n\
             Execution mode: custom-agent\n\
             Packets received: {}\nMissing packets: {}\nCompromised packets: {}\n\
             Oracle completeness: {state}\n\n\
             Verdict:\n- Outcome: {outcome}\n- Statement: it holds\n\
             - Decisive reasons: identity (R1, R9)\n\n\
             Tightest surviving claim: for every integer n, n + 0 = n\n\n\
             Round pressure map:\n| Round | Lens | Effect | Key pressure/support |\n\
             |---|---|---|---|\n| 1 | Counterexamples | survives | none |\n\n\
             Valid when:\n- integers\n\nInvalid when:\n- never\n\n\
             Confidence:\n- Level: high\n- Why: an axiom\n- Gaps: none\n\n\
             Next tests:\n- a property test\n",
            list(&arrived.received),
            list(&arrived.missing),
            list(&arrived.compromised),
        )
    }

    fn packet(outcome: &str, arrived: &Completeness) -> Object {
        json!({
            "packet_role": "oracle_synthesis",
            "round": 10,
            "lens": "Oracle synthesis",
            "packet_completeness": {
                "received_rounds": arrived.received,
                "missing_rounds": arrived.missing,
                "compromised_rounds": arrived.compromised,
            },
            "final_verdict": {
                "outcome": outcome,
                "statement": "it holds",
                "decisive_reasons": ["identity (R1)"],
            },
            "tightest_surviving_claim": "for every integer n, n + 0 = n",
            "valid_when": ["integers"],
            "invalid_when": ["floating point NaN"],
            "fatal_pressures_resolved": [],
            "decisive_support_resolved": ["identity (R1)"],
            "confidence": {"level": "high", "why": "an axiom", "main_gaps": []},
            "next_tests": ["property test"],
            "final_response": response(outcome, arrived),
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

    fn edit(packet: &mut Object, from: &str, to: &str) {
        let text = packet["final_response"].as_str().unwrap().replace(from, to);
        packet["final_response"] = json!(text);
    }

    #[test]
    fn a_valid_packet_gives_the_oracles_verdict() {
        for outcome in Outcome::ALL {
            let verdict = check_oracle(packet(outcome.as_str(), &complete()), &complete()).unwrap();
            assert_eq!(verdict.outcome, outcome);
            assert!(verdict.final_response.starts_with(TITLE));
        }
        let lost = two_lost();
        assert!(check_oracle(packet("NOT_PROVEN", &lost), &lost).is_ok());
    }

    #[test]
    fn markdown_decoration_around_labels_is_read_through() {
        let mut packet = packet("PROVEN", &complete());
        edit(&mut packet, "Prove It —", "# Prove It —");
        edit(&mut packet, "Verdict:", "## Verdict:");
        edit(&mut packet, "- Outcome: PROVEN", "- **Outcome:** `PROVEN`");
        assert_eq!(problems(packet, &complete()), Vec::<String>::new());
    }

    /// Regression: an oracle answering word for word in the published shape was reported as
    /// compromised, because the earlier checks wanted their own field names.
    #[test]
    fn the_published_yaml_shape_read_from_text_is_valid() {
        let yaml =
            serde_norway::to_string(&json!({ ORACLE_WRAPPER: packet("PROVEN", &complete()) }))
                .unwrap();
        let parsed = packet::parse(&format!("```yaml\n{yaml}```\n"), ORACLE_WRAPPER).unwrap();
        assert!(check_oracle(parsed, &complete()).is_ok());
    }

    #[test]
    fn an_outcome_outside_the_five_is_compromised() {
        let problems = problems(packet("PROBABLY_FINE", &complete()), &complete());
        assert_eq!(
            problems[0],
            "final_verdict.outcome is \"PROBABLY_FINE\", not one of PROVEN|DISPROVEN|NOT_PROVEN|INSUFFICIENT_EVIDENCE|BOUNDED_CLAIM_SURVIVES"
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
                "packet_completeness.received_rounds claims [1,2,3,4,5,6,7,8,9], but rounds [1,2,3,5,7,8,9] arrived",
                "packet_completeness.missing_rounds claims [], but rounds [6] arrived",
                "packet_completeness.compromised_rounds claims [], but rounds [4] arrived",
                "Packets received: claims \"1, 2, 3, 4, 5, 6, 7, 8, 9\", but rounds \"1, 2, 3, 5, 7, 8, 9\" arrived",
                "Missing packets: claims \"none\", but rounds \"6\" arrived",
                "Compromised packets: claims \"none\", but rounds \"4\" arrived",
                "Oracle completeness: claims \"complete\", but 7 of 9 packets arrived",
            ]
        );
    }

    #[test]
    fn the_outcome_line_must_agree_with_the_packet() {
        let mut packet = packet("PROVEN", &complete());
        packet["final_verdict"]["outcome"] = json!("DISPROVEN");
        assert_eq!(
            problems(packet, &complete()),
            ["final_response says outcome \"PROVEN\", the packet DISPROVEN"]
        );
    }

    #[test]
    fn every_label_of_the_template_is_required_in_its_place() {
        let mut packet = packet("PROVEN", &complete());
        edit(&mut packet, "Next tests:", "Later:");
        edit(&mut packet, "Round pressure map:", "Map:");
        edit(&mut packet, "Parallel Subagent Gauntlet", "Gauntlet");
        edit(&mut packet, "Key pressure/support", "Notes");
        edit(&mut packet, "- Level: high", "- Level: total");
        edit(&mut packet, "Invalid when:\n- never", "Invalid when: never");
        // Out of order: the statement before the verdict block is not where the template has it.
        edit(&mut packet, "- Statement: it holds\n", "");
        edit(&mut packet, "Verdict:", "- Statement: it holds\nVerdict:");
        assert_eq!(
            problems(packet, &complete()),
            [
                "final_response has no \"Prove It — Parallel Subagent Gauntlet\" line where the template puts it",
                "final_response has no \"Statement:\" line where the template puts it",
                "final_response has no \"Round pressure map:\" line where the template puts it",
                "final_response has no bullet line under \"Invalid when:\"",
                "final_response says Level: \"total\", not one of low|medium|high",
                "final_response has no \"Next tests:\" line where the template puts it",
            ]
        );
    }

    #[test]
    fn the_table_header_and_the_fallback_warning_are_checked() {
        let mut packet = packet("PROVEN", &complete());
        edit(&mut packet, "Key pressure/support", "Notes");
        edit(&mut packet, "custom-agent", "custom-agent fallback");
        assert_eq!(
            problems(packet.clone(), &complete()),
            [
                "final_response has no \"custom-agent fallback warning\" line where the template puts it",
                "final_response has no \"| Round | Lens | Effect | Key pressure/support |\" line where the template puts it",
            ]
        );
        edit(
            &mut packet,
            "fallback\n",
            "fallback\nWarning: custom agents were unavailable; ordinary subagents ran the rounds.\n",
        );
        edit(&mut packet, "Notes", "Key pressure/support");
        assert_eq!(problems(packet.clone(), &complete()), Vec::<String>::new());
        edit(&mut packet, "custom-agent fallback", "root thread");
        assert_eq!(
            problems(packet, &complete()),
            [
                "final_response says Execution mode: \"root thread\", not one of custom-agent|custom-agent fallback"
            ]
        );
    }

    #[test]
    fn role_round_lens_and_every_field_shape_are_checked() {
        let mut packet = packet("PROVEN", &complete());
        packet["packet_role"] = json!("evidence_lens");
        packet["round"] = json!(9);
        packet["lens"] = json!("Oracle");
        packet.remove("tightest_surviving_claim");
        packet["valid_when"] = json!("integers");
        packet["final_verdict"] = json!({"outcome": "PROVEN", "decisive_reasons": "R1"});
        packet["confidence"] = json!("high");
        packet["final_response"] = json!(["not", "text"]);
        assert_eq!(
            problems(packet, &complete()),
            [
                "packet_role is \"evidence_lens\", not oracle_synthesis",
                "round is 9, not 10",
                "lens is \"Oracle\", not one of Oracle synthesis",
                "final_verdict.statement is missing",
                "final_verdict.decisive_reasons is \"R1\", not a list",
                "tightest_surviving_claim is missing",
                "valid_when is \"integers\", not a list",
                "confidence is \"high\", not a mapping",
                "final_response is [\"not\",\"text\"], not text",
            ]
        );
    }

    #[test]
    fn the_assignment_carries_the_nine_entries_what_arrived_and_a_template_that_passes() {
        let claim = Claim::new("n + 0 = n", None).unwrap();
        let value = serde_json::to_value(oracle_assignment(&claim, &[])).unwrap();
        assert_eq!(value["packet_role"], "oracle_synthesis");
        assert_eq!(value["round"], 10);
        assert_eq!(value["lens"], "Oracle synthesis");
        assert_eq!(value["claim_scope"], Value::Null);
        let lost = two_lost();
        let text = instructions(&claim, &lost);
        assert!(text.contains("prove_it_oracle_packet:\n"));
        assert!(text.contains("    received_rounds: [1,2,3,5,7,8,9]\n"));
        assert!(text.contains(
            "Packets received: 1, 2, 3, 5, 7, 8, 9\nMissing packets: 6\nCompromised packets: 4\nOracle completeness: incomplete\n"
        ));
        // The template, filled in as it says, passes the checks on final_response.
        let template = &text[text.find(TITLE).unwrap()..];
        let filled = template
            .replace("<the outcome above>", "NOT_PROVEN")
            .replace("<low|medium|high>", "low");
        let mut problems = Vec::new();
        check_response(&filled, Some(Outcome::NotProven), &lost, &mut problems);
        assert_eq!(problems, []);
    }
}
