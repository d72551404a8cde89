//! Which build tools a project uses, read from the files at its root, and the verify.sh `init`
//! writes for them: one active check that passes on day one, the stack's usual checks as comments.

use std::path::Path;

/// One detected stack: what it is, the file that gave it away, and its usual checks, fastest
/// first (formatting and lint before tests).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Stack {
    /// "Rust", "Node (pnpm)", ...
    pub name: String,
    /// The file at the root that shows it, e.g. "Cargo.toml".
    pub evidence: String,
    /// Shell commands, each a check verify.sh may enable.
    pub checks: Vec<String>,
}

/// The stacks found at `root`, in a fixed order. Several may coexist (a Rust crate with a
/// Makefile, a Python project with a Node front end); each is listed. Only the root is read:
/// verify.sh runs from there.
pub(crate) fn detect(root: &Path) -> Vec<Stack> {
    let has = |name: &str| root.join(name).is_file();
    let read = |name: &str| std::fs::read_to_string(root.join(name)).unwrap_or_default();
    let mut stacks = Vec::new();
    let mut add = |name: &str, evidence: &str, checks: Vec<String>| {
        stacks.push(Stack {
            name: name.to_string(),
            evidence: evidence.to_string(),
            checks,
        });
    };

    if has("Cargo.toml") {
        add(
            "Rust",
            "Cargo.toml",
            strings(&[
                "cargo fmt --check",
                "cargo clippy --quiet --all-targets -- -D warnings",
                "cargo test --quiet",
            ]),
        );
    }
    if has("package.json") {
        let (manager, evidence) = node_manager(&has);
        add(
            &format!("Node ({manager})"),
            evidence,
            node_checks(manager, &read("package.json"), has("tsconfig.json")),
        );
    }
    if let Some(evidence) = [
        "pyproject.toml",
        "uv.lock",
        "pytest.ini",
        "setup.cfg",
        "setup.py",
    ]
    .into_iter()
    .find(|name| has(name))
    {
        let run = if has("uv.lock") { "uv run " } else { "" };
        let pytest = if run.is_empty() {
            "python -m pytest -q"
        } else {
            "uv run pytest -q"
        };
        add(
            if run.is_empty() {
                "Python"
            } else {
                "Python (uv)"
            },
            if has("uv.lock") { "uv.lock" } else { evidence },
            vec![
                format!("{run}ruff check ."),
                format!("{run}mypy ."),
                pytest.to_string(),
            ],
        );
    }
    if has("go.mod") {
        add(
            "Go",
            "go.mod",
            strings(&["test -z \"$(gofmt -l .)\"", "go vet ./...", "go test ./..."]),
        );
    }
    if let Some(makefile) = ["GNUmakefile", "makefile", "Makefile"]
        .into_iter()
        .find(|name| has(name))
    {
        let targets = make_targets(&read(makefile));
        let checks = if targets.is_empty() {
            strings(&["make test"])
        } else {
            targets.iter().map(|t| format!("make {t}")).collect()
        };
        add("Make", makefile, checks);
    }
    if let Some(evidence) = [
        "build.gradle.kts",
        "build.gradle",
        "settings.gradle.kts",
        "settings.gradle",
        "gradlew",
    ]
    .into_iter()
    .find(|name| has(name))
    {
        let gradle = if has("gradlew") {
            "./gradlew"
        } else {
            "gradle"
        };
        add("Gradle", evidence, vec![format!("{gradle} --quiet check")]);
    }
    if has("pom.xml") {
        let mvn = if has("mvnw") { "./mvnw" } else { "mvn" };
        add("Maven", "pom.xml", vec![format!("{mvn} --quiet verify")]);
    }
    stacks
}

fn strings(items: &[&str]) -> Vec<String> {
    items.iter().map(|s| (*s).to_string()).collect()
}

/// The package manager a Node project uses, told by its lockfile (npm without one).
fn node_manager(has: &dyn Fn(&str) -> bool) -> (&'static str, &'static str) {
    [
        ("pnpm", "pnpm-lock.yaml"),
        ("yarn", "yarn.lock"),
        ("bun", "bun.lock"),
        ("bun", "bun.lockb"),
        ("npm", "package-lock.json"),
    ]
    .into_iter()
    .find(|(_, lockfile)| has(lockfile))
    .unwrap_or(("npm", "package.json"))
}

/// The package.json scripts worth running, in the manager's words; `npm test` when it names none.
fn node_checks(manager: &str, package_json: &str, typescript: bool) -> Vec<String> {
    let scripts: Vec<String> = serde_json::from_str::<serde_json::Value>(package_json)
        .ok()
        .and_then(|json| json.get("scripts")?.as_object().cloned())
        .map(|scripts| scripts.keys().cloned().collect())
        .unwrap_or_default();
    // `bun test` is bun's own test runner, not the script: run scripts explicitly there.
    let run = |script: &str| match (manager, script) {
        ("npm" | "pnpm" | "yarn", "test") => format!("{manager} test"),
        ("yarn", _) => format!("yarn {script}"),
        _ => format!("{manager} run {script}"),
    };
    let mut checks: Vec<String> = ["format:check", "lint", "typecheck", "type-check", "check"]
        .into_iter()
        .filter(|s| scripts.iter().any(|have| have == s))
        .map(run)
        .collect();
    if typescript
        && !scripts
            .iter()
            .any(|s| s == "typecheck" || s == "type-check")
    {
        let exec = match manager {
            "pnpm" => "pnpm exec",
            "yarn" => "yarn",
            "bun" => "bunx",
            _ => "npx",
        };
        checks.push(format!("{exec} tsc --noEmit"));
    }
    checks.push(run("test"));
    checks
}

/// The check-like targets a Makefile defines: check, lint, test.
fn make_targets(makefile: &str) -> Vec<&'static str> {
    ["check", "lint", "test"]
        .into_iter()
        .filter(|target| {
            makefile.lines().any(|line| {
                line.strip_prefix(target)
                    .is_some_and(|rest| rest.trim_start().starts_with(':') && !rest.contains(":="))
            })
        })
        .collect()
}

/// The one check verify.sh runs from day one: whitespace errors in what changed since the last
/// commit. Before the first commit there is no HEAD to diff against, so it diffs against the
/// empty tree (everything staged is "changed"); `git hash-object -t tree /dev/null` names that
/// tree in SHA-1 and SHA-256 repositories alike.
pub(crate) const ACTIVE_CHECK: &str = "git diff --check";

/// The verify.sh `init` writes for `stacks`.
pub(crate) fn verify_script(stacks: &[Stack]) -> String {
    let mut text = String::from(
        "#!/bin/sh
# How this repository proves itself. `git prove-it run` (and the gate, when an agent says it is
# done) runs this file and records a proof when it exits 0.
#
# One check is active. Enable the others one at a time: uncomment one, make it fail once on
# purpose to see that it really checks something, fix that, then `git prove-it run`, then the
# next. Keep the whole file under a minute; slower checks belong in CI.
set -eu

# Whitespace errors in what changed since the last commit (before the first one: everything).
base=$(git rev-parse -q --verify HEAD || git hash-object -t tree /dev/null)
git diff --check \"$base\"
",
    );
    if stacks.is_empty() {
        text.push_str(
            "\n# No build tool was recognised at the root. Add this project's checks here, e.g.:\n\
             # make test\n",
        );
    }
    for stack in stacks {
        text.push_str(&format!("\n# {} ({})\n", stack.name, stack.evidence));
        for check in &stack.checks {
            text.push_str(&format!("# {check}\n"));
        }
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    fn project(files: &[(&str, &str)]) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        for (name, content) in files {
            std::fs::write(dir.path().join(name), content).unwrap();
        }
        dir
    }

    fn names(files: &[(&str, &str)]) -> Vec<String> {
        detect(project(files).path())
            .into_iter()
            .map(|s| s.name)
            .collect()
    }

    #[test]
    fn each_stack_is_told_by_its_files() {
        assert_eq!(names(&[("Cargo.toml", "")]), ["Rust"]);
        assert_eq!(names(&[("package.json", "{}")]), ["Node (npm)"]);
        assert_eq!(
            names(&[("package.json", "{}"), ("pnpm-lock.yaml", "")]),
            ["Node (pnpm)"]
        );
        assert_eq!(
            names(&[("package.json", "{}"), ("yarn.lock", "")]),
            ["Node (yarn)"]
        );
        assert_eq!(
            names(&[("package.json", "{}"), ("bun.lockb", "")]),
            ["Node (bun)"]
        );
        assert_eq!(names(&[("pyproject.toml", "")]), ["Python"]);
        assert_eq!(
            names(&[("pyproject.toml", ""), ("uv.lock", "")]),
            ["Python (uv)"]
        );
        assert_eq!(names(&[("pytest.ini", "")]), ["Python"]);
        assert_eq!(names(&[("go.mod", "")]), ["Go"]);
        assert_eq!(names(&[("Makefile", "all:\n")]), ["Make"]);
        assert_eq!(names(&[("build.gradle.kts", "")]), ["Gradle"]);
        assert_eq!(names(&[("pom.xml", "")]), ["Maven"]);
        assert_eq!(
            names(&[("Cargo.toml", ""), ("Makefile", "check:\n\tcargo test\n")]),
            ["Rust", "Make"]
        );
        assert!(names(&[("README.md", "")]).is_empty());
    }

    #[test]
    fn node_checks_follow_the_scripts_and_the_manager() {
        let json = r#"{"scripts": {"test": "vitest", "lint": "eslint .", "build": "tsc"}}"#;
        assert_eq!(
            node_checks("pnpm", json, false),
            ["pnpm run lint", "pnpm test"]
        );
        assert_eq!(
            node_checks("bun", json, true),
            ["bun run lint", "bunx tsc --noEmit", "bun run test"]
        );
        assert_eq!(node_checks("yarn", "not json", false), ["yarn test"]);
    }

    #[test]
    fn make_targets_are_read_from_rule_lines_only() {
        let makefile = "CHECK := 1\ntest: build\n\tcargo test\nlint:\n\ttrue\ncheck-all:\n";
        assert_eq!(make_targets(makefile), ["lint", "test"]);
    }

    #[test]
    fn verify_sh_has_one_active_check_and_the_rest_commented() {
        let stacks = detect(project(&[("Cargo.toml", ""), ("go.mod", "")]).path());
        let script = verify_script(&stacks);
        let active: Vec<&str> = script
            .lines()
            .filter(|line| !line.is_empty() && !line.starts_with('#'))
            .collect();
        assert_eq!(
            active,
            [
                "set -eu",
                "base=$(git rev-parse -q --verify HEAD || git hash-object -t tree /dev/null)",
                "git diff --check \"$base\""
            ]
        );
        assert!(script.contains("\n# cargo test --quiet\n"));
        assert!(script.contains("\n# go test ./...\n"));
        assert!(script.contains("one at a time"));
    }
}
