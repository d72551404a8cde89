//! `git prove-it hook claude`: the gate at Claude Code's stop, in real repositories, fed the
//! JSON events Claude Code sends (HOSTS.md), asserting on the exact protocol answers.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use assert_cmd::cargo::cargo_bin;
use serde_json::{Value, json};

use crate::harness::{TOOLS, TestRepo, built_path, hermetic, json_stdout};

/// One Claude Code session in a repository.
struct Session<'a> {
    repo: &'a TestRepo,
    id: String,
    prompt: String,
    cwd: PathBuf,
    env: Vec<(String, String)>,
}

/// What the hook answered.
struct Answer {
    stdout: String,
    json: Option<Value>,
}

impl Answer {
    fn from(out: &Output) -> Answer {
        assert_eq!(out.status.code(), Some(0), "hooks always exit 0: {out:?}");
        let stdout = String::from_utf8(out.stdout.clone()).expect("stdout is UTF-8");
        let json = if stdout.is_empty() {
            None
        } else {
            // stdout carries nothing but one JSON object, ever.
            assert!(
                stdout.ends_with('\n') && stdout.matches('\n').count() == 1,
                "{stdout:?}"
            );
            Some(serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("{e}: {stdout:?}")))
        };
        Answer { stdout, json }
    }

    #[track_caller]
    fn silent(&self) {
        assert_eq!(self.stdout, "", "expected no output");
    }

    /// The block reason; panics unless this is a block.
    #[track_caller]
    fn block(&self) -> String {
        let json = self
            .json
            .as_ref()
            .unwrap_or_else(|| panic!("no block, silence"));
        assert_eq!(json["decision"], "block", "{json}");
        assert_eq!(json.as_object().unwrap().len(), 2, "{json}");
        json["reason"].as_str().unwrap().to_string()
    }

    /// The user-visible notice; panics unless this is one (and not a block).
    #[track_caller]
    fn notice(&self) -> String {
        let json = self
            .json
            .as_ref()
            .unwrap_or_else(|| panic!("no notice, silence"));
        assert!(json.get("decision").is_none(), "{json}");
        json["systemMessage"].as_str().unwrap().to_string()
    }
}

impl<'a> Session<'a> {
    fn new(repo: &'a TestRepo) -> Self {
        Session {
            repo,
            id: "86ca0000-test-session".into(),
            prompt: "99ce0000-prompt-1".into(),
            cwd: repo.root.clone(),
            env: Vec::new(),
        }
    }

    fn env(mut self, key: &str, value: &str) -> Self {
        self.env.push((key.into(), value.into()));
        self
    }

    fn hook(&self, event: &Value) -> Output {
        hook_raw(self.repo, &self.env, event.to_string().as_bytes())
    }

    fn start(&self) -> Answer {
        self.start_from("startup")
    }

    fn start_from(&self, source: &str) -> Answer {
        Answer::from(&self.hook(&json!({
            "session_id": self.id,
            "transcript_path": "/tmp/t.jsonl",
            "cwd": self.cwd,
            "hook_event_name": "SessionStart",
            "source": source,
        })))
    }

    fn stop_event(&self, active: bool) -> Value {
        json!({
            "session_id": self.id,
            "transcript_path": "/tmp/t.jsonl",
            "cwd": self.cwd,
            "prompt_id": self.prompt,
            "permission_mode": "default",
            "effort": {"level": "medium"},
            "hook_event_name": "Stop",
            "stop_hook_active": active,
            "last_assistant_message": "All tests pass. Ready to merge.",
            "background_tasks": [],
            "session_crons": [],
        })
    }

    /// A stop: `active` is what Claude Code sends after a block in the same turn.
    fn stop(&self, active: bool) -> Answer {
        Answer::from(&self.hook(&self.stop_event(active)))
    }
}

fn hook_raw(repo: &TestRepo, env: &[(String, String)], stdin: &[u8]) -> Output {
    let mut cmd = repo.command(cargo_bin("git-prove-it"));
    cmd.args(["hook", "claude"]).envs(env.iter().cloned());
    assert_cmd::Command::from_std(cmd)
        .write_stdin(stdin)
        .output()
        .unwrap()
}

/// A verify.sh that counts its runs in a file outside the repository, then exits `code`.
fn counting_verify(repo: &TestRepo, code: i32) -> PathBuf {
    let counter = repo.home().join("runs");
    repo.verify_script(&format!(
        "echo run >> '{}'\necho 'test result: 3 failed; 41 passed'\nexit {code}",
        counter.display()
    ));
    counter
}

fn runs(counter: &Path) -> usize {
    std::fs::read_to_string(counter).map_or(0, |s| s.lines().count())
}

/// A committed repository whose verify.sh fails (or passes), counted.
fn armed(code: i32) -> (TestRepo, PathBuf) {
    let repo = TestRepo::new();
    repo.write("a.txt", "a\n");
    let counter = counting_verify(&repo, code);
    repo.commit_all("initial");
    (repo, counter)
}

#[test]
fn a_read_only_session_is_left_alone() {
    let (repo, counter) = armed(1);
    let session = Session::new(&repo);
    session.start().silent();
    session.stop(false).silent();
    assert_eq!(
        runs(&counter),
        0,
        "verify.sh must not run for an unchanged session"
    );
}

/// Trap 1 of the seed: `stop_hook_active` is not "let it through".
#[test]
fn stop_hook_active_is_not_let_it_through() {
    let (repo, counter) = armed(1);
    let mut session = Session::new(&repo);
    session.start().silent();
    repo.write("a.txt", "changed\n");
    let reason = session.stop(false).block();
    assert!(reason.contains("attempt 1 of 3"), "{reason}");
    // The session's full output is in a log of its own, which two sessions never share.
    let log = reason
        .lines()
        .find_map(|line| line.strip_prefix("Full output: "))
        .expect("the log path");
    assert!(
        log.contains("/prove-it/sessions/")
            && std::path::Path::new(&log).extension() == Some("log".as_ref()),
        "{log}"
    );
    let text = std::fs::read_to_string(log).unwrap();
    assert!(text.contains("test result: 3 failed; 41 passed"), "{text}");
    assert!(session.stop(true).block().contains("attempt 2 of 3"));
    assert!(session.stop(true).block().contains("attempt 3 of 3"));
    let notice = session.stop(true).notice();
    assert!(notice.contains("this turn ended unverified"), "{notice}");
    assert_eq!(runs(&counter), 4);

    // A new turn is gated again: a fresh stop (not following a block) ...
    assert!(session.stop(false).block().contains("attempt 1 of 3"));
    // ... or a new prompt id, even with the flag still set.
    session.prompt = "99ce0000-prompt-2".into();
    assert!(session.stop(true).block().contains("attempt 1 of 3"));
}

/// Trap 2 of the seed: a commit moves HEAD's tree, so a turn ending in one is still gated.
#[test]
fn a_turn_that_ends_in_a_commit_is_still_gated() {
    let (repo, counter) = armed(0);
    // The work is already in the working state when the session starts; the agent only commits.
    repo.write("a.txt", "done before the session\n");
    let session = Session::new(&repo);
    session.start().silent();
    repo.commit_all("the agent commits");
    session.stop(false).silent();
    assert_eq!(runs(&counter), 1, "the commit must be gated");
}

/// Trap 2, second half: proven content is never run again, whatever happens to the commits.
#[test]
fn proven_content_is_not_run_again_after_amend_or_rebase() {
    let (repo, counter) = armed(0);
    let session = Session::new(&repo);
    session.start().silent();
    repo.write("a.txt", "work\n");
    session.stop(false).silent();
    assert_eq!(runs(&counter), 1);
    repo.commit_all("work");
    session.stop(false).silent();
    repo.git(&["commit", "-q", "--amend", "-m", "reworded"]);
    session.stop(false).silent();
    let rebased = repo
        .command("git")
        .args(["rebase", "-q", "--force-rebase", "HEAD~1"])
        .env("GIT_COMMITTER_DATE", "2026-11-30T08:00:00Z")
        .output()
        .unwrap();
    assert!(rebased.status.success(), "{rebased:?}");
    session.stop(false).silent();
    assert_eq!(runs(&counter), 1, "a proven tree must not be run again");
}

/// Trap 3 of the seed: disarming verify.sh mid-session is refused, in every form (a link that
/// cannot be followed says it could not check: `sealed_link`).
#[test]
fn deleting_or_disarming_verify_sh_mid_session_is_refused() {
    type Disarm = Box<dyn Fn(&TestRepo)>;
    let cases: Vec<(&str, Disarm)> = vec![
        (
            "does not exist",
            Box::new(|r: &TestRepo| r.remove("verify.sh")),
        ),
        (
            "is not executable by its owner",
            Box::new(|r: &TestRepo| r.chmod("verify.sh", 0o644)),
        ),
        (
            "is not a regular file",
            Box::new(|r: &TestRepo| {
                r.remove("verify.sh");
                std::fs::create_dir(r.path("verify.sh")).unwrap();
                r.write("verify.sh/x", "x\n");
            }),
        ),
    ];
    for (reason, disarm) in cases {
        let (repo, counter) = armed(0);
        let session = Session::new(&repo);
        session.start().silent();
        disarm(&repo);
        let block = session.stop(false).block();
        assert!(
            block.contains("verify.sh was armed when this session started, and now it")
                && block.contains(reason),
            "{reason}: {block}"
        );
        assert!(block.contains("attempt 1 of 3"), "{block}");
        // It counts against the budget like a failure, then ends the turn loudly.
        session.stop(true).block();
        session.stop(true).block();
        assert!(
            session
                .stop(true)
                .notice()
                .contains("this turn ended unverified")
        );
        assert_eq!(runs(&counter), 0);
    }
}

/// Trap 4 of the seed: a yield never looks like a pass.
#[test]
fn a_yield_says_this_turn_ended_unverified() {
    let (repo, _) = armed(3);
    let session = Session::new(&repo).env("PROVE_IT_MAX_BLOCKS", "1");
    session.start().silent();
    repo.write("b.txt", "new\n");
    session.stop(false).block();
    let answer = session.stop(true);
    let notice = answer.notice();
    assert!(
        notice.starts_with("prove-it: NOT_PROVEN: this turn ended unverified (after 1 attempts)."),
        "{notice}"
    );
    assert!(notice.contains("exit code: 3"), "{notice}");
    assert!(!answer.stdout.contains("\"decision\""));

    // Warn-only mode (maxBlocks 0 from the start) yields at once, as loudly.
    let (repo, _) = armed(1);
    repo.git(&["config", "prove-it.maxBlocks", "0"]);
    let session = Session::new(&repo);
    session.start().silent();
    repo.write("b.txt", "new\n");
    let notice = session.stop(false).notice();
    assert!(
        notice.contains("this turn ended unverified (warn-only mode"),
        "{notice}"
    );
}

#[test]
fn a_passing_run_records_a_proof_for_the_session() {
    let (repo, counter) = armed(0);
    let session = Session::new(&repo);
    session.start().silent();
    repo.write("b.txt", "new\n");
    session.stop(false).silent();
    assert_eq!(runs(&counter), 1);
    let tree = repo.stock_state_tree().unwrap();
    let note = repo.note(&tree).expect("a proof on the state tree");
    let verify = repo.git(&["rev-parse", "HEAD:verify.sh"]);
    for line in [
        "outcome: PROVEN".to_string(),
        "host: claude".to_string(),
        format!("session: {}", session.id),
        format!("verify-anchor: {} 100755", verify.trim()),
    ] {
        assert!(note.lines().any(|l| l == line), "{line:?} not in\n{note}");
    }
    // The next stop finds the proof and runs nothing.
    session.stop(false).silent();
    assert_eq!(runs(&counter), 1);
}

#[test]
fn signing_asked_for_and_impossible_ends_the_turn_loudly_without_a_proof() {
    // prove-it.sign with no usable key must never leave an unsigned proof behind.
    let (repo, counter) = armed(0);
    repo.git(&["config", "prove-it.sign", "true"]);
    repo.git(&["config", "gpg.format", "ssh"]);
    repo.git(&["config", "user.signingKey", "/nonexistent/key"]);
    let session = Session::new(&repo);
    session.start().silent();
    repo.write("b.txt", "new\n");
    let notice = session.stop(false).notice();
    assert!(
        notice.starts_with("prove-it: could not check this turn: could not sign the proof")
            && notice.contains("/nonexistent/key does not exist")
            && notice.contains("this turn ended unverified"),
        "{notice}"
    );
    assert_eq!(
        runs(&counter),
        0,
        "nothing runs when no proof could be signed"
    );
    assert_eq!(repo.note(&repo.stock_state_tree().unwrap()), None);
}

#[test]
fn with_signing_on_the_gate_signs_and_does_not_settle_for_an_unsigned_proof() {
    let (repo, counter) = armed(0);
    let session = Session::new(&repo);
    session.start().silent();
    repo.write("b.txt", "new\n");
    // Proven unsigned first (signing was off), then signing is turned on.
    repo.prove_it(&["run"]).assert().code(0);
    assert_eq!(runs(&counter), 1);
    let (key, _) = crate::signed::keygen(&repo, "alice");
    crate::signed::sign_with(&repo, key.to_str().unwrap());
    session.stop(false).silent();
    assert_eq!(
        runs(&counter),
        2,
        "an unsigned proof does not count while signing is on"
    );
    let note = repo.note(&repo.stock_state_tree().unwrap()).unwrap();
    assert!(note.contains("host: claude\n"), "{note}");
    assert!(
        note.contains("ssh-signature: -----BEGIN SSH SIGNATURE-----"),
        "{note}"
    );
    // The signed proof settles the next stop without a run.
    session.stop(false).silent();
    assert_eq!(runs(&counter), 2);
}

#[test]
fn ignored_files_do_not_count() {
    let (repo, counter) = armed(1);
    repo.write(".gitignore", "target/\n");
    repo.commit_all("ignore target");
    let session = Session::new(&repo);
    session.start().silent();
    repo.write("target/debug/out", "build output\n");
    session.stop(false).silent();
    assert_eq!(runs(&counter), 0);
}

#[test]
fn no_anchor_means_changed_and_says_the_anchor_was_missing() {
    let (repo, counter) = armed(0);
    let session = Session::new(&repo);
    let notice = session.stop(false).notice();
    assert!(notice.starts_with("prove-it: PROVEN"), "{notice}");
    assert!(notice.contains("No session-start anchor"), "{notice}");
    assert_eq!(runs(&counter), 1);

    let (repo, _) = armed(1);
    let block = Session::new(&repo).stop(false).block();
    assert!(block.contains("No session-start anchor"), "{block}");
}

#[test]
fn an_edited_verify_sh_ends_as_bounded_with_the_diff_shown_and_stored() {
    let repo = TestRepo::new();
    repo.verify_script("echo checking the important thing\ntest -f a.txt\nexit 0");
    repo.write("a.txt", "a\n");
    repo.commit_all("initial");
    let session = Session::new(&repo);
    session.start().silent();
    repo.verify_script("exit 0");
    let notice = session.stop(false).notice();
    assert!(
        notice.starts_with("prove-it: BOUNDED_CLAIM_SURVIVES"),
        "{notice}"
    );
    assert!(notice.contains("-test -f a.txt\n"), "{notice}");
    assert!(
        notice.contains("-echo checking the important thing\n"),
        "{notice}"
    );
    let tree = repo.stock_state_tree().unwrap();
    let note = repo.note(&tree).unwrap();
    assert!(note.contains("outcome: BOUNDED_CLAIM_SURVIVES\n"), "{note}");
    assert!(note.contains("verify-diff:\n"), "{note}");
    assert!(note.contains("\n -test -f a.txt\n"), "{note}");
}

#[test]
fn a_proof_through_an_edited_verify_sh_is_bounded_whoever_wrote_it() {
    let (repo, counter) = armed(0);
    let session = Session::new(&repo);
    session.start().silent();
    repo.verify_script(&format!(
        "echo run >> '{}'\nexit 0",
        repo.home().join("runs").display()
    ));
    // The agent proves the state itself with the edited verify.sh.
    repo.prove_it(&["run"]).assert().code(0);
    assert_eq!(runs(&counter), 1);
    let notice = session.stop(false).notice();
    assert!(
        notice.starts_with("prove-it: BOUNDED_CLAIM_SURVIVES"),
        "{notice}"
    );
    assert!(
        notice.contains("-echo 'test result: 3 failed; 41 passed'"),
        "{notice}"
    );
    assert_eq!(runs(&counter), 1, "the existing proof is not run again");
}

#[test]
fn the_events_cwd_selects_the_repository() {
    let (repo, counter) = armed(0);
    let other = TestRepo::with_commit();
    std::fs::create_dir_all(repo.path("sub/dir")).unwrap();
    let mut session = Session::new(&repo);
    session.cwd = repo.path("sub/dir");
    session.start().silent();
    repo.write("b.txt", "new\n");
    // The hook process runs elsewhere (in another repository, with git's variables pointing
    // there); the payload's cwd decides. Its environment is otherwise the session's: one
    // from another home is not the session's hook (`sealed_env.rs`).
    let mut cmd = repo.command(cargo_bin("git-prove-it"));
    cmd.current_dir(&other.root)
        .args(["hook", "claude"])
        .env("GIT_DIR", other.path(".git"))
        .env("GIT_WORK_TREE", &other.root)
        .env("GIT_INDEX_FILE", other.path(".git/index"));
    let out = assert_cmd::Command::from_std(cmd)
        .write_stdin(session.stop_event(false).to_string())
        .output()
        .unwrap();
    Answer::from(&out).silent();
    assert_eq!(runs(&counter), 1);
    assert!(other.note(&other.stock_state_tree().unwrap()).is_none());
}

#[test]
fn outside_a_repository_there_is_nothing_to_gate() {
    let repo = TestRepo::new();
    let elsewhere = tempfile::tempdir().unwrap();
    let mut session = Session::new(&repo);
    session.cwd = elsewhere.path().to_owned();
    session.start().silent();
    session.stop(false).silent();
}

#[test]
fn a_hostile_session_id_cannot_escape_the_state_directory() {
    let (repo, _) = armed(1);
    let mut session = Session::new(&repo);
    session.id = "../../../../../../escaped\nsession: none\u{0}/..".into();
    session.start().silent();
    repo.write("b.txt", "new\n");
    session.stop(false).block();
    let parent = repo.root.parent().unwrap();
    let mut names: Vec<String> = std::fs::read_dir(parent)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(names, ["home", "repo"]);
    let sessions = repo.path(".git/prove-it/sessions");
    for entry in std::fs::read_dir(&sessions).unwrap() {
        let name = entry.unwrap().file_name().to_string_lossy().into_owned();
        let stem = name.split('.').next().unwrap();
        assert!(
            stem.len() == 40 && stem.chars().all(|c| c.is_ascii_hexdigit()),
            "{name}"
        );
    }
    // The anchor was recorded under a derived key, and its session line cannot forge a key.
    let anchors = repo.git(&["notes", "--ref", "prove-it-anchors", "list"]);
    assert_eq!(anchors.lines().count(), 1);
}

#[test]
fn verify_sh_writing_files_blocks_naming_the_paths() {
    let repo = TestRepo::new();
    repo.verify_script("echo generated > generated.txt\nexit 0");
    repo.commit_all("initial");
    let session = Session::new(&repo);
    session.start().silent();
    repo.write("a.txt", "work\n");
    let block = session.stop(false).block();
    assert!(
        block.contains("changed the working state while it ran"),
        "{block}"
    );
    assert!(block.contains("    generated.txt\n"), "{block}");
    assert!(block.contains(".gitignore"), "{block}");
    // Nothing was recorded for the state that was tested.
    let notes = repo.git_output(&["notes", "--ref", "prove-it", "list"]);
    assert!(notes.stdout.is_empty(), "{notes:?}");
}

#[test]
fn worktree_content_errors_block_and_count() {
    let (repo, counter) = armed(0);
    let session = Session::new(&repo);
    session.start().silent();
    // An untracked nested repository without a commit: git add -A refuses it, and so do we.
    std::fs::create_dir(repo.path("nested")).unwrap();
    let init = repo
        .command("git")
        .args(["init", "-q", "nested"])
        .output()
        .unwrap();
    assert!(init.status.success());
    let block = session.stop(false).block();
    assert!(
        block.contains("the working state cannot be read"),
        "{block}"
    );
    assert!(block.contains("nested"), "{block}");
    assert!(block.contains("attempt 1 of 3"), "{block}");
    assert!(session.stop(true).block().contains("attempt 2 of 3"));
    assert_eq!(runs(&counter), 0);
}

#[test]
fn malformed_input_is_a_visible_message_never_a_silent_pass() {
    let repo = TestRepo::with_commit();
    for input in [
        &b""[..],
        b"not json",
        b"[]",
        b"{}",
        b"{\"hook_event_name\":\"Stop\"}",
        b"{\"hook_event_name\":\"Stop\",\"session_id\":\"s\",\"cwd\":\"/\",\"stop_hook_active\":1}",
        b"\xff\xfe",
    ] {
        let answer = Answer::from(&hook_raw(&repo, &[], input));
        let notice = answer.notice();
        assert!(
            notice.starts_with("prove-it: could not check this turn: ")
                && notice.contains("this turn ended unverified"),
            "{input:?}: {notice}"
        );
    }
}

#[test]
fn other_events_do_nothing() {
    let (repo, counter) = armed(1);
    repo.write("b.txt", "new\n");
    for name in ["UserPromptSubmit", "Notification", "PreCompact"] {
        let event = json!({
            "session_id": "s", "cwd": repo.root, "hook_event_name": name,
            "stop_hook_active": false, "prompt": "hi", "prompt_id": "p",
        });
        Answer::from(&hook_raw(&repo, &[], event.to_string().as_bytes())).silent();
    }
    assert_eq!(runs(&counter), 0);
}

#[test]
fn session_start_never_overwrites_the_anchor() {
    let (repo, _) = armed(0);
    let session = Session::new(&repo);
    session.start().silent();
    let list = repo.git(&["notes", "--ref", "prove-it-anchors", "list"]);
    let (note, key) = list.trim().split_once(' ').unwrap();
    let first = repo.git(&["notes", "--ref", "prove-it-anchors", "show", key]);
    assert!(first.starts_with("prove-it-anchor: 1\n"), "{first}");
    assert!(first.contains("max-blocks: 3\n"), "{first}");
    repo.write("a.txt", "changed\n");
    repo.verify_script("exit 0");
    for source in ["resume", "compact", "clear"] {
        session.start_from(source).silent();
    }
    let after = repo.git(&["notes", "--ref", "prove-it-anchors", "list"]);
    assert_eq!(after.trim(), format!("{note} {key}"));
    // The key names a blob saying whose anchor it is, so git notes prune keeps the anchor.
    let owner = repo.git(&["cat-file", "-p", key]);
    assert!(owner.starts_with("prove-it session\0"), "{owner:?}");
    repo.git(&["notes", "--ref", "prove-it-anchors", "prune"]);
    assert_eq!(
        repo.git(&["notes", "--ref", "prove-it-anchors", "list"])
            .trim(),
        format!("{note} {key}")
    );
}

#[test]
fn an_unarmed_repository_gets_nothing_written() {
    let repo = TestRepo::new();
    repo.write("a.txt", "a\n");
    repo.commit_all("initial");
    let session = Session::new(&repo);
    session.start().silent();
    repo.write("b.txt", "new\n");
    session.stop(false).silent();
    assert!(!repo.path(".git/prove-it").exists());
    let refs = repo.git(&["for-each-ref", "refs/notes"]);
    assert_eq!(refs, "");
    let objects = repo.git(&["count-objects"]);
    let before = objects.clone();
    session.stop(false).silent();
    assert_eq!(repo.git(&["count-objects"]), before);
}

#[test]
fn a_weaker_budget_mid_session_is_refused_like_a_disarm() {
    let (repo, _) = armed(0);
    let session = Session::new(&repo);
    session.start().silent();
    repo.write("b.txt", "new\n");
    repo.git(&["config", "prove-it.maxBlocks", "0"]);
    let block = session.stop(false).block();
    assert!(
        block.contains("blocks per turn lowered from 3 to 0"),
        "{block}"
    );
    let block = Session::new(&repo)
        .env("PROVE_IT_MAX_BLOCKS", "1")
        .stop(true)
        .block();
    assert!(block.contains("lowered from 3 to 1"), "{block}");
    // A longer timeout is weaker too: past the host's hook timeout, a hung verify.sh would end
    // the turn without a verdict.
    repo.git(&["config", "--unset", "prove-it.maxBlocks"]);
    let block = Session::new(&repo)
        .env("PROVE_IT_TIMEOUT", "3600")
        .stop(false)
        .block();
    assert!(
        block.contains("verify.sh timeout raised from 300 s to 3600 s"),
        "{block}"
    );
}

#[test]
fn prove_it_skip_ends_the_turn_visibly() {
    let (repo, counter) = armed(1);
    let session = Session::new(&repo)
        .env("PROVE_IT_SKIP", "1")
        .env("PROVE_IT_LEDGER", "1");
    session.start().silent();
    repo.write("b.txt", "new\n");
    let notice = session.stop(false).notice();
    assert!(
        notice.starts_with("prove-it: skipped by PROVE_IT_SKIP=1"),
        "{notice}"
    );
    assert!(notice.contains("unverified"), "{notice}");
    assert_eq!(runs(&counter), 0);
    let ledger = json_stdout(&repo.prove_it(&["ledger", "--json"]).assert().code(0));
    assert_eq!(
        ledger["entries"][0]["actual"][0],
        "skipped by PROVE_IT_SKIP=1"
    );
    // git config cannot skip: only a person's environment can.
    repo.git(&["config", "prove-it.skip", "1"]);
    Session::new(&repo).stop(false).block();
}

#[test]
fn the_ledger_records_the_first_block_of_each_turn_with_the_claim() {
    let (repo, _) = armed(1);
    let mut session = Session::new(&repo).env("PROVE_IT_LEDGER", "1");
    session.start().silent();
    repo.write("b.txt", "new\n");
    session.stop(false).block();
    session.stop(true).block();
    session.prompt = "99ce0000-prompt-2".into();
    session.stop(false).block();
    let assert = repo.prove_it(&["ledger", "--json"]).assert().code(0);
    let ledger = json_stdout(&assert);
    assert_eq!(ledger["version"], 1);
    let entries = ledger["entries"].as_array().unwrap();
    assert_eq!(entries.len(), 2, "{ledger}");
    let entry = &entries[0];
    assert_eq!(entry["host"], "claude");
    assert_eq!(entry["session"], session.id.as_str());
    assert_eq!(entry["claim"], "All tests pass. Ready to merge.");
    assert_eq!(entry["evidence_demanded"], "verify.sh exit 0");
    assert_eq!(entry["exit_code"], 1);
    assert_eq!(entry["actual"], json!(["test result: 3 failed; 41 passed"]));
    assert_eq!(entry["attempt"], 1);
    let human = repo.prove_it(&["ledger"]).assert().code(0);
    let text = String::from_utf8_lossy(&human.get_output().stdout).into_owned();
    assert!(
        text.contains("claimed: All tests pass. Ready to merge."),
        "{text}"
    );
    let mode = std::fs::metadata(repo.path(".git/prove-it/ledger.jsonl")).unwrap();
    assert_eq!(
        std::os::unix::fs::PermissionsExt::mode(&mode.permissions()) & 0o777,
        0o600
    );
}

#[test]
fn two_concurrent_hooks_for_one_session_run_verify_sh_once() {
    for code in [0, 1] {
        let repo = TestRepo::new();
        let counter = repo.home().join("runs");
        repo.verify_script(&format!(
            "echo run >> '{}'\nsleep 1\nexit {code}",
            counter.display()
        ));
        repo.commit_all("initial");
        let session = Session::new(&repo);
        session.start().silent();
        repo.write("b.txt", "new\n");
        let event = session.stop_event(false).to_string();
        let spawn = || {
            let mut cmd = repo.command(cargo_bin("git-prove-it"));
            let mut child = cmd
                .args(["hook", "claude"])
                .stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .spawn()
                .unwrap();
            use std::io::Write as _;
            child
                .stdin
                .take()
                .unwrap()
                .write_all(event.as_bytes())
                .unwrap();
            child
        };
        let (a, b) = (spawn(), spawn());
        let (a, b) = (
            Answer::from(&a.wait_with_output().unwrap()),
            Answer::from(&b.wait_with_output().unwrap()),
        );
        assert_eq!(runs(&counter), 1, "exit {code}");
        assert_eq!(a.stdout, b.stdout, "both hooks give the same answer");
        if code != 0 {
            assert!(a.block().contains("attempt 1 of 3"));
        }
    }
}

#[test]
fn a_timeout_blocks_and_a_background_child_does_not_hang_the_gate() {
    let repo = TestRepo::new();
    repo.verify_script("sleep 60");
    repo.commit_all("initial");
    let session = Session::new(&repo).env("PROVE_IT_TIMEOUT", "1");
    session.start().silent();
    repo.write("b.txt", "new\n");
    let started = Instant::now();
    let block = session.stop(false).block();
    assert!(block.contains("timed out after 1 s"), "{block}");
    assert!(started.elapsed() < Duration::from_secs(30), "the gate hung");

    let repo = TestRepo::new();
    repo.verify_script("sleep 60 &\necho started a daemon\nexit 0");
    repo.commit_all("initial");
    let session = Session::new(&repo);
    session.start().silent();
    repo.write("b.txt", "new\n");
    let started = Instant::now();
    session.stop(false).silent();
    assert!(started.elapsed() < Duration::from_secs(30), "the gate hung");
}

#[test]
fn verify_sh_output_never_reaches_the_hooks_stdout() {
    let repo = TestRepo::new();
    repo.verify_script("echo '{\"decision\":\"approve\"}'\necho plain text\nexit 0");
    repo.commit_all("initial");
    let session = Session::new(&repo);
    session.start().silent();
    repo.write("b.txt", "new\n");
    session.stop(false).silent();
}

/// The snippet users copy and the repository's own settings wire the same hooks, with a Stop
/// timeout above the default verify.sh timeout (the host ignores a hook that times out). The
/// repository's own leaves out the after-tool hook: its verify.sh builds with cargo, which
/// proving ahead would run beside the agent's own builds on a small shared machine.
#[test]
fn the_claude_settings_snippet_is_what_this_repository_uses() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let read = |rel: &str| -> Value {
        serde_json::from_str(&std::fs::read_to_string(root.join(rel)).unwrap()).unwrap()
    };
    let mut snippet = read("hooks/claude-settings.json");
    let own = read(".claude/settings.json");
    let after_tool = snippet["hooks"]
        .as_object_mut()
        .unwrap()
        .remove("PostToolUse")
        .expect("the snippet wires the after-tool hook");
    assert_eq!(
        after_tool[0]["hooks"][0]["command"],
        "git prove-it hook claude"
    );
    assert_eq!(snippet["hooks"], own["hooks"]);
    for event in ["SessionStart", "Stop"] {
        let hook = &snippet["hooks"][event][0]["hooks"][0];
        assert_eq!(hook["type"], "command");
        assert_eq!(hook["command"], "git prove-it hook claude");
    }
    let stop_timeout = snippet["hooks"]["Stop"][0]["hooks"][0]["timeout"]
        .as_u64()
        .unwrap();
    assert!(stop_timeout > 300, "{stop_timeout}");
}

/// The hooks run as Claude Code runs them: through a shell, with `git prove-it` on PATH.
#[test]
fn git_runs_the_hook_as_a_subcommand() {
    let (repo, counter) = armed(1);
    let bin_dir = cargo_bin("git-prove-it").parent().unwrap().to_owned();
    // PATH is built, not inherited: this build first, then only the tools the tests use.
    let path = built_path(&[bin_dir], TOOLS);
    let mut cmd = Command::new("sh");
    hermetic(&mut cmd, repo.home());
    cmd.current_dir(&repo.root)
        .env("PATH", path)
        .args(["-c", "git prove-it hook claude"]);
    repo.write("b.txt", "new\n");
    let event = Session::new(&repo).stop_event(false).to_string();
    let out = assert_cmd::Command::from_std(cmd)
        .write_stdin(event)
        .output()
        .unwrap();
    Answer::from(&out).block();
    assert_eq!(runs(&counter), 1);
}

/// `git prove-it claim` runs agents with PROVE_IT_ROUND set (Codex and Gemini have no switch to
/// turn hooks off); the gate stands aside for them, and says so.
#[test]
fn the_gate_stands_aside_for_a_claim_gauntlets_rounds() {
    let (repo, counter) = armed(1);
    let session = Session::new(&repo).env("PROVE_IT_ROUND", "03");
    session.start().silent();
    repo.write("b.txt", "new\n");
    let notice = session.stop(false).notice();
    assert!(
        notice.contains("standing aside: this agent runs round 03"),
        "{notice}"
    );
    assert_eq!(runs(&counter), 0);
    assert_eq!(repo.git(&["for-each-ref", "refs/notes"]), "");
}

/// A host started from inside a git hook carries GIT_DIR and the like; verify.sh must run in the
/// event's repository without them.
#[test]
fn verify_sh_does_not_see_the_hosts_git_variables() {
    let repo = TestRepo::new();
    let seen = repo.home().join("seen");
    repo.verify_script(&format!(
        "echo \"${{GIT_DIR-unset}} ${{GIT_INDEX_FILE-unset}} $(git rev-parse --show-toplevel)\" > '{}'",
        seen.display()
    ));
    repo.commit_all("initial");
    let other = TestRepo::with_commit();
    repo.write("b.txt", "new\n");
    let session = Session::new(&repo)
        .env("GIT_DIR", other.path(".git").to_str().unwrap())
        .env("GIT_INDEX_FILE", other.path(".git/index").to_str().unwrap());
    session.stop(false).notice();
    let seen = std::fs::read_to_string(seen).unwrap();
    let toplevel = repo.root.canonicalize().unwrap();
    assert_eq!(seen, format!("unset unset {}\n", toplevel.display()));
}

/// Unreadable notes are broken infrastructure: the turn ends, loudly, and the ledger says so.
#[test]
fn corrupt_notes_end_the_turn_loudly_never_as_a_pass() {
    let (repo, counter) = armed(0);
    let session = Session::new(&repo).env("PROVE_IT_LEDGER", "1");
    session.start().silent();
    repo.write("b.txt", "new\n");
    let blob = repo.hash_object("junk\n", true);
    repo.git(&["update-ref", "refs/notes/prove-it", &blob]);
    let notice = session.stop(false).notice();
    assert!(
        notice.starts_with("prove-it: could not check this turn: could not read the notes commit"),
        "{notice}"
    );
    assert!(
        notice.ends_with("NOT_PROVEN: this turn ended unverified."),
        "{notice}"
    );
    assert_eq!(runs(&counter), 0);
    let ledger = json_stdout(&repo.prove_it(&["ledger", "--json"]).assert().code(0));
    let actual = ledger["entries"][0]["actual"][0].as_str().unwrap();
    assert!(actual.starts_with("could not check: "), "{actual}");
    // The corrupt anchors ref is no better: the anchor is unreadable, so the gate cannot know.
    repo.git(&["update-ref", "-d", "refs/notes/prove-it"]);
    repo.git(&["update-ref", "refs/notes/prove-it-anchors", &blob]);
    assert!(
        session
            .stop(false)
            .notice()
            .starts_with("prove-it: could not check this turn")
    );
}

/// A session in a linked worktree gates that worktree: its own anchor, its own state, and the
/// proof lands in the shared notes.
#[test]
fn a_session_in_a_linked_worktree_gates_that_worktree() {
    let (repo, counter) = armed(0);
    let linked = repo.home().join("linked");
    repo.git(&[
        "worktree",
        "add",
        "-q",
        "--detach",
        linked.to_str().unwrap(),
    ]);
    let mut session = Session::new(&repo);
    session.cwd = linked.clone();
    session.start().silent();
    // The main worktree changes; the linked one does not: nothing to gate.
    repo.write("main-only.txt", "x\n");
    session.stop(false).silent();
    assert_eq!(runs(&counter), 0);
    std::fs::write(linked.join("linked-only.txt"), "y\n").unwrap();
    session.stop(false).silent();
    assert_eq!(runs(&counter), 1);
    let listed = repo.git(&["notes", "--ref", "prove-it", "list"]);
    assert_eq!(listed.lines().count(), 1, "{listed}");
}

/// A policy value that does not parse is the gate's own failure: named, loud, never a pass.
#[test]
fn a_bad_policy_value_is_named_and_never_a_pass() {
    let (repo, counter) = armed(0);
    let session = Session::new(&repo).env("PROVE_IT_MAX_BLOCKS", "9");
    let notice = session.start().notice();
    assert!(
        notice.starts_with(
            "prove-it: could not record this session's anchor: PROVE_IT_MAX_BLOCKS must be"
        ),
        "{notice}"
    );
    repo.write("b.txt", "new\n");
    let notice = session.stop(false).notice();
    assert!(
        notice.starts_with("prove-it: could not check this turn: PROVE_IT_MAX_BLOCKS must be"),
        "{notice}"
    );
    assert!(notice.contains("this turn ended unverified"), "{notice}");
    assert_eq!(runs(&counter), 0);
}

#[test]
fn the_ledger_command_keeps_lines_it_cannot_read() {
    let (repo, _) = armed(1);
    let session = Session::new(&repo).env("PROVE_IT_LEDGER", "1");
    session.start().silent();
    repo.write("b.txt", "new\n");
    session.stop(false).block();
    let ledger = repo.path(".git/prove-it/ledger.jsonl");
    let mut text = std::fs::read_to_string(&ledger).unwrap();
    text.push_str("not a ledger entry\n");
    std::fs::write(&ledger, text).unwrap();
    let json = json_stdout(&repo.prove_it(&["ledger", "--json"]).assert().code(0));
    assert_eq!(json["entries"].as_array().unwrap().len(), 1);
    assert_eq!(json["unreadable"], json!(["not a ledger entry"]));
    let human = repo.prove_it(&["ledger"]).assert().code(0);
    let out = String::from_utf8_lossy(&human.get_output().stdout).into_owned();
    assert!(
        out.ends_with("unreadable ledger line: not a ledger entry\n"),
        "{out}"
    );
}

/// The stop with a checks file runs only the checks whose inputs changed, blocks on
/// the failing ones with their own lines, and treats an edit or a disarming of any check as it
/// treats verify.sh's.
mod checks {
    use super::Session;
    use crate::checks::{TWO_CHECKS, monorepo, runs, script, stock_input_tree};

    const DOCS_INPUTS: &[&str] = &["docs", "prove-it.toml"];
    const API_INPUTS: &[&str] = &[
        "packages/api",
        "packages/shared",
        "Cargo.lock",
        "prove-it.toml",
    ];

    #[test]
    fn a_failing_check_blocks_with_its_lines_and_the_passing_one_is_recorded() {
        let repo = monorepo("echo 'api: 2 tests failed'\nexit 1", "exit 0");
        let session = Session::new(&repo);
        session.start().silent();
        repo.write("packages/api/src.txt", "changed\n");
        repo.write("docs/index.md", "changed\n");
        let block = session.stop(false).block();
        assert!(block.contains("check api failed"), "{block}");
        assert!(block.contains("api: 2 tests failed"), "{block}");
        assert!(
            block.contains("Weakening verify.sh, prove-it.toml or a check's script"),
            "{block}"
        );
        assert!(block.contains("attempt 1 of 3"), "{block}");
        assert!(repo.note(&stock_input_tree(&repo, DOCS_INPUTS)).is_some());
        assert!(repo.note(&stock_input_tree(&repo, API_INPUTS)).is_none());
        // The fix: only api runs again.
        script(&repo, "packages/api/verify.sh", "api", "exit 0");
        session.stop(true).notice();
        assert_eq!(runs(&repo, "docs").len(), 1);
        assert_eq!(runs(&repo, "api").len(), 2);
    }

    #[test]
    fn a_change_in_one_package_runs_only_its_check_at_the_stop() {
        let repo = monorepo("exit 0", "exit 0");
        repo.prove_it(&["run"]).assert().code(0);
        let session = Session::new(&repo);
        session.start().silent();
        repo.write("docs/index.md", "changed\n");
        session.stop(false).silent();
        assert_eq!(runs(&repo, "api").len(), 1);
        assert_eq!(runs(&repo, "docs").len(), 2);
        // Proven now: the next stop runs nothing.
        session.stop(false).silent();
        assert_eq!(runs(&repo, "docs").len(), 2);
    }

    #[test]
    fn several_failing_checks_are_each_named_with_their_own_last_lines() {
        let repo = monorepo("echo api-broke\nexit 1", "echo docs-broke\nexit 2");
        let session = Session::new(&repo);
        session.start().silent();
        repo.write("README.md", "changed\n");
        let block = session.stop(false).block();
        assert!(block.contains("checks api, docs failed"), "{block}");
        assert!(
            block.contains("--- check api (exit code 1; its full output: "),
            "{block}"
        );
        assert!(block.contains(".api.failed.log):"), "{block}");
        assert!(
            block.contains("api-broke") && block.contains("docs-broke"),
            "{block}"
        );
    }

    #[test]
    fn deleting_or_disarming_a_checks_script_mid_session_is_refused() {
        type Disarm = fn(&crate::harness::TestRepo);
        let cases: [(&str, Disarm); 3] = [
            ("its script docs/verify.sh does not exist", |r| {
                r.remove("docs/verify.sh");
            }),
            ("its script docs/verify.sh is not executable", |r| {
                r.chmod("docs/verify.sh", 0o644);
            }),
            (
                "prove-it.toml, which declares this repository's checks, was deleted",
                |r| r.remove("prove-it.toml"),
            ),
        ];
        for (reason, disarm) in cases {
            let repo = monorepo("exit 0", "exit 0");
            let session = Session::new(&repo);
            session.start().silent();
            disarm(&repo);
            let block = session.stop(false).block();
            assert!(block.contains(reason), "{reason}: {block}");
            assert!(block.contains("Restore it"), "{block}");
            assert!(runs(&repo, "docs").is_empty(), "{reason}");
        }
    }

    /// An ignored checks file would leave the state proven by nothing it declares.
    #[test]
    fn a_checks_file_hidden_by_gitignore_is_refused_never_vacuously_proven() {
        let repo = monorepo("exit 1", "exit 1");
        let session = Session::new(&repo);
        session.start().silent();
        repo.git(&["rm", "-q", "--cached", "prove-it.toml"]);
        repo.write(".git/info/exclude", "prove-it.toml\n");
        repo.write("packages/api/src.txt", "broken\n");
        let block = session.stop(false).block();
        assert!(
            block.contains("prove-it.toml is not part of the working state"),
            "{block}"
        );
        repo.prove_it(&["run"])
            .assert()
            .code(2)
            .stderr(predicates::str::contains("remove it from .gitignore"));
    }

    #[test]
    fn a_checks_file_deleted_without_an_anchor_is_refused_by_heads() {
        let repo = monorepo("exit 0", "exit 0");
        repo.remove("prove-it.toml");
        // No SessionStart: nothing anchored, HEAD's tree says the checks file was there.
        let block = Session::new(&repo).stop(false).block();
        assert!(
            block.contains("prove-it.toml, which declares this repository's checks, was deleted"),
            "{block}"
        );
    }

    #[test]
    fn the_words_name_the_checks_not_verify_sh() {
        // Without an anchor, a proven state is said: by the checks.
        let repo = monorepo("exit 0", "exit 0");
        repo.write("docs/index.md", "changed\n");
        let notice = Session::new(&repo).stop(false).notice();
        assert!(
            notice.starts_with("prove-it: PROVEN: the checks of prove-it.toml passed"),
            "{notice}"
        );
        // A check that writes into its inputs.
        let repo = monorepo("echo x > generated.txt", "exit 0");
        let session = Session::new(&repo);
        session.start().silent();
        repo.write("README.md", "changed\n");
        let block = session.stop(false).block();
        assert!(
            block.contains("the checks passed but their inputs changed while they ran (1 path)"),
            "{block}"
        );
    }

    /// A verify.sh committed without its execute bit is no check; beside a checks file it is
    /// not a disarmed one either.
    #[test]
    fn a_verify_sh_that_never_could_run_beside_a_checks_file_is_not_a_disarmed_one() {
        let repo = monorepo("exit 0", "exit 0");
        repo.write("verify.sh", "#!/bin/sh\nexit 1\n");
        repo.chmod("verify.sh", 0o644);
        repo.commit_all("a verify.sh that is not armed");
        let session = Session::new(&repo);
        session.start().silent();
        repo.write("docs/index.md", "changed\n");
        session.stop(false).silent();
        assert_eq!(runs(&repo, "docs").len(), 1);
    }

    #[test]
    fn a_checks_file_declaring_nothing_proves_nothing() {
        let repo = monorepo("exit 0", "exit 0");
        let session = Session::new(&repo);
        session.start().silent();
        repo.write("prove-it.toml", "# no checks\n");
        let block = session.stop(false).block();
        assert!(
            block.contains("prove-it.toml declares no checks"),
            "{block}"
        );
        repo.prove_it(&["run"]).assert().code(2);
    }

    #[test]
    fn deleting_the_checks_file_beside_a_root_verify_sh_is_refused() {
        let repo = monorepo("exit 0", "exit 0");
        repo.verify_passes();
        repo.commit_all("with a root verify.sh");
        let session = Session::new(&repo);
        session.start().silent();
        repo.remove("prove-it.toml");
        let block = session.stop(false).block();
        assert!(
            block.contains("prove-it.toml, which declares this repository's checks, was deleted"),
            "{block}"
        );
    }

    #[test]
    fn a_checks_file_added_mid_session_is_an_edit_and_shown() {
        let repo = crate::harness::TestRepo::with_commit();
        let session = Session::new(&repo);
        session.start().silent();
        repo.write(
            "prove-it.toml",
            "[checks.none]\nrun = \"none.sh\"\ninputs = [\"nothing?\"]\n",
        );
        script(&repo, "none.sh", "none", "exit 0");
        let notice = session.stop(false).notice();
        assert!(
            notice.starts_with("prove-it: BOUNDED_CLAIM_SURVIVES"),
            "{notice}"
        );
        assert!(notice.contains("+[checks.none]"), "{notice}");
    }

    #[test]
    fn an_edited_checks_file_or_script_is_bounded_with_its_diff() {
        let repo = monorepo("exit 0", "exit 0");
        let session = Session::new(&repo);
        session.start().silent();
        // Weakening: docs now reads nothing that changes.
        repo.write(
            "prove-it.toml",
            &TWO_CHECKS.replace("inputs = [\"docs\"]", "inputs = [\"docs/none?\"]"),
        );
        script(&repo, "packages/api/verify.sh", "api", "true");
        let notice = session.stop(false).notice();
        assert!(
            notice.starts_with("prove-it: BOUNDED_CLAIM_SURVIVES"),
            "{notice}"
        );
        assert!(
            notice.contains("a/prove-it.toml (session start)"),
            "{notice}"
        );
        assert!(notice.contains("-inputs = [\"docs\"]"), "{notice}");
        assert!(
            notice.contains("a/packages/api/verify.sh (session start)"),
            "{notice}"
        );
        let note = repo
            .note(&stock_input_tree(&repo, API_INPUTS))
            .expect("api's proof");
        assert!(note.contains("outcome: BOUNDED_CLAIM_SURVIVES"), "{note}");
        assert!(note.contains("verify-diff:"), "{note}");
        // With verifyEdits=block the edit is refused before anything runs.
        let repo = monorepo("exit 0", "exit 0");
        repo.git(&["config", "prove-it.verifyEdits", "block"]);
        let session = Session::new(&repo);
        session.start().silent();
        repo.write("prove-it.toml", &format!("{TWO_CHECKS}# edited\n"));
        session.stop(false).block();
        assert!(runs(&repo, "api").is_empty());
    }

    /// A check proven through its edited script at one stop is still only bounded at the next,
    /// where another check runs and passes: the set stands as its worst check, so the turn is
    /// bounded, never PROVEN.
    #[test]
    fn a_check_bounded_at_an_earlier_stop_keeps_the_set_bounded_when_another_runs() {
        let repo = monorepo("exit 0", "exit 0");
        let session = Session::new(&repo);
        session.start().silent();
        script(&repo, "packages/api/verify.sh", "api", "true");
        let notice = session.stop(false).notice();
        assert!(
            notice.starts_with("prove-it: BOUNDED_CLAIM_SURVIVES"),
            "{notice}"
        );
        repo.write("docs/index.md", "changed again\n");
        let notice = session.stop(false).notice();
        assert!(
            notice.starts_with("prove-it: BOUNDED_CLAIM_SURVIVES"),
            "{notice}"
        );
        assert_eq!(runs(&repo, "docs").len(), 2);
    }

    #[test]
    fn prove_it_skip_names_checks_not_to_run_and_says_so() {
        let repo = monorepo("exit 0", "exit 1");
        let session = Session::new(&repo)
            .env("PROVE_IT_SKIP", "docs")
            .env("PROVE_IT_LEDGER", "1");
        session.start().silent();
        repo.write("README.md", "changed\n");
        let notice = session.stop(false).notice();
        assert!(
            notice.starts_with("prove-it: skipped by PROVE_IT_SKIP=docs"),
            "{notice}"
        );
        assert!(notice.contains("docs was not run"), "{notice}");
        assert!(runs(&repo, "docs").is_empty());
        assert_eq!(runs(&repo, "api").len(), 1);
        let ledger =
            crate::harness::json_stdout(&repo.prove_it(&["ledger", "--json"]).assert().code(0));
        assert_eq!(
            ledger["entries"][0]["actual"][0],
            "skipped by PROVE_IT_SKIP=docs"
        );
        // A failing check not skipped still blocks.
        let repo = monorepo("exit 1", "exit 1");
        let session = Session::new(&repo).env("PROVE_IT_SKIP", "docs");
        session.start().silent();
        repo.write("README.md", "changed\n");
        let block = session.stop(false).block();
        assert!(block.contains("check api failed"), "{block}");
        assert!(runs(&repo, "docs").is_empty());
    }

    #[test]
    fn a_checks_file_in_error_blocks_naming_its_line() {
        let repo = monorepo("exit 0", "exit 0");
        let session = Session::new(&repo);
        session.start().silent();
        repo.write("prove-it.toml", "[checks.api]\nrun = \"x.sh\"\nputs = []\n");
        let block = session.stop(false).block();
        assert!(
            block.contains("prove-it.toml is not a valid checks file"),
            "{block}"
        );
        assert!(block.contains("line 3"), "{block}");
    }

    #[test]
    fn a_repository_with_only_a_checks_file_is_gated() {
        let repo = monorepo("exit 3", "exit 0");
        assert!(!repo.path("verify.sh").exists());
        let session = Session::new(&repo);
        session.start().silent();
        repo.write("packages/shared/lib.txt", "changed\n");
        session.stop(false).block();
        assert_eq!(runs(&repo, "api").len(), 1);
        // A session that changed nothing is left alone.
        let repo = monorepo("exit 3", "exit 0");
        let session = Session::new(&repo);
        session.start().silent();
        session.stop(false).silent();
        assert!(runs(&repo, "api").is_empty());
    }
}

/// At the stop, failure records are words, never verdicts; retries are policy.
mod failures {
    use super::{Session, armed, runs};
    use crate::checks::{monorepo, script};
    use crate::harness::TestRepo;

    fn failures_note(repo: &TestRepo, object: &str) -> Option<String> {
        let out = repo.git_output(&["notes", "--ref", "prove-it-failures", "show", object]);
        out.status
            .success()
            .then(|| String::from_utf8(out.stdout).unwrap())
    }

    #[test]
    fn a_failure_on_record_for_the_starting_state_is_said_to_predate_the_session() {
        let (repo, counter) = armed(1);
        repo.prove_it(&["run"]).assert().code(1);
        assert!(
            failures_note(&repo, "HEAD^{tree}").is_some_and(|n| n.contains("outcome: DISPROVEN"))
        );
        let session = Session::new(&repo);
        session.start().silent();
        repo.write("b.txt", "unrelated\n");
        let block = session.stop(false).block();
        assert!(
            block.contains("This failure predates the session"),
            "{block}"
        );
        assert!(block.contains("by cli"), "{block}");
        // Said, and still blocked: it ran, and the turn may not end.
        assert!(block.contains("attempt 1 of 3"), "{block}");
        assert_eq!(runs(&counter), 2);
    }

    #[test]
    fn a_failure_with_other_last_lines_is_not_said_to_predate_the_session() {
        let repo = TestRepo::new();
        repo.write("a.txt", "first\n");
        repo.verify_script("cat a.txt\nexit 1");
        repo.commit_all("initial");
        repo.prove_it(&["run"]).assert().code(1);
        let session = Session::new(&repo);
        session.start().silent();
        repo.write("a.txt", "second\n");
        let block = session.stop(false).block();
        assert!(block.contains("second"), "{block}");
        assert!(!block.contains("predates"), "{block}");
    }

    /// The trap: a failure forged or recorded for the very state must not end the turn as
    /// failed for good, nor spare the run that could prove it.
    #[test]
    fn a_recorded_failure_of_the_very_state_is_run_again_not_taken_as_final() {
        let repo = TestRepo::new();
        repo.write("a.txt", "a\n");
        let flag = repo.home().join("broken");
        let counter = repo.home().join("runs");
        repo.verify_script(&format!(
            "echo run >> '{}'\ntest ! -e '{}'",
            counter.display(),
            flag.display()
        ));
        repo.commit_all("initial");
        let session = Session::new(&repo);
        session.start().silent();
        repo.write("a.txt", "fixed\n");
        std::fs::write(&flag, "").unwrap();
        repo.prove_it(&["run"]).assert().code(1);
        let tree = repo.stock_state_tree().unwrap();
        assert!(failures_note(&repo, &tree).is_some());
        std::fs::remove_file(&flag).unwrap();
        // The pass ends the turn, and a failure of the same script on the same state contests
        // it (SPEC.md section 3.3): flaky, not proven, for a person to resolve.
        let notice = session.stop(false).notice();
        assert!(
            notice.contains("NOT_PROVEN") && notice.contains("flaky"),
            "{notice}"
        );
        assert_eq!(
            std::fs::read_to_string(&counter).unwrap().lines().count(),
            2
        );
        assert!(repo.note(&tree).is_some(), "the stop's pass is recorded");
    }

    #[test]
    fn raising_prove_it_retries_mid_session_is_refused() {
        let (repo, counter) = armed(0);
        let session = Session::new(&repo);
        session.start().silent();
        repo.git(&["config", "prove-it.retries", "10"]);
        repo.write("a.txt", "changed\n");
        let block = session.stop(false).block();
        assert!(
            block.contains("retries of a failing check raised from 0 to 10"),
            "{block}"
        );
        assert_eq!(runs(&counter), 0);
    }

    #[test]
    fn a_flaky_verify_sh_passes_under_retries_and_its_proof_says_flaky() {
        let repo = TestRepo::new();
        repo.write("a.txt", "a\n");
        let counter = repo.home().join("runs");
        // Fails on its first run, passes on the next.
        repo.verify_script(&format!(
            "echo run >> '{0}'\ntest \"$(wc -l < '{0}')\" -ge 2",
            counter.display()
        ));
        repo.commit_all("initial");
        repo.git(&["config", "prove-it.retries", "2"]);
        let session = Session::new(&repo);
        session.start().silent();
        repo.write("a.txt", "changed\n");
        session.stop(false).silent();
        let tree = repo.stock_state_tree().unwrap();
        let note = repo.note(&tree).expect("proven");
        assert!(note.contains("\nflaky: 1\n"), "{note}");
        assert!(
            failures_note(&repo, &tree).is_none(),
            "a pass leaves no failure"
        );
    }

    #[test]
    fn a_checks_failure_on_record_at_the_start_is_named_as_predating_the_session() {
        let repo = monorepo("echo 'api: 2 tests failed'\nexit 1", "exit 0");
        repo.prove_it(&["run"]).assert().code(1);
        let session = Session::new(&repo);
        session.start().silent();
        repo.write("README.md", "changed\n");
        let block = session.stop(false).block();
        assert!(block.contains("check api failed"), "{block}");
        assert!(
            block.contains("This failure predates the session: Check api failed"),
            "{block}"
        );
        // A check's new failure is not said to predate it.
        script(
            &repo,
            "packages/api/verify.sh",
            "api",
            "echo 'api: another'\nexit 1",
        );
        let block = session.stop(true).block();
        assert!(!block.contains("predates"), "{block}");
    }
}
