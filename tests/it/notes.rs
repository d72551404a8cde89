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

/// A long history reads the whole notes tree once into a map instead of walking its fanout per
/// commit: the proofs git keeps inside its fanout must be found that way too, and no others.
#[test]
fn a_long_history_finds_its_proofs_inside_stock_gits_fanout() {
    let repo = TestRepo::with_commit();
    repo.prove_it(&["run"]).assert().code(0);
    let tree = repo.stock_state_tree().unwrap();
    let record = repo.note(&tree).unwrap();
    repo.git(&["notes", "--ref", "prove-it", "remove", &tree]);
    stock_notes(&repo, 1, 300);
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
    // 400 more commits, more than are looked up one by one: every other one adds b.txt, the
    // next one takes it away again, back to the proven tree.
    let mut stream = String::new();
    for n in 1..=400 {
        let change = if n % 2 == 1 {
            "M 100644 inline b.txt\ndata 2\nb\n"
        } else {
            "D b.txt\n"
        };
        let from = if n == 1 {
            "from refs/heads/main^0\n"
        } else {
            ""
        };
        stream.push_str(&format!(
            "commit refs/heads/main\ncommitter A U Thor <author@example.com> {} +0000\ndata {}\nc{n}\n{from}{change}\n",
            1_790_000_000 + n,
            format!("c{n}").len()
        ));
    }
    let mut import = repo.command("git");
    import.args(["fast-import", "--quiet"]);
    let out = assert_cmd::Command::from_std(import)
        .write_stdin(stream)
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    repo.git(&["reset", "-q", "--hard", "main"]);

    let check = crate::harness::json_stdout(
        &repo
            .prove_it(&["check", "--all", "--json"])
            .assert()
            .code(1),
    );
    let commits = check["commits"].as_array().unwrap();
    assert_eq!(commits.len(), 401);
    for commit in commits {
        let subject = commit["subject"].as_str().unwrap();
        let odd = subject
            .strip_prefix('c')
            .and_then(|n| n.parse::<u32>().ok())
            .is_some_and(|n| n % 2 == 1);
        assert_eq!(commit["proven"], !odd, "{commit}");
    }
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
