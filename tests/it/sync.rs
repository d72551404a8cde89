//! `git prove-it sync`: proofs reach the remote and other clones, merged by record union.

use std::os::unix::fs::PermissionsExt as _;

use predicates::prelude::*;

use crate::check::tree_of;
use crate::harness::{BareRemote, TestRepo, json_stdout};

/// A remote holding one commit (a.txt and a passing verify.sh) on main, and a clone of it.
fn remote_and_clone() -> (BareRemote, TestRepo) {
    let remote = BareRemote::new();
    let origin = TestRepo::with_commit();
    origin.publish_to(&remote);
    let clone = TestRepo::clone_of(&remote);
    (remote, clone)
}

#[test]
fn a_fresh_clone_syncs_and_then_check_passes() {
    let (remote, alice) = remote_and_clone();
    alice
        .prove_it(&["sync"])
        .assert()
        .code(0)
        .stdout("sync: neither origin nor this repository has proofs yet\n");
    assert!(remote.ref_id("refs/notes/prove-it").is_none());
    alice.prove_it(&["run"]).assert().code(0);
    alice
        .prove_it(&["sync"])
        .assert()
        .code(0)
        .stdout("sync: origin has no proofs yet; pushed our proofs to origin\n");
    let tree = tree_of(&alice, "HEAD");
    assert_eq!(
        remote.note(&tree),
        alice.note(&tree),
        "the remote holds the proof"
    );

    // CI: a fresh clone has no notes; check fails until the proofs are fetched.
    let ci = TestRepo::clone_of(&remote);
    ci.prove_it(&["check"]).assert().code(1);
    let json = json_stdout(&ci.prove_it(&["sync", "--json"]).assert().code(0));
    assert_eq!(json["version"], 1);
    assert_eq!(json["fetched"], true);
    assert_eq!(json["merge"], "fast_forward");
    assert_eq!(json["pushed"], false, "a clone without proofs only fetches");
    ci.prove_it(&["check"]).assert().code(0);
    assert!(
        ci.git(&["show-ref"])
            .contains("refs/notes/prove-it-remotes/origin"),
        "the remote's proofs are kept as fetched"
    );
    // Nothing new either way: nothing pushed.
    ci.prove_it(&["sync"])
        .assert()
        .code(0)
        .stdout("sync: nothing new from origin; origin has all our proofs\n");
}

#[test]
fn diverged_proofs_merge_without_loss_on_both_clones_and_the_remote() {
    let (remote, alice) = remote_and_clone();
    let bob = TestRepo::clone_of(&remote);
    // Alice proves the shared commit; Bob proves a commit of his own.
    alice.prove_it(&["run"]).assert().code(0);
    bob.write("b.txt", "bob\n");
    bob.commit_all("bob's work");
    bob.prove_it(&["run"]).assert().code(0);
    let shared = tree_of(&alice, "HEAD");
    let bobs = tree_of(&bob, "HEAD");

    alice.prove_it(&["sync"]).assert().code(0);
    bob.prove_it(&["sync"])
        .assert()
        .code(0)
        .stdout(predicate::str::contains("merged proofs from origin"))
        .stdout(predicate::str::contains("pushed our proofs to origin"));
    alice
        .prove_it(&["sync"])
        .assert()
        .code(0)
        .stdout(predicate::str::contains("fetched new proofs from origin"));

    for (who, note) in [
        ("alice", alice.note(&shared)),
        ("alice", alice.note(&bobs)),
        ("bob", bob.note(&shared)),
        ("bob", bob.note(&bobs)),
        ("remote", remote.note(&shared)),
        ("remote", remote.note(&bobs)),
    ] {
        assert!(
            note.is_some_and(|n| n.starts_with("prove-it-record: 1")),
            "{who} lost a proof"
        );
    }
    // The merge is a commit with both sides as parents, so the push was a fast-forward.
    let parents = bob.git(&["log", "-1", "--format=%P", "refs/notes/prove-it"]);
    assert_eq!(parents.split_whitespace().count(), 2);
    assert_eq!(
        remote.ref_id("refs/notes/prove-it").unwrap(),
        alice.git(&["rev-parse", "refs/notes/prove-it"]).trim()
    );
}

#[test]
fn two_proofs_of_the_same_tree_are_both_kept_whole() {
    let (remote, alice) = remote_and_clone();
    let bob = TestRepo::clone_of(&remote);
    alice.prove_it(&["run"]).assert().code(0);
    // Bob's run of the same tree differs (host identity), so it is another record.
    bob.prove_it(&["run"])
        .env("GIT_COMMITTER_NAME", "Bob")
        .assert()
        .code(0);
    alice.prove_it(&["sync"]).assert().code(0);
    bob.prove_it(&["sync"]).assert().code(0);
    let note = remote.note(&tree_of(&bob, "HEAD")).unwrap();
    assert_eq!(note.matches("prove-it-record: 1").count(), 2, "{note}");
    assert_eq!(note.matches("Signed-off-by: Bob <").count(), 1, "{note}");
    // Every record survived whole: the note still proves the tree for check.
    bob.prove_it(&["check"]).assert().code(0);
}

#[test]
fn the_default_remote_is_the_upstreams_and_a_missing_one_is_an_error() {
    let remote = BareRemote::new();
    let repo = TestRepo::with_commit();
    repo.git(&["remote", "add", "upstream", remote.path.to_str().unwrap()]);
    repo.git(&["push", "-q", "--no-verify", "-u", "upstream", "main"]);
    repo.prove_it(&["run"]).assert().code(0);
    repo.prove_it(&["sync"])
        .assert()
        .code(0)
        .stdout(predicate::str::contains("pushed our proofs to upstream"));
    assert!(remote.ref_id("refs/notes/prove-it").is_some());
    repo.prove_it(&["sync", "nowhere"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("error: git ls-remote"))
        .stderr(predicate::str::contains(
            "hint: check that 'nowhere' is a remote",
        ));
}

/// A remote where Alice's proof is, and Bob and Carol, each with a new commit proven locally.
fn three_clones_proving() -> (BareRemote, TestRepo, TestRepo, TestRepo) {
    let (remote, alice) = remote_and_clone();
    let bob = TestRepo::clone_of(&remote);
    let carol = TestRepo::clone_of(&remote);
    alice.prove_it(&["run"]).assert().code(0);
    alice.prove_it(&["sync"]).assert().code(0);
    for (who, file) in [(&bob, "b.txt"), (&carol, "c.txt")] {
        who.write(file, "work\n");
        who.commit_all("work");
        who.prove_it(&["run"]).assert().code(0);
    }
    (remote, alice, bob, carol)
}

fn assert_remote_has_all_proofs<const N: usize>(
    remote: &BareRemote,
    clones: [(&str, &TestRepo); N],
) {
    for (who, repo) in clones {
        let tree = tree_of(repo, "HEAD");
        assert!(
            remote
                .note(&tree)
                .is_some_and(|n| n.starts_with("prove-it-record: 1")),
            "the remote lost {who}'s proof"
        );
    }
}

/// The remote moves between our fetch and our push (another clone synced meanwhile): the push
/// is refused as not a fast-forward, and sync fetches, merges and pushes again, losing nothing.
/// The race is staged deterministically by a reference-transaction hook in Bob's clone, which
/// runs when `git fetch` updates his remote-tracking notes ref: the first time, Carol syncs.
#[test]
fn a_remote_that_moved_before_our_push_is_fetched_and_merged_again() {
    let (remote, alice, bob, carol) = three_clones_proving();
    let guard = bob.home().join("carol-synced");
    let hook = bob.path(".git/hooks/reference-transaction");
    std::fs::write(
        &hook,
        format!(
            "#!/bin/sh\n\
             [ \"$1\" = committed ] || exit 0\n\
             grep -q refs/notes/prove-it-remotes/ || exit 0\n\
             [ -e '{guard}' ] && exit 0\n\
             touch '{guard}'\n\
             cd '{carol}' && env -u GIT_DIR -u GIT_INDEX_FILE -u GIT_WORK_TREE git prove-it sync >/dev/null\n",
            guard = guard.display(),
            carol = carol.root.display(),
        ),
    )
    .unwrap();
    bob.chmod(".git/hooks/reference-transaction", 0o755);

    bob.prove_it(&["sync"])
        .assert()
        .code(0)
        .stdout(predicate::str::contains("pushed our proofs to origin"));
    assert!(guard.exists(), "the staged race did not happen");
    assert_remote_has_all_proofs(
        &remote,
        [("alice", &alice), ("bob", &bob), ("carol", &carol)],
    );
}

/// Another clone pushes its proofs while ours is being received: the remote's ref moves between
/// our push's start and its update, and the remote answers `[remote rejected] (failed to
/// update ref)` (git: "cannot lock ref ... is at X but expected Y"). That is another writer at
/// the same moment, not a refusal: sync fetches, merges and pushes again, losing nothing.
/// Staged deterministically by the remote's pre-receive hook: the first time, Carol syncs.
#[test]
fn a_remote_busy_with_another_writer_is_fetched_and_merged_again() {
    let (remote, alice, bob, carol) = three_clones_proving();
    let guard = bob.home().join("carol-synced");
    let hook = remote.path.join("hooks/pre-receive");
    std::fs::write(
        &hook,
        format!(
            "#!/bin/sh\n\
             cat >/dev/null\n\
             [ -e '{guard}' ] && exit 0\n\
             touch '{guard}'\n\
             cd '{carol}' && env -u GIT_DIR -u GIT_QUARANTINE_PATH -u GIT_OBJECT_DIRECTORY \
             -u GIT_ALTERNATE_OBJECT_DIRECTORIES -u GIT_PUSH_OPTION_COUNT \
             git prove-it sync >/dev/null\n",
            guard = guard.display(),
            carol = carol.root.display(),
        ),
    )
    .unwrap();
    std::fs::set_permissions(&hook, std::fs::Permissions::from_mode(0o755)).unwrap();

    bob.prove_it(&["sync"])
        .assert()
        .code(0)
        .stdout(predicate::str::contains("pushed our proofs to origin"));
    assert!(guard.exists(), "the staged race did not happen");
    assert_remote_has_all_proofs(
        &remote,
        [("alice", &alice), ("bob", &bob), ("carol", &carol)],
    );
}

/// A lock on the remote's proofs that never clears (left by a killed writer) is retried like a
/// busy remote, then reported in git's own words, not as contention of ours.
#[test]
fn a_remote_lock_that_never_clears_ends_in_gits_own_words() {
    let (remote, alice) = remote_and_clone();
    alice.prove_it(&["run"]).assert().code(0);
    std::fs::create_dir_all(remote.path.join("refs/notes")).unwrap();
    std::fs::write(remote.path.join("refs/notes/prove-it.lock"), "").unwrap();
    alice
        .prove_it(&["sync"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "cannot lock ref 'refs/notes/prove-it'",
        ))
        .stderr(predicate::str::contains("File exists"))
        .stderr(predicate::str::contains("kept changing under us").not());
    assert_eq!(remote.note_count(), 0);
}
