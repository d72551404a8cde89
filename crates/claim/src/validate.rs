//! `claim --validate`: a packet set produced elsewhere (the nine lens packets and the oracle
//! packet, as a Prove It skill's root coordinator holds them) judged by the same checks as the
//! packets of `claim`'s own runs. This is the coordinator's validation done by code.

use serde::Deserialize as _;
use serde_json::Value;

use super::gauntlet::{Completeness, RoundEntry, Status, entry, judged};
use super::lens::{LENSES, ORACLE_ROUND};
use super::oracle::{OracleVerdict, Rejected, check_oracle};
use super::packet::{
    ORACLE_WRAPPER, Object, Problem, ROUND_WRAPPER, check_lens, fenced_blocks, is_round,
};

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Error {
    #[error(
        "packet {index} of the input has no round from 1 to 10, no packet_role and no wrapper key"
    )]
    Unplaced { index: usize },
    #[error("item {index} of the input is not a packet (a mapping)")]
    NotAPacket { index: usize },
    #[error("the input is neither JSON nor YAML: {reason}")]
    Unreadable { reason: String },
}

/// What a packet set comes to: the nine round entries and the oracle's verdict or why there is
/// none, as `claim` judges its own runs.
#[derive(Debug)]
pub struct Judged {
    pub entries: Vec<RoundEntry>,
    pub completeness: Completeness,
    pub oracle: Result<OracleVerdict, Rejected>,
    /// The claim as the first received lens packet gives it.
    pub original_claim: Option<String>,
    pub normalized_claim: Option<String>,
}

/// Which packet a document is, as far as it says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Place {
    Lens(u8),
    Oracle,
}

/// Judge the packet set in `text`: JSON or YAML, one document (a packet, or a list of them) or a
/// stream of documents, or fenced code blocks each holding such; each packet bare or under its
/// wrapper key.
pub fn validate(text: &str) -> Result<Judged, Error> {
    let mut lenses: Vec<Vec<Object>> = vec![Vec::new(); LENSES.len()];
    let mut oracles: Vec<Object> = Vec::new();
    for (index, (wrapper, packet)) in packets(text)?.into_iter().enumerate() {
        match place(wrapper, &packet).ok_or(Error::Unplaced { index: index + 1 })? {
            Place::Lens(round) => lenses[usize::from(round) - 1].push(packet),
            Place::Oracle => oracles.push(packet),
        }
    }
    let entries: Vec<RoundEntry> = LENSES
        .iter()
        .zip(lenses)
        .map(|(lens, mut found)| match found.len() {
            0 => entry(
                lens,
                Status::Missing,
                Some("no packet for this round in the input".into()),
                None,
            ),
            1 => {
                let packet = found.remove(0);
                let problems = check_lens(&packet, lens);
                judged(
                    lens,
                    if problems.is_empty() {
                        Ok(packet)
                    } else {
                        Err(problems)
                    },
                )
            }
            count => judged(lens, Err(vec![Problem::Duplicate { count }])),
        })
        .collect();
    let completeness = Completeness::of(&entries);
    let oracle = match oracles.len() {
        0 => Err(Rejected::Missing("no oracle packet in the input".into())),
        1 => check_oracle(oracles.remove(0), &completeness),
        count => Err(Rejected::Compromised {
            problems: vec![Problem::Duplicate { count }],
            packet: None,
        }),
    };
    let claim_field = |field: &str| {
        entries
            .iter()
            .filter_map(|e| e.packet.as_ref()?.get(field)?.as_str())
            .next()
            .map(String::from)
    };
    Ok(Judged {
        original_claim: claim_field("original_claim"),
        normalized_claim: claim_field("normalized_claim"),
        entries,
        completeness,
        oracle,
    })
}

/// Where a packet belongs: its wrapper key says lens or oracle, else its role; a lens's round
/// is its own.
fn place(wrapper: Option<&str>, packet: &Object) -> Option<Place> {
    let role = packet.get("packet_role").and_then(Value::as_str);
    let round = (1..=ORACLE_ROUND).find(|&r| is_round(packet.get("round"), r));
    let oracle = match wrapper {
        Some(ORACLE_WRAPPER) => true,
        Some(_) => false,
        None => role == Some("oracle_synthesis") || (role.is_none() && round == Some(ORACLE_ROUND)),
    };
    if oracle {
        return Some(Place::Oracle);
    }
    match round {
        Some(round) if round < ORACLE_ROUND => Some(Place::Lens(round)),
        _ => None,
    }
}

/// Every packet in `text`, with the wrapper key it was under.
fn packets(text: &str) -> Result<Vec<(Option<&'static str>, Object)>, Error> {
    let blocks = fenced_blocks(text);
    let documents: Vec<Value> = if blocks.is_empty() {
        lenient(text)?
    } else {
        // Fenced blocks, and any JSON packets pasted between them (prose there is skipped).
        let mut all = Vec::new();
        for block in &blocks {
            all.extend(lenient(block)?);
        }
        all.extend(json_objects(&outside(text)));
        all
    };
    let mut items = Vec::new();
    for document in documents {
        match document {
            Value::Array(list) => items.extend(list),
            Value::Null => {}
            other => items.push(other),
        }
    }
    let mut packets = Vec::new();
    for (index, item) in items.into_iter().enumerate() {
        let Value::Object(mut object) = item else {
            return Err(Error::NotAPacket { index: index + 1 });
        };
        let wrapper = [ROUND_WRAPPER, ORACLE_WRAPPER]
            .into_iter()
            .find(|key| object.len() == 1 && object.contains_key(*key));
        match wrapper.and_then(|key| object.remove(key)) {
            Some(Value::Object(inner)) => packets.push((wrapper, inner)),
            // A wrapper key holding a list: every packet in it is of that kind.
            Some(Value::Array(list)) => {
                for inner in list {
                    let Value::Object(inner) = inner else {
                        return Err(Error::NotAPacket { index: index + 1 });
                    };
                    packets.push((wrapper, inner));
                }
            }
            Some(_) => return Err(Error::NotAPacket { index: index + 1 }),
            None => packets.push((None, object)),
        }
    }
    Ok(packets)
}

/// The documents of `text`, or, when it is prose with JSON packets in it (a subagent's answer
/// with a note after its packet), those packets.
fn lenient(text: &str) -> Result<Vec<Value>, Error> {
    let parsed = documents(text);
    if let Ok(documents) = &parsed
        && documents
            .iter()
            .all(|d| d.is_object() || d.is_array() || d.is_null())
    {
        return parsed;
    }
    let found = json_objects(text);
    if found.is_empty() { parsed } else { Ok(found) }
}

/// Every JSON object in `text` outside the others, in order.
fn json_objects(text: &str) -> Vec<Value> {
    let mut found = Vec::new();
    let mut rest = text;
    while let Some(at) = rest.find('{') {
        let mut stream = serde_json::Deserializer::from_str(&rest[at..]).into_iter::<Value>();
        match stream.next() {
            Some(Ok(value @ Value::Object(_))) => {
                found.push(value);
                rest = &rest[at + stream.byte_offset()..];
            }
            _ => rest = &rest[at + 1..],
        }
    }
    found
}

/// `text` without its fenced blocks (fence lines included).
fn outside(text: &str) -> String {
    let mut out = String::new();
    let mut fenced = false;
    for line in text.split_inclusive('\n') {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
        } else if !fenced {
            out.push_str(line);
        }
    }
    out
}

/// The documents of a JSON stream, else of a YAML stream (`---` between documents).
fn documents(text: &str) -> Result<Vec<Value>, Error> {
    let json: Result<Vec<Value>, _> = serde_json::Deserializer::from_str(text)
        .into_iter::<Value>()
        .collect();
    if let Ok(json) = json
        && !json.is_empty()
    {
        return Ok(json);
    }
    if text.trim().is_empty() {
        return Ok(Vec::new());
    }
    serde_norway::Deserializer::from_str(text)
        .map(Value::deserialize)
        .collect::<Result<Vec<Value>, _>>()
        .map_err(|error| Error::Unreadable {
            reason: error.to_string(),
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Which rounds got a packet at all (received or compromised, not missing), and whether an
    /// oracle packet was found.
    fn placed(text: &str) -> (Vec<u8>, bool) {
        let judged = validate(text).unwrap();
        let rounds = judged
            .entries
            .iter()
            .filter(|e| e.status != Status::Missing)
            .map(|e| e.round)
            .collect();
        let oracle = !matches!(judged.oracle, Err(Rejected::Missing(_)));
        (rounds, oracle)
    }

    #[test]
    fn packets_are_placed_from_any_of_the_accepted_forms() {
        let json_stream = r#"{"packet_role": "evidence_lens", "round": 1}
            {"prove_it_round_packet": {"round": "02"}}
            {"packet_role": "oracle_synthesis", "round": 10}"#;
        assert_eq!(placed(json_stream), (vec![1, 2], true));
        let json_list = r#"[{"round": 3}, {"prove_it_oracle_packet": {"round": 10}}]"#;
        assert_eq!(placed(json_list), (vec![3], true));
        let yaml_stream = "prove_it_round_packet:\n  round: 4\n---\nround: 5\n---\nprove_it_oracle_packet:\n  lens: Oracle synthesis\n";
        assert_eq!(placed(yaml_stream), (vec![4, 5], true));
        let fenced = "Round 6 said:\n```yaml\nprove_it_round_packet:\n  round: 6\n```\nand round 7:\n```json\n{\"round\": 7}\n```\n";
        assert_eq!(placed(fenced), (vec![6, 7], false));
        let wrapped_list = "prove_it_round_packet:\n  - round: 8\n  - round: 9\n";
        assert_eq!(placed(wrapped_list), (vec![8, 9], false));
        // Subagents' answers pasted as they came: JSON with notes after it, and a fenced block.
        let pasted = "{\"round\": 1}\nagentId: a1 (use SendMessage to continue)\n\
            {\"round\": 2} done.\n```yaml\nprove_it_oracle_packet:\n  round: 10\n```\nagentId: a3\n";
        assert_eq!(placed(pasted), (vec![1, 2], true));
        let prose_only = "Round 1 says {\"round\": 1}; round 3 says {\"round\": 3}.";
        assert_eq!(placed(prose_only), (vec![1, 3], false));
        assert_eq!(placed(""), (vec![], false));
    }

    #[test]
    fn a_round_given_twice_is_compromised_and_a_missing_one_says_so() {
        let judged = validate(r#"{"round": 2} {"round": 2}"#).unwrap();
        assert_eq!(judged.entries[1].status, Status::Compromised);
        assert_eq!(
            judged.entries[1].reason.as_deref(),
            Some("the input holds 2 packets for this round")
        );
        assert_eq!(
            judged.entries[0].reason.as_deref(),
            Some("no packet for this round in the input")
        );
        assert_eq!(
            judged.oracle.unwrap_err().reasons(),
            ["no oracle packet in the input"]
        );
    }

    #[test]
    fn what_cannot_be_placed_or_read_is_an_error() {
        assert_eq!(
            validate(r#"{"round": 11}"#).unwrap_err(),
            Error::Unplaced { index: 1 }
        );
        assert_eq!(
            validate("[{\"round\": 1}, 7]").unwrap_err(),
            Error::NotAPacket { index: 2 }
        );
        assert!(matches!(
            validate("round: [1\n").unwrap_err(),
            Error::Unreadable { .. }
        ));
    }
}
