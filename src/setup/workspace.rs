//! The packages of a repository that holds several (Cargo, npm, yarn or pnpm workspaces, Go
//! modules, a `packages/` or `apps/` layout), and the prove-it.toml `init` offers for them: one
//! check per package, run by that package's own verify.sh, with the inputs it can infer (the
//! package's directory, the local packages it depends on, the workspace's lockfile and root
//! manifest).
//!
//! Everything here only reads the filesystem: `cli/init.rs` writes what it returns.

use std::path::Path;

use super::stack::{self, Stack};
use crate::armed::Armed;

/// The checks file, at the worktree root.
pub(crate) use crate::proof::CHECKS_FILE;

/// A package's script, in its directory, named as the root's; also the name of the root
/// verify.sh's check, which no package's check may take.
pub(crate) use crate::proof::VERIFY_CHECK as VERIFY_SH;

/// Directories no wildcard and no search for go.mod files goes into: installed dependencies,
/// vendored code, build output, test data. Hidden ones (.git among them) are skipped too.
const SKIPPED: &[&str] = &["node_modules", "vendor", "target", "testdata"];

/// How deep below the root `go.mod` files are looked for without a `go.work`.
const GO_DEPTH: usize = 3;

/// How deep a `**` in a workspace pattern reaches.
const GLOB_DEPTH: usize = 8;

/// What made a directory a package.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Source {
    /// The root Cargo.toml's `[workspace] members`.
    Cargo,
    /// The root package.json's `workspaces` (npm, yarn, bun).
    PackageJson,
    /// pnpm-workspace.yaml's `packages`.
    Pnpm,
    /// go.work's `use` directives.
    GoWork,
    /// `go.mod` files in subdirectories, without a go.work.
    GoModules,
    /// A directory under `packages/` or `apps/` holding a recognised stack's files.
    Directories,
}

/// One package and the check init offers for it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Package {
    /// Its directory, repository-relative and `/`-separated: `crates/a`.
    pub dir: String,
    /// Its check's name in prove-it.toml, unique among the packages: `a`.
    pub check: String,
    /// The paths its check reads: its directory, the local directories it depends on, then
    /// the workspace's lockfiles and root manifest that exist.
    pub inputs: Vec<String>,
    /// The stacks found in its directory, for its verify.sh.
    pub stacks: Vec<Stack>,
    /// What made it a package (the first detector that found it).
    pub source: Source,
}

impl Package {
    /// Its check's `run`: its verify.sh, repository-relative.
    pub(crate) fn run(&self) -> String {
        format!("{}/{VERIFY_SH}", self.dir)
    }

    /// The verify.sh init writes for it: the root's generator, applied to its own stacks.
    pub(crate) fn verify_script(&self) -> String {
        stack::package_script(&self.stacks, &self.dir)
    }
}

/// A repository with several packages.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Workspace {
    /// At least two, ordered by directory.
    pub packages: Vec<Package>,
    /// What found them, each once, in the order of [`Source`].
    pub sources: Vec<Source>,
    /// How a commit's worktree would install the dependencies the checkout keeps in ignored
    /// folders, when a root lockfile says: the command, and the paths whose change calls for
    /// it again.
    pub setup: Option<(String, Vec<String>)>,
    /// The root is a package of the workspace too (a root Cargo.toml with a `[package]`, a root
    /// go.mod beside the modules found): no package's check reads its code, so the root's own
    /// verify.sh, the check of every path, proves it.
    pub root_package: Option<Source>,
}

/// The root lockfiles whose dependencies live in an ignored folder of the checkout, and the
/// command that installs them as locked in a fresh worktree.
const SETUP_COMMANDS: &[(&str, &str)] = &[
    ("package-lock.json", "npm ci"),
    ("pnpm-lock.yaml", "pnpm install --frozen-lockfile"),
    ("yarn.lock", "yarn install --frozen-lockfile"),
    ("bun.lock", "bun install --frozen-lockfile"),
    ("bun.lockb", "bun install --frozen-lockfile"),
    ("uv.lock", "uv sync --frozen"),
];

/// The setup `init` suggests for the workspace at `root` with `packages`: the command of the
/// first root lockfile found, re-run when it or a manifest changes.
fn suggested_setup(root: &Path, packages: &[Package]) -> Option<(String, Vec<String>)> {
    let (lockfile, command) = SETUP_COMMANDS
        .iter()
        .find(|(lockfile, _)| root.join(lockfile).is_file())?;
    let manifest = if *lockfile == "uv.lock" {
        "pyproject.toml"
    } else {
        "package.json"
    };
    let mut inputs = vec![(*lockfile).to_string()];
    if root.join(manifest).is_file() {
        inputs.push(manifest.to_string());
    }
    for package in packages {
        let path = format!("{}/{manifest}", package.dir);
        if root.join(&path).is_file() {
            inputs.push(path);
        }
    }
    Some(((*command).to_string(), inputs))
}

/// The packages of the repository whose worktree is `root`, when there are at least two of
/// them. Every detector runs and their packages are merged (a directory found twice is one
/// package); the root itself is never one of them (`root_package` says when it is a package
/// too). Only real directories inside the worktree count: a link is not followed.
pub(crate) fn detect(root: &Path) -> Option<Workspace> {
    let cargo = cargo_members(root);
    let package_json = package_json_workspaces(root);
    let pnpm = pnpm_packages(root);
    let go_work = go_work_modules(root);
    let declared = Declared {
        cargo: cargo.is_some(),
        node: package_json.is_some() || pnpm.is_some(),
        go: go_work.is_some(),
    };
    let mut found: Vec<(String, Source)> = Vec::new();
    for (source, dirs) in [
        (Source::Cargo, cargo.unwrap_or_default()),
        (Source::PackageJson, package_json.unwrap_or_default()),
        (Source::Pnpm, pnpm.unwrap_or_default()),
        (Source::GoWork, go_work.unwrap_or_default()),
        (Source::GoModules, go_modules(root)),
        (Source::Directories, layout_directories(root, declared)),
    ] {
        for dir in dirs {
            if !found.iter().any(|(have, _)| *have == dir) {
                found.push((dir, source));
            }
        }
    }
    if found.len() < 2 {
        return None;
    }
    found.sort();
    let mut sources: Vec<Source> = found.iter().map(|(_, source)| *source).collect();
    sources.sort();
    sources.dedup();
    let mut names: Vec<String> = Vec::new();
    let dirs: Vec<String> = found.iter().map(|(dir, _)| dir.clone()).collect();
    let local = local_dependencies(root, &dirs);
    let packages = found
        .into_iter()
        .map(|(dir, source)| {
            let check = unique_name(&dir, &names);
            names.push(check.clone());
            Package {
                inputs: inputs(root, &dir, &local),
                stacks: stack::detect_package(&root.join(&dir), root),
                check,
                dir,
                source,
            }
        })
        .collect::<Vec<Package>>();
    let setup = suggested_setup(root, &packages);
    let root_package = root_package(root, &sources);
    Some(Workspace {
        packages,
        sources,
        setup,
        root_package,
    })
}

impl Workspace {
    /// prove-it.toml with one `[checks.<name>]` table per package.
    pub(crate) fn render(&self) -> String {
        let mut text = String::from(
            "# The checks this repository proves itself with, one per package, written by
# `git prove-it init`. Each runs its `run` script from that script's directory; `inputs` are
# the paths it reads (this file is an input of every check without being listed). The format
# is in git-prove-it's SPEC.md, section 2.1. Add the inputs a package reads from elsewhere in
# the repository.
",
        );
        if self.root_package.is_some() {
            text.push_str(
                "# The root is a package too: verify.sh at the root proves it, and reads every path.\n",
            );
        }
        let stacks: Vec<super::stack::Stack> = self
            .packages
            .iter()
            .flat_map(|package| package.stacks.iter().cloned())
            .collect();
        let protect = super::stack::protect_patterns(&stacks);
        if !protect.is_empty() {
            text.push('\n');
            text.push_str(&super::stack::protect_lines(&protect));
        }
        if let Some((command, inputs)) = &self.setup {
            let inputs: Vec<String> = inputs.iter().map(|i| quoted(i)).collect();
            // Top-level keys must stand before the first table, or they would be its own.
            text.push_str(&format!(
                "
# A commit is proven (run <rev>, run <range>, bisect, the pre-push hook) in a worktree of its
# own, without this checkout's installed dependencies. To install them there before its
# checks, put `{command}` in an executable script of the repository and uncomment:
# min-version = \"{version}\"
# setup = \"scripts/prove-it-setup.sh\"
# setup-inputs = [{}]
",
                inputs.join(", "),
                version = env!("CARGO_PKG_VERSION"),
            ));
        }
        for package in &self.packages {
            let inputs: Vec<String> = package.inputs.iter().map(|i| quoted(i)).collect();
            text.push_str(&format!(
                "\n[checks.{}]\nrun = {}\ninputs = [{}]\n",
                key(&package.check),
                quoted(&package.run()),
                inputs.join(", ")
            ));
        }
        text
    }
}

/// How a package's verify.sh at `path` stands: whether it would run, and if not, why not.
pub(crate) fn script_state(path: &Path) -> Armed {
    use std::os::unix::fs::PermissionsExt;
    match std::fs::metadata(path) {
        Err(_) if std::fs::symlink_metadata(path).is_ok() => Armed::DanglingLink,
        Err(_) => Armed::Missing,
        Ok(meta) if !meta.is_file() => Armed::NotAFile,
        Ok(meta) if meta.permissions().mode() & 0o100 == 0 => Armed::NotExecutable,
        Ok(_) => Armed::Yes,
    }
}

/// Whether `name` may name a check: `[A-Za-z0-9][A-Za-z0-9._-]*`, and not `verify.sh`.
pub(crate) fn is_check_name(name: &str) -> bool {
    crate::proof::is_check_name(name)
}

/// The check name for the package in `dir`: its last component made to fit the name rule
/// (other characters become `-`, leading ones that cannot start a name are dropped), then
/// `-2`, `-3`, ... until it is not in `taken`.
fn unique_name(dir: &str, taken: &[String]) -> String {
    let last = dir.rsplit('/').next().unwrap_or(dir);
    let mapped: String = last
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || "._-".contains(c) {
                c
            } else {
                '-'
            }
        })
        .collect();
    let trimmed = mapped.trim_start_matches(|c: char| !c.is_ascii_alphanumeric());
    let base = if trimmed.is_empty() {
        "package"
    } else {
        trimmed
    };
    let free = |name: &str| is_check_name(name) && !taken.iter().any(|t| t == name);
    if free(base) {
        return base.to_string();
    }
    (2..)
        .map(|n| format!("{base}-{n}"))
        .find(|name| free(name))
        .expect("some suffix is free")
}

/// The inputs of the package in `dir`: the directory, the local packages it depends on (in
/// `local`, transitively), then each file at the root that every test of the ecosystems whose
/// manifest the package holds reads (the workspace's lockfile and manifest), when it exists.
fn inputs(root: &Path, dir: &str, local: &LocalDependencies) -> Vec<String> {
    const LOCKFILES: &[(&str, &[&str])] = &[
        ("Cargo.toml", &["Cargo.lock", "Cargo.toml"]),
        (
            "package.json",
            &[
                "package-lock.json",
                "yarn.lock",
                "pnpm-lock.yaml",
                "pnpm-workspace.yaml",
                "bun.lock",
                "bun.lockb",
                "package.json",
            ],
        ),
        ("go.mod", &["go.work", "go.work.sum", "go.sum"]),
        ("pyproject.toml", &["uv.lock"]),
    ];
    let mut inputs = vec![dir.to_string()];
    for dependency in local.closure(dir) {
        if !inputs.contains(&dependency) {
            inputs.push(dependency);
        }
    }
    for (manifest, lockfiles) in LOCKFILES {
        if !root.join(dir).join(manifest).is_file() {
            continue;
        }
        for lockfile in *lockfiles {
            if root.join(lockfile).is_file() && !inputs.iter().any(|i| i == lockfile) {
                inputs.push((*lockfile).to_string());
            }
        }
    }
    inputs
}

/// The directories of the repository each package depends on directly: workspace packages
/// named in its package.json dependencies, Cargo path dependencies (its own or the
/// workspace's, through `workspace = true`), Go `replace` directives pointing at a local
/// directory. Only real directories inside the worktree count.
#[derive(Debug, Default)]
struct LocalDependencies(std::collections::BTreeMap<String, Vec<String>>);

impl LocalDependencies {
    /// What `dir` depends on, and what those depend on, without `dir` itself, sorted.
    fn closure(&self, dir: &str) -> Vec<String> {
        let mut seen: Vec<String> = Vec::new();
        let mut next: Vec<&str> = vec![dir];
        while let Some(at) = next.pop() {
            for dependency in self.0.get(at).into_iter().flatten() {
                if dependency != dir && !seen.contains(dependency) {
                    seen.push(dependency.clone());
                    next.push(dependency);
                }
            }
        }
        seen.sort();
        seen
    }
}

fn local_dependencies(root: &Path, dirs: &[String]) -> LocalDependencies {
    let read = |path: String| std::fs::read_to_string(root.join(path)).ok();
    let node_names: Vec<(String, String)> = dirs
        .iter()
        .filter_map(|dir| {
            let json = serde_json::from_str::<serde_json::Value>(&read(join(dir, "package.json"))?)
                .ok()?;
            Some((json.get("name")?.as_str()?.to_string(), dir.clone()))
        })
        .collect();
    let workspace_paths = cargo_workspace_paths(root);
    let mut map = std::collections::BTreeMap::new();
    for dir in dirs {
        let mut found: Vec<String> = Vec::new();
        if let Some(text) = read(join(dir, "package.json")) {
            found.extend(node_dependencies(&text, &node_names));
        }
        if let Some(text) = read(join(dir, "Cargo.toml")) {
            found.extend(cargo_path_dependencies(&text, dir, &workspace_paths));
        }
        if let Some(text) = read(join(dir, "go.mod")) {
            found.extend(go_replacements(&text, dir));
        }
        found.retain(|dep| dep != dir && real_dir(root, dep));
        found.sort();
        found.dedup();
        map.insert(dir.clone(), found);
    }
    LocalDependencies(map)
}

/// The directories of the workspace packages (`names`: name, directory) a package.json names
/// in its dependencies, devDependencies, peerDependencies or optionalDependencies.
fn node_dependencies(package_json: &str, names: &[(String, String)]) -> Vec<String> {
    let Ok(json) = serde_json::from_str::<serde_json::Value>(package_json) else {
        return Vec::new();
    };
    [
        "dependencies",
        "devDependencies",
        "peerDependencies",
        "optionalDependencies",
    ]
    .into_iter()
    .filter_map(|key| json.get(key)?.as_object())
    .flat_map(|deps| deps.keys())
    .filter_map(|name| {
        names
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, d)| d.clone())
    })
    .collect()
}

/// The root Cargo.toml's `[workspace.dependencies]` that have a `path`: name to directory.
fn cargo_workspace_paths(root: &Path) -> Vec<(String, String)> {
    let Ok(text) = std::fs::read_to_string(root.join("Cargo.toml")) else {
        return Vec::new();
    };
    let Ok(value) = toml::from_str::<toml::Value>(&text) else {
        return Vec::new();
    };
    value
        .get("workspace")
        .and_then(|w| w.get("dependencies"))
        .and_then(toml::Value::as_table)
        .into_iter()
        .flatten()
        .filter_map(|(name, dep)| {
            let path = dep.get("path")?.as_str()?;
            Some((name.clone(), relative_to("", path)?))
        })
        .collect()
}

/// The directories a package's Cargo.toml (in `dir`) depends on by `path`, in its
/// dependencies, dev-dependencies and build-dependencies (also per target), or through
/// `workspace = true` on a workspace dependency with a path.
fn cargo_path_dependencies(text: &str, dir: &str, workspace: &[(String, String)]) -> Vec<String> {
    let Ok(value) = toml::from_str::<toml::Value>(text) else {
        return Vec::new();
    };
    const KINDS: [&str; 3] = ["dependencies", "dev-dependencies", "build-dependencies"];
    let mut tables: Vec<&toml::Table> = KINDS
        .iter()
        .filter_map(|kind| value.get(kind)?.as_table())
        .collect();
    if let Some(targets) = value.get("target").and_then(toml::Value::as_table) {
        for target in targets.values() {
            tables.extend(KINDS.iter().filter_map(|kind| target.get(kind)?.as_table()));
        }
    }
    let mut found = Vec::new();
    for (name, dep) in tables.into_iter().flatten() {
        if let Some(path) = dep.get("path").and_then(toml::Value::as_str) {
            found.extend(relative_to(dir, path));
        } else if dep.get("workspace").and_then(toml::Value::as_bool) == Some(true) {
            found.extend(
                workspace
                    .iter()
                    .filter(|(n, _)| n == name)
                    .map(|(_, d)| d.clone()),
            );
        }
    }
    found
}

/// The local directories a go.mod (in `dir`) replaces modules with: `replace a => ../b`, on
/// one line or in a `replace ( ... )` block; a target that is not a path (`./`, `../`) is a
/// module version, not a directory.
fn go_replacements(text: &str, dir: &str) -> Vec<String> {
    let mut found = Vec::new();
    let mut in_block = false;
    for line in text.lines() {
        let line = line.split("//").next().unwrap_or_default().trim();
        let directive = if in_block {
            if line.starts_with(')') {
                in_block = false;
                continue;
            }
            line
        } else if let Some(rest) = line.strip_prefix("replace") {
            let rest = rest.trim_start();
            if rest.starts_with('(') {
                in_block = true;
                continue;
            }
            rest
        } else {
            continue;
        };
        let Some((_, target)) = directive.split_once("=>") else {
            continue;
        };
        let target = target.split_whitespace().next().unwrap_or_default();
        if target.starts_with("./") || target.starts_with("../") {
            found.extend(relative_to(dir, target));
        }
    }
    found
}

/// `path`, relative to the repository directory `dir`, as a repository-relative path; `None`
/// when it is absolute or leaves the worktree.
fn relative_to(dir: &str, path: &str) -> Option<String> {
    if path.starts_with('/') || path.contains('\\') {
        return None;
    }
    let mut parts: Vec<&str> = dir.split('/').filter(|p| !p.is_empty()).collect();
    for part in path.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                parts.pop()?;
            }
            part => parts.push(part),
        }
    }
    (!parts.is_empty()).then(|| parts.join("/"))
}

/// Which ecosystems' workspaces the root declares: their manifests say which directories are
/// packages, and the `packages/` and `apps/` layout does not add others of theirs.
#[derive(Debug, Clone, Copy)]
struct Declared {
    cargo: bool,
    node: bool,
    go: bool,
}

/// Which of `sources` makes the root a package too: a Cargo workspace whose root Cargo.toml
/// has a `[package]` (its root package), Go modules beside a root go.mod, or a Node workspace
/// whose root package.json tests something of its own (a `test` script that does not only hand
/// over to the packages', as `npm test --workspaces`, `pnpm -r test` or turbo do).
fn root_package(root: &Path, sources: &[Source]) -> Option<Source> {
    sources.iter().copied().find(|source| match source {
        Source::Cargo => std::fs::read_to_string(root.join("Cargo.toml"))
            .ok()
            .and_then(|text| toml::from_str::<toml::Table>(&text).ok())
            .is_some_and(|manifest| manifest.contains_key("package")),
        Source::GoWork | Source::GoModules => root.join("go.mod").is_file(),
        Source::PackageJson | Source::Pnpm => root_tests_its_own(root),
        Source::Directories => false,
    })
}

/// Whether the root package.json has a `test` script of its own, not one that only hands over
/// to the packages'.
fn root_tests_its_own(root: &Path) -> bool {
    let Ok(text) = std::fs::read_to_string(root.join("package.json")) else {
        return false;
    };
    let Ok(json) = serde_json::from_str::<serde_json::Value>(&text) else {
        return false;
    };
    json.pointer("/scripts/test")
        .and_then(serde_json::Value::as_str)
        .is_some_and(|test| !delegates(test))
}

/// Whether a `test` script hands the tests over to the workspace's packages: a runner of
/// workspaces (turbo, lerna, nx, ultra, wireit, `yarn workspaces foreach`), npm's workspace
/// flags, or pnpm's recursive ones. By words, not substrings: a test runner's own `-w` or `-r`
/// (`jest -w 4`, `mocha -r ts-node/register`) hands nothing over.
fn delegates(test: &str) -> bool {
    let words: Vec<&str> = test.split_whitespace().collect();
    let has = |word: &str| words.contains(&word);
    ["turbo", "lerna", "nx", "ultra", "wireit"]
        .iter()
        .any(|runner| has(runner))
        || words
            .windows(2)
            .any(|pair| pair == ["workspaces", "foreach"])
        || ["--workspaces", "--workspace", "-ws"]
            .iter()
            .any(|flag| has(flag))
        || (has("npm") && has("-w"))
        || (has("pnpm")
            && ["-r", "--recursive", "--filter", "-F"]
                .iter()
                .any(|flag| has(flag)))
}

/// The member directories of the root Cargo.toml's `[workspace]`, globs expanded to the
/// directories holding a Cargo.toml, `exclude` taken out; `None` without a `[workspace]`.
fn cargo_members(root: &Path) -> Option<Vec<String>> {
    let text = std::fs::read_to_string(root.join("Cargo.toml")).ok()?;
    let document = toml::de::DeTable::parse(&text).ok()?;
    let workspace = document
        .get_ref()
        .get("workspace")
        .and_then(|w| w.get_ref().as_table())?;
    let strings = |key: &str| -> Vec<String> {
        workspace
            .get(key)
            .and_then(|value| value.get_ref().as_array())
            .map(|items| {
                items
                    .iter()
                    .filter_map(|item| item.get_ref().as_str().map(str::to_string))
                    .collect()
            })
            .unwrap_or_default()
    };
    let members = strings("members");
    let exclude = strings("exclude");
    Some(expand_all(root, &members, &exclude, "Cargo.toml"))
}

/// The root package.json's `workspaces`: an array of patterns, or `{"packages": [...]}`;
/// `None` without one.
fn package_json_workspaces(root: &Path) -> Option<Vec<String>> {
    let text = std::fs::read_to_string(root.join("package.json")).ok()?;
    let json = serde_json::from_str::<serde_json::Value>(&text).ok()?;
    let patterns = match json.get("workspaces")? {
        serde_json::Value::Array(items) => Some(items),
        serde_json::Value::Object(object) => {
            object.get("packages").and_then(serde_json::Value::as_array)
        }
        _ => None,
    };
    let patterns: Vec<String> = patterns
        .into_iter()
        .flatten()
        .filter_map(|p| p.as_str().map(str::to_string))
        .collect();
    Some(node_patterns(root, &patterns))
}

/// pnpm-workspace.yaml's `packages`; `None` without the file.
fn pnpm_packages(root: &Path) -> Option<Vec<String>> {
    let text = std::fs::read_to_string(root.join("pnpm-workspace.yaml")).ok()?;
    // A file that is not YAML still says this is a pnpm workspace: it declares no package.
    let yaml = serde_norway::from_str::<serde_norway::Value>(&text).unwrap_or_default();
    let patterns: Vec<String> = yaml
        .get("packages")
        .and_then(serde_norway::Value::as_sequence)
        .into_iter()
        .flatten()
        .filter_map(|p| p.as_str().map(str::to_string))
        .collect();
    Some(node_patterns(root, &patterns))
}

/// Node workspace patterns, `!pattern` excluding, expanded to directories holding a
/// package.json.
fn node_patterns(root: &Path, patterns: &[String]) -> Vec<String> {
    let (exclude, include): (Vec<String>, Vec<String>) =
        patterns.iter().cloned().partition(|p| p.starts_with('!'));
    let exclude: Vec<String> = exclude
        .iter()
        .map(|p| p.trim_start_matches('!').to_string())
        .collect();
    expand_all(root, &include, &exclude, "package.json")
}

/// The modules go.work `use`s, each a directory holding a go.mod; `None` without a go.work.
fn go_work_modules(root: &Path) -> Option<Vec<String>> {
    let text = std::fs::read_to_string(root.join("go.work")).ok()?;
    let mut dirs = Vec::new();
    let mut in_block = false;
    for line in text.lines() {
        let line = line.split("//").next().unwrap_or_default().trim();
        let path = if in_block {
            if line.starts_with(')') {
                in_block = false;
                continue;
            }
            line
        } else if let Some(rest) = line.strip_prefix("use")
            && (rest.is_empty() || rest.starts_with([' ', '\t', '(']))
        {
            let rest = rest.trim_start();
            match rest.strip_prefix('(') {
                Some(after) => {
                    in_block = true;
                    after.trim()
                }
                None => rest,
            }
        } else {
            continue;
        };
        let path = path.trim_matches(|c| c == '"' || c == '`');
        if path.is_empty() {
            continue;
        }
        if let Some(dir) = normalise(path)
            && real_dir(root, &dir)
            && root.join(&dir).join("go.mod").is_file()
            && !dirs.contains(&dir)
        {
            dirs.push(dir);
        }
    }
    Some(dirs)
}

/// Without a go.work, the directories below the root (to [`GO_DEPTH`]) holding a go.mod.
fn go_modules(root: &Path) -> Vec<String> {
    if root.join("go.work").is_file() {
        return Vec::new();
    }
    let mut found = Vec::new();
    let mut level = vec![String::new()];
    for _ in 0..GO_DEPTH {
        let mut next = Vec::new();
        for dir in &level {
            for child in subdirectories(root, dir) {
                // Go itself ignores directories whose names start with `_` or `.`.
                if child.rsplit('/').next().is_some_and(|n| n.starts_with('_')) {
                    continue;
                }
                if root.join(&child).join("go.mod").is_file() {
                    found.push(child.clone());
                }
                next.push(child);
            }
        }
        level = next;
    }
    found
}

/// The directories under `packages/` and `apps/` holding the files of a stack init knows,
/// other than a Cargo, Node or Go package of a workspace the root declares: its manifest says
/// which of them are packages (a pnpm workspace's `!apps/legacy` stays out).
fn layout_directories(root: &Path, declared: Declared) -> Vec<String> {
    let undeclared = |stack: &Stack| match stack.name.split(' ').next() {
        Some("Rust") => !declared.cargo,
        Some("Node") => !declared.node,
        Some("Go") => !declared.go,
        _ => true,
    };
    ["packages", "apps"]
        .into_iter()
        .filter(|base| real_dir(root, base))
        .flat_map(|base| subdirectories(root, base))
        .filter(|dir| stack::detect(&root.join(dir)).iter().any(undeclared))
        .collect()
}

/// Every pattern of `include` expanded to the directories holding `marker`, less those of
/// `exclude`, each once, in the order found.
fn expand_all(root: &Path, include: &[String], exclude: &[String], marker: &str) -> Vec<String> {
    let excluded: Vec<String> = exclude
        .iter()
        .flat_map(|pattern| expand(root, pattern, marker))
        .collect();
    let mut dirs = Vec::new();
    for pattern in include {
        for dir in expand(root, pattern, marker) {
            if !excluded.contains(&dir) && !dirs.contains(&dir) {
                dirs.push(dir);
            }
        }
    }
    dirs
}

/// The directories a workspace pattern (`crates/*`, `packages/**`, `tools/cli`) names that
/// hold `marker`, repository-relative. `*` and `?` match within one component and not a
/// leading `.`; `**` matches any number of components, to [`GLOB_DEPTH`]. A pattern leaving
/// the worktree (`..`, a leading `/`) names nothing; neither does the root itself.
fn expand(root: &Path, pattern: &str, marker: &str) -> Vec<String> {
    let Some(pattern) = normalise(pattern) else {
        return Vec::new();
    };
    let components: Vec<&str> = pattern.split('/').collect();
    let mut found = Vec::new();
    walk(root, "", &components, marker, 0, &mut found);
    found
}

fn walk(
    root: &Path,
    dir: &str,
    components: &[&str],
    marker: &str,
    depth: usize,
    found: &mut Vec<String>,
) {
    let Some((first, rest)) = components.split_first() else {
        if !dir.is_empty()
            && root.join(dir).join(marker).is_file()
            && !found.iter().any(|f| f == dir)
        {
            found.push(dir.to_string());
        }
        return;
    };
    if *first == "**" {
        walk(root, dir, rest, marker, depth, found);
        if depth < GLOB_DEPTH {
            for child in subdirectories(root, dir) {
                walk(root, &child, components, marker, depth + 1, found);
            }
        }
    } else if first.contains(['*', '?']) {
        for child in subdirectories(root, dir) {
            let name = child.rsplit('/').next().unwrap_or(&child);
            if wildcard(first, name) {
                walk(root, &child, rest, marker, depth + 1, found);
            }
        }
    } else {
        let child = join(dir, first);
        if real_dir(root, &child) {
            walk(root, &child, rest, marker, depth + 1, found);
        }
    }
}

/// Whether the folder name `name` matches `pattern`, a component of a workspace's member glob:
/// `*` is any run of characters, `?` any one, `[...]` one of a set (git's wildmatch, as gix
/// implements it).
fn wildcard(pattern: &str, name: &str) -> bool {
    use gix::bstr::ByteSlice;
    gix::glob::wildmatch(
        pattern.as_bytes().as_bstr(),
        name.as_bytes().as_bstr(),
        gix::glob::wildmatch::Mode::NO_MATCH_SLASH_LITERAL,
    )
}

/// The directories directly in `dir` (repository-relative, `""` for the root), sorted: real
/// directories only (no links), not hidden, not one of [`SKIPPED`], with names that are text
/// without control characters, so that they can be written into prove-it.toml and verify.sh.
fn subdirectories(root: &Path, dir: &str) -> Vec<String> {
    let Ok(entries) = std::fs::read_dir(root.join(dir)) else {
        return Vec::new();
    };
    let mut names: Vec<String> = entries
        .filter_map(|entry| {
            let entry = entry.ok()?;
            if !entry.file_type().ok()?.is_dir() {
                return None;
            }
            let name = entry.file_name().into_string().ok()?;
            (!name.starts_with('.')
                && !SKIPPED.contains(&name.as_str())
                && !name.chars().any(char::is_control))
            .then_some(name)
        })
        .collect();
    names.sort();
    names.into_iter().map(|name| join(dir, &name)).collect()
}

/// Whether `dir` (repository-relative) is a directory inside the worktree, reached without
/// following a link.
fn real_dir(root: &Path, dir: &str) -> bool {
    let mut path = root.to_path_buf();
    dir.split('/').all(|component| {
        path.push(component);
        std::fs::symlink_metadata(&path).is_ok_and(|meta| meta.is_dir())
    })
}

/// `pattern` as a repository-relative path: `./` and `.` components and trailing `/` dropped;
/// `None` for one that is absolute, climbs out with `..`, names the root, or holds a `\` or a
/// control character.
fn normalise(pattern: &str) -> Option<String> {
    if pattern.starts_with('/') || pattern.contains('\\') || pattern.chars().any(char::is_control) {
        return None;
    }
    let components: Vec<&str> = pattern
        .split('/')
        .filter(|c| !c.is_empty() && *c != ".")
        .collect();
    if components.is_empty() || components.contains(&"..") {
        return None;
    }
    Some(components.join("/"))
}

fn join(dir: &str, name: &str) -> String {
    if dir.is_empty() {
        name.to_string()
    } else {
        format!("{dir}/{name}")
    }
}

/// `name` as a TOML key: bare where it may be, else quoted (toml_edit's choice).
fn key(name: &str) -> String {
    toml_edit::Key::new(name).display_repr().into_owned()
}

/// `text` as a TOML string (toml_edit's choice of quoting and escapes).
fn quoted(text: &str) -> String {
    toml_edit::Value::from(text).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tree(files: &[(&str, &str)]) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        for (name, content) in files {
            let path = dir.path().join(name);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, content).unwrap();
        }
        dir
    }

    /// Each package's directory, check name and inputs.
    fn found(files: &[(&str, &str)]) -> Option<Vec<(String, String, Vec<String>)>> {
        let dir = tree(files);
        detect(dir.path()).map(|workspace| {
            workspace
                .packages
                .into_iter()
                .map(|p| (p.dir, p.check, p.inputs))
                .collect()
        })
    }

    fn strings(items: &[&str]) -> Vec<String> {
        items.iter().map(|s| (*s).to_string()).collect()
    }

    #[test]
    fn cargo_members_globs_and_excludes_are_read_from_the_root_manifest() {
        let dir = tree(&[
            (
                "Cargo.toml",
                "[workspace]\nmembers = [\"crates/*\", \"tools/cli\", \"../outside\", \".\"]\nexclude = [\"crates/old\"]\n",
            ),
            ("Cargo.lock", ""),
            ("crates/a/Cargo.toml", "[package]\n"),
            ("crates/b/Cargo.toml", "[package]\n"),
            ("crates/old/Cargo.toml", "[package]\n"),
            ("crates/notes/README.md", ""),
            ("tools/cli/Cargo.toml", "[package]\n"),
        ]);
        let workspace = detect(dir.path()).unwrap();
        assert_eq!(workspace.sources, [Source::Cargo]);
        let packages: Vec<(&str, &str, &[String])> = workspace
            .packages
            .iter()
            .map(|p| (p.dir.as_str(), p.check.as_str(), p.inputs.as_slice()))
            .collect();
        assert_eq!(
            packages,
            [
                (
                    "crates/a",
                    "a",
                    &strings(&["crates/a", "Cargo.lock", "Cargo.toml"])[..]
                ),
                (
                    "crates/b",
                    "b",
                    &strings(&["crates/b", "Cargo.lock", "Cargo.toml"])[..]
                ),
                (
                    "tools/cli",
                    "cli",
                    &strings(&["tools/cli", "Cargo.lock", "Cargo.toml"])[..]
                ),
            ]
        );
        let a = &workspace.packages[0];
        assert_eq!(a.run(), "crates/a/verify.sh");
        assert_eq!(a.stacks[0].name, "Rust");
        assert!(a.verify_script().contains("# cargo test --quiet\n"));
        assert!(
            a.verify_script()
                .contains("\ngit diff --check \"$base\" -- .\n")
        );
    }

    #[test]
    fn the_root_is_a_package_by_its_cargo_package_its_go_mod_or_its_own_tests() {
        let root_package =
            |files: &[(&str, &str)]| detect(tree(files).path()).unwrap().root_package;
        let members = [
            ("crates/a/Cargo.toml", "[package]\n"),
            ("crates/b/Cargo.toml", "[package]\n"),
        ];
        let mut files = vec![("Cargo.toml", "[workspace]\nmembers = [\"crates/*\"]\n")];
        files.extend(members);
        assert_eq!(root_package(&files), None);
        files[0] = (
            "Cargo.toml",
            "[package]\nname = \"x\"\n[workspace]\nmembers = [\"crates/*\"]\n",
        );
        assert_eq!(root_package(&files), Some(Source::Cargo));
        let go = [
            ("go.mod", "module example.com/x\n"),
            ("tools/go.mod", "module example.com/x/tools\n"),
            ("cmd/y/go.mod", "module example.com/y\n"),
        ];
        assert_eq!(root_package(&go), Some(Source::GoModules));
        let node = |test: &str| {
            let root =
                format!(r#"{{"workspaces": ["packages/*"], "scripts": {{"test": "{test}"}}}}"#);
            root_package(&[
                ("package.json", root.as_str()),
                ("packages/a/package.json", "{}"),
                ("packages/b/package.json", "{}"),
            ])
        };
        // remark's: its tests are at the root, and read every package.
        assert_eq!(
            node("npm run build && node --conditions development test.js"),
            Some(Source::PackageJson)
        );
        for delegating in [
            "npm test --workspaces",
            "npm run test -ws",
            "npm test -w packages/a",
            "pnpm -r test",
            "pnpm --filter ./packages/** test",
            "turbo run test",
            "lerna run test",
            "yarn workspaces foreach run test",
        ] {
            assert_eq!(node(delegating), None, "{delegating}");
        }
        // A test runner's own -w or -r hands nothing over.
        for own in ["jest -w 4", "mocha -r ts-node/register 'test/**/*.ts'"] {
            assert_eq!(node(own), Some(Source::PackageJson), "{own}");
        }
        let without = [
            ("package.json", r#"{"workspaces": ["packages/*"]}"#),
            ("packages/a/package.json", "{}"),
            ("packages/b/package.json", "{}"),
        ];
        assert_eq!(root_package(&without), None);
    }

    #[test]
    fn a_cargo_manifest_without_a_workspace_or_not_toml_has_no_members() {
        let crates = [
            ("crates/a/Cargo.toml", "[package]\n"),
            ("crates/b/Cargo.toml", "[package]\n"),
        ];
        let mut files = vec![("Cargo.toml", "[package]\nname = \"x\"\n")];
        files.extend(crates);
        assert_eq!(found(&files), None);
        files[0] = ("Cargo.toml", "[workspace\nmembers = [\"crates/*\"]\n");
        assert_eq!(found(&files), None);
    }

    #[test]
    fn local_dependencies_are_read_from_each_ecosystem_and_followed() {
        assert_eq!(
            node_dependencies(
                r#"{"dependencies": {"remark-parse": "*", "left-pad": "1"}, "devDependencies": {"util": "*"}}"#,
                &[
                    ("remark-parse".into(), "packages/remark-parse".into()),
                    ("util".into(), "packages/util".into())
                ]
            ),
            ["packages/remark-parse", "packages/util"]
        );
        let workspace = [("shared".to_string(), "crates/shared".to_string())];
        assert_eq!(
            cargo_path_dependencies(
                "[dependencies]\nb = { path = \"../b\" }\nserde = \"1\"\nshared = { workspace = true }\n[target.'cfg(unix)'.dev-dependencies]\nc = { path = \"../../tools/c\" }\n",
                "crates/a",
                &workspace
            ),
            ["crates/b", "crates/shared", "tools/c"]
        );
        assert_eq!(
            go_replacements(
                "module x\nreplace example.com/y => ../y\nreplace (\n  example.com/z v1.0.0 => ./z // local\n  example.com/w => example.com/w v1.2.0\n)\nreplace example.com/out => ../../../out\n",
                "mods/x"
            ),
            ["mods/y", "mods/x/z"]
        );
        let local = LocalDependencies(
            [
                ("a".to_string(), vec!["b".to_string()]),
                ("b".to_string(), vec!["c".to_string(), "a".to_string()]),
            ]
            .into_iter()
            .collect(),
        );
        assert_eq!(local.closure("a"), ["b", "c"]);
    }

    #[test]
    fn npm_workspaces_take_an_array_or_an_object_and_the_root_lockfiles() {
        let packages = [
            ("packages/web/package.json", "{}"),
            ("packages/api/package.json", "{}"),
            ("packages/docs/README.md", ""),
        ];
        for manifest in [
            r#"{"workspaces": ["packages/*"]}"#,
            r#"{"workspaces": {"packages": ["packages/*"], "nohoist": ["**"]}}"#,
        ] {
            let mut files = vec![("package.json", manifest), ("yarn.lock", "")];
            files.extend(packages);
            assert_eq!(
                found(&files).unwrap(),
                [
                    (
                        "packages/api".into(),
                        "api".into(),
                        strings(&["packages/api", "yarn.lock", "package.json"])
                    ),
                    (
                        "packages/web".into(),
                        "web".into(),
                        strings(&["packages/web", "yarn.lock", "package.json"])
                    ),
                ],
                "{manifest}"
            );
        }
    }

    #[test]
    fn pnpm_workspace_packages_exclude_negated_patterns_and_stacks_use_the_root_lockfile() {
        let dir = tree(&[
            ("package.json", "{}"),
            (
                "pnpm-workspace.yaml",
                "packages:\n  - 'apps/**'\n  - '!apps/legacy'\n",
            ),
            ("pnpm-lock.yaml", ""),
            (
                "apps/site/package.json",
                r#"{"scripts": {"test": "vitest"}}"#,
            ),
            ("apps/nested/deep/package.json", "{}"),
            ("apps/legacy/package.json", "{}"),
            ("apps/site/node_modules/dep/package.json", "{}"),
        ]);
        let workspace = detect(dir.path()).unwrap();
        assert_eq!(workspace.sources, [Source::Pnpm]);
        let dirs: Vec<&str> = workspace.packages.iter().map(|p| p.dir.as_str()).collect();
        assert_eq!(dirs, ["apps/nested/deep", "apps/site"]);
        let site = &workspace.packages[1];
        assert_eq!(
            site.inputs,
            [
                "apps/site",
                "pnpm-lock.yaml",
                "pnpm-workspace.yaml",
                "package.json"
            ]
        );
        // The package has no lockfile of its own: pnpm is told by the workspace's.
        assert_eq!(site.stacks[0].name, "Node (pnpm)");
        assert_eq!(site.stacks[0].checks, ["pnpm test"]);
    }

    #[test]
    fn go_work_use_directives_in_lines_and_blocks() {
        let dir = tree(&[
            (
                "go.work",
                "go 1.22\n\nuse ./tools // the CLI\nuse (\n\t./svc/api\n\t\"./svc/web\"\n\t.\n\t./gone\n)\n",
            ),
            ("go.work.sum", ""),
            ("go.mod", "module root\n"),
            ("tools/go.mod", "module tools\n"),
            ("svc/api/go.mod", "module api\n"),
            ("svc/web/go.mod", "module web\n"),
            ("svc/unused/go.mod", "module unused\n"),
        ]);
        let workspace = detect(dir.path()).unwrap();
        assert_eq!(workspace.sources, [Source::GoWork]);
        let packages: Vec<(&str, &[String])> = workspace
            .packages
            .iter()
            .map(|p| (p.dir.as_str(), p.inputs.as_slice()))
            .collect();
        assert_eq!(
            packages,
            [
                (
                    "svc/api",
                    &strings(&["svc/api", "go.work", "go.work.sum"])[..]
                ),
                (
                    "svc/web",
                    &strings(&["svc/web", "go.work", "go.work.sum"])[..]
                ),
                ("tools", &strings(&["tools", "go.work", "go.work.sum"])[..]),
            ]
        );
        assert_eq!(workspace.packages[0].stacks[0].name, "Go");
    }

    #[test]
    fn go_modules_without_go_work_are_found_to_depth_three_outside_vendor() {
        assert_eq!(
            found(&[
                ("a/go.mod", "module a\n"),
                ("x/y/b/go.mod", "module b\n"),
                ("x/y/z/too-deep/go.mod", "module deep\n"),
                ("vendor/v/go.mod", "module v\n"),
                ("node_modules/n/go.mod", "module n\n"),
                ("_old/go.mod", "module old\n"),
                (".hidden/go.mod", "module hidden\n"),
            ])
            .unwrap(),
            [
                ("a".into(), "a".into(), strings(&["a"])),
                ("x/y/b".into(), "b".into(), strings(&["x/y/b"])),
            ]
        );
        // One module below the root is not several.
        assert_eq!(found(&[("go.mod", ""), ("tools/go.mod", "")]), None);
    }

    #[test]
    fn packages_and_apps_directories_count_when_they_hold_a_stack() {
        let dir = tree(&[
            ("packages/lib/pyproject.toml", "[project]\n"),
            ("apps/server/Makefile", "test:\n\ttrue\n"),
            ("apps/assets/logo.svg", ""),
            ("uv.lock", ""),
        ]);
        let workspace = detect(dir.path()).unwrap();
        assert_eq!(workspace.sources, [Source::Directories]);
        let packages: Vec<(&str, &str, &[String])> = workspace
            .packages
            .iter()
            .map(|p| (p.dir.as_str(), p.check.as_str(), p.inputs.as_slice()))
            .collect();
        assert_eq!(
            packages,
            [
                ("apps/server", "server", &strings(&["apps/server"])[..]),
                (
                    "packages/lib",
                    "lib",
                    &strings(&["packages/lib", "uv.lock"])[..]
                ),
            ]
        );
        assert_eq!(workspace.packages[1].stacks[0].name, "Python (uv)");
    }

    #[test]
    fn one_package_is_not_a_workspace() {
        assert_eq!(found(&[("Cargo.toml", "[package]\n")]), None);
        assert_eq!(
            found(&[
                ("Cargo.toml", "[workspace]\nmembers = [\"crates/*\"]\n"),
                ("crates/only/Cargo.toml", ""),
            ]),
            None
        );
        assert_eq!(found(&[("packages/one/package.json", "{}")]), None);
    }

    #[test]
    fn a_directory_found_by_two_detectors_is_one_package() {
        let dir = tree(&[
            ("Cargo.toml", "[workspace]\nmembers = [\"packages/*\"]\n"),
            ("Cargo.lock", ""),
            ("package-lock.json", ""),
            ("packages/core/Cargo.toml", ""),
            ("packages/core/package.json", "{}"),
            ("packages/ui/package.json", "{}"),
        ]);
        let workspace = detect(dir.path()).unwrap();
        assert_eq!(workspace.sources, [Source::Cargo, Source::Directories]);
        let core = &workspace.packages[0];
        assert_eq!(core.source, Source::Cargo);
        assert_eq!(
            core.inputs,
            [
                "packages/core",
                "Cargo.lock",
                "Cargo.toml",
                "package-lock.json"
            ]
        );
        assert_eq!(
            workspace.packages[1].inputs,
            ["packages/ui", "package-lock.json"]
        );
    }

    #[test]
    fn a_linked_directory_is_not_followed() {
        let outside = tree(&[("Cargo.toml", "[package]\n")]);
        let dir = tree(&[
            (
                "Cargo.toml",
                "[workspace]\nmembers = [\"crates/*\", \"linked\"]\n",
            ),
            ("crates/a/Cargo.toml", ""),
        ]);
        std::os::unix::fs::symlink(outside.path(), dir.path().join("crates/b")).unwrap();
        std::os::unix::fs::symlink(outside.path(), dir.path().join("linked")).unwrap();
        assert_eq!(found_in(dir.path()), None);
    }

    fn found_in(root: &Path) -> Option<Vec<String>> {
        detect(root).map(|w| w.packages.into_iter().map(|p| p.dir).collect())
    }

    #[test]
    fn check_names_fit_the_rule_and_are_unique() {
        let mut taken = Vec::new();
        for (dir, expected) in [
            ("crates/api", "api"),
            ("services/api", "api-2"),
            ("other/api", "api-3"),
            ("pkgs/@scope+name", "scope-name"),
            ("pkgs/_private", "private"),
            ("pkgs/---", "package"),
            ("pkgs/verify.sh", "verify.sh-2"),
            ("pkgs/web.app", "web.app"),
            ("pkgs/émoji", "moji"),
        ] {
            let name = unique_name(dir, &taken);
            assert_eq!(name, expected, "{dir}");
            assert!(is_check_name(&name), "{name}");
            taken.push(name);
        }
        assert!(!is_check_name("verify.sh"));
        assert!(!is_check_name("-a"));
        assert!(!is_check_name(""));
        assert!(!is_check_name("a b"));
    }

    #[test]
    fn keys_and_strings_read_back_as_written() {
        assert_eq!(key("api"), "api");
        assert_eq!(key("web.v2"), "\"web.v2\"");
        for text in ["api/verify.sh", "a\"b", "back\\slash", "tab\there", "it's"] {
            let line = format!("{} = {}\n", key("k.1"), quoted(text));
            let table: toml::Table = toml::from_str(&line).unwrap();
            assert_eq!(table["k.1"].as_str(), Some(text), "{line}");
        }
    }

    #[test]
    fn wildcards_match_within_one_component() {
        assert!(wildcard("*", "a"));
        assert!(wildcard("app-*", "app-web"));
        assert!(!wildcard("app-*", "lib-web"));
        assert!(wildcard("v?", "v1"));
        assert!(!wildcard("v?", "v10"));
        assert!(wildcard("v[0-9]", "v1"));
        assert!(!wildcard("v[0-9]", "va"));
        assert_eq!(normalise("./crates/a/"), Some("crates/a".into()));
        assert_eq!(normalise("/abs"), None);
        assert_eq!(normalise("a/../b"), None);
        assert_eq!(normalise("."), None);
    }

    /// The rendered checks file is read back as TOML: every name, run and inputs as detected,
    /// a name with a `.` and a path with a quote included.
    #[test]
    fn the_checks_file_parses_back_to_the_packages() {
        let package = |dir: &str, check: &str, inputs: &[&str]| Package {
            dir: dir.into(),
            check: check.into(),
            inputs: strings(inputs),
            stacks: Vec::new(),
            source: Source::Directories,
        };
        let workspace = Workspace {
            packages: vec![
                package("crates/a", "a", &["crates/a", "Cargo.lock"]),
                package("apps/web.app", "web.app", &["apps/web.app"]),
                package(
                    "apps/say \"hi\"",
                    "say-hi",
                    &["apps/say \"hi\"", "yarn.lock"],
                ),
            ],
            sources: vec![Source::Directories],
            setup: Some((
                "npm ci".into(),
                vec!["package-lock.json".into(), "package.json".into()],
            )),
            root_package: None,
        };
        let text = workspace.render();
        assert!(text.starts_with("# "), "{text}");
        // The suggested setup, once uncommented, is a valid part of the file.
        assert!(
            text.contains("put `npm ci` in an executable script"),
            "{text}"
        );
        let uncommented = text
            .replace("# min-version =", "min-version =")
            .replace("# setup =", "setup =")
            .replace("# setup-inputs =", "setup-inputs =");
        let table: toml::Table = uncommented.parse().unwrap();
        assert_eq!(table["setup"].as_str(), Some("scripts/prove-it-setup.sh"));
        assert_eq!(
            table["setup-inputs"].as_array().map(Vec::len),
            Some(2),
            "{text}"
        );
        assert!(text.contains("SPEC.md"), "{text}");
        let document = toml::de::DeTable::parse(&text).unwrap();
        let checks = document.get_ref()["checks"].get_ref().as_table().unwrap();
        let read: Vec<(String, String, Vec<String>)> = checks
            .iter()
            .map(|(name, check)| {
                let check = check.get_ref().as_table().unwrap();
                assert_eq!(check.len(), 2, "only run and inputs");
                let inputs = check["inputs"]
                    .get_ref()
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|i| i.get_ref().as_str().unwrap().to_string())
                    .collect();
                (
                    name.get_ref().to_string(),
                    check["run"].get_ref().as_str().unwrap().to_string(),
                    inputs,
                )
            })
            .collect();
        let mut expected: Vec<(String, String, Vec<String>)> = workspace
            .packages
            .iter()
            .map(|p| (p.check.clone(), p.run(), p.inputs.clone()))
            .collect();
        expected.sort();
        let mut read = read;
        read.sort();
        assert_eq!(read, expected);
    }
}
