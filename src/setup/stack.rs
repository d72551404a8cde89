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
    /// The programs its checks run that are not on PATH here, in the order the checks name
    /// them: each must be installed before its checks can pass.
    pub missing: Vec<String>,
}

/// Where a Rust project that uses cargo-nextest keeps its configuration.
const NEXTEST_CONFIG: &str = ".config/nextest.toml";

/// cargo-nextest writes JUnit XML only where a profile's `junit.path` says, joined to its store
/// directory, so an absolute path stands (<https://nexte.st/docs/machine-readable/junit/>).
/// Rather than edit the project's configuration, the run hands nextest a tool config file of
/// its own in the run's report directory (`--tool-config-file`, beneath the project's
/// configuration: <https://nexte.st/docs/configuration/#tool-specific-configuration>): a
/// `prove-it` profile, over the project's default one, with its JUnit report there. Run by
/// hand, without the variable, it is a plain run.
const NEXTEST_JUNIT: &str = "[ -z \"${PROVE_IT_REPORTS:-}\" ] || printf \"[profile.prove-it.junit]\\npath = '%s/nextest.xml'\\n\" \"$PROVE_IT_REPORTS\" > \"$PROVE_IT_REPORTS/nextest.toml\"
cargo nextest run ${PROVE_IT_REPORTS:+--tool-config-file \"prove-it:$PROVE_IT_REPORTS/nextest.toml\" --profile prove-it}";

/// The stacks found at `root`, in a fixed order. Several may coexist (a Rust crate with a
/// Makefile, a Python project with a Node front end); each is listed. Only the root is read:
/// verify.sh runs from there.
pub(crate) fn detect(root: &Path) -> Vec<Stack> {
    detect_with(
        root,
        &|_| false,
        &|program| on_path(program).is_some(),
        None,
    )
}

/// The stacks of the package in `dir`, a directory of the workspace at `root`: as [`detect`]
/// reads them in `dir`, except that a lockfile naming the package manager (`pnpm-lock.yaml`,
/// `uv.lock`, ...) may also be at the workspace's root, where workspaces keep theirs.
pub(crate) fn detect_package(dir: &Path, root: &Path) -> Vec<Stack> {
    let root_json = std::fs::read_to_string(root.join("package.json")).unwrap_or_default();
    detect_with(
        dir,
        &|name| root.join(name).is_file(),
        &|program| on_path(program).is_some(),
        Some(&root_json),
    )
}

/// [`detect`], with `root_has` saying whether the workspace's root holds a lockfile, and
/// `installed` whether a program can be run here.
fn detect_with(
    root: &Path,
    root_has: &dyn Fn(&str) -> bool,
    installed: &dyn Fn(&str) -> bool,
    workspace_json: Option<&str>,
) -> Vec<Stack> {
    let probe = Probe {
        root,
        root_has,
        workspace_json,
    };
    DETECTORS
        .iter()
        .filter_map(|detect| detect(&probe))
        .map(|found| found.stack(installed))
        .collect()
}

/// What the detectors look at: the files at the root (and, for lock files, at the top of the
/// repository), and a workspace's own manifest.
struct Probe<'a> {
    root: &'a Path,
    root_has: &'a dyn Fn(&str) -> bool,
    workspace_json: Option<&'a str>,
}

impl Probe<'_> {
    fn has(&self, name: &str) -> bool {
        self.root.join(name).is_file()
    }

    /// A lock file here or at the top of the repository.
    fn locked(&self, name: &str) -> bool {
        self.has(name) || (self.root_has)(name)
    }

    fn read(&self, name: &str) -> String {
        std::fs::read_to_string(self.root.join(name)).unwrap_or_default()
    }

    /// The first of `names` that is here.
    fn first<'n>(&self, names: &[&'n str]) -> Option<&'n str> {
        names.iter().copied().find(|name| self.has(name))
    }
}

/// A stack found: its name, the file that shows it, and its usual checks.
struct Found {
    name: String,
    evidence: String,
    checks: Vec<String>,
}

fn found(name: &str, evidence: &str, checks: Vec<String>) -> Option<Found> {
    Some(Found {
        name: name.to_string(),
        evidence: evidence.to_string(),
        checks,
    })
}

impl Found {
    /// The stack, with the programs its checks run that `installed` does not find.
    fn stack(self, installed: &dyn Fn(&str) -> bool) -> Stack {
        let mut missing: Vec<String> = Vec::new();
        // A check of several lines runs its program on its last.
        for line in self.checks.iter().filter_map(|check| check.lines().last()) {
            // `cargo nextest` is cargo's subcommand: the program to install is cargo-nextest.
            let program = if line.starts_with("cargo nextest ") {
                Some("cargo-nextest")
            } else {
                program_of(line)
            };
            if let Some(program) = program
                && !program.starts_with("./")
                && !installed(program)
                && !missing.iter().any(|m| m == program)
            {
                missing.push(program.to_string());
            }
        }
        Stack {
            name: self.name,
            evidence: self.evidence,
            checks: self.checks,
            missing,
        }
    }
}

/// The stacks `init` knows, in the order it lists them.
const DETECTORS: &[fn(&Probe<'_>) -> Option<Found>] = &[
    rust, node, python, go, make, gradle, maven, dart, ruby, dotnet, deno, zig, cmake,
];

fn rust(probe: &Probe<'_>) -> Option<Found> {
    if !probe.has("Cargo.toml") {
        return None;
    }
    let nextest = probe.has(NEXTEST_CONFIG);
    let (name, evidence, test) = if nextest {
        ("Rust (cargo-nextest)", NEXTEST_CONFIG, NEXTEST_JUNIT)
    } else {
        ("Rust", "Cargo.toml", "cargo test --quiet")
    };
    found(
        name,
        evidence,
        strings(&[
            "cargo fmt --check",
            "cargo clippy --quiet --all-targets -- -D warnings",
            test,
        ]),
    )
}

fn node(probe: &Probe<'_>) -> Option<Found> {
    if !probe.has("package.json") {
        return None;
    }
    let (manager, evidence) = node_manager(&|name| probe.locked(name));
    found(
        &format!("Node ({manager})"),
        evidence,
        node_checks(
            manager,
            &probe.read("package.json"),
            probe.has("tsconfig.json"),
            probe.workspace_json,
        ),
    )
}

fn python(probe: &Probe<'_>) -> Option<Found> {
    let evidence = probe.first(&[
        "pyproject.toml",
        "uv.lock",
        "pytest.ini",
        "setup.cfg",
        "setup.py",
        "tox.ini",
        "requirements.txt",
        "requirements-dev.txt",
    ])?;
    // pytest writes JUnit XML itself: the run's tests, by name, in its proof (SPEC.md section
    // 5.2); run by hand, without the variable, it writes none.
    if probe.locked("uv.lock") {
        found(
            "Python (uv)",
            "uv.lock",
            strings(&[
                "uv run ruff check .",
                "uv run mypy .",
                "uv run pytest -q ${PROVE_IT_REPORTS:+\"--junitxml=$PROVE_IT_REPORTS/pytest.xml\"}",
            ]),
        )
    } else {
        found(
            "Python",
            evidence,
            strings(&[
                "ruff check .",
                "mypy .",
                "python -m pytest -q ${PROVE_IT_REPORTS:+\"--junitxml=$PROVE_IT_REPORTS/pytest.xml\"}",
            ]),
        )
    }
}

fn go(probe: &Probe<'_>) -> Option<Found> {
    probe.has("go.mod").then_some(())?;
    found(
        "Go",
        "go.mod",
        strings(&["test -z \"$(gofmt -l .)\"", "go vet ./...", "go test ./..."]),
    )
}

fn make(probe: &Probe<'_>) -> Option<Found> {
    let makefile = probe.first(&["GNUmakefile", "makefile", "Makefile"])?;
    let targets = make_targets(&probe.read(makefile));
    let checks = if targets.is_empty() {
        strings(&["make test"])
    } else {
        targets.iter().map(|t| format!("make {t}")).collect()
    };
    found("Make", makefile, checks)
}

fn gradle(probe: &Probe<'_>) -> Option<Found> {
    let evidence = probe.first(&[
        "build.gradle.kts",
        "build.gradle",
        "settings.gradle.kts",
        "settings.gradle",
        "gradlew",
    ])?;
    let gradle = if probe.has("gradlew") {
        "./gradlew"
    } else {
        "gradle"
    };
    found("Gradle", evidence, vec![format!("{gradle} --quiet check")])
}

fn maven(probe: &Probe<'_>) -> Option<Found> {
    probe.has("pom.xml").then_some(())?;
    let mvn = if probe.has("mvnw") { "./mvnw" } else { "mvn" };
    found("Maven", "pom.xml", vec![format!("{mvn} --quiet verify")])
}

fn dart(probe: &Probe<'_>) -> Option<Found> {
    probe.has("pubspec.yaml").then_some(())?;
    // A Flutter app or package names the flutter SDK among its dependencies.
    let (name, tool) = if probe.read("pubspec.yaml").contains("flutter:") {
        ("Flutter", "flutter")
    } else {
        ("Dart", "dart")
    };
    found(
        name,
        "pubspec.yaml",
        vec![
            "dart format --output=none --set-exit-if-changed .".to_string(),
            format!("{tool} analyze"),
            format!("{tool} test"),
        ],
    )
}

fn ruby(probe: &Probe<'_>) -> Option<Found> {
    probe.has("Gemfile").then_some(())?;
    let mut checks = Vec::new();
    if probe.has(".rubocop.yml") {
        checks.push("bundle exec rubocop".to_string());
    }
    checks.push(if probe.root.join("spec").is_dir() {
        "bundle exec rspec".to_string()
    } else {
        "bundle exec rake test".to_string()
    });
    found("Ruby", "Gemfile", checks)
}

fn dotnet(probe: &Probe<'_>) -> Option<Found> {
    let evidence = dotnet_project(probe.root)?;
    found(
        ".NET",
        &evidence,
        strings(&[
            "dotnet format --verify-no-changes",
            "dotnet build --nologo",
            "dotnet test --nologo",
        ]),
    )
}

fn deno(probe: &Probe<'_>) -> Option<Found> {
    let evidence = probe.first(&["deno.json", "deno.jsonc"])?;
    found(
        "Deno",
        evidence,
        strings(&["deno fmt --check", "deno lint", "deno test"]),
    )
}

fn zig(probe: &Probe<'_>) -> Option<Found> {
    probe.has("build.zig").then_some(())?;
    found(
        "Zig",
        "build.zig",
        strings(&["zig fmt --check .", "zig build test"]),
    )
}

fn cmake(probe: &Probe<'_>) -> Option<Found> {
    probe.has("CMakeLists.txt").then_some(())?;
    found(
        "CMake",
        "CMakeLists.txt",
        strings(&[
            "cmake -S . -B build && cmake --build build && ctest --test-dir build --output-on-failure",
        ]),
    )
}

/// The solution or project file of a .NET project at `root`: `*.sln`, `*.csproj`, `*.fsproj`
/// or `*.vbproj`, the first by name.
fn dotnet_project(root: &Path) -> Option<String> {
    let mut names: Vec<String> = std::fs::read_dir(root)
        .ok()?
        .filter_map(|entry| entry.ok()?.file_name().into_string().ok())
        .filter(|name| {
            [".sln", ".csproj", ".fsproj", ".vbproj"]
                .iter()
                .any(|ext| name.ends_with(ext))
        })
        .collect();
    names.sort();
    names.into_iter().next()
}

/// The program a shell command runs first: `uv` for `uv run pytest -q`, `gofmt` for
/// `test -z "$(gofmt -l .)"`. `None` for an assignment, a shell keyword or builtin, or
/// anything it cannot tell.
pub(crate) fn program_of(command: &str) -> Option<&str> {
    const SHELL: &[&str] = &[
        "set", "if", "then", "else", "elif", "fi", "case", "esac", "for", "while", "until", "do",
        "done", "export", "cd", "echo", "printf", "exit", "true", "false", ".", ":", "trap",
        "unset", "local", "return", "[", "[[", "!", "{", "}", "exec", "command", "eval", "read",
        "shift", "wait",
    ];
    let mut words = command.split_whitespace();
    let mut word = words.next()?;
    if word == "test" {
        // `test -z "$(gofmt -l .)"`: the program is inside the command substitution.
        word = words.find(|w| !w.starts_with('-'))?;
        word = word.strip_prefix("\"$(")?;
    }
    let named = word
        .chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphanumeric() || "./_".contains(c));
    if !named || word.contains(['=', '$', '(', ')', ';']) || SHELL.contains(&word) {
        return None;
    }
    Some(word)
}

/// Where `program` is on PATH, when it is there as an executable file.
pub(crate) fn on_path(program: &str) -> Option<std::path::PathBuf> {
    use std::os::unix::fs::PermissionsExt;
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|dir| dir.join(program))
        .find(|file| {
            std::fs::metadata(file)
                .is_ok_and(|meta| meta.is_file() && meta.permissions().mode() & 0o111 != 0)
        })
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

/// The package.json scripts worth running, in the manager's words; `npm test` when it names
/// none. In a package of a workspace (`workspace_json` is the root's package.json), a test
/// command that exists: the package's `test` script, else the root's, run at the root (where a
/// monorepo such as remark keeps its one `test.js`), else none.
fn node_checks(
    manager: &str,
    package_json: &str,
    typescript: bool,
    workspace_json: Option<&str>,
) -> Vec<String> {
    let scripts_of = |text: &str| -> Vec<String> {
        serde_json::from_str::<serde_json::Value>(text)
            .ok()
            .and_then(|json| json.get("scripts")?.as_object().cloned())
            .map(|scripts| scripts.keys().cloned().collect())
            .unwrap_or_default()
    };
    let scripts = scripts_of(package_json);
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
    let has_test = scripts.iter().any(|s| s == "test");
    match workspace_json {
        Some(root) if !has_test => {
            if scripts_of(root).iter().any(|s| s == "test") {
                let top = "\"$(git rev-parse --show-toplevel)\"";
                checks.push(match manager {
                    "pnpm" => format!("pnpm -C {top} test"),
                    "yarn" => format!("yarn --cwd {top} test"),
                    "bun" => format!("bun run --cwd {top} test"),
                    _ => format!("npm --prefix {top} test"),
                });
            }
        }
        _ => checks.push(run("test")),
    }
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

/// The verify.sh `init` writes at the worktree root for `stacks`.
/// The paths whose weakening must show (SPEC.md section 2.2) for `stacks`: each stack's test
/// folders and file patterns, lint, type-check and coverage configs, and the CI workflows of
/// any repository. Files that also hold dependencies (Cargo.toml, package.json,
/// pyproject.toml) are left out, so that adding or bumping one is no change to review.
pub(crate) fn protect_patterns(stacks: &[Stack]) -> Vec<String> {
    let mut patterns: Vec<&str> = Vec::new();
    for stack in stacks {
        let name = stack.name.as_str();
        let more: &[&str] = if name == "Rust" {
            &[
                "tests/",
                "benches/",
                "clippy.toml",
                ".clippy.toml",
                "rustfmt.toml",
                ".rustfmt.toml",
                "deny.toml",
            ]
        } else if name.starts_with("Node") {
            &[
                "test/",
                "tests/",
                "__tests__/",
                "*.test.*",
                "*.spec.*",
                "jest.config.*",
                "vitest.config.*",
                ".mocharc*",
                ".eslintrc*",
                "eslint.config.*",
                "tsconfig*.json",
                ".nycrc*",
                ".c8rc*",
            ]
        } else if name.starts_with("Python") {
            &[
                "tests/",
                "test/",
                "test_*.py",
                "*_test.py",
                "conftest.py",
                "pytest.ini",
                "tox.ini",
                "setup.cfg",
                ".coveragerc",
                ".flake8",
                "ruff.toml",
                ".ruff.toml",
                "mypy.ini",
                ".pylintrc",
            ]
        } else if name == "Go" {
            &["*_test.go", "testdata/", ".golangci.yml", ".golangci.yaml"]
        } else if name == "Ruby" {
            &["spec/", "test/", ".rubocop.yml", ".rspec"]
        } else if name == "Gradle" || name == "Maven" {
            &["src/test/"]
        } else {
            &[]
        };
        patterns.extend(more);
    }
    if patterns.is_empty() {
        return Vec::new();
    }
    patterns.extend([
        ".github/workflows/",
        ".gitlab-ci.yml",
        ".pre-commit-config.yaml",
    ]);
    let mut seen = std::collections::HashSet::new();
    patterns
        .into_iter()
        .filter(|pattern| seen.insert(*pattern))
        .map(str::to_string)
        .collect()
}

/// `protect = [...]` with `patterns`, one a line, and the comment that says what it does.
pub(crate) fn protect_lines(patterns: &[String]) -> String {
    let mut text = String::from(
        "# The paths whose weakening shows in every proof (a test deleted or skipped, fewer
# assertions, a config deleted): gitignore-style patterns, SPEC.md section 2.2.
protect = [\n",
    );
    for pattern in patterns {
        text.push_str(&format!(
            "    {},\n",
            toml_edit::Value::from(pattern.as_str())
        ));
    }
    text.push_str("]\n");
    text
}

/// The prove-it.toml `init` writes beside a root verify.sh: only the protected paths.
pub(crate) fn protect_file(patterns: &[String]) -> String {
    format!(
        "# Written by `git prove-it init`. verify.sh at the root is this repository's only check.\n{}",
        protect_lines(patterns)
    )
}

pub(crate) fn verify_script(stacks: &[Stack]) -> String {
    script(stacks, None)
}

/// The verify.sh `init` writes in the package directory `dir` (repository-relative) for the
/// stacks found there, for the package's check in prove-it.toml: the same file as the root's,
/// except that it says whose it is, runs from `dir`, and looks for whitespace errors in `dir`
/// only.
pub(crate) fn package_script(stacks: &[Stack], dir: &str) -> String {
    script(stacks, Some(dir))
}

/// The verify.sh for `stacks`, at the root (`package` is `None`) or in a package's directory.
fn script(stacks: &[Stack], package: Option<&str>) -> String {
    let mut text = String::from("#!/bin/sh\n");
    match package {
        None => text.push_str(
            "# How this repository proves itself. `git prove-it run` (and the gate, when an agent says it is
# done) runs this file and records a proof when it exits 0.
",
        ),
        Some(dir) => text.push_str(&format!(
            "# How the package in {dir} proves itself. Its check in prove-it.toml runs this file from
# this directory; `git prove-it run` (and the gate, when an agent says it is done) records a
# proof when it exits 0.
"
        )),
    }
    text.push_str(
        "#
# One check is active. Enable the others one at a time: uncomment one, make it fail once on
# purpose to see that it really checks something, fix that, then `git prove-it run`, then the
# next. Keep the whole file under a minute; slower checks belong in CI.
set -eu

",
    );
    text.push_str(match package {
        None => {
            "# Whitespace errors in what changed since the last commit (before the first one: everything).
base=$(git rev-parse -q --verify HEAD || git hash-object -t tree /dev/null)
git diff --check \"$base\"
"
        }
        Some(_) => {
            "# Whitespace errors in what changed here since the last commit (before the first one:
# everything here).
base=$(git rev-parse -q --verify HEAD || git hash-object -t tree /dev/null)
git diff --check \"$base\" -- .
"
        }
    });
    if stacks.is_empty() {
        text.push_str(&format!(
            "\n# No build tool was recognised {}. Add this project's checks here, e.g.:\n\
             # make test\n",
            if package.is_some() {
                "in this directory"
            } else {
                "at the root"
            }
        ));
    }
    for stack in stacks {
        text.push_str(&format!("\n# {} ({})\n", stack.name, stack.evidence));
        if !stack.missing.is_empty() {
            text.push_str(&format!(
                "# Not on PATH when init ran, install before enabling: {}\n",
                stack.missing.join(", ")
            ));
        }
        for line in stack.checks.iter().flat_map(|check| check.lines()) {
            text.push_str(&format!("# {line}\n"));
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
            let path = dir.path().join(name);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, content).unwrap();
        }
        dir
    }

    /// A Rust project that uses cargo-nextest gets nextest's run, writing JUnit into the run's
    /// report directory through a tool config file of the run's own, never the project's; both
    /// of its lines commented out together, and cargo-nextest named when it is not installed.
    #[test]
    fn a_rust_project_with_nextest_gets_a_junit_writing_nextest_run() {
        let dir = project(&[("Cargo.toml", ""), (".config/nextest.toml", "")]);
        let stacks = detect_with(dir.path(), &|_| false, &|p| p != "cargo-nextest", None);
        assert_eq!(stacks[0].name, "Rust (cargo-nextest)");
        assert_eq!(stacks[0].evidence, ".config/nextest.toml");
        assert_eq!(stacks[0].checks[2], NEXTEST_JUNIT);
        assert_eq!(stacks[0].missing, ["cargo-nextest"]);
        let script = verify_script(&stacks);
        assert!(
            script.contains(
                "# [ -z \"${PROVE_IT_REPORTS:-}\" ] || printf \"[profile.prove-it.junit]\\npath \
                 = '%s/nextest.xml'\\n\" \"$PROVE_IT_REPORTS\" > \"$PROVE_IT_REPORTS/nextest.toml\"\n\
                 # cargo nextest run ${PROVE_IT_REPORTS:+--tool-config-file \
                 \"prove-it:$PROVE_IT_REPORTS/nextest.toml\" --profile prove-it}\n"
            ),
            "{script}"
        );
        assert!(!script.contains("cargo test"), "{script}");
        let plain = detect_with(
            project(&[("Cargo.toml", "")]).path(),
            &|_| false,
            &|_| true,
            None,
        );
        assert_eq!(plain[0].checks[2], "cargo test --quiet");
    }

    fn names(files: &[(&str, &str)]) -> Vec<String> {
        detect_with(project(files).path(), &|_| false, &|_| true, None)
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
        assert_eq!(names(&[("requirements.txt", "")]), ["Python"]);
        assert_eq!(names(&[("tox.ini", "")]), ["Python"]);
        assert_eq!(names(&[("setup.cfg", "")]), ["Python"]);
        assert_eq!(
            names(&[(
                "pubspec.yaml",
                "dependencies:\n  flutter:\n    sdk: flutter\n"
            )]),
            ["Flutter"]
        );
        assert_eq!(names(&[("pubspec.yaml", "name: x\n")]), ["Dart"]);
        assert_eq!(names(&[("Gemfile", "")]), ["Ruby"]);
        assert_eq!(names(&[("App.csproj", "")]), [".NET"]);
        assert_eq!(names(&[("deno.json", "{}")]), ["Deno"]);
        assert_eq!(names(&[("build.zig", "")]), ["Zig"]);
        assert_eq!(names(&[("CMakeLists.txt", "")]), ["CMake"]);
        assert!(names(&[("README.md", "")]).is_empty());
    }

    #[test]
    fn programs_not_on_path_are_named_once_per_stack() {
        let dir = project(&[("pyproject.toml", ""), ("uv.lock", ""), ("gradlew", "")]);
        let stacks = detect_with(dir.path(), &|_| false, &|program| program != "uv", None);
        assert_eq!(stacks[0].name, "Python (uv)");
        assert_eq!(stacks[0].missing, ["uv"]);
        // A wrapper in the repository is not looked for on PATH.
        assert_eq!(stacks[1].name, "Gradle");
        assert!(stacks[1].missing.is_empty());
        let script = verify_script(&stacks);
        assert!(script.contains(
            "\n# Not on PATH when init ran, install before enabling: uv\n# uv run ruff check .\n"
        ));
    }

    #[test]
    fn the_program_of_a_command_is_its_first_word_or_the_one_it_substitutes() {
        assert_eq!(program_of("uv run pytest -q"), Some("uv"));
        assert_eq!(program_of("test -z \"$(gofmt -l .)\""), Some("gofmt"));
        assert_eq!(program_of("./gradlew --quiet check"), Some("./gradlew"));
        assert_eq!(program_of("base=$(git rev-parse HEAD)"), None);
        assert_eq!(program_of("set -eu"), None);
        assert_eq!(program_of(")"), None);
        assert_eq!(program_of("(cd sub && make)"), None);
        assert_eq!(program_of("git diff --check \"$base\""), Some("git"));
    }

    #[test]
    fn node_checks_follow_the_scripts_and_the_manager() {
        let json = r#"{"scripts": {"test": "vitest", "lint": "eslint .", "build": "tsc"}}"#;
        assert_eq!(
            node_checks("pnpm", json, false, None),
            ["pnpm run lint", "pnpm test"]
        );
        assert_eq!(
            node_checks("bun", json, true, None),
            ["bun run lint", "bunx tsc --noEmit", "bun run test"]
        );
        assert_eq!(node_checks("yarn", "not json", false, None), ["yarn test"]);
        // A workspace package without a test script runs the root's, or none.
        let root = r#"{"scripts": {"test": "node test.js"}}"#;
        assert_eq!(
            node_checks("npm", "{}", false, Some(root)),
            ["npm --prefix \"$(git rev-parse --show-toplevel)\" test"]
        );
        assert!(node_checks("npm", "{}", false, Some("{}")).is_empty());
        assert_eq!(
            node_checks("npm", json, false, Some("{}")),
            ["npm run lint", "npm test"]
        );
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

    #[test]
    fn a_package_verify_sh_runs_from_its_directory_and_checks_only_it() {
        let script = package_script(&[], "crates/a");
        assert!(script.starts_with("#!/bin/sh\n# How the package in crates/a proves itself."));
        let active: Vec<&str> = script
            .lines()
            .filter(|line| !line.is_empty() && !line.starts_with('#'))
            .collect();
        assert_eq!(
            active,
            [
                "set -eu",
                "base=$(git rev-parse -q --verify HEAD || git hash-object -t tree /dev/null)",
                "git diff --check \"$base\" -- ."
            ]
        );
        assert!(script.contains("\n# No build tool was recognised in this directory."));
        // The root's is as it was: the whole worktree, and the root named.
        let root = verify_script(&[]);
        assert!(root.contains("\ngit diff --check \"$base\"\n"));
        assert!(root.contains("\n# No build tool was recognised at the root."));
    }

    #[test]
    fn a_package_takes_its_package_manager_from_the_workspace_lockfile() {
        let workspace = project(&[("pnpm-lock.yaml", ""), ("uv.lock", "")]);
        let package = workspace.path().join("web");
        std::fs::create_dir(&package).unwrap();
        std::fs::write(package.join("package.json"), "{}").unwrap();
        std::fs::write(package.join("pyproject.toml"), "").unwrap();
        let names =
            |stacks: Vec<Stack>| -> Vec<String> { stacks.into_iter().map(|s| s.name).collect() };
        assert_eq!(
            names(detect_package(&package, workspace.path())),
            ["Node (pnpm)", "Python (uv)"]
        );
        assert_eq!(names(detect(&package)), ["Node (npm)", "Python"]);
    }
}
