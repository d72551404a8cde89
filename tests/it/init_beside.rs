//! Issue 21, item 2: `init --pre-push` beside what a repository already runs before a push. It
//! used to refuse everything, verify.sh too, when a pre-push hook existed; now it chains into a
//! shell hook, writes husky's hook file, gives lefthook's and pre-commit's snippets, and still
//! writes everything else.

use std::os::unix::fs::PermissionsExt;

use predicates::prelude::*;

use crate::harness::{BareRemote, TestRepo};

fn published() -> (BareRemote, TestRepo) {
    let remote = BareRemote::new();
    let repo = TestRepo::new();
    repo.write("a.txt", "a\n");
    repo.commit_all("initial");
    repo.publish_to(&remote);
    (remote, repo)
}

/// A push of a new commit on main, with the hooks; its exit status.
fn push(repo: &TestRepo) -> std::process::Output {
    repo.git_output(&["push", "-q", "origin", "main"])
}

#[test]
fn init_chains_into_an_existing_shell_pre_push_hook_which_still_sees_the_refs() {
    let (_remote, repo) = published();
    let seen = repo.home().join("theirs.log");
    let theirs = format!(
        "#!/bin/sh\nwhile read local sha remote rsha; do echo \"theirs: $local\" >> '{}'; done\n",
        seen.display()
    );
    repo.write(".git/hooks/pre-push", &theirs);
    repo.chmod(".git/hooks/pre-push", 0o755);
    repo.prove_it(&["init", "--yes", "--pre-push", "--no-demo"])
        .assert()
        .code(0)
        .stdout(predicate::str::contains(
            "chained the gate into the existing pre-push hook at ",
        ))
        .stdout(predicate::str::contains("wrote verify.sh"));
    assert!(repo.path("verify.sh").is_file());
    let hook = std::fs::read_to_string(repo.path(".git/hooks/pre-push")).unwrap();
    assert!(hook.starts_with("#!/bin/sh\n# >>> git-prove-it"), "{hook}");
    assert!(hook.ends_with(&theirs["#!/bin/sh\n".len()..]), "{hook}");

    // An unproven commit is refused by the gate, before their hook runs.
    repo.write("b.txt", "b\n");
    repo.commit_all("unproven");
    let refused = push(&repo);
    assert!(!refused.status.success(), "{refused:?}");
    assert!(!seen.exists(), "their hook ran after the gate refused");

    // Proven, the push goes through, and their hook reads the same refs as before.
    repo.commit_all("verify.sh");
    repo.prove_it(&["run"]).assert().code(0);
    let pushed = push(&repo);
    assert!(pushed.status.success(), "{pushed:?}");
    assert_eq!(
        std::fs::read_to_string(&seen).unwrap(),
        "theirs: refs/heads/main\n"
    );

    repo.prove_it(&["init", "--yes", "--pre-push", "--no-demo"])
        .assert()
        .code(0)
        .stdout(predicate::str::contains(
            "already wired: the pre-push hook ",
        ));
    assert_eq!(
        std::fs::read_to_string(repo.path(".git/hooks/pre-push")).unwrap(),
        hook
    );
}

#[test]
fn a_hook_init_cannot_chain_into_is_left_as_it_is_with_the_line_to_add() {
    let repo = TestRepo::new();
    let theirs = "#!/usr/bin/env python3\nimport sys\n";
    repo.write(".git/hooks/pre-push", theirs);
    repo.chmod(".git/hooks/pre-push", 0o755);
    repo.prove_it(&["init", "--yes", "--pre-push", "--host", "claude", "--no-demo"])
        .assert()
        .code(0)
        .stdout(predicate::str::contains(
            "as it is: it is not a shell script init can chain into\nhint: to gate pushes too, add this line to it, with git's arguments and the pushed refs on its stdin: git prove-it hook git pre-push \"$@\"\n",
        ));
    assert!(repo.path("verify.sh").is_file());
    assert!(repo.path(".claude/settings.json").is_file());
    assert_eq!(
        std::fs::read_to_string(repo.path(".git/hooks/pre-push")).unwrap(),
        theirs
    );

    // Nor is a hook that is not text.
    let binary = TestRepo::new();
    let bytes = b"\x7fELF\xff\xfe";
    binary.write_bytes(std::path::Path::new(".git/hooks/pre-push"), bytes);
    binary
        .prove_it(&["init", "--yes", "--pre-push", "--no-demo"])
        .assert()
        .code(0)
        .stdout(predicate::str::contains(
            "as it is: it is not a shell script",
        ));
    assert!(binary.path("verify.sh").is_file());
    assert_eq!(
        std::fs::read(binary.path(".git/hooks/pre-push")).unwrap(),
        bytes
    );
}

#[test]
fn husky_gets_the_gate_in_its_pre_push_file() {
    let repo = TestRepo::new();
    repo.write(".husky/pre-commit", "npm test\n");
    repo.prove_it(&["init", "--yes", "--pre-push", "--no-demo"])
        .assert()
        .code(0)
        .stdout(predicate::str::contains(
            "added the gate to husky's pre-push hook ",
        ))
        .stdout(predicate::str::contains(
            "git add verify.sh .husky/pre-push && git commit",
        ));
    let hook = std::fs::read_to_string(repo.path(".husky/pre-push")).unwrap();
    assert_eq!(hook, "git prove-it hook git pre-push \"$@\"\n");
    let mode = std::fs::metadata(repo.path(".husky/pre-push"))
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(mode & 0o111, 0o111);
    assert!(!repo.path(".git/hooks/pre-push").exists());
}

#[test]
fn lefthook_and_pre_commit_get_the_snippet_and_their_files_are_left_alone() {
    let repo = TestRepo::new();
    repo.write(
        "lefthook.yml",
        "pre-commit:\n  commands:\n    lint:\n      run: make lint\n",
    );
    let assert = repo
        .prove_it(&["init", "--yes", "--pre-push", "--no-demo"])
        .assert()
        .code(0)
        .stdout(predicate::str::contains(
            "lefthook runs this repository's hooks (lefthook.yml): to gate pushes, add this to it, then run 'lefthook install':\n    pre-push:\n",
        ));
    let stdout = String::from_utf8_lossy(&assert.get_output().stdout).into_owned();
    let snippet: String = stdout
        .lines()
        .skip_while(|line| !line.starts_with("lefthook runs"))
        .skip(1)
        .take_while(|line| line.starts_with("    "))
        .map(|line| format!("{}\n", &line[4..]))
        .collect();
    let yaml: serde_json::Value = serde_norway::from_str(&snippet).unwrap();
    assert_eq!(
        yaml["pre-push"]["commands"]["prove-it"],
        serde_json::json!({"run": "git prove-it hook git pre-push {1} {2}", "use_stdin": true})
    );
    assert_eq!(
        std::fs::read_to_string(repo.path("lefthook.yml")).unwrap(),
        "pre-commit:\n  commands:\n    lint:\n      run: make lint\n"
    );
    assert!(repo.path("verify.sh").is_file());
    assert!(!repo.path(".git/hooks/pre-push").exists());

    let other = TestRepo::new();
    other.write(".pre-commit-config.yaml", "repos: []\n");
    other
        .prove_it(&["init", "--yes", "--pre-push", "--no-demo"])
        .assert()
        .code(0)
        .stdout(predicate::str::contains(
            "pre-commit runs this repository's hooks (.pre-commit-config.yaml): to gate pushes, add this to it, then run 'pre-commit install --hook-type pre-push':\n",
        ))
        .stdout(predicate::str::contains("        stages: [pre-push]\n"));
    assert_eq!(
        std::fs::read_to_string(other.path(".pre-commit-config.yaml")).unwrap(),
        "repos: []\n"
    );
    // Once the snippet is in, init says it is wired.
    other.write(
        ".pre-commit-config.yaml",
        "repos:\n  - repo: local\n    hooks:\n      - id: prove-it\n",
    );
    other
        .prove_it(&["init", "--yes", "--pre-push", "--no-demo"])
        .assert()
        .code(0)
        .stdout(predicate::str::contains(
            "already wired: pre-commit runs git prove-it before a push (.pre-commit-config.yaml)\n",
        ));
}

/// The hook this repository declares for pre-commit users is a pre-push stage hook, and its
/// entry gates a push when run as pre-commit runs it (the refs in `PRE_COMMIT_*` variables).
#[test]
fn the_pre_commit_hook_this_repository_provides_gates_a_push() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let hooks: serde_json::Value = serde_norway::from_str(
        &std::fs::read_to_string(root.join(".pre-commit-hooks.yaml")).unwrap(),
    )
    .unwrap();
    let hook = &hooks[0];
    assert_eq!(hook["id"], "prove-it");
    assert_eq!(hook["stages"], serde_json::json!(["pre-push"]));
    assert_eq!(hook["language"], "system");
    assert_eq!(hook["pass_filenames"], false);
    let entry = hook["entry"].as_str().unwrap();
    let script = entry
        .strip_prefix("sh -c '")
        .and_then(|rest| rest.strip_suffix('\''))
        .unwrap();

    let (remote, repo) = published();
    repo.verify_passes();
    repo.commit_all("verify.sh");
    let sha = repo.git(&["rev-parse", "HEAD"]).trim().to_string();
    let before = repo.git(&["rev-parse", "origin/main"]).trim().to_string();
    let run = |from: &str| {
        let mut cmd = repo.command("sh");
        cmd.args(["-c", script])
            .env("PRE_COMMIT_LOCAL_BRANCH", "refs/heads/main")
            .env("PRE_COMMIT_TO_REF", &sha)
            .env("PRE_COMMIT_REMOTE_BRANCH", "refs/heads/main")
            .env("PRE_COMMIT_FROM_REF", from)
            .env("PRE_COMMIT_REMOTE_NAME", "origin")
            .env("PRE_COMMIT_REMOTE_URL", &remote.path);
        cmd.output().unwrap()
    };
    let refused = run(&before);
    assert_eq!(refused.status.code(), Some(1), "{refused:?}");
    // A new branch: pre-commit passes "<first new commit>^" or nothing as the remote side.
    assert_eq!(run("").status.code(), Some(1));
    assert_eq!(run(&format!("{sha}^")).status.code(), Some(1));
    repo.prove_it(&["run"]).assert().code(0);
    let allowed = run(&before);
    assert!(allowed.status.success(), "{allowed:?}");
}

/// The documented lefthook snippet is the one init prints, and runs the gate with git's
/// arguments and the pushed refs.
#[test]
fn the_documented_lefthook_snippet_runs_the_gate_with_the_refs() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let yaml: serde_json::Value =
        serde_norway::from_str(&std::fs::read_to_string(root.join("hooks/lefthook.yml")).unwrap())
            .unwrap();
    assert_eq!(
        yaml["pre-push"]["commands"]["prove-it"],
        serde_json::json!({"run": "git prove-it hook git pre-push {1} {2}", "use_stdin": true})
    );
}

/// doctor sees the gate where init wired it: through husky, lefthook or pre-commit, or a
/// chained hook; and says when a manager runs the hooks without it.
#[test]
fn doctor_finds_the_gate_wired_through_a_hook_manager_or_a_chained_hook() {
    let repo = TestRepo::new();
    repo.write(".husky/pre-commit", "npm test\n");
    repo.prove_it(&["doctor"]).assert().stdout(predicate::str::contains(
        "warn  husky runs this repository's hooks, and .husky/pre-push does not exist: unproven commits can be pushed\n      fix: git prove-it init --pre-push\n",
    ));
    repo.prove_it(&["init", "--yes", "--pre-push", "--no-demo"])
        .assert()
        .code(0);
    repo.prove_it(&["doctor"])
        .assert()
        .stdout(predicate::str::contains(
            "ok    .husky/pre-push runs git prove-it before a push\n",
        ));

    let other = TestRepo::new();
    other.write("lefthook.yml", "pre-commit:\n  commands: {}\n");
    other
        .prove_it(&["doctor"])
        .assert()
        .stdout(predicate::str::contains(
            "warn  lefthook.yml runs this repository's hooks but not git prove-it before a push",
        ));
    std::fs::write(
        other.path("lefthook.yml"),
        std::fs::read_to_string(
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("hooks/lefthook.yml"),
        )
        .unwrap(),
    )
    .unwrap();
    other
        .prove_it(&["doctor"])
        .assert()
        .stdout(predicate::str::contains(
            "ok    lefthook.yml runs git prove-it before a push\n",
        ));

    let chained = TestRepo::new();
    chained.write(".git/hooks/pre-push", "#!/bin/sh\nexit 0\n");
    chained.chmod(".git/hooks/pre-push", 0o755);
    chained
        .prove_it(&["doctor"])
        .assert()
        .stdout(predicate::str::contains("does not call git prove-it"));
    chained
        .prove_it(&["init", "--yes", "--pre-push", "--no-demo"])
        .assert()
        .code(0);
    chained
        .prove_it(&["doctor"])
        .assert()
        .stdout(predicate::str::contains("calls git prove-it\n"));
}
