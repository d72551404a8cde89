//! Entry points for the fuzz targets in `fuzz/` and the bounded property tests below: each
//! takes arbitrary bytes, drives one parser the way the tool does, and panics only when an
//! invariant breaks. Not an API: compiled only for tests and with the `fuzzing` feature.
//!
//! - [`hook_input`]: a hook's stdin, as every host dialect reads it, and the answer rendered in
//!   that host's protocol: never a panic, stdout is empty or one JSON object and a newline, and
//!   input that cannot be read is answered visibly ("could not check this turn").
//! - [`proof_record`]: a note's text, as the proof reader splits and parses it: never a panic,
//!   every record is either a proof or an invalid record with its problem (none disappears),
//!   a parsed record renders to text that parses back to it, and merging loses no record.

use clap::ValueEnum as _;

use crate::gate::{Message, Reply};
use crate::hosts::{Event, Host, Incoming};
use crate::proof::{self, Proofs};
use crate::report;

/// The event names a hook's command line may carry (only Copilot's hook reads one).
const EVENT_ARGS: [Option<&str>; 4] = [None, Some("agentStop"), Some("sessionStart"), Some("x")];

/// Feed `data` to every host's hook parser and render answers in each host's protocol.
pub fn hook_input(data: &[u8]) {
    for &host in Host::value_variants() {
        for arg in EVENT_ARGS {
            match host.parse(data, arg) {
                Ok(Incoming {
                    host: dialect,
                    event,
                }) => {
                    for message in [
                        Message::Silent,
                        Message::Notice("prove-it: a notice".into()),
                        Message::Block("a block".into()),
                        report::could_not_check("a failure"),
                    ] {
                        let out = dialect.render(Some(&event), &message);
                        assert_protocol(&out, host);
                        if let Event::Stop(stop) = &event {
                            assert!(!stop.session.is_empty(), "a stop without a session");
                        }
                    }
                }
                Err(error) => {
                    let reply = Reply::CouldNotCheck(error.to_string());
                    let message = report::reply(&reply, host.notices_as_blocks(None));
                    let out = host.render(None, &message);
                    assert_protocol(&out, host);
                    assert!(
                        out.contains("could not check this turn"),
                        "{host:?}: unreadable input answered invisibly: {out:?}"
                    );
                }
            }
        }
    }
}

/// stdout of a hook: nothing, or exactly one JSON object and a newline.
fn assert_protocol(out: &str, host: Host) {
    if out.is_empty() {
        return;
    }
    let body = out
        .strip_suffix('\n')
        .unwrap_or_else(|| panic!("{host:?}: no final newline: {out:?}"));
    assert!(
        !body.contains('\n'),
        "{host:?}: more than one line: {out:?}"
    );
    let value: serde_json::Value =
        serde_json::from_str(body).unwrap_or_else(|e| panic!("{host:?}: not JSON ({e}): {out:?}"));
    assert!(value.is_object(), "{host:?}: not an object: {out:?}");
}

/// The tree a fuzzed note is read as attached to: the first `tree:` value when it is an id, so
/// that records get past the tree check; else the empty tree.
fn key_of(note: &str) -> gix::ObjectId {
    note.lines()
        .find_map(|line| line.strip_prefix("tree: "))
        .and_then(|hex| gix::ObjectId::from_hex(hex.trim().as_bytes()).ok())
        .unwrap_or_else(|| gix::ObjectId::empty_tree(gix::hash::Kind::Sha1))
}

/// Read `data` as a note's text the way the proof reader does.
pub fn proof_record(data: &[u8]) {
    // Notes that are not UTF-8 are refused by the notes layer before any record is parsed.
    let Ok(note) = std::str::from_utf8(data) else {
        return;
    };
    let key = key_of(note);
    let records = proof::split_records(note);
    let parsed = proof::parse_note(note, &key);
    assert_eq!(parsed.len(), records.len(), "a record disappeared");
    for result in &parsed {
        match result {
            Ok(record) => {
                let text = record.render();
                let again = proof::parse_note(&text, &key);
                assert_eq!(again.len(), 1, "one record renders as one: {text:?}");
                let again = again[0]
                    .as_ref()
                    .unwrap_or_else(|e| panic!("a parsed record renders unparsable: {e:?}"));
                // Signed bytes are the record as the note stored it, which rendering a
                // parsed record (keys in order, unknown keys dropped) need not reproduce.
                let unsigned = |r: &proof::Record| proof::Record {
                    signature: r.signature.as_ref().map(|s| crate::signing::Signature {
                        armor: s.armor.clone(),
                        signed: String::new(),
                    }),
                    ..r.clone()
                };
                assert_eq!(
                    unsigned(again),
                    unsigned(record),
                    "the record changed through render: {text:?}"
                );
            }
            Err(invalid) => assert!(!invalid.problem.to_string().is_empty()),
        }
    }
    let verify = parsed
        .iter()
        .flatten()
        .next()
        .map(|r| (r.verify.blob, r.verify.mode));
    let proofs = Proofs::from_note(note, &key, verify);
    assert_eq!(proofs.valid.len() + proofs.invalid.len(), records.len());
    let _ = proof::Found::read(Some(note), &key, verify).best(true);

    // Merging with itself adds nothing; every record survives a merge, whole.
    let merged = proof::merge(note, note);
    assert_eq!(proof::merge(&merged, note), merged);
    let kept = proof::split_records(&merged);
    for record in &records {
        assert!(kept.contains(record), "merge lost a record: {record:?}");
    }
}

/// Payloads the hosts send (ADAPTERS.md), the seeds of the fuzz corpus and property tests.
pub const HOOK_SEEDS: &[&str] = &[
    r#"{"session_id":"s1","transcript_path":"/t.jsonl","cwd":"/repo","prompt_id":"p1","permission_mode":"default","hook_event_name":"Stop","stop_hook_active":false,"last_assistant_message":"All tests pass."}"#,
    r#"{"session_id":"s1","transcript_path":"/t.jsonl","cwd":"/repo","hook_event_name":"SessionStart","source":"startup"}"#,
    r#"{"session_id":"s1","turn_id":"t1","transcript_path":null,"cwd":"/repo","hook_event_name":"Stop","model":"gpt-5.1-codex","permission_mode":"bypassPermissions","stop_hook_active":true,"last_assistant_message":null}"#,
    r#"{"session_id":"s1","transcript_path":"/t.jsonl","cwd":"/repo","hook_event_name":"AfterAgent","timestamp":"2026-11-29T18:49:48.461Z","prompt":"make a file","prompt_response":"Made it.\nAll tests pass.","stop_hook_active":false}"#,
    r#"{"sessionId":"s1","timestamp":1795978336226,"cwd":"/repo","transcriptPath":"/events.jsonl","stopReason":"end_turn","stop_hook_active":false}"#,
    r#"{"sessionId":"s1","timestamp":1795978336226,"cwd":"/repo","source":"new","initialPrompt":"make a file"}"#,
    r#"{"session_id":"s1","cwd":"/repo","hook_event_name":"agentStop","stop_hook_active":false}"#,
    r#"{"conversation_id":"c1","generation_id":"g2","hook_event_name":"stop","workspace_roots":["/repo","/other"],"status":"completed","loop_count":2}"#,
    r#"{"conversation_id":"c1","generation_id":"g1","hook_event_name":"beforeSubmitPrompt","workspace_roots":["/repo"],"prompt":"make a file"}"#,
    r#"{"timestamp":"2026-11-29T10:30:00.000Z","cwd":"/repo","sessionId":"vs1","hookEventName":"Stop","transcript_path":"/t.json","stop_hook_active":false}"#,
    r#"{"timestamp":"2026-11-29T10:30:00.000Z","cwd":"/repo","sessionId":"vs1","hookEventName":"SessionStart","source":"new"}"#,
];

/// Notes as writers leave them: a proof, a bounded one with a diff, a signed one, two at once.
pub const NOTE_SEEDS: &[&str] = &[
    "prove-it-record: 1\noutcome: PROVEN\ntree: 4b825dc642cb6eb9a060e54bf8d69288fbee4904\nhead: 1111111111111111111111111111111111111111\nverify: e69de29bb2d1d6434b8b29ae775ad8c2e48c5391 100755\nverify-anchor: none\nexit-code: 0\nduration-ms: 1234\ntime: 2026-11-29T12:00:00Z\nhost: cli\nsession: none\ntool: git-prove-it 0.1.0\nSigned-off-by: A U Thor <author@example.com>\n",
    "prove-it-record: 1\noutcome: BOUNDED_CLAIM_SURVIVES\ntree: 4b825dc642cb6eb9a060e54bf8d69288fbee4904\nhead: none\nverify: e69de29bb2d1d6434b8b29ae775ad8c2e48c5391 100755\nverify-anchor: 2222222222222222222222222222222222222222 100755\nexit-code: 0\nduration-ms: 7\ntime: 2026-11-29T12:00:00Z\nhost: claude\nsession: 86ca\ntool: git-prove-it 0.1.0\nidentity: missing\nverify-diff:\n --- verify.sh\n +++ verify.sh\n @@ -1 +1 @@\n -cargo test\n +true\n \nSigned-off-by: git-prove-it <git-prove-it@localhost>\n",
    "prove-it-record: 1\noutcome: PROVEN\ntree: 4b825dc642cb6eb9a060e54bf8d69288fbee4904\nhead: none\nverify: e69de29bb2d1d6434b8b29ae775ad8c2e48c5391 100755\nverify-anchor: none\nexit-code: 0\nduration-ms: 1\ntime: 2026-11-29T12:00:00Z\nhost: cli\nsession: none\ntool: git-prove-it 0.1.0\nSigned-off-by: A U Thor <author@example.com>\nssh-signature: -----BEGIN SSH SIGNATURE-----\nssh-signature: U1NIU0lHAAAAAQ==\nssh-signature: -----END SSH SIGNATURE-----\n",
    "prove-it-record: 1\noutcome: PROVEN\ntree: 4b825dc642cb6eb9a060e54bf8d69288fbee4904\nverify: e69de29bb2d1d6434b8b29ae775ad8c2e48c5391 100755\nexit-code: 0\ntime: 2026-11-29T12:00:00Z\nSigned-off-by: X <x@y>\n\nprove-it-record: 2\nfuture: yes\n",
];

#[cfg(test)]
mod tests {
    //! Bounded property tests: the seeds, mutated by a deterministic xorshift generator, through
    //! the same checks the fuzz targets make. Thousands of inputs, well under a second.

    use super::*;

    struct Rng(u64);

    impl Rng {
        fn next(&mut self) -> u64 {
            let mut x = self.0;
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            self.0 = x;
            x
        }

        fn below(&mut self, n: usize) -> usize {
            usize::try_from(self.next() % (n.max(1) as u64)).unwrap_or(0)
        }
    }

    const INTERESTING: &[&[u8]] = &[
        b"{",
        b"}",
        b"[",
        b"]",
        b"\"",
        b",",
        b":",
        b"\\",
        b"\\u0000",
        b"\\ud800",
        b"\xff",
        b"\xc3",
        b"\n",
        b"\r\n",
        b"null",
        b"true",
        b"-1",
        b"1e999",
        b"0",
        b"\0",
        b" ",
        b"tree: ",
        b"ssh-signature: ",
        b"outcome: PROVEN",
        b"exit-code: 0",
        b"\n\n",
        b"time: 9999-12-31T23:59:59Z",
        b"time: 0000-01-01T00:00:00+01:00",
        b"verify-diff:",
        b"prove-it-record: 1",
        b"e69de29bb2d1d6434b8b29ae775ad8c2e48c5391",
    ];

    /// One byte- or token-level mutation of `data`.
    fn mutate(rng: &mut Rng, data: &mut Vec<u8>) {
        let at = rng.below(data.len() + 1);
        match rng.below(7) {
            0 => data.truncate(at),
            1 if !data.is_empty() => {
                let i = rng.below(data.len());
                data[i] ^= 1 << rng.below(8);
            }
            2 => {
                let token = INTERESTING[rng.below(INTERESTING.len())];
                data.splice(at..at, token.iter().copied());
            }
            3 => {
                let end = (at + rng.below(16)).min(data.len());
                data.drain(at..end);
            }
            4 => {
                let end = (at + rng.below(64)).min(data.len());
                let copy = data[at..end].to_vec();
                let to = rng.below(data.len() + 1);
                data.splice(to..to, copy);
            }
            5 => {
                // Swap two lines: the order of keys matters to the record reader.
                let text = String::from_utf8_lossy(data).into_owned();
                let mut lines: Vec<&str> = text.split('\n').collect();
                let (a, b) = (rng.below(lines.len()), rng.below(lines.len()));
                lines.swap(a, b);
                *data = lines.join("\n").into_bytes();
            }
            _ => {
                let token = INTERESTING[rng.below(INTERESTING.len())];
                let end = (at + token.len()).min(data.len());
                data.splice(at..end, token.iter().copied());
            }
        }
    }

    /// A JSON-level mutation: a field of the payload gets a value of another type, or goes.
    fn mutate_json(rng: &mut Rng, seed: &str) -> Vec<u8> {
        let mut value: serde_json::Value = serde_json::from_str(seed).unwrap();
        let object = value.as_object_mut().unwrap();
        let keys: Vec<String> = object.keys().cloned().collect();
        let key = &keys[rng.below(keys.len())];
        let replacement = match rng.below(8) {
            0 => None,
            1 => Some(serde_json::Value::Null),
            2 => Some(serde_json::json!(42)),
            3 => Some(serde_json::json!(true)),
            4 => Some(serde_json::json!("")),
            5 => Some(serde_json::json!(["/repo"])),
            6 => Some(serde_json::json!({"nested": [1, {"deeper": null}]})),
            _ => Some(serde_json::json!("x".repeat(rng.below(70_000)))),
        };
        match replacement {
            None => {
                object.remove(key);
            }
            Some(replacement) => {
                object.insert(key.clone(), replacement);
            }
        }
        value.to_string().into_bytes()
    }

    #[test]
    fn mutated_hook_payloads_never_panic_and_unreadable_ones_are_answered_visibly() {
        let mut rng = Rng(0x2545_F491_4F6C_DD1D);
        for seed in HOOK_SEEDS {
            hook_input(seed.as_bytes());
            for _ in 0..150 {
                let mut data = seed.as_bytes().to_vec();
                for _ in 0..=rng.below(4) {
                    mutate(&mut rng, &mut data);
                }
                hook_input(&data);
                hook_input(&mutate_json(&mut rng, seed));
            }
        }
        // Deep nesting stops at serde_json's recursion limit, as an error, not a stack overflow.
        hook_input(&[b'['; 100_000]);
        hook_input(format!("{}1{}", "[".repeat(5000), "]".repeat(5000)).as_bytes());
        hook_input(b"");
    }

    #[test]
    fn mutated_notes_never_panic_and_no_record_disappears() {
        // Times at the edges of what RFC 3339 and the renderer can hold.
        for time in [
            "0000-01-01T00:00:00+01:00",
            "9999-12-31T23:59:59-01:00",
            "2026-11-29T12:00:00.123456789Z",
            "2026-02-30T00:00:00Z",
            "2026-11-29T12:00:60Z",
        ] {
            proof_record(
                NOTE_SEEDS[0]
                    .replace("2026-11-29T12:00:00Z", time)
                    .as_bytes(),
            );
        }
        // Regressions: trailing carriage returns split differently once merged (the second
        // found by cargo fuzz, after the property test had found the first).
        proof_record(b"Sign\r");
        proof_record(b"2\n\nJ\n\n\n2om\r\r\r\r\r\r");
        proof_record(b"a\r\r\n\r\n\r");
        let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
        for seed in NOTE_SEEDS {
            proof_record(seed.as_bytes());
            for _ in 0..400 {
                let mut data = seed.as_bytes().to_vec();
                for _ in 0..=rng.below(4) {
                    mutate(&mut rng, &mut data);
                }
                proof_record(&data);
                proof_record(String::from_utf8_lossy(&data).as_bytes());
            }
        }
    }
}
