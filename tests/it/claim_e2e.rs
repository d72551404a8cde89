//! `git prove-it claim --agent claude` end to end: ten real `claude -p` runs of the real Claude
//! Code against a fake Anthropic server on 127.0.0.1, which answers each run from the
//! assignment it was given, as a model following the published Prove It protocol would.
//!
//! These tests are ignored by default (they start ten Claude Code processes); run them with
//! `.ci/install-hosts DIR`, `PATH=DIR/bin:$PATH cargo test _e2e -- --ignored`. Asked for and
//! without the binary they fail rather than pass.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

use serde_json::{Value, json};

use crate::fake_model::anthropic::Anthropic;
use crate::fake_model::responses::Responses;
use crate::fake_model::{Api, FakeModel, Reply, Response, Script};
use crate::harness::{TestRepo, json_stdout};

const CLAIM: &str = "for every integer n, n + 0 = n";
/// How long the nine lens runs wait for one another at the fake server: far longer than nine
/// processes need to start, far shorter than the round timeout.
const BARRIER: Duration = Duration::from_secs(120);

/// The Claude Code binary; a test that asks for it fails without it, saying how to install it.
fn claude(_test: &str) -> PathBuf {
    crate::claude_e2e::INFO.binary()
}

/// What the fake server saw of the lens runs.
#[derive(Default)]
struct Seen {
    /// The rounds whose lens run has asked the model, so far.
    rounds: BTreeSet<u8>,
    /// Whether all nine asked before any of them was answered.
    overlapped: bool,
}

/// A model that answers every run of the gauntlet from its assignment: each lens with a packet
/// for its round (or, for `failing`, an API error that ends the run), the oracle with a packet
/// whose completeness is exactly what its round_packets say arrived. Lens answers wait until
/// all nine runs have asked, which they can only do when they run at the same time.
struct Gauntlet {
    failing: Option<u8>,
    /// The oracle claims all nine packets arrived, whatever its round_packets say.
    lying: bool,
    seen: Arc<(Mutex<Seen>, Condvar)>,
}

/// The first JSON object in `text` that starts with `{"packet_role":`: an assignment.
fn assignment(texts: &[String]) -> Option<Value> {
    texts.iter().find_map(|text| {
        let at = text.find("{\"packet_role\":")?;
        serde_json::Deserializer::from_str(&text[at..])
            .into_iter::<Value>()
            .next()?
            .ok()
    })
}

fn lens_packet(assignment: &Value) -> Value {
    json!({
        "packet_role": "evidence_lens",
        "round": assignment["round"],
        "lens_id": assignment["lens_id"],
        "lens": assignment["lens"],
        "lens_mode": assignment["lens_mode"],
        "original_claim": assignment["original_claim"],
        "normalized_claim": assignment["normalized_claim"],
        "scope_assumptions": ["n is a mathematical integer"],
        "pressure_question": "does adding zero ever change n?",
        "strongest_attack": "overflow at the largest machine integer",
        "smallest_counterexample_or_boundary": "none: adding 0 cannot overflow",
        "strongest_support_found": "0 is the additive identity",
        "effect_on_original_claim": "survives",
        "effect_on_refined_claim": "survives",
        "candidate_fatal_pressure": null,
        "candidate_decisive_support": "the ring axioms",
        "refined_claim_delta": "none",
        "uncertainty": "none for integers",
        "oracle_notes": "nothing against it",
    })
}

fn list(rounds: &[u64]) -> String {
    if rounds.is_empty() {
        "none".into()
    } else {
        rounds
            .iter()
            .map(u64::to_string)
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// The oracle's answer: fenced YAML under its wrapper key, holding exactly what arrived, or
/// (`lying`) all nine rounds as received.
fn oracle_answer(assignment: &Value, lying: bool) -> String {
    let entries = assignment["round_packets"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let rounds = |status: &str| -> Vec<u64> {
        entries
            .iter()
            .filter(|e| lying && status == "received" || !lying && e["status"] == status)
            .filter_map(|e| e["round"].as_u64())
            .collect()
    };
    let (received, missing, compromised) =
        (rounds("received"), rounds("missing"), rounds("compromised"));
    let complete = received.len() == 9;
    let outcome = if complete {
        "PROVEN"
    } else {
        "BOUNDED_CLAIM_SURVIVES"
    };
    let rows: String = entries
        .iter()
        .map(|e| {
            format!(
                "| {} | {} | {} | none |\n",
                e["round"],
                e["lens"].as_str().unwrap_or(""),
                e["status"].as_str().unwrap_or("")
            )
        })
        .collect();
    let response = format!(
        "Prove It — Parallel Subagent Gauntlet\n\n\
         Original claim: {CLAIM}\nNormalized claim: {CLAIM}\nExecution mode: custom-agent\n\
         Packets received: {}\nMissing packets: {}\nCompromised packets: {}\n\
         Oracle completeness: {}\n\n\
         Verdict:\n- Outcome: {outcome}\n- Statement: adding zero leaves every integer unchanged\n\
         - Decisive reasons: additive identity (R1, R9)\n\n\
         Tightest surviving claim: {CLAIM}\n\n\
         Round pressure map:\n| Round | Lens | Effect | Key pressure/support |\n|---|---|---|---|\n{rows}\n\
         Valid when:\n- n is an integer\n\nInvalid when:\n- never, for integers\n\n\
         Confidence:\n- Level: high\n- Why: an axiom\n- Gaps: the missing rounds\n\n\
         Next tests:\n- a property test over random integers\n",
        list(&received),
        list(&missing),
        list(&compromised),
        if complete { "complete" } else { "incomplete" },
    );
    let packet = json!({"prove_it_oracle_packet": {
        "packet_role": "oracle_synthesis",
        "round": 10,
        "lens": "Oracle synthesis",
        "packet_completeness": {
            "received_rounds": received,
            "missing_rounds": missing,
            "compromised_rounds": compromised,
        },
        "final_verdict": {
            "outcome": outcome,
            "statement": "adding zero leaves every integer unchanged",
            "decisive_reasons": ["additive identity (R1, R9)"],
        },
        "tightest_surviving_claim": CLAIM,
        "valid_when": ["n is an integer"],
        "invalid_when": ["never, for integers"],
        "fatal_pressures_resolved": [],
        "decisive_support_resolved": ["additive identity (R1)"],
        "confidence": {"level": "high", "why": "an axiom", "main_gaps": []},
        "next_tests": ["a property test over random integers"],
        "final_response": response,
    }});
    format!(
        "```yaml\n{}```\n",
        serde_norway::to_string(&packet).expect("a packet serialises")
    )
}

impl Gauntlet {
    /// Note that `round` asked, and wait (bounded) until all nine have.
    fn arrive(&self, round: u8) {
        let (lock, wake) = &*self.seen;
        let mut seen = lock.lock().unwrap();
        seen.rounds.insert(round);
        if seen.rounds.len() == 9 {
            seen.overlapped = true;
            wake.notify_all();
        }
        let _ = wake
            .wait_timeout_while(seen, BARRIER, |seen| seen.rounds.len() < 9)
            .unwrap();
    }
}

impl Api for Gauntlet {
    fn is_agent_turn(&self, method: &str, path: &str, body: &Value) -> bool {
        Anthropic.is_agent_turn(method, path, body)
    }

    fn user_texts(&self, body: &Value) -> Vec<String> {
        Anthropic.user_texts(body)
    }

    fn respond(&self, method: &str, path: &str, body: &Value, reply: Option<&Reply>) -> Response {
        let Some(assignment) = reply.and_then(|_| assignment(&self.user_texts(body))) else {
            return Anthropic.respond(method, path, body, reply);
        };
        let round = assignment["round"]
            .as_u64()
            .and_then(|r| u8::try_from(r).ok());
        let text = match (assignment["packet_role"].as_str(), round) {
            (Some("evidence_lens"), Some(round)) => {
                self.arrive(round);
                if self.failing == Some(round) {
                    return Response {
                        status: 400,
                        content_type: "application/json",
                        body: json!({"type": "error", "error": {"type": "invalid_request_error",
                            "message": "this lens is made to fail"}})
                        .to_string(),
                    };
                }
                lens_packet(&assignment).to_string()
            }
            (Some("oracle_synthesis"), _) => oracle_answer(&assignment, self.lying),
            _ => "no assignment recognised".to_string(),
        };
        // The scripted replies take a 'static text; a test leaks these few.
        let text: &'static str = Box::leak(text.into_boxed_str());
        Anthropic.respond(method, path, body, Some(&Reply::Text(text)))
    }
}

/// Run `git prove-it claim CLAIM --agent claude --json` in `repo`, with the real Claude Code on
/// PATH pointed at `server`.
fn run_claim(repo: &TestRepo, claude: &Path, server: &FakeModel) -> assert_cmd::assert::Assert {
    let config = repo.home().join("claude-config");
    std::fs::create_dir_all(&config).unwrap();
    let dir = claude.parent().expect("the binary has a directory");
    let path = std::env::join_paths(std::iter::once(dir.to_path_buf()).chain(
        std::env::split_paths(&crate::harness::path_with_our_binary()),
    ))
    .unwrap();
    repo.prove_it(&[
        "claim",
        CLAIM,
        "--agent",
        "claude",
        "--json",
        "--timeout",
        "300",
    ])
    .env("PATH", path)
    .env("ANTHROPIC_BASE_URL", server.base_url())
    .env("ANTHROPIC_API_KEY", "sk-ant-fake-key-for-tests")
    .env("CLAUDE_CONFIG_DIR", &config)
    .env("DISABLE_TELEMETRY", "1")
    .env("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1")
    .env("DISABLE_AUTOUPDATER", "1")
    .timeout(Duration::from_secs(900))
    .assert()
}

fn gauntlet(failing: Option<u8>, lying: bool) -> (FakeModel, Arc<(Mutex<Seen>, Condvar)>) {
    let seen = Arc::new((Mutex::new(Seen::default()), Condvar::new()));
    let api = Gauntlet {
        failing,
        lying,
        seen: Arc::clone(&seen),
    };
    (
        FakeModel::start(api, Script::new(vec![], Reply::Text("unused"))),
        seen,
    )
}

/// The oracle's assignment as the real CLI passed it to the model.
fn oracle_assignment(server: &FakeModel) -> Value {
    server
        .agent_turns()
        .iter()
        .filter_map(|request| assignment(&request.user_texts))
        .find(|a| a["packet_role"] == "oracle_synthesis")
        .expect("the oracle run asked the model")
}

#[test]
#[ignore = "drives the real claude CLI; .ci/install-hosts, then cargo test _e2e -- --ignored"]
fn claim_e2e_ten_real_claude_runs_give_the_oracles_verdict() {
    let claude = claude("claim_e2e_ten_real_claude_runs_give_the_oracles_verdict");
    let repo = TestRepo::with_commit();
    let (server, seen) = gauntlet(None, false);
    let out = run_claim(&repo, &claude, &server);
    let report = json_stdout(&out);
    let context = format!("{report:#}\n{}", server.describe());
    assert_eq!(out.get_output().status.code(), Some(0), "{context}");
    assert_eq!(report["result"], "verdict", "{context}");
    assert_eq!(report["outcome"], "PROVEN", "{context}");
    assert_eq!(report["complete"], true, "{context}");
    let rounds = report["rounds"].as_array().unwrap();
    assert_eq!(rounds.len(), 10);
    assert!(
        rounds.iter().all(|r| r["status"] == "received"),
        "{context}"
    );
    assert!(
        seen.0.lock().unwrap().overlapped,
        "the nine lens runs did not overlap"
    );
    // Ten runs asked the model, each once with its own assignment.
    let asked: BTreeSet<u64> = server
        .agent_turns()
        .iter()
        .filter_map(|request| assignment(&request.user_texts)?["round"].as_u64())
        .collect();
    assert_eq!(asked, (1..=10).collect(), "{context}");
    let final_response = report["final_response"].as_str().unwrap();
    assert!(final_response.starts_with("Prove It — Parallel Subagent Gauntlet\n"));
    assert!(final_response.contains("\n- Outcome: PROVEN\n"));
    assert!(final_response.contains("\nPackets received: 1, 2, 3, 4, 5, 6, 7, 8, 9\n"));
}

#[test]
#[ignore = "drives the real claude CLI; .ci/install-hosts, then cargo test _e2e -- --ignored"]
fn claim_e2e_a_failing_lens_is_missing_and_the_oracle_is_held_to_it() {
    let claude = claude("claim_e2e_a_failing_lens_is_missing_and_the_oracle_is_held_to_it");
    let repo = TestRepo::with_commit();
    let (server, seen) = gauntlet(Some(5), false);
    let out = run_claim(&repo, &claude, &server);
    let report = json_stdout(&out);
    let context = format!("{report:#}\n{}", server.describe());
    assert_eq!(out.get_output().status.code(), Some(6), "{context}");
    assert_eq!(report["outcome"], "BOUNDED_CLAIM_SURVIVES", "{context}");
    assert_eq!(report["complete"], false, "{context}");
    let fifth = &report["rounds"][4];
    assert_eq!(fifth["status"], "missing", "{context}");
    assert!(
        fifth["reason"]
            .as_str()
            .is_some_and(|r| r.starts_with("the agent command exited with code ")),
        "{context}"
    );
    assert!(
        seen.0.lock().unwrap().overlapped,
        "the nine lens runs did not overlap"
    );
    // The oracle was told round 5 is missing, and its packet, which says so, was accepted.
    let entries = oracle_assignment(&server)["round_packets"].clone();
    assert_eq!(entries[4]["status"], "missing", "{context}");
    assert_eq!(entries[4]["packet"], Value::Null, "{context}");
    assert_eq!(
        report["oracle_packet"]["packet_completeness"]["missing_rounds"],
        json!([5]),
        "{context}"
    );
    assert!(
        report["final_response"]
            .as_str()
            .unwrap()
            .contains("\nMissing packets: 5\n"),
        "{context}"
    );
}

#[test]
#[ignore = "drives the real claude CLI; .ci/install-hosts, then cargo test _e2e -- --ignored"]
fn claim_e2e_an_oracle_claiming_all_nine_when_one_failed_is_compromised() {
    let claude = claude("claim_e2e_an_oracle_claiming_all_nine_when_one_failed_is_compromised");
    let repo = TestRepo::with_commit();
    let (server, _) = gauntlet(Some(2), true);
    let out = run_claim(&repo, &claude, &server);
    let report = json_stdout(&out);
    let context = format!("{report:#}\n{}", server.describe());
    assert_eq!(out.get_output().status.code(), Some(7), "{context}");
    assert_eq!(report["result"], "oracle_compromised", "{context}");
    assert_eq!(report["final_response"], Value::Null, "{context}");
    assert_eq!(report["rounds"][1]["status"], "missing", "{context}");
    let problems: Vec<&str> = report["oracle_problems"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(Value::as_str)
        .collect();
    assert!(
        problems.contains(&"packet_completeness.missing_rounds claims [], but rounds [2] arrived"),
        "{context}"
    );
}

/// This repository is also the Claude Code plugin: `.claude-plugin/`, `skills/`, `agents/`.
fn plugin_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

#[test]
#[ignore = "drives the real claude CLI; .ci/install-hosts, then cargo test _e2e -- --ignored"]
fn claim_e2e_the_plugin_offers_the_prove_it_skill_and_both_agents() {
    let claude = claude("claim_e2e_the_plugin_offers_the_prove_it_skill_and_both_agents");
    let repo = TestRepo::with_commit();
    let server = FakeModel::start(
        Anthropic,
        Script::new(vec![], Reply::Text("Nothing to do.")),
    );
    let config = repo.home().join("claude-config");
    std::fs::create_dir_all(&config).unwrap();
    let out = repo
        .command(&claude)
        .args(["-p", "hello", "--output-format", "text", "--plugin-dir"])
        .arg(plugin_dir())
        .env("ANTHROPIC_BASE_URL", server.base_url())
        .env("ANTHROPIC_API_KEY", "sk-ant-fake-key-for-tests")
        .env("CLAUDE_CONFIG_DIR", &config)
        .env("DISABLE_TELEMETRY", "1")
        .env("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1")
        .env("DISABLE_AUTOUPDATER", "1")
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", server.describe());
    // The skill is offered to the Skill tool and both agents to the Agent tool, by the names
    // the skill's text uses.
    assert_offered(
        &server,
        &[
            "- prove-it:prove-it: Adversarial adjudication of one concrete claim",
            "- prove-it:prove_it_lens: One lens of the Prove It gauntlet",
            "- prove-it:prove_it_oracle: The oracle of the Prove It gauntlet",
        ],
    );
}

/// Every one of `listed` is in the first request the host made of the model.
fn assert_offered(server: &FakeModel, listed: &[&str]) {
    let turn = server
        .agent_turns()
        .into_iter()
        .next()
        .expect("an agent turn");
    let shown = turn.body.to_string();
    for listed in listed {
        assert!(shown.contains(listed), "{listed:?} not offered: {shown}");
    }
}

/// A `CODEX_HOME` with the fake provider, the prove-it skill in `skills/` and both agents in
/// `agents/`, installed as ADAPTERS.md says.
fn codex_home_with_the_gauntlet(repo: &TestRepo, server: &FakeModel) -> PathBuf {
    let home = repo.home().join("codex-home");
    std::fs::create_dir_all(home.join("skills/prove-it")).unwrap();
    std::fs::create_dir_all(home.join("agents")).unwrap();
    let config = format!(
        "model = \"gpt-5.1-codex\"\nmodel_provider = \"fake\"\n\
         check_for_update_on_startup = false\napproval_policy = \"never\"\n\
         sandbox_mode = \"danger-full-access\"\n\n[model_providers.fake]\nname = \"fake\"\n\
         base_url = \"{}/v1\"\nwire_api = \"responses\"\nenv_key = \"PROVE_IT_FAKE_OPENAI_KEY\"\n\n\
         [features]\nplugins = false\nremote_plugin = false\napps = false\n",
        server.base_url()
    );
    std::fs::write(home.join("config.toml"), config).unwrap();
    let source = plugin_dir();
    std::fs::copy(
        source.join("skills/prove-it/SKILL.md"),
        home.join("skills/prove-it/SKILL.md"),
    )
    .unwrap();
    for agent in ["prove_it_lens", "prove_it_oracle"] {
        let file = format!("{agent}.toml");
        std::fs::copy(
            source.join("codex/agents").join(&file),
            home.join("agents").join(&file),
        )
        .unwrap();
    }
    home
}

#[test]
#[ignore = "drives the real codex CLI; .ci/install-hosts, then cargo test _e2e -- --ignored"]
fn claim_e2e_codex_loads_the_prove_it_skill_and_both_agents() {
    let codex = crate::codex_e2e::INFO.binary();
    let repo = TestRepo::with_commit();
    let server = FakeModel::start(
        Responses,
        Script::new(vec![], Reply::Text("Nothing to do.")),
    );
    let out = repo
        .command(&codex)
        .args(["exec", "--json", "--skip-git-repo-check", "hello"])
        .env("CODEX_HOME", codex_home_with_the_gauntlet(&repo, &server))
        .env("PROVE_IT_FAKE_OPENAI_KEY", "sk-fake-key-for-tests")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}{}",
        String::from_utf8_lossy(&out.stderr),
        server.describe()
    );
    // The skill is in the skills list, and both agents are roles of the spawn tool.
    assert_offered(
        &server,
        &[
            "- prove-it: Adversarial adjudication of one concrete claim",
            "prove_it_lens: {\\nOne lens of the Prove It gauntlet",
            "prove_it_oracle: {\\nThe oracle of the Prove It gauntlet",
        ],
    );
}

/// One `tool_use` block of a streamed Anthropic message.
fn tool_use(name: &str, input: &Value) -> (Value, Value) {
    let id = crate::fake_model::call_id("toolu_gauntlet");
    (
        json!({"type": "tool_use", "id": id, "name": name, "input": {}}),
        json!({"type": "input_json_delta", "partial_json": input.to_string()}),
    )
}

/// A streamed assistant message made of `blocks` tool calls, all in one turn.
fn tool_calls(model: &str, blocks: &[(Value, Value)]) -> Response {
    let usage = json!({"input_tokens": 10, "output_tokens": 10,
        "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0});
    let mut events = vec![
        json!({"type": "message_start", "message": {"id": "msg_gauntlet",
        "type": "message", "role": "assistant", "model": model, "content": [],
        "stop_reason": null, "stop_sequence": null, "usage": usage}}),
    ];
    for (index, (start, delta)) in blocks.iter().enumerate() {
        events.push(json!({"type": "content_block_start", "index": index, "content_block": start}));
        events.push(json!({"type": "content_block_delta", "index": index, "delta": delta}));
        events.push(json!({"type": "content_block_stop", "index": index}));
    }
    events.push(json!({"type": "message_delta",
        "delta": {"stop_reason": "tool_use", "stop_sequence": null}, "usage": {"output_tokens": 10}}));
    events.push(json!({"type": "message_stop"}));
    Response::events(&events, true)
}

/// Every JSON object in `texts` that starts with `{"packet_role":`, in order.
fn packets_in(texts: &[String]) -> Vec<Value> {
    let mut found = Vec::new();
    for text in texts {
        let mut rest = text.as_str();
        while let Some(at) = rest.find("{\"packet_role\":") {
            let mut stream = serde_json::Deserializer::from_str(&rest[at..]).into_iter::<Value>();
            match stream.next() {
                Some(Ok(value)) => {
                    found.push(value);
                    rest = &rest[at + stream.byte_offset()..];
                }
                _ => rest = &rest[at + 1..],
            }
        }
    }
    found
}

const LENSES: [(&str, &str, &str); 9] = [
    ("counterexamples", "Counterexamples", "falsify"),
    ("logic_traps", "Logic traps", "bound"),
    ("boundary_cases", "Boundary cases", "bound"),
    ("adversarial_inputs", "Adversarial inputs", "falsify"),
    ("alternative_paradigms", "Alternative paradigms", "compare"),
    (
        "operational_constraints",
        "Operational constraints",
        "bound",
    ),
    (
        "probabilistic_uncertainty",
        "Probabilistic uncertainty",
        "bound",
    ),
    ("comparative_baselines", "Comparative baselines", "compare"),
    ("meta_test", "Meta-test", "test_design"),
];

/// The root coordinator, the nine lens subagents and the oracle subagent of the prove-it skill,
/// told apart by their system prompts (the agents' own instructions) and, for the coordinator,
/// by how many turns it has taken.
struct Skill {
    seen: Arc<(Mutex<Seen>, Condvar)>,
    /// The coordinator's turns so far.
    turns: std::sync::atomic::AtomicUsize,
}

impl Api for Skill {
    fn is_agent_turn(&self, method: &str, path: &str, body: &Value) -> bool {
        Anthropic.is_agent_turn(method, path, body)
    }

    fn user_texts(&self, body: &Value) -> Vec<String> {
        Anthropic.user_texts(body)
    }

    fn respond(&self, method: &str, path: &str, body: &Value, reply: Option<&Reply>) -> Response {
        if reply.is_none() {
            return Anthropic.respond(method, path, body, reply);
        }
        let texts = self.user_texts(body);
        let model = body["model"].as_str().unwrap_or("claude-fake");
        // Only the coordinator may start agents; the subagents are told apart by their own
        // instructions, which Claude Code gives them as their system prompt.
        let coordinator = body["tools"]
            .as_array()
            .is_some_and(|tools| tools.iter().any(|t| t["name"] == "Agent"));
        let system = body["system"].to_string();
        let text = if !coordinator && system.contains("You are a `prove_it_lens`") {
            let assignment = assignment(&texts).expect("a lens assignment");
            let round = assignment["round"]
                .as_u64()
                .and_then(|r| u8::try_from(r).ok());
            Gauntlet::arrive_at(&self.seen, round.unwrap_or(0));
            lens_packet(&assignment).to_string()
        } else if !coordinator && system.contains("You are the `prove_it_oracle`") {
            oracle_answer(&assignment(&texts).expect("the oracle's assignment"), false)
        } else if !coordinator {
            "an agent this test does not know".to_string()
        } else {
            // Where the coordinator is, from what its conversation holds so far.
            let lens_packets: Vec<Value> = packets_in(&texts)
                .into_iter()
                .filter(|p| p["packet_role"] == "evidence_lens")
                .collect();
            // The coordinator's turns come one after another: lenses, oracle, validator, relay.
            let stage = self.turns.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            let validated = texts.last().and_then(|t| {
                let at = t
                    .find("Prove It — Parallel Subagent Gauntlet")
                    .or_else(|| t.find("ORACLE_COMPROMISED"))?;
                Some(t[at..].to_string())
            });
            match stage {
                // Nine lens subagents, in one message so that they run at once.
                0 => {
                    let calls: Vec<(Value, Value)> = LENSES
                        .iter()
                        .enumerate()
                        .map(|(i, (id, lens, mode))| {
                            let assignment = json!({"packet_role": "evidence_lens",
                                "round": i + 1, "lens_id": id, "lens": lens, "lens_mode": mode,
                                "original_claim": CLAIM, "normalized_claim": CLAIM,
                                "claim_scope": null,
                                "assignment": "Apply your lens; answer with one prove_it_round_packet."});
                            tool_use("Agent", &json!({
                                "description": format!("prove_it_{:02}_{id}", i + 1),
                                "subagent_type": "prove-it:prove_it_lens",
                                "prompt": assignment.to_string(),
                                "run_in_background": false,
                            }))
                        })
                        .collect();
                    return tool_calls(model, &calls);
                }
                // Then the oracle, with the nine packets as they came back.
                1 => {
                    let packets = lens_packets;
                    let round_packets: Vec<Value> = LENSES
                        .iter()
                        .enumerate()
                        .map(|(i, (id, lens, _))| {
                            let packet = packets.iter().find(|p| p["round"] == i + 1).cloned();
                            json!({"round": i + 1, "lens_id": id, "lens": lens,
                                "status": if packet.is_some() { "received" } else { "missing" },
                                "reason": null, "packet": packet})
                        })
                        .collect();
                    let assignment = json!({"packet_role": "oracle_synthesis", "round": 10,
                        "lens": "Oracle synthesis", "original_claim": CLAIM,
                        "normalized_claim": CLAIM, "claim_scope": null,
                        "round_packets": round_packets});
                    return tool_calls(
                        model,
                        &[tool_use(
                            "Agent",
                            &json!({
                                "description": "prove_it_10_oracle_synthesis",
                                "subagent_type": "prove-it:prove_it_oracle",
                                "prompt": assignment.to_string(),
                                "run_in_background": false,
                            }),
                        )],
                    );
                }
                // Then the validator, with the nine lens packets and the oracle's answer.
                2 => {
                    let lenses: String = packets_in(&texts)
                        .iter()
                        .filter(|p| p["packet_role"] == "evidence_lens")
                        .map(|p| format!("{p}\n"))
                        .collect();
                    let oracle = texts
                        .iter()
                        .rev()
                        .find(|t| t.contains("prove_it_oracle_packet"))
                        .map(|t| &t[t.find("```yaml").unwrap_or(0)..])
                        .unwrap_or_default();
                    let command = format!(
                        "git prove-it claim --validate <<'PACKETS'\n{lenses}{oracle}\nPACKETS"
                    );
                    return tool_calls(
                        model,
                        &[tool_use(
                            "Bash",
                            &json!({"command": command,
                            "description": "validate the packets"}),
                        )],
                    );
                }
                // Then relay what the validator printed, as it is.
                3 => validated.unwrap_or_default(),
                _ => "The gauntlet is over.".to_string(),
            }
        };
        let text: &'static str = Box::leak(text.into_boxed_str());
        Anthropic.respond(method, path, body, Some(&Reply::Text(text)))
    }
}

impl Gauntlet {
    fn arrive_at(seen: &Arc<(Mutex<Seen>, Condvar)>, round: u8) {
        Gauntlet {
            failing: None,
            lying: false,
            seen: Arc::clone(seen),
        }
        .arrive(round);
    }
}

#[test]
#[ignore = "drives the real claude CLI; .ci/install-hosts, then cargo test _e2e -- --ignored"]
fn claim_e2e_the_skill_runs_nine_lens_subagents_then_the_oracle_and_validates_by_code() {
    let claude = claude("claim_e2e_the_skill_runs_nine_lens_subagents_then_the_oracle");
    let repo = TestRepo::with_commit();
    let seen = Arc::new((Mutex::new(Seen::default()), Condvar::new()));
    let server = FakeModel::start(
        Skill {
            seen: Arc::clone(&seen),
            turns: std::sync::atomic::AtomicUsize::new(0),
        },
        Script::new(vec![], Reply::Text("unused")),
    );
    let config = repo.home().join("claude-config");
    std::fs::create_dir_all(&config).unwrap();
    let prompt = format!("/prove-it:prove-it {CLAIM}");
    let out = repo
        .command(&claude)
        .args([
            "-p",
            &prompt,
            "--output-format",
            "text",
            "--allowedTools",
            "Bash,Agent",
        ])
        // The plugin's own stop hook (the gate) is not what this test is about.
        .args(["--settings", r#"{"disableAllHooks": true}"#])
        .arg("--plugin-dir")
        .arg(plugin_dir())
        .env("ANTHROPIC_BASE_URL", server.base_url())
        .env("ANTHROPIC_API_KEY", "sk-ant-fake-key-for-tests")
        .env("CLAUDE_CONFIG_DIR", &config)
        .env("DISABLE_TELEMETRY", "1")
        .env("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1")
        .env("DISABLE_AUTOUPDATER", "1")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let context = format!(
        "{stdout}\n{}\n{}",
        String::from_utf8_lossy(&out.stderr),
        server.describe()
    );
    assert!(out.status.success(), "{context}");
    assert!(
        seen.0.lock().unwrap().overlapped,
        "the nine lens subagents did not overlap: {context}"
    );
    // The coordinator was given the skill, and relayed the validator's output: the oracle's
    // final_response, validated.
    let first = server.agent_turns().into_iter().next().unwrap();
    assert!(
        first
            .user_text()
            .contains("# Prove It: the parallel subagent gauntlet"),
        "{context}"
    );
    assert!(
        stdout.starts_with("Prove It — Parallel Subagent Gauntlet\n"),
        "{context}"
    );
    assert!(stdout.contains("\n- Outcome: PROVEN\n"), "{context}");
    assert!(
        stdout.contains("\nPackets received: 1, 2, 3, 4, 5, 6, 7, 8, 9\n"),
        "{context}"
    );
}

/// What the claude preset's lens may do, as ADAPTERS.md says: its `claude -p` runs offer the
/// shell, and a read-only command runs, but one that would change files needs an approval that
/// no one can give, so it is refused and never runs.
#[test]
#[ignore = "drives the real claude CLI; .ci/install-hosts, then cargo test _e2e -- --ignored"]
fn claim_e2e_the_claude_presets_lens_runs_read_only_commands_only() {
    let claude = claude("claim_e2e_the_claude_presets_lens_runs_read_only_commands_only");
    let repo = TestRepo::with_commit();
    // Inside the repository, where the run works: refused for want of approval, not of place.
    let marker = repo.root.join("the-lens-ran-a-command");
    let command = "touch the-lens-ran-a-command";
    let server = FakeModel::start(
        Anthropic,
        Script::new(
            vec![Reply::Shell(command), Reply::Shell("ls -a")],
            Reply::Text("{}"),
        ),
    );
    let config = repo.home().join("claude-config");
    std::fs::create_dir_all(&config).unwrap();
    // The preset's command line, as `claim --agent claude` runs it for round 1.
    let preset = "claude -p --settings '{\"disableAllHooks\": true}' --output-format text \
                  --append-system-prompt \"This run is $PROVE_IT_ROUND_NAME.\"";
    let dir = claude.parent().unwrap();
    let out =
        repo.command("sh")
            .args(["-c", &format!("echo 'the assignment' | {preset}")])
            .env(
                "PATH",
                std::env::join_paths(std::iter::once(dir.to_path_buf()).chain(
                    std::env::split_paths(&crate::harness::path_with_our_binary()),
                ))
                .unwrap(),
            )
            .env("PROVE_IT_ROUND_NAME", "prove_it_01_counterexamples")
            .env("ANTHROPIC_BASE_URL", server.base_url())
            .env("ANTHROPIC_API_KEY", "sk-ant-fake-key-for-tests")
            .env("CLAUDE_CONFIG_DIR", &config)
            .env("DISABLE_TELEMETRY", "1")
            .env("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1")
            .env("DISABLE_AUTOUPDATER", "1")
            .output()
            .unwrap();
    let context = format!(
        "{}{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
        server.describe()
    );
    assert!(out.status.success(), "{context}");
    let turns = server.agent_turns();
    assert_eq!(turns.len(), 3, "{context}");
    let offered: Vec<String> = turns[0].body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|t| t["name"].as_str().map(String::from))
        .collect();
    assert!(offered.iter().any(|t| t == "Bash"), "{offered:?}");
    assert!(offered.iter().any(|t| t == "Read"), "{offered:?}");
    assert!(!marker.exists(), "the command ran: {context}");
    assert!(
        turns[1].last_user_text().contains("needs approval"),
        "{context}"
    );
    assert!(turns[2].last_user_text().contains("verify.sh"), "{context}");
}
