//! Claude Code's subagents, end to end: the real `claude -p` starts a subagent with
//! `isolation: "worktree"` (the Agent tool), or without, against a fake Anthropic Messages API,
//! and itself calls `git prove-it hook claude` at SubagentStart and SubagentStop, wired by
//! `hooks/claude-settings.json`. The module's name ends in `claude_e2e` so that `.ci/run`'s
//! filter for Claude Code selects it.

use std::path::PathBuf;
use std::process::Output;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use serde_json::{Value, json};

use crate::claude_e2e::INFO;
use crate::e2e::harness::host_command;
use crate::e2e::{describe, run_bounded};
use crate::fake_model::anthropic::Anthropic;
use crate::fake_model::{Api, FakeModel, Reply, Request, Response, Script, call_id};
use crate::harness::TestRepo;

const FAILING: &str = "FAILED: bad.txt is here";

/// The session's agent and its one subagent, told apart by the marker Claude Code 2.1.328 puts
/// in a subagent's system prompt (`cc_is_subagent=true`): the session starts the subagent in a
/// worktree of its own, the subagent writes a failing change, ends, is sent back, fixes it.
struct Delegating {
    /// The subagent works in a worktree of its own (`isolation: "worktree"`), else in the
    /// session's folder, where the session fixes its change once sent back.
    isolated: bool,
    session: AtomicUsize,
    subagent: AtomicUsize,
}

impl Delegating {
    fn new(isolated: bool) -> Self {
        Delegating {
            isolated,
            session: AtomicUsize::new(0),
            subagent: AtomicUsize::new(0),
        }
    }
}

impl Api for Delegating {
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
        let model = body["model"].as_str().unwrap_or("claude-fake");
        let subagent = body["system"].to_string().contains("cc_is_subagent=true");
        if !subagent {
            let reply = match self.session.fetch_add(1, Ordering::SeqCst) {
                0 => {
                    let mut input = json!({"description": "change the answer",
                        "subagent_type": "general-purpose", "prompt": "Write bad.txt",
                        "run_in_background": false});
                    if self.isolated {
                        input["isolation"] = json!("worktree");
                    }
                    return tool_call(model, "Agent", &input);
                }
                1 => Reply::Text("All done."),
                2 if !self.isolated => Reply::Shell("rm bad.txt && echo good > good.txt"),
                _ => Reply::Text("Fixed."),
            };
            return Anthropic.respond(method, path, body, Some(&reply));
        }
        let reply = match self.subagent.fetch_add(1, Ordering::SeqCst) {
            0 => Reply::Shell("echo bad > bad.txt"),
            1 => Reply::Text("Sub done."),
            2 if self.isolated => Reply::Shell("rm bad.txt && echo good > good.txt"),
            _ => Reply::Text("Fixed."),
        };
        Anthropic.respond(method, path, body, Some(&reply))
    }
}

/// One streamed assistant message calling `name` with `input`.
fn tool_call(model: &str, name: &str, input: &Value) -> Response {
    let usage = json!({"input_tokens": 10, "output_tokens": 10,
        "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0});
    let events = [
        json!({"type": "message_start", "message": {"id": "msg_fake", "type": "message",
               "role": "assistant", "model": model, "content": [], "stop_reason": null,
               "stop_sequence": null, "usage": usage}}),
        json!({"type": "content_block_start", "index": 0, "content_block":
               {"type": "tool_use", "id": call_id("toolu_agent"), "name": name, "input": {}}}),
        json!({"type": "content_block_delta", "index": 0, "delta":
               {"type": "input_json_delta", "partial_json": input.to_string()}}),
        json!({"type": "content_block_stop", "index": 0}),
        json!({"type": "message_delta", "delta": {"stop_reason": "tool_use", "stop_sequence": null},
               "usage": {"output_tokens": 10}}),
        json!({"type": "message_stop"}),
    ];
    Response::events(&events, true)
}

/// A subagent isolated in a worktree wrote a failing change there that no stop of its session
/// would see: Claude Code sends it back from SubagentStop with the failure, and its fix is
/// proven in its worktree, while the session's own stop has nothing to block.
#[test]
#[ignore = "drives the real claude CLI; see docs/development.md: .ci/install-hosts, then cargo test _e2e -- --ignored"]
fn a_subagent_in_its_own_worktree_is_sent_back_with_the_failure_and_its_fix_proven() {
    let repo = wired();
    let server = FakeModel::start(
        Delegating::new(true),
        Script::new(vec![], Reply::Text("unused")),
    );
    let out = run(&repo, &server);
    let context = describe(&out, &server);
    assert!(out.status.success(), "{context}");

    let (session, subagent) = turns(&server);
    // Sent back once, with verify.sh's failing line, then let go after the fix.
    assert_eq!(subagent.len(), 4, "{context}");
    assert!(subagent[2].user_text().contains(FAILING), "{context}");
    assert!(!subagent[1].user_text().contains(FAILING), "{context}");
    // The session's own turns never saw a block: its worktree did not change.
    assert!(
        session
            .iter()
            .all(|turn| !turn.user_text().contains("Stop hook feedback")),
        "{context}"
    );
    // The fixed state of the subagent's worktree is proven there.
    let worktrees = repo.root.join(".claude/worktrees");
    let worktree = std::fs::read_dir(&worktrees)
        .unwrap_or_else(|error| panic!("{}: {error}\n{context}", worktrees.display()))
        .map(|entry| entry.unwrap().path())
        .next()
        .expect("the subagent's worktree");
    assert!(worktree.join("good.txt").is_file(), "{context}");
    repo.prove_it(&["status"])
        .current_dir(&worktree)
        .assert()
        .code(0);
}

/// A subagent working in its session's folder is left to the session's stop, which proves the
/// same tree: the subagent is not sent back (verify.sh would run twice on one tree), and the
/// session is, with the failure, once it tries to end its turn.
#[test]
#[ignore = "drives the real claude CLI; see docs/development.md: .ci/install-hosts, then cargo test _e2e -- --ignored"]
fn a_subagent_in_its_sessions_folder_is_gated_by_the_sessions_stop_only() {
    let repo = wired();
    let server = FakeModel::start(
        Delegating::new(false),
        Script::new(vec![], Reply::Text("unused")),
    );
    let out = run(&repo, &server);
    let context = describe(&out, &server);
    assert!(out.status.success(), "{context}");
    let (session, subagent) = turns(&server);
    assert_eq!(subagent.len(), 2, "{context}");
    assert!(
        subagent
            .iter()
            .all(|turn| !turn.user_text().contains(FAILING)),
        "{context}"
    );
    assert_eq!(session.len(), 4, "{context}");
    assert!(session[2].last_user_text().contains(FAILING), "{context}");
    assert!(!repo.root.join(".claude/worktrees").exists(), "{context}");
    repo.prove_it(&["status"]).assert().code(0);
}

/// The session's turns and the subagent's, as the fake model saw them.
fn turns(server: &FakeModel) -> (Vec<Request>, Vec<Request>) {
    server.agent_turns().into_iter().partition(|turn| {
        !turn.body["system"]
            .to_string()
            .contains("cc_is_subagent=true")
    })
}

/// A repository wired by `hooks/claude-settings.json`, whose verify.sh fails while `bad.txt`
/// exists.
fn wired() -> TestRepo {
    let repo = TestRepo::new();
    let settings = std::fs::read_to_string(
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("hooks/claude-settings.json"),
    )
    .unwrap();
    repo.write(".claude/settings.json", &settings);
    // As Claude Code's documentation asks for worktrees under .claude/worktrees/.
    repo.write(".gitignore", ".claude/worktrees/\n");
    repo.write("a.txt", "a\n");
    repo.verify_script(&format!(
        "if [ -e bad.txt ]; then echo '{FAILING}'; exit 1; fi\necho ok"
    ));
    repo.commit_all("initial");
    repo
}

/// `claude -p` in the repository, with the Agent tool allowed.
fn run(repo: &TestRepo, server: &FakeModel) -> Output {
    let claude = INFO.binary();
    let config = repo.home().join("claude-config");
    std::fs::create_dir_all(&config).unwrap();
    let mut cmd = host_command(&claude, repo);
    cmd.args([
        "-p",
        "delegate the change",
        "--allowedTools",
        "Bash,Agent",
        "--output-format",
        "stream-json",
        "--verbose",
    ])
    .env("ANTHROPIC_BASE_URL", server.base_url())
    .env("ANTHROPIC_API_KEY", "sk-ant-fake-key-for-tests")
    .env("CLAUDE_CONFIG_DIR", &config)
    .env("DISABLE_TELEMETRY", "1")
    .env("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1")
    .env("DISABLE_AUTOUPDATER", "1");
    run_bounded(cmd, Duration::from_secs(240))
}
