//! The nine lenses of the gauntlet, each with the one instruction its run is given, and the
//! assignment object a lens run reads on stdin.

use serde::Serialize;

use super::Claim;

/// What a lens does to the claim: try to break it, find its limits, weigh it against something
/// else, or design the test that decides it. No lens of the nine is a `support` lens, but the
/// protocol allows that mode in a packet (`MODES`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Mode {
    Falsify,
    Bound,
    Compare,
    TestDesign,
}

/// The values allowed in a lens packet's `lens_mode`, in the protocol's order.
pub const MODES: [&str; 5] = ["falsify", "bound", "support", "compare", "test_design"];

impl Mode {
    pub fn as_str(self) -> &'static str {
        match self {
            Mode::Falsify => MODES[0],
            Mode::Bound => MODES[1],
            Mode::Compare => MODES[3],
            Mode::TestDesign => MODES[4],
        }
    }
}

/// One of the nine independent lens assignments.
#[derive(Debug)]
pub struct Lens {
    pub round: u8,
    pub id: &'static str,
    pub name: &'static str,
    pub mode: Mode,
    /// What this lens alone is asked to do, in a few sentences.
    pub instruction: &'static str,
}

/// The round of the oracle, which runs after the nine lenses.
pub const ORACLE_ROUND: u8 = 10;
/// The oracle's name, as its assignment carries it in `lens`.
pub const ORACLE_NAME: &str = "Oracle synthesis";
/// The oracle's id in run names (`prove_it_10_oracle_synthesis`).
pub const ORACLE_ID: &str = "oracle_synthesis";

/// The text fields every lens packet must carry, present and not blank, besides `packet_role`,
/// `round` and `lens_id`; `lens_mode`, `scope_assumptions` and the two `candidate_*` fields are
/// checked for their own shapes.
pub const LENS_FIELDS: [&str; 12] = [
    "lens",
    "original_claim",
    "normalized_claim",
    "pressure_question",
    "strongest_attack",
    "smallest_counterexample_or_boundary",
    "strongest_support_found",
    "effect_on_original_claim",
    "effect_on_refined_claim",
    "refined_claim_delta",
    "uncertainty",
    "oracle_notes",
];

/// The lens packet fields that are null or a string: a severe finding, or none.
pub const CANDIDATE_FIELDS: [&str; 2] = ["candidate_fatal_pressure", "candidate_decisive_support"];

/// The values allowed in `effect_on_original_claim` and `effect_on_refined_claim`.
pub const EFFECTS: [&str; 4] = ["survives", "narrows", "breaks", "unclear"];

pub const LENSES: [Lens; 9] = [
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

/// The name of one round's run: `prove_it_01_counterexamples`, ...,
/// `prove_it_10_oracle_synthesis`.
pub fn run_name(round: u8, id: &str) -> String {
    format!("prove_it_{round:02}_{id}")
}

/// What one lens run reads on stdin: its own lens and nothing of the others'.
#[derive(Debug, Serialize)]
pub struct Assignment<'a> {
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
    pub fn run_name(&self) -> String {
        run_name(self.round, self.id)
    }

    pub fn assignment<'a>(&self, claim: &'a Claim) -> Assignment<'a> {
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

    /// The full assignment text: the lens's instruction, then the packet it must answer with,
    /// in the published shape (SPEC.md section 9).
    fn text(&self) -> String {
        let round = self.round;
        let id = self.id;
        let name = self.name;
        let mode = self.mode.as_str();
        let effects = EFFECTS.join("|");
        let modes = MODES.join("|");
        format!(
            "You are the prove_it_lens for round {round} of a Prove It gauntlet: the {name} lens \
             ({mode}). {instruction}\n\n\
             Apply this lens sharply and independently. Eight other lenses run at the same time \
             and you will not see them; do not synthesize across rounds. Do not give a verdict: \
             no final_verdict, outcome or verdict key, for the oracle alone decides, and a \
             packet carrying one is discarded. Put a severe finding in candidate_fatal_pressure \
             or candidate_decisive_support (each null or a string).\n\n\
             Answer with exactly one packet, as YAML (or JSON), and nothing else:\n\n\
             prove_it_round_packet:\n  packet_role: evidence_lens\n  round: {round}\n  \
             lens_id: {id}\n  lens: {name}\n  lens_mode: {mode}  # one of {modes}\n  \
             original_claim: <the original claim>\n  normalized_claim: <the normalized claim>\n  \
             scope_assumptions: [<what you assumed about the scope>]\n  \
             pressure_question: <the question this lens put to the claim>\n  \
             strongest_attack: <...>\n  smallest_counterexample_or_boundary: <...>\n  \
             strongest_support_found: <...>\n  effect_on_original_claim: {effects}\n  \
             effect_on_refined_claim: {effects}\n  candidate_fatal_pressure: null|string\n  \
             candidate_decisive_support: null|string\n  \
             refined_claim_delta: <how the claim must be narrowed, or none>\n  \
             uncertainty: <what you could not check>\n  \
             oracle_notes: <what the oracle should weigh>",
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
        assert_eq!(
            run_name(ORACLE_ROUND, ORACLE_ID),
            "prove_it_10_oracle_synthesis"
        );
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
        for field in LENS_FIELDS.iter().chain(&CANDIDATE_FIELDS).chain(&[
            "packet_role",
            "lens_id",
            "lens_mode",
            "scope_assumptions",
        ]) {
            assert!(
                text.contains(&format!("  {field}: ")),
                "{field} not asked for"
            );
        }
        assert!(text.contains("prove_it_round_packet:\n"));
        assert!(text.contains("lens_mode: bound "));
        assert!(text.contains("Do not give a verdict"));
        for other in LENSES.iter().filter(|l| l.round != 3) {
            assert!(!text.contains(other.instruction), "{} leaked", other.id);
        }
    }
}
