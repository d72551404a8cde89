//! `git prove-it status`: armed, state tree, proven, by whom; exit codes 0, 1, 3.

use predicates::prelude::*;

use crate::harness::{EMAIL, NAME, TestRepo, json_stdout};

#[test]
fn reports_unproven_then_proven_with_who_and_when() {
    let repo = TestRepo::with_commit();
    let tree = repo.stock_state_tree().unwrap();
    repo.prove_it(&["status"])
        .assert()
        .code(1)
        .stdout(predicate::str::contains("verify.sh:  armed"))
        .stdout(predicate::str::contains(format!("state tree: {tree}")))
        .stdout(predicate::str::contains("proof:      none"));
    repo.prove_it(&["run"]).assert().code(0);
    repo.prove_it(&["status"])
        .assert()
        .code(0)
        .stdout(predicate::str::contains(format!(
            "proof:      PROVEN by {NAME} <{EMAIL}> at 20"
        )));

    let out = repo.prove_it(&["status", "--json"]).assert().code(0);
    let value = json_stdout(&out);
    assert_eq!(value["version"], 1);
    assert_eq!(value["outcome"], "PROVEN");
    assert_eq!(value["armed"], true);
    assert_eq!(value["tree"], tree.as_str());
    assert_eq!(value["proven"], true);
    assert_eq!(value["proof"]["signed_off_by"], format!("{NAME} <{EMAIL}>"));
    assert_eq!(value["proof"]["host"], "cli");
}

#[test]
fn any_change_to_the_working_state_needs_a_new_proof() {
    let repo = TestRepo::with_commit();
    repo.prove_it(&["run"]).assert().code(0);
    repo.write("a.txt", "changed\n");
    repo.prove_it(&["status"]).assert().code(1);
    repo.write("a.txt", "a\n");
    repo.prove_it(&["status"]).assert().code(0);
    repo.chmod("a.txt", 0o755);
    repo.prove_it(&["status"]).assert().code(1);
}

#[test]
fn a_proof_from_a_different_verify_sh_does_not_count() {
    let repo = TestRepo::with_commit();
    let tree = repo.stock_state_tree().unwrap();
    repo.prove_it(&["run"]).assert().code(0);
    // Copy the record onto the same tree, but claiming another verify.sh blob ran.
    let note = repo.note(&tree).unwrap();
    let blob = repo.git(&["rev-parse", "HEAD:verify.sh"]);
    let edited = note.replace(blob.trim(), "e69de29bb2d1d6434b8b29ae775ad8c2e48c5391");
    repo.git(&[
        "notes", "--ref", "prove-it", "add", "-f", "-m", &edited, &tree,
    ]);
    repo.prove_it(&["status"])
        .assert()
        .code(1)
        .stdout(predicate::str::contains(
            "ignored:    record ran verify.sh e69de29",
        ));
}

#[test]
fn not_armed_is_exit_3_but_still_shows_the_state() {
    let repo = TestRepo::new();
    repo.write("a.txt", "a\n");
    let out = repo.prove_it(&["status", "--json"]).assert().code(3);
    let value = json_stdout(&out);
    assert_eq!(value["armed"], false);
    assert_eq!(value["outcome"], "INSUFFICIENT_EVIDENCE");
    assert_eq!(
        value["not_armed_reason"],
        "does not exist at the worktree root"
    );
    assert_eq!(value["tree"], repo.stock_state_tree().unwrap().as_str());
}

#[test]
fn help_works_both_ways() {
    let repo = TestRepo::new();
    for flag in ["--help", "-h"] {
        repo.prove_it(&[flag])
            .assert()
            .code(0)
            .stdout(predicate::str::contains("Usage: git prove-it <COMMAND>"))
            .stdout(predicate::str::contains("run"))
            .stdout(predicate::str::contains("status"));
    }
    repo.prove_it(&["run", "--help"])
        .assert()
        .code(0)
        .stdout(predicate::str::contains("--timeout <SECONDS>"));
    repo.prove_it(&["frobnicate"]).assert().code(2);
}

#[test]
fn a_failed_run_leaves_the_state_unproven() {
    let repo = TestRepo::with_commit();
    repo.verify_fails(4);
    repo.prove_it(&["run"])
        .assert()
        .code(1)
        .stdout(predicate::str::contains("verify.sh exit code 4"))
        .stdout(predicate::str::contains("  test x ... FAILED"));
    repo.prove_it(&["status"])
        .assert()
        .code(1)
        .stdout(predicate::str::contains("proof:      none"));
}

#[test]
fn a_corrupt_notes_ref_is_a_clear_error_not_a_pass() {
    let repo = TestRepo::with_commit();
    let blob = repo.hash_object("junk\n", true);
    repo.git(&["update-ref", "refs/notes/prove-it", &blob]);
    for command in ["status", "run"] {
        repo.prove_it(&[command])
            .assert()
            .code(2)
            .stderr(predicate::str::contains(
                "error: could not read the notes commit",
            ));
    }
}

/// git turns `git prove-it --help` into `git help prove-it`, which opens the installed man page.
#[test]
fn git_help_opens_the_generated_man_page() {
    let repo = TestRepo::new();
    if repo.command("man").arg("--version").output().is_err() {
        eprintln!("skipped: no `man` on this machine");
        return;
    }
    let manpath = repo.home().join("man");
    std::fs::create_dir_all(manpath.join("man1")).unwrap();
    let pages = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("man");
    for page in std::fs::read_dir(pages).unwrap() {
        let page = page.unwrap().path();
        std::fs::copy(&page, manpath.join("man1").join(page.file_name().unwrap())).unwrap();
    }
    for (program, args) in [
        ("git", &["prove-it", "--help"]),
        ("man", &["git-prove-it-run", ""]),
    ] {
        let args: Vec<&str> = args.iter().copied().filter(|a| !a.is_empty()).collect();
        let out = repo
            .command(program)
            .args(&args)
            .env("MANPATH", &manpath)
            .env("MANPAGER", "cat")
            .env("PAGER", "cat")
            .output()
            .unwrap();
        assert!(out.status.success(), "{args:?}: {out:?}");
        // man justifies lines with extra spaces; compare words.
        let text = String::from_utf8_lossy(&out.stdout)
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ");
        assert!(text.contains("git prove-it"), "{args:?}: {text}");
        assert!(!text.contains("git prove it"), "{args:?}: {text}");
    }
}

/// A check's name longer than twelve characters pushed its input tree and standing out of the
/// column the other checks' lines keep.
#[test]
fn the_checks_columns_line_up_whatever_the_names() {
    let repo = TestRepo::new();
    repo.write(
        "prove-it.toml",
        "[checks.an-integration-suite-by-name]\nrun = \"api/verify.sh\"\ninputs = [\"api\"]\n\n\
         [checks.docs]\nrun = \"docs/verify.sh\"\ninputs = [\"docs\"]\n",
    );
    for dir in ["api", "docs"] {
        repo.write(&format!("{dir}/verify.sh"), "#!/bin/sh\nexit 0\n");
        repo.chmod(&format!("{dir}/verify.sh"), 0o755);
    }
    repo.commit_all("two checks");
    let out = repo.prove_it(&["status"]).assert();
    let stdout = String::from_utf8_lossy(&out.get_output().stdout).into_owned();
    let rows: Vec<&str> = stdout
        .lines()
        .filter(|line| line.starts_with("  "))
        .collect();
    assert_eq!(rows.len(), 2, "{stdout}");
    // The input tree (twelve hex digits) starts at the same column on each line.
    let tree_at = |row: &str| {
        let name_end = row[2..].find(' ').unwrap() + 2;
        name_end + row[name_end..].len() - row[name_end..].trim_start().len()
    };
    assert_eq!(tree_at(rows[0]), tree_at(rows[1]), "{stdout}");
    assert!(
        rows[1].starts_with("  docs                         "),
        "{stdout}"
    );
}
