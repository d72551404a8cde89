//! What reaches the person reading a command's output or exit status: an answer
//! that was not 0 is never turned into 0 on the way out, however the output is cut short, and
//! a skip or a turn's end unverified is said where each host's output shows it.

use std::process::Stdio;

use assert_cmd::cargo::cargo_bin;

use crate::harness::TestRepo;
use crate::hosts::{ALL, Answer, Host, hook};

/// How the gate says a session is skipped.
const SKIPPED: &str = "prove-it: skipped by PROVE_IT_SKIP=1";
/// The notice that ends an always-failing turn by the default budget.
const YIELD: &str = "prove-it: NOT_PROVEN: this turn ended unverified (after 3 attempts)";

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

/// `check --all | head -1` exited 0 although unproven commits exist, because a broken
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

/// The closed pipe itself: a command whose answer is its exit status, cut off at its
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

/// Under `codex exec` a `PROVE_IT_SKIP=1` session left no trace in stdout
/// or stderr: its notice was a `systemMessage`, which `codex exec` never prints. On every host,
/// the skip is now said where the run's reader sees it: a notice where the host shows one, else
/// told to the agent as a block at the turn's first stop (once: after it, a notice again).
#[test]
fn a_skip_is_said_on_every_host_where_its_output_shows_it() {
    let headless_claude = [("CLAUDE_CODE_ENTRYPOINT", "sdk-cli")];
    let mut runs: Vec<(Host, &[(&str, &str)])> = ALL.iter().map(|&host| (host, &[][..])).collect();
    runs.push((Host::Claude, &headless_claude));
    for (host, env) in runs {
        let repo = TestRepo::with_commit();
        let mut env = env.to_vec();
        env.push(("PROVE_IT_SKIP", "1"));
        hook(&repo, host, host.start(&repo, "s1"), &env);
        repo.write("b.txt", "change\n");
        let first = hook(&repo, host, host.stop(&repo, "s1", 0), &env);
        let told_the_agent = matches!(
            host,
            Host::Codex | Host::Copilot | Host::Cursor | Host::Qwen
        ) || env.contains(&headless_claude[0]);
        let context = format!("{host:?} {env:?}: {first:?}");
        match first {
            Answer::Block(reason) if told_the_agent => {
                assert!(reason.starts_with(SKIPPED), "{context}");
                assert!(reason.contains("quoting the notice above"), "{context}");
                // Once a turn: the stop after it gets the notice, and the turn ends.
                let again = hook(&repo, host, host.stop(&repo, "s1", 1), &env);
                assert!(!matches!(again, Answer::Block(_)), "{host:?}: {again:?}");
            }
            Answer::Notice(text) if !told_the_agent => {
                assert!(text.starts_with(SKIPPED), "{context}");
            }
            _ => panic!("the skip must be said: {context}"),
        }
        assert!(repo.note(&repo.stock_state_tree().unwrap()).is_none());
    }
}

/// `claude -p` (`CLAUDE_CODE_ENTRYPOINT=sdk-cli`) shows no `systemMessage`
/// in its text or JSON result, so the turn's end unverified is one last block for the agent to
/// report, as for `codex exec` and Copilot; an interactive session keeps its notice.
#[test]
fn claude_p_gets_the_yield_as_one_last_block() {
    for (env, last_block) in [
        (
            &[
                ("CLAUDE_CODE_ENTRYPOINT", "sdk-cli"),
                ("CLAUDE_CODE_SESSION_ATTENDED", "0"),
            ][..],
            true,
        ),
        (&[("CLAUDE_CODE_ENTRYPOINT", "cli")][..], false),
    ] {
        let repo = TestRepo::with_commit();
        repo.verify_script("echo 'check 42 is broken'\nexit 1");
        repo.commit_all("failing");
        hook(&repo, Host::Claude, Host::Claude.start(&repo, "s1"), env);
        repo.write("b.txt", "change\n");
        let mut blocks = Vec::new();
        let last = loop {
            let after = u32::try_from(blocks.len()).unwrap();
            match hook(
                &repo,
                Host::Claude,
                Host::Claude.stop(&repo, "s1", after),
                env,
            ) {
                Answer::Block(reason) if blocks.len() < 10 => blocks.push(reason),
                answer => break answer,
            }
        };
        assert_eq!(
            blocks.len(),
            3 + usize::from(last_block),
            "{env:?}: {blocks:#?}"
        );
        if last_block {
            assert!(blocks[3].starts_with(YIELD), "{}", blocks[3]);
            assert!(
                blocks[3].contains("quoting the notice above"),
                "{}",
                blocks[3]
            );
        }
        assert!(
            matches!(&last, Answer::Notice(text) if text.starts_with(YIELD)),
            "{env:?}: {last:?}"
        );
        // What a script checks afterwards.
        repo.prove_it(&["status"]).assert().code(1);
    }
}
