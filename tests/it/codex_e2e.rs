//! End to end with the real Codex CLI binary against a fake Responses API server on 127.0.0.1.
//!
//! Each test runs `codex exec` in a temporary repository wired by
//! `git prove-it init --yes --no-demo --host codex` (`.codex/hooks.json`), so Codex itself calls
//! `git prove-it hook codex` at SessionStart and Stop, and reads our answers. Codex loads a
//! repository's `.codex/` only for a trusted project, and runs its hooks in `codex exec` only with
//! `--dangerously-bypass-hook-trust`: each run's own `CODEX_HOME` trusts the repository, as
//! `codex exec --trust` would record it. The binary comes from `PROVE_IT_CODEX` or `codex` on
//! PATH; without it these tests skip, saying so on stderr, unless `PROVE_IT_E2E_REQUIRED` names
//! codex (as `.ci/run` does).

use std::path::Path;
use std::process::Output;
use std::time::Duration;

use serde_json::Value;

use crate::e2e::{CODEX, describe, run_bounded};
use crate::fake_model::responses::Responses;
use crate::fake_model::{FakeModel, Reply};
use crate::harness::TestRepo;

/// How Codex hands a Stop hook's reason to the model: a user message in this tag.
const FEEDBACK: &str = "<hook_prompt";
/// The gate's block, once per attempt.
const BLOCK: &str = "prove-it: DISPROVEN (attempt";
/// The gate's yield at the end of its budget.
const YIELD: &str = "prove-it: NOT_PROVEN: this turn ended unverified (after 3 attempts)";
/// Codex has no cap on blocks: a run past this was not ended by the gate's budget, and fails.
const RUN_LIMIT: Duration = Duration::from_secs(120);
/// The variable that holds the fake server's key (`env_key` in the provider's config).
const KEY_VAR: &str = "PROVE_IT_FAKE_OPENAI_KEY";

fn start(turns: Vec<Reply>, then: Reply) -> FakeModel {
    FakeModel::start(Responses, turns, then)
}

/// A repository with `files` and verify.sh, wired to Codex by `init --host codex`, committed.
fn wired_repo(verify: &str, files: &[(&str, &str)]) -> TestRepo {
    let repo = TestRepo::new();
    for (path, content) in files {
        repo.write(path, content);
    }
    repo.verify_script(verify);
    repo.prove_it(&["init", "--yes", "--no-demo", "--host", "codex"])
        .assert()
        .success();
    assert!(repo.path(".codex/hooks.json").is_file());
    repo.commit_all("initial");
    repo
}

/// A `CODEX_HOME` of the run's own: the fake provider, no network at start, no approvals, and
/// the repository trusted (else Codex ignores its `.codex/hooks.json`).
fn codex_home(repo: &TestRepo, server: &FakeModel) -> std::path::PathBuf {
    let home = repo.home().join("codex-home");
    std::fs::create_dir_all(&home).unwrap();
    let project = std::fs::canonicalize(&repo.root).unwrap();
    let config = format!(
        r#"model = "gpt-5.1-codex"
model_provider = "fake"
check_for_update_on_startup = false
approval_policy = "never"
sandbox_mode = "danger-full-access"

[model_providers.fake]
name = "fake"
base_url = "{}/v1"
wire_api = "responses"
env_key = "{KEY_VAR}"

[features]
plugins = false
remote_plugin = false
apps = false

[projects.{:?}]
trust_level = "trusted"
"#,
        server.base_url(),
        project.to_str().expect("a UTF-8 temp path"),
    );
    std::fs::write(home.join("config.toml"), config).unwrap();
    home
}

/// Run `codex exec prompt` in the repository against the fake server, bounded by RUN_LIMIT.
fn run_codex(codex: &Path, repo: &TestRepo, server: &FakeModel, prompt: &str) -> Output {
    let mut cmd = repo.command(codex);
    cmd.args([
        "exec",
        "--json",
        "--skip-git-repo-check",
        "--dangerously-bypass-hook-trust",
        prompt,
    ])
    .env("CODEX_HOME", codex_home(repo, server))
    .env(KEY_VAR, "sk-fake-key-for-tests");
    run_bounded(cmd, RUN_LIMIT)
}

/// The events Codex printed (`--json`), one JSON object a line.
fn events(out: &Output) -> Vec<Value> {
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|line| serde_json::from_str(line).ok())
        .collect()
}

/// What the agent said, message by message, as `codex exec` shows it.
fn agent_messages(out: &Output) -> Vec<String> {
    events(out)
        .into_iter()
        .filter(|event| {
            event["type"] == "item.completed" && event["item"]["type"] == "agent_message"
        })
        .filter_map(|event| event["item"]["text"].as_str().map(str::to_owned))
        .collect()
}

/// The gate's last answer in each session of the repository, as its turn state records it.
fn last_answers(repo: &TestRepo) -> Vec<String> {
    let dir = repo.path(".git/prove-it/sessions");
    let mut answers = Vec::new();
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        if entry.path().extension().is_some_and(|ext| ext == "json") {
            let state: Value =
                serde_json::from_slice(&std::fs::read(entry.path()).unwrap()).unwrap();
            answers.push(state["last"]["kind"].as_str().unwrap_or("").to_owned());
        }
    }
    answers
}

/// The conversation's user side at its end: every user message and tool output, joined.
fn final_user_text(server: &FakeModel) -> String {
    let turns = server.agent_turns();
    turns
        .last()
        .map(|turn| turn.user_text())
        .unwrap_or_default()
}

const ANSWER_CHECK: &str = "#!/bin/sh\n\
    test \"$(cat answer.txt)\" = 4 || { echo \"answer.txt is wrong: expected 4, got $(cat answer.txt)\"; exit 1; }\n\
    echo all checks passed\n";

#[test]
fn a_failing_change_is_blocked_the_model_sees_why_and_the_fix_is_proven() {
    let Some(codex) = CODEX.or_skip("codex_e2e::a_failing_change_is_blocked") else {
        return;
    };
    let repo = wired_repo(ANSWER_CHECK, &[("answer.txt", "4\n")]);
    let server = start(
        vec![
            Reply::Shell("echo hello > greeting.txt && echo 5 > answer.txt"),
            Reply::Text("All tests pass."),
            Reply::Shell("echo 4 > answer.txt"),
        ],
        Reply::Text("Fixed: answer.txt is 4 again, verify.sh passes."),
    );
    let out = run_codex(&codex, &repo, &server, "add a greeting");
    let context = describe(&out, &server);
    assert!(out.status.success(), "{context}");

    let turns = server.agent_turns();
    assert_eq!(turns.len(), 4, "{context}");
    // The fake calls the shell tool the real request offers.
    let tools = turns[0].body["tools"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    assert!(
        tools.iter().any(|tool| tool["name"] == "exec_command"),
        "{context}"
    );
    let feedback = turns[2].last_user_text();
    assert!(feedback.contains(FEEDBACK), "{context}");
    // Codex names the hook that answered: the one init wired in the repository.
    assert!(
        feedback.contains("/.codex/hooks.json\">prove-it: DISPROVEN (attempt 1 of 3"),
        "{context}"
    );
    assert!(
        feedback.contains("answer.txt is wrong: expected 4, got 5"),
        "the model's next request carries verify.sh's failing lines: {context}"
    );
    assert_eq!(
        final_user_text(&server).matches(FEEDBACK).count(),
        1,
        "{context}"
    );
    assert_eq!(
        agent_messages(&out).last().map(String::as_str),
        Some("Fixed: answer.txt is 4 again, verify.sh passes."),
        "{context}"
    );

    // The final state is proven, and stock git reads the proof.
    let state = repo.stock_state_tree().unwrap();
    let note = repo.git(&["notes", "--ref", "prove-it", "show", &state]);
    assert!(note.contains(&format!("tree: {state}")), "{note}");
    assert!(note.contains("host: codex"), "{note}");
    repo.prove_it(&["status"]).assert().code(0);
}

#[test]
fn an_always_failing_verify_sh_ends_the_turn_by_the_budget_with_a_last_block() {
    let Some(codex) = CODEX.or_skip("codex_e2e::an_always_failing_verify_sh") else {
        return;
    };
    let repo = wired_repo("#!/bin/sh\necho 'check 42 is broken'\nexit 1\n", &[]);
    let server = start(
        vec![Reply::Shell("echo change > change.txt")],
        Reply::Text("All tests pass."),
    );
    // Codex has no cap of its own: only the gate's budget ends this run before RUN_LIMIT.
    let out = run_codex(&codex, &repo, &server, "make a change");
    let context = describe(&out, &server);
    assert!(out.status.success(), "{context}");

    // The default budget's 3 blocks, then one last block: `codex exec` shows no systemMessage,
    // so the yield's notice goes to the agent, asking it to quote the notice to the user.
    let seen = final_user_text(&server);
    assert_eq!(seen.matches(FEEDBACK).count(), 4, "{context}");
    assert_eq!(seen.matches(BLOCK).count(), 3, "{context}");
    assert_eq!(seen.matches(YIELD).count(), 1, "{context}");
    let turns = server.agent_turns();
    assert_eq!(turns.len(), 6, "{context}");
    for turn in &turns[2..] {
        assert!(
            turn.last_user_text().contains("check 42 is broken"),
            "{context}"
        );
    }
    let last = turns[5].last_user_text();
    assert!(last.contains(YIELD), "{context}");
    assert!(
        last.contains("end your answer by quoting the notice above to them"),
        "{context}"
    );
    // The stop after the last block ends the turn: nothing more went to the model.
    assert_eq!(
        agent_messages(&out),
        vec!["All tests pass."; 5],
        "{context}"
    );
    assert_eq!(last_answers(&repo), ["notice"], "{context}");
    assert!(repo.note(&repo.stock_state_tree().unwrap()).is_none());
}

#[test]
fn the_budget_holds_when_the_agent_acts_between_blocks() {
    let Some(codex) = CODEX.or_skip("codex_e2e::the_budget_holds_when_the_agent_acts") else {
        return;
    };
    let repo = wired_repo("#!/bin/sh\necho 'check 42 is broken'\nexit 1\n", &[]);
    // After each block the agent runs a command, then claims again: still one turn.
    let server = start(
        vec![
            Reply::Shell("echo 1 >> change.txt"),
            Reply::Text("All tests pass."),
            Reply::Shell("echo 2 >> change.txt"),
            Reply::Text("Fixed, all tests pass."),
            Reply::Shell("echo 3 >> change.txt"),
            Reply::Text("Fixed again, all tests pass."),
            Reply::Shell("echo 4 >> change.txt"),
        ],
        Reply::Text("Surely fixed now."),
    );
    let out = run_codex(&codex, &repo, &server, "make a change");
    let context = describe(&out, &server);
    assert!(out.status.success(), "{context}");
    let seen = final_user_text(&server);
    for attempt in 1..=3 {
        assert_eq!(
            seen.matches(&format!("{BLOCK} {attempt} of 3")).count(),
            1,
            "{context}"
        );
    }
    assert_eq!(seen.matches(YIELD).count(), 1, "{context}");
    assert!(repo.note(&repo.stock_state_tree().unwrap()).is_none());
}

#[test]
fn a_read_only_prompt_never_runs_verify_sh() {
    let Some(codex) = CODEX.or_skip("codex_e2e::a_read_only_prompt") else {
        return;
    };
    // verify.sh leaves a mark in HOME, which Codex, the hook and verify.sh inherit from the test.
    let repo = wired_repo(
        "#!/bin/sh\ntouch \"$HOME/verify-ran\"\n",
        &[("answer.txt", "4\n")],
    );
    let marker = repo.home().join("verify-ran");

    let server = start(vec![], Reply::Text("The answer is 4."));
    let out = run_codex(&codex, &repo, &server, "what is in answer.txt?");
    let context = describe(&out, &server);
    assert!(out.status.success(), "{context}");
    assert_eq!(server.agent_turns().len(), 1, "{context}");
    // The gate did run at the stop, and answered nothing.
    assert_eq!(last_answers(&repo), ["silent"], "{context}");
    assert!(
        !marker.exists(),
        "verify.sh ran on a read-only turn: {context}"
    );
    assert_eq!(repo.git(&["status", "--porcelain"]), "", "{context}");
}

#[test]
fn deleting_verify_sh_is_refused_until_it_is_restored() {
    let Some(codex) = CODEX.or_skip("codex_e2e::deleting_verify_sh") else {
        return;
    };
    let repo = wired_repo("#!/bin/sh\necho fine\n", &[("answer.txt", "4\n")]);
    let server = start(
        vec![
            Reply::Shell("rm verify.sh && echo 5 > answer.txt"),
            Reply::Text("Done. All tests pass."),
            Reply::Shell("git checkout -- verify.sh"),
        ],
        Reply::Text("Restored verify.sh."),
    );
    let out = run_codex(&codex, &repo, &server, "change the answer");
    let context = describe(&out, &server);
    assert!(out.status.success(), "{context}");

    let turns = server.agent_turns();
    assert_eq!(turns.len(), 4, "{context}");
    let refusal = turns[2].last_user_text();
    assert!(refusal.contains(FEEDBACK), "{context}");
    assert!(
        refusal.contains("verify.sh was armed when this session started"),
        "{context}"
    );
    assert!(repo.path("verify.sh").is_file(), "{context}");
    // Restored, the changed state is proven by the verify.sh of the session's start.
    let state = repo.stock_state_tree().unwrap();
    assert!(repo.note(&state).is_some(), "{context}");
}
