//! Coverage: with `prove-it.toml`, the paths no check reads are named by `run`, `status`,
//! `doctor`, a stop and the proof `check` shows; an input that matches nothing is an error.

use predicates::prelude::*;
use serde_json::{Value, json};

use crate::checks::script;
use crate::harness::{TestRepo, json_stdout};

const ONE_PACKAGE: &str = r#"[checks.remark-parse]
run = "packages/remark-parse/verify.sh"
inputs = ["packages/remark-parse", "package-lock.json"]
"#;

/// An npm monorepo whose root `test.js` every test reads and no check lists.
fn monorepo() -> TestRepo {
    let repo = TestRepo::new();
    repo.write("prove-it.toml", ONE_PACKAGE);
    repo.write("package-lock.json", "{}\n");
    repo.write("test.js", "module.exports = 1\n");
    repo.write("packages/remark-parse/index.js", "module.exports = 1\n");
    script(&repo, "packages/remark-parse/verify.sh", "parse", "exit 0");
    repo.commit_all("monorepo");
    repo
}

fn hook(repo: &TestRepo, event: &Value) -> Value {
    let out = repo
        .prove_it(&["hook", "claude"])
        .write_stdin(event.to_string())
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let stdout = String::from_utf8(out.stdout).unwrap();
    if stdout.trim().is_empty() {
        Value::Null
    } else {
        serde_json::from_str(&stdout).unwrap()
    }
}

fn start(repo: &TestRepo) {
    hook(
        repo,
        &json!({"session_id": "86ca0000-cov", "transcript_path": "/tmp/t.jsonl",
                "cwd": repo.root, "hook_event_name": "SessionStart", "source": "startup"}),
    );
}

fn stop(repo: &TestRepo) -> Value {
    hook(
        repo,
        &json!({"session_id": "86ca0000-cov", "transcript_path": "/tmp/t.jsonl",
                "cwd": repo.root, "hook_event_name": "Stop", "stop_hook_active": false}),
    )
}

/// The trap: breaking the root test.js, read by every check and listed by none, gave
/// "proven ... nothing was run". Now every view names it.
#[test]
fn a_root_file_no_check_lists_is_named_uncovered_everywhere() {
    let repo = monorepo();
    repo.prove_it(&["run"]).assert().success().stdout(
        predicate::str::contains("uncovered: 1 path").and(predicate::str::contains("  test.js")),
    );
    let json = json_stdout(&repo.prove_it(&["run", "--json"]).assert().success());
    assert_eq!(json["uncovered"], json!(["test.js"]), "{json}");
    assert_eq!(json["uncovered_count"], 1);
    repo.prove_it(&["status"])
        .assert()
        .stdout(predicate::str::contains("  test.js"));
    repo.prove_it(&["doctor"]).assert().stdout(
        predicate::str::contains("no check's inputs").and(predicate::str::contains("test.js")),
    );
    // The proof records it, and check shows it.
    repo.commit_all("proven");
    let head = repo.git(&["rev-parse", "HEAD"]);
    repo.prove_it(&["check", head.trim()])
        .assert()
        .success()
        .stdout(predicate::str::contains(
            "(uncovered: test.js: in no check's inputs",
        ));
    let json = json_stdout(
        &repo
            .prove_it(&["check", "--json", head.trim()])
            .assert()
            .success(),
    );
    assert!(
        json.to_string().contains(r#""uncovered":["test.js"]"#),
        "{json}"
    );
}

#[test]
fn a_stop_that_changed_an_uncovered_path_names_it_or_is_refused_under_the_policy() {
    let repo = monorepo();
    repo.prove_it(&["run"]).assert().success();
    start(&repo);
    repo.write("test.js", "module.exports = 2\n");
    let notice = stop(&repo);
    let message = notice["systemMessage"].as_str().unwrap_or_default();
    assert!(notice.get("decision").is_none(), "{notice}");
    assert!(
        message.contains("no check reads") && message.contains("test.js"),
        "{notice}"
    );

    repo.git(&["config", "prove-it.uncovered", "block"]);
    let block = stop(&repo);
    assert_eq!(block["decision"], "block", "{block}");
    let reason = block["reason"].as_str().unwrap();
    assert!(
        reason.contains("prove-it.uncovered = block") && reason.contains("test.js"),
        "{reason}"
    );
}

#[test]
fn a_stop_that_changed_only_covered_paths_says_nothing_of_coverage() {
    let repo = monorepo();
    start(&repo);
    repo.write("packages/remark-parse/index.js", "module.exports = 2\n");
    let answer = stop(&repo);
    assert!(!answer.to_string().contains("test.js"), "{answer}");
}

/// The trap: `packages/remark-prase` was accepted, and the check stopped covering its own
/// package.
#[test]
fn an_input_typo_is_an_error_naming_it_and_its_line() {
    let repo = monorepo();
    repo.write(
        "prove-it.toml",
        &ONE_PACKAGE.replace("\"packages/remark-parse\",", "\"packages/remark-prase\","),
    );
    repo.prove_it(&["run"]).assert().code(2).stderr(
        predicate::str::contains("line 3")
            .and(predicate::str::contains("packages/remark-prase"))
            .and(predicate::str::contains("matches no path"))
            .and(predicate::str::contains("\"packages/remark-prase?\"")),
    );
    repo.prove_it(&["status"])
        .assert()
        .stdout(predicate::str::contains("packages/remark-prase"));
}

/// History stays readable with an input missing from a commit; a run of that commit names it.
#[test]
fn an_input_missing_in_a_commit_is_named_by_its_run_not_by_reading_history() {
    let repo = monorepo();
    repo.write(
        "prove-it.toml",
        &ONE_PACKAGE.replace("\"package-lock.json\"]", "\"package-lock.json\", \"gone\"]"),
    );
    repo.commit_all("a typo");
    repo.prove_it(&["check", "HEAD"])
        .assert()
        .code(1)
        .stdout(predicate::str::contains("not proven"));
    repo.prove_it(&["run", "HEAD"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("input \"gone\" matches no path"));
}

#[test]
fn a_trailing_question_mark_allows_a_path_that_is_not_there_yet() {
    let repo = monorepo();
    repo.write(
        "prove-it.toml",
        &ONE_PACKAGE.replace(
            "\"package-lock.json\"]",
            "\"package-lock.json\", \"generated/?\"]",
        ),
    );
    repo.prove_it(&["run"]).assert().success();
}
