//! `git prove-it watch`: a person's foreground prover. Each test spawns the real binary on a
//! real repository, edits files or moves the branch, reads its plain output lines (stdout is a
//! pipe) with a timeout, and ends it with SIGINT; the settle time is made small through the
//! policy.

use std::io::{BufRead, BufReader};
use std::process::{Child, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

use crate::harness::{TestRepo, gone_within_5s};

/// A repository whose verify.sh notes each run (and its pid) in `$HOME`, then runs `body`;
/// `watch` settles after 100 ms.
fn repository(body: &str) -> TestRepo {
    let repo = TestRepo::new();
    repo.write("a.txt", "good\n");
    repo.verify_script(&format!(
        "echo run >> \"$HOME/runs\"\necho $$ > \"$HOME/verify.pid\"\n{body}"
    ));
    repo.commit_all("initial");
    repo.git(&["config", "prove-it.settle", "100"]);
    repo
}

/// How many times verify.sh ran.
fn runs(repo: &TestRepo) -> usize {
    std::fs::read_to_string(repo.home().join("runs")).map_or(0, |runs| runs.lines().count())
}

/// A running `watch` and the lines it printed so far.
struct Watching {
    child: Child,
    lines: Receiver<String>,
    seen: Vec<String>,
}

impl Watching {
    fn start(repo: &TestRepo, args: &[&str]) -> Watching {
        let mut child = repo
            .command(assert_cmd::cargo::cargo_bin("git-prove-it"))
            .arg("watch")
            .args(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let stdout = child.stdout.take().unwrap();
        let (sender, lines) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if sender.send(line).is_err() {
                    break;
                }
            }
        });
        let mut watching = Watching {
            child,
            lines,
            seen: Vec::new(),
        };
        watching.expect("watch: watching");
        watching
    }

    /// The next line holding `fragment`, within 20 s; the lines before it are kept in `seen`.
    #[track_caller]
    fn expect(&mut self, fragment: &str) -> String {
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.lines.recv_timeout(left) {
                Ok(line) => {
                    self.seen.push(line.clone());
                    if line.contains(fragment) {
                        return line;
                    }
                }
                Err(RecvTimeoutError::Timeout | RecvTimeoutError::Disconnected) => panic!(
                    "no line with {fragment:?} within 20 s; saw:\n{}",
                    self.seen.join("\n")
                ),
            }
        }
    }

    /// Ctrl-C: its exit status, once it has ended, and its last lines.
    fn interrupt(mut self) -> (Option<i32>, Vec<String>) {
        let pid = rustix::process::Pid::from_raw(i32::try_from(self.child.id()).unwrap()).unwrap();
        rustix::process::kill_process(pid, rustix::process::Signal::INT).unwrap();
        let status = self.child.wait().unwrap();
        self.seen.extend(self.lines.iter());
        (status.code(), self.seen)
    }
}

/// Whether the working state has a proof.
fn proven(repo: &TestRepo) -> bool {
    let tree = repo.our_state_tree().unwrap();
    repo.note(&tree).is_some()
}

/// A saved file is proven with no command run: the person edits, watch proves.
#[test]
fn a_change_is_proven_without_a_command() {
    let repo = repository("grep -q good a.txt");
    let mut watch = Watching::start(&repo, &[]);
    watch.expect("proven: tree");
    repo.write("a.txt", "good 2\n");
    watch.expect("watch: state");
    watch.expect("proven: tree");
    assert!(proven(&repo));
    let (code, lines) = watch.interrupt();
    assert_eq!(code, Some(0), "{lines:?}");
    assert!(lines.last().unwrap().contains("watch: ended"), "{lines:?}");
    assert_eq!(runs(&repo), 2);
}

/// A run a later edit makes stale is cancelled, not finished for nothing nor recorded; the
/// state the person ends with is the one proven.
#[test]
fn an_edit_during_a_run_cancels_it_and_the_final_state_is_proven() {
    let repo = repository("sleep 2\ngrep -q good a.txt");
    let mut watch = Watching::start(&repo, &[]);
    watch.expect("proven: tree");
    repo.write("a.txt", "good 2\n");
    watch.expect("check verify.sh: running");
    let stale = repo.our_state_tree().unwrap();
    repo.write("a.txt", "good 3\n");
    watch.expect("cancelled: the working state changed");
    watch.expect("proven: tree");
    assert!(proven(&repo));
    assert_eq!(repo.note(&stale), None, "the cancelled run was recorded");
    let (code, lines) = watch.interrupt();
    assert_eq!(code, Some(0), "{lines:?}");
}

/// A failing state is shown failing, with its last lines, and never proven.
#[test]
fn a_failing_state_shows_the_failure_and_no_proof() {
    let repo = repository("echo checking a.txt\ngrep -q good a.txt");
    let mut watch = Watching::start(&repo, &[]);
    watch.expect("proven: tree");
    repo.write("a.txt", "bad\n");
    watch.expect("not proven: verify.sh exit code 1");
    watch.expect("checking a.txt");
    assert!(!proven(&repo));
    let (code, lines) = watch.interrupt();
    assert_eq!(code, Some(0), "{lines:?}");
    assert_eq!(runs(&repo), 2, "{lines:?}");
}

/// `watch <range>` proves a commit the branch gains, without a command.
#[test]
fn watch_range_proves_a_new_commit_added_to_the_branch() {
    let repo = repository("grep -q good a.txt");
    repo.git(&["checkout", "-q", "-b", "topic"]);
    let mut watch = Watching::start(&repo, &["main..topic"]);
    repo.write("a.txt", "good 2\n");
    let commit = repo.commit_all("second");
    let short = &commit.trim()[..12];
    watch.expect(&format!("commit {short} second: running"));
    watch.expect("proven: tree");
    let tree = repo.git(&["rev-parse", "topic^{tree}"]);
    assert!(repo.note(tree.trim()).is_some(), "{:?}", watch.seen);
    let (code, lines) = watch.interrupt();
    assert_eq!(code, Some(0), "{lines:?}");
    // The commit's worktree is let go with it (kept for the next command, its slot free).
    assert_eq!(crate::run_rev::leftovers(&repo), (0, 0));
}

/// Ctrl-C in the middle of a run: verify.sh is killed with its group, nothing of it is
/// recorded, and the prover lock is free for the next prover.
#[test]
fn sigint_leaves_no_prover_process_and_no_lock_held() {
    let repo = repository("sleep 30\ngrep -q good a.txt");
    let mut watch = Watching::start(&repo, &[]);
    watch.expect("check verify.sh: running");
    let verify = std::fs::read_to_string(repo.home().join("verify.pid")).unwrap();
    let (code, lines) = watch.interrupt();
    assert_eq!(code, Some(0), "{lines:?}");
    assert!(gone_within_5s(verify.trim()), "verify.sh outlived watch");
    assert!(!proven(&repo));
    assert!(
        !String::from_utf8_lossy(
            &repo
                .git_output(&["notes", "--ref", "prove-it-failures", "list"])
                .stdout
        )
        .contains(&repo.our_state_tree().unwrap()),
        "the interrupted run was recorded as a failure"
    );
    // The lock is free: another watch takes it.
    let again = Watching::start(&repo, &[]);
    let (code, lines) = again.interrupt();
    assert_eq!(code, Some(0), "{lines:?}");
}

/// One prover per worktree: while the background prover of an agent session holds the lock,
/// watch refuses at once, saying who holds it and what to do, rather than run beside it.
#[test]
fn watch_refuses_while_a_background_prover_holds_the_lock() {
    let repo = repository("grep -q good a.txt");
    repo.git(&["config", "prove-it.aheadIdle", "30"]);
    let session = serde_json::json!({
        "session_id": "watch-session",
        "transcript_path": "/t.jsonl",
        "cwd": repo.root,
        "hook_event_name": "SessionStart",
        "source": "startup",
    })
    .to_string();
    let out = repo
        .prove_it(&["hook", "claude"])
        .write_stdin(session)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let root = repo.root.to_string_lossy().into_owned();
    let mut prover = repo
        .command(assert_cmd::cargo::cargo_bin("git-prove-it"))
        .args([
            "prove-ahead",
            "--host",
            "claude",
            "--session",
            "watch-session",
            &root,
        ])
        .spawn()
        .unwrap();
    let pid = prover.id().to_string();
    let holds = || {
        std::fs::read_to_string("/proc/locks").is_ok_and(|locks| {
            locks
                .lines()
                .any(|line| line.contains("FLOCK") && line.split_whitespace().nth(4) == Some(&pid))
        })
    };
    let held = (0..200).any(|_| {
        std::thread::sleep(Duration::from_millis(50));
        holds()
    });
    assert!(held, "the background prover never took its lock");
    let out = repo
        .prove_it(&["watch"])
        .timeout(Duration::from_secs(20))
        .output()
        .unwrap();
    let _ = prover.kill();
    let _ = prover.wait();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    assert!(
        stderr.contains(&format!(
            "error: process {pid} already proves this worktree"
        )),
        "{stderr}"
    );
    assert!(stderr.contains("hint: "), "{stderr}");
}

/// `watch main..topic` on a new branch whose one commit's verify.sh sleeps, once that
/// verify.sh has started.
fn watching_a_slow_commit() -> (TestRepo, Watching) {
    let repo = repository("grep -q slow a.txt && sleep 30\ngrep -q good a.txt");
    repo.git(&["checkout", "-q", "-b", "topic"]);
    let mut watch = Watching::start(&repo, &["main..topic"]);
    repo.write("a.txt", "good slow\n");
    let commit = repo.commit_all("slow");
    watch.expect(&format!("commit {} slow: running", &commit.trim()[..12]));
    let started = (0..200).any(|_| {
        std::thread::sleep(Duration::from_millis(50));
        repo.home().join("verify.pid").exists()
    });
    assert!(started, "verify.sh never started: {:?}", watch.seen);
    (repo, watch)
}

/// A commit that leaves the range while it runs (a reset, a rebase) is no longer worth its
/// run: it is cancelled, its verify.sh killed, and nothing recorded for it.
#[test]
fn watch_range_cancels_the_run_of_a_commit_that_left_the_range() {
    let (repo, mut watch) = watching_a_slow_commit();
    let tree = repo.git(&["rev-parse", "topic^{tree}"]);
    repo.git(&["reset", "-q", "--hard", "main"]);
    watch.expect("cancelled: the commit left the range");
    assert_eq!(
        repo.note(tree.trim()),
        None,
        "the cancelled run was recorded"
    );
    let verify = std::fs::read_to_string(repo.home().join("verify.pid")).unwrap();
    assert!(
        gone_within_5s(verify.trim()),
        "the cancelled verify.sh ran on"
    );
    // Watching goes on: the branch's next commit is proven.
    repo.write("a.txt", "good again\n");
    let commit = repo.commit_all("again");
    watch.expect(&format!("commit {} again: running", &commit.trim()[..12]));
    watch.expect("proven: tree");
    let (code, lines) = watch.interrupt();
    assert_eq!(code, Some(0), "{lines:?}");
    assert_eq!(crate::run_rev::leftovers(&repo), (0, 0));
}

/// With checks, a run is cancelled only by a change to the inputs of a check it runs: an edit
/// elsewhere leaves it to finish, and is proven after it.
#[test]
fn an_edit_outside_a_running_checks_inputs_does_not_cancel_it() {
    let repo = crate::checks::monorepo("sleep 2", "true");
    repo.git(&["config", "prove-it.settle", "100"]);
    let mut watch = Watching::start(&repo, &[]);
    watch.expect("proven: tree");
    repo.write("packages/api/src.txt", "api 2\n");
    watch.expect("check api: running");
    repo.write("docs/index.md", "docs 2\n");
    watch.expect("check api: passed");
    watch.expect("check docs: running");
    watch.expect("proven: tree");
    let status = repo.prove_it(&["status"]).output().unwrap();
    assert_eq!(status.status.code(), Some(0), "{status:?}");
    let (code, lines) = watch.interrupt();
    assert_eq!(code, Some(0), "{lines:?}");
    assert!(
        !lines.iter().any(|line| line.contains("cancelled")),
        "{lines:?}"
    );
    let api_runs = std::fs::read_to_string(repo.home().join("runs-api")).unwrap();
    assert_eq!(api_runs.lines().count(), 2, "{lines:?}");
}

/// A build that keeps writing its ignored files never lets the worktree be quiet: an edit of
/// the state during it still cancels the run rather than let it run to its end for nothing.
#[test]
fn an_edit_during_a_build_that_never_goes_quiet_still_cancels_the_run() {
    let repo = repository(
        "mkdir -p build\ni=0\nwhile [ $i -lt 300 ]; do echo $i > build/out; i=$((i+1)); sleep 0.02; done\ngrep -q good a.txt",
    );
    repo.write(".gitignore", "build/\n");
    repo.commit_all("ignore the build");
    let mut watch = Watching::start(&repo, &[]);
    watch.expect("check verify.sh: running");
    let started = Instant::now();
    repo.write("a.txt", "good 2\n");
    watch.expect("cancelled: the working state changed");
    assert!(
        started.elapsed() < Duration::from_secs(4),
        "the run went on to its end: {:?}",
        watch.seen
    );
    let (code, lines) = watch.interrupt();
    assert_eq!(code, Some(0), "{lines:?}");
}

/// Ctrl-C while a commit of the range runs: its verify.sh is killed, nothing is recorded for
/// it, and its worktree is let go.
#[test]
fn sigint_during_a_commits_run_leaves_no_process_nor_worktree() {
    let (repo, watch) = watching_a_slow_commit();
    let verify = std::fs::read_to_string(repo.home().join("verify.pid")).unwrap();
    let (code, lines) = watch.interrupt();
    assert_eq!(code, Some(0), "{lines:?}");
    assert!(gone_within_5s(verify.trim()), "verify.sh outlived watch");
    let tree = repo.git(&["rev-parse", "topic^{tree}"]);
    assert_eq!(
        repo.note(tree.trim()),
        None,
        "the interrupted run was recorded"
    );
    assert_eq!(crate::run_rev::leftovers(&repo), (0, 0));
}

/// Claude Code's `name` event of the session `watch-session` in `repo`.
fn claude_event(repo: &TestRepo, name: &str) -> String {
    serde_json::json!({
        "session_id": "watch-session",
        "transcript_path": "/t.jsonl",
        "cwd": repo.root,
        "hook_event_name": name,
        "prompt_id": "p1",
        "permission_mode": "default",
        "stop_hook_active": false,
        "last_assistant_message": "Done.",
        "source": "startup",
    })
    .to_string()
}

/// watch holds the prover lock but writes no status: a stop never waits on a run of watch's
/// (whose proof it may not admit); it runs verify.sh itself, as without any prover.
#[test]
fn a_stop_never_joins_a_run_of_watch() {
    let repo = repository("sleep 3\ngrep -q good a.txt");
    let start = repo
        .prove_it(&["hook", "claude"])
        .write_stdin(claude_event(&repo, "SessionStart"))
        .output()
        .unwrap();
    assert_eq!(start.status.code(), Some(0), "{start:?}");
    // A turn that changed the state, so that its stop must find a proof or run.
    repo.write("a.txt", "good 2\n");
    let mut watch = Watching::start(&repo, &[]);
    watch.expect("check verify.sh: running");
    let stop = repo
        .prove_it(&["hook", "claude"])
        .write_stdin(claude_event(&repo, "Stop"))
        .timeout(Duration::from_secs(30))
        .output()
        .unwrap();
    assert_eq!(stop.status.code(), Some(0), "{stop:?}");
    assert!(stop.stdout.is_empty(), "{stop:?}");
    assert_eq!(
        runs(&repo),
        2,
        "the stop joined watch's run rather than run its own"
    );
    let (code, lines) = watch.interrupt();
    assert_eq!(code, Some(0), "{lines:?}");
}
