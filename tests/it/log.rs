//! `git prove-it log`: the reviewer's view, one line per commit with its proof.

use predicates::prelude::*;

use crate::check::{bounded_record, hand_write_note, short, tree_of};
use crate::harness::{EMAIL, NAME, TestRepo, json_stdout};

/// main: initial (proven), hand-written note, malformed record, no verify.sh, unproven.
pub fn history() -> TestRepo {
    let repo = TestRepo::with_commit();
    repo.prove_it(&["run"]).assert().code(0);
    repo.write("b.txt", "b\n");
    repo.commit_all("hand-written");
    hand_write_note(&repo, &tree_of(&repo, "HEAD"), "LGTM, tests pass");
    repo.write("c.txt", "c\n");
    repo.commit_all("malformed");
    let tree = tree_of(&repo, "HEAD");
    hand_write_note(
        &repo,
        &tree,
        &format!(
            "prove-it-record: 1\noutcome: PROVEN\ntree: {tree}\nexit-code: 0\ntime: yesterday"
        ),
    );
    repo.remove("verify.sh");
    repo.commit_all("unarmed");
    repo.verify_passes();
    repo.write("d.txt", "d\n");
    repo.commit_all("unproven");
    repo
}

#[test]
fn each_commit_shows_where_it_stands_and_who_proved_it_plain_when_piped() {
    let repo = history();
    let out = repo.prove_it(&["log"]).assert().code(0);
    let out = String::from_utf8(out.get_output().stdout.clone()).unwrap();
    assert!(!out.contains('\x1b'), "piped output is plain: {out:?}");
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 5, "{out}");
    let starts = |i: usize, rev: &str, status: &str, subject: &str| {
        let want = format!("{} {status:<13} {subject}", short(&repo, rev));
        assert!(lines[i].starts_with(&want), "{:?} vs {want:?}", lines[i]);
    };
    starts(0, "HEAD", "unproven", "unproven");
    starts(1, "HEAD~1", "not-armed", "unarmed");
    starts(2, "HEAD~2", "invalid", "malformed");
    starts(3, "HEAD~3", "invalid", "hand-written");
    starts(4, "HEAD~4", "proven", "initial");
    assert!(lines[1].ends_with("(no verify.sh in its tree)"));
    assert!(
        lines[2]
            .contains("not a valid record: malformed record: time \"yesterday\" is not RFC 3339")
    );
    assert!(lines[3].contains("first line is not `prove-it-record: 1`"));
    assert!(lines[4].contains(&format!("({NAME} <{EMAIL}>, ")));
    assert!(lines[4].ends_with(", host cli, unsigned)"), "{}", lines[4]);
}

#[test]
fn max_count_and_ranges_limit_the_list() {
    let repo = history();
    let out = repo.prove_it(&["log", "-n", "2"]).assert().code(0);
    assert_eq!(
        String::from_utf8_lossy(&out.get_output().stdout)
            .lines()
            .count(),
        2
    );
    let out = repo.prove_it(&["log", "HEAD~2..HEAD~1"]).assert().code(0);
    let out = String::from_utf8_lossy(&out.get_output().stdout).into_owned();
    // One commit, then (issue 19, hole 8) the line saying its verify.sh is not the base's: the
    // unarmed commit has none.
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 2, "{out}");
    assert!(lines[0].contains("unarmed"));
    assert!(lines[1].starts_with("verify.sh changed since "), "{out}");
}

#[test]
fn colour_only_when_asked_or_on_a_terminal_without_no_color() {
    let repo = TestRepo::with_commit();
    repo.prove_it(&["run"]).assert().code(0);
    repo.prove_it(&["log", "--color=always"])
        .assert()
        .code(0)
        .stdout(predicate::str::contains("\x1b[32mproven"));
    repo.prove_it(&["log", "--color=never"])
        .assert()
        .stdout(predicate::str::contains('\x1b').not());
    repo.prove_it(&["log"])
        .env("NO_COLOR", "1")
        .assert()
        .stdout(predicate::str::contains('\x1b').not());
    repo.prove_it(&["log", "--color=sometimes"])
        .assert()
        .code(2);
}

#[test]
fn p_shows_the_verify_sh_diff_a_proof_through_an_edited_verify_sh_carries() {
    let repo = TestRepo::with_commit();
    let bounded = bounded_record(&repo);
    hand_write_note(&repo, &tree_of(&repo, "HEAD"), &bounded);
    let out = repo.prove_it(&["log", "-p"]).assert().code(0);
    let out = String::from_utf8_lossy(&out.get_output().stdout).into_owned();
    assert!(out.contains("proven-edited"), "{out}");
    assert!(out.contains("through an edited verify.sh"), "{out}");
    assert!(out.contains("\n    -exit 1\n    +exit 0\n"), "{out}");
    repo.prove_it(&["log"])
        .assert()
        .stdout(predicate::str::contains("+exit 0").not());
}

#[test]
fn json_lists_every_commit_with_its_status_and_problems() {
    let repo = history();
    let json = json_stdout(&repo.prove_it(&["log", "--json"]).assert().code(0));
    assert_eq!(json["version"], 1);
    let commits = json["commits"].as_array().unwrap();
    assert_eq!(commits.len(), 5);
    assert_eq!(commits[4]["status"], "proven");
    assert_eq!(
        commits[4]["proof"]["signed_off_by"],
        format!("{NAME} <{EMAIL}>")
    );
    assert_eq!(commits[3]["status"], "invalid");
    assert!(
        commits[3]["invalid"][0]
            .as_str()
            .unwrap()
            .contains("malformed record")
    );
    assert_eq!(commits[0]["proof"], serde_json::Value::Null);
}
