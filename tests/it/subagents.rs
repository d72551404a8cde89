//! Claude Code's subagents and agent teams at `git prove-it hook claude`: `SubagentStart` and
//! `SubagentStop` (a subagent in a worktree of its own under `.claude/worktrees/`, or in its
//! session's), `TaskCompleted` and `TeammateIdle`, in real repositories, fed the JSON Claude
//! Code 2.1.328 sends (ADAPTERS.md).

use std::path::{Path, PathBuf};
use std::process::Output;

use assert_cmd::cargo::cargo_bin;
use serde_json::{Value, json};

use crate::harness::TestRepo;

const SESSION: &str = "82b7d8a7-test-session";
const PROMPT: &str = "bf6b8cc6-prompt-1";
const AGENT: &str = "ac7ccbb57ef46443e";

/// A committed repository whose verify.sh fails while `bad.txt` exists, its runs counted in a
/// file outside the repository. `.claude/worktrees/` is ignored, as Claude Code's documentation
/// asks: else the session's own state holds each subagent's worktree as an embedded repository.
fn armed() -> (TestRepo, PathBuf) {
    let repo = TestRepo::new();
    repo.write("a.txt", "a\n");
    repo.write(".gitignore", ".claude/worktrees/\n");
    let counter = repo.home().join("runs");
    repo.verify_script(&format!(
        "echo run >> '{}'\nif [ -e bad.txt ]; then echo 'FAILED: bad.txt is here'; exit 1; fi\necho ok",
        counter.display()
    ));
    repo.commit_all("initial");
    (repo, counter)
}

fn runs(counter: &Path) -> usize {
    std::fs::read_to_string(counter).map_or(0, |s| s.lines().count())
}

/// `git prove-it hook claude` run in `cwd`, as Claude Code runs it there, with
/// `CLAUDE_PROJECT_DIR` the folder the session started in.
fn hook(repo: &TestRepo, cwd: &Path, event: &Value) -> Output {
    hook_with(repo, cwd, event, &[])
}

fn hook_with(repo: &TestRepo, cwd: &Path, event: &Value, env: &[(&str, &str)]) -> Output {
    let mut cmd = repo.command(cargo_bin("git-prove-it"));
    cmd.current_dir(cwd)
        .args(["hook", "claude"])
        .env("CLAUDE_PROJECT_DIR", &repo.root)
        .envs(env.iter().copied());
    assert_cmd::Command::from_std(cmd)
        .write_stdin(event.to_string())
        .output()
        .unwrap()
}

/// The answer on stdout of a hook that exited 0: `None` for silence.
#[track_caller]
fn answer(out: &Output) -> Option<Value> {
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let stdout = String::from_utf8_lossy(&out.stdout);
    (!stdout.is_empty()).then(|| serde_json::from_str(&stdout).expect("one JSON object"))
}

#[track_caller]
fn block(out: &Output) -> String {
    let json = answer(out).expect("a block, not silence");
    assert_eq!(json["decision"], "block", "{json}");
    json["reason"].as_str().unwrap().to_string()
}

fn start(repo: &TestRepo) -> Output {
    hook(
        repo,
        &repo.root,
        &json!({"session_id": SESSION, "transcript_path": "/tmp/t.jsonl", "cwd": repo.root,
                "hook_event_name": "SessionStart", "source": "startup"}),
    )
}

fn stop(repo: &TestRepo, active: bool) -> Output {
    hook(
        repo,
        &repo.root,
        &json!({"session_id": SESSION, "transcript_path": "/tmp/t.jsonl", "cwd": repo.root,
                "prompt_id": PROMPT, "permission_mode": "default", "effort": {"level": "medium"},
                "hook_event_name": "Stop", "stop_hook_active": active,
                "last_assistant_message": "All done.", "background_tasks": [],
                "session_crons": []}),
    )
}

fn subagent_start(repo: &TestRepo, cwd: &Path) -> Output {
    hook(
        repo,
        cwd,
        &json!({"session_id": SESSION, "transcript_path": "/tmp/t.jsonl", "cwd": cwd,
                "prompt_id": PROMPT, "agent_id": AGENT, "agent_type": "general-purpose",
                "hook_event_name": "SubagentStart"}),
    )
}

fn subagent_stop(repo: &TestRepo, cwd: &Path, active: bool) -> Output {
    hook(
        repo,
        cwd,
        &json!({"session_id": SESSION, "transcript_path": "/tmp/t.jsonl", "cwd": cwd,
                "prompt_id": PROMPT, "permission_mode": "default", "agent_id": AGENT,
                "agent_type": "general-purpose", "effort": {"level": "medium"},
                "hook_event_name": "SubagentStop", "stop_hook_active": active,
                "agent_transcript_path": format!("/tmp/{SESSION}/subagents/agent-{AGENT}.jsonl"),
                "last_assistant_message": "Sub done.", "background_tasks": [],
                "session_crons": []}),
    )
}

/// A worktree of the subagent's own, where Claude Code puts it.
fn agent_worktree(repo: &TestRepo) -> PathBuf {
    let rel = format!(".claude/worktrees/agent-{AGENT}");
    repo.git(&["worktree", "add", "-q", "-b", "worktree-agent", &rel]);
    repo.root.join(rel).canonicalize().unwrap()
}

/// A subagent isolated in a worktree changes files nobody else gates: its own stop must gate
/// them, with a budget of its own, while its session's stop is not spent on them.
#[test]
fn a_subagent_in_a_worktree_of_its_own_is_gated_at_its_stop_with_its_own_budget() {
    let (repo, counter) = armed();
    assert_eq!(answer(&start(&repo)), None);
    let worktree = agent_worktree(&repo);
    assert_eq!(answer(&subagent_start(&repo, &worktree)), None);
    std::fs::write(worktree.join("bad.txt"), "bad\n").unwrap();

    let reason = block(&subagent_stop(&repo, &worktree, false));
    assert!(reason.contains("FAILED: bad.txt is here"), "{reason}");
    assert_eq!(runs(&counter), 1);
    // The session's stop in its own worktree, unchanged, is not blocked by the subagent's.
    assert_eq!(answer(&stop(&repo, false)), None);
    assert_eq!(runs(&counter), 1);

    // The subagent's budget is its own: three blocks, then the turn ends unverified.
    for _ in 0..2 {
        block(&subagent_stop(&repo, &worktree, true));
    }
    let last = subagent_stop(&repo, &worktree, true);
    let text = String::from_utf8_lossy(&last.stdout);
    assert!(text.contains("NOT_PROVEN"), "{text}");

    // A fix is proven in the worktree, by its own tree.
    std::fs::remove_file(worktree.join("bad.txt")).unwrap();
    std::fs::write(worktree.join("good.txt"), "good\n").unwrap();
    let out = hook(
        &repo,
        &worktree,
        &json!({"session_id": SESSION, "cwd": worktree, "prompt_id": "bf6b8cc6-prompt-2",
                "agent_id": AGENT, "agent_type": "general-purpose",
                "hook_event_name": "SubagentStop", "stop_hook_active": false,
                "last_assistant_message": "Fixed."}),
    );
    assert_eq!(answer(&out), None);
    let proven = repo
        .command(cargo_bin("git-prove-it"))
        .current_dir(&worktree)
        .arg("status")
        .output()
        .unwrap();
    assert_eq!(proven.status.code(), Some(0), "{proven:?}");
}

/// A subagent working in its session's worktree changes what the session's stop proves: gating
/// it at its own stop too would run verify.sh twice on one tree and spend blocks twice.
#[test]
fn a_subagent_in_its_sessions_worktree_is_not_gated_twice() {
    let (repo, counter) = armed();
    start(&repo);
    assert_eq!(answer(&subagent_start(&repo, &repo.root)), None);
    repo.write("bad.txt", "bad\n");
    assert_eq!(answer(&subagent_stop(&repo, &repo.root, false)), None);
    assert_eq!(runs(&counter), 0);
    let reason = block(&stop(&repo, false));
    assert!(reason.contains("FAILED: bad.txt is here"), "{reason}");
    assert_eq!(runs(&counter), 1);
}

/// A subagent's shell may wander into its session's worktree: its stop still gates only the
/// worktree it was anchored in, and says nothing of the session's.
#[test]
fn a_subagents_stop_from_its_sessions_worktree_gates_only_its_own() {
    let (repo, counter) = armed();
    start(&repo);
    let worktree = agent_worktree(&repo);
    subagent_start(&repo, &worktree);
    repo.write("bad.txt", "bad\n");
    assert_eq!(answer(&subagent_stop(&repo, &repo.root, false)), None);
    assert_eq!(runs(&counter), 0);
}

fn task_completed(repo: &TestRepo, task: &str) -> Output {
    hook(
        repo,
        &repo.root,
        &json!({"session_id": SESSION, "transcript_path": "/tmp/t.jsonl", "cwd": repo.root,
                "permission_mode": "default", "hook_event_name": "TaskCompleted",
                "task_id": task, "task_subject": "make the answer 5",
                "task_description": "change answer.txt", "teammate_name": "implementer",
                "team_name": "t1"}),
    )
}

fn teammate_idle(repo: &TestRepo) -> Output {
    hook(
        repo,
        &repo.root,
        &json!({"session_id": SESSION, "transcript_path": "/tmp/t.jsonl", "cwd": repo.root,
                "permission_mode": "default", "hook_event_name": "TeammateIdle",
                "teammate_name": "implementer", "team_name": "t1"}),
    )
}

/// Claude Code reads a TaskCompleted or TeammateIdle hook's block from exit status 2 and sends
/// its stderr back; a JSON block on stdout with exit 0 would let the task count as done.
#[test]
fn a_task_completed_or_a_teammate_idle_on_a_failing_state_is_sent_back_by_exit_2() {
    let (repo, _) = armed();
    start(&repo);
    repo.write("bad.txt", "bad\n");
    for out in [task_completed(&repo, "1"), teammate_idle(&repo)] {
        assert_eq!(out.status.code(), Some(2), "{out:?}");
        assert!(out.stdout.is_empty(), "{out:?}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains("FAILED: bad.txt is here"), "{stderr}");
    }
    repo.remove("bad.txt");
    repo.write("good.txt", "good\n");
    let out = task_completed(&repo, "2");
    assert_eq!(answer(&out), None);
}

fn stop_with_tasks(repo: &TestRepo, tasks: &Value) -> Output {
    hook(
        repo,
        &repo.root,
        &json!({"session_id": SESSION, "transcript_path": "/tmp/t.jsonl", "cwd": repo.root,
                "prompt_id": PROMPT, "permission_mode": "default",
                "hook_event_name": "Stop", "stop_hook_active": false,
                "last_assistant_message": "All done.", "background_tasks": tasks,
                "session_crons": []}),
    )
}

fn watcher() -> Value {
    json!([{"id": "b7k2", "type": "shell", "status": "running",
            "description": "watch the tests", "command": "npm test -- --watch"}])
}

/// "The goal hook is skipped while a background task is live": a quiet pass while work still
/// runs reads as "all done". The stop says what it proved, and names what is still running.
#[test]
fn a_stop_while_background_tasks_run_is_never_silent_and_names_them() {
    let (repo, counter) = armed();
    start(&repo);
    repo.write("good.txt", "good\n");
    for _ in 0..2 {
        let notice = answer(&stop_with_tasks(&repo, &watcher())).expect("a notice");
        let text = notice["systemMessage"].as_str().unwrap();
        assert!(notice.get("decision").is_none(), "{notice}");
        assert!(text.contains("1 background task still running"), "{text}");
        assert!(text.contains("the working state as of now"), "{text}");
        assert!(
            text.contains("shell b7k2 (running): watch the tests [npm test -- --watch]"),
            "{text}"
        );
    }
    // Proven once, by tree; the second stop found the proof.
    assert_eq!(runs(&counter), 1);
    // With nothing in flight, the same stop is silent.
    assert_eq!(answer(&stop_with_tasks(&repo, &json!([]))), None);
}

/// Files written while verify.sh ran (here by verify.sh itself, as a watcher would) leave no
/// proof: the block says the state moved, and names the tasks still running as it did.
#[test]
fn a_block_for_files_changed_during_the_run_names_the_background_tasks() {
    let repo = TestRepo::new();
    repo.write(".gitignore", ".claude/worktrees/\n");
    repo.verify_script("sleep 0.2\ndate >> written-meanwhile.txt\necho ok");
    repo.commit_all("initial");
    start(&repo);
    repo.write("good.txt", "good\n");
    let reason = block(&stop_with_tasks(&repo, &watcher()));
    assert!(reason.contains("written-meanwhile.txt"), "{reason}");
    assert!(
        reason.contains("1 background task of yours was still running as you stopped"),
        "{reason}"
    );
    assert!(reason.contains("shell b7k2 (running)"), "{reason}");
}

/// Claude Code stops honouring blocks after `CLAUDE_CODE_STOP_HOOK_BLOCK_CAP` in a row: below
/// the gate's budget, the gate's blocks and its last block (the yield, in `claude -p`) must all
/// fit under it, or the turn would end on the host's cap with the yield never said.
#[test]
fn a_host_block_cap_below_the_budget_still_lets_the_yield_reach_the_agent() {
    let (repo, _) = armed();
    let env = [
        ("CLAUDE_CODE_STOP_HOOK_BLOCK_CAP", "3"),
        ("CLAUDE_CODE_ENTRYPOINT", "sdk-cli"),
    ];
    let event = |active: bool| {
        json!({"session_id": SESSION, "cwd": repo.root, "prompt_id": PROMPT,
               "hook_event_name": "Stop", "stop_hook_active": active,
               "last_assistant_message": "All done."})
    };
    hook_with(
        &repo,
        &repo.root,
        &json!({"session_id": SESSION, "cwd": repo.root,
        "hook_event_name": "SessionStart", "source": "startup"}),
        &env,
    );
    repo.write("bad.txt", "bad\n");
    let first = block(&hook_with(&repo, &repo.root, &event(false), &env));
    assert!(first.contains("attempt 1 of 1"), "{first}");
    let last = block(&hook_with(&repo, &repo.root, &event(true), &env));
    assert!(last.contains("NOT_PROVEN"), "{last}");
    // Two blocks in a row, below the host's 3: the yield was honoured, and the turn ends.
    let after = answer(&hook_with(&repo, &repo.root, &event(true), &env));
    assert!(after.is_none_or(|json| json.get("decision").is_none()));
}

/// Teammates of an agent team share one worktree: their task completions at the same moment
/// must not run verify.sh on it at once (two runs of one suite trample each other's files), and
/// the second need not run at all when the first proves the same state.
#[test]
fn teammates_sharing_a_worktree_never_run_verify_sh_at_once_and_the_second_joins_the_first() {
    let repo = TestRepo::new();
    repo.write(".gitignore", "running/\n");
    let counter = repo.home().join("runs");
    let overlap = repo.home().join("overlap");
    repo.verify_script(&format!(
        "echo run >> '{runs}'\nmkdir running 2>/dev/null || echo overlap >> '{overlap}'\nsleep 1\nrmdir running\necho ok",
        runs = counter.display(),
        overlap = overlap.display(),
    ));
    repo.commit_all("initial");
    let teammates = ["lead-session", "mate-session"];
    for id in teammates {
        hook(
            &repo,
            &repo.root,
            &json!({"session_id": id, "cwd": repo.root, "hook_event_name": "SessionStart",
                    "source": "startup"}),
        );
    }
    repo.write("good.txt", "good\n");
    let outs: Vec<Output> = std::thread::scope(|scope| {
        let running: Vec<_> = teammates
            .iter()
            .map(|id| {
                let repo = &repo;
                scope.spawn(move || {
                    hook(
                        repo,
                        &repo.root,
                        &json!({"session_id": id, "cwd": repo.root,
                                "hook_event_name": "TaskCompleted", "task_id": "1",
                                "task_subject": "add good.txt", "teammate_name": id,
                                "team_name": "t1"}),
                    )
                })
            })
            .collect();
        running.into_iter().map(|t| t.join().unwrap()).collect()
    });
    for out in &outs {
        assert_eq!(answer(out), None, "{out:?}");
    }
    assert!(!overlap.exists(), "two runs at once");
    assert_eq!(runs(&counter), 1);
}
