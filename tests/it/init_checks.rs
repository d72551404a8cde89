//! `git prove-it init` in a repository with several packages ("checks with inputs"):
//! it offers a prove-it.toml with one check per package, each running that package's own
//! verify.sh with the package and its lockfiles as inputs, and writes no root verify.sh.

use std::os::unix::fs::PermissionsExt;

use predicates::prelude::*;

use crate::harness::{TestRepo, json_stdout};

/// A check as prove-it.toml declares it: name, run, inputs.
type Check = (String, String, Vec<String>);

/// The checks prove-it.toml declares, read back as TOML, by name; each holds only `run` and
/// `inputs`. Beside `[checks]` the file holds only its `protect` list.
fn checks(repo: &TestRepo) -> Vec<Check> {
    let text = std::fs::read_to_string(repo.path("prove-it.toml")).unwrap();
    let document = toml::de::DeTable::parse(&text).unwrap_or_else(|e| panic!("{e}:\n{text}"));
    let keys: Vec<&str> = document
        .get_ref()
        .iter()
        .map(|(k, _)| k.get_ref().as_ref())
        .filter(|k| *k != "protect")
        .collect();
    assert_eq!(keys, ["checks"], "only [checks] and protect: {text}");
    let table = document.get_ref()["checks"].get_ref().as_table().unwrap();
    let mut checks: Vec<Check> = table
        .iter()
        .map(|(name, check)| {
            let check = check.get_ref().as_table().unwrap();
            let keys: Vec<&str> = check.iter().map(|(k, _)| k.get_ref().as_ref()).collect();
            let mut keys = keys;
            keys.sort_unstable();
            assert_eq!(keys, ["inputs", "run"], "{text}");
            let inputs = check["inputs"]
                .get_ref()
                .as_array()
                .unwrap()
                .iter()
                .map(|input| input.get_ref().as_str().unwrap().to_string())
                .collect();
            (
                name.get_ref().to_string(),
                check["run"].get_ref().as_str().unwrap().to_string(),
                inputs,
            )
        })
        .collect();
    checks.sort();
    checks
}

fn check(name: &str, run: &str, inputs: &[&str]) -> Check {
    (
        name.to_string(),
        run.to_string(),
        inputs.iter().map(|i| (*i).to_string()).collect(),
    )
}

/// The rule for a check's name: `[A-Za-z0-9][A-Za-z0-9._-]*`, `verify.sh` reserved.
fn valid_name(name: &str) -> bool {
    name != "verify.sh"
        && name.starts_with(|c: char| c.is_ascii_alphanumeric())
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "._-".contains(c))
}

fn stdout_of(assert: &assert_cmd::assert::Assert) -> String {
    String::from_utf8_lossy(&assert.get_output().stdout).into_owned()
}

#[track_caller]
fn assert_executable(repo: &TestRepo, rel: &str) {
    let mode = std::fs::metadata(repo.path(rel))
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o755, "{rel}");
}

/// Run a package's verify.sh as its check runs it: from its own directory.
fn run_script(repo: &TestRepo, dir: &str) -> std::process::Output {
    let mut sh = repo.command("sh");
    sh.arg("-c").arg("./verify.sh").current_dir(repo.path(dir));
    sh.output().unwrap()
}

fn cargo_workspace(repo: &TestRepo) {
    repo.write("Cargo.toml", "[workspace]\nmembers = [\"crates/*\"]\n");
    repo.write("Cargo.lock", "version = 4\n");
    repo.write("crates/a/Cargo.toml", "[package]\nname = \"a\"\n");
    repo.write("crates/b/Cargo.toml", "[package]\nname = \"b\"\n");
}

#[test]
fn a_cargo_workspace_gets_one_check_per_crate_and_no_root_verify_sh() {
    let repo = TestRepo::new();
    cargo_workspace(&repo);
    let assert = repo.prove_it(&["init", "--yes"]).assert().code(0);
    let stdout = stdout_of(&assert);
    assert_eq!(
        checks(&repo),
        [
            check(
                "a",
                "crates/a/verify.sh",
                &["crates/a", "Cargo.lock", "Cargo.toml"]
            ),
            check(
                "b",
                "crates/b/verify.sh",
                &["crates/b", "Cargo.lock", "Cargo.toml"]
            ),
        ]
    );
    let text = std::fs::read_to_string(repo.path("prove-it.toml")).unwrap();
    assert!(text.starts_with("# "), "a comment header first:\n{text}");
    assert!(text.contains("SPEC.md"), "{text}");
    for dir in ["crates/a", "crates/b"] {
        let script = format!("{dir}/verify.sh");
        assert_executable(&repo, &script);
        let text = std::fs::read_to_string(repo.path(&script)).unwrap();
        assert!(text.contains("\n# cargo test --quiet\n"), "{text}");
        assert!(text.contains(&format!("the package in {dir}")), "{text}");
    }
    assert!(!repo.path("verify.sh").exists(), "no root verify.sh");
    for needle in [
        "wrote prove-it.toml: one check per package, from Cargo.toml's [workspace] members:\n",
        "  a: crates/a/verify.sh (Rust), inputs crates/a, Cargo.lock, Cargo.toml\n",
        "wrote crates/b/verify.sh: one active check (git diff --check); 3 more commented out",
        "no verify.sh at the root, and init writes none: the checks in prove-it.toml prove this repository ('git prove-it init --no-checks' writes one)\n",
        "\nno demonstration: it runs the root's verify.sh, and there is none; 'git prove-it run' runs the checks in prove-it.toml\n",
        "  git add prove-it.toml crates/a/verify.sh crates/b/verify.sh && git commit -m 'Gate agent turns on the checks in prove-it.toml'\n",
    ] {
        assert!(stdout.contains(needle), "{needle:?} not in:\n{stdout}");
    }
    assert!(!stdout.contains("kept verify.sh"), "{stdout}");

    // The day-one package script passes from its directory, on an unborn HEAD and after a
    // commit, and looks at its own package only.
    assert!(run_script(&repo, "crates/a").status.success());
    repo.commit_all("initial");
    assert!(run_script(&repo, "crates/a").status.success());
    repo.write("crates/b/Cargo.toml", "[package]\nname = \"b\" \n");
    let a = run_script(&repo, "crates/a");
    assert!(a.status.success(), "{a:?}");
    let b = run_script(&repo, "crates/b");
    assert!(!b.status.success(), "{b:?}");
    assert!(String::from_utf8_lossy(&b.stdout).contains("trailing whitespace"));
}

/// A Cargo workspace whose root is a package too (as thiserror, clap or this repository lay
/// themselves out): the members' checks read none of the root crate's code, so init writes the
/// root verify.sh as well, the check of every path, and nothing is left uncovered.
#[test]
fn a_workspace_whose_root_is_a_package_gets_the_root_verify_sh_too() {
    let repo = TestRepo::new();
    repo.write(
        "Cargo.toml",
        "[package]\nname = \"root\"\n\n[workspace]\nmembers = [\"impl\", \"tests/no-std\"]\n",
    );
    repo.write("Cargo.lock", "version = 4\n");
    repo.write("src/lib.rs", "pub fn f() {}\n");
    repo.write("impl/Cargo.toml", "[package]\nname = \"root-impl\"\n");
    repo.write("tests/no-std/Cargo.toml", "[package]\nname = \"no-std\"\n");
    let assert = repo.prove_it(&["init", "--yes"]).assert().code(0);
    let stdout = stdout_of(&assert);
    let names: Vec<String> = checks(&repo).into_iter().map(|(name, ..)| name).collect();
    assert_eq!(names, ["impl", "no-std"]);
    assert_executable(&repo, "verify.sh");
    for needle in [
        "  the root is a package too (Cargo.toml's [package]): verify.sh at the root proves it, the check of every path\n",
        "wrote verify.sh: one active check (git diff --check)",
    ] {
        assert!(stdout.contains(needle), "{needle:?} not in:\n{stdout}");
    }
    assert!(!stdout.contains("no verify.sh at the root"), "{stdout}");
    // The root crate's code is read by a check: nothing is uncovered, and the run proves all.
    repo.commit_all("initial");
    let run = repo.prove_it(&["run"]).assert().code(0);
    let out = stdout_of(&run);
    assert!(!out.contains("uncovered:"), "{out}");
    let status = json_stdout(&repo.prove_it(&["status", "--json"]).assert().code(0));
    let listed: Vec<&str> = status["checks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|check| check["name"].as_str().unwrap())
        .collect();
    assert_eq!(listed, ["verify.sh", "impl", "no-std"]);
    assert!(status.get("uncovered").is_none(), "{status}");
}

#[test]
fn init_twice_in_a_workspace_changes_nothing() {
    let repo = TestRepo::new();
    cargo_workspace(&repo);
    repo.prove_it(&["init", "--yes"]).assert().code(0);
    let files = [
        "prove-it.toml",
        "crates/a/verify.sh",
        "crates/b/verify.sh",
        ".git/config",
    ];
    let before: Vec<Vec<u8>> = files
        .iter()
        .map(|f| std::fs::read(repo.path(f)).unwrap())
        .collect();
    repo.prove_it(&["init", "--yes"])
        .assert()
        .code(0)
        .stdout(predicate::str::contains(
            "kept prove-it.toml as it is (init never overwrites it)\n",
        ))
        .stdout(predicate::str::contains(
            "no verify.sh at the root, and init writes none",
        ))
        .stdout(predicate::str::contains("commit what init wrote").not());
    let after: Vec<Vec<u8>> = files
        .iter()
        .map(|f| std::fs::read(repo.path(f)).unwrap())
        .collect();
    assert!(before == after, "init twice rewrote something");
    assert!(!repo.path("verify.sh").exists());
}

#[test]
fn an_npm_workspace_gets_its_lockfile_and_scripts() {
    let repo = TestRepo::new();
    repo.write(
        "package.json",
        r#"{"private": true, "workspaces": ["packages/*"]}"#,
    );
    repo.write("package-lock.json", "{}\n");
    repo.write(
        "packages/api/package.json",
        r#"{"scripts": {"test": "node --test", "lint": "eslint ."}}"#,
    );
    repo.write("packages/web/package.json", "{}");
    repo.write("packages/README.md", "not a package\n");
    repo.prove_it(&["init", "--yes", "--no-demo"])
        .assert()
        .code(0)
        .stdout(predicate::str::contains(
            "wrote prove-it.toml: one check per package, from package.json's workspaces:\n",
        ));
    assert_eq!(
        checks(&repo),
        [
            check(
                "api",
                "packages/api/verify.sh",
                &["packages/api", "package-lock.json", "package.json"]
            ),
            check(
                "web",
                "packages/web/verify.sh",
                &["packages/web", "package-lock.json", "package.json"]
            ),
        ]
    );
    let api = std::fs::read_to_string(repo.path("packages/api/verify.sh")).unwrap();
    assert!(api.contains("\n# npm run lint\n# npm test\n"), "{api}");
    assert_executable(&repo, "packages/web/verify.sh");
}

/// The trap: init's checks file left each package blind to the workspace packages it depends
/// on and to the root manifest, and a package without a `test` script was given `npm test`,
/// which fails there.
#[test]
fn an_npm_workspace_check_reads_the_packages_it_depends_on_and_the_root_test() {
    let repo = TestRepo::new();
    repo.write(
        "package.json",
        r#"{"private": true, "workspaces": ["packages/*"], "scripts": {"test": "node test.js"}}"#,
    );
    repo.write("package-lock.json", "{}\n");
    repo.write("test.js", "require('./packages/remark')\n");
    repo.write(
        "packages/remark/package.json",
        r#"{"name": "remark", "dependencies": {"remark-parse": "^11", "unified": "^11"}}"#,
    );
    repo.write(
        "packages/remark-parse/package.json",
        r#"{"name": "remark-parse", "devDependencies": {"remark-util": "*"}}"#,
    );
    repo.write(
        "packages/remark-util/package.json",
        r#"{"name": "remark-util", "scripts": {"test": "node --test"}}"#,
    );
    repo.prove_it(&["init", "--yes", "--no-demo"])
        .assert()
        .code(0);
    let root = ["package-lock.json", "package.json"];
    assert_eq!(
        checks(&repo),
        [
            check(
                "remark",
                "packages/remark/verify.sh",
                &[
                    &[
                        "packages/remark",
                        "packages/remark-parse",
                        "packages/remark-util"
                    ][..],
                    &root
                ]
                .concat()
            ),
            check(
                "remark-parse",
                "packages/remark-parse/verify.sh",
                &[
                    &["packages/remark-parse", "packages/remark-util"][..],
                    &root
                ]
                .concat()
            ),
            check(
                "remark-util",
                "packages/remark-util/verify.sh",
                &[&["packages/remark-util"][..], &root].concat()
            ),
        ]
    );
    let remark = std::fs::read_to_string(repo.path("packages/remark/verify.sh")).unwrap();
    assert!(
        remark.contains("\n# npm --prefix \"$(git rev-parse --show-toplevel)\" test\n"),
        "{remark}"
    );
    let util = std::fs::read_to_string(repo.path("packages/remark-util/verify.sh")).unwrap();
    assert!(util.contains("\n# npm test\n"), "{util}");
    // Every input init wrote is there: the checks file runs as written.
    repo.commit_all("init");
    repo.prove_it(&["run"]).assert().code(0);
}

#[test]
fn a_cargo_workspace_check_reads_its_path_dependencies() {
    let repo = TestRepo::new();
    repo.write(
        "Cargo.toml",
        "[workspace]\nmembers = [\"crates/*\"]\n[workspace.dependencies]\nshared = { path = \"crates/shared\" }\n",
    );
    repo.write("Cargo.lock", "version = 4\n");
    repo.write(
        "crates/app/Cargo.toml",
        "[package]\nname = \"app\"\n[dependencies]\nmodel = { path = \"../model\" }\nshared.workspace = true\n",
    );
    repo.write("crates/model/Cargo.toml", "[package]\nname = \"model\"\n");
    repo.write("crates/shared/Cargo.toml", "[package]\nname = \"shared\"\n");
    repo.prove_it(&["init", "--yes", "--no-demo"])
        .assert()
        .code(0);
    let found = checks(&repo);
    assert_eq!(
        found[0],
        check(
            "app",
            "crates/app/verify.sh",
            &[
                "crates/app",
                "crates/model",
                "crates/shared",
                "Cargo.lock",
                "Cargo.toml"
            ]
        )
    );
    assert_eq!(
        found[1],
        check(
            "model",
            "crates/model/verify.sh",
            &["crates/model", "Cargo.lock", "Cargo.toml"]
        )
    );
}

#[test]
fn a_go_work_gets_one_check_per_module_with_go_work_as_input() {
    let repo = TestRepo::new();
    repo.write(
        "go.work",
        "go 1.22\n\nuse (\n\t./svc/api\n\t./svc/worker\n)\n",
    );
    repo.write("go.work.sum", "");
    repo.write("svc/api/go.mod", "module example.com/api\n");
    repo.write("svc/worker/go.mod", "module example.com/worker\n");
    repo.write("svc/unused/go.mod", "module example.com/unused\n");
    repo.prove_it(&["init", "--yes", "--no-demo"])
        .assert()
        .code(0);
    assert_eq!(
        checks(&repo),
        [
            check(
                "api",
                "svc/api/verify.sh",
                &["svc/api", "go.work", "go.work.sum"]
            ),
            check(
                "worker",
                "svc/worker/verify.sh",
                &["svc/worker", "go.work", "go.work.sum"]
            ),
        ]
    );
    let api = std::fs::read_to_string(repo.path("svc/api/verify.sh")).unwrap();
    assert!(api.contains("\n# go test ./...\n"), "{api}");
    assert!(!repo.path("svc/unused/verify.sh").exists());
}

#[test]
fn a_packages_layout_counts_directories_holding_a_stack() {
    let repo = TestRepo::new();
    repo.write("packages/lib/pyproject.toml", "[project]\nname = \"lib\"\n");
    repo.write("apps/server/Makefile", "test:\n\ttrue\n");
    repo.write("apps/assets/logo.txt", "not a package\n");
    repo.prove_it(&["init", "--yes", "--no-demo"])
        .assert()
        .code(0)
        .stdout(predicate::str::contains(
            "from directories under packages/ or apps/:\n",
        ));
    assert_eq!(
        checks(&repo),
        [
            check("lib", "packages/lib/verify.sh", &["packages/lib"]),
            check("server", "apps/server/verify.sh", &["apps/server"]),
        ]
    );
    let server = std::fs::read_to_string(repo.path("apps/server/verify.sh")).unwrap();
    assert!(server.contains("\n# make test\n"), "{server}");
    assert!(!repo.path("apps/assets/verify.sh").exists());
}

/// One package gets no checks, only its stack's protected paths beside the root verify.sh.
#[test]
fn a_single_package_repository_gets_only_a_protect_list() {
    let repo = TestRepo::new();
    repo.write("Cargo.toml", "[package]\nname = \"x\"\n");
    repo.write("crates/only/Cargo.toml", "[package]\nname = \"only\"\n");
    repo.prove_it(&["init", "--yes"])
        .assert()
        .code(0)
        .stdout(predicate::str::contains(
            "wrote verify.sh: one active check (git diff --check)",
        ))
        .stdout(predicate::str::contains(
            "wrote prove-it.toml with 10 protected paths",
        ));
    let text = std::fs::read_to_string(repo.path("prove-it.toml")).unwrap();
    let document = toml::de::DeTable::parse(&text).unwrap();
    let keys: Vec<&str> = document
        .get_ref()
        .iter()
        .map(|(k, _)| k.get_ref().as_ref())
        .collect();
    assert_eq!(keys, ["protect"], "{text}");
    assert!(text.contains("\"tests/\""), "{text}");
    assert!(text.contains("\".github/workflows/\""), "{text}");
    assert!(!repo.path("crates/only/verify.sh").exists());
    assert_executable(&repo, "verify.sh");
}

#[test]
fn no_checks_writes_the_single_root_verify_sh() {
    let repo = TestRepo::new();
    cargo_workspace(&repo);
    repo.prove_it(&["init", "--yes", "--no-checks"])
        .assert()
        .code(0)
        .stdout(predicate::str::contains(
            "wrote verify.sh: one active check (git diff --check)",
        ))
        .stdout(predicate::str::contains(
            ": PROVEN, the gate lets the turn end",
        ))
        .stdout(predicate::str::contains(
            "  git add verify.sh && git commit -m 'Gate agent turns on verify.sh'\n",
        ))
        .stdout(predicate::str::contains("prove-it.toml").not());
    assert!(!repo.path("prove-it.toml").exists());
    assert!(!repo.path("crates/a/verify.sh").exists());
    assert!(!repo.path("crates/b/verify.sh").exists());
    assert_executable(&repo, "verify.sh");
}

#[test]
fn an_existing_prove_it_toml_is_never_overwritten() {
    let repo = TestRepo::new();
    cargo_workspace(&repo);
    let mine = "[checks.all]\nrun = \"ci/check.sh\"\ninputs = [\"crates\"]\n";
    repo.write("prove-it.toml", mine);
    repo.prove_it(&["init", "--yes", "--force"])
        .assert()
        .code(0)
        .stdout(predicate::str::contains(
            "kept prove-it.toml as it is (init never overwrites it)\n",
        ))
        .stdout(predicate::str::contains(
            "no verify.sh at the root, and init writes none",
        ))
        .stdout(predicate::str::contains(
            "next: enable the checks of the scripts prove-it.toml runs one at a time",
        ));
    assert_eq!(
        std::fs::read_to_string(repo.path("prove-it.toml")).unwrap(),
        mine
    );
    assert!(!repo.path("crates/a/verify.sh").exists());
    assert!(!repo.path("verify.sh").exists());
}

#[test]
fn a_package_verify_sh_is_kept_unless_forced() {
    let repo = TestRepo::new();
    cargo_workspace(&repo);
    repo.write("crates/a/verify.sh", "#!/bin/sh\necho mine\n");
    repo.prove_it(&["init", "--yes", "--no-demo"])
        .assert()
        .code(0)
        .stdout(predicate::str::contains(
            "kept crates/a/verify.sh as it is (it is not executable by its owner; --force overwrites it)\n",
        ))
        .stdout(predicate::str::contains(
            "  git add prove-it.toml crates/b/verify.sh && git commit",
        ));
    assert_eq!(
        std::fs::read_to_string(repo.path("crates/a/verify.sh")).unwrap(),
        "#!/bin/sh\necho mine\n"
    );
    std::fs::remove_file(repo.path("prove-it.toml")).unwrap();
    repo.prove_it(&["init", "--yes", "--no-demo", "--force"])
        .assert()
        .code(0)
        .stdout(predicate::str::contains(
            "overwrote crates/a/verify.sh: one active check",
        ));
    let text = std::fs::read_to_string(repo.path("crates/a/verify.sh")).unwrap();
    assert!(text.contains("# cargo test --quiet"), "{text}");
    // An existing file keeps its mode, as the root verify.sh does.
    let mode = std::fs::metadata(repo.path("crates/a/verify.sh"))
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o644);
}

/// A root verify.sh already there stays the root's check beside prove-it.toml's, and the
/// demonstration runs it.
#[test]
fn an_existing_root_verify_sh_is_kept_and_demonstrated() {
    let repo = TestRepo::new();
    cargo_workspace(&repo);
    repo.verify_script("echo all good");
    repo.prove_it(&["init", "--yes"])
        .assert()
        .code(0)
        .stdout(predicate::str::contains(
            "kept verify.sh as it is (it is armed; --force overwrites it)\n",
        ))
        .stdout(predicate::str::contains("wrote prove-it.toml"))
        .stdout(predicate::str::contains(
            ": PROVEN, the gate lets the turn end",
        ))
        .stdout(predicate::str::contains("no verify.sh at the root").not());
    assert_eq!(
        std::fs::read_to_string(repo.path("verify.sh")).unwrap(),
        "#!/bin/sh\necho all good\n"
    );
}

#[test]
fn without_a_terminal_init_lists_the_checks_file_and_changes_nothing() {
    let repo = TestRepo::new();
    cargo_workspace(&repo);
    repo.prove_it(&["init"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "  - write prove-it.toml with 2 checks, one per package: a (crates/a), b (crates/b)\n",
        ))
        .stderr(predicate::str::contains(
            "  - write crates/a/verify.sh with one active check (git diff --check)\n",
        ))
        .stderr(predicate::str::contains("write verify.sh ").not());
    assert!(!repo.path("prove-it.toml").exists());
    assert!(!repo.path("crates/a/verify.sh").exists());
}

/// Check names come from the directories' last components: made unique, fitted to the name
/// rule, `verify.sh` avoided, and a path that needs quoting quoted in the command to commit.
#[test]
fn check_names_are_unique_and_valid() {
    let repo = TestRepo::new();
    repo.write(
        "Cargo.toml",
        "[workspace]\nmembers = [\"services/*\", \"libs/*\"]\n",
    );
    for dir in [
        "services/api",
        "libs/api",
        "libs/web.ui",
        "libs/my lib",
        "libs/verify.sh",
        "libs/_internal",
    ] {
        repo.write(&format!("{dir}/Cargo.toml"), "[package]\n");
    }
    let assert = repo
        .prove_it(&["init", "--yes", "--no-demo"])
        .assert()
        .code(0);
    let stdout = stdout_of(&assert);
    let checks = checks(&repo);
    let names: Vec<&str> = checks.iter().map(|(name, _, _)| name.as_str()).collect();
    assert_eq!(
        names,
        [
            "api",
            "api-2",
            "internal",
            "my-lib",
            "verify.sh-2",
            "web.ui"
        ]
    );
    assert!(names.iter().all(|name| valid_name(name)), "{names:?}");
    let runs: Vec<&str> = checks.iter().map(|(_, run, _)| run.as_str()).collect();
    assert_eq!(
        runs,
        [
            "libs/api/verify.sh",
            "services/api/verify.sh",
            "libs/_internal/verify.sh",
            "libs/my lib/verify.sh",
            "libs/verify.sh/verify.sh",
            "libs/web.ui/verify.sh",
        ]
    );
    assert_executable(&repo, "libs/my lib/verify.sh");
    assert!(stdout.contains(" 'libs/my lib/verify.sh' "), "{stdout}");
}
