//! The pre-push hook, installed by `git prove-it install pre-push` and run by a real `git push`.

use predicates::prelude::*;

use crate::check::{short, tree_of};
use crate::harness::{BareRemote, TestRepo};

/// A repository with one commit, origin pointing at an empty bare remote, and our hook.
fn hooked() -> (BareRemote, TestRepo) {
    let remote = BareRemote::new();
    let repo = TestRepo::with_commit();
    repo.git(&["remote", "add", "origin", remote.path.to_str().unwrap()]);
    repo.prove_it(&["install", "pre-push"])
        .assert()
        .code(0)
        .stdout(predicate::str::starts_with(
            "installed the pre-push hook at ",
        ));
    (remote, repo)
}

#[test]
fn a_refused_push_leaves_the_remote_untouched_and_says_how_to_fix_it() {
    let (remote, repo) = hooked();
    let out = repo.git_output(&["push", "origin", "main"]);
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    let head = short(&repo, "HEAD");
    assert!(
        stderr.contains("prove-it: refusing to push to origin: 1 commit not proven"),
        "{stderr}"
    );
    assert!(stderr.contains(&format!("  {head} initial (no proof for its tree)")));
    assert!(stderr.contains(&format!("hint: prove it: git prove-it run {head}")));
    assert!(stderr.contains("git push --no-verify"));
    assert_eq!(remote.refs(), "", "nothing reached the remote");
}

#[test]
fn a_refused_push_says_when_the_commits_last_run_failed_and_never_sends_failures() {
    let (remote, repo) = hooked();
    repo.verify_fails(1);
    repo.commit_all("broken");
    repo.prove_it(&["run", "HEAD"]).assert().code(1);
    let out = repo.git_output(&["push", "origin", "main"]);
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    let head = short(&repo, "HEAD");
    assert!(
        stderr.contains(&format!("  {head} broken (its last run failed: exit 1, ")),
        "{stderr}"
    );
    // Proven and pushed, the failure record stays local.
    repo.verify_passes();
    repo.commit_all("fixed");
    repo.prove_it(&["run"]).assert().code(0);
    let out = repo.git_output(&["push", "origin", "main"]);
    assert!(out.status.success(), "{out:?}");
    assert!(
        remote.refs().contains("refs/notes/prove-it\n"),
        "{}",
        remote.refs()
    );
    assert!(
        !remote.refs().contains("prove-it-failures"),
        "{}",
        remote.refs()
    );
}

#[test]
fn a_proven_push_carries_the_proofs_along() {
    let (remote, repo) = hooked();
    repo.prove_it(&["run"]).assert().code(0);
    let out = repo.git_output(&["push", "origin", "main"]);
    assert!(out.status.success(), "{out:?}");
    assert!(String::from_utf8_lossy(&out.stderr).contains("prove-it: proofs sent to origin"));
    let tree = tree_of(&repo, "HEAD");
    assert_eq!(
        remote.ref_id("refs/heads/main").unwrap(),
        repo.git(&["rev-parse", "HEAD"]).trim()
    );
    assert_eq!(remote.note(&tree), repo.note(&tree));

    // A second clone's proofs are merged, not overwritten, when the next push sends ours.
    let other = TestRepo::clone_of(&remote);
    other.write("b.txt", "b\n");
    other.commit_all("other's work");
    other.prove_it(&["run"]).assert().code(0);
    other.prove_it(&["sync"]).assert().code(0);
    repo.write("c.txt", "c\n");
    repo.commit_all("more work");
    repo.prove_it(&["run"]).assert().code(0);
    let out = repo.git_output(&["push", "origin", "main:more"]);
    assert!(out.status.success(), "{out:?}");
    for tree in [tree, tree_of(&other, "HEAD"), tree_of(&repo, "HEAD")] {
        assert!(
            remote.note(&tree).is_some(),
            "the remote lost the proof of {tree}"
        );
    }
}

#[test]
fn deleting_a_branch_is_never_blocked_and_no_verify_bypasses() {
    let (remote, repo) = hooked();
    repo.git(&["push", "-q", "--no-verify", "origin", "main", "main:doomed"]);
    assert!(remote.ref_id("refs/heads/doomed").is_some());
    repo.git(&["push", "-q", "origin", "--delete", "doomed"]);
    assert!(remote.ref_id("refs/heads/doomed").is_none());
}

#[test]
fn tip_checks_only_the_pushed_tip_and_all_every_new_commit() {
    let (remote, repo) = hooked();
    repo.git(&["push", "-q", "--no-verify", "origin", "main"]);
    repo.write("b.txt", "b\n");
    let middle = repo.commit_all("unproven middle");
    repo.write("c.txt", "c\n");
    repo.commit_all("proven tip");
    repo.prove_it(&["run"]).assert().code(0);

    repo.git(&["config", "prove-it.prePush", "all"]);
    let out = repo.git_output(&["push", "origin", "main"]);
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains(&format!("{} unproven middle", &middle[..7])),
        "{stderr}"
    );
    assert!(!stderr.contains("proven tip ("), "{stderr}");
    assert!(
        !stderr.contains(" initial "),
        "commits the remote has are not checked: {stderr}"
    );
    assert_ne!(
        remote.ref_id("refs/heads/main").unwrap(),
        repo.git(&["rev-parse", "HEAD"]).trim()
    );

    repo.git(&["config", "prove-it.prePush", "tip"]);
    repo.git(&["push", "-q", "origin", "main"]);
    assert_eq!(
        remote.ref_id("refs/heads/main").unwrap(),
        repo.git(&["rev-parse", "HEAD"]).trim()
    );
}

#[test]
fn prove_runs_verify_sh_for_unproven_tips_instead_of_refusing() {
    let (remote, repo) = hooked();
    repo.git(&["config", "prove-it.prePush", "prove"]);
    repo.write("untracked.txt", "not part of the commit\n");
    let out = repo.git_output(&["push", "origin", "main"]);
    assert!(out.status.success(), "{out:?}");
    let tree = tree_of(&repo, "HEAD");
    let note = remote
        .note(&tree)
        .expect("the proof made on push reached the remote");
    assert!(note.contains("host: pre-push"), "{note}");
    assert_eq!(repo.git(&["status", "--porcelain"]), "?? untracked.txt\n");

    // A commit whose verify.sh fails is refused, after trying.
    repo.verify_fails(1);
    repo.commit_all("broken");
    let out = repo.git_output(&["push", "origin", "main"]);
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("not proven: verify.sh exit code 1"),
        "{stderr}"
    );
    assert!(stderr.contains("1 commit could not be proven"), "{stderr}");
    assert_eq!(
        remote.ref_id("refs/heads/main").unwrap(),
        repo.git(&["rev-parse", "HEAD~1"]).trim()
    );
}

#[test]
fn off_pushes_without_checking_or_sending_proofs_and_nonsense_refuses() {
    let (remote, repo) = hooked();
    repo.git(&["config", "prove-it.prePush", "sometimes"]);
    let out = repo.git_output(&["push", "origin", "main"]);
    assert!(!out.status.success());
    assert!(
        String::from_utf8_lossy(&out.stderr)
            .contains("prove-it.prePush must be one of tip, all, prove or off")
    );
    repo.git(&["config", "prove-it.prePush", "off"]);
    repo.prove_it(&["run"]).assert().code(0);
    repo.git(&["push", "-q", "origin", "main"]);
    assert!(remote.ref_id("refs/heads/main").is_some());
    assert!(remote.ref_id("refs/notes/prove-it").is_none());
}

#[test]
fn install_respects_core_hooks_path_and_never_clobbers_a_hook() {
    let repo = TestRepo::with_commit();
    repo.git(&["config", "core.hooksPath", "githooks"]);
    repo.prove_it(&["install", "pre-push"])
        .assert()
        .code(0)
        .stdout(predicate::str::contains("githooks/pre-push"));
    let hook = std::fs::read_to_string(repo.path("githooks/pre-push")).unwrap();
    assert!(hook.starts_with("#!/bin/sh\n"));
    assert!(hook.contains("exec git prove-it hook git pre-push \"$@\""));
    repo.prove_it(&["install", "pre-push"])
        .assert()
        .code(0)
        .stdout(predicate::str::starts_with("already installed"));

    repo.write("githooks/pre-push", "#!/bin/sh\nexit 0\n");
    repo.prove_it(&["install", "pre-push"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("already exists and is not ours"))
        .stderr(predicate::str::contains("hint: "));
    assert_eq!(
        std::fs::read_to_string(repo.path("githooks/pre-push")).unwrap(),
        "#!/bin/sh\nexit 0\n"
    );
}

#[test]
fn sending_the_proofs_does_not_run_the_hook_again() {
    let remote = BareRemote::new();
    let repo = TestRepo::with_commit();
    repo.git(&["remote", "add", "origin", remote.path.to_str().unwrap()]);
    let count = repo.home().join("hook-runs");
    repo.write(
        ".git/hooks/pre-push",
        &format!(
            "#!/bin/sh\necho run >> '{}'\nexec git prove-it hook git pre-push \"$@\"\n",
            count.display()
        ),
    );
    repo.chmod(".git/hooks/pre-push", 0o755);
    repo.prove_it(&["run"]).assert().code(0);
    repo.git(&["push", "-q", "origin", "main"]);
    assert!(remote.ref_id("refs/notes/prove-it").is_some());
    assert_eq!(std::fs::read_to_string(count).unwrap(), "run\n");
}

/// A pushed commit proven only through an edited verify.sh went through
/// the pre-push hook without a word; every such commit is now warned of.
#[test]
fn a_push_warns_of_every_commit_proven_through_an_edited_verify_sh() {
    // The default policy checks the tip only; the warning is for every pushed commit.
    let (_remote, repo) = hooked();
    let bounded = crate::check::bounded_record(&repo);
    crate::check::hand_write_note(&repo, &tree_of(&repo, "HEAD"), &bounded);
    let first = short(&repo, "HEAD");
    repo.write("b.txt", "b\n");
    repo.commit_all("second");
    let bounded = crate::check::bounded_record(&repo);
    crate::check::hand_write_note(&repo, &tree_of(&repo, "HEAD"), &bounded);
    let second = short(&repo, "HEAD");
    let out = repo.git_output(&["push", "origin", "main"]);
    assert!(out.status.success(), "such proofs count: {out:?}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("prove-it: warning: BOUNDED_CLAIM_SURVIVES: 2 pushed commits are proven only through a verify.sh or check script edited during the session"),
        "{stderr}"
    );
    for (commit, subject) in [(first, "initial"), (second, "second")] {
        assert!(
            stderr.contains(&format!(
                "  {commit} {subject} (proven only through an edited verify.sh)"
            )),
            "{stderr}"
        );
    }
}
