//! The nine lenses of the gauntlet, each with the one instruction its run is given, and the
//! assignment object a lens run reads on stdin.

use serde::Serialize;

use super::Claim;

/// What a lens does to the claim: try to break it, find its limits, weigh it against something
/// else, or examine the evidence for it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum Mode {
    Falsify,
    Bound,
    Compare,
    TestDesign,
}

/// One of the nine independent lens assignments.
#[derive(Debug)]
pub(crate) struct Lens {
    pub round: u8,
    pub id: &'static str,
    pub name: &'static str,
    pub mode: Mode,
    /// What this lens alone is asked to do, in a few sentences.
    pub instruction: &'static str,
}

/// The round of the oracle, which runs after the nine lenses.
pub(crate) const ORACLE_ROUND: u8 = 10;
/// The oracle's name, as its assignment carries it in `lens`.
pub(crate) const ORACLE_NAME: &str = "Oracle synthesis";
/// The oracle's id in run names (`prove_it_10_oracle`).
pub(crate) const ORACLE_ID: &str = "oracle";

/// The fields every lens packet must carry besides `packet_role` and `round`.
pub(crate) const LENS_FIELDS: [&str; 11] = [
    "pressure_question",
    "strongest_attack",
    "smallest_counterexample_or_boundary",
    "strongest_support_found",
    "effect_on_original_claim",
    "effect_on_refined_claim",
    "candidate_fatal_pressure",
    "candidate_decisive_support",
    "refined_claim_delta",
    "uncertainty",
    "oracle_notes",
];

/// The values allowed in `effect_on_original_claim` and `effect_on_refined_claim`.
pub(crate) const EFFECTS: [&str; 4] = ["survives", "narrows", "breaks", "unclear"];

pub(crate) const LENSES: [Lens; 9] = [
    Lens {
        round: 1,
        id: "counterexamples",
        name: "Counterexamples",
        mode: Mode::Falsify,
        instruction: "Try to break the claim with one concrete counterexample. Search for the \
            smallest input, state or case for which the claim as stated is false, and check it \
            rather than assume it. If a real search finds none, say what you searched and why \
            it did not break the claim.",
    },
    Lens {
        round: 2,
        id: "logic_traps",
        name: "Logic traps",
        mode: Mode::Bound,
        instruction: "Hunt for logical flaws in the claim itself: hidden or shifted quantifiers, \
            undefined or equivocal terms, circular support, conclusions that do not follow from \
            the evidence offered. Name each trap that applies and the words it hides in, and say \
            how the claim must be narrowed to escape it.",
    },
    Lens {
        round: 3,
        id: "boundary_cases",
        name: "Boundary cases",
        mode: Mode::Bound,
        instruction: "Probe the edges of the claim: empty, zero, one, the maximum, overflow, \
            negative values, unusual encodings, first and last, concurrency, the limits of its \
            scope. Find where it stops holding and state that boundary exactly.",
    },
    Lens {
        round: 4,
        id: "adversarial_inputs",
        name: "Adversarial inputs",
        mode: Mode::Falsify,
        instruction: "Act as an adversary who wants the claim to fail: malformed, hostile, \
            oversized or crafted inputs, misuse of interfaces, hostile environments. Give the \
            strongest concrete attack you can build and whether it actually succeeds.",
    },
    Lens {
        round: 5,
        id: "alternative_paradigms",
        name: "Alternative paradigms",
        mode: Mode::Compare,
        instruction: "Judge the claim from another frame: another definition of its terms, \
            another model of the domain, another measure of success. Say whether the claim \
            survives the change of frame or holds only inside one, and which frame is the one \
            that matters.",
    },
    Lens {
        round: 6,
        id: "operational_constraints",
        name: "Operational constraints",
        mode: Mode::Bound,
        instruction: "Test the claim against the conditions it really lives in: resources, time \
            limits, configuration, versions, platforms, dependencies, permissions, deployment. \
            Name the condition under which it fails, or the ones it silently assumes.",
    },
    Lens {
        round: 7,
        id: "probabilistic_uncertainty",
        name: "Probabilistic uncertainty",
        mode: Mode::Bound,
        instruction: "Ask how sure anyone can be: sample sizes, flaky or nondeterministic \
            behaviour, untested paths, measurement error, base rates. Say what remains uncertain \
            and what evidence would shrink it; never round likely up to certain.",
    },
    Lens {
        round: 8,
        id: "comparative_baselines",
        name: "Comparative baselines",
        mode: Mode::Compare,
        instruction: "Compare the claim with a baseline: the previous version, a reference \
            implementation, a known-good result, the simplest alternative. Say whether the \
            evidence for the claim beats the baseline, or would support a false claim just as \
            well.",
    },
    Lens {
        round: 9,
        id: "meta_test",
        name: "Meta-test",
        mode: Mode::TestDesign,
        instruction: "Examine the evidence itself: would the tests, checks or arguments behind \
            the claim fail if the claim were false? Design the smallest test that tells true \
            from false, and say whether it exists and what it shows.",
    },
];

/// The name of one round's run: `prove_it_01_counterexamples`, ..., `prove_it_10_oracle`.
pub(crate) fn run_name(round: u8, id: &str) -> String {
    format!("prove_it_{round:02}_{id}")
}

/// What one lens run reads on stdin: its own lens and nothing of the others'.
#[derive(Debug, Serialize)]
pub(crate) struct Assignment<'a> {
    packet_role: &'static str,
    round: u8,
    lens_id: &'static str,
    lens: &'static str,
    lens_mode: Mode,
    original_claim: &'a str,
    normalized_claim: &'a str,
    claim_scope: Option<&'a str>,
    assignment: String,
}

impl Lens {
    pub(crate) fn run_name(&self) -> String {
        run_name(self.round, self.id)
    }

    pub(crate) fn assignment<'a>(&self, claim: &'a Claim) -> Assignment<'a> {
        Assignment {
            packet_role: "evidence_lens",
            round: self.round,
            lens_id: self.id,
            lens: self.name,
            lens_mode: self.mode,
            original_claim: &claim.original,
            normalized_claim: &claim.normalized,
            claim_scope: claim.scope.as_deref(),
            assignment: self.text(),
        }
    }

    /// The full assignment text: the lens's instruction, then the packet it must answer with.
    fn text(&self) -> String {
        let round = self.round;
        let id = self.id;
        let effects = EFFECTS.join("|");
        format!(
            "You are round {round} of a prove-it gauntlet, the {name} lens. {instruction}\n\n\
             Work from this lens only; eight other lenses run at the same time and you will not \
             see them. Do not give a verdict: no final_verdict, outcome or verdict key, for the \
             oracle alone decides, and a packet carrying one is discarded.\n\n\
             Answer with exactly one packet, as a JSON object (or YAML), and nothing else:\n\
             {{\"packet_role\": \"evidence_lens\", \"round\": {round}, \"lens_id\": \"{id}\", \
             \"pressure_question\": \"the question this lens put to the claim\", \
             \"strongest_attack\": \"...\", \
             \"smallest_counterexample_or_boundary\": \"... or none found\", \
             \"strongest_support_found\": \"...\", \
             \"effect_on_original_claim\": \"{effects}\", \
             \"effect_on_refined_claim\": \"{effects}\", \
             \"candidate_fatal_pressure\": \"what could sink the claim, or none\", \
             \"candidate_decisive_support\": \"what could settle it, or none\", \
             \"refined_claim_delta\": \"how the claim must be narrowed, or none\", \
             \"uncertainty\": \"what you could not check\", \
             \"oracle_notes\": \"what the oracle should weigh\"}}",
            name = self.name,
            instruction = self.instruction,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nine_lenses_in_round_order_with_the_protocols_modes() {
        let rounds: Vec<u8> = LENSES.iter().map(|l| l.round).collect();
        assert_eq!(rounds, (1..=9).collect::<Vec<_>>());
        let modes: Vec<Mode> = LENSES.iter().map(|l| l.mode).collect();
        use Mode::*;
        assert_eq!(
            modes,
            [
                Falsify, Bound, Bound, Falsify, Compare, Bound, Bound, Compare, TestDesign
            ]
        );
    }

    #[test]
    fn runs_are_named_after_their_round() {
        assert_eq!(LENSES[0].run_name(), "prove_it_01_counterexamples");
        assert_eq!(LENSES[8].run_name(), "prove_it_09_meta_test");
        assert_eq!(run_name(ORACLE_ROUND, ORACLE_ID), "prove_it_10_oracle");
    }

    #[test]
    fn an_assignment_carries_its_own_lens_only_and_asks_for_every_field() {
        let claim = Claim::new("  all   tests\npass ", Some("the unit tests")).unwrap();
        // The order on stdin is the protocol's, so read the text, not a (sorted) map.
        let text = serde_json::to_string(&LENSES[2].assignment(&claim)).unwrap();
        let keys = [
            "packet_role",
            "round",
            "lens_id",
            "lens",
            "lens_mode",
            "original_claim",
            "normalized_claim",
            "claim_scope",
            "assignment",
        ];
        let at: Vec<usize> = keys
            .iter()
            .map(|k| text.find(&format!("\"{k}\":")).unwrap())
            .collect();
        assert!(at.is_sorted(), "{text}");
        let value: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_eq!(value.as_object().unwrap().len(), keys.len());
        assert_eq!(value["packet_role"], "evidence_lens");
        assert_eq!(value["round"], 3);
        assert_eq!(value["lens_id"], "boundary_cases");
        assert_eq!(value["lens_mode"], "bound");
        assert_eq!(value["original_claim"], "  all   tests\npass ");
        assert_eq!(value["normalized_claim"], "all tests pass");
        assert_eq!(value["claim_scope"], "the unit tests");
        let text = value["assignment"].as_str().unwrap();
        for field in LENS_FIELDS {
            assert!(text.contains(field), "{field} not asked for");
        }
        assert!(text.contains("Do not give a verdict"));
        for other in LENSES.iter().filter(|l| l.round != 3) {
            assert!(!text.contains(other.instruction), "{} leaked", other.id);
        }
    }
}
