//! What reaches the person reading a command's output or exit status (issue 19): an answer
//! that was not 0 is never turned into 0 on the way out, however the output is cut short.

use std::process::Stdio;

use assert_cmd::cargo::cargo_bin;

use crate::harness::TestRepo;

/// 128 + SIGPIPE, as git and the shell report a command killed by a closed pipe.
const BROKEN_PIPE: i32 = 141;

/// A repository with `n` commits, none proven.
fn unproven_commits(n: usize) -> TestRepo {
    let repo = TestRepo::with_commit();
    for i in 0..n {
        repo.write("n.txt", &format!("{i}\n"));
        repo.commit_all(&format!("change {i}"));
    }
    repo
}

/// Run `git prove-it <args>` with stdout a pipe whose reading end is already closed, so the
/// first write fails with EPIPE, every time.
fn with_stdout_closed(repo: &TestRepo, args: &[&str]) -> std::process::Output {
    let (reader, writer) = std::io::pipe().expect("a pipe");
    drop(reader);
    let mut cmd = repo.command(cargo_bin("git-prove-it"));
    cmd.args(args)
        .stdin(Stdio::null())
        .stdout(writer)
        .stderr(Stdio::piped());
    let child = cmd.spawn().expect("git-prove-it starts");
    // The parent's copy of the writer went into `cmd`: drop it, so only the child holds it.
    drop(cmd);
    child.wait_with_output().expect("git-prove-it ends")
}

/// Hole 13: `check --all | head -1` exited 0 although unproven commits exist, because a broken
/// pipe mapped to exit 0; a script with `set -o pipefail` took it for a pass.
#[test]
fn check_all_piped_into_head_keeps_failing() {
    let repo = unproven_commits(40);
    let script = format!(
        "set -o pipefail; '{}' check --all | head -1",
        cargo_bin("git-prove-it").display()
    );
    let out = repo
        .command("bash")
        .args(["-c", &script])
        .output()
        .expect("bash runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(stdout.lines().count(), 1, "head printed one line: {stdout}");
    assert!(
        stdout.starts_with("not proven: 41 of 41 commits"),
        "{stdout}"
    );
    let code = out.status.code();
    // Either the pipe held the whole answer (exit 1) or it was cut (141): never 0.
    assert!(
        code == Some(1) || code == Some(BROKEN_PIPE),
        "{code:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Hole 13, the closed pipe itself: a command whose answer is its exit status, cut off at its
/// first write, exits as git does on SIGPIPE, quietly, never 0.
#[test]
fn a_closed_stdout_is_never_exit_0() {
    let repo = unproven_commits(1);
    for args in [&["check", "--all"][..], &["check"], &["status"], &["log"]] {
        let out = with_stdout_closed(&repo, args);
        assert_eq!(out.status.code(), Some(BROKEN_PIPE), "{args:?}: {out:?}");
        assert_eq!(
            String::from_utf8_lossy(&out.stderr),
            "",
            "a closed pipe is not worth an error message: {args:?}"
        );
    }
    // A proven commit's answer was 0, but its output was cut short all the same.
    repo.prove_it(&["run"]).assert().code(0);
    let out = with_stdout_closed(&repo, &["check"]);
    assert_eq!(out.status.code(), Some(BROKEN_PIPE), "{out:?}");
    // With its stdout open, the same command says what it says, as before.
    repo.prove_it(&["check"]).assert().code(0);
}
