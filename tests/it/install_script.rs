//! install.sh against a release served on 127.0.0.1, packaged by the release workflow's own
//! steps, and the one archive name that the workflow, `cargo binstall` and install.sh share.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};

use assert_cmd::cargo::cargo_bin;
use serde_json::Value;

use crate::harness::{built_path, hermetic};

const ROOT: &str = env!("CARGO_MANIFEST_DIR");
const VERSION: &str = env!("CARGO_PKG_VERSION");
/// What install.sh picks on the machine running the tests (Linux always gets the musl build).
const HERE: &str = "x86_64-unknown-linux-musl";

/// The programs install.sh and the workflow's steps run, and nothing else.
const TOOLS: &[&str] = &[
    "sh",
    "bash",
    "curl",
    "tar",
    "gzip",
    "sha256sum",
    "uname",
    "mktemp",
    "sed",
    "head",
    "cut",
    "cp",
    "chmod",
    "mv",
    "mkdir",
    "rm",
    "cat",
    "man",
    "git",
];

/// The one name pattern: the workflow, binstall's metadata and install.sh must all produce it.
fn archive_dir(version: &str, target: &str) -> String {
    format!("git-prove-it-{version}-{target}")
}

fn workflow() -> Value {
    let text = std::fs::read_to_string(Path::new(ROOT).join(".github/workflows/release.yml"))
        .expect("the release workflow exists");
    serde_norway::from_str(&text).expect("the release workflow is YAML")
}

/// The shell of the workflow step named `name` in job `job`, with the matrix target filled in.
fn step(workflow: &Value, job: &str, name: &str, target: &str) -> String {
    let steps = workflow["jobs"][job]["steps"]
        .as_array()
        .expect("the job has steps");
    let step = steps
        .iter()
        .find(|step| step["name"] == name)
        .unwrap_or_else(|| panic!("job {job} has a step named {name}"));
    step["run"]
        .as_str()
        .expect("the step runs a script")
        .replace("${{ matrix.target }}", target)
}

/// A release as the workflow makes it, for the machine running the tests: the built binary and
/// the committed man pages packaged by the workflow's "package" step, SHA256SUMS by its
/// "checksums" step.
fn fake_release(work: &Path, home: &Path) -> PathBuf {
    let workflow = workflow();
    let checkout = work.join("checkout");
    let release = checkout.join(format!("target/{HERE}/release"));
    std::fs::create_dir_all(&release).unwrap();
    std::fs::copy(cargo_bin("git-prove-it"), release.join("git-prove-it")).unwrap();
    std::fs::create_dir(checkout.join("man")).unwrap();
    for entry in std::fs::read_dir(Path::new(ROOT).join("man")).unwrap() {
        let entry = entry.unwrap();
        std::fs::copy(entry.path(), checkout.join("man").join(entry.file_name())).unwrap();
    }
    for file in ["README.md", "LICENSE", "install.sh"] {
        std::fs::copy(Path::new(ROOT).join(file), checkout.join(file)).unwrap();
    }
    for (job, name) in [("build", "package"), ("release", "checksums")] {
        let mut cmd = Command::new("bash");
        hermetic(&mut cmd, home);
        let out = cmd
            .env("PATH", built_path(&[], TOOLS))
            .env("VERSION", VERSION)
            .args(["-euo", "pipefail", "-c", &step(&workflow, job, name, HERE)])
            .current_dir(&checkout)
            .output()
            .unwrap();
        assert!(out.status.success(), "the {name} step ran: {out:?}");
    }
    checkout.join("dist")
}

/// `python3 -m http.server` on 127.0.0.1, on a port of its own choosing; killed on drop.
struct Server {
    child: Child,
    url: String,
}

impl Server {
    fn serve(dir: &Path) -> Self {
        let mut child = Command::new("python3")
            .args([
                "-u",
                "-m",
                "http.server",
                "0",
                "--bind",
                "127.0.0.1",
                "--directory",
            ])
            .arg(dir)
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("python3 serves the fake release (python3 is needed for this test)");
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        // "Serving HTTP on 127.0.0.1 port 41234 (http://127.0.0.1:41234/) ..."
        let port = line
            .split_whitespace()
            .skip_while(|word| *word != "port")
            .nth(1)
            .unwrap_or_else(|| panic!("http.server said where it listens: {line:?}"))
            .to_owned();
        Server {
            child,
            url: format!("http://127.0.0.1:{port}"),
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Runs install.sh with POSIX `sh`, a built PATH (no git-prove-it on it) and `args`.
fn install(home: &Path, envs: &[(&str, &str)], args: &[&str]) -> Output {
    let mut cmd = Command::new("sh");
    hermetic(&mut cmd, home);
    cmd.env("PATH", built_path(&[], TOOLS))
        .env("TMPDIR", home)
        .arg(Path::new(ROOT).join("install.sh"))
        .args(args)
        .envs(envs.iter().copied())
        .output()
        .unwrap()
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

#[test]
fn install_script_installs_a_served_release_with_its_man_pages() {
    let work = tempfile::tempdir().unwrap();
    let home = work.path().join("home");
    std::fs::create_dir(&home).unwrap();
    let server = Server::serve(&fake_release(work.path(), &home));

    // The default prefix is ~/.local, and without --version the release's SHA256SUMS names
    // the archive.
    let out = install(&home, &[("PROVE_IT_BASE_URL", &server.url)], &[]);
    let stderr = text(&out.stderr);
    assert!(out.status.success(), "{out:?}");
    let bin = home.join(".local/bin/git-prove-it");
    assert!(
        stderr.contains(&format!("installed {}", bin.display())),
        "{stderr}"
    );
    assert!(stderr.contains(&format!(
        "{} is not on PATH",
        home.join(".local/bin").display()
    )));
    let version = Command::new(&bin).arg("--version").output().unwrap();
    assert!(version.status.success());
    assert_eq!(
        text(&version.stdout).trim(),
        format!("git-prove-it {VERSION}")
    );

    // The page is where man looks once bin is on PATH (`..._with_man` asks man itself).
    let page = home.join(".local/share/man/man1/git-prove-it.1");
    assert_eq!(
        std::fs::read(&page).unwrap(),
        std::fs::read(Path::new(ROOT).join("man/git-prove-it.1")).unwrap()
    );

    // A given version and prefix (PREFIX, then --prefix winning over it).
    let prefix = work.path().join("opt");
    let out = install(
        &home,
        &[
            ("PREFIX", "/nonexistent"),
            ("PROVE_IT_BASE_URL", &server.url),
        ],
        &[
            "--prefix",
            prefix.to_str().unwrap(),
            "--version",
            &format!("v{VERSION}"),
        ],
    );
    assert!(out.status.success(), "{out:?}");
    assert!(prefix.join("bin/git-prove-it").is_file());
    assert!(prefix.join("share/man/man1/git-prove-it-run.1").is_file());
}

#[test]
fn install_script_refuses_a_bad_checksum_and_installs_nothing() {
    let work = tempfile::tempdir().unwrap();
    let home = work.path().join("home");
    std::fs::create_dir(&home).unwrap();
    let dist = fake_release(work.path(), &home);
    let sums = std::fs::read_to_string(dist.join("SHA256SUMS")).unwrap();
    let archive = format!("{}.tar.gz", archive_dir(VERSION, HERE));
    let line = sums.lines().find(|line| line.ends_with(&archive)).unwrap();
    // The archive a mirror (or an attacker) serves is not the one the release summed.
    let wrong = format!("{}  {archive}", "0".repeat(64));
    std::fs::write(dist.join("SHA256SUMS"), sums.replace(line, &wrong)).unwrap();
    let server = Server::serve(&dist);

    let prefix = work.path().join("prefix");
    let out = install(
        &home,
        &[("PROVE_IT_BASE_URL", &server.url)],
        &["--prefix", prefix.to_str().unwrap(), "--version", VERSION],
    );
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    assert!(
        stderr.contains(&format!(
            "error: checksum mismatch for {archive}: nothing was installed"
        )),
        "{stderr}"
    );
    assert!(
        stderr.contains(&format!("hint: SHA256SUMS says {}", "0".repeat(64))),
        "{stderr}"
    );
    assert!(!prefix.exists(), "nothing installed: {prefix:?}");
    let leftovers: Vec<_> = std::fs::read_dir(&home).unwrap().collect();
    assert!(
        leftovers.is_empty(),
        "the download is removed: {leftovers:?}"
    );

    // A version the release does not have is refused too, and says what to check.
    let out = install(
        &home,
        &[("PROVE_IT_BASE_URL", &server.url)],
        &["--prefix", prefix.to_str().unwrap(), "--version", "9.9.9"],
    );
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    assert!(text(&out.stderr).contains(&format!(
        "error: SHA256SUMS has no checksum for {}.tar.gz",
        archive_dir("9.9.9", HERE)
    )));
    assert!(!prefix.exists());
}

/// The workflow builds every target install.sh can pick, and all three agree on the name.
#[test]
fn release_archive_names_agree_between_workflow_binstall_and_install_script() {
    let workflow = workflow();
    let targets: Vec<&str> = workflow["jobs"]["build"]["strategy"]["matrix"]["include"]
        .as_array()
        .unwrap()
        .iter()
        .map(|entry| entry["target"].as_str().unwrap())
        .collect();
    assert_eq!(
        targets,
        [
            "x86_64-unknown-linux-gnu",
            "aarch64-unknown-linux-gnu",
            "x86_64-unknown-linux-musl",
            "aarch64-unknown-linux-musl",
            "x86_64-apple-darwin",
            "aarch64-apple-darwin",
        ]
    );
    let package = step(&workflow, "build", "package", "T");
    assert!(
        package.contains("archive=git-prove-it-$VERSION-T\n"),
        "{package}"
    );
    assert!(package.contains("tar -czf \"dist/$archive.tar.gz\" -C dist \"$archive\""));

    let manifest = std::fs::read_to_string(Path::new(ROOT).join("Cargo.toml")).unwrap();
    let binstall = |key: &str| binstall_key(&manifest, key);
    let fill = |template: String| {
        template
            .replace("{ name }", "git-prove-it")
            .replace("{ version }", "1.2.3")
            .replace("{ target }", "T")
            .replace("{ bin }", "git-prove-it")
            .replace("{ binary-ext }", "")
    };
    let script = std::fs::read_to_string(Path::new(ROOT).join("install.sh")).unwrap();
    let repo = script
        .lines()
        .find_map(|line| line.strip_prefix("repo=${PROVE_IT_REPO:-"))
        .and_then(|rest| rest.strip_suffix('}'))
        .expect("install.sh has a default repository");
    assert_eq!(
        fill(binstall("pkg-url")),
        format!(
            "{repo}/releases/download/v1.2.3/{}.tar.gz",
            archive_dir("1.2.3", "T")
        )
    );
    assert_eq!(
        fill(binstall("bin-dir")),
        format!("{}/git-prove-it", archive_dir("1.2.3", "T"))
    );
    assert_eq!(binstall("pkg-fmt"), "tgz");
    assert!(script.contains("base_url=$repo/releases/download/v$version\n"));
    assert!(script.contains("  archive=$name-$version-$target.tar.gz\n"));
    for picked in ["$arch-unknown-linux-musl", "$arch-apple-darwin"] {
        assert!(script.contains(&format!("target={picked} ;;")), "{picked}");
        for arch in ["x86_64", "aarch64"] {
            assert!(targets.contains(&picked.replace("$arch", arch).as_str()));
        }
    }
}

/// `[package.metadata.binstall]`'s `key` in a Cargo.toml.
fn binstall_key(manifest: &str, key: &str) -> String {
    let document = toml::de::DeTable::parse(manifest).expect("Cargo.toml is TOML");
    let package = document
        .get_ref()
        .get("package")
        .expect("[package]")
        .get_ref();
    let value = ["metadata", "binstall", key]
        .iter()
        .fold(package, |value, name| {
            value
                .get(*name)
                .unwrap_or_else(|| panic!("Cargo.toml has {name}"))
                .get_ref()
        });
    value.as_str().expect("a string").to_owned()
}

/// man finds the pages the install script wrote through PATH (as `git help prove-it` runs it),
/// once the install's bin is on it.
#[test]
#[ignore = "needs man (man-db); .ci/run runs it with --ignored where man is installed"]
fn install_script_pages_are_found_by_man_with_man() {
    let work = tempfile::tempdir().unwrap();
    let home = work.path().join("home");
    std::fs::create_dir(&home).unwrap();
    let server = Server::serve(&fake_release(work.path(), &home));
    let out = install(&home, &[("PROVE_IT_BASE_URL", &server.url)], &[]);
    assert!(out.status.success(), "{out:?}");
    let page = home.join(".local/share/man/man1/git-prove-it.1");
    let mut path = vec![home.join(".local/bin")];
    path.extend(std::env::split_paths(&built_path(&[], TOOLS)));
    let mut man = Command::new("man");
    hermetic(&mut man, &home);
    let found = man
        .env("PATH", std::env::join_paths(path).unwrap())
        .args(["-w", "git-prove-it"])
        .output()
        .unwrap();
    assert_eq!(
        text(&found.stdout).trim(),
        page.display().to_string(),
        "{found:?}"
    );
}
