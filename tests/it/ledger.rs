//! `git prove-it ledger`: what it says when off, the unverified end of a turn, the claim read
//! from Claude Code's transcript, and `--summary`.

use predicates::prelude::*;
use serde_json::json;

use crate::harness::{TestRepo, json_stdout};
use crate::messages::{claude, stop_event};

/// A committed repository whose verify.sh fails with exit `code`, its ledger on.
fn failing(code: i32) -> TestRepo {
    let repo = TestRepo::new();
    repo.write("a.txt", "a\n");
    repo.verify_script(&format!(
        "echo 'test result: 1 failed; 2 passed'\nexit {code}"
    ));
    repo.commit_all("initial");
    repo.git(&["config", "prove-it.ledger", "true"]);
    repo
}

fn start(repo: &TestRepo) {
    claude(
        repo,
        &json!({
            "session_id": "s1-messages",
            "transcript_path": "/nonexistent/t.jsonl",
            "cwd": repo.root,
            "hook_event_name": "SessionStart",
            "source": "startup",
        }),
    );
}

fn entries(repo: &TestRepo) -> Vec<serde_json::Value> {
    let value = json_stdout(&repo.prove_it(&["ledger", "--json"]).assert().code(0));
    value["entries"].as_array().unwrap().clone()
}

// `ledger` said "the ledger is empty" when it was off.
#[test]
fn a_ledger_that_is_off_says_so_and_how_to_turn_it_on() {
    let repo = TestRepo::with_commit();
    repo.prove_it(&["ledger"])
        .assert()
        .code(0)
        .stdout(predicate::str::starts_with("the ledger is off"))
        .stdout(predicate::str::contains(
            "hint: turn it on: git config prove-it.ledger true",
        ))
        .stdout(predicate::str::contains("empty").not());
    let value = json_stdout(&repo.prove_it(&["ledger", "--json"]).assert().code(0));
    assert_eq!(value["enabled"], false);
    repo.git(&["config", "prove-it.ledger", "true"]);
    repo.prove_it(&["ledger"])
        .assert()
        .code(0)
        .stdout("the ledger is empty\n");
    repo.prove_it(&["ledger"])
        .env("PROVE_IT_LEDGER", "0")
        .assert()
        .code(0)
        .stdout(predicate::str::starts_with("the ledger is off"));
}

// A turn blocked three times left one entry and no record of its unverified end.
#[test]
fn a_turn_blocked_to_the_end_records_its_unverified_end_too() {
    let repo = failing(1);
    start(&repo);
    repo.write("a.txt", "changed\n");
    for active in [false, true, true] {
        assert_eq!(
            claude(&repo, &stop_event(&repo, active))["decision"],
            "block"
        );
    }
    let yielded = claude(&repo, &stop_event(&repo, true));
    assert!(
        yielded["systemMessage"]
            .as_str()
            .unwrap()
            .contains("NOT_PROVEN"),
        "{yielded}"
    );
    let entries = entries(&repo);
    assert_eq!(entries.len(), 2, "{entries:?}");
    assert_eq!(entries[0]["outcome"], "DISPROVEN");
    assert_eq!(entries[0]["attempt"], 1);
    assert_eq!(entries[1]["outcome"], "NOT_PROVEN");
    assert_eq!(entries[1]["attempt"], 4);
    assert_eq!(entries[1]["exit_code"], 1);
    assert_eq!(entries[1]["claim"], "All tests pass.");
}

/// In `claude -p` the yield is told to the agent as one last block, so the turn's next stop
/// yields again: the ledger wrote the turn's unverified end twice.
#[test]
fn a_yield_told_as_a_last_block_is_one_ledger_line() {
    let repo = failing(1);
    let headless_hook = |event: serde_json::Value| {
        repo.prove_it(&["hook", "claude"])
            .env("CLAUDE_CODE_ENTRYPOINT", "sdk-cli")
            .write_stdin(event.to_string())
            .assert()
            .code(0)
    };
    headless_hook(json!({
        "session_id": "s1-messages",
        "transcript_path": "/nonexistent/t.jsonl",
        "cwd": repo.root,
        "hook_event_name": "SessionStart",
        "source": "startup",
    }));
    repo.write("a.txt", "changed\n");
    let headless = |active: bool| {
        let assert = repo
            .prove_it(&["hook", "claude"])
            .env("CLAUDE_CODE_ENTRYPOINT", "sdk-cli")
            .write_stdin(stop_event(&repo, active).to_string())
            .assert()
            .code(0);
        let stdout = String::from_utf8_lossy(&assert.get_output().stdout).into_owned();
        serde_json::from_str::<serde_json::Value>(&stdout).unwrap_or_default()
    };
    let mut answers = Vec::new();
    for active in [false, true, true, true, true, true] {
        answers.push(headless(active));
    }
    let told = answers
        .iter()
        .filter(|answer| {
            answer["reason"]
                .as_str()
                .is_some_and(|r| r.contains("NOT_PROVEN"))
        })
        .count();
    assert_eq!(told, 1, "{answers:?}");
    let entries = entries(&repo);
    let ended: Vec<_> = entries
        .iter()
        .filter(|entry| entry["outcome"] == "NOT_PROVEN")
        .collect();
    assert_eq!(ended.len(), 1, "{entries:?}");
    assert_eq!(entries.len(), 2, "{entries:?}");
}

// Claude Code versions that send no `last_assistant_message` left the claim
// empty; it is in the transcript the payload names.
#[test]
fn the_claim_is_read_from_claudes_transcript_when_the_payload_has_none() {
    let repo = failing(1);
    let transcript = repo.home().join("transcript.jsonl");
    let lines = [
        json!({"type":"user","message":{"role":"user","content":"fix the tests"},"timestamp":"2099-01-01T00:00:00Z"}),
        json!({"type":"assistant","message":{"role":"assistant","content":[{"type":"text","text":"Fixed: all tests pass now."}]},"timestamp":"2099-01-01T00:00:01Z"}),
        json!({"type":"assistant","message":{"role":"assistant","content":[{"type":"tool_use","name":"Bash","input":{}}]},"timestamp":"2099-01-01T00:00:02Z"}),
    ];
    let text: String = lines.iter().map(|line| format!("{line}\n")).collect();
    std::fs::write(&transcript, text).unwrap();
    start(&repo);
    repo.write("a.txt", "changed\n");
    let mut event = stop_event(&repo, false);
    let map = event.as_object_mut().unwrap();
    map.remove("last_assistant_message");
    map.insert("transcript_path".into(), json!(transcript));
    assert_eq!(claude(&repo, &event)["decision"], "block");
    let entries = entries(&repo);
    assert_eq!(
        entries[0]["claim"], "Fixed: all tests pass now.",
        "{entries:?}"
    );
}

// `ledger --summary` counts per repository and host, the turns that ended
// unverified, and hints when the same exit code recurs.
#[test]
fn the_summary_counts_turns_and_points_at_a_recurring_exit_code() {
    let repo = failing(101);
    start(&repo);
    repo.write("a.txt", "changed\n");
    for active in [false, true, true, true] {
        claude(&repo, &stop_event(&repo, active));
    }
    let assert = repo.prove_it(&["ledger", "--summary"]).assert().code(0);
    let text = String::from_utf8_lossy(&assert.get_output().stdout).into_owned();
    assert!(
        text.starts_with("ledger: 2 entries, 1 turn ended unverified\n"),
        "{text}"
    );
    let root = std::fs::canonicalize(&repo.root).unwrap();
    assert!(
        text.contains(&format!(
            "  {}  claude: 2 entries, 1 unverified\n",
            root.display()
        )) || text.contains(&format!(
            "  {}  claude: 2 entries, 1 unverified\n",
            repo.root.display()
        )),
        "{text}"
    );
    assert!(
        text.contains("hint: exit code 101 recurs in 2 entries"),
        "{text}"
    );
    let value = json_stdout(
        &repo
            .prove_it(&["ledger", "--summary", "--json"])
            .assert()
            .code(0),
    );
    assert_eq!(value["entries"], 2);
    assert_eq!(value["unverified"], 1);
    assert_eq!(value["by_repo_and_host"][0]["host"], "claude");
    assert_eq!(
        value["recurring_exit_codes"],
        json!([{"exit_code": 101, "entries": 2}])
    );
}
