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
        .stderr(predicate::str::contains("kept changing under us").not())
        // The refused ref in git's words, and hints about the lock.
        .stderr(predicate::str::starts_with(
            "error: origin refused refs/notes/prove-it: [remote rejected] (failed to update ref)\n",
        ))
        .stderr(predicate::str::contains(
            "hint: the proofs on origin stayed locked through every retry",
        ));
    assert_eq!(remote.note_count(), 0);
}

/// A remote whose pre-receive hook refuses refs/notes/prove-it without a word.
fn a_remote_that_refuses_proofs_silently() -> (BareRemote, TestRepo) {
    let (remote, alice) = remote_and_clone();
    let hook = remote.path.join("hooks/pre-receive");
    std::fs::write(
        &hook,
        "#!/bin/sh\nwhile read old new name; do\n  [ \"$name\" = refs/notes/prove-it ] && exit 1\ndone\nexit 0\n",
    )
    .unwrap();
    std::fs::set_permissions(&hook, std::fs::Permissions::from_mode(0o755)).unwrap();
    alice.prove_it(&["run"]).assert().code(0);
    (remote, alice)
}

// A silent refusal showed only "failed to push some refs" and a hint about
// the remote being reachable; git's own reason was on the dropped stdout of `push --porcelain`.
#[test]
fn a_silent_hook_refusal_is_reported_in_gits_own_words_with_hints_that_fit() {
    let (remote, alice) = a_remote_that_refuses_proofs_silently();
    let assert = alice.prove_it(&["sync"]).assert().code(2).stdout("");
    let stderr = String::from_utf8_lossy(&assert.get_output().stderr).into_owned();
    assert!(
        stderr.starts_with(
            "error: origin refused refs/notes/prove-it: [remote rejected] (pre-receive hook declined)\n"
        ),
        "{stderr}"
    );
    assert!(
        stderr.contains("hint: a hook on origin refuses refs/notes/prove-it"),
        "{stderr}"
    );
    assert!(
        !stderr.contains("is a remote you can fetch from"),
        "{stderr}"
    );
    assert!(!stderr.contains("failed to push some refs"), "{stderr}");
    assert!(remote.ref_id("refs/notes/prove-it").is_none());

    let value = json_stdout(&alice.prove_it(&["sync", "--json"]).assert().code(2));
    assert_eq!(value["code"], "push_refused");
    assert_eq!(
        value["message"],
        "origin refused refs/notes/prove-it: [remote rejected] (pre-receive hook declined)"
    );
}

// The pre-push hook's warning had the same dropped reason.
#[test]
fn the_pre_push_warning_names_a_silent_refusal_of_the_proofs() {
    let (_remote, alice) = a_remote_that_refuses_proofs_silently();
    alice.prove_it(&["install", "pre-push"]).assert().code(0);
    let out = alice.git_output(&["push", "-q", "origin", "main"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "the push itself goes on: {stderr}");
    assert!(
        stderr.contains(
            "proofs were not sent to origin: origin refused refs/notes/prove-it: [remote rejected] (pre-receive hook declined)"
        ),
        "{stderr}"
    );
    assert!(
        stderr.contains("hint: a hook on origin refuses"),
        "{stderr}"
    );
}

/// `git daemon` serving one bare remote on 127.0.0.1, pushes allowed; killed when dropped.
struct Daemon {
    child: std::process::Child,
    url: String,
}

impl Daemon {
    fn serve(remote: &BareRemote, home: &std::path::Path) -> Daemon {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let base = remote.path.parent().unwrap();
        let mut cmd = std::process::Command::new("git");
        crate::harness::hermetic(&mut cmd, home);
        let child = cmd
            .arg("daemon")
            .args(["--listen=127.0.0.1", "--reuseaddr", "--export-all"])
            .args(["--enable=receive-pack", "--max-connections=0"])
            .arg(format!("--port={port}"))
            .arg(format!("--base-path={}", base.display()))
            .arg(base)
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .expect("git daemon runs");
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(
                std::time::Instant::now() < deadline,
                "git daemon never listened"
            );
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
        Daemon {
            child,
            url: format!("git://127.0.0.1:{port}/remote.git"),
        }
    }
}

impl Drop for Daemon {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

// Six to eight clones syncing at once against one served remote saw one or two
// give up (`cannot lock ref`, or "kept changing under us after 4 attempts"): every loser paused
// the same 100/200/300 ms and they retried in step.
#[test]
fn eight_concurrent_syncs_against_a_served_remote_all_succeed() {
    let (remote, alice) = remote_and_clone();
    let daemon = Daemon::serve(&remote, alice.home());
    let clones: Vec<TestRepo> = (0..8)
        .map(|i| {
            let clone = TestRepo::clone_of(&remote);
            clone.git(&["remote", "set-url", "origin", &daemon.url]);
            clone.write(&format!("work-{i}.txt"), &format!("{i}\n"));
            clone.commit_all("work");
            clone.prove_it(&["run"]).assert().code(0);
            clone
        })
        .collect();
    let barrier = std::sync::Barrier::new(clones.len());
    let outputs: Vec<std::process::Output> = std::thread::scope(|scope| {
        let handles: Vec<_> = clones
            .iter()
            .map(|clone| {
                let barrier = &barrier;
                scope.spawn(move || {
                    let mut sync = clone.command(assert_cmd::cargo::cargo_bin("git-prove-it"));
                    sync.arg("sync");
                    barrier.wait();
                    sync.output().unwrap()
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    for (i, output) in outputs.iter().enumerate() {
        assert!(
            output.status.success(),
            "clone {i} gave up: {}",
            String::from_utf8_lossy(&output.stderr)
        );
    }
    assert_eq!(
        remote.note_count(),
        8,
        "the remote holds every clone's proof"
    );
    for (i, clone) in clones.iter().enumerate() {
        let tree = tree_of(clone, "HEAD");
        assert!(
            remote.note(&tree).is_some(),
            "the remote lost clone {i}'s proof"
        );
    }
}
