//! No silent pass: which worktrees a stop gates, and the turn state. The stop's
//! `cwd` follows the agent's shell, and the gate's files are the agent's to edit; each trap
//! here is one way an agent used that to end a turn silently, driven through the real binary
//! (`git prove-it hook claude`) in real repositories.

use std::path::{Path, PathBuf};

use assert_cmd::cargo::cargo_bin;
use serde_json::{Value, json};

use crate::harness::TestRepo;

const SESSION: &str = "19ab0000-where-session";

/// The hook, run with `runner`'s environment (its HOME holds the session index), for an event
/// whose cwd is `cwd`; `env` is added to the hook's environment.
fn hook(runner: &TestRepo, env: &[(&str, &Path)], event: &Value) -> Option<Value> {
    let mut cmd = runner.command(cargo_bin("git-prove-it"));
    cmd.args(["hook", "claude"]);
    for (key, value) in env {
        cmd.env(key, value);
    }
    let out = assert_cmd::Command::from_std(cmd)
        .write_stdin(event.to_string())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "hooks always exit 0: {out:?}");
    let stdout = String::from_utf8(out.stdout).unwrap();
    if stdout.is_empty() {
        return None;
    }
    assert!(
        stdout.ends_with('\n') && stdout.matches('\n').count() == 1,
        "{stdout:?}"
    );
    Some(serde_json::from_str(&stdout).unwrap())
}

fn start_event(cwd: &str) -> Value {
    json!({
        "session_id": SESSION,
        "transcript_path": "/tmp/t.jsonl",
        "cwd": cwd,
        "hook_event_name": "SessionStart",
        "source": "startup",
    })
}

fn stop_event(cwd: &str, active: bool) -> Value {
    json!({
        "session_id": SESSION,
        "transcript_path": "/tmp/t.jsonl",
        "cwd": cwd,
        "prompt_id": "99ce0000-prompt-1",
        "hook_event_name": "Stop",
        "stop_hook_active": active,
        "last_assistant_message": "All tests pass.",
    })
}

fn text(path: &Path) -> &str {
    path.to_str().unwrap()
}

fn start(runner: &TestRepo, cwd: &Path) {
    assert_eq!(hook(runner, &[], &start_event(text(cwd))), None);
}

fn stop(runner: &TestRepo, cwd: &str) -> Option<Value> {
    hook(runner, &[], &stop_event(cwd, false))
}

#[track_caller]
fn block(answer: Option<Value>) -> String {
    let json = answer.expect("a block, not silence");
    assert_eq!(json["decision"], "block", "{json}");
    json["reason"].as_str().unwrap().to_string()
}

#[track_caller]
fn notice(answer: Option<Value>) -> String {
    let json = answer.expect("a notice, not silence");
    assert!(json.get("decision").is_none(), "{json}");
    json["systemMessage"].as_str().unwrap().to_string()
}

/// A committed repository whose verify.sh counts its runs in `<home>/runs-<name>` and exits
/// `code`.
fn armed(code: i32) -> (TestRepo, PathBuf) {
    let repo = TestRepo::new();
    repo.write("a.txt", "a\n");
    let counter = repo.home().join("runs");
    counting(&repo, &counter, code);
    repo.commit_all("initial");
    (repo, counter)
}

fn counting(repo: &TestRepo, counter: &Path, code: i32) {
    repo.verify_script(&format!(
        "echo run >> '{}'\necho '1 failed'\nexit {code}",
        counter.display()
    ));
}

fn runs(counter: &Path) -> usize {
    std::fs::read_to_string(counter).map_or(0, |s| s.lines().count())
}

/// The worktree root as the gate names it.
fn root(repo: &TestRepo) -> String {
    repo.root.canonicalize().unwrap().display().to_string()
}

/// A session that started in an armed repository whose verify.sh fails, and changed it.
fn changed_session() -> (TestRepo, PathBuf) {
    let (repo, counter) = armed(1);
    start(&repo, &repo.root);
    repo.write("b.txt", "changed\n");
    (repo, counter)
}

/// The agent's shell left the repository (to a directory in no repository, to one
/// that does not exist) and the stop ended silently while the session's own repository was
/// broken. The worktree the session anchored is gated wherever cwd points, and named.
#[test]
fn moving_cwd_out_of_the_repository_still_gates_the_anchored_worktree() {
    let (repo, counter) = changed_session();
    let outside = tempfile::tempdir().unwrap();
    let missing = repo.home().join("no/such/dir");
    let expected = [(text(outside.path()), 1), (text(&missing), 2)];
    for (cwd, run) in expected {
        let reason = block(stop(&repo, cwd));
        assert!(
            reason.starts_with(&format!("prove-it: in {}: DISPROVEN", root(&repo))),
            "{cwd}: {reason}"
        );
        assert!(reason.contains("1 failed"), "{reason}");
        assert_eq!(runs(&counter), run, "{cwd}");
    }
}

/// A nested repository in an ignored folder is not the session's repository: the outer
/// worktree is gated, and the nested one's verify.sh is not run.
#[test]
fn a_nested_repository_in_an_ignored_folder_does_not_hide_the_outer_one() {
    let (repo, counter) = armed(1);
    repo.write(".gitignore", "vendor/\n");
    repo.commit_all("ignore vendor");
    start(&repo, &repo.root);
    let nested = repo.path("vendor/lib");
    std::fs::create_dir_all(&nested).unwrap();
    let nested_runs = repo.home().join("nested-runs");
    repo.command("git")
        .current_dir(&nested)
        .args(["init", "-q"])
        .status()
        .unwrap();
    std::fs::write(
        nested.join("verify.sh"),
        format!(
            "#!/bin/sh\necho run >> '{}'\nexit 0\n",
            nested_runs.display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(
        nested.join("verify.sh"),
        std::os::unix::fs::PermissionsExt::from_mode(0o755),
    )
    .unwrap();
    repo.write("b.txt", "changed\n");
    let reason = block(stop(&repo, text(&nested)));
    assert!(
        reason.contains(&format!("in {}: DISPROVEN", root(&repo))),
        "{reason}"
    );
    // The block is the outer worktree's alone: the nested repository is neither run nor blamed.
    assert!(!reason.contains("vendor/lib"), "{reason}");
    assert_eq!(runs(&counter), 1);
    assert_eq!(runs(&nested_runs), 0, "the nested verify.sh must not run");
}

/// With the session index gone (deleted by the agent), Claude Code's
/// `CLAUDE_PROJECT_DIR` still finds the session's repository through its anchor.
#[test]
fn claude_project_dir_finds_the_anchored_worktree_without_the_index() {
    let (repo, counter) = changed_session();
    std::fs::remove_dir_all(repo.home().join(".local/state/git-prove-it")).unwrap();
    let outside = tempfile::tempdir().unwrap();
    let event = stop_event(text(outside.path()), false);
    let reason = block(hook(&repo, &[("CLAUDE_PROJECT_DIR", &repo.root)], &event));
    assert!(
        reason.contains(&format!("in {}: DISPROVEN", root(&repo))),
        "{reason}"
    );
    assert_eq!(runs(&counter), 1);
}

/// A repository the session never anchored (a clone the agent just made, a second
/// project) had its verify.sh run by the stop: code nobody opted into. It is not run; the
/// notice says it was not gated and how to prove it by hand.
#[test]
fn a_repository_the_session_never_anchored_is_not_run() {
    let (repo, counter) = armed(0);
    start(&repo, &repo.root);
    let (stranger, stranger_runs) = armed(0);
    stranger.write("b.txt", "changed\n");
    let text = notice(stop(&repo, text(&stranger.root)));
    let name = root(&stranger);
    assert!(
        text.starts_with(&format!("prove-it: {name} was not gated")),
        "{text}"
    );
    assert!(
        text.contains(&format!(
            "hint: to prove its working state by hand, run `git prove-it run` in {name}"
        )),
        "{text}"
    );
    assert_eq!(
        runs(&stranger_runs),
        0,
        "the stranger's verify.sh must not run"
    );
    assert_eq!(runs(&counter), 0, "the anchored repository did not change");
    assert_eq!(stranger.git(&["for-each-ref", "refs/notes"]), "");
    assert!(!stranger.path(".git/prove-it").exists());
}

/// The other side: a session that anchored nothing (SessionStart not wired) keeps
/// today's behaviour for the cwd's repository, and says the anchor was missing.
#[test]
fn a_session_that_anchored_nothing_gates_the_cwds_repository_and_says_so() {
    let (repo, counter) = armed(1);
    repo.write("b.txt", "changed\n");
    let reason = block(stop(&repo, text(&repo.root)));
    assert!(reason.starts_with("prove-it: DISPROVEN"), "{reason}");
    assert!(reason.contains("No session-start anchor"), "{reason}");
    assert_eq!(runs(&counter), 1);
}

/// Two worktrees anchored by one session, both broken: one stop blocks, naming each.
#[test]
fn every_anchored_worktree_is_gated_and_each_block_names_its_worktree() {
    let (first, first_runs) = changed_session();
    let (second, second_runs) = armed(1);
    start(&first, &second.root);
    second.write("c.txt", "changed\n");
    let reason = block(stop(&first, text(&first.root)));
    for repo in [&first, &second] {
        assert!(
            reason.contains(&format!("prove-it: in {}: DISPROVEN", root(repo))),
            "{reason}"
        );
    }
    assert_eq!((runs(&first_runs), runs(&second_runs)), (1, 1));
}

/// `git config core.bare true` mid-session made the gate see a bare repository and end
/// quietly. The anchored worktree that stops looking like one is refused loudly, and nothing
/// is proven.
#[test]
fn core_bare_true_mid_session_is_refused_loudly() {
    let (repo, counter) = changed_session();
    repo.git(&["config", "core.bare", "true"]);
    for cwd in [repo.root.clone(), repo.home().to_owned()] {
        let text = notice(stop(&repo, text(&cwd)));
        assert!(
            text.starts_with("prove-it: could not check this turn: ")
                && text.contains("this turn ended unverified")
                && text.contains("core.bare false"),
            "{text}"
        );
    }
    // The session index gone too, the anchor in the repository still says whose it was.
    std::fs::remove_dir_all(repo.home().join(".local/state/git-prove-it")).unwrap();
    let text = notice(stop(&repo, text(&repo.root)));
    assert!(text.contains("core.bare false"), "{text}");
    assert_eq!(runs(&counter), 0);
    assert_eq!(repo.git(&["notes", "--ref", "prove-it", "list"]), "");
}

/// The anchored worktree's .git removed or moved away is refused loudly too.
#[test]
fn an_anchored_worktree_whose_git_dir_is_gone_is_refused_loudly() {
    let (repo, counter) = changed_session();
    std::fs::rename(repo.path(".git"), repo.home().join("moved.git")).unwrap();
    let text = notice(stop(&repo, text(&repo.root)));
    assert!(
        text.starts_with("prove-it: could not check this turn: ")
            && text.contains("is no longer a worktree"),
        "{text}"
    );
    assert_eq!(runs(&counter), 0);
}

/// `/../<repo>` (which the kernel reads as `/<repo>`), a file inside the repository
/// and a path with a NUL byte ended silently in every dialect, as did a path that does not
/// exist. The first is the repository it spells; the others are a visible "could not check".
#[test]
fn odd_spellings_of_cwd_are_never_silent() {
    let (repo, counter) = armed(1);
    repo.write("b.txt", "changed\n");
    let dotdot = format!("/..{}", root(&repo));
    let reason = block(stop(&repo, &dotdot));
    assert!(reason.starts_with("prove-it: DISPROVEN"), "{reason}");
    assert_eq!(runs(&counter), 1);
    let file = repo.path("a.txt");
    let nul = format!("{}\u{0}/x", root(&repo));
    let missing = repo.path("no/such/dir");
    for (cwd, says) in [
        (text(&file), "is not a directory"),
        (nul.as_str(), "does not exist or cannot be read"),
        (text(&missing), "does not exist or cannot be read"),
    ] {
        let text = notice(stop(&repo, cwd));
        assert!(
            text.starts_with("prove-it: could not check this turn: ")
                && text.contains(says)
                && text.contains("this turn ended unverified"),
            "{cwd:?}: {text}"
        );
    }
    assert_eq!(runs(&counter), 1);
}

/// With an anchored session: a cwd that does not exist still gates the worktree the
/// session started in; when that one passes, the unreadable cwd is said, not swallowed.
#[test]
fn an_unreadable_cwd_is_said_while_the_anchored_worktree_is_gated() {
    let (repo, counter) = armed(0);
    start(&repo, &repo.root);
    repo.write("b.txt", "changed\n");
    let missing = repo.home().join("gone");
    let text = notice(stop(&repo, text(&missing)));
    assert!(
        text.starts_with("prove-it: the stop's working directory was not gated: ")
            && text.contains("does not exist or cannot be read"),
        "{text}"
    );
    assert_eq!(runs(&counter), 1, "the anchored worktree was gated");
    assert!(repo.note(&repo.stock_state_tree().unwrap()).is_some());
}

/// The turn state file of this session in `repo`.
fn turn_state_file(repo: &TestRepo) -> PathBuf {
    let dir = repo.path(".git/prove-it/sessions");
    std::fs::read_dir(&dir)
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .find(|path| path.extension().is_some_and(|e| e == "json"))
        .expect("a saved turn state")
}

/// The per-session files are the agent's to edit. A last answer "given" in the future,
/// quiet, made every later stop of the turn replay it silently. A state the gate could not have
/// written is treated as absent (the other impossible states, a turn id that is not its
/// answer's and counts the answer contradicts, are table-tested in `gate::turn`): the stop is
/// gated again, and nothing is proven.
#[test]
fn a_forged_answer_from_the_future_is_never_replayed() {
    let year_ns: u64 = 365 * 24 * 3600 * 1_000_000_000;
    for (what, at_ns) in [("the end of time", u64::MAX), ("a year from now", year_ns)] {
        let (repo, counter) = changed_session();
        block(stop(&repo, text(&repo.root)));
        let file = turn_state_file(&repo);
        let mut state: Value = serde_json::from_slice(&std::fs::read(&file).unwrap()).unwrap();
        let saved = state["last"]["at_ns"].as_u64().unwrap();
        state["last"]["at_ns"] = json!(if at_ns == u64::MAX {
            at_ns
        } else {
            saved + at_ns
        });
        state["last"]["answer"]["verdict"] = json!({"Quiet": "Unchanged"});
        std::fs::write(&file, state.to_string()).unwrap();
        for _ in 0..2 {
            let reason = block(hook(&repo, &[], &stop_event(text(&repo.root), true)));
            assert!(reason.contains("DISPROVEN (attempt"), "{what}: {reason}");
        }
        assert_eq!(runs(&counter), 3, "{what}: verify.sh ran again");
        assert_eq!(
            repo.git(&["notes", "--ref", "prove-it", "list"]),
            "",
            "{what}"
        );
    }
}
