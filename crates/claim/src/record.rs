//! Reading back what `claim --record` stored: a note that is a stream of oracle packets, in the
//! published shape (`final_verdict.outcome`) or in the earlier one that git-prove-it wrote before
//! it spoke the published protocol (a top-level `outcome`), which must stay readable.

use serde_json::Value;

use crate::outcome::Outcome;

/// Which shape a stored oracle packet has.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Shape {
    /// `packet_completeness`, `final_verdict.outcome`, ...: the published Prove It shape.
    Published,
    /// `completeness`, a top-level `outcome`: what git-prove-it stored before.
    Earlier,
}

/// One verdict in a claims note.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct StoredVerdict {
    pub outcome: Outcome,
    pub shape: Shape,
    /// `final_verdict.statement`, or the earlier top-level `statement`.
    pub statement: Option<String>,
}

/// Every verdict in a claims note, oldest first. Objects that are not a stored verdict (and
/// anything after text that is not JSON) are skipped: a note is never a reason to fail.
pub fn read_note(note: &str) -> Vec<StoredVerdict> {
    serde_json::Deserializer::from_str(note)
        .into_iter::<Value>()
        .map_while(Result::ok)
        .filter_map(|value| stored(&value))
        .collect()
}

fn stored(value: &Value) -> Option<StoredVerdict> {
    let text = |v: Option<&Value>| v.and_then(Value::as_str).map(String::from);
    if let Some(verdict) = value.get("final_verdict") {
        return Some(StoredVerdict {
            outcome: Outcome::parse(verdict.get("outcome")?.as_str()?)?,
            shape: Shape::Published,
            statement: text(verdict.get("statement")),
        });
    }
    Some(StoredVerdict {
        outcome: Outcome::parse(value.get("outcome")?.as_str()?)?,
        shape: Shape::Earlier,
        statement: text(value.get("statement")),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A note exactly as `claim --record` wrote it before the published shapes: it must still
    /// read, followed by a verdict in the published shape.
    #[test]
    fn an_earlier_record_still_reads_next_to_a_published_one() {
        let earlier = r#"{
  "completeness": {
    "compromised": [],
    "missing": [],
    "packets_received": 9
  },
  "confidence": "high",
  "decisive_reasons": [
    "additive identity (R1, R9)"
  ],
  "final_response": "Prove It — Parallel Subagent Gauntlet\n...",
  "invalid_when": [],
  "next_tests": [],
  "outcome": "PROVEN",
  "packet_role": "oracle_synthesis",
  "round": 10,
  "statement": "adding zero leaves every integer unchanged",
  "tightest_surviving_claim": "for every integer n, n + 0 = n",
  "valid_when": []
}"#;
        let published = r#"{
  "packet_role": "oracle_synthesis",
  "round": 10,
  "final_verdict": {"outcome": "DISPROVEN", "statement": "n = 3 breaks it", "decisive_reasons": []}
}"#;
        let note = format!("{earlier}\n{published}\n");
        assert_eq!(
            read_note(&note),
            [
                StoredVerdict {
                    outcome: Outcome::Proven,
                    shape: Shape::Earlier,
                    statement: Some("adding zero leaves every integer unchanged".into()),
                },
                StoredVerdict {
                    outcome: Outcome::Disproven,
                    shape: Shape::Published,
                    statement: Some("n = 3 breaks it".into()),
                },
            ]
        );
    }

    #[test]
    fn what_is_not_a_verdict_is_skipped() {
        assert_eq!(read_note(""), []);
        assert_eq!(
            read_note("{\"outcome\": \"MAYBE\"} {\"a\": 1} not json"),
            []
        );
    }
}
