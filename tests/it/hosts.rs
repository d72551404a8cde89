//! Every host adapter through the real binary, fed the payloads each host sends (HOSTS.md), in
//! real repositories: the budget ends an always-failing turn on every host, each in its own
//! protocol, and hosts without turn ids or visible notices are handled as documented.

use std::process::Output;

use assert_cmd::cargo::cargo_bin;
use serde_json::{Value, json};

use crate::harness::{TestRepo, json_stdout};

#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Host {
    Claude,
    Codex,
    Gemini,
    Copilot,
    Cursor,
    Vscode,
    Qwen,
}

pub const ALL: [Host; 7] = [
    Host::Claude,
    Host::Codex,
    Host::Gemini,
    Host::Copilot,
    Host::Cursor,
    Host::Vscode,
    Host::Qwen,
];

/// One answer, read in the host's protocol.
#[derive(Debug, PartialEq)]
pub enum Answer {
    Silent,
    Block(String),
    Notice(String),
}

impl Host {
    pub fn name(self) -> &'static str {
        match self {
            Host::Claude => "claude",
            Host::Codex => "codex",
            Host::Gemini => "gemini",
            Host::Copilot => "copilot",
            Host::Cursor => "cursor",
            Host::Vscode => "vscode",
            Host::Qwen => "qwen",
        }
    }

    /// Whether the host shows notices; where it does not, the gate's notice is a last block.
    /// Gemini CLI shows them only to a person at its screen, never in headless output, and
    /// its hook cannot tell the two apart.
    fn shows_notices(self) -> bool {
        matches!(self, Host::Claude | Host::Vscode)
    }

    /// The command-line event argument and the payload of a session start.
    pub fn start(self, repo: &TestRepo, session: &str) -> (Option<&'static str>, Value) {
        let cwd = repo.root.display().to_string();
        match self {
            Host::Claude | Host::Codex | Host::Gemini | Host::Qwen => (
                None,
                json!({"session_id": session, "transcript_path": "/t.jsonl", "cwd": cwd,
                       "hook_event_name": "SessionStart", "source": "startup"}),
            ),
            Host::Copilot => (
                Some("sessionStart"),
                json!({"sessionId": session, "timestamp": 1795978336226u64, "cwd": cwd,
                       "source": "new", "initialPrompt": "make a file"}),
            ),
            Host::Cursor => (
                None,
                json!({"conversation_id": session, "generation_id": "g1",
                       "hook_event_name": "beforeSubmitPrompt", "workspace_roots": [cwd],
                       "prompt": "make a file"}),
            ),
            Host::Vscode => (
                None,
                json!({"timestamp": "2026-11-29T10:30:00.000Z", "cwd": cwd, "sessionId": session,
                       "hookEventName": "SessionStart", "source": "new"}),
            ),
        }
    }

    /// A stop; `after` is the number of blocks already given this turn (the loop flag, or
    /// Cursor's loop_count).
    pub fn stop(self, repo: &TestRepo, session: &str, after: u32) -> (Option<&'static str>, Value) {
        let cwd = repo.root.display().to_string();
        let active = after > 0;
        match self {
            Host::Claude => (
                None,
                json!({"session_id": session, "transcript_path": "/t.jsonl", "cwd": cwd,
                       "prompt_id": "p1", "permission_mode": "default",
                       "hook_event_name": "Stop", "stop_hook_active": active,
                       "last_assistant_message": "All tests pass."}),
            ),
            Host::Codex => (
                None,
                json!({"session_id": session, "turn_id": "t1", "transcript_path": null,
                       "cwd": cwd, "hook_event_name": "Stop", "model": "gpt-5.1-codex",
                       "permission_mode": "bypassPermissions", "stop_hook_active": active,
                       "last_assistant_message": "All tests pass."}),
            ),
            Host::Gemini => (
                None,
                json!({"session_id": session, "transcript_path": "/t.jsonl", "cwd": cwd,
                       "hook_event_name": "AfterAgent", "timestamp": "2026-11-29T18:49:48.461Z",
                       "prompt": "make a file", "prompt_response": "Made it.\nAll tests pass.",
                       "stop_hook_active": active}),
            ),
            Host::Copilot => (
                Some("agentStop"),
                json!({"sessionId": session, "timestamp": 1795978336226u64, "cwd": cwd,
                       "transcriptPath": repo.home().join("events.jsonl"),
                       "stopReason": "end_turn", "stop_hook_active": active}),
            ),
            Host::Cursor => (
                None,
                json!({"conversation_id": session, "generation_id": format!("g{after}"),
                       "hook_event_name": "stop", "workspace_roots": [cwd],
                       "status": "completed", "loop_count": after}),
            ),
            Host::Vscode => (
                None,
                json!({"timestamp": "2026-11-29T10:30:00.000Z", "cwd": cwd, "sessionId": session,
                       "hookEventName": "Stop", "transcript_path": "/t.json",
                       "stop_hook_active": active}),
            ),
            Host::Qwen => (
                None,
                json!({"session_id": session, "transcript_path": "/t.jsonl", "cwd": cwd,
                       "hook_event_name": "Stop", "permission_mode": "yolo",
                       "prompt_id": format!("{session}########0"), "stop_hook_active": active,
                       "last_assistant_message": "All tests pass.", "background_tasks": [],
                       "crons": []}),
            ),
        }
    }

    /// The command-line event argument and the payload of a person's prompt, for the hosts
    /// that send one (HOSTS.md; Cursor's `beforeSubmitPrompt` is read as a session start).
    pub fn prompt(self, repo: &TestRepo, session: &str) -> Option<(Option<&'static str>, Value)> {
        let cwd = repo.root.display().to_string();
        match self {
            Host::Claude => Some((
                None,
                json!({"session_id": session, "transcript_path": "/t.jsonl", "cwd": cwd,
                       "prompt_id": "p1", "permission_mode": "default",
                       "hook_event_name": "UserPromptSubmit", "prompt": "make a file"}),
            )),
            Host::Codex => Some((
                None,
                json!({"session_id": session, "turn_id": "t1", "transcript_path": null,
                       "cwd": cwd, "hook_event_name": "UserPromptSubmit",
                       "model": "gpt-5.1-codex", "permission_mode": "bypassPermissions",
                       "prompt": "make a file"}),
            )),
            Host::Gemini => Some((
                None,
                json!({"session_id": session, "transcript_path": "/t.jsonl", "cwd": cwd,
                       "hook_event_name": "BeforeAgent", "timestamp": "2026-11-29T18:49:40.000Z",
                       "prompt": "make a file"}),
            )),
            Host::Copilot => Some((
                Some("userPromptSubmitted"),
                json!({"sessionId": session, "timestamp": 1795978330000u64, "cwd": cwd,
                       "prompt": "make a file"}),
            )),
            // Qwen Code's UserPromptSubmit comes before every model call, not only a person's
            // prompt: it is no prompt, and its turn id names a new prompt's turn.
            Host::Cursor | Host::Vscode | Host::Qwen => None,
        }
    }

    /// Read an answer in this host's protocol, asserting it is well-formed.
    pub fn read(self, out: &Output) -> Answer {
        assert_eq!(out.status.code(), Some(0), "hooks always exit 0: {out:?}");
        let stdout = String::from_utf8(out.stdout.clone()).unwrap();
        if stdout.is_empty() {
            return Answer::Silent;
        }
        assert!(
            stdout.ends_with('\n') && stdout.matches('\n').count() == 1,
            "{stdout:?}"
        );
        let json: Value = serde_json::from_str(&stdout).unwrap();
        let object = json.as_object().unwrap();
        match self {
            Host::Claude | Host::Codex | Host::Gemini | Host::Copilot | Host::Qwen => {
                if object.contains_key("decision") {
                    assert_eq!(json["decision"], "block", "{json}");
                    assert_eq!(object.len(), 2, "only decision and reason: {json}");
                    Answer::Block(json["reason"].as_str().unwrap().into())
                } else if self == Host::Gemini && object.contains_key("continue") {
                    // A notice at Gemini's stop also stops the agent, which its headless
                    // output reports with the notice's text.
                    assert_eq!(json["continue"], false, "{json}");
                    assert_eq!(json["stopReason"], json["systemMessage"], "{json}");
                    assert_eq!(object.len(), 3, "{json}");
                    Answer::Notice(json["systemMessage"].as_str().unwrap().into())
                } else {
                    assert_ne!(self, Host::Copilot, "Copilot gets blocks only: {json}");
                    assert_eq!(object.len(), 1, "{json}");
                    Answer::Notice(json["systemMessage"].as_str().unwrap().into())
                }
            }
            Host::Cursor => match json.get("followup_message") {
                Some(reason) => Answer::Block(reason.as_str().unwrap().into()),
                None if object.is_empty() || json == json!({"continue": true}) => Answer::Silent,
                None => panic!("Cursor takes a follow-up message or nothing: {json}"),
            },
            Host::Vscode => match json.get("hookSpecificOutput") {
                Some(specific) => {
                    assert_eq!(specific["hookEventName"], "Stop", "{json}");
                    assert_eq!(specific["decision"], "block", "{json}");
                    Answer::Block(specific["reason"].as_str().unwrap().into())
                }
                None => Answer::Notice(json["systemMessage"].as_str().unwrap().into()),
            },
        }
    }
}

pub fn hook(
    repo: &TestRepo,
    host: Host,
    event: (Option<&str>, Value),
    env: &[(&str, &str)],
) -> Answer {
    let mut cmd = repo.command(cargo_bin("git-prove-it"));
    cmd.args(["hook", host.name()]).args(event.0);
    for (key, value) in env {
        cmd.env(key, value);
    }
    let out = assert_cmd::Command::from_std(cmd)
        .write_stdin(event.1.to_string())
        .output()
        .unwrap();
    host.read(&out)
}

/// A committed repository whose verify.sh always fails, counting its runs.
fn always_failing() -> (TestRepo, std::path::PathBuf) {
    let repo = TestRepo::new();
    repo.write("a.txt", "a\n");
    let counter = repo.home().join("runs");
    repo.verify_script(&format!(
        "echo run >> '{}'\necho 'check 42 is broken'\nexit 1",
        counter.display()
    ));
    repo.commit_all("initial");
    (repo, counter)
}

/// Stop until the gate stops blocking (at most 20 times); the blocks given and the last answer.
fn stop_until_let_go(
    repo: &TestRepo,
    host: Host,
    session: &str,
    env: &[(&str, &str)],
) -> (Vec<String>, Answer) {
    let mut blocks = Vec::new();
    for _ in 0..20 {
        let after = u32::try_from(blocks.len()).unwrap();
        match hook(repo, host, host.stop(repo, session, after), env) {
            Answer::Block(reason) => blocks.push(reason),
            answer => return (blocks, answer),
        }
    }
    panic!("{host:?}: still blocking after 20 stops: the budget did not end the turn");
}

#[test]
fn an_always_failing_verify_sh_ends_the_turn_after_the_budget_on_every_host() {
    for host in ALL {
        let (repo, counter) = always_failing();
        assert_eq!(
            hook(&repo, host, host.start(&repo, "s1"), &[]),
            Answer::Silent
        );
        repo.write("b.txt", "change\n");
        let (blocks, last) = stop_until_let_go(&repo, host, "s1", &[]);

        // Three blocks (the default budget), each carrying verify.sh's failing line.
        for (index, reason) in blocks.iter().take(3).enumerate() {
            let attempt = format!("attempt {} of 3 for this turn", index + 1);
            assert!(reason.contains(&attempt), "{host:?}: {reason}");
            assert!(reason.contains("check 42 is broken"), "{host:?}: {reason}");
        }
        if host.shows_notices() {
            assert_eq!(blocks.len(), 3, "{host:?}: {blocks:#?}");
            let Answer::Notice(notice) = last else {
                panic!("{host:?}: the yield must be a notice: {last:?}");
            };
            assert!(
                notice.contains("this turn ended unverified"),
                "{host:?}: {notice}"
            );
        } else {
            // No notice reaches the user: one last block tells the agent to report it.
            assert_eq!(blocks.len(), 4, "{host:?}: {blocks:#?}");
            let told = &blocks[3];
            assert!(
                told.contains("this turn ended unverified"),
                "{host:?}: {told}"
            );
            assert!(
                told.contains("quoting the notice above"),
                "{host:?}: {told}"
            );
            // Then the turn ends (Codex still gets the notice, for its interactive mode).
            assert!(!matches!(last, Answer::Block(_)), "{host:?}");
        }
        let runs = std::fs::read_to_string(&counter).unwrap().lines().count();
        // The state was never proven, so every stop ran verify.sh again.
        assert_eq!(runs, blocks.len() + 1, "{host:?}");
    }
}

#[test]
fn a_passing_stop_records_a_proof_naming_the_host() {
    for host in ALL {
        let repo = TestRepo::with_commit();
        assert_eq!(
            hook(&repo, host, host.start(&repo, "s1"), &[]),
            Answer::Silent
        );
        repo.write("b.txt", "change\n");
        let answer = hook(&repo, host, host.stop(&repo, "s1", 0), &[]);
        assert_eq!(answer, Answer::Silent, "{host:?}");
        let state = repo.stock_state_tree().unwrap();
        let note = repo.note(&state).expect("a proof");
        assert!(
            note.contains(&format!("host: {}\n", host.name())),
            "{host:?}: {note}"
        );
    }
}

#[test]
fn claude_codes_own_cap_from_its_environment_keeps_the_budget_below_it() {
    let (repo, _) = always_failing();
    repo.git(&["config", "prove-it.maxBlocks", "7"]);
    let env = [("CLAUDE_CODE_STOP_HOOK_BLOCK_CAP", "3")];
    hook(&repo, Host::Claude, Host::Claude.start(&repo, "s1"), &env);
    repo.write("b.txt", "change\n");
    let (blocks, last) = stop_until_let_go(&repo, Host::Claude, "s1", &env);
    assert_eq!(blocks.len(), 2, "{blocks:#?}");
    assert!(matches!(last, Answer::Notice(ref n) if n.contains("ended unverified")));
}

#[test]
fn copilots_cap_of_eight_leaves_room_for_the_last_block() {
    let (repo, _) = always_failing();
    repo.git(&["config", "prove-it.maxBlocks", "7"]);
    let host = Host::Copilot;
    hook(&repo, host, host.start(&repo, "s1"), &[]);
    repo.write("b.txt", "change\n");
    let (blocks, last) = stop_until_let_go(&repo, host, "s1", &[]);
    // 6 of the budget and the one that tells the agent: 7, below Copilot's 8.
    assert_eq!(blocks.len(), 7, "{blocks:#?}");
    assert!(blocks[5].contains("attempt 6 of 6"), "{}", blocks[5]);
    assert_eq!(last, Answer::Silent);
}

/// Qwen Code ends a turn after 8 blocks, or `QWEN_CODE_STOP_HOOK_BLOCK_CAP`'s count: the
/// budget and the last block that tells the yield stay below it.
#[test]
fn qwen_codes_cap_leaves_room_for_the_last_block() {
    for (cap, budget) in [(None, 6), (Some("4"), 2)] {
        let (repo, _) = always_failing();
        repo.git(&["config", "prove-it.maxBlocks", "7"]);
        let host = Host::Qwen;
        let env: Vec<(&str, &str)> = cap
            .map(|cap| ("QWEN_CODE_STOP_HOOK_BLOCK_CAP", cap))
            .into_iter()
            .collect();
        hook(&repo, host, host.start(&repo, "s1"), &env);
        repo.write("b.txt", "change\n");
        let (blocks, last) = stop_until_let_go(&repo, host, "s1", &env);
        assert_eq!(blocks.len(), budget + 1, "{cap:?}: {blocks:#?}");
        let attempt = format!("attempt {budget} of {budget}");
        assert!(
            blocks[budget - 1].contains(&attempt),
            "{}",
            blocks[budget - 1]
        );
        assert!(blocks[budget].contains("this turn ended unverified"));
        assert!(!matches!(last, Answer::Block(_)), "{cap:?}");
    }
}

#[test]
fn hosts_without_turn_ids_start_a_new_budget_on_a_fresh_stop() {
    for host in [Host::Gemini, Host::Copilot, Host::Cursor, Host::Vscode] {
        let (repo, _) = always_failing();
        hook(&repo, host, host.start(&repo, "s1"), &[]);
        repo.write("b.txt", "change\n");
        let (first_turn, _) = stop_until_let_go(&repo, host, "s1", &[]);
        assert!(first_turn.len() >= 3, "{host:?}");
        // The next turn's first stop does not follow a block: the budget starts again.
        let mut next = host.stop(&repo, "s1", 0);
        if host == Host::Gemini {
            // Gemini's flag is false again after any tool call: its turn is told by its prompt.
            next.1["prompt"] = json!("make another file");
        }
        let answer = hook(&repo, host, next, &[]);
        let Answer::Block(reason) = answer else {
            panic!("{host:?}: a new turn is gated again: {answer:?}");
        };
        assert!(reason.contains("attempt 1 of 3"), "{host:?}: {reason}");
    }
}

/// Stop as if every stop continued the counted turn (the same turn id, the loop flag set, as
/// Gemini CLI's stops all read) until the gate stops blocking; the blocks and the last answer.
fn stop_continuing_until_let_go(
    repo: &TestRepo,
    host: Host,
    session: &str,
) -> (Vec<String>, Answer) {
    let mut blocks = Vec::new();
    for _ in 0..20 {
        let after = u32::try_from(blocks.len()).unwrap() + 1;
        match hook(repo, host, host.stop(repo, session, after), &[]) {
            Answer::Block(reason) => blocks.push(reason),
            answer => return (blocks, answer),
        }
    }
    panic!("{host:?}: still blocking after 20 stops: the budget did not end the turn");
}

/// On Gemini CLI (no turn id), a person's next prompt that started like the
/// previous one was judged the same turn and went straight to NOT_PROVEN, its budget spent. A
/// prompt is a new turn on every host that sends one, even where its stops would not say so.
#[test]
fn a_new_prompt_after_the_yield_gets_the_whole_budget_on_every_host_that_sends_one() {
    for host in ALL {
        let Some(prompt) = host.prompt(&TestRepo::new(), "s1") else {
            continue;
        };
        let (repo, _) = always_failing();
        hook(&repo, host, host.start(&repo, "s1"), &[]);
        assert_eq!(hook(&repo, host, prompt.clone(), &[]), Answer::Silent);
        repo.write("b.txt", "change\n");
        let (first, yielded) = stop_until_let_go(&repo, host, "s1", &[]);
        assert!(first.len() >= 3, "{host:?}: {first:#?}");
        assert!(!matches!(yielded, Answer::Block(_)), "{host:?}");
        // Without a prompt, the same turn's next stop is let go again at once.
        let (none, _) = stop_continuing_until_let_go(&repo, host, "s1");
        assert!(none.is_empty(), "{host:?}: {none:#?}");
        // The person's prompt, answered silently, gives the next turn its whole budget.
        let prompt = host.prompt(&repo, "s1").unwrap();
        assert_eq!(hook(&repo, host, prompt, &[]), Answer::Silent, "{host:?}");
        let (again, _) = stop_continuing_until_let_go(&repo, host, "s1");
        assert_eq!(again.len(), first.len(), "{host:?}: {again:#?}");
        assert!(
            again[0].contains("attempt 1 of 3"),
            "{host:?}: {}",
            again[0]
        );
    }
}

/// The trap of that rule: the agent cannot submit a person's prompt, but it can run
/// `git prove-it hook <host>` from its shell with a prompt's payload. After a block (and after
/// the last block that tells it the yield) it is still at work on the turn: such a prompt
/// resets nothing, so the budget still ends the turn.
#[test]
fn a_prompt_forged_from_the_agents_shell_mid_turn_resets_no_budget() {
    for host in ALL {
        let Some(prompt) = host.prompt(&TestRepo::new(), "s1") else {
            continue;
        };
        let (repo, _) = always_failing();
        hook(&repo, host, host.start(&repo, "s1"), &[]);
        repo.write("b.txt", "change\n");
        let mut blocks = Vec::new();
        let last = loop {
            assert!(
                blocks.len() < 20,
                "{host:?}: the budget did not end the turn"
            );
            let after = u32::try_from(blocks.len()).unwrap();
            match hook(&repo, host, host.stop(&repo, "s1", after), &[]) {
                Answer::Block(reason) => blocks.push(reason),
                answer => break answer,
            }
            let (arg, payload) = &prompt;
            let forged = (*arg, payload.clone());
            assert_eq!(hook(&repo, host, forged, &[]), Answer::Silent, "{host:?}");
        };
        for (index, reason) in blocks.iter().take(3).enumerate() {
            let attempt = format!("attempt {} of 3 for this turn", index + 1);
            assert!(reason.contains(&attempt), "{host:?}: {reason}");
        }
        let expected = if host.shows_notices() { 3 } else { 4 };
        assert_eq!(blocks.len(), expected, "{host:?}: {blocks:#?}");
        assert!(!matches!(last, Answer::Block(_)), "{host:?}");
    }
}

#[test]
fn vscode_payloads_sent_to_hook_claude_are_answered_in_vscode_protocol() {
    let (repo, _) = always_failing();
    // VS Code reads .claude/settings.json and calls `hook claude` with its own payload.
    let start = Host::Vscode.start(&repo, "vs1");
    let mut cmd = repo.command(cargo_bin("git-prove-it"));
    cmd.args(["hook", "claude"]);
    let out = assert_cmd::Command::from_std(cmd)
        .write_stdin(start.1.to_string())
        .output()
        .unwrap();
    assert_eq!(Host::Vscode.read(&out), Answer::Silent);
    repo.write("b.txt", "change\n");
    let stop = Host::Vscode.stop(&repo, "vs1", 0);
    let mut cmd = repo.command(cargo_bin("git-prove-it"));
    cmd.args(["hook", "claude"]);
    let out = assert_cmd::Command::from_std(cmd)
        .write_stdin(stop.1.to_string())
        .output()
        .unwrap();
    let Answer::Block(reason) = Host::Vscode.read(&out) else {
        panic!("expected VS Code's block: {out:?}");
    };
    assert!(reason.contains("check 42 is broken"), "{reason}");
}

#[test]
fn malformed_input_is_answered_visibly_in_every_protocol() {
    for host in ALL {
        let repo = TestRepo::with_commit();
        let answer = hook(&repo, host, (None, json!(["not", "an", "object"])), &[]);
        let text = match answer {
            Answer::Notice(text) | Answer::Block(text) => text,
            Answer::Silent => panic!("{host:?}: malformed input passed silently"),
        };
        assert!(
            text.contains("could not check this turn"),
            "{host:?}: {text}"
        );
    }
}

#[test]
fn copilots_claim_comes_from_its_transcript_into_the_ledger() {
    let (repo, _) = always_failing();
    repo.git(&["config", "prove-it.ledger", "true"]);
    std::fs::write(
        repo.home().join("events.jsonl"),
        concat!(
            r#"{"type":"user.message","data":{"content":"make a file"}}"#,
            "\n",
            r#"{"type":"assistant.message","data":{"content":"Done. All tests pass."}}"#,
            "\n",
        ),
    )
    .unwrap();
    hook(&repo, Host::Copilot, Host::Copilot.start(&repo, "s1"), &[]);
    repo.write("b.txt", "change\n");
    let answer = hook(
        &repo,
        Host::Copilot,
        Host::Copilot.stop(&repo, "s1", 0),
        &[],
    );
    assert!(matches!(answer, Answer::Block(_)), "{answer:?}");
    let ledger = json_stdout(&repo.prove_it(&["ledger", "--json"]).assert().code(0));
    let entry = &ledger["entries"][0];
    assert_eq!(entry["host"], "copilot", "{ledger}");
    assert_eq!(entry["claim"], "Done. All tests pass.", "{ledger}");
}

/// Copilot writes its transcript lazily: at a later turn's stop, the newest assistant message
/// there may be an earlier turn's. One written before the gate's previous answer in the
/// session is no claim of this turn's; one written after it is.
#[test]
fn copilots_claim_is_never_an_earlier_turns_message() {
    let (repo, _) = always_failing();
    repo.git(&["config", "prove-it.ledger", "true"]);
    let transcript = repo.home().join("events.jsonl");
    let message = |text: &str, at: &str| {
        format!(
            "{{\"type\":\"assistant.message\",\"data\":{{\"content\":\"{text}\"}},\"timestamp\":\"{at}\"}}\n"
        )
    };
    std::fs::write(
        &transcript,
        message("First claim.", "2020-01-01T00:00:00.000Z"),
    )
    .unwrap();
    hook(&repo, Host::Copilot, Host::Copilot.start(&repo, "s1"), &[]);
    repo.write("b.txt", "change\n");
    // Each stop with stop_hook_active false is a new turn's first stop: a block and a ledger line.
    let stop = || {
        hook(
            &repo,
            Host::Copilot,
            Host::Copilot.stop(&repo, "s1", 0),
            &[],
        )
    };
    assert!(matches!(stop(), Answer::Block(_)));
    assert!(matches!(stop(), Answer::Block(_)));
    let mut text = std::fs::read_to_string(&transcript).unwrap();
    text.push_str(&message("Second claim.", "2099-01-01T00:00:00.000Z"));
    std::fs::write(&transcript, text).unwrap();
    assert!(matches!(stop(), Answer::Block(_)));
    let ledger = json_stdout(&repo.prove_it(&["ledger", "--json"]).assert().code(0));
    let claims: Vec<&Value> = ledger["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|entry| &entry["claim"])
        .collect();
    assert_eq!(
        claims,
        [
            &json!("First claim."),
            &Value::Null,
            &json!("Second claim.")
        ],
        "{ledger}"
    );
}

#[test]
fn copilot_without_an_event_name_says_so() {
    let repo = TestRepo::with_commit();
    let (_, payload) = Host::Copilot.stop(&repo, "s1", 0);
    let answer = hook(&repo, Host::Copilot, (None, payload), &[]);
    let Answer::Block(text) = answer else {
        panic!("{answer:?}");
    };
    assert!(text.contains("has no event name"), "{text}");
}

#[test]
fn the_announcement_is_made_once_per_repository() {
    let repo = TestRepo::with_commit();
    let start = |session: &str, args: &[&str]| {
        let mut cmd = repo.command(cargo_bin("git-prove-it"));
        cmd.args(["hook", "claude"]).args(args);
        let out = assert_cmd::Command::from_std(cmd)
            .write_stdin(Host::Claude.start(&repo, session).1.to_string())
            .output()
            .unwrap();
        Host::Claude.read(&out)
    };
    assert_eq!(start("s0", &[]), Answer::Silent);
    let Answer::Notice(notice) = start("s1", &["--announce"]) else {
        panic!("the first announcing start tells the user");
    };
    assert!(
        notice.contains("the gate is armed in this repository"),
        "{notice}"
    );
    assert_eq!(start("s2", &["--announce"]), Answer::Silent);
}

#[test]
fn the_plugins_hooks_are_the_settings_snippets_with_the_announcement() {
    let root = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let read = |path: &str| -> Value {
        serde_json::from_str(&std::fs::read_to_string(root.join(path)).unwrap()).unwrap()
    };
    let plugin = read("hooks/hooks.json");
    let settings = read("hooks/claude-settings.json");
    let hook = |config: &Value, event: &str| config["hooks"][event][0]["hooks"][0].clone();
    assert_eq!(hook(&plugin, "Stop"), hook(&settings, "Stop"));
    let (start, plain) = (
        hook(&plugin, "SessionStart"),
        hook(&settings, "SessionStart"),
    );
    assert_eq!(start["timeout"], plain["timeout"]);
    assert_eq!(
        start["command"].as_str().unwrap(),
        format!("{} --announce", plain["command"].as_str().unwrap())
    );
    assert_eq!(read(".claude-plugin/plugin.json")["name"], "prove-it");
    let marketplace = read(".claude-plugin/marketplace.json");
    assert_eq!(marketplace["plugins"][0]["name"], "prove-it");
    assert_eq!(marketplace["plugins"][0]["source"], "./");
}

/// With the ledger on, a Copilot `transcriptPath` that is a FIFO blocked the
/// hook (reading the claim) until the host killed it, with no answer at all. Any file a payload
/// names is opened without blocking and read only as a regular file: the gate still answers.
#[test]
fn a_fifo_as_copilots_transcript_never_hangs_the_gate() {
    let (repo, _) = always_failing();
    repo.git(&["config", "prove-it.ledger", "true"]);
    let made = std::process::Command::new("mkfifo")
        .arg(repo.home().join("events.jsonl"))
        .status()
        .unwrap();
    assert!(made.success());
    hook(&repo, Host::Copilot, Host::Copilot.start(&repo, "s1"), &[]);
    repo.write("b.txt", "change\n");
    let started = std::time::Instant::now();
    let mut cmd = repo.command(cargo_bin("git-prove-it"));
    let (arg, payload) = Host::Copilot.stop(&repo, "s1", 0);
    cmd.args(["hook", "copilot"]).args(arg);
    let out = assert_cmd::Command::from_std(cmd)
        .write_stdin(payload.to_string())
        .timeout(std::time::Duration::from_secs(30))
        .output()
        .unwrap();
    assert!(
        started.elapsed() < std::time::Duration::from_secs(20),
        "{:?}",
        started.elapsed()
    );
    let answer = Host::Copilot.read(&out);
    assert!(
        matches!(&answer, Answer::Block(reason) if reason.contains("check 42 is broken")),
        "{answer:?}"
    );
    let ledger = json_stdout(&repo.prove_it(&["ledger", "--json"]).assert().code(0));
    let entry = &ledger["entries"][0];
    assert_eq!(entry["host"], "copilot", "{ledger}");
    assert_eq!(
        entry["claim"],
        Value::Null,
        "no claim from a FIFO: {ledger}"
    );
    // A directory and a device in its place are no transcript either.
    for path in [repo.home().to_path_buf(), "/dev/zero".into()] {
        let payload = json!({"sessionId": "s2", "timestamp": 1795978336226u64,
            "cwd": repo.root.display().to_string(), "transcriptPath": path,
            "stopReason": "end_turn", "stop_hook_active": false});
        let answer = hook(&repo, Host::Copilot, (Some("agentStop"), payload), &[]);
        assert!(matches!(answer, Answer::Block(_)), "{path:?}: {answer:?}");
    }
}

/// Gemini CLI (and Claude Code) read a project's hooks only in the directory
/// they are started in: started in `src/`, no gate runs, and `doctor`, even run from `src/`,
/// said the hooks were wired. Now doctor says where the gate does not run (a failure when run
/// from there), until the hooks are wired at user level too, which holds from any folder.
#[test]
fn doctor_says_where_a_host_that_reads_hooks_only_where_it_starts_runs_no_gate() {
    for (host, user_file) in [
        ("gemini", ".gemini/settings.json"),
        ("claude", ".claude/settings.json"),
        ("qwen", ".qwen/settings.json"),
    ] {
        let repo = TestRepo::new();
        repo.write("src/lib.txt", "a\n");
        repo.commit_all("initial");
        let init = repo
            .prove_it(&["init", "--yes", "--no-demo", "--host", host])
            .assert()
            .code(0);
        let said = String::from_utf8_lossy(&init.get_output().stdout).into_owned();
        assert!(
            said.contains("only in the directory it is started in: a session started in a subdirectory is not gated; to gate it, merge the same hooks into"),
            "{host}: init says so too: {said}"
        );
        let doctor = |dir: &std::path::Path| {
            let mut cmd = repo.command(cargo_bin("git-prove-it"));
            cmd.arg("doctor").current_dir(dir);
            let out = cmd.output().unwrap();
            (
                out.status.code(),
                String::from_utf8_lossy(&out.stdout).into_owned(),
            )
        };
        let (_, at_root) = doctor(&repo.root);
        assert!(
            at_root.contains("only in the directory it is started in: started in a subdirectory (such as src/), it runs no gate"),
            "{host}: {at_root}"
        );
        assert!(at_root.contains("\nwarn  "), "{host}: {at_root}");
        let (code, in_src) = doctor(&repo.path("src"));
        assert_eq!(code, Some(1), "{host}: {in_src}");
        assert!(
            in_src.contains(
                "only in the directory it is started in: started here, in src/, it runs no gate"
            ),
            "{host}: {in_src}"
        );
        assert!(in_src.contains("merge the hooks of"), "{host}: {in_src}");
        // Wired for every folder, in the user's settings (the same hooks): gated from src/.
        let wired = std::fs::read_to_string(repo.path(user_file)).unwrap();
        let user = repo.home().join(user_file);
        std::fs::create_dir_all(user.parent().unwrap()).unwrap();
        std::fs::write(&user, wired).unwrap();
        let (_, in_src) = doctor(&repo.path("src"));
        assert!(
            in_src.contains("too, so a session started in any subdirectory is gated"),
            "{host}: {in_src}"
        );
        assert!(!in_src.contains("it runs no gate"), "{host}: {in_src}");
    }
}

/// `init --user-level` makes the wiring hold from any subdirectory for a
/// host that reads a project's hooks only where it starts: the gate's hooks are merged into
/// the user's settings (their other keys kept), `doctor` run in `src/` no longer says the gate
/// does not run there, the user's file is not among the files to commit, and running it again
/// changes nothing.
#[test]
fn init_user_level_wires_the_gate_for_sessions_started_in_any_folder() {
    for (host, user_file) in [
        ("gemini", ".gemini/settings.json"),
        ("claude", ".claude/settings.json"),
        ("qwen", ".qwen/settings.json"),
    ] {
        let repo = TestRepo::new();
        repo.write("src/lib.txt", "a\n");
        repo.commit_all("initial");
        let user = repo.home().join(user_file);
        std::fs::create_dir_all(user.parent().unwrap()).unwrap();
        std::fs::write(&user, "{\n  \"theme\": \"dark\"\n}\n").unwrap();
        let init = repo
            .prove_it(&["init", "--yes", "--no-demo", "--host", host, "--user-level"])
            .assert()
            .code(0);
        let said = String::from_utf8_lossy(&init.get_output().stdout).into_owned();
        assert!(
            said.contains(&format!("merged into {} (user-level", user.display())),
            "{host}: {said}"
        );
        assert!(
            !said.contains("a session started in a subdirectory is not gated"),
            "{host}: {said}"
        );
        let commit = said
            .lines()
            .find(|line| line.contains("git add"))
            .unwrap_or_default();
        assert!(
            commit.contains(user_file),
            "{host}: the project's file: {commit}"
        );
        assert!(
            !commit.contains(&user.display().to_string()),
            "{host}: {commit}"
        );
        let settings: Value =
            serde_json::from_str(&std::fs::read_to_string(&user).unwrap()).unwrap();
        assert_eq!(
            settings["theme"], "dark",
            "{host}: the user's own keys are kept"
        );
        assert!(
            settings["hooks"]
                .to_string()
                .contains(&format!("git prove-it hook {host}")),
            "{host}: {settings}"
        );
        let mut cmd = repo.command(cargo_bin("git-prove-it"));
        cmd.arg("doctor").current_dir(repo.path("src"));
        let out = cmd.output().unwrap();
        let doctor = String::from_utf8_lossy(&out.stdout);
        assert!(
            doctor.contains("so a session started in any subdirectory is gated"),
            "{host}: {doctor}"
        );
        assert!(!doctor.contains("it runs no gate"), "{host}: {doctor}");
        let again = repo
            .prove_it(&["init", "--yes", "--no-demo", "--host", host, "--user-level"])
            .assert()
            .code(0);
        let said = String::from_utf8_lossy(&again.get_output().stdout).into_owned();
        assert!(said.contains("already wired"), "{host}: {said}");
        assert!(!said.contains("merged into"), "{host}: {said}");
    }
}

/// The hooks a host reads from `file`, by event: `[event][0].hooks[0]`.
fn wired_hook(config: &Value, event: &str) -> Value {
    config["hooks"][event][0]["hooks"][0].clone()
}

/// `plugin`'s hooks are the ones `init --host <host>` writes, with `--announce` at SessionStart
/// (as the Claude Code plugin's), and no other events.
fn assert_plugin_hooks_are_inits_with_the_announcement(host: &str, wired: &str, plugin: &Value) {
    let repo = TestRepo::with_commit();
    repo.verify_passes();
    repo.prove_it(&["init", "--yes", "--no-demo", "--host", host])
        .assert()
        .success();
    let init: Value =
        serde_json::from_str(&std::fs::read_to_string(repo.path(wired)).unwrap()).unwrap();
    let events = |config: &Value| -> Vec<String> {
        config["hooks"]
            .as_object()
            .unwrap()
            .keys()
            .cloned()
            .collect()
    };
    assert_eq!(events(plugin), events(&init), "{plugin}");
    for event in events(&init) {
        let (ours, inits) = (wired_hook(plugin, &event), wired_hook(&init, &event));
        if event == "SessionStart" {
            assert_eq!(ours["timeout"], inits["timeout"], "{event}");
            assert_eq!(
                ours["command"].as_str().unwrap(),
                format!("{} --announce", inits["command"].as_str().unwrap())
            );
        } else {
            assert_eq!(ours, inits, "{event}");
        }
    }
}

#[test]
fn the_codex_plugins_hooks_are_inits_with_the_announcement() {
    let root = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let read = |path: &str| -> Value {
        serde_json::from_str(&std::fs::read_to_string(root.join(path)).unwrap()).unwrap()
    };
    let hooks = read("codex/hooks/hooks.json");
    assert_plugin_hooks_are_inits_with_the_announcement("codex", ".codex/hooks.json", &hooks);
    let manifest = read("codex/.codex-plugin/plugin.json");
    assert_eq!(manifest["name"], "prove-it");
    assert_eq!(manifest["version"], env!("CARGO_PKG_VERSION"));
    // The marketplace file Codex reads (not .claude-plugin/marketplace.json, which it also
    // reads but whose "./" would hand Codex the whole checkout, target/ included).
    let marketplace = read(".agents/plugins/marketplace.json");
    assert_eq!(marketplace["name"], "git-prove-it");
    assert_eq!(marketplace["plugins"][0]["name"], "prove-it");
    assert_eq!(
        marketplace["plugins"][0]["source"],
        json!({"source": "local", "path": "./codex"})
    );
}

#[test]
fn the_gemini_extensions_hooks_are_inits_with_the_announcement_in_milliseconds() {
    let root = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let read = |path: &str| -> Value {
        serde_json::from_str(&std::fs::read_to_string(root.join(path)).unwrap()).unwrap()
    };
    let hooks = read("gemini/hooks/hooks.json");
    assert_plugin_hooks_are_inits_with_the_announcement("gemini", ".gemini/settings.json", &hooks);
    // Gemini CLI's timeouts are milliseconds: the stop's must exceed verify.sh's default 300 s.
    assert_eq!(wired_hook(&hooks, "AfterAgent")["timeout"], 900_000);
    let manifest = read("gemini/gemini-extension.json");
    // Gemini CLI installs an extension into a folder named after it.
    assert_eq!(manifest["name"], "prove-it");
    assert_eq!(manifest["version"], env!("CARGO_PKG_VERSION"));
    assert!(
        manifest.get("hooks").is_none(),
        "Gemini CLI reads an extension's hooks from hooks/hooks.json only"
    );
}

#[test]
fn the_qwen_extensions_hooks_are_inits_with_the_announcement_in_seconds() {
    let root = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let read = |path: &str| -> Value {
        serde_json::from_str(&std::fs::read_to_string(root.join(path)).unwrap()).unwrap()
    };
    let hooks = read("qwen/hooks/hooks.json");
    assert_plugin_hooks_are_inits_with_the_announcement("qwen", ".qwen/settings.json", &hooks);
    // Qwen Code's command hook timeouts are seconds (1000 or more reads as milliseconds): the
    // stop's must exceed verify.sh's default 300 s.
    assert_eq!(wired_hook(&hooks, "Stop")["timeout"], 900);
    let manifest = read("qwen/qwen-extension.json");
    // Qwen Code installs an extension into a folder named after it.
    assert_eq!(manifest["name"], "prove-it");
    assert_eq!(manifest["version"], env!("CARGO_PKG_VERSION"));
    assert!(
        manifest.get("hooks").is_none(),
        "the hooks are in hooks/hooks.json, as for Gemini CLI's extension"
    );
}
