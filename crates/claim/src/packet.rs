//! Reading a packet out of an agent's output (JSON or YAML, bare or in a fenced code block, with
//! or without its top-level wrapper key) and checking a lens packet against its round.

use serde_json::{Map, Value};

use crate::outcome::Outcome;

use super::lens::{CANDIDATE_FIELDS, EFFECTS, LENS_FIELDS, Lens, MODES};

pub type Object = Map<String, Value>;

/// The optional top-level key around a lens packet.
pub const ROUND_WRAPPER: &str = "prove_it_round_packet";
/// The optional top-level key around the oracle packet.
pub const ORACLE_WRAPPER: &str = "prove_it_oracle_packet";
/// Keys that give a verdict, which a lens packet must not carry.
pub const VERDICT_KEYS: [&str; 3] = ["final_verdict", "outcome", "verdict"];

/// Why a packet is compromised.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Problem {
    #[error("no JSON or YAML object found in the output")]
    NoPacket,
    #[error("the output exceeded {cap_mib} MiB")]
    TooLarge { cap_mib: usize },
    #[error("packet_role is {found}, not {expected}")]
    WrongRole {
        expected: &'static str,
        found: String,
    },
    #[error("round is {found}, not {expected}")]
    WrongRound { expected: u8, found: String },
    #[error("lens_id is {found}, not {expected}")]
    WrongLens {
        expected: &'static str,
        found: String,
    },
    #[error("{field} is missing")]
    Missing { field: &'static str },
    #[error("{field} is {found}, not one of {allowed}")]
    NotAllowed {
        field: &'static str,
        found: String,
        allowed: String,
    },
    #[error("{field} is {found}, not {expected}")]
    WrongType {
        field: &'static str,
        found: String,
        expected: &'static str,
    },
    #[error("the input holds {count} packets for this round")]
    Duplicate { count: usize },
    #[error("it carries a verdict ({key}), which only the oracle gives")]
    CarriesVerdict { key: &'static str },
    #[error("final_response has no {label:?} line where the template puts it")]
    NoLabel { label: &'static str },
    #[error("final_response has no bullet line under {label:?}")]
    NoBullets { label: &'static str },
    #[error("final_response says {label} {found}, not one of {allowed}")]
    LineNotAllowed {
        label: &'static str,
        found: String,
        allowed: String,
    },
    #[error("final_response says outcome {said}, the packet {outcome}")]
    OutcomeDisagrees { said: String, outcome: Outcome },
    #[error("{field} claims {claimed}, but {actual} arrived")]
    FalseCompleteness {
        field: &'static str,
        claimed: String,
        actual: String,
    },
}

/// The first JSON or YAML object in `text`, unwrapped from `wrapper` when it has that key.
///
/// Agents often put prose around a packet, so fenced code blocks are tried first, in order, then
/// the whole text, then the span from its first `{` to its last `}`: all as JSON, and only then
/// the blocks and the whole text as YAML, since YAML reads most prose containing a colon as a
/// mapping.
pub fn parse(text: &str, wrapper: &str) -> Option<Object> {
    let whole = text.trim();
    let braces = match (whole.find('{'), whole.rfind('}')) {
        (Some(start), Some(end)) if start < end => Some(&whole[start..=end]),
        _ => None,
    };
    let blocks = fenced_blocks(text);
    let json = blocks.iter().copied().chain([whole]).chain(braces);
    let yaml = blocks.iter().copied().chain([whole]);
    json.filter_map(|text| serde_json::from_str(text).ok())
        .chain(yaml.filter_map(|text| serde_norway::from_str(text).ok()))
        .find_map(|value: Value| match value {
            Value::Object(object) => Some(unwrap(object, wrapper)),
            _ => None,
        })
}

/// The contents of every ``` fenced block, in order.
pub fn fenced_blocks(text: &str) -> Vec<&str> {
    let mut blocks = Vec::new();
    let mut start = None;
    let mut offset = 0;
    for line in text.split_inclusive('\n') {
        if line.trim_start().starts_with("```") {
            match start {
                None => start = Some(offset + line.len()),
                Some(from) => {
                    blocks.push(&text[from..offset]);
                    start = None;
                }
            }
        }
        offset += line.len();
    }
    blocks
}

fn unwrap(mut object: Object, wrapper: &str) -> Object {
    match object.remove(wrapper) {
        Some(Value::Object(inner)) => inner,
        Some(other) => {
            object.insert(wrapper.to_string(), other);
            object
        }
        None => object,
    }
}

/// A value as a problem message shows it: compact JSON, cut short.
pub fn shown(value: Option<&Value>) -> String {
    let Some(value) = value else {
        return "missing".into();
    };
    let text = value.to_string();
    if text.chars().count() > 60 {
        format!("{}...", text.chars().take(57).collect::<String>())
    } else {
        text
    }
}

/// Whether `value` is `round`, as a number or a string of digits.
pub fn is_round(value: Option<&Value>, round: u8) -> bool {
    match value {
        Some(Value::Number(n)) => n.as_u64() == Some(u64::from(round)),
        Some(Value::String(s)) => s.trim().parse::<u8>().ok() == Some(round),
        _ => false,
    }
}

/// Whether a required field carries something: present, not null, not blank text.
pub fn present(value: Option<&Value>) -> bool {
    match value {
        None | Some(Value::Null) => false,
        Some(Value::String(s)) => !s.trim().is_empty(),
        Some(_) => true,
    }
}

/// Check the role and round every packet carries.
pub fn check_role_and_round(
    packet: &Object,
    role: &'static str,
    round: u8,
    problems: &mut Vec<Problem>,
) {
    if packet.get("packet_role").and_then(Value::as_str) != Some(role) {
        problems.push(Problem::WrongRole {
            expected: role,
            found: shown(packet.get("packet_role")),
        });
    }
    if !is_round(packet.get("round"), round) {
        problems.push(Problem::WrongRound {
            expected: round,
            found: shown(packet.get("round")),
        });
    }
}

/// Every problem with `packet` as the answer of `lens`; none means it is evidence.
pub fn check_lens(packet: &Object, lens: &Lens) -> Vec<Problem> {
    let mut problems = Vec::new();
    for key in VERDICT_KEYS {
        if packet.contains_key(key) {
            problems.push(Problem::CarriesVerdict { key });
        }
    }
    check_role_and_round(packet, "evidence_lens", lens.round, &mut problems);
    if packet.get("lens_id").and_then(Value::as_str) != Some(lens.id) {
        problems.push(Problem::WrongLens {
            expected: lens.id,
            found: shown(packet.get("lens_id")),
        });
    }
    check_one_of(packet, "lens_mode", &MODES, &mut problems);
    check_list(packet, "scope_assumptions", &mut problems);
    for field in LENS_FIELDS {
        check_present(packet, field, &mut problems);
    }
    for field in ["effect_on_original_claim", "effect_on_refined_claim"] {
        check_one_of(packet, field, &EFFECTS, &mut problems);
    }
    for field in CANDIDATE_FIELDS {
        match packet.get(field) {
            None => problems.push(Problem::Missing { field }),
            Some(Value::Null | Value::String(_)) => {}
            Some(other) => problems.push(Problem::WrongType {
                field,
                found: shown(Some(other)),
                expected: "null or a string",
            }),
        }
    }
    problems
}

/// The key a field path names in its own object: `final_verdict.outcome` is `outcome`.
fn key(field: &str) -> &str {
    field.rsplit('.').next().unwrap_or(field)
}

/// `field` (a path, looked up by its last part in `object`) is text that is not blank, or any
/// structured value.
pub fn check_present(object: &Object, field: &'static str, problems: &mut Vec<Problem>) {
    if !present(object.get(key(field))) {
        problems.push(Problem::Missing { field });
    }
}

/// `field` is one of `allowed` (missing counts as a problem of its own).
pub fn check_one_of(
    object: &Object,
    field: &'static str,
    allowed: &[&str],
    problems: &mut Vec<Problem>,
) {
    let value = object.get(key(field));
    if !present(value) {
        problems.push(Problem::Missing { field });
    } else if !value
        .and_then(Value::as_str)
        .is_some_and(|v| allowed.contains(&v))
    {
        problems.push(Problem::NotAllowed {
            field,
            found: shown(value),
            allowed: allowed.join("|"),
        });
    }
}

/// `field` is a list (it may be empty).
pub fn check_list(object: &Object, field: &'static str, problems: &mut Vec<Problem>) {
    match object.get(key(field)) {
        Some(Value::Array(_)) => {}
        None | Some(Value::Null) => problems.push(Problem::Missing { field }),
        Some(other) => problems.push(Problem::WrongType {
            field,
            found: shown(Some(other)),
            expected: "a list",
        }),
    }
}

/// The largest output a run may print; more is not a packet.
pub const OUTPUT_CAP: usize = 1024 * 1024;

/// Read and check one lens run's output.
pub fn read_lens(stdout: &[u8], cut: bool, lens: &Lens) -> Result<Object, Vec<Problem>> {
    if cut {
        return Err(vec![Problem::TooLarge {
            cap_mib: OUTPUT_CAP / (1024 * 1024),
        }]);
    }
    let text = String::from_utf8_lossy(stdout);
    let packet = parse(&text, ROUND_WRAPPER).ok_or_else(|| vec![Problem::NoPacket])?;
    let problems = check_lens(&packet, lens);
    if problems.is_empty() {
        Ok(packet)
    } else {
        Err(problems)
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::lens::LENSES;

    fn good(round: u8) -> Value {
        let lens = &LENSES[usize::from(round) - 1];
        json!({
            "packet_role": "evidence_lens",
            "round": round,
            "lens_id": lens.id,
            "lens": lens.name,
            "lens_mode": lens.mode,
            "original_claim": "n + 0 = n",
            "normalized_claim": "n + 0 = n",
            "scope_assumptions": ["integers"],
            "pressure_question": "does n + 0 = n for every integer?",
            "strongest_attack": "overflow at i64::MAX",
            "smallest_counterexample_or_boundary": "none: adding 0 cannot overflow",
            "strongest_support_found": "additive identity",
            "effect_on_original_claim": "survives",
            "effect_on_refined_claim": "survives",
            "candidate_fatal_pressure": null,
            "candidate_decisive_support": "the ring axioms",
            "refined_claim_delta": "none",
            "uncertainty": "floating point is out of scope",
            "oracle_notes": "solid",
        })
    }

    fn read(text: &str, round: u8) -> Result<Object, Vec<Problem>> {
        read_lens(text.as_bytes(), false, &LENSES[usize::from(round) - 1])
    }

    #[test]
    fn bare_json_is_read() {
        let packet = read(&good(1).to_string(), 1).unwrap();
        assert_eq!(packet["strongest_attack"], "overflow at i64::MAX");
    }

    #[test]
    fn fenced_yaml_with_prose_and_the_wrapper_key_is_read() {
        let yaml = "Here is my packet.\n\n```yaml\nprove_it_round_packet:\n  packet_role: evidence_lens\n  round: 3\n  lens_id: boundary_cases\n  lens: Boundary cases\n  lens_mode: bound\n  original_claim: n + 0 = n\n  normalized_claim: n + 0 = n\n  scope_assumptions: []\n  pressure_question: where are the edges?\n  strongest_attack: n = 0\n  smallest_counterexample_or_boundary: none\n  strongest_support_found: identity\n  effect_on_original_claim: narrows\n  effect_on_refined_claim: survives\n  candidate_fatal_pressure: null\n  candidate_decisive_support: axioms\n  refined_claim_delta: integers only\n  uncertainty: low\n  oracle_notes: fine\n```\nThanks.\n";
        let packet = read(yaml, 3).unwrap();
        assert_eq!(packet["effect_on_original_claim"], "narrows");
        assert_eq!(packet["round"], 3);
    }

    #[test]
    fn fenced_json_and_json_inside_prose_are_read() {
        let fenced = format!("```json\n{}\n```", good(2));
        assert!(read(&fenced, 2).is_ok());
        let prose = format!("Sure! {} Hope that helps.", good(2));
        assert!(read(&prose, 2).is_ok());
        let wrapped = json!({ ROUND_WRAPPER: good(4) }).to_string();
        assert!(read(&wrapped, 4).is_ok());
    }

    #[test]
    fn bare_yaml_is_read_and_a_string_round_counts() {
        let yaml = serde_norway::to_string(&good(9))
            .unwrap()
            .replace("round: 9", "round: '09'");
        assert!(read(&yaml, 9).is_ok(), "{yaml}");
    }

    #[test]
    fn garbage_is_no_packet() {
        for text in [
            "",
            "I believe the claim holds.",
            "[1, 2, 3]",
            "```\n```",
            "{ nope",
        ] {
            assert_eq!(read(text, 1).unwrap_err(), [Problem::NoPacket], "{text:?}");
        }
    }

    #[test]
    fn a_lens_packet_with_a_verdict_is_compromised() {
        for key in VERDICT_KEYS {
            let mut packet = good(1);
            packet[key] = json!("PROVEN");
            let problems = read(&packet.to_string(), 1).unwrap_err();
            assert_eq!(problems, [Problem::CarriesVerdict { key }]);
        }
    }

    #[test]
    fn role_round_lens_enums_and_required_fields_are_checked() {
        let mut packet = good(1);
        packet["packet_role"] = json!("oracle_synthesis");
        packet["round"] = json!(2);
        packet["lens_id"] = json!("logic_traps");
        packet["effect_on_original_claim"] = json!("holds");
        packet["effect_on_refined_claim"] = json!(3);
        packet["lens_mode"] = json!("support_it");
        packet["scope_assumptions"] = json!("integers");
        packet.as_object_mut().unwrap().remove("uncertainty");
        packet["oracle_notes"] = json!("  ");
        packet["candidate_fatal_pressure"] = json!(["a list"]);
        packet
            .as_object_mut()
            .unwrap()
            .remove("candidate_decisive_support");
        let problems: Vec<String> = read(&packet.to_string(), 1)
            .unwrap_err()
            .iter()
            .map(ToString::to_string)
            .collect();
        assert_eq!(
            problems,
            [
                "packet_role is \"oracle_synthesis\", not evidence_lens",
                "round is 2, not 1",
                "lens_id is \"logic_traps\", not counterexamples",
                "lens_mode is \"support_it\", not one of falsify|bound|support|compare|test_design",
                "scope_assumptions is \"integers\", not a list",
                "uncertainty is missing",
                "oracle_notes is missing",
                "effect_on_original_claim is \"holds\", not one of survives|narrows|breaks|unclear",
                "effect_on_refined_claim is 3, not one of survives|narrows|breaks|unclear",
                "candidate_fatal_pressure is [\"a list\"], not null or a string",
                "candidate_decisive_support is missing",
            ]
        );
    }

    /// Regression: the published shape says `candidate_fatal_pressure: null|string`, and a
    /// packet saying null was once rejected as missing that field.
    #[test]
    fn a_null_candidate_is_no_candidate_not_a_missing_field() {
        let mut packet = good(2);
        packet["candidate_fatal_pressure"] = Value::Null;
        packet["candidate_decisive_support"] = Value::Null;
        assert!(read(&packet.to_string(), 2).is_ok());
    }

    #[test]
    fn structured_field_values_count_as_present() {
        let mut packet = good(5);
        packet["strongest_attack"] = json!(["a", "b"]);
        packet["uncertainty"] = json!({ "level": "low" });
        assert!(read(&packet.to_string(), 5).is_ok());
    }

    #[test]
    fn oversized_output_is_compromised() {
        let problems = read_lens(b"{}", true, &LENSES[0]).unwrap_err();
        assert_eq!(problems[0].to_string(), "the output exceeded 1 MiB");
    }

    #[test]
    fn long_values_are_cut_in_messages() {
        let long = json!("x".repeat(100));
        let text = shown(Some(&long));
        assert_eq!(text.chars().count(), 60);
        assert!(text.ends_with("..."));
        assert_eq!(shown(None), "missing");
    }
}
