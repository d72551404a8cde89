//! How a set of checks stands, from where each of them stands: the one rule the gate, `run`,
//! `status`, `check` and `log` read. A failed check fails the set; else a check without a
//! proof leaves it unproven; else one proven only through an edited verify.sh bounds it.

use super::record::{Outcome, Record};

/// Where one check stands, as far as its set is concerned; ordered from best to worst.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Stands {
    /// A counting `PROVEN` record, or a run that passed.
    Proven,
    /// A counting `BOUNDED_CLAIM_SURVIVES` record: proven through an edited verify.sh.
    Bounded,
    /// No counting record: not run, or a run that could not test it.
    Unproven,
    /// A run that failed, changed the state, or a proof a failure contests.
    Failed,
}

impl Stands {
    /// Where a check stands by its best counting record, if it has one.
    pub fn by(record: Option<&Record>) -> Stands {
        Stands::by_outcome(record.map(|record| record.outcome))
    }

    /// Where a check stands by its best counting record's outcome, if it has one.
    pub fn by_outcome(outcome: Option<Outcome>) -> Stands {
        match outcome {
            None => Stands::Unproven,
            Some(Outcome::BoundedClaimSurvives) => Stands::Bounded,
            Some(_) => Stands::Proven,
        }
    }
}

/// How the set of `checks` stands: `DISPROVEN` when one failed, else `NOT_PROVEN` when one is
/// not proven, else `BOUNDED_CLAIM_SURVIVES` when one is bounded, else `PROVEN`; `None` for a
/// set without any check (what that means is the caller's: nothing armed, say).
pub fn set_outcome(checks: impl IntoIterator<Item = Stands>) -> Option<Outcome> {
    checks.into_iter().max().map(|worst| match worst {
        Stands::Proven => Outcome::Proven,
        Stands::Bounded => Outcome::BoundedClaimSurvives,
        Stands::Unproven => Outcome::NotProven,
        Stands::Failed => Outcome::Disproven,
    })
}

#[cfg(test)]
mod tests {
    use super::{Outcome, Stands, set_outcome};

    #[test]
    fn a_set_stands_as_its_worst_check() {
        use Stands::{Bounded, Failed, Proven, Unproven};
        for (checks, outcome) in [
            (&[][..], None),
            (&[Proven], Some(Outcome::Proven)),
            (&[Proven, Proven], Some(Outcome::Proven)),
            (&[Proven, Bounded], Some(Outcome::BoundedClaimSurvives)),
            (&[Bounded, Unproven], Some(Outcome::NotProven)),
            (&[Unproven, Proven], Some(Outcome::NotProven)),
            (&[Failed, Unproven, Bounded], Some(Outcome::Disproven)),
            (&[Proven, Failed], Some(Outcome::Disproven)),
        ] {
            assert_eq!(set_outcome(checks.iter().copied()), outcome, "{checks:?}");
        }
    }

    #[test]
    fn a_check_stands_by_its_best_records_outcome() {
        assert_eq!(Stands::by_outcome(None), Stands::Unproven);
        assert_eq!(
            Stands::by_outcome(Some(Outcome::BoundedClaimSurvives)),
            Stands::Bounded
        );
        assert_eq!(Stands::by_outcome(Some(Outcome::Proven)), Stands::Proven);
    }
}
