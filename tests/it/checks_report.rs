//! `check`, `log`, `status` and the pre-push hook over commits with a checks file:
//! a commit is proven only when each of its checks is proven for its input tree. Proofs are
//! written by hand with stock git, on input trees stock git computes, which pins interop.

use std::io::Write as _;
use std::process::Stdio;

use predicates::prelude::*;

use crate::check::{hand_write_note, short, tree_of};
use crate::harness::{BareRemote, TestRepo, json_stdout};

/// Two checks, api and docs, each reading its own folder.
pub const CHECKS: &str = r#"[checks.api]
run = "api/verify.sh"
inputs = ["api"]

[checks.docs]
run = "docs/verify.sh"
inputs = ["docs"]
"#;

/// A repository whose one commit declares two checks, api and docs, each a script that passes,
/// and no root verify.sh.
fn two_checks() -> TestRepo {
    let repo = TestRepo::new();
    repo.write("prove-it.toml", CHECKS);
    for dir in ["api", "docs"] {
        repo.write(&format!("{dir}/verify.sh"), "#!/bin/sh\nexit 0\n");
        repo.chmod(&format!("{dir}/verify.sh"), 0o755);
    }
    repo.write("api/lib.txt", "api\n");
    repo.write("docs/index.md", "# docs\n");
    repo.write("README", "outside every check\n");
    repo.commit_all("two checks");
    repo
}

/// `rev`'s tree pruned to `paths`, as stock git writes it: `read-tree --empty` and
/// `update-index --index-info` from `ls-tree` on a temporary index, then `write-tree`.
fn stock_input_tree(repo: &TestRepo, rev: &str, paths: &[&str]) -> String {
    let index = repo.home().join("input-tree-index");
    let _ = std::fs::remove_file(&index);
    let git = |args: &[&str], stdin: Option<&str>| {
        let mut cmd = repo.command("git");
        cmd.env("GIT_INDEX_FILE", &index).args(args);
        cmd.stdin(Stdio::piped()).stdout(Stdio::piped());
        let mut child = cmd.spawn().unwrap();
        let mut input = child.stdin.take().unwrap();
        input.write_all(stdin.unwrap_or("").as_bytes()).unwrap();
        drop(input);
        let out = child.wait_with_output().unwrap();
        assert!(out.status.success(), "git {args:?}: {out:?}");
        String::from_utf8(out.stdout).unwrap()
    };
    git(&["read-tree", "--empty"], None);
    let mut ls = vec!["ls-tree", "-r", rev, "--"];
    ls.extend(paths);
    let entries = repo.git(&ls);
    git(&["update-index", "--index-info"], Some(&entries));
    git(&["write-tree"], None).trim().to_string()
}

/// The input tree of check `name` (api or docs) at `rev`: its directory and the checks file.
fn input_tree(repo: &TestRepo, rev: &str, name: &str) -> String {
    stock_input_tree(repo, rev, &[name, "prove-it.toml"])
}

/// A record of check `name` for its input tree at `rev`, through that commit's script.
fn record(repo: &TestRepo, rev: &str, name: &str, outcome: &str) -> String {
    let script = repo
        .git(&["rev-parse", &format!("{rev}:{name}/verify.sh")])
        .trim()
        .to_string();
    format!(
        "prove-it-record: 1\noutcome: {outcome}\ntree: {}\ncheck: {name}\nhead: none\nverify: {script} 100755\nverify-anchor: none\nexit-code: 0\nduration-ms: 5\ntime: 2026-11-29T12:00:00Z\nhost: cli\nsession: none\ntool: git-prove-it test\nSigned-off-by: A U Thor <author@example.com>\n",
        input_tree(repo, rev, name)
    )
}

/// Prove check `name` at `rev` by hand: its record, on its input tree, with stock git.
fn prove_check(repo: &TestRepo, rev: &str, name: &str) {
    let tree = input_tree(repo, rev, name);
    hand_write_note(repo, &tree, &record(repo, rev, name, "PROVEN"));
}

#[test]
fn check_passes_only_when_every_check_is_proven() {
    let repo = two_checks();
    let head = short(&repo, "HEAD");
    repo.prove_it(&["check"])
        .assert()
        .code(1)
        .stdout(predicate::str::contains(format!(
            "  {head} two checks (proven 0/2 checks, missing: api, docs)"
        )));
    prove_check(&repo, "HEAD", "api");
    repo.prove_it(&["check"])
        .assert()
        .code(1)
        .stdout(predicate::str::contains("not proven: 1 of 1 commits"))
        .stdout(predicate::str::contains(format!(
            "  {head} two checks (proven 1/2 checks, missing: docs)"
        )));
    repo.prove_it(&["log"])
        .assert()
        .code(0)
        .stdout(predicate::str::contains(
            "unproven      two checks  (proven 1/2 checks, missing: docs)",
        ));
    prove_check(&repo, "HEAD", "docs");
    repo.prove_it(&["check"])
        .assert()
        .code(0)
        .stdout(format!("proven: {head} two checks\n"));
    repo.prove_it(&["log"])
        .assert()
        .code(0)
        .stdout(predicate::str::contains(
            "proven        two checks  (proven 2/2 checks; A U Thor <author@example.com>,",
        ));
}

#[test]
fn json_lists_each_check_with_its_input_tree_and_standing() {
    let repo = two_checks();
    prove_check(&repo, "HEAD", "api");
    for command in [&["check", "--json"][..], &["log", "--json"]] {
        let out = repo.prove_it(command).assert();
        let json = json_stdout(&out);
        let commit = &json["commits"][0];
        assert_eq!(commit["status"], "unproven", "{command:?}");
        assert_eq!(commit["proven"], false);
        let checks = commit["checks"].as_array().expect("checks listed");
        let names: Vec<&str> = checks.iter().map(|c| c["name"].as_str().unwrap()).collect();
        assert_eq!(names, ["api", "docs"]);
        assert_eq!(checks[0]["input_tree"], input_tree(&repo, "HEAD", "api"));
        assert_eq!(checks[1]["input_tree"], input_tree(&repo, "HEAD", "docs"));
        assert_eq!(checks[0]["standing"], "proven");
        assert_eq!(checks[0]["proof"]["host"], "cli");
        assert_eq!(checks[1]["standing"], "unproven");
        assert_eq!(checks[1]["proof"], serde_json::Value::Null);
        assert_eq!(checks[0]["run"], "api/verify.sh");
    }
}

#[test]
fn a_commit_without_a_checks_file_is_reported_as_before() {
    let repo = TestRepo::with_commit();
    repo.prove_it(&["run"]).assert().code(0);
    let json = json_stdout(&repo.prove_it(&["check", "--json"]).assert().code(0));
    let commit = json["commits"][0].as_object().unwrap();
    assert!(!commit.contains_key("checks"), "{commit:?}");
    assert!(!commit.contains_key("checks_error"), "{commit:?}");
    // The same history gains a checks file: that commit stands by its checks, the first not.
    repo.write("prove-it.toml", CHECKS);
    repo.write("api/verify.sh", "#!/bin/sh\nexit 0\n");
    repo.chmod("api/verify.sh", 0o755);
    repo.write("docs/verify.sh", "#!/bin/sh\nexit 0\n");
    repo.chmod("docs/verify.sh", 0o755);
    repo.commit_all("add checks");
    let json = json_stdout(&repo.prove_it(&["log", "--json"]).assert().code(0));
    let names = |c: &serde_json::Value| -> Vec<String> {
        c["checks"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c["name"].as_str().unwrap().to_string())
            .collect()
    };
    // The root verify.sh is a check too, keyed by the whole tree, first.
    assert_eq!(names(&json["commits"][0]), ["verify.sh", "api", "docs"]);
    assert_eq!(
        json["commits"][0]["checks"][0]["input_tree"],
        tree_of(&repo, "HEAD")
    );
    assert!(json["commits"][1].get("checks").is_none());
    assert_eq!(json["commits"][1]["status"], "proven");
}

#[test]
fn a_checks_file_in_error_fails_check_naming_the_line() {
    let repo = two_checks();
    repo.write(
        "prove-it.toml",
        "[checks.api]\nrun = \"api/verify.sh\"\ninputs = [\"../up\"]\n",
    );
    repo.commit_all("broken checks file");
    repo.prove_it(&["check"])
        .assert()
        .code(1)
        .stdout(predicate::str::contains(
            "(prove-it.toml is not a valid checks file: line 3: check api: input \"../up\"",
        ))
        .stdout(predicate::str::contains(
            "hint: a commit's prove-it.toml is in error: fix it at the line named",
        ));
    let json = json_stdout(&repo.prove_it(&["check", "--json"]).assert().code(1));
    assert_eq!(json["commits"][0]["status"], "checks-error");
    assert!(
        json["commits"][0]["checks_error"]
            .as_str()
            .unwrap()
            .contains("line 3"),
        "{json}"
    );
    repo.prove_it(&["log"])
        .assert()
        .code(0)
        .stdout(predicate::str::contains(
            "checks-error  broken checks file  (prove-it.toml is not a valid checks file: line 3",
        ));
    // JUnit's failure is typed by it.
    repo.prove_it(&["check", "--format", "junit"])
        .assert()
        .code(1)
        .stdout(predicate::str::contains("type=\"checks-error\""));
}

#[test]
fn a_change_in_docs_keeps_apis_input_tree_and_proof() {
    let repo = two_checks();
    prove_check(&repo, "HEAD", "api");
    prove_check(&repo, "HEAD", "docs");
    let api_before = input_tree(&repo, "HEAD", "api");
    repo.write("docs/index.md", "# docs, rewritten\n");
    repo.commit_all("edit docs");
    assert_eq!(input_tree(&repo, "HEAD", "api"), api_before);
    let head = short(&repo, "HEAD");
    repo.prove_it(&["check"])
        .assert()
        .code(1)
        .stdout(predicate::str::contains(format!(
            "  {head} edit docs (proven 1/2 checks, missing: docs)"
        )));
    let json = json_stdout(&repo.prove_it(&["log", "--json", "-n", "1"]).assert());
    let checks = &json["commits"][0]["checks"];
    assert_eq!(checks[0]["input_tree"], api_before.as_str());
    assert_eq!(checks[0]["standing"], "proven");
    assert_eq!(checks[1]["standing"], "unproven");
    // A change outside every check's inputs changes no input tree: still proven as it was.
    prove_check(&repo, "HEAD", "docs");
    repo.write("README", "still outside\n");
    repo.commit_all("edit readme");
    repo.prove_it(&["check"]).assert().code(0);
}

#[test]
fn a_check_whose_script_is_gone_is_not_proven_and_says_so() {
    let repo = two_checks();
    prove_check(&repo, "HEAD", "api");
    prove_check(&repo, "HEAD", "docs");
    repo.chmod("docs/verify.sh", 0o644);
    repo.commit_all("docs script not executable");
    prove_check(&repo, "HEAD", "api");
    repo.prove_it(&["check"])
        .assert()
        .code(1)
        .stdout(predicate::str::contains(
            "(proven 1/2 checks, missing script: docs)",
        ));
    repo.prove_it(&["log", "-p", "-n", "1"])
        .assert()
        .code(0)
        .stdout(predicate::str::contains(
            "    check docs         missing-script",
        ))
        .stdout(predicate::str::contains(
            "(docs/verify.sh is not executable)",
        ))
        .stdout(predicate::str::contains(
            "    check api          proven        ",
        ));
}

#[test]
fn a_record_of_one_check_never_proves_another_with_the_same_input_tree() {
    let repo = two_checks();
    // docs' input tree carrying a record that says it is api's: it proves neither.
    let docs_tree = input_tree(&repo, "HEAD", "docs");
    let forged = record(&repo, "HEAD", "docs", "PROVEN").replace("check: docs", "check: api");
    hand_write_note(&repo, &docs_tree, &forged);
    prove_check(&repo, "HEAD", "api");
    repo.prove_it(&["check"])
        .assert()
        .code(1)
        .stdout(predicate::str::contains("missing: docs"));
    // A hand-written note on docs' input tree is docs' invalid record, named as docs'.
    hand_write_note(&repo, &docs_tree, "docs pass, trust me");
    repo.prove_it(&["check"])
        .assert()
        .code(1)
        .stdout(predicate::str::contains(
            "(proven 1/2 checks, invalid: docs)",
        ));
    let json = json_stdout(&repo.prove_it(&["check", "--json"]).assert().code(1));
    assert_eq!(json["commits"][0]["status"], "invalid");
    assert_eq!(
        json["commits"][0]["invalid"][0],
        "check docs: malformed record: first line is not `prove-it-record: 1`"
    );
    assert_eq!(json["commits"][0]["checks"][1]["standing"], "invalid");
}

#[test]
fn strict_and_require_signed_hold_every_check() {
    let repo = two_checks();
    prove_check(&repo, "HEAD", "api");
    let docs = input_tree(&repo, "HEAD", "docs");
    let edited = record(&repo, "HEAD", "docs", "BOUNDED_CLAIM_SURVIVES").replace(
        "Signed-off-by:",
        "verify-diff:\n -exit 1\n +exit 0\nSigned-off-by:",
    );
    hand_write_note(&repo, &docs, &edited);
    let head = short(&repo, "HEAD");
    repo.prove_it(&["check"])
        .assert()
        .code(0)
        .stdout(predicate::str::contains(format!(
            "  {head} two checks (proven only through an edited script (check docs): BOUNDED_CLAIM_SURVIVES)"
        )));
    repo.prove_it(&["check", "--strict"])
        .assert()
        .code(1)
        .stdout(predicate::str::contains(
            "(proven 1/2 checks, proven only through an edited script (--strict): docs)",
        ));
    repo.prove_it(&["log", "-p"])
        .assert()
        .code(0)
        .stdout(predicate::str::contains("      -exit 1\n      +exit 0\n"));
    let signers = repo.home().join("allowed_signers");
    std::fs::write(&signers, "").unwrap();
    repo.prove_it(&[
        "check",
        "--require-signed",
        "--allowed-signers",
        signers.to_str().unwrap(),
    ])
    .assert()
    .code(1)
    .stdout(predicate::str::contains(
        "(proven 0/2 checks, unsigned (--require-signed): api, docs)",
    ));
}

#[test]
fn strict_counts_a_change_of_the_checks_file_or_a_checks_script_as_a_verify_sh_change() {
    let repo = two_checks();
    repo.write("docs/verify.sh", "#!/bin/sh\ntrue\n");
    repo.commit_all("weaker docs check");
    prove_check(&repo, "HEAD", "api");
    prove_check(&repo, "HEAD", "docs");
    let (base, head) = (short(&repo, "HEAD~1"), short(&repo, "HEAD"));
    repo.prove_it(&["check", "HEAD~1..HEAD"])
        .assert()
        .code(0)
        .stdout(predicate::str::contains(format!(
            "check docs's script changed since {base} two checks: in {head}"
        )));
    repo.prove_it(&["check", "--strict", "HEAD~1..HEAD"])
        .assert()
        .code(1)
        .stdout(predicate::str::contains(
            "not proven: check docs's script changed since the base of the range (--strict)",
        ))
        .stdout(predicate::str::contains(format!(
            "hint: review the change: git diff {base} {head} -- docs/verify.sh"
        )));
    repo.write(
        "prove-it.toml",
        &CHECKS.replace("[\"docs\"]", "[\"docs\", \"README\"]"),
    );
    repo.commit_all("docs reads the readme");
    let json = json_stdout(
        &repo
            .prove_it(&["check", "--json", "--all", "HEAD~1..HEAD"])
            .assert()
            .code(1),
    );
    assert_eq!(json["verify_changed"][0]["what"], "prove-it.toml");
    assert_eq!(json["verify_changed"][0]["path"], "prove-it.toml");
    // Both checks read the checks file: neither proof counts for the new one.
    assert_eq!(json["commits"][0]["checks"][0]["standing"], "unproven");
}

/// `check` over a range said "prove-it.toml changed since <base>: in" every commit after the one
/// that changed it; it names the commit that changed it.
#[test]
fn a_checks_file_change_is_named_at_the_commit_that_made_it() {
    let repo = two_checks();
    repo.write("api/lib.txt", "one\n");
    repo.commit_all("one");
    repo.write(
        "prove-it.toml",
        &CHECKS.replace("[\"docs\"]", "[\"docs\", \"README\"]"),
    );
    repo.commit_all("docs reads the readme");
    for n in ["three", "four", "five"] {
        repo.write("api/lib.txt", &format!("{n}\n"));
        repo.commit_all(n);
    }
    let (base, changed) = (short(&repo, "HEAD~5"), short(&repo, "HEAD~3"));
    let out = repo
        .prove_it(&["check", "--all", "HEAD~5..HEAD"])
        .assert()
        .code(1);
    let stdout = String::from_utf8_lossy(&out.get_output().stdout).into_owned();
    assert!(
        stdout.contains(&format!(
            "prove-it.toml changed since {base} two checks: in {changed}\n"
        )),
        "{stdout}"
    );
    let json = json_stdout(
        &repo
            .prove_it(&["check", "--json", "--all", "HEAD~5..HEAD"])
            .assert()
            .code(1),
    );
    let commits = json["verify_changed"][0]["commits"].as_array().unwrap();
    assert_eq!(commits.len(), 1, "{json}");
    assert_eq!(
        commits[0].as_str().unwrap(),
        repo.git(&["rev-parse", "HEAD~3"]).trim()
    );
}

/// README named only `.git/prove-it/last-run.log`, which a run with checks never writes: each
/// check has its own log, and the README names what a run writes.
#[test]
fn the_logs_the_readme_names_are_those_a_run_with_checks_writes() {
    let repo = two_checks();
    repo.write("docs/verify.sh", "#!/bin/sh\necho broken docs\nexit 1\n");
    repo.commit_all("docs fails");
    repo.prove_it(&["run"]).assert().code(1);
    let dir = repo.path(".git/prove-it");
    let log = |name: &str| std::fs::read_to_string(dir.join(name));
    assert!(log("last-run.api.log").is_ok());
    assert_eq!(log("last-run.docs.log").unwrap(), "broken docs\n");
    assert_eq!(log("last-run.docs.failed.log").unwrap(), "broken docs\n");
    assert!(
        log("last-run.log").is_err(),
        "a run with checks writes one log per check"
    );
    let readme =
        std::fs::read_to_string(std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("README.md"))
            .unwrap();
    for named in [
        ".git/prove-it/last-run.log",
        ".git/prove-it/last-run.<check>.log",
        "last-run.<check>.failed.log",
    ] {
        assert!(readme.contains(named), "README does not name {named}");
    }
}

#[test]
fn stats_count_a_commit_proven_only_when_all_its_checks_are() {
    let repo = two_checks();
    prove_check(&repo, "HEAD", "api");
    prove_check(&repo, "HEAD", "docs");
    repo.write("docs/index.md", "# more\n");
    repo.commit_all("edit docs");
    prove_check(&repo, "HEAD", "api");
    repo.prove_it(&["log", "--stats"])
        .assert()
        .code(0)
        .stdout(predicate::str::starts_with("proven 1 of 2 commits (50%)"));
}

#[test]
fn github_annotations_and_junit_name_the_unproven_checks() {
    let repo = two_checks();
    prove_check(&repo, "HEAD", "api");
    let head = short(&repo, "HEAD");
    repo.prove_it(&["check", "--format", "github"])
        .assert()
        .code(1)
        .stdout(predicate::str::contains(format!(
            "::error title=commit {head} is not proven::{head} two checks: proven 1/2 checks, missing: docs"
        )));
    repo.prove_it(&["check", "--format", "junit"])
        .assert()
        .code(1)
        .stdout(predicate::str::contains(
            "<failure message=\"proven 1/2 checks, missing: docs\" type=\"unproven\">",
        ))
        .stdout(predicate::str::contains(format!(
            "check docs (input tree {}): unproven",
            input_tree(&repo, "HEAD", "docs")
        )));
}

/// A repository with two checks, origin an empty bare remote, and our pre-push hook.
fn hooked() -> (BareRemote, TestRepo) {
    let remote = BareRemote::new();
    let repo = two_checks();
    repo.git(&["remote", "add", "origin", remote.path.to_str().unwrap()]);
    repo.prove_it(&["install", "pre-push"]).assert().code(0);
    (remote, repo)
}

#[test]
fn the_pre_push_hook_refuses_a_commit_with_a_check_unproven_and_passes_it_proven() {
    let (remote, repo) = hooked();
    prove_check(&repo, "HEAD", "api");
    let out = repo.git_output(&["push", "origin", "main"]);
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains(&format!(
            "  {} two checks (proven 1/2 checks, missing: docs)",
            short(&repo, "HEAD")
        )),
        "{stderr}"
    );
    assert_eq!(remote.refs(), "");
    prove_check(&repo, "HEAD", "docs");
    let out = repo.git_output(&["push", "origin", "main"]);
    assert!(out.status.success(), "{out:?}");
    let docs = input_tree(&repo, "HEAD", "docs");
    assert_eq!(
        remote.note(&docs),
        repo.note(&docs),
        "the proofs went along"
    );
}

#[test]
fn the_pre_push_hook_never_tries_to_prove_a_commit_whose_checks_file_is_in_error() {
    let (remote, repo) = hooked();
    repo.write(
        "prove-it.toml",
        "[checks.api]\nrun = 3\ninputs = [\"api\"]\n",
    );
    repo.commit_all("broken checks file");
    let out = repo
        .command("git")
        .env("PROVE_IT_PRE_PUSH", "prove")
        .args(["push", "origin", "main"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("checking it out"), "{stderr}");
    assert!(
        stderr.contains(
            "(prove-it.toml is not a valid checks file: TOML parse error at line 2, column 7"
        ),
        "{stderr}"
    );
    assert_eq!(remote.refs(), "");
}

#[test]
fn status_lists_each_check_with_its_input_tree_and_whether_it_is_proven() {
    let repo = two_checks();
    prove_check(&repo, "HEAD", "api");
    let (api, docs) = (
        input_tree(&repo, "HEAD", "api"),
        input_tree(&repo, "HEAD", "docs"),
    );
    repo.prove_it(&["status"])
        .assert()
        .code(1)
        .stdout(predicate::str::contains(
            "checks:     1 of 2 proven (prove-it.toml)\n",
        ))
        .stdout(predicate::str::contains(format!(
            "  api          {} PROVEN by A U Thor <author@example.com>",
            &api[..12]
        )))
        .stdout(predicate::str::contains(format!(
            "  docs         {} not proven\n",
            &docs[..12]
        )))
        .stdout(predicate::str::contains("proof:").not());
    let json = json_stdout(&repo.prove_it(&["status", "--json"]).assert().code(1));
    assert_eq!(json["proven"], false);
    assert_eq!(json["checks"][0]["name"], "api");
    assert_eq!(json["checks"][0]["input_tree"], api.as_str());
    assert_eq!(json["checks"][0]["proven"], true);
    assert_eq!(json["checks"][1]["input_tree"], docs.as_str());
    assert_eq!(json["checks"][1]["proven"], false);
    // An edit outside docs keeps api's proof; every check proven is a proven state.
    prove_check(&repo, "HEAD", "docs");
    repo.write("README", "edited, in no check's inputs\n");
    let json = json_stdout(&repo.prove_it(&["status", "--json"]).assert().code(0));
    assert_eq!(json["outcome"], "PROVEN");
    assert_eq!(json["checks"][0]["input_tree"], api.as_str());
    // A checks file in error: not proven, the line named.
    repo.write(
        "prove-it.toml",
        "[checks.api]\nrun = \"api/verify.sh\"\ninputs = []\n",
    );
    repo.prove_it(&["status"])
        .assert()
        .code(1)
        .stdout(predicate::str::contains(
            "checks:     prove-it.toml is not a valid checks file: line 3",
        ));
}

/// The proofs `git prove-it run` records are the ones `check` reads: one note per check, on the
/// input tree stock git computes.
#[test]
fn check_reads_the_proofs_run_records_for_each_check() {
    let repo = two_checks();
    repo.prove_it(&["run"]).assert().code(0);
    assert!(repo.note(&input_tree(&repo, "HEAD", "api")).is_some());
    assert!(repo.note(&input_tree(&repo, "HEAD", "docs")).is_some());
    repo.prove_it(&["check"]).assert().code(0);
    repo.write("docs/index.md", "# changed\n");
    repo.commit_all("edit docs");
    repo.prove_it(&["check"])
        .assert()
        .code(1)
        .stdout(predicate::str::contains(
            "(proven 1/2 checks, missing: docs)",
        ));
    repo.prove_it(&["run"]).assert().code(0);
    repo.prove_it(&["check"]).assert().code(0);
}

#[test]
fn the_pre_push_hook_proves_only_a_commit_with_a_check_unproven() {
    let (remote, repo) = hooked();
    repo.prove_it(&["run"]).assert().code(0);
    let push = |repo: &TestRepo| {
        repo.command("git")
            .env("PROVE_IT_PRE_PUSH", "prove")
            .args(["push", "origin", "main"])
            .output()
            .unwrap()
    };
    // Every check proven: nothing is checked out, nothing runs.
    let out = push(&repo);
    assert!(out.status.success(), "{out:?}");
    assert!(!String::from_utf8_lossy(&out.stderr).contains("checking it out"));
    // docs unproven: the hook proves the commit, and the push goes on.
    repo.write("docs/index.md", "# changed\n");
    repo.commit_all("edit docs");
    let out = push(&repo);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(
        stderr.contains(&format!(
            "commit {} edit docs: checking it out",
            short(&repo, "HEAD")
        )),
        "{stderr}"
    );
    repo.prove_it(&["check"]).assert().code(0);
    let docs = input_tree(&repo, "HEAD", "docs");
    assert_eq!(remote.note(&docs), repo.note(&docs));
    // api's input tree did not change: its one proof still stands, made once.
    let api = repo.note(&input_tree(&repo, "HEAD", "api")).unwrap();
    assert_eq!(api.matches("prove-it-record: 1").count(), 1, "{api}");
}
