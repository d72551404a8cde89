//! `check`, `log` and `sync` in bare repositories: CI mirrors and servers have no worktree, and
//! these commands need only commits, trees and notes, so they answer there exactly as in a clone.

use std::path::{Path, PathBuf};
use std::process::Output;

use predicates::prelude::*;

use crate::harness::{BareRemote, TestRepo, json_stdout};
use crate::log::history;
use crate::signed::{keygen, sign_with};

const ALICE: &str = "alice@example.com";

/// A bare copy of `repo` with its proofs, made by `git clone --bare` (which fetches no notes, so
/// they are fetched after, as CI would) or `git clone --mirror` (which copies every ref).
fn bare_copy(repo: &TestRepo, how: &str) -> PathBuf {
    let bare = repo.home().join(format!("copy{how}.git"));
    repo.git(&["clone", "-q", how, ".", bare.to_str().unwrap()]);
    if how == "--bare" {
        repo.command("git")
            .current_dir(&bare)
            .args([
                "fetch",
                "-q",
                "origin",
                "refs/notes/prove-it:refs/notes/prove-it",
            ])
            .status()
            .unwrap()
            .success()
            .then_some(())
            .expect("git fetch of the proofs");
    }
    bare
}

/// `git prove-it <args>` in the clone.
fn in_clone(repo: &TestRepo, args: &[&str]) -> Output {
    repo.prove_it(args).output().unwrap()
}

/// `git prove-it <args>` run from `dir`, with `GIT_DIR` when given.
fn from(repo: &TestRepo, dir: &Path, git_dir: Option<&Path>, args: &[&str]) -> Output {
    let mut cmd = repo.prove_it(args);
    cmd.current_dir(dir);
    if let Some(git_dir) = git_dir {
        cmd.env("GIT_DIR", git_dir);
    }
    cmd.output().unwrap()
}

/// Exit code, stdout and stderr, to compare two runs whole.
fn seen(out: &Output) -> (Option<i32>, String, String) {
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// What `check` and `log` are asked in a clone and a bare copy, with the exit code the clone
/// gives: proven, unproven, a range, every commit, JSON, each option of `log`, and an error.
const ASKED: &[(&[&str], i32)] = &[
    (&["check"], 1),
    (&["check", "--json"], 1),
    (&["check", "HEAD~4"], 0),
    (&["check", "--json", "HEAD~4"], 0),
    (&["check", "--strict", "HEAD~4"], 0),
    (&["check", "HEAD~2..HEAD"], 1),
    (&["check", "--all", "HEAD~2..HEAD"], 1),
    (&["check", "--all", "--json"], 1),
    (&["check", "no-such-rev"], 2),
    (&["log"], 0),
    (&["log", "--json"], 0),
    (&["log", "-p", "-n", "2"], 0),
    (&["log", "HEAD~3..HEAD"], 0),
    (&["log", "--color", "always"], 0),
];

#[test]
fn check_and_log_answer_in_a_bare_clone_and_a_mirror_as_in_the_clone() {
    let repo = history();
    for how in ["--bare", "--mirror"] {
        let bare = bare_copy(&repo, how);
        for (args, code) in ASKED {
            let clone = in_clone(&repo, args);
            assert_eq!(clone.status.code(), Some(*code), "{args:?}: {clone:?}");
            assert_eq!(
                seen(&from(&repo, &bare, None, args)),
                seen(&clone),
                "{how} {args:?}"
            );
        }
        // From inside the git dir, as git finds a bare repository there too.
        let refs = bare.join("refs");
        for args in [&["check", "--all", "--json"][..], &["log"]] {
            assert_eq!(
                seen(&from(&repo, &refs, None, args)),
                seen(&in_clone(&repo, args))
            );
        }
    }
}

#[test]
fn git_dir_names_a_bare_repository_from_elsewhere() {
    let repo = history();
    let bare = bare_copy(&repo, "--bare");
    let elsewhere = repo.home().join("elsewhere");
    std::fs::create_dir_all(&elsewhere).unwrap();
    for (args, _) in ASKED {
        assert_eq!(
            seen(&from(&repo, &elsewhere, Some(&bare), args)),
            seen(&in_clone(&repo, args)),
            "{args:?}"
        );
    }
    // And as git runs us: `git --git-dir=<bare> prove-it check` sets GIT_DIR for us.
    let out = repo
        .command("git")
        .current_dir(&elsewhere)
        .arg("--git-dir")
        .arg(&bare)
        .args(["prove-it", "check", "--json", "--all"])
        .output()
        .unwrap();
    assert_eq!(
        seen(&out),
        seen(&in_clone(&repo, &["check", "--json", "--all"]))
    );
}

/// HEAD~1 proven with a signature by alice, HEAD proven unsigned, and an allowed signers file
/// outside the repository.
fn signed_and_unsigned() -> (TestRepo, String) {
    let repo = TestRepo::with_commit();
    let (key, public) = keygen(&repo, "alice");
    sign_with(&repo, key.to_str().unwrap());
    repo.prove_it(&["run"]).assert().code(0);
    repo.git(&["config", "prove-it.sign", "false"]);
    repo.write("b.txt", "b\n");
    repo.commit_all("second");
    repo.prove_it(&["run"]).assert().code(0);
    let allowed = repo.home().join("allowed_signers");
    std::fs::write(&allowed, format!("{ALICE} {public}\n")).unwrap();
    (repo, allowed.to_str().unwrap().to_string())
}

#[test]
fn require_signed_works_in_a_bare_repository() {
    let (repo, allowed) = signed_and_unsigned();
    let bare = bare_copy(&repo, "--mirror");
    let signed = |more: &[&'static str]| {
        let mut args = vec!["check", "--require-signed", "--allowed-signers"];
        args.push(allowed.as_str());
        args.extend_from_slice(more);
        args
    };
    let asked: Vec<(Vec<&str>, i32)> = vec![
        (signed(&["HEAD~1"]), 0),
        (signed(&["--json", "HEAD~1"]), 0),
        (signed(&[]), 1),
        (signed(&["--json", "--all"]), 1),
        (vec!["log", "--allowed-signers", &allowed], 0),
        (vec!["log", "--json", "--allowed-signers", &allowed], 0),
        (vec!["log"], 0),
    ];
    for (args, code) in &asked {
        let clone = in_clone(&repo, args);
        assert_eq!(clone.status.code(), Some(*code), "{args:?}: {clone:?}");
        assert_eq!(
            seen(&from(&repo, &bare, None, args)),
            seen(&clone),
            "{args:?}"
        );
    }
    let json = json_stdout(
        &repo
            .prove_it(&signed(&["--json", "HEAD~1"]))
            .current_dir(&bare)
            .assert()
            .code(0),
    );
    assert_eq!(json["commits"][0]["signature"]["principal"], ALICE);
    // No allowed signers file given or configured is the same error as in a clone.
    repo.prove_it(&["check", "--require-signed"])
        .current_dir(&bare)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("needs an allowed signers file"));
}

/// The principal stock git names for HEAD's SSH signature, run from `dir` with `GIT_DIR`.
fn stock_git_principal(repo: &TestRepo, dir: &Path, git_dir: &Path) -> String {
    let out = repo
        .command("git")
        .current_dir(dir)
        .env("GIT_DIR", git_dir)
        .args(["log", "--show-signature", "-1", "--format="])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    let after = text
        .split("Good \"git\" signature for ")
        .nth(1)
        .unwrap_or_else(|| panic!("no good signature: {out:?}"));
    after.split(" with ").next().unwrap().to_string()
}

/// Our principal for HEAD's signed proof, from `log --json` run in `dir` with `GIT_DIR`.
fn our_principal(repo: &TestRepo, dir: &Path, git_dir: &Path) -> String {
    let json = json_stdout(
        &repo
            .prove_it(&["log", "--json", "-n", "1"])
            .current_dir(dir)
            .env("GIT_DIR", git_dir)
            .assert()
            .code(0),
    );
    let signature = &json["commits"][0]["signature"];
    assert_eq!(signature["status"], "good", "{signature}");
    signature["principal"].as_str().unwrap().to_string()
}

/// git hands a relative gpg.ssh.allowedSignersFile to ssh-keygen as it is, so it resolves
/// against where git runs: the worktree root, or in a bare repository the current directory
/// (the git dir when run there, as a server's hooks are). Ours resolves as git's does, and
/// prove-it.allowedSigners as gpg.ssh.allowedSignersFile.
#[test]
fn a_relative_allowed_signers_path_resolves_in_a_bare_repository_as_git_resolves_it() {
    let repo = TestRepo::with_commit();
    let (key, public) = keygen(&repo, "alice");
    sign_with(&repo, key.to_str().unwrap());
    repo.write("b.txt", "b\n");
    repo.git(&["add", "-A"]);
    repo.git(&["commit", "-q", "-S", "-m", "signed commit, signed proof"]);
    repo.prove_it(&["run"]).assert().code(0);
    let bare = bare_copy(&repo, "--bare");
    let elsewhere = repo.home().join("elsewhere");
    std::fs::create_dir_all(&elsewhere).unwrap();
    std::fs::write(bare.join("signers"), format!("in-git-dir {public}\n")).unwrap();
    std::fs::write(elsewhere.join("signers"), format!("in-cwd {public}\n")).unwrap();
    let config = |key: &str, value: &str| {
        repo.command("git")
            .env("GIT_DIR", &bare)
            .args(["config", key, value])
            .status()
            .unwrap()
            .success()
            .then_some(())
            .expect("git config");
    };
    config("gpg.ssh.allowedSignersFile", "signers");

    for (dir, principal) in [(&bare, "in-git-dir"), (&elsewhere, "in-cwd")] {
        assert_eq!(stock_git_principal(&repo, dir, &bare), principal);
        assert_eq!(our_principal(&repo, dir, &bare), principal);
        repo.prove_it(&["check", "--require-signed"])
            .current_dir(dir)
            .env("GIT_DIR", &bare)
            .assert()
            .code(0);
    }
    // Where the current directory has no such file, it cannot be read: an error, as for git.
    repo.prove_it(&["check", "--require-signed"])
        .current_dir(bare.join("refs"))
        .assert()
        .code(2);

    // Ours comes first and resolves the same way.
    std::fs::write(bare.join("ours"), format!("ours {public}\n")).unwrap();
    config("prove-it.allowedSigners", "ours");
    assert_eq!(our_principal(&repo, &bare, &bare), "ours");
}

/// `git clone --bare` fetches no notes: `sync` fetches the proofs there as in a clone.
#[test]
fn sync_fetches_proofs_into_a_bare_clone() {
    let remote = BareRemote::new();
    let repo = TestRepo::with_commit();
    repo.publish_to(&remote);
    repo.prove_it(&["run"]).assert().code(0);
    repo.prove_it(&["sync"]).assert().code(0);
    let bare = repo.home().join("ci.git");
    repo.git(&[
        "clone",
        "-q",
        "--bare",
        remote.path.to_str().unwrap(),
        bare.to_str().unwrap(),
    ]);
    let in_bare = |args: &[&str]| {
        let mut cmd = repo.prove_it(args);
        cmd.current_dir(&bare);
        cmd
    };
    in_bare(&["check"]).assert().code(1);
    let json = json_stdout(&in_bare(&["sync", "--json"]).assert().code(0));
    assert_eq!(json["fetched"], true);
    assert_eq!(json["pushed"], false);
    in_bare(&["check"]).assert().code(0);
}

/// A server's hooks run in its bare git dir. In post-receive the pushed commits are in place and
/// `check` answers; in pre-receive git keeps them in a quarantine directory that gix does not
/// read (GIT_OBJECT_DIRECTORY), so `check` fails with a hint saying where it works instead of a
/// bare "object not found".
#[test]
fn a_servers_hooks_check_pushes_after_receive_and_say_why_not_before() {
    let server = BareRemote::new();
    let log = server.path.join("hook.log");
    let hook = |name: &str| {
        let path = server.path.join("hooks").join(name);
        let body = format!(
            "#!/bin/sh\nwhile read old new ref; do\n  case $ref in refs/heads/*) git prove-it check \"$new\" >>{log} 2>&1; echo \"{name} exit $?\" >>{log};; esac\ndone\nexit 0\n",
            log = log.display()
        );
        std::fs::write(&path, body).unwrap();
        std::fs::set_permissions(&path, std::os::unix::fs::PermissionsExt::from_mode(0o755))
            .unwrap();
    };
    hook("pre-receive");
    hook("post-receive");
    let repo = TestRepo::with_commit();
    repo.prove_it(&["run"]).assert().code(0);
    repo.git(&["remote", "add", "origin", server.path.to_str().unwrap()]);
    repo.git(&["push", "-q", "--no-verify", "origin", "refs/notes/prove-it"]);
    repo.git(&["push", "-q", "--no-verify", "origin", "main"]);
    let seen = std::fs::read_to_string(&log).unwrap();
    assert!(seen.contains("pre-receive exit 2"), "{seen}");
    assert!(
        seen.contains("hint: a push's new commits are out of reach in a pre-receive"),
        "{seen}"
    );
    assert!(seen.contains("post-receive exit 0"), "{seen}");
    assert!(seen.contains("proven: "), "{seen}");
}
