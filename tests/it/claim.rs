//! `git prove-it claim`: nine lens rounds at once and one oracle, run through fake agent
//! programs that dispatch on `PROVE_IT_ROUND`; exit codes per outcome, 7 and 8.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use predicates::prelude::*;
use serde_json::{Value, json};

use crate::harness::{TestRepo, json_stdout};

const LENS_IDS: [&str; 9] = [
    "counterexamples",
    "logic_traps",
    "boundary_cases",
    "adversarial_inputs",
    "alternative_paradigms",
    "operational_constraints",
    "probabilistic_uncertainty",
    "comparative_baselines",
    "meta_test",
];

const LENS_NAMES: [&str; 9] = [
    "Counterexamples",
    "Logic traps",
    "Boundary cases",
    "Adversarial inputs",
    "Alternative paradigms",
    "Operational constraints",
    "Probabilistic uncertainty",
    "Comparative baselines",
    "Meta-test",
];

const LENS_MODES: [&str; 9] = [
    "falsify",
    "bound",
    "bound",
    "falsify",
    "compare",
    "bound",
    "bound",
    "compare",
    "test_design",
];

const CLAIM: &str = "for every  integer n,\n n + 0 = n";

/// A lens packet exactly in the published shape that passes every check for `round`.
fn lens_packet(round: u8) -> Value {
    let at = usize::from(round) - 1;
    json!({
        "packet_role": "evidence_lens",
        "round": round,
        "lens_id": LENS_IDS[at],
        "lens": LENS_NAMES[at],
        "lens_mode": LENS_MODES[at],
        "original_claim": CLAIM,
        "normalized_claim": "for every integer n, n + 0 = n",
        "scope_assumptions": ["n is a mathematical integer, not a machine word"],
        "pressure_question": "does adding zero ever change n?",
        "strongest_attack": "overflow at the largest integer",
        "smallest_counterexample_or_boundary": "none: adding 0 cannot overflow",
        "strongest_support_found": "0 is the additive identity",
        "effect_on_original_claim": "survives",
        "effect_on_refined_claim": "survives",
        "candidate_fatal_pressure": null,
        "candidate_decisive_support": "the ring axioms",
        "refined_claim_delta": "none",
        "uncertainty": "none for integers",
        "oracle_notes": format!("round {round} found nothing against it"),
    })
}

/// What actually arrived, as the oracle must state it.
struct Arrived {
    received: Vec<u8>,
    missing: Vec<u8>,
    compromised: Vec<u8>,
}

fn all() -> Arrived {
    Arrived {
        received: (1..=9).collect(),
        missing: vec![],
        compromised: vec![],
    }
}

/// Every round but `lost`, which is `missing` or `compromised`.
fn lost(missing: &[u8], compromised: &[u8]) -> Arrived {
    Arrived {
        received: (1..=9)
            .filter(|r| !missing.contains(r) && !compromised.contains(r))
            .collect(),
        missing: missing.to_vec(),
        compromised: compromised.to_vec(),
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

/// A `final_response` exactly in the published template.
fn final_response(outcome: &str, arrived: &Arrived) -> String {
    let state = if arrived.received.len() == 9 {
        "complete"
    } else {
        "incomplete"
    };
    let rows: String = (1..=9)
        .map(|r| {
            format!(
                "| {r} | {} | survives | nothing against it |\n",
                LENS_NAMES[r - 1]
            )
        })
        .collect();
    format!(
        "Prove It — Parallel Subagent Gauntlet\n\n\
         Original claim: for every  integer n, n + 0 = n\n\
         Normalized claim: for every integer n, n + 0 = n\n\
         Execution mode: custom-agent\n\
         Packets received: {}\nMissing packets: {}\nCompromised packets: {}\n\
         Oracle completeness: {state}\n\n\
         Verdict:\n- Outcome: {outcome}\n- Statement: adding zero leaves every integer unchanged\n\
         - Decisive reasons: additive identity (R1, R9)\n\n\
         Tightest surviving claim: for every integer n, n + 0 = n\n\n\
         Round pressure map:\n\
         | Round | Lens | Effect | Key pressure/support |\n\
         |---|---|---|---|\n{rows}\n\
         Valid when:\n- n is an integer\n\n\
         Invalid when:\n- never, for integers\n\n\
         Confidence:\n- Level: high\n- Why: an axiom of the integers\n- Gaps: none\n\n\
         Next tests:\n- a property test over random integers\n",
        list(&arrived.received),
        list(&arrived.missing),
        list(&arrived.compromised),
    )
}

/// An oracle packet exactly in the published shape.
fn oracle_packet(outcome: &str, arrived: &Arrived) -> Value {
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
            "statement": "adding zero leaves every integer unchanged",
            "decisive_reasons": ["additive identity (R1, R9)"],
        },
        "tightest_surviving_claim": "for every integer n, n + 0 = n",
        "valid_when": ["n is an integer"],
        "invalid_when": ["never, for integers"],
        "fatal_pressures_resolved": ["overflow does not apply to mathematical integers (R3)"],
        "decisive_support_resolved": ["additive identity (R1)"],
        "confidence": {"level": "high", "why": "an axiom of the integers", "main_gaps": []},
        "next_tests": ["a property test over random integers"],
        "final_response": final_response(outcome, arrived),
    })
}

/// A shell body that prints `text` exactly.
fn print(text: &str) -> String {
    format!("cat <<'PACKET'\n{text}\nPACKET")
}

/// A fake agent: one shell body per round (01..10), by default the good packet for a lens and
/// `oracle` for round 10. It saves every assignment it reads to `$HOME/in-<round>.json`.
fn agent(repo: &TestRepo, oracle: &Value, overrides: &[(u8, String)]) -> PathBuf {
    let mut bodies: BTreeMap<u8, String> = (1..=9)
        .map(|round| (round, print(&lens_packet(round).to_string())))
        .collect();
    bodies.insert(10, print(&oracle.to_string()));
    for (round, body) in overrides {
        bodies.insert(*round, body.clone());
    }
    let cases: String = bodies
        .iter()
        .map(|(round, body)| format!("{round:02})\n{body}\n;;\n"))
        .collect();
    repo.home_script(
        "agent.sh",
        &format!(
            "cat > \"$HOME/in-$PROVE_IT_ROUND.json\"\ncase \"$PROVE_IT_ROUND\" in\n{cases}*) exit 99 ;;\nesac"
        ),
    )
}

/// The assignment round `round` read on stdin.
fn assignment(repo: &TestRepo, round: u8) -> Value {
    let path = repo.home().join(format!("in-{round:02}.json"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path:?}: {e}"));
    serde_json::from_str(&text).unwrap()
}

fn claim(repo: &TestRepo, agent: &Path, extra: &[&str]) -> assert_cmd::Command {
    let mut args = vec!["claim", CLAIM, "--agent", agent.to_str().unwrap()];
    args.extend_from_slice(extra);
    repo.prove_it(&args)
}

/// Each lens waits at a barrier until all nine have started, and fails if they have not within
/// a generous minute: they pass only when they really run at the same time.
fn barrier_then(round: u8) -> String {
    format!(
        "mkdir -p \"$HOME/barrier\"; touch \"$HOME/barrier/$PROVE_IT_ROUND\"\n\
         i=0\n\
         while [ \"$(ls \"$HOME/barrier\" | wc -l)\" -lt 9 ]; do\n\
           i=$((i+1)); if [ $i -gt 6000 ]; then echo 'not all nine lenses started' >&2; exit 1; fi\n\
           sleep 0.01\n\
         done\n{}",
        print(&lens_packet(round).to_string())
    )
}

#[test]
fn without_an_agent_command_it_stops_with_prove_it_requires_subagents() {
    let repo = TestRepo::with_commit();
    repo.prove_it(&["claim", "all tests pass"])
        .assert()
        .code(8)
        .stdout(predicate::str::starts_with("PROVE_IT_REQUIRES_SUBAGENTS\n"))
        .stdout(predicate::str::contains("never fakes them in-process"));
    // A blank setting is no setting.
    let out = repo
        .prove_it(&["claim", "all tests pass", "--json"])
        .env("PROVE_IT_AGENT", " ")
        .assert()
        .code(8);
    let value = json_stdout(&out);
    assert_eq!(value["status"], "PROVE_IT_REQUIRES_SUBAGENTS");
    assert_eq!(value["result"], "requires_subagents");
}

#[test]
fn nine_good_lenses_run_at_once_and_the_oracles_final_response_is_printed_as_is() {
    let repo = TestRepo::with_commit();
    let oracle = oracle_packet("PROVEN", &all());
    let barriers: Vec<(u8, String)> = (1..=9).map(|r| (r, barrier_then(r))).collect();
    let agent = agent(&repo, &oracle, &barriers);
    let out = claim(&repo, &agent, &["--scope", "integers"])
        .assert()
        .code(0);
    let stdout = String::from_utf8(out.get_output().stdout.clone()).unwrap();
    assert_eq!(stdout, oracle["final_response"].as_str().unwrap());
    // Piped: no progress display, no warning.
    assert_eq!(String::from_utf8_lossy(&out.get_output().stderr), "");

    // Each lens got its own lens only, with the claim as given and as normalised.
    let fourth = assignment(&repo, 4);
    assert_eq!(fourth["packet_role"], "evidence_lens");
    assert_eq!(fourth["round"], 4);
    assert_eq!(fourth["lens_id"], "adversarial_inputs");
    assert_eq!(fourth["lens"], "Adversarial inputs");
    assert_eq!(fourth["lens_mode"], "falsify");
    assert_eq!(fourth["original_claim"], CLAIM);
    assert_eq!(fourth["normalized_claim"], "for every integer n, n + 0 = n");
    assert_eq!(fourth["claim_scope"], "integers");
    assert!(fourth.get("round_packets").is_none());
    assert_eq!(assignment(&repo, 9)["lens_mode"], "test_design");

    // The oracle got all nine packets.
    let oracle_in = assignment(&repo, 10);
    assert_eq!(oracle_in["packet_role"], "oracle_synthesis");
    assert_eq!(oracle_in["round"], 10);
    assert_eq!(oracle_in["lens"], "Oracle synthesis");
    let entries = oracle_in["round_packets"].as_array().unwrap();
    assert_eq!(entries.len(), 9);
    for (i, entry) in entries.iter().enumerate() {
        assert_eq!(entry["round"], i + 1);
        assert_eq!(entry["status"], "received");
        assert_eq!(entry["packet"], lens_packet(u8::try_from(i).unwrap() + 1));
    }
}

#[test]
fn a_crashing_lens_and_a_timed_out_lens_are_missing_and_the_verdict_carries_a_warning() {
    let repo = TestRepo::with_commit();
    let arrived = lost(&[2, 6], &[]);
    let oracle = oracle_packet("NOT_PROVEN", &arrived);
    let agent = agent(
        &repo,
        &oracle,
        &[
            (2, "echo 'model overloaded' >&2; exit 3".into()),
            (6, "sleep 60".into()),
        ],
    );
    let started = std::time::Instant::now();
    claim(&repo, &agent, &["--timeout", "5"])
        .assert()
        .code(4)
        .stdout(oracle["final_response"].as_str().unwrap().to_string())
        .stderr(
            "warning: incomplete gauntlet: 7 of 9 lens packets received (missing: 2, 6; compromised: none)\n",
        );
    assert!(
        started.elapsed().as_secs() < 50,
        "the sleeping lens was not killed"
    );
    let entries = assignment(&repo, 10)["round_packets"].clone();
    assert_eq!(entries[1]["status"], "missing");
    assert_eq!(
        entries[1]["reason"],
        "the agent command exited with code 3: model overloaded"
    );
    assert_eq!(entries[1]["packet"], Value::Null);
    assert_eq!(entries[5]["status"], "missing");
    assert_eq!(entries[5]["reason"], "timed out after 5 s");
    assert_eq!(entries[0]["status"], "received");
}

#[test]
fn fenced_yaml_packets_with_and_without_their_wrapper_key_are_accepted() {
    let repo = TestRepo::with_commit();
    let yaml = |value: &Value| serde_norway::to_string(value).unwrap();
    let mut overrides: Vec<(u8, String)> = (1..=9)
        .map(|round| {
            let packet = json!({ "prove_it_round_packet": lens_packet(round) });
            let text = format!(
                "Here is my packet for round {round}.\n\n```yaml\n{}```\nThat is all.",
                yaml(&packet)
            );
            (round, print(&text))
        })
        .collect();
    let oracle = oracle_packet("BOUNDED_CLAIM_SURVIVES", &all());
    let wrapped = json!({ "prove_it_oracle_packet": oracle.clone() });
    overrides.push((10, print(&format!("```yaml\n{}```", yaml(&wrapped)))));
    let agent = agent(&repo, &oracle, &overrides);
    claim(&repo, &agent, &[])
        .assert()
        .code(6)
        .stdout(oracle["final_response"].as_str().unwrap().to_string());
    let entries = assignment(&repo, 10)["round_packets"].clone();
    assert!(
        entries
            .as_array()
            .unwrap()
            .iter()
            .all(|e| e["status"] == "received"),
        "{entries:#}"
    );
}

#[test]
fn a_lens_packet_carrying_a_verdict_is_compromised_and_not_forwarded() {
    let repo = TestRepo::with_commit();
    let arrived = lost(&[], &[5]);
    let oracle = oracle_packet("DISPROVEN", &arrived);
    let mut verdict = lens_packet(5);
    verdict["verdict"] = json!("PROVEN");
    let agent = agent(&repo, &oracle, &[(5, print(&verdict.to_string()))]);
    let out = claim(&repo, &agent, &["--json"]).assert().code(1);
    let report = json_stdout(&out);
    assert_eq!(report["version"], 1);
    assert_eq!(report["result"], "verdict");
    assert_eq!(report["outcome"], "DISPROVEN");
    assert_eq!(report["complete"], false);
    assert_eq!(report["oracle_packet"], oracle);
    let rounds = report["rounds"].as_array().unwrap();
    assert_eq!(rounds.len(), 10);
    assert_eq!(rounds[4]["name"], "prove_it_05_alternative_paradigms");
    assert_eq!(rounds[4]["status"], "compromised");
    assert_eq!(
        rounds[4]["reason"],
        "it carries a verdict (verdict), which only the oracle gives"
    );
    assert_eq!(rounds[9]["name"], "prove_it_10_oracle_synthesis");
    assert_eq!(rounds[9]["status"], "received");
    let entries = assignment(&repo, 10)["round_packets"].clone();
    assert_eq!(entries[4]["status"], "compromised");
    assert_eq!(entries[4]["packet"], Value::Null);
}

#[test]
fn an_oracle_outcome_outside_the_five_is_compromised_and_no_verdict_is_given() {
    let repo = TestRepo::with_commit();
    let mut oracle = oracle_packet("PROVEN", &all());
    oracle["final_verdict"]["outcome"] = json!("PROBABLY_TRUE");
    let agent = agent(&repo, &oracle, &[]);
    claim(&repo, &agent, &[])
        .assert()
        .code(7)
        .stdout(predicate::str::starts_with("ORACLE_COMPROMISED: "))
        .stdout(predicate::str::contains(
            "  - final_verdict.outcome is \"PROBABLY_TRUE\", not one of PROVEN|DISPROVEN|NOT_PROVEN|INSUFFICIENT_EVIDENCE|BOUNDED_CLAIM_SURVIVES\n",
        ))
        .stdout(predicate::str::contains("  01 Counterexamples"))
        .stdout(predicate::str::contains("Prove It —").not());
}

#[test]
fn an_oracle_without_final_response_is_compromised() {
    let repo = TestRepo::with_commit();
    let mut oracle = oracle_packet("PROVEN", &all());
    oracle.as_object_mut().unwrap().remove("final_response");
    let agent = agent(&repo, &oracle, &[]);
    let out = claim(&repo, &agent, &["--json"]).assert().code(7);
    let report = json_stdout(&out);
    assert_eq!(report["result"], "oracle_compromised");
    assert_eq!(report["outcome"], Value::Null);
    assert_eq!(report["final_response"], Value::Null);
    assert_eq!(
        report["oracle_problems"],
        json!(["final_response is missing"])
    );
    assert_eq!(report["rounds"][9]["status"], "compromised");
}

#[test]
fn an_oracle_claiming_nine_packets_when_one_failed_is_compromised() {
    let repo = TestRepo::with_commit();
    let oracle = oracle_packet("PROVEN", &all());
    let agent = agent(&repo, &oracle, &[(7, "exit 1".into())]);
    claim(&repo, &agent, &[])
        .assert()
        .code(7)
        .stdout(predicate::str::contains(
            "  - packet_completeness.received_rounds claims [1,2,3,4,5,6,7,8,9], but rounds [1,2,3,4,5,6,8,9] arrived\n",
        ))
        .stdout(predicate::str::contains(
            "  - packet_completeness.missing_rounds claims [], but rounds [7] arrived\n",
        ))
        .stdout(predicate::str::contains(
            "  - Packets received: claims \"1, 2, 3, 4, 5, 6, 7, 8, 9\", but rounds \"1, 2, 3, 4, 5, 6, 8, 9\" arrived\n",
        ))
        .stdout(predicate::str::contains(
            "  - Oracle completeness: claims \"complete\", but 8 of 9 packets arrived\n",
        ))
        .stdout(predicate::str::contains(
            "  07 Probabilistic uncertainty   missing: the agent command exited with code 1\n",
        ));
}

#[test]
fn an_oracle_that_fails_is_missing_and_gives_no_verdict() {
    let repo = TestRepo::with_commit();
    let oracle = oracle_packet("PROVEN", &all());
    let agent = agent(
        &repo,
        &oracle,
        &[(10, "echo 'no credits' >&2; exit 2".into())],
    );
    claim(&repo, &agent, &[])
        .assert()
        .code(7)
        .stdout(predicate::str::contains(
            "  - the agent command exited with code 2: no credits\n",
        ));
}

/// Every file under `dir` with its size and modification time.
fn snapshot(dir: &Path) -> BTreeMap<PathBuf, (u64, std::time::SystemTime)> {
    let mut files = BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let entry = entry.unwrap();
            let meta = entry.metadata().unwrap();
            if meta.is_dir() {
                stack.push(entry.path());
            }
            files.insert(entry.path(), (meta.len(), meta.modified().unwrap()));
        }
    }
    files
}

#[test]
fn nothing_is_left_in_the_repository_the_git_dir_or_the_temp_dir() {
    let repo = TestRepo::with_commit();
    let tmp = repo.home().join("tmp");
    std::fs::create_dir(&tmp).unwrap();
    let arrived = lost(&[3], &[]);
    let oracle = oracle_packet("INSUFFICIENT_EVIDENCE", &arrived);
    let agent = agent(&repo, &oracle, &[(3, "sleep 60 & sleep 60".into())]);
    // The repository's snapshot includes its git dir, .git.
    let (repo_before, tmp_before) = (snapshot(&repo.root), snapshot(&tmp));
    claim(&repo, &agent, &["--timeout", "5"])
        .env("TMPDIR", &tmp)
        .assert()
        .code(5);
    assert_eq!(snapshot(&repo.root), repo_before);
    assert_eq!(snapshot(&tmp), tmp_before);
    assert!(tmp_before.is_empty());
    assert_eq!(repo.git(&["notes", "--ref", "prove-it-claims", "list"]), "");
}

#[test]
fn record_stores_the_validated_oracle_packet_readable_by_stock_git() {
    let repo = TestRepo::with_commit();
    let tree = repo.stock_state_tree().unwrap();
    let oracle = oracle_packet("PROVEN", &all());
    let first = agent(&repo, &oracle, &[]);
    claim(&repo, &first, &["--record"])
        .assert()
        .code(0)
        .stderr(format!(
            "recorded in refs/notes/prove-it-claims on state tree {tree}\n"
        ));
    let note = repo.git(&["notes", "--ref", "prove-it-claims", "show", &tree]);
    let stored: Value = serde_json::from_str(&note).unwrap();
    assert_eq!(stored, oracle);

    // A second verdict on the same state follows the first in the note.
    let second = oracle_packet("DISPROVEN", &all());
    let then = agent(&repo, &second, &[]);
    let out = claim(&repo, &then, &["--record", "--json"])
        .assert()
        .code(1);
    assert_eq!(json_stdout(&out)["recorded"]["tree"], tree.as_str());
    let note = repo.git(&["notes", "--ref", "prove-it-claims", "show", &tree]);
    let packets: Vec<Value> = serde_json::Deserializer::from_str(&note)
        .into_iter()
        .map(Result::unwrap)
        .collect();
    assert_eq!(packets, [oracle, second]);
    let log = repo.git(&["log", "--format=%s", "refs/notes/prove-it-claims"]);
    assert_eq!(
        log,
        format!(
            "prove-it: claim verdict DISPROVEN for tree {tree}\nprove-it: claim verdict PROVEN for tree {tree}\n"
        )
    );
}

#[test]
fn a_compromised_oracle_is_never_recorded() {
    let repo = TestRepo::with_commit();
    let mut oracle = oracle_packet("PROVEN", &all());
    oracle["round"] = json!(9);
    let agent = agent(&repo, &oracle, &[]);
    claim(&repo, &agent, &["--record"])
        .assert()
        .code(7)
        .stderr("not recorded: there is no valid oracle packet to record\n");
    let out = repo.git_output(&["rev-parse", "--verify", "-q", "refs/notes/prove-it-claims"]);
    assert!(!out.status.success());
}

#[test]
fn outside_a_repository_a_claim_runs_but_record_is_an_error() {
    let repo = TestRepo::with_commit();
    let oracle = oracle_packet("PROVEN", &all());
    let agent = agent(&repo, &oracle, &[]);
    let outside = repo.home().join("not-a-repo");
    std::fs::create_dir(&outside).unwrap();
    let run = |extra: &[&str]| {
        let mut cmd = repo.prove_it(&["claim", CLAIM, "--agent", agent.to_str().unwrap()]);
        cmd.args(extra)
            .current_dir(&outside)
            .env("GIT_CEILING_DIRECTORIES", repo.home());
        cmd.assert()
    };
    run(&[]).code(0);
    run(&["--record"])
        .code(2)
        .stderr(predicate::str::contains("error: not in a git repository"));
}

#[test]
fn the_agent_comes_from_the_environment_else_git_config() {
    let repo = TestRepo::with_commit();
    let oracle = oracle_packet("PROVEN", &all());
    let agent = agent(&repo, &oracle, &[]);
    repo.prove_it(&["claim", "x"])
        .env("PROVE_IT_AGENT", &agent)
        .assert()
        .code(0);
    repo.git(&["config", "prove-it.agent", agent.to_str().unwrap()]);
    repo.prove_it(&["claim", "x"]).assert().code(0);
    // The flag beats both.
    repo.prove_it(&["claim", "x", "--agent", "exit 9"])
        .env("PROVE_IT_AGENT", &agent)
        .assert()
        .code(7)
        .stdout(predicate::str::contains("exited with code 9"));
}

#[test]
fn a_blank_claim_or_a_bad_timeout_is_a_usage_error() {
    let repo = TestRepo::with_commit();
    repo.prove_it(&["claim", " \n ", "--agent", "true"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("error: the claim is empty"));
    repo.prove_it(&["claim", "x", "--agent", "true"])
        .env("PROVE_IT_CLAIM_TIMEOUT", "soon")
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "PROVE_IT_CLAIM_TIMEOUT must be a whole number of seconds above 0",
        ));
}

/// The fake agent the claim guide shows must keep working as the protocol changes.
#[test]
fn the_guides_fake_agent_gets_a_proven_verdict() {
    let readme =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/claim.md"))
            .unwrap();
    let start = readme
        .find("<summary>A fake agent")
        .expect("docs/claim.md shows a fake agent");
    let body = &readme[start..];
    let body = &body[body.find("```sh\n").unwrap() + "```sh\n".len()..];
    let script = &body[..body.find("```").unwrap()];
    let repo = TestRepo::with_commit();
    let agent = repo.home_script("fake-agent", script.trim_start_matches("#!/bin/sh\n"));
    claim(&repo, &agent, &[])
        .assert()
        .code(0)
        .stdout(predicate::str::starts_with(
            "Prove It — Parallel Subagent Gauntlet\n",
        ))
        .stdout(predicate::str::contains("- Outcome: PROVEN\n"));
}

/// The ten packets of a gauntlet, as a Prove It skill's coordinator would hold them.
fn packet_set(oracle: &Value) -> Vec<Value> {
    let mut packets: Vec<Value> = (1..=9).map(lens_packet).collect();
    packets.push(oracle.clone());
    packets
}

fn validate(repo: &TestRepo, input: &str, extra: &[&str]) -> assert_cmd::Command {
    let mut args = vec!["claim", "--validate"];
    args.extend_from_slice(extra);
    let mut cmd = repo.prove_it(&args);
    cmd.write_stdin(input.to_string());
    cmd
}

#[test]
fn validate_relays_a_valid_packet_set_in_every_accepted_form() {
    let repo = TestRepo::with_commit();
    let oracle = oracle_packet("BOUNDED_CLAIM_SURVIVES", &all());
    let packets = packet_set(&oracle);
    let wrapped: Vec<Value> = packets
        .iter()
        .enumerate()
        .map(|(i, p)| {
            let key = if i < 9 {
                "prove_it_round_packet"
            } else {
                "prove_it_oracle_packet"
            };
            json!({ key: p })
        })
        .collect();
    let yaml = |v: &Value| serde_norway::to_string(v).unwrap();
    let forms = [
        // A JSON stream of bare packets.
        packets
            .iter()
            .map(Value::to_string)
            .collect::<Vec<_>>()
            .join("\n"),
        // One JSON document: a list of wrapped packets.
        Value::Array(wrapped.clone()).to_string(),
        // A YAML stream of wrapped packets.
        wrapped.iter().map(yaml).collect::<Vec<_>>().join("---\n"),
        // Fenced blocks with prose around them, as the subagents returned them.
        wrapped
            .iter()
            .enumerate()
            .map(|(i, p)| format!("Round {} returned:\n\n```yaml\n{}```\n", i + 1, yaml(p)))
            .collect(),
    ];
    for input in forms {
        validate(&repo, &input, &[])
            .assert()
            .code(6)
            .stdout(oracle["final_response"].as_str().unwrap().to_string())
            .stderr("");
    }
}

#[test]
fn validate_holds_the_oracle_to_what_arrived_and_reports_as_claim_does() {
    let repo = TestRepo::with_commit();
    // Round 4 never came back and round 8's packet gives a verdict, but the oracle says all nine
    // arrived: compromised, exit 7, with the rounds listed as claim lists them.
    let oracle = oracle_packet("PROVEN", &all());
    let mut packets = packet_set(&oracle);
    packets[7]["final_verdict"] = json!({"outcome": "PROVEN"});
    packets.remove(3);
    let input: String = packets.iter().map(|p| format!("{p}\n")).collect();
    validate(&repo, &input, &[])
        .assert()
        .code(7)
        .stdout(predicate::str::starts_with("ORACLE_COMPROMISED: "))
        .stdout(predicate::str::contains(
            "  - packet_completeness.missing_rounds claims [], but rounds [4] arrived\n",
        ))
        .stdout(predicate::str::contains(
            "  04 Adversarial inputs          missing: no packet for this round in the input\n",
        ))
        .stdout(predicate::str::contains(
            "  08 Comparative baselines       compromised: it carries a verdict (final_verdict), which only the oracle gives\n",
        ));

    // An honest oracle over the same set gives its verdict, with claim's warning.
    let honest = oracle_packet("NOT_PROVEN", &lost(&[4], &[8]));
    let last = packets.len() - 1;
    packets[last] = honest.clone();
    let input: String = packets.iter().map(|p| format!("{p}\n")).collect();
    validate(&repo, &input, &[])
        .assert()
        .code(4)
        .stdout(honest["final_response"].as_str().unwrap().to_string())
        .stderr(
            "warning: incomplete gauntlet: 7 of 9 lens packets received (missing: 4; compromised: 8)\n",
        );
    let out = validate(&repo, &input, &["--json"]).assert().code(4);
    let report = json_stdout(&out);
    assert_eq!(report["result"], "verdict");
    assert_eq!(report["outcome"], "NOT_PROVEN");
    assert_eq!(report["agent"], Value::Null);
    assert_eq!(
        report["claim"]["normalized"],
        "for every integer n, n + 0 = n"
    );
    assert_eq!(report["rounds"][9]["name"], "prove_it_10_oracle_synthesis");
    assert_eq!(report["rounds"][0]["duration_ms"], Value::Null);
}

#[test]
fn validate_refuses_a_packet_it_cannot_place_and_needs_no_agent() {
    let repo = TestRepo::with_commit();
    validate(&repo, "{\"round\": 12}", &[])
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "error: packet 1 of the input has no round from 1 to 10",
        ));
    // Nothing at all: every round missing, no oracle, no verdict.
    validate(&repo, "", &[])
        .assert()
        .code(7)
        .stdout(predicate::str::contains(
            "  01, 02, 03, 04, 05, 06, 07, 08, 09 missing: no packet for this round in the input\n",
        ));
    repo.prove_it(&["claim", "x", "--validate"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("cannot be used with"));
}

/// A PATH holding only `sh` and the tools the fake hosts need, plus `extra`.
fn bare_path(repo: &TestRepo, extra: &[(&str, &str)]) -> PathBuf {
    let bin = repo.home().join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    for tool in ["sh", "cat", "printf", "sleep"] {
        let found = ["/bin", "/usr/bin"]
            .iter()
            .map(|dir| Path::new(dir).join(tool))
            .find(|path| path.exists())
            .unwrap();
        let link = bin.join(tool);
        if !link.exists() {
            std::os::unix::fs::symlink(found, link).unwrap();
        }
    }
    for (name, body) in extra {
        let script = repo.home_script(name, body);
        std::fs::rename(script, bin.join(name)).unwrap();
    }
    bin
}

/// Regression: with `codex` not on PATH the preset ran ten rounds, each failing with
/// `sh: 1: codex: not found`, and exited 7; it now stops once, before any round.
#[test]
fn a_preset_whose_program_is_missing_stops_before_any_round() {
    let repo = TestRepo::with_commit();
    let bin = bare_path(&repo, &[]);
    for preset in ["claude", "codex", "gemini"] {
        repo.prove_it(&["claim", "x", "--agent", preset])
            .env("PATH", &bin)
            .assert()
            .code(8)
            .stdout(format!(
                "PROVE_IT_REQUIRES_SUBAGENTS\nthe {preset} preset runs `{preset}`, which is not on PATH\n\
                 hint: install {preset} or put it on PATH, or pass --agent <command>\n"
            ))
            .stderr("");
    }
}

/// Regression: in an untrusted folder the Gemini preset printed ten missing rounds full of raw
/// ANSI escapes; Gemini CLI's trust requirement is now checked first.
#[test]
fn the_gemini_preset_in_an_untrusted_folder_stops_before_any_round() {
    let repo = TestRepo::with_commit();
    // A gemini that would leave a mark if any round ran it.
    let bin = bare_path(
        &repo,
        &[("gemini", "cat > /dev/null; : > \"$HOME/gemini-ran\"")],
    );
    let out = repo
        .prove_it(&["claim", "x", "--agent", "gemini", "--json"])
        .env("PATH", &bin)
        .assert()
        .code(8);
    let report = json_stdout(&out);
    assert_eq!(report["status"], "PROVE_IT_REQUIRES_SUBAGENTS");
    let reason = report["reason"].as_str().unwrap();
    assert!(
        reason.starts_with("Gemini CLI runs nothing headless in an untrusted folder"),
        "{reason}"
    );
    assert!(
        report["hint"]
            .as_str()
            .unwrap()
            .contains("GEMINI_CLI_TRUST_WORKSPACE=true")
    );
    assert!(!repo.home().join("gemini-ran").exists());
    // Trusted for this run, the rounds do run it.
    repo.prove_it(&["claim", "x", "--agent", "gemini"])
        .env("PATH", &bin)
        .env("GEMINI_CLI_TRUST_WORKSPACE", "true")
        .assert()
        .code(7);
    assert!(repo.home().join("gemini-ran").exists());
}

#[test]
fn reasons_lose_terminal_escapes_and_identical_failures_share_one_line() {
    let repo = TestRepo::with_commit();
    let agent = repo.home_script(
        "colourful",
        "cat > /dev/null; printf '\\033[31mError:\\033[0m not trusted\\033]0;title\\007\\n' >&2; exit 55",
    );
    let out = claim(&repo, &agent, &[]).assert().code(7);
    let stdout = String::from_utf8(out.get_output().stdout.clone()).unwrap();
    assert!(!stdout.contains('\u{1b}'), "{stdout:?}");
    assert!(
        stdout.contains(
            "rounds:\n  01, 02, 03, 04, 05, 06, 07, 08, 09, 10 missing: the agent command exited with code 55: Error: not trusted\n"
        ),
        "{stdout}"
    );
}

#[test]
fn a_verdict_recorded_in_the_earlier_shape_still_reads_after_a_new_one() {
    let repo = TestRepo::with_commit();
    let tree = repo.stock_state_tree().unwrap();
    // A note exactly as claim --record stored it before the published shapes.
    let earlier = json!({
        "packet_role": "oracle_synthesis",
        "round": 10,
        "outcome": "DISPROVEN",
        "statement": "n = 3 breaks it",
        "decisive_reasons": ["R1"],
        "tightest_surviving_claim": "none",
        "valid_when": [],
        "invalid_when": [],
        "confidence": "high",
        "next_tests": [],
        "completeness": {"packets_received": 9, "missing": [], "compromised": []},
        "final_response": "# Prove It — Parallel Subagent Gauntlet\n",
    });
    let file = repo.home().join("earlier.json");
    std::fs::write(
        &file,
        serde_json::to_string_pretty(&earlier).unwrap() + "\n",
    )
    .unwrap();
    repo.git(&[
        "notes",
        "--ref",
        "prove-it-claims",
        "add",
        "-F",
        file.to_str().unwrap(),
        &tree,
    ]);
    let oracle = oracle_packet("PROVEN", &all());
    let agent = agent(&repo, &oracle, &[]);
    let out = claim(&repo, &agent, &["--record", "--json"])
        .assert()
        .code(0);
    assert_eq!(
        json_stdout(&out)["recorded"]["verdicts"],
        json!([
            {"outcome": "DISPROVEN", "shape": "earlier", "statement": "n = 3 breaks it"},
            {"outcome": "PROVEN", "shape": "published", "statement": "adding zero leaves every integer unchanged"},
        ])
    );
    let note = repo.git(&["notes", "--ref", "prove-it-claims", "show", &tree]);
    let packets: Vec<Value> = serde_json::Deserializer::from_str(&note)
        .into_iter()
        .map(Result::unwrap)
        .collect();
    assert_eq!(packets, [earlier, oracle]);
}

#[test]
fn lens_packets_in_every_published_form_are_received() {
    let repo = TestRepo::with_commit();
    let yaml = |value: &Value| serde_norway::to_string(value).unwrap();
    let overrides: Vec<(u8, String)> = (1..=9)
        .map(|round| {
            let bare = lens_packet(round);
            let wrapped = json!({ "prove_it_round_packet": bare.clone() });
            let text = match round % 5 {
                0 => yaml(&bare),
                1 => yaml(&wrapped),
                2 => format!("```json\n{wrapped:#}\n```"),
                3 => format!("Packet follows. {bare} Done."),
                _ => format!("```\n{}```", yaml(&bare)),
            };
            (round, print(&text))
        })
        .collect();
    let oracle = oracle_packet("PROVEN", &all());
    let agent = agent(&repo, &oracle, &overrides);
    claim(&repo, &agent, &[])
        .assert()
        .code(0)
        .stdout(oracle["final_response"].as_str().unwrap().to_string());
}

/// The Codex agents are the Claude Code agents in the form Codex loads: the same name,
/// description and instructions, so that the two hosts run one protocol.
#[test]
fn the_codex_agents_say_what_the_claude_code_agents_say() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    for agent in ["prove_it_lens", "prove_it_oracle"] {
        let md = std::fs::read_to_string(root.join(format!("agents/{agent}.md"))).unwrap();
        let toml =
            std::fs::read_to_string(root.join(format!("codex/agents/{agent}.toml"))).unwrap();
        let (front, body) = md
            .strip_prefix("---\n")
            .and_then(|rest| rest.split_once("\n---\n"))
            .expect("frontmatter");
        let field = |text: &str, key: &str| {
            text.lines()
                .find_map(|line| line.strip_prefix(&format!("{key}: ")))
                .or_else(|| {
                    text.lines()
                        .find_map(|line| line.strip_prefix(&format!("{key} = ")))
                })
                .map(str::to_string)
        };
        assert_eq!(field(front, "name").as_deref(), Some(agent));
        assert_eq!(field(&toml, "name"), Some(format!("\"{agent}\"")));
        assert_eq!(field(front, "description"), field(&toml, "description"));
        let instructions = toml
            .split_once("developer_instructions = '''\n")
            .and_then(|(_, rest)| rest.strip_suffix("'''\n"))
            .expect("developer_instructions as a literal string");
        assert_eq!(instructions, body.trim_start_matches('\n'), "{agent}");
    }
}
