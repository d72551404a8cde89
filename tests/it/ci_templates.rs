//! The CI templates run the way their CI runs them, without the CI: action.yml's steps as the
//! GitHub runner runs a composite action (its `${{ }}` lookups substituted, the GITHUB_* files
//! and variables, GITHUB_PATH between steps, outputs from GITHUB_OUTPUT), ci/gitlab.yml's script
//! as a GitLab runner does, and ci/prove-it-check.sh as plain shell; each against a real bare
//! remote holding proofs and a real clone of it.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use assert_cmd::cargo::cargo_bin;
use serde_norway::Value;

use crate::harness::{BareRemote, TOOLS, TestRepo, built_path, hermetic};

/// The repository's own root, where action.yml and ci/ live (GITHUB_ACTION_PATH).
fn source_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn yaml(rel: &str) -> Value {
    let text = std::fs::read_to_string(source_root().join(rel)).unwrap();
    serde_norway::from_str(&text).unwrap()
}

fn text(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => n.to_string(),
        Value::Null => String::new(),
        other => panic!("not a scalar: {other:?}"),
    }
}

/// A field of the event payload by a dotted path, as `github.event.<path>` reads it; empty when
/// it is not there (GitHub's expressions give null, which renders as an empty string).
fn event_field(event: &serde_json::Value, path: &str) -> String {
    let mut value = event;
    for key in path.split('.') {
        match value.get(key) {
            Some(inner) => value = inner,
            None => return String::new(),
        }
    }
    match value {
        serde_json::Value::String(s) => s.clone(),
        serde_json::Value::Null => String::new(),
        other => other.to_string(),
    }
}

/// A run of the action: what it printed, its summary, its outputs, and how its steps ended.
struct ActionRun {
    /// Every step's stdout, in order: where workflow commands (`::error`) are read from.
    stdout: String,
    stderr: String,
    summary: String,
    outputs: BTreeMap<String, String>,
    /// Whether every step succeeded; the runner stops at the first that fails.
    success: bool,
}

/// Parse `$GITHUB_OUTPUT`'s syntax: `name=value` lines and `name<<DELIM` ... `DELIM` blocks.
fn parse_outputs(text: &str) -> BTreeMap<String, String> {
    let mut outputs = BTreeMap::new();
    let mut lines = text.lines();
    while let Some(line) = lines.next() {
        if let Some((name, delimiter)) = line.split_once("<<") {
            let mut value = Vec::new();
            for line in lines.by_ref() {
                if line == delimiter {
                    break;
                }
                value.push(line);
            }
            outputs.insert(name.to_string(), value.join("\n"));
        } else if let Some((name, value)) = line.split_once('=') {
            outputs.insert(name.to_string(), value.to_string());
        }
    }
    outputs
}

/// Run action.yml's steps in `workspace` as the runner runs a composite action, for `event`
/// (`pull_request` or `push`) with its payload, and `inputs` given in the workflow's `with:`.
fn run_action(
    workspace: &TestRepo,
    event_name: &str,
    event: &serde_json::Value,
    inputs: &[(&str, &str)],
) -> ActionRun {
    run_action_at(&source_root(), workspace, event_name, event, inputs)
}

/// [`run_action`] with the action checked out at `source` (GITHUB_ACTION_PATH).
fn run_action_at(
    source: &Path,
    workspace: &TestRepo,
    event_name: &str,
    event: &serde_json::Value,
    inputs: &[(&str, &str)],
) -> ActionRun {
    let action: Value =
        serde_norway::from_str(&std::fs::read_to_string(source.join("action.yml")).unwrap())
            .unwrap();
    assert_eq!(text(&action["runs"]["using"]), "composite");
    let runner = tempfile::tempdir().unwrap();
    let temp = runner.path().join("temp");
    std::fs::create_dir_all(&temp).unwrap();
    let event_path = runner.path().join("event.json");
    std::fs::write(&event_path, event.to_string()).unwrap();
    let summary = runner.path().join("step_summary.md");
    std::fs::write(&summary, "").unwrap();

    let mut given: BTreeMap<String, String> = BTreeMap::new();
    for (name, spec) in action["inputs"].as_mapping().unwrap() {
        given.insert(text(name), text(&spec["default"]));
    }
    for (name, value) in inputs {
        assert!(given.contains_key(*name), "action.yml has no input {name}");
        given.insert((*name).to_string(), (*value).to_string());
    }
    let mut step_outputs: BTreeMap<String, BTreeMap<String, String>> = BTreeMap::new();
    // The runner's own PATH holds no git-prove-it: the install step must put one there.
    let mut path_dirs: Vec<PathBuf> = Vec::new();
    let base_path = built_path(&[], TOOLS);
    let expand = |template: &str, steps: &BTreeMap<String, BTreeMap<String, String>>| {
        // Only plain lookups are allowed, so that this substitution is exactly the runner's.
        let mut out = String::new();
        let mut rest = template;
        while let Some(start) = rest.find("${{") {
            out.push_str(&rest[..start]);
            let end = rest[start..].find("}}").expect("an expression ends") + start;
            let expr = rest[start + 3..end].trim();
            let value = if let Some(name) = expr.strip_prefix("inputs.") {
                given.get(name).cloned().expect("a declared input")
            } else if let Some(path) = expr.strip_prefix("github.event.") {
                event_field(event, path)
            } else if let Some(path) = expr.strip_prefix("steps.") {
                let (id, name) = path.split_once(".outputs.").expect("steps.ID.outputs.NAME");
                steps
                    .get(id)
                    .and_then(|o| o.get(name))
                    .cloned()
                    .unwrap_or_default()
            } else {
                panic!("an expression the test does not evaluate: {expr}")
            };
            out.push_str(&value);
            rest = &rest[end + 2..];
        }
        out.push_str(rest);
        out
    };

    let mut stdout = String::new();
    let mut stderr = String::new();
    let mut success = true;
    for (index, step) in action["runs"]["steps"]
        .as_sequence()
        .unwrap()
        .iter()
        .enumerate()
    {
        let script = runner.path().join(format!("step{index}.sh"));
        std::fs::write(&script, expand(&text(&step["run"]), &step_outputs)).unwrap();
        let output_file = runner.path().join(format!("output{index}"));
        let path_file = runner.path().join(format!("path{index}"));
        std::fs::write(&output_file, "").unwrap();
        std::fs::write(&path_file, "").unwrap();
        // The runner's shells: `bash` is `bash --noprofile --norc -eo pipefail {0}`.
        let shell = text(&step["shell"]);
        let mut cmd = match shell.as_str() {
            "bash" => {
                let mut cmd = Command::new("bash");
                cmd.args(["--noprofile", "--norc", "-eo", "pipefail"]);
                cmd
            }
            "sh" => {
                let mut cmd = Command::new("sh");
                cmd.arg("-e");
                cmd
            }
            other => panic!("a shell the test does not run: {other}"),
        };
        cmd.arg(&script);
        hermetic(&mut cmd, workspace.home());
        let mut path = std::env::join_paths(path_dirs.iter().rev()).unwrap();
        if !path.is_empty() {
            path.push(":");
        }
        path.push(&base_path);
        cmd.env("PATH", path)
            .env("CI", "true")
            .env("GITHUB_ACTIONS", "true")
            .env("GITHUB_EVENT_NAME", event_name)
            .env("GITHUB_EVENT_PATH", &event_path)
            .env("GITHUB_WORKSPACE", &workspace.root)
            .env("GITHUB_ACTION_PATH", source)
            .env("GITHUB_STEP_SUMMARY", &summary)
            .env("GITHUB_OUTPUT", &output_file)
            .env("GITHUB_PATH", &path_file)
            .env("GITHUB_SHA", workspace.git(&["rev-parse", "HEAD"]).trim())
            .env("RUNNER_TEMP", &temp)
            .current_dir(&workspace.root);
        if let Some(env) = step["env"].as_mapping() {
            for (name, value) in env {
                cmd.env(text(name), expand(&text(value), &step_outputs));
            }
        }
        let out: Output = cmd.output().unwrap();
        stdout.push_str(&String::from_utf8_lossy(&out.stdout));
        stderr.push_str(&String::from_utf8_lossy(&out.stderr));
        if let Some(id) = step["id"].as_str() {
            let written = std::fs::read_to_string(&output_file).unwrap();
            step_outputs.insert(id.to_string(), parse_outputs(&written));
        }
        for line in std::fs::read_to_string(&path_file).unwrap().lines() {
            path_dirs.push(PathBuf::from(line));
        }
        if !out.status.success() {
            success = false;
            break;
        }
    }
    let mut outputs = BTreeMap::new();
    for (name, spec) in action["outputs"].as_mapping().unwrap() {
        outputs.insert(text(name), expand(&text(&spec["value"]), &step_outputs));
    }
    ActionRun {
        stdout,
        stderr,
        summary: std::fs::read_to_string(&summary).unwrap(),
        outputs,
        success,
    }
}

fn short(id: &str) -> &str {
    &id[..7]
}

/// A remote whose main holds `initial` (proven); a clone that pushes its proofs there.
fn remote_with_proven_main() -> (BareRemote, TestRepo, String) {
    let remote = BareRemote::new();
    let dev = TestRepo::with_commit();
    dev.prove_it(&["run"]).assert().success();
    dev.publish_to(&remote);
    push_proofs(&dev);
    let initial = dev.git(&["rev-parse", "HEAD"]).trim().to_string();
    (remote, dev, initial)
}

fn push_proofs(dev: &TestRepo) {
    dev.git(&["push", "-q", "--no-verify", "origin", "refs/notes/prove-it"]);
}

/// A commit on the current branch changing `file`, proven or not.
fn commit(dev: &TestRepo, file: &str, proven: bool) -> String {
    dev.write(file, &format!("{file}\n"));
    let id = dev.commit_all(&format!("change {file}"));
    if proven {
        dev.prove_it(&["run"]).assert().success();
    }
    id
}

/// What actions/checkout does on a pull request: a detached merge of the head into the base,
/// a tree nobody proved.
fn checkout_merge_commit(remote: &BareRemote, head: &str) -> TestRepo {
    let clone = TestRepo::clone_of(remote);
    clone.git(&["fetch", "-q", "origin", "feature"]);
    clone.git(&["checkout", "-q", "--detach", "origin/main"]);
    clone.git(&[
        "merge",
        "-q",
        "--no-ff",
        "-m",
        "Merge feature into main",
        head,
    ]);
    clone
}

fn pull_request(head: &str, base: &str) -> serde_json::Value {
    serde_json::json!({
        "action": "synchronize",
        "number": 7,
        "pull_request": {"head": {"sha": head, "ref": "feature"}, "base": {"sha": base, "ref": "main"}},
    })
}

fn binary() -> String {
    cargo_bin("git-prove-it").to_str().unwrap().to_string()
}

fn annotations(run: &ActionRun) -> Vec<&str> {
    run.stdout
        .lines()
        .filter(|l| l.starts_with("::error"))
        .collect()
}

/// The trap: GITHUB_SHA on a pull request is a merge commit whose tree nobody
/// proved; the action checks the pull request's head commit from the event payload.
#[test]
fn the_action_checks_the_pull_requests_head_commit_not_the_merge_commit() {
    let (remote, dev, _) = remote_with_proven_main();
    commit(&dev, "main-moved.txt", true);
    dev.git(&["push", "-q", "--no-verify", "origin", "main"]);
    dev.git(&["checkout", "-q", "-b", "feature", "HEAD~1"]);
    let head = commit(&dev, "feature.txt", true);
    dev.git(&["push", "-q", "--no-verify", "origin", "feature"]);
    push_proofs(&dev);
    let base = dev.git(&["rev-parse", "main"]).trim().to_string();
    let workspace = checkout_merge_commit(&remote, &head);
    // The merge commit is not proven, and a check of it would say so.
    workspace.prove_it(&["check"]).assert().failure().code(1);

    let run = run_action(
        &workspace,
        "pull_request",
        &pull_request(&head, &base),
        &[("binary", &binary())],
    );
    assert!(run.success, "{}\n{}", run.stdout, run.stderr);
    assert!(annotations(&run).is_empty(), "{}", run.stdout);
    assert_eq!(run.outputs["proven"], "true");
    assert_eq!(run.outputs["proven-count"], "1");
    assert_eq!(run.outputs["unproven"], "");
    assert!(
        run.summary
            .starts_with("### git prove-it check: proven: 1 commit\n"),
        "{}",
        run.summary
    );
    assert!(
        run.summary.contains(&format!(
            "| `{}` | change feature.txt | ✅ proven | A U Thor &lt;author@example.com&gt; |",
            short(&head)
        )),
        "{}",
        run.summary
    );
    assert!(
        !run.summary
            .contains(short(&workspace.git(&["rev-parse", "HEAD"]))),
        "the merge commit is not in the summary: {}",
        run.summary
    );
}

/// `range: all` checks every commit of the pull request: the one left unproven fails the job
/// with an annotation naming it, and the outputs name it in full.
#[test]
fn the_action_with_range_all_annotates_each_unproven_commit_and_outputs_them() {
    let (remote, dev, base) = remote_with_proven_main();
    dev.git(&["checkout", "-q", "-b", "feature"]);
    let unproven = commit(&dev, "one.txt", false);
    let head = commit(&dev, "two.txt", true);
    dev.git(&["push", "-q", "--no-verify", "origin", "feature"]);
    push_proofs(&dev);
    let workspace = checkout_merge_commit(&remote, &head);

    let run = run_action(
        &workspace,
        "pull_request",
        &pull_request(&head, &base),
        &[("binary", &binary()), ("range", "all")],
    );
    assert!(!run.success, "an unproven commit fails the job");
    assert_eq!(
        annotations(&run),
        [format!(
            "::error title=commit {} is not proven::{} change one.txt: no proof for its tree",
            short(&unproven),
            short(&unproven)
        )]
    );
    assert_eq!(run.outputs["proven"], "false");
    assert_eq!(run.outputs["proven-count"], "1");
    assert_eq!(run.outputs["unproven"], unproven);
    assert!(
        run.summary
            .starts_with("### git prove-it check: not proven: 1 of 2 commits\n"),
        "{}",
        run.summary
    );
    assert!(
        run.summary.contains(&format!("| `{}` |", short(&unproven)))
            && run.summary.contains("❌ no proof for its tree"),
        "{}",
        run.summary
    );
}

/// A push of twelve unproven commits to a remote with no proofs at all: the missing notes ref
/// is no error, every pushed commit is checked, and GitHub's cap of ten annotations is kept by
/// a tenth that counts the rest.
#[test]
fn the_action_on_a_push_checks_every_pushed_commit_and_keeps_to_ten_annotations() {
    let remote = BareRemote::new();
    let dev = TestRepo::with_commit();
    dev.publish_to(&remote);
    let before = dev.git(&["rev-parse", "HEAD"]).trim().to_string();
    let pushed: Vec<String> = (0..12)
        .map(|n| commit(&dev, &format!("f{n}.txt"), false))
        .collect();
    dev.git(&["push", "-q", "--no-verify", "origin", "main"]);
    let after = pushed.last().unwrap().clone();
    let workspace = TestRepo::clone_of(&remote);

    let run = run_action(
        &workspace,
        "push",
        &serde_json::json!({"before": before, "after": after, "ref": "refs/heads/main"}),
        &[("binary", &binary())],
    );
    assert!(!run.success);
    assert!(
        run.stderr
            .contains("has no proofs (refs/notes/prove-it) yet"),
        "{}",
        run.stderr
    );
    let errors = annotations(&run);
    assert_eq!(errors.len(), 10, "{}", run.stdout);
    assert!(
        errors[9].starts_with("::error title=3 more commits are not proven::"),
        "{}",
        errors[9]
    );
    assert_eq!(run.outputs["proven-count"], "0");
    let listed: Vec<&str> = run.outputs["unproven"].lines().collect();
    assert_eq!(listed.len(), 12);
    for id in &pushed {
        assert!(listed.contains(&id.as_str()), "{id} in {listed:?}");
        assert!(run.summary.contains(&format!("| `{}` |", short(id))));
    }
    assert!(
        !run.summary.contains(&format!("| `{}` |", short(&before))),
        "the commit before the push is not checked"
    );
}

/// The recipe in plain shell, no CI variables: it fetches the proofs and checks HEAD.
#[test]
fn the_plain_shell_recipe_fetches_proofs_and_checks_head() {
    let (remote, dev, initial) = remote_with_proven_main();
    let clone = TestRepo::clone_of(&remote);
    let recipe = source_root().join("ci/prove-it-check.sh");
    let run = |repo: &TestRepo| {
        let out = repo.command("sh").arg(&recipe).output().unwrap();
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
        )
    };
    assert_eq!(
        run(&clone),
        (Some(0), format!("proven: {} initial\n", short(&initial)))
    );
    let unproven = commit(&dev, "b.txt", false);
    dev.git(&["push", "-q", "--no-verify", "origin", "main"]);
    let clone = TestRepo::clone_of(&remote);
    let (code, out) = run(&clone);
    assert_eq!(code, Some(1), "{out}");
    assert!(
        out.contains(&format!(
            "  {} change b.txt (no proof for its tree)",
            short(&unproven)
        )),
        "{out}"
    );
}

/// Run the `prove-it` job of ci/gitlab.yml as a GitLab runner runs a job's script: its
/// `variables:`, then the CI_* variables, each line of `before_script` and `script` in one
/// shell that stops at the first failing line.
fn run_gitlab(workspace: &TestRepo, ci: &[(&str, &str)]) -> (Output, Option<String>) {
    let template = yaml("ci/gitlab.yml");
    let job = &template["prove-it"];
    let mut lines = Vec::new();
    for part in ["before_script", "script"] {
        for line in job[part].as_sequence().into_iter().flatten() {
            lines.push(text(line));
        }
    }
    let mut cmd = workspace.command("bash");
    cmd.args([
        "--noprofile",
        "--norc",
        "-eo",
        "pipefail",
        "-c",
        &lines.join("\n"),
    ]);
    if let Some(variables) = job["variables"].as_mapping() {
        for (name, value) in variables {
            cmd.env(text(name), text(value));
        }
    }
    cmd.env("CI", "true").env("GITLAB_CI", "true");
    for (name, value) in ci {
        cmd.env(name, value);
    }
    let out = cmd.output().unwrap();
    let report = text(&job["artifacts"]["reports"]["junit"]);
    let xml = std::fs::read_to_string(workspace.path(&report)).ok();
    (out, xml)
}

/// The GitLab template on a merge request: the proofs fetched, the head checked, and the JUnit
/// report where `artifacts: reports: junit:` names it.
#[test]
fn the_gitlab_template_writes_a_junit_report_of_the_merge_requests_head_not_the_merge_commit() {
    let (remote, dev, base) = remote_with_proven_main();
    let unproven = commit(&dev, "c.txt", false);
    dev.git(&["push", "-q", "--no-verify", "origin", "main"]);
    let workspace = TestRepo::clone_of(&remote);
    let (out, xml) = run_gitlab(
        &workspace,
        &[
            ("CI_COMMIT_SHA", &unproven),
            ("CI_MERGE_REQUEST_DIFF_BASE_SHA", &base),
            ("CI_DEFAULT_BRANCH", "main"),
            ("CI_PIPELINE_SOURCE", "merge_request_event"),
        ],
    );
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let xml = xml.expect("the JUnit report is written");
    assert!(xml.contains("<testsuite "), "{xml}");
    assert!(xml.contains("failures=\"1\""), "{xml}");
    assert!(
        xml.contains(&format!("name=\"{} change c.txt\"", short(&unproven))),
        "{xml}"
    );
    assert!(xml.contains("type=\"unproven\""), "{xml}");

    // A merged results pipeline: CI_COMMIT_SHA is the merge commit GitLab made, and the merge
    // request's head is CI_MERGE_REQUEST_SOURCE_BRANCH_SHA, proven here.
    let (out, xml) = run_gitlab(
        &workspace,
        &[
            ("CI_COMMIT_SHA", &unproven),
            ("CI_MERGE_REQUEST_SOURCE_BRANCH_SHA", &base),
            ("CI_MERGE_REQUEST_DIFF_BASE_SHA", &base),
            ("CI_PIPELINE_SOURCE", "merge_request_event"),
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let xml = xml.unwrap();
    assert!(xml.contains("failures=\"0\""), "{xml}");
    assert!(
        xml.contains(&format!("name=\"{} initial\"", short(&base))),
        "{xml}"
    );
}

/// What actions/checkout does by default on a pull request: a depth-1 fetch of the merge ref,
/// in which the pull request's head, a parent of the merge commit, is not there at all.
fn shallow_checkout_of_merge_ref(remote: &BareRemote) -> TestRepo {
    let workspace = TestRepo::new();
    let url = format!("file://{}", remote.path.display());
    workspace.git(&["remote", "add", "origin", &url]);
    workspace.git(&[
        "fetch",
        "-q",
        "--no-tags",
        "--depth=1",
        "origin",
        "+refs/pull/7/merge:refs/remotes/pull/7/merge",
    ]);
    workspace.git(&["checkout", "-q", "--detach", "refs/remotes/pull/7/merge"]);
    workspace
}

/// The trap of a shallow checkout: the head commit is not in the clone, and neither is the
/// history of the pull request; the action fetches what it checks.
#[test]
fn the_action_in_a_shallow_checkout_fetches_the_head_and_the_range_it_checks() {
    let (remote, dev, base) = remote_with_proven_main();
    dev.git(&["checkout", "-q", "-b", "feature"]);
    let unproven = commit(&dev, "one.txt", false);
    let head = commit(&dev, "two.txt", true);
    dev.git(&["push", "-q", "--no-verify", "origin", "feature"]);
    push_proofs(&dev);
    dev.git(&["checkout", "-q", "--detach", "main"]);
    dev.git(&["merge", "-q", "--no-ff", "-m", "Merge feature", "feature"]);
    dev.git(&[
        "push",
        "-q",
        "--no-verify",
        "origin",
        "HEAD:refs/pull/7/merge",
    ]);

    let workspace = shallow_checkout_of_merge_ref(&remote);
    assert!(
        !workspace
            .git_output(&["cat-file", "-e", &format!("{head}^{{commit}}")])
            .status
            .success(),
        "the head is not in a depth-1 checkout of the merge ref"
    );
    let run = run_action(
        &workspace,
        "pull_request",
        &pull_request(&head, &base),
        &[("binary", &binary())],
    );
    assert!(run.success, "{}\n{}", run.stdout, run.stderr);
    assert_eq!(run.outputs["proven-count"], "1");

    let workspace = shallow_checkout_of_merge_ref(&remote);
    let run = run_action(
        &workspace,
        "pull_request",
        &pull_request(&head, &base),
        &[("binary", &binary()), ("range", "all")],
    );
    assert!(!run.success);
    assert_eq!(run.outputs["unproven"], unproven, "{}", run.stderr);
    assert_eq!(run.outputs["proven-count"], "1");
}

/// The inputs reach check: with `require-signed`, an unsigned proof does not count.
#[test]
fn the_action_with_require_signed_refuses_an_unsigned_proof() {
    let (remote, _dev, initial) = remote_with_proven_main();
    let workspace = TestRepo::clone_of(&remote);
    std::fs::write(workspace.home().join("allowed_signers"), "").unwrap();
    let signers = workspace.home().join("allowed_signers");
    let push =
        serde_json::json!({"before": "0000000000000000000000000000000000000000", "after": initial});
    let run = run_action(&workspace, "push", &push, &[("binary", &binary())]);
    assert!(run.success, "{}\n{}", run.stdout, run.stderr);
    let run = run_action(
        &workspace,
        "push",
        &push,
        &[
            ("binary", &binary()),
            ("require-signed", "true"),
            ("allowed-signers", signers.to_str().unwrap()),
        ],
    );
    assert!(!run.success);
    assert_eq!(
        annotations(&run),
        [format!(
            "::error title=commit {0} is not proven::{0} initial: unsigned (--require-signed)",
            short(&initial)
        )]
    );
    assert!(run.summary.contains("| unsigned |"), "{}", run.summary);
}

/// A remote the recipe cannot reach is an error (exit 2), not a remote without proofs, which
/// would list every commit as unproven and hide the cause.
#[test]
fn the_recipe_fails_on_an_unreachable_remote_rather_than_calling_it_empty() {
    let repo = TestRepo::with_commit();
    let missing = repo.home().join("no-such-remote.git");
    let out = repo
        .command("sh")
        .arg(source_root().join("ci/prove-it-check.sh"))
        .env("PROVE_IT_REMOTE", &missing)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains(&format!(
            "prove-it: could not read the proofs of {}",
            missing.display()
        )),
        "{stderr}"
    );
    assert!(!stderr.contains("has no proofs"), "{stderr}");
}

/// The install step hands a released binary to install.sh (which verifies its checksum) with
/// the prefix, and the version unless it is `latest`, which install.sh takes as its default.
#[test]
fn the_action_installs_through_install_sh_when_the_action_has_it() {
    let (remote, _dev, initial) = remote_with_proven_main();
    let workspace = TestRepo::clone_of(&remote);
    let action = tempfile::tempdir().unwrap();
    std::fs::copy(
        source_root().join("action.yml"),
        action.path().join("action.yml"),
    )
    .unwrap();
    std::fs::create_dir(action.path().join("ci")).unwrap();
    std::fs::copy(
        source_root().join("ci/prove-it-check.sh"),
        action.path().join("ci/prove-it-check.sh"),
    )
    .unwrap();
    // A stand-in for install.sh: it records how it was called and installs the built binary.
    let calls = action.path().join("calls");
    std::fs::write(
        action.path().join("install.sh"),
        format!(
            "printf '%s\\n' \"$*\" >>'{calls}'\n\
             while [ $# -gt 0 ]; do case $1 in --prefix) prefix=$2; shift 2;; *) shift;; esac; done\n\
             mkdir -p \"$prefix/bin\" && cp '{binary}' \"$prefix/bin/git-prove-it\"\n",
            calls = calls.display(),
            binary = binary()
        ),
    )
    .unwrap();
    let push =
        serde_json::json!({"before": "0000000000000000000000000000000000000000", "after": initial});
    for inputs in [&[][..], &[("version", "0.1.0")][..]] {
        let run = run_action_at(action.path(), &workspace, "push", &push, inputs);
        assert!(run.success, "{}\n{}", run.stdout, run.stderr);
        assert_eq!(run.outputs["proven-count"], "1");
        assert!(!run.stdout.contains("::warning"), "{}", run.stdout);
    }
    let calls = std::fs::read_to_string(&calls).unwrap();
    let lines: Vec<&str> = calls.lines().collect();
    assert_eq!(lines.len(), 2, "{calls}");
    assert!(
        lines[0].starts_with("--prefix ") && lines[0].ends_with("/git-prove-it"),
        "{calls}"
    );
    assert!(
        lines[1].ends_with("/git-prove-it --version 0.1.0"),
        "{calls}"
    );
}

/// A checks file that needs a newer release (`min-version`) than the action installed says so
/// once, as an error annotation naming both versions and the input that fixes it, and check
/// refuses the commit naming the version.
#[test]
fn the_action_says_when_the_installed_release_is_older_than_the_checks_file_needs() {
    let remote = BareRemote::new();
    let dev = TestRepo::with_commit();
    dev.publish_to(&remote);
    let before = dev.git(&["rev-parse", "HEAD"]).trim().to_string();
    dev.write("prove-it.toml", "min-version = \"99.0.0\"\n");
    let after = dev.commit_all("needs a newer git-prove-it");
    dev.git(&["push", "-q", "--no-verify", "origin", "main"]);
    let workspace = TestRepo::clone_of(&remote);

    let run = run_action(
        &workspace,
        "push",
        &serde_json::json!({"before": before, "after": after, "ref": "refs/heads/main"}),
        &[("binary", &binary())],
    );
    assert!(!run.success);
    assert!(
        run.stdout.contains(&format!(
            "::error title=git-prove-it is older than prove-it.toml needs::prove-it.toml needs git-prove-it 99.0.0 or later (min-version), and this step installed {}",
            env!("CARGO_PKG_VERSION")
        )),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout.contains("it needs git-prove-it 99.0.0 or later"),
        "{}",
        run.stdout
    );
}
