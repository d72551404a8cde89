//! The notes store against stock git: fanout layouts in both directions, and concurrent writers.

use std::process::Command;

use assert_cmd::cargo::cargo_bin;

use crate::harness::{TestRepo, hermetic};

/// Add `count` notes with stock `git notes add`, on fresh blobs, so that git switches its notes
/// tree to a fanout layout (it does past 256 notes).
fn stock_notes(repo: &TestRepo, from: usize, count: usize) {
    let script = format!(
        "for i in $(seq {from} {}); do git notes --ref prove-it add -m \"stock note $i\" \
         $(echo \"blob $i\" | git hash-object -w --stdin) || exit 1; done",
        from + count - 1
    );
    let status = repo.command("sh").args(["-c", &script]).status().unwrap();
    assert!(status.success());
}

fn note_count(repo: &TestRepo) -> usize {
    repo.git(&["notes", "--ref", "prove-it", "list"])
        .lines()
        .count()
}

#[test]
fn a_proof_inside_a_fanout_written_by_stock_git_is_found() {
    let repo = TestRepo::with_commit();
    repo.prove_it(&["run"]).assert().code(0);
    let tree = repo.stock_state_tree().unwrap();
    let record = repo.note(&tree).unwrap();
    repo.git(&["notes", "--ref", "prove-it", "remove", &tree]);
    repo.prove_it(&["status"]).assert().code(1);

    stock_notes(&repo, 1, 310);
    let record_file = repo.home().join("record");
    std::fs::write(&record_file, &record).unwrap();
    repo.git(&[
        "notes",
        "--ref",
        "prove-it",
        "add",
        "-F",
        record_file.to_str().unwrap(),
        &tree,
    ]);
    let top = repo.git(&["ls-tree", "refs/notes/prove-it"]);
    assert!(
        top.lines().all(|l| l.contains(" tree ")),
        "git wrote a fanout layout:\n{top}"
    );
    repo.prove_it(&["status"]).assert().code(0);
}

#[test]
fn stock_git_reads_and_extends_the_fanout_we_write() {
    let repo = TestRepo::with_commit();
    stock_notes(&repo, 1, 300);
    repo.write("b.txt", "b\n");
    repo.prove_it(&["run"]).assert().code(0);
    let ours = repo.stock_state_tree().unwrap();
    assert_eq!(note_count(&repo), 301);
    assert!(
        repo.note(&ours)
            .unwrap()
            .starts_with("prove-it-record: 1\n")
    );
    // Every note git wrote is still there, and still where git looks for it.
    let seventh = repo.hash_object("blob 7\n", false);
    assert_eq!(repo.note(&seventh).unwrap(), "stock note 7\n");

    stock_notes(&repo, 301, 100);
    assert_eq!(note_count(&repo), 401);
    repo.prove_it(&["status"]).assert().code(0);
    repo.git(&["fsck", "--no-progress", "--strict"]);
    // Our updates are in the notes ref's reflog, so an overwrite by stock git can be recovered.
    let reflog = repo.git(&["reflog", "show", "refs/notes/prove-it"]);
    assert!(
        reflog.contains("notes: prove-it: proof for tree"),
        "{reflog}"
    );
}

/// Stock `git notes add` does no compare-and-swap, so parallel writers lose notes; ours must
/// keep every one: 8 processes in 8 linked worktrees, 50 proofs each.
#[test]
fn eight_parallel_writers_lose_no_proof() {
    let repo = TestRepo::with_commit();
    let bin = cargo_bin("git-prove-it");
    let mut children = Vec::new();
    for w in 0..8 {
        let dir = repo.home().join(format!("wt{w}"));
        repo.git(&["worktree", "add", "-q", "--detach", dir.to_str().unwrap()]);
        let script = format!(
            "for j in $(seq 1 50); do echo \"writer {w} proof $j\" > f.txt; '{}' run > /dev/null || exit 1; done",
            bin.display()
        );
        let mut cmd = Command::new("sh");
        hermetic(&mut cmd, repo.home());
        cmd.current_dir(&dir).args(["-c", &script]);
        children.push(cmd.spawn().unwrap());
    }
    for mut child in children {
        assert!(child.wait().unwrap().success(), "a writer failed");
    }
    assert_eq!(note_count(&repo), 400);
    repo.git(&["fsck", "--no-progress"]);
}
