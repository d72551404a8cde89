//! How this repository proves itself right after the README's first command: its check `unit`
//! (`.ci/checks/unit.sh`) builds the unit tests in the release profile that `cargo install` has
//! just built in the same target directory. It must reuse every dependency the install built:
//! a dev-dependency that changes a shared dependency's features (`regex` changing
//! regex-automata's, which bstr and every gix crate depend on) builds gix again, and the first
//! command takes twice as long.

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;
use std::process::Command;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// This repository's own crates, built again for their tests whatever their features.
const OURS: [&str; 3] = ["git-prove-it", "git-prove-it-core", "git-prove-it-claim"];

/// Whether `package` ("name v1.2.3") is one of this repository's crates.
fn ours(package: &str) -> bool {
    OURS.contains(&package.split(' ').next().unwrap_or(package))
}

/// The package named `name` of a build, any version.
fn named<'a>(packages: impl IntoIterator<Item = &'a String>, name: &str) -> Vec<&'a String> {
    packages
        .into_iter()
        .filter(|package| package.split(' ').next() == Some(name))
        .collect()
}

/// One build's packages as cargo resolves them: each package's features, and the packages that
/// depend on it.
#[derive(Default)]
struct Build {
    features: BTreeMap<String, String>,
    dependents: BTreeMap<String, BTreeSet<String>>,
}

/// The build of the workspace along `edges` (`normal,build`: what the install builds;
/// `normal,build,dev`: what the unit tests build), from `cargo tree`.
fn build(edges: &str) -> Build {
    let out = Command::new(env!("CARGO"))
        .current_dir(root())
        .args([
            "tree",
            "--frozen",
            "--workspace",
            "--no-dedupe",
            "--prefix",
            "depth",
        ])
        .args(["-e", edges, "--format", "{p}|{f}"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut build = Build::default();
    let mut path: Vec<String> = Vec::new();
    for line in String::from_utf8(out.stdout).unwrap().lines() {
        let Some((package, features)) = line.split_once('|') else {
            continue;
        };
        let depth_len = package.chars().take_while(char::is_ascii_digit).count();
        let Ok(depth) = package[..depth_len].parse::<usize>() else {
            continue;
        };
        // "name v1.2.3 (/path)" or "name v1.2.3": the name and version.
        let name = package[depth_len..]
            .split(' ')
            .take(2)
            .collect::<Vec<_>>()
            .join(" ");
        path.truncate(depth);
        if let Some(parent) = path.last() {
            build
                .dependents
                .entry(name.clone())
                .or_default()
                .insert(parent.clone());
        }
        build.features.insert(name.clone(), features.to_string());
        path.push(name);
    }
    build
}

/// The packages of the install's build that the unit tests' build compiles again: those whose
/// features differ, and everything of the install's that depends on one of them.
fn built_again(install: &Build, tests: &Build) -> BTreeSet<String> {
    let mut again: BTreeSet<String> = install
        .features
        .iter()
        .filter(|(package, features)| tests.features.get(*package) != Some(features))
        .map(|(name, _)| name.clone())
        .collect();
    let mut todo: Vec<String> = again.iter().cloned().collect();
    while let Some(name) = todo.pop() {
        for dependent in install.dependents.get(&name).into_iter().flatten() {
            if again.insert(dependent.clone()) {
                todo.push(dependent.clone());
            }
        }
    }
    again
}

#[test]
fn the_unit_checks_build_reuses_every_dependency_the_install_built() {
    let install = build("normal,build");
    let tests = build("normal,build,dev");
    assert_eq!(named(install.features.keys(), "gix").len(), 1);
    let again = built_again(&install, &tests);
    // A dependency whose features the tests change is built again (`similar` for insta's
    // `inline`, `quick-xml` for junit-parser's `escape-html`): cheap, while only our crates
    // depend on it. One that another dependency depends on drags that one along, and gix with
    // it.
    let dragged: Vec<&String> = again
        .iter()
        .filter(|package| !ours(package))
        .filter(|package| {
            let dependents = install.dependents.get(*package).into_iter().flatten();
            dependents.into_iter().any(|dependent| !ours(dependent))
        })
        .collect();
    assert!(
        dragged.is_empty(),
        "the unit tests' build would compile these dependencies of the install again: {dragged:?}"
    );
    assert!(again.len() < 8, "{again:?}");
}

#[test]
fn the_unit_profile_leaves_the_installs_dependencies_as_they_are() {
    let install = build("normal,build");
    let tests = build("normal,build,dev");
    let again = built_again(&install, &tests);
    let text = std::fs::read_to_string(root().join(".ci/checks/unit-profile.toml")).unwrap();
    let profile: toml::Table = toml::from_str(&text).unwrap();
    let packages = profile["profile"]["release"]["package"].as_table().unwrap();
    assert!(packages.contains_key("insta"), "{packages:?}");
    for name in packages.keys() {
        // An override changes a build: only of a package the tests build anyway.
        assert!(
            !named(tests.features.keys(), name).is_empty(),
            "{name}: the unit tests do not build it"
        );
        let installed = named(install.features.keys(), name);
        assert!(
            installed.iter().all(|package| again.contains(*package)),
            "{name}: the install built it, and the unit profile would build it again"
        );
    }
}
