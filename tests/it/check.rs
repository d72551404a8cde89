//! `git prove-it check`: CI's yes/no over commits, and the records that never count.

use predicates::prelude::*;

use crate::harness::{TestRepo, json_stdout};

/// Attach `text` as the proof note of `object` with stock git, as a person (or agent) could.
pub fn hand_write_note(repo: &TestRepo, object: &str, text: &str) {
    repo.git(&[
        "notes", "--ref", "prove-it", "add", "-f", "-m", text, object,
    ]);
}

pub fn tree_of(repo: &TestRepo, rev: &str) -> String {
    repo.git(&["rev-parse", &format!("{rev}^{{tree}}")])
        .trim()
        .to_string()
}

pub fn short(repo: &TestRepo, rev: &str) -> String {
    repo.git(&["rev-parse", "--short=7", rev])
        .trim()
        .to_string()
}

/// A valid record for HEAD's tree turned into a proof through an edited verify.sh.
pub fn bounded_record(repo: &TestRepo) -> String {
    repo.prove_it(&["run"]).assert().code(0);
    let tree = tree_of(repo, "HEAD");
    let note = repo.note(&tree).unwrap();
    repo.git(&["notes", "--ref", "prove-it", "remove", &tree]);
    note.replace("outcome: PROVEN", "outcome: BOUNDED_CLAIM_SURVIVES")
        .replace(
            "Signed-off-by:",
            "verify-diff:\n -exit 1\n +exit 0\nSigned-off-by:",
        )
}

#[test]
fn an_unproven_head_fails_listing_its_short_hash_subject_and_the_fixes() {
    let repo = TestRepo::with_commit();
    repo.prove_it(&["check"])
        .assert()
        .code(1)
        .stdout(predicate::str::contains("not proven: 1 of 1 commits"))
        .stdout(predicate::str::contains(format!(
            "  {} initial (no proof for its tree)",
            short(&repo, "HEAD")
        )))
        .stdout(predicate::str::contains("git prove-it run <commit>"))
        .stdout(predicate::str::contains("git prove-it sync"));
}

#[test]
fn a_proven_head_passes_and_json_says_why() {
    let repo = TestRepo::with_commit();
    repo.prove_it(&["run"]).assert().code(0);
    repo.prove_it(&["check"])
        .assert()
        .code(0)
        .stdout(format!("proven: {} initial\n", short(&repo, "HEAD")));
    let json = json_stdout(&repo.prove_it(&["check", "--json"]).assert().code(0));
    assert_eq!(json["version"], 1);
    assert_eq!(json["outcome"], "PROVEN");
    assert_eq!(json["proven"], true);
    let commit = &json["commits"][0];
    assert_eq!(commit["commit"], repo.git(&["rev-parse", "HEAD"]).trim());
    assert_eq!(commit["tree"], tree_of(&repo, "HEAD"));
    assert_eq!(commit["subject"], "initial");
    assert_eq!(commit["status"], "proven");
    assert_eq!(commit["proof"]["host"], "cli");
    assert_eq!(commit["invalid"], serde_json::json!([]));
}

#[test]
fn a_range_checks_its_tip_and_all_checks_every_commit() {
    let repo = TestRepo::with_commit();
    repo.write("b.txt", "b\n");
    repo.commit_all("second");
    repo.write("c.txt", "c\n");
    repo.commit_all("third");
    repo.prove_it(&["run"]).assert().code(0);
    repo.prove_it(&["check", "HEAD~2..HEAD"]).assert().code(0);
    repo.prove_it(&["check", "--all", "HEAD~2..HEAD"])
        .assert()
        .code(1)
        .stdout(predicate::str::contains("not proven: 1 of 2 commits"))
        .stdout(predicate::str::contains(format!(
            "{} second",
            short(&repo, "HEAD~1")
        )))
        .stdout(predicate::str::contains("third").not());
    // Several revisions: each is checked.
    let json = json_stdout(
        &repo
            .prove_it(&["check", "--json", "HEAD", "HEAD~2"])
            .assert()
            .code(1),
    );
    let statuses: Vec<&str> = json["commits"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["status"].as_str().unwrap())
        .collect();
    assert_eq!(statuses, ["proven", "unproven"]);
}

#[test]
fn hand_written_and_malformed_notes_never_count() {
    let repo = TestRepo::with_commit();
    let tree = tree_of(&repo, "HEAD");
    hand_write_note(&repo, &tree, "all tests pass, trust me");
    repo.prove_it(&["check"])
        .assert()
        .code(1)
        .stdout(predicate::str::contains(
            "(not a valid record: malformed record: first line is not `prove-it-record: 1`)",
        ));
    // A record that looks right but lacks its time and sign-off.
    hand_write_note(
        &repo,
        &tree,
        &format!("prove-it-record: 1\noutcome: PROVEN\ntree: {tree}\nexit-code: 0"),
    );
    repo.prove_it(&["check", "--json"])
        .assert()
        .code(1)
        .stdout(predicate::str::contains("\"status\":\"invalid\""))
        .stdout(predicate::str::contains("malformed record"));
}

#[test]
fn a_record_copied_from_another_tree_or_another_verify_sh_never_counts() {
    let repo = TestRepo::with_commit();
    repo.prove_it(&["run"]).assert().code(0);
    let proven_tree = tree_of(&repo, "HEAD");
    let record = repo.note(&proven_tree).unwrap();
    // The same record attached to a different commit's tree: its `tree:` does not match the key.
    repo.write("b.txt", "b\n");
    repo.commit_all("second");
    hand_write_note(&repo, &tree_of(&repo, "HEAD"), &record);
    repo.prove_it(&["check"])
        .assert()
        .code(1)
        .stdout(predicate::str::contains(format!(
            "record is for tree {proven_tree}"
        )));
    // A commit whose verify.sh changed, with a record naming the old verify.sh for its tree.
    repo.verify_script("exit 0");
    repo.commit_all("weaker verify.sh");
    let tree = tree_of(&repo, "HEAD");
    let forged = record.replace(&proven_tree, &tree);
    hand_write_note(&repo, &tree, &forged);
    repo.prove_it(&["check"])
        .assert()
        .code(1)
        .stdout(predicate::str::contains("record ran verify.sh"));
}

#[test]
fn a_proof_through_an_edited_verify_sh_counts_unless_strict() {
    let repo = TestRepo::with_commit();
    let bounded = bounded_record(&repo);
    hand_write_note(&repo, &tree_of(&repo, "HEAD"), &bounded);
    repo.prove_it(&["check"]).assert().code(0);
    repo.prove_it(&["check", "--strict"])
        .assert()
        .code(1)
        .stdout(predicate::str::contains(
            "proven only through an edited verify.sh (--strict)",
        ));
    let json = json_stdout(
        &repo
            .prove_it(&["check", "--json", "--strict"])
            .assert()
            .code(1),
    );
    assert_eq!(json["strict"], true);
    assert_eq!(json["commits"][0]["status"], "proven-edited");
    assert_eq!(
        json["commits"][0]["proof"]["outcome"],
        "BOUNDED_CLAIM_SURVIVES"
    );
}

#[test]
fn a_commit_without_verify_sh_is_not_armed_and_not_proven() {
    let repo = TestRepo::new();
    repo.write("a.txt", "a\n");
    repo.commit_all("no verify.sh here");
    repo.prove_it(&["check"])
        .assert()
        .code(1)
        .stdout(predicate::str::contains(
            "not armed: its tree has no verify.sh",
        ));
}

#[test]
fn usage_and_repository_errors_exit_2() {
    let repo = TestRepo::with_commit();
    repo.prove_it(&["check", "no-such-branch"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("could not resolve the revision"));
    repo.prove_it(&["check", "--no-such-flag"]).assert().code(2);
    let empty = TestRepo::new();
    empty.prove_it(&["check"]).assert().code(2);
}

#[test]
fn a_proof_survives_amend_and_rebase() {
    let repo = TestRepo::with_commit();
    repo.write("b.txt", "b\n");
    repo.commit_all("second");
    repo.prove_it(&["run"]).assert().code(0);
    let before = repo.git(&["rev-parse", "HEAD"]);
    repo.git(&["commit", "-q", "--amend", "-m", "second, reworded"]);
    repo.git(&["rebase", "-q", "--force-rebase", "HEAD~1"]);
    assert_ne!(repo.git(&["rev-parse", "HEAD"]), before);
    repo.prove_it(&["check"])
        .assert()
        .code(0)
        .stdout(predicate::str::contains("second, reworded"));
    // Moved onto a new base that leaves the tree as it was proven: still proven.
    repo.git(&["checkout", "-q", "-b", "side", "HEAD~1"]);
    repo.git(&["commit", "-q", "--allow-empty", "-m", "empty base"]);
    repo.git(&["checkout", "-q", "main"]);
    repo.git(&["rebase", "-q", "side"]);
    assert_eq!(
        repo.git(&["log", "-1", "--format=%s", "HEAD~1"]).trim(),
        "empty base"
    );
    repo.prove_it(&["check"]).assert().code(0);
}

/// Long histories are read on several threads: the verdicts and their order must be those of
/// one thread, whichever half of the split a commit falls in.
#[test]
fn a_long_history_is_checked_in_git_logs_order_whatever_the_threads() {
    let repo = TestRepo::with_commit();
    // 1200 more commits with fast-import: all keep the first tree but two, which add b.txt.
    let mut stream = String::new();
    for n in 1..=1200 {
        let file = match n {
            300 | 1000 => "M 100644 inline b.txt\ndata 2\nb\n".to_string(),
            301 | 1001 => "D b.txt\n".to_string(),
            _ => String::new(),
        };
        let subject = format!("c{n}");
        // The first continues main; fast-import chains the others itself.
        let from = if n == 1 {
            "from refs/heads/main^0\n"
        } else {
            ""
        };
        stream.push_str(&format!(
            "commit refs/heads/main\ncommitter A U Thor <author@example.com> {} +0000\ndata {}\n{subject}\n{from}{file}\n",
            1_790_000_000 + n,
            subject.len()
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
    // One proof covers every commit of the first tree.
    repo.prove_it(&["run"]).assert().code(0);

    let check = json_stdout(
        &repo
            .prove_it(&["check", "--all", "--json"])
            .assert()
            .code(1),
    );
    let commits = check["commits"].as_array().unwrap();
    let order: Vec<&str> = commits
        .iter()
        .map(|c| c["commit"].as_str().unwrap())
        .collect();
    let git_order = repo.git(&["log", "--format=%H"]);
    assert_eq!(order, git_order.lines().collect::<Vec<_>>());
    let unproven: Vec<&str> = commits
        .iter()
        .filter(|c| c["proven"] == false)
        .map(|c| c["subject"].as_str().unwrap())
        .collect();
    assert_eq!(unproven, ["c1000", "c300"]);

    let log = json_stdout(&repo.prove_it(&["log", "--json"]).assert().code(0));
    let logged: Vec<&str> = log["commits"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["commit"].as_str().unwrap())
        .collect();
    assert_eq!(logged, order);
}

/// CI must not depend on the agent's anchors. A range whose verify.sh was
/// weakened and then proven plainly (no anchor, so `PROVEN`) is named in every mode and
/// refused by `--strict` unless a person allows the change.
#[test]
fn check_strict_refuses_a_range_whose_verify_sh_changed_since_its_base() {
    let repo = TestRepo::with_commit();
    repo.prove_it(&["run"]).assert().code(0);
    let base = short(&repo, "HEAD");
    repo.verify_script("exit 0 # the checks, weakened");
    repo.write("b.txt", "b\n");
    repo.commit_all("weaken verify.sh");
    repo.prove_it(&["run"]).assert().code(0);
    let head = short(&repo, "HEAD");
    let range = format!("{base}..HEAD");
    let said = format!("verify.sh changed since {base} initial: in {head}\n");

    let plain = repo.prove_it(&["check", &range]).assert().code(0);
    let plain = String::from_utf8_lossy(&plain.get_output().stdout).into_owned();
    assert!(
        plain.starts_with(&format!("proven: {head} weaken verify.sh\n")),
        "{plain}"
    );
    assert!(plain.contains(&said), "{plain}");

    let strict = repo
        .prove_it(&["check", "--strict", &range])
        .assert()
        .code(1);
    let strict = String::from_utf8_lossy(&strict.get_output().stdout).into_owned();
    assert!(
        strict
            .starts_with("not proven: verify.sh changed since the base of the range (--strict)\n"),
        "{strict}"
    );
    assert!(strict.contains(&said), "{strict}");
    assert!(strict.contains(&format!(
        "hint: review the change: git diff {base} {head} -- verify.sh"
    )));
    repo.prove_it(&["check", "--strict", "--allow-verify-change", &range])
        .assert()
        .code(0)
        .stdout(predicate::str::contains(said.clone()));
    // The same range without the change is not refused.
    repo.prove_it(&["check", "--strict", "HEAD~1..HEAD~1"])
        .assert()
        .code(0);

    let json = json_stdout(
        &repo
            .prove_it(&["check", "--json", "--strict", &range])
            .assert()
            .code(1),
    );
    assert_eq!(json["proven"], false);
    assert_eq!(json["allow_verify_change"], false);
    let full_base = repo.git(&["rev-parse", &base]).trim().to_string();
    assert_eq!(json["verify_changed"][0]["base"], full_base.as_str());
    assert_eq!(
        json["verify_changed"][0]["commits"][0],
        repo.git(&["rev-parse", "HEAD"]).trim()
    );

    // log says it too, in text and JSON.
    repo.prove_it(&["log", &range])
        .assert()
        .code(0)
        .stdout(predicate::str::contains(said));
    let log = json_stdout(&repo.prove_it(&["log", "--json", &range]).assert().code(0));
    assert_eq!(log["verify_changed"][0]["base"], full_base.as_str());
}

/// Plain `check` printed `proven: <commit>` and exited 0 for a proof through
/// an edited verify.sh without saying so.
#[test]
fn plain_check_says_a_proof_through_an_edited_verify_sh() {
    let repo = TestRepo::with_commit();
    let bounded = bounded_record(&repo);
    hand_write_note(&repo, &tree_of(&repo, "HEAD"), &bounded);
    let head = short(&repo, "HEAD");
    repo.prove_it(&["check"])
        .assert()
        .code(0)
        .stdout(predicate::str::contains(format!(
            "  {head} initial (proven only through an edited verify.sh: BOUNDED_CLAIM_SURVIVES)\n"
        )))
        .stdout(predicate::str::contains(
            "hint: review the edit with 'git prove-it log -p'",
        ));
    // Among many commits too.
    repo.write("b.txt", "b\n");
    repo.commit_all("second");
    repo.prove_it(&["run"]).assert().code(0);
    repo.prove_it(&["check", "--all", "HEAD~1^!", "HEAD"])
        .assert()
        .code(0)
        .stdout(predicate::str::starts_with("proven: all 2 commits\n"))
        .stdout(predicate::str::contains(format!(
            "  {head} initial (proven only through an edited verify.sh"
        )));
}

/// `check --format junit` parsed back with a maintained JUnit parser (junit-parser), as CI's
/// test reporters read it.
fn junit_of(assert: &assert_cmd::assert::Assert) -> junit_parser::TestSuite {
    let stdout = &assert.get_output().stdout;
    let suites = junit_parser::from_reader(std::io::Cursor::new(stdout))
        .unwrap_or_else(|e| panic!("not JUnit XML: {e}\n{}", String::from_utf8_lossy(stdout)));
    assert_eq!(suites.suites.len(), 1, "one suite");
    let suite = suites.suites.into_iter().next().unwrap();
    assert_eq!(suite.name, "git-prove-it");
    assert_eq!(
        suite.tests,
        suite.cases.len() as u64,
        "tests counts the cases"
    );
    let failed = suite.cases.iter().filter(|c| c.status.is_failure()).count();
    assert_eq!(
        suite.failures, failed as u64,
        "failures counts the failed cases"
    );
    assert_eq!(suites.tests, suite.tests);
    assert_eq!(suites.failures, suite.failures);
    suite
}

fn case<'a>(suite: &'a junit_parser::TestSuite, name: &str) -> &'a junit_parser::TestCase {
    suite
        .cases
        .iter()
        .find(|c| c.original_name == name)
        .unwrap_or_else(|| {
            let names: Vec<_> = suite.cases.iter().map(|c| &c.original_name).collect();
            panic!("no case {name:?} among {names:?}")
        })
}

#[test]
fn junit_has_a_case_per_commit_and_a_typed_failure_for_each_that_does_not_count() {
    let repo = TestRepo::with_commit();
    repo.prove_it(&["run"]).assert().code(0);
    repo.write("b.txt", "b\n");
    repo.commit_all("unproven <b> & \"c\"\x1b[31m");
    repo.write("c.txt", "c\n");
    repo.commit_all("hand-written");
    hand_write_note(&repo, &tree_of(&repo, "HEAD"), "tests pass, trust me");
    repo.write("d.txt", "d\n");
    repo.commit_all("edited");
    let bounded = bounded_record(&repo);
    hand_write_note(&repo, &tree_of(&repo, "HEAD"), &bounded);

    let assert = repo
        .prove_it(&["check", "--all", "--format", "junit"])
        .assert()
        .code(1);
    let suite = junit_of(&assert);
    assert_eq!(suite.tests, 4);
    assert_eq!(suite.failures, 2);

    let proven = case(&suite, &format!("{} initial", short(&repo, "HEAD~3")));
    assert!(proven.status.is_success(), "{proven:?}");
    assert_eq!(proven.classname.as_deref(), Some("prove-it"));
    let out = proven.system_out.as_deref().unwrap();
    assert!(out.contains("signed off by"), "{out}");
    assert!(out.contains("on host cli"), "{out}");
    assert!(out.contains("signature: unsigned"), "{out}");

    // A subject's markup is escaped, and its escape character (which XML cannot carry) replaced.
    let unproven = case(
        &suite,
        &format!(
            "{} unproven <b> & \"c\"\u{fffd}[31m",
            short(&repo, "HEAD~2")
        ),
    );
    let failure = unproven.status.failure_as_ref();
    assert_eq!(failure.failure_type, "unproven");
    assert_eq!(failure.message, "no proof for its tree");

    let invalid = case(&suite, &format!("{} hand-written", short(&repo, "HEAD~1")));
    let failure = invalid.status.failure_as_ref();
    assert_eq!(failure.failure_type, "invalid");
    assert!(
        failure
            .message
            .starts_with("not a valid record: malformed record"),
        "{failure:?}"
    );

    // A proof through an edited verify.sh passes, and says so, unless --strict.
    let edited_name = format!("{} edited", short(&repo, "HEAD"));
    let edited = case(&suite, &edited_name);
    assert!(edited.status.is_success(), "{edited:?}");
    assert!(
        edited
            .system_out
            .as_deref()
            .unwrap()
            .contains("proven only through an edited verify.sh (BOUNDED_CLAIM_SURVIVES)")
    );
    let assert = repo
        .prove_it(&["check", "--strict", "--format", "junit"])
        .assert()
        .code(1);
    let suite = junit_of(&assert);
    assert_eq!((suite.tests, suite.failures), (1, 1));
    let failure = case(&suite, &edited_name).status.failure_as_ref();
    assert_eq!(failure.failure_type, "proven-edited");
    assert_eq!(
        failure.message,
        "proven only through an edited verify.sh (--strict)"
    );
}

#[test]
fn junit_of_a_proven_head_has_no_failure_and_check_exits_as_in_text() {
    let repo = TestRepo::with_commit();
    repo.prove_it(&["run"]).assert().code(0);
    let assert = repo
        .prove_it(&["check", "--format", "junit"])
        .assert()
        .code(0)
        .stdout(predicate::str::starts_with(
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?>",
        ));
    let suite = junit_of(&assert);
    assert_eq!((suite.tests, suite.failures), (1, 0));
    assert!(suite.time >= 0.0);
    assert_eq!(
        suite.properties.hashmap.get("outcome").map(String::as_str),
        Some("PROVEN")
    );
}

#[test]
fn junit_under_strict_fails_a_range_whose_verify_sh_changed() {
    let repo = TestRepo::with_commit();
    repo.verify_script("echo changed\nexit 0");
    repo.commit_all("weaker verify.sh");
    repo.prove_it(&["run"]).assert().code(0);
    let name = format!("verify.sh changed since {} initial", short(&repo, "HEAD~1"));
    let assert = repo
        .prove_it(&["check", "--format", "junit", "HEAD~1..HEAD"])
        .assert()
        .code(0);
    let suite = junit_of(&assert);
    assert_eq!((suite.tests, suite.failures), (2, 0));
    assert!(case(&suite, &name).status.is_success());
    let assert = repo
        .prove_it(&["check", "--strict", "--format", "junit", "HEAD~1..HEAD"])
        .assert()
        .code(1);
    let suite = junit_of(&assert);
    assert_eq!((suite.tests, suite.failures), (2, 1));
    let failure = case(&suite, &name).status.failure_as_ref();
    assert_eq!(failure.failure_type, "verify-change");
}

#[test]
fn format_json_is_json_and_json_with_another_format_is_refused() {
    let repo = TestRepo::with_commit();
    let json = repo.prove_it(&["check", "--json"]).assert().code(1);
    let format = repo
        .prove_it(&["check", "--format", "json"])
        .assert()
        .code(1);
    assert_eq!(json.get_output().stdout, format.get_output().stdout);
    assert_eq!(json_stdout(&format)["outcome"], "NOT_PROVEN");
    repo.prove_it(&["check", "--json", "--format", "junit"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("cannot be used with"));
    repo.prove_it(&["check", "--format", "yaml"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("invalid value 'yaml'"));
}

#[test]
fn junit_under_require_signed_types_each_failure_by_its_signature() {
    let (repo, allowed) = crate::log::signed_history();
    let args = [
        "check",
        "--all",
        "--require-signed",
        "--allowed-signers",
        &allowed,
        "--format",
        "junit",
    ];
    let suite = junit_of(&repo.prove_it(&args).assert().code(1));
    assert_eq!((suite.tests, suite.failures), (3, 2));
    let good = case(&suite, &format!("{} initial", short(&repo, "HEAD~2")));
    assert!(good.status.is_success(), "{good:?}");
    assert!(
        good.system_out
            .as_deref()
            .unwrap()
            .contains("signature: good signature by alice@example.com"),
        "{good:?}"
    );
    let unsigned = case(&suite, &format!("{} unsigned", short(&repo, "HEAD~1")));
    let failure = unsigned.status.failure_as_ref();
    assert_eq!(failure.failure_type, "unsigned");
    assert_eq!(failure.message, "unsigned (--require-signed)");
    let unproven = case(&suite, &format!("{} unproven", short(&repo, "HEAD")));
    assert_eq!(unproven.status.failure_as_ref().failure_type, "unproven");

    // The signed record altered after signing: a bad signature.
    let tree = tree_of(&repo, "HEAD~2");
    let forged = repo.note(&tree).unwrap().replace("host: cli", "host: ci");
    hand_write_note(&repo, &tree, &forged);
    let suite = junit_of(&repo.prove_it(&args).assert().code(1));
    assert_eq!((suite.tests, suite.failures), (3, 3));
    let bad = case(&suite, &format!("{} initial", short(&repo, "HEAD~2")));
    let failure = bad.status.failure_as_ref();
    assert_eq!(failure.failure_type, "bad-signature");
    assert_eq!(failure.message, "BAD signature (--require-signed)");
}

/// A commit whose tree has no verify.sh was given the hint to prove it with `run <commit>`,
/// which cannot prove it: the hint says what can.
#[test]
fn an_unarmed_commit_is_not_told_to_run_what_cannot_prove_it() {
    let repo = TestRepo::new();
    repo.write("a.txt", "a\n");
    repo.commit_all("initial");
    repo.write("b.txt", "b\n");
    repo.commit_all("two");
    repo.prove_it(&["check", "HEAD~1..HEAD"])
        .assert()
        .code(1)
        .stdout(predicate::str::contains("(not armed: its tree has no verify.sh)"))
        .stdout(predicate::str::contains("git prove-it run <commit>").not())
        .stdout(predicate::str::contains("fetch the proofs first").not())
        .stdout(predicate::str::contains(
            "hint: nothing can prove a commit whose tree has no verify.sh (nor prove-it.toml), not even 'git prove-it run': arm the project ('git prove-it init')",
        ));
    // Beside a commit that can be proven, both hints.
    repo.verify_passes();
    repo.commit_all("verify.sh");
    repo.prove_it(&["check", "--all", "HEAD~2..HEAD"])
        .assert()
        .code(1)
        .stdout(predicate::str::contains("git prove-it run <commit>"))
        .stdout(predicate::str::contains("nothing can prove a commit"));
}
