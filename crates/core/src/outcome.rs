//! The five outcomes of the Prove It protocol, shared by the gate, proof records, `run`,
//! `status`, `check` and the claim gauntlet. Their names are rendered here and nowhere else.

use std::fmt;

/// One of the five outcomes a state, a commit or a claim can end in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Outcome {
    /// Verified: verify.sh passed on exactly this state (or the oracle found the claim proven).
    Proven,
    /// Refuted: verify.sh failed (or the oracle found a counterexample).
    Disproven,
    /// Not verified, and the turn or commit is reported as such.
    NotProven,
    /// Nothing to judge: not armed, or nothing changed.
    InsufficientEvidence,
    /// Verified, but through a verify.sh edited during the session: a narrower claim survives.
    BoundedClaimSurvives,
}

impl Outcome {
    pub const ALL: [Outcome; 5] = [
        Outcome::Proven,
        Outcome::Disproven,
        Outcome::NotProven,
        Outcome::InsufficientEvidence,
        Outcome::BoundedClaimSurvives,
    ];

    /// The protocol's name for the outcome, as records, JSON and messages spell it.
    pub fn as_str(self) -> &'static str {
        match self {
            Outcome::Proven => "PROVEN",
            Outcome::Disproven => "DISPROVEN",
            Outcome::NotProven => "NOT_PROVEN",
            Outcome::InsufficientEvidence => "INSUFFICIENT_EVIDENCE",
            Outcome::BoundedClaimSurvives => "BOUNDED_CLAIM_SURVIVES",
        }
    }

    /// The outcome named exactly `text`.
    pub fn parse(text: &str) -> Option<Outcome> {
        Outcome::ALL.into_iter().find(|o| o.as_str() == text)
    }

    /// Whether the outcome says verify.sh passed: the two a proof record may carry.
    pub fn is_proof(self) -> bool {
        matches!(self, Outcome::Proven | Outcome::BoundedClaimSurvives)
    }
}

impl fmt::Display for Outcome {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl serde::Serialize for Outcome {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_outcome_parses_back_from_its_name() {
        for outcome in Outcome::ALL {
            assert_eq!(Outcome::parse(outcome.as_str()), Some(outcome));
            assert_eq!(
                serde_json::to_string(&outcome).unwrap(),
                format!("\"{outcome}\"")
            );
        }
        assert_eq!(Outcome::parse("proven"), None);
        assert_eq!(Outcome::parse(""), None);
    }

    #[test]
    fn only_a_pass_may_be_a_proof() {
        let proofs: Vec<_> = Outcome::ALL.into_iter().filter(|o| o.is_proof()).collect();
        assert_eq!(
            proofs,
            [Outcome::Proven, Outcome::BoundedClaimSurvives],
            "a proof record carries only a pass"
        );
    }
}
