//! What a run may see besides the tree it proves: a commit's worktree shown at the path of the
//! checkout it was started from (Linux user and mount namespaces), and, where that cannot be
//! had, the links from the run's environment back into the checkout that would make it test
//! the checkout's code instead of the commit's.
//!
//! A commit is proven in a worktree outside the repository's directory tree, so nothing found
//! by walking up (`node_modules`, a `conftest.py`, a `go.work`) reaches the checkout. Absolute
//! paths into the checkout remain: an editable install names `<checkout>/src`, a workspace link
//! or a generated config names `<checkout>/packages/x`. In a mount namespace the commit's
//! worktree is mounted over the checkout's path, so those paths lead into the commit (no
//! privileges needed where unprivileged user namespaces are allowed).
//!
//! A commit worktree's namespaces are made once, by a child of ours between fork and exec
//! (`process::Namespaces::make`, given the mounts), and kept by descriptor while the worktree
//! moves along a range; each script's process enters them itself before its program starts
//! (`process::Entry`). Where they cannot be made so, and for a worktree nested in another,
//! util-linux `unshare` makes a view for each script (seven programs).
//!
//! It never decides what a run means and never prints; it builds requests for `process`, keeps
//! the namespaces it made by descriptor, and names what it found.

use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};

use crate::process::{self, Wrap};

/// How a run was kept from seeing other bytes than the tree it proves: the record's
/// `isolation:` line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Isolation {
    /// A commit's worktree, mounted at the checkout's path in a mount namespace of its own.
    Namespace,
    /// A commit's worktree outside the checkout, without a namespace: absolute paths into the
    /// checkout would still reach it, and were looked for before the run.
    None,
    /// The working state, run in the checkout whose state it is.
    Checkout,
}

impl Isolation {
    pub fn as_str(self) -> &'static str {
        match self {
            Isolation::Namespace => "namespace",
            Isolation::None => "none",
            Isolation::Checkout => "checkout",
        }
    }

    pub fn parse(text: &str) -> Option<Isolation> {
        match text {
            "namespace" => Some(Isolation::Namespace),
            "none" => Some(Isolation::None),
            "checkout" => Some(Isolation::Checkout),
            _ => None,
        }
    }
}

impl std::fmt::Display for Isolation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// In debug builds, makes [`namespaces_work`] answer no, so that tests exercise the path of a
/// machine without unprivileged user namespaces.
pub const NO_NAMESPACE_ENV: &str = "PROVE_IT_TEST_NO_NAMESPACE";

/// The mounts that show a commit's worktree at the checkout's path.
#[derive(Debug, Clone)]
pub struct View {
    /// The checkout the run was started from (its top level), which the run must not see.
    pub checkout: PathBuf,
    /// The commit's worktree, shown at `checkout`.
    pub worktree: PathBuf,
    /// The repository's common git directory, which stays reachable.
    pub common_dir: PathBuf,
    /// A directory of ours holding the link `dir` that the worktree's `.git` file names: a
    /// link to `common_dir` outside the namespace, and inside it a tmpfs whose `dir` is
    /// `common_dir` mounted again, so that the worktree finds its repository either way even
    /// though `common_dir` itself is hidden under `checkout`.
    pub git_link: PathBuf,
}

/// `unshare`'s arguments that run a shell script (the next argument) as root of a new user
/// namespace with a mount namespace of its own, whose mounts reach no other namespace.
const UNSHARE: &[&str] = &[
    "--user",
    "--map-root-user",
    "--mount",
    "--propagation",
    "private",
    "--",
    "sh",
    "-c",
];

/// The shell script run as root of a new user namespace with a mount namespace of its own:
/// make the mounts, enter the checkout's path, then leave root for the caller's own user ids
/// in a nested user namespace, and run the program. Its arguments: the `View`'s paths, the
/// user and group ids, then the program and its arguments. The directory it was started in and
/// the program's path, when inside the worktree, are entered and run at the same place under
/// the checkout's path, so that a script sees itself where the checkout's would be.
const MOUNT_SCRIPT: &str = r#"set -e
link=$1 common=$2 worktree=$3 checkout=$4 uid=$5 gid=$6 program=$7
shift 7
dir=$(pwd -P)
case $dir in "$worktree" | "$worktree"/*) dir=$checkout${dir#"$worktree"} ;; esac
case $program in "$worktree"/*) program=$checkout${program#"$worktree"} ;; esac
mount -t tmpfs -o mode=0755 prove-it "$link"
mkdir "$link/dir"
mount --bind "$common" "$link/dir"
mount --bind "$worktree" "$checkout"
cd "$dir"
exec unshare --map-user="$uid" --map-group="$gid" -- "$program" "$@"
"#;

impl View {
    /// The program and arguments that run a program (appended after them, with its own
    /// arguments) with the worktree shown at the checkout's path, from the directory it is
    /// started in (a directory of the worktree is entered under the checkout's path).
    pub fn prefix(&self) -> Vec<OsString> {
        let worktree =
            std::fs::canonicalize(&self.worktree).unwrap_or_else(|_| self.worktree.clone());
        let mut prefix: Vec<OsString> = std::iter::once("unshare")
            .chain(UNSHARE.iter().copied())
            .chain([MOUNT_SCRIPT, "prove-it-isolation"])
            .map(OsString::from)
            .collect();
        prefix.extend(
            [&self.git_link, &self.common_dir, &worktree, &self.checkout]
                .into_iter()
                .map(|path| path.as_os_str().to_owned()),
        );
        prefix.push(rustix::process::getuid().as_raw().to_string().into());
        prefix.push(rustix::process::getgid().as_raw().to_string().into());
        prefix
    }
}

/// A view kept for many runs: the way into it for the scripts run in `worktree`, started from
/// `checkout`. Its namespaces live in the descriptors the way holds, with their mounts, until
/// it is released or this process ends.
struct Kept {
    checkout: PathBuf,
    worktree: PathBuf,
    wrap: Wrap,
}

/// The views kept for many runs.
static KEPT: Mutex<Vec<Kept>> = Mutex::new(Vec::new());

fn kept_views() -> std::sync::MutexGuard<'static, Vec<Kept>> {
    KEPT.lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// The way into the view kept for the scripts run in `worktree` from `checkout`, if
/// [`enter`] made one and it has not been released.
pub fn kept(checkout: &Path, worktree: &Path) -> Option<Wrap> {
    kept_views()
        .iter()
        .find(|kept| kept.checkout == checkout && kept.worktree == worktree)
        .map(|kept| kept.wrap.clone())
}

/// The way into `view` for every run in its worktree until [`release`]: its namespaces are made
/// once, and each script enters them before it starts (`Wrap::Enter`). `None` where they
/// cannot be made and entered; that they can is as good an answer as [`namespaces_work`]'s.
pub fn enter(view: &View) -> Option<Wrap> {
    if let Some(wrap) = kept(&view.checkout, &view.worktree) {
        return Some(wrap);
    }
    // Asked once a process, as `namespaces_work` is: a machine that cannot keep them now
    // cannot for the next commit either.
    static CANNOT: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);
    if CANNOT.load(std::sync::atomic::Ordering::Relaxed)
        || (cfg!(debug_assertions) && std::env::var_os(NO_NAMESPACE_ENV).is_some())
    {
        return None;
    }
    let worktree = std::fs::canonicalize(&view.worktree).unwrap_or_else(|_| view.worktree.clone());
    let Some(namespaces) = keep(view, &worktree) else {
        CANNOT.store(true, std::sync::atomic::Ordering::Relaxed);
        return None;
    };
    let wrap = Wrap::Enter {
        namespaces,
        from: vec![view.worktree.clone(), worktree],
        to: view.checkout.clone(),
        again: view.prefix(),
    };
    kept_views().push(Kept {
        checkout: view.checkout.clone(),
        worktree: view.worktree.clone(),
        wrap: wrap.clone(),
    });
    Some(wrap)
}

/// Makes `view`'s namespaces (the mounts of [`MOUNT_SCRIPT`], made by a child of ours before it
/// execs), keeps them by descriptor, and checks once that a child can enter them and start a
/// program there.
fn keep(view: &View, worktree: &Path) -> Option<Arc<process::Namespaces>> {
    let link = view.git_link.join("dir");
    let namespaces = Arc::new(
        process::Namespaces::make(&[
            process::Step::Tmpfs(view.git_link.clone()),
            process::Step::Folder(link.clone()),
            process::Step::Bind {
                from: view.common_dir.clone(),
                to: link,
            },
            process::Step::Bind {
                from: worktree.to_owned(),
                to: view.checkout.clone(),
            },
        ])
        .ok()?,
    );
    let entry = namespaces.entry(&view.checkout).ok()?;
    process::Request::new("/bin/sh")
        .args(["-c", ":"])
        .enter(entry)
        .stdout(process::Stream::Null)
        .stderr(process::Stream::Null)
        .timeout(std::time::Duration::from_secs(10))
        .run()
        .is_ok_and(|finished| finished.success())
        .then_some(namespaces)
}

/// End the view kept for `worktree`, if any, before it is removed.
pub fn release(worktree: &Path) {
    kept_views().retain(|kept| kept.worktree != worktree);
}

/// The mounts that hide the worktree a nested worktree sits in (a Claude Code worktree under
/// `.claude/worktrees/` of the checkout): the outer worktree becomes an empty tmpfs holding
/// only the worktree the run proves, at the nested worktree's path, and the common git
/// directory, so that nothing found by walking up (a `node_modules`, a `conftest.py`) is the
/// outer one's. A stop there shows the nested worktree at its own path; a commit run started
/// there shows the commit's worktree at that path.
#[derive(Debug, Clone)]
pub struct Nested {
    /// The worktree that encloses `target`, which the run must not see.
    pub outer: PathBuf,
    /// The worktree the run proves.
    pub source: PathBuf,
    /// Where it is shown: the nested worktree's path.
    pub target: PathBuf,
    /// The repository's common git directory, which stays reachable at its own path.
    pub common_dir: PathBuf,
    /// An empty directory of ours, where the mounts are staged before `outer` is covered.
    pub stage: PathBuf,
}

/// As [`MOUNT_SCRIPT`], for a [`Nested`] view; the directory it was started in and the
/// program's path, when inside `source`, are entered and run at the same place under `target`.
const NESTED_SCRIPT: &str = r#"set -e
stage=$1 outer=$2 source=$3 target=$4 common=$5 uid=$6 gid=$7 program=$8
shift 8
dir=$(pwd -P)
case $dir in "$source" | "$source"/*) dir=$target${dir#"$source"} ;; esac
case $program in "$source"/*) program=$target${program#"$source"} ;; esac
mount -t tmpfs -o mode=0755 prove-it "$stage"
mkdir "$stage/inner" "$stage/git"
mount --bind "$source" "$stage/inner"
mount --bind "$common" "$stage/git"
mount -t tmpfs -o mode=0755 prove-it "$outer"
mkdir -p "$target" "$common"
mount --bind "$stage/inner" "$target"
mount --bind "$stage/git" "$common"
cd "$dir"
exec unshare --map-user="$uid" --map-group="$gid" -- "$program" "$@"
"#;

impl Nested {
    /// The program and arguments that run a program (appended after them, with its own
    /// arguments) in this view, from the directory it is started in.
    pub fn prefix(&self) -> Vec<OsString> {
        let mut prefix: Vec<OsString> = std::iter::once("unshare")
            .chain(UNSHARE.iter().copied())
            .chain([NESTED_SCRIPT, "prove-it-isolation"])
            .map(OsString::from)
            .collect();
        prefix.extend(
            [
                &self.stage,
                &self.outer,
                &self.source,
                &self.target,
                &self.common_dir,
            ]
            .into_iter()
            .map(|path| path.as_os_str().to_owned()),
        );
        prefix.push(rustix::process::getuid().as_raw().to_string().into());
        prefix.push(rustix::process::getgid().as_raw().to_string().into());
        prefix
    }
}

/// Whether this machine lets us make a user namespace with a mount namespace, mount a tmpfs
/// in it, and map our own user back (util-linux 2.38's `--map-user`): asked once a process.
pub fn namespaces_work() -> bool {
    static WORKS: OnceLock<bool> = OnceLock::new();
    *WORKS.get_or_init(|| {
        if cfg!(debug_assertions) && std::env::var_os(NO_NAMESPACE_ENV).is_some() {
            return false;
        }
        let Ok(probe) = tempfile::tempdir() else {
            return false;
        };
        let script = r#"mount -t tmpfs prove-it "$1" && exec unshare --map-user="$2" --map-group="$3" -- true"#;
        process::Request::new("unshare")
            .args(UNSHARE)
            .args([script, "prove-it-probe"])
            .arg(probe.path())
            .arg(rustix::process::getuid().as_raw().to_string())
            .arg(rustix::process::getgid().as_raw().to_string())
            .stdout(process::Stream::Null)
            .stderr(process::Stream::Null)
            .timeout(std::time::Duration::from_secs(10))
            .run()
            .is_ok_and(|finished| finished.success())
    })
}

/// A way from a run's environment back into the checkout: the run would test the checkout's
/// code, not the commit's.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Leak {
    /// What holds it: `PYTHONPATH`, `a PATH entry`, a file's path.
    pub through: String,
    /// The path in the checkout it names.
    pub target: PathBuf,
}

impl std::fmt::Display for Leak {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} names {}", self.through, self.target.display())
    }
}

/// Variables whose entries are searched for modules or packages.
const SEARCH_PATH_VARS: &[&str] = &["PYTHONPATH", "NODE_PATH", "GOPATH", "CLASSPATH", "RUBYLIB"];
/// Variables that name one environment.
const ENVIRONMENT_VARS: &[&str] = &["VIRTUAL_ENV", "CONDA_PREFIX"];
/// How much of one `.pth` or editable finder file is read.
const MAX_FINDER_BYTES: u64 = 256 * 1024;

/// The links into `checkout` that a run in `worktree` with the environment `vars` would
/// follow: search paths and environments named by variables, the Python packages installed in
/// editable mode from the checkout (`.pth` and `__editable__` files of every site directory of
/// the `python3` on `PATH`), and links of the worktree's `node_modules` leading into it.
pub fn leaks(checkout: &Path, worktree: &Path, vars: &[(OsString, OsString)]) -> Vec<Leak> {
    let inside = Inside::new(checkout, worktree);
    let mut found = Vec::new();
    let var = |name: &str| {
        vars.iter()
            .find(|(key, _)| key == name)
            .map(|(_, value)| value.clone())
    };
    for name in SEARCH_PATH_VARS.iter().chain(ENVIRONMENT_VARS) {
        let Some(value) = var(name) else { continue };
        for entry in std::env::split_paths(&value) {
            if let Some(target) = inside.names(&entry) {
                found.push(Leak {
                    through: (*name).to_string(),
                    target,
                });
            }
        }
    }
    if let Some(path) = var("PATH") {
        for entry in std::env::split_paths(&path) {
            if let Some(target) = inside.names(&entry) {
                found.push(Leak {
                    through: "a PATH entry".to_string(),
                    target,
                });
            }
        }
        for dir in python_site_dirs(&path, worktree) {
            found.extend(editable_installs(&dir, &inside));
        }
    }
    found.extend(node_links(worktree, &inside));
    found.dedup();
    found
}

/// A checkout's path, as given and as the kernel resolves it, but for the worktree the run
/// proves (which a nested worktree's checkout holds).
struct Inside {
    paths: Vec<PathBuf>,
    except: Vec<PathBuf>,
}

impl Inside {
    fn new(checkout: &Path, worktree: &Path) -> Inside {
        let both = |path: &Path| {
            let mut paths = vec![path.to_owned()];
            if let Ok(real) = path.canonicalize()
                && real != path
            {
                paths.push(real);
            }
            paths
        };
        Inside {
            paths: both(checkout),
            except: both(worktree),
        }
    }

    /// `path` when it lies in the checkout, outside the worktree.
    fn names(&self, path: &Path) -> Option<PathBuf> {
        let real = path.canonicalize().ok();
        let under = |dirs: &[PathBuf]| {
            dirs.iter().any(|dir| {
                path.starts_with(dir) || real.as_ref().is_some_and(|r| r.starts_with(dir))
            })
        };
        (under(&self.paths) && !under(&self.except)).then(|| path.to_owned())
    }

    /// The first path of the checkout that `text` names, if any.
    fn named_in(&self, text: &str) -> Option<PathBuf> {
        self.paths
            .iter()
            .find_map(|checkout| {
                let checkout = checkout.to_str()?;
                let at = text.find(checkout)?;
                let rest = &text[at + checkout.len()..];
                // The checkout itself or a path below it, not a sibling sharing its prefix.
                if rest.is_empty() || rest.starts_with(['/', '\n', '\'', '"', '\r']) {
                    let end = rest
                        .find(['\n', '\'', '"', '\r', ',', ' ', ')', ']', '}'])
                        .unwrap_or(rest.len());
                    Some(PathBuf::from(format!("{checkout}{}", &rest[..end])))
                } else {
                    None
                }
            })
            .filter(|path| !self.except.iter().any(|dir| path.starts_with(dir)))
    }
}

/// The directories the `python3` found on `path` reads `.pth` files from, asked of it once a
/// process for each `path` and `dir` (starting Python costs tens of milliseconds, and a range
/// asks again for each commit of the same worktree); none when there is no such program or it
/// does not answer within a few seconds.
fn python_site_dirs(path: &OsStr, dir: &Path) -> Vec<PathBuf> {
    type Asked = ((OsString, PathBuf), Vec<PathBuf>);
    static ASKED: Mutex<Vec<Asked>> = Mutex::new(Vec::new());
    let key = (path.to_owned(), dir.to_owned());
    let mut asked = ASKED
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    if let Some((_, dirs)) = asked.iter().find(|(asked, _)| *asked == key) {
        return dirs.clone();
    }
    let dirs = ask_python_site_dirs(path, dir);
    asked.push((key, dirs.clone()));
    dirs
}

fn ask_python_site_dirs(path: &OsStr, dir: &Path) -> Vec<PathBuf> {
    let Some(python) = std::env::split_paths(path)
        .map(|entry| entry.join("python3"))
        .find(|candidate| candidate.is_file())
    else {
        return Vec::new();
    };
    let script = "import site, sys\n\
                  dirs = list(getattr(site, 'getsitepackages', lambda: [])())\n\
                  dirs.append(site.getusersitepackages())\n\
                  print('\\n'.join(dirs + sys.path))";
    let Ok(finished) = process::Request::new(python)
        .args(["-c", script])
        .env("PATH", path)
        .current_dir(dir)
        .stdout(process::Stream::Head(1 << 20))
        .stderr(process::Stream::Null)
        .timeout(std::time::Duration::from_secs(10))
        .run()
    else {
        return Vec::new();
    };
    let mut dirs: Vec<PathBuf> = String::from_utf8_lossy(&finished.stdout)
        .lines()
        .filter(|line| !line.is_empty())
        .map(PathBuf::from)
        .filter(|dir| dir.is_dir())
        .collect();
    dirs.sort();
    dirs.dedup();
    dirs
}

/// The editable installs in site directory `dir` whose `.pth` file or finder names the
/// checkout.
fn editable_installs(dir: &Path, inside: &Inside) -> Vec<Leak> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut found = Vec::new();
    for entry in entries.flatten() {
        let name = entry.file_name();
        let name = name.to_string_lossy();
        if !(name.ends_with(".pth") || name.starts_with("__editable__")) {
            continue;
        }
        let path = entry.path();
        let Some(text) = read_bounded(&path) else {
            continue;
        };
        if let Some(target) = inside.named_in(&text) {
            found.push(Leak {
                through: path.display().to_string(),
                target,
            });
        }
    }
    found.sort_by(|a, b| a.through.cmp(&b.through));
    found
}

fn read_bounded(path: &Path) -> Option<String> {
    use std::io::Read as _;
    let file = std::fs::File::open(path).ok()?;
    if !file.metadata().ok()?.is_file() {
        return None;
    }
    let mut bytes = Vec::new();
    file.take(MAX_FINDER_BYTES).read_to_end(&mut bytes).ok()?;
    Some(String::from_utf8_lossy(&bytes).into_owned())
}

/// The links of `worktree`'s `node_modules` (and of its scopes, `@scope/name`) that lead into
/// the checkout.
fn node_links(worktree: &Path, inside: &Inside) -> Vec<Leak> {
    let mut found = Vec::new();
    let mut dirs = vec![worktree.join("node_modules")];
    while let Some(dir) = dirs.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            let Ok(kind) = entry.file_type() else {
                continue;
            };
            if kind.is_symlink() {
                if let Ok(target) = path.canonicalize()
                    && inside.names(&target).is_some()
                {
                    found.push(Leak {
                        through: path.display().to_string(),
                        target,
                    });
                }
            } else if kind.is_dir() && entry.file_name().to_string_lossy().starts_with('@') {
                dirs.push(path);
            }
        }
    }
    found.sort_by(|a, b| a.through.cmp(&b.through));
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A checkout and a commit's worktree, each with `x` naming itself in `sub/`, and the
    /// folders a view needs, all under one temporary folder (canonical). `checkout` is the
    /// path the view shows the worktree at.
    fn a_view(root: &Path, checkout: PathBuf) -> View {
        for (dir, text) in [
            (root.join("real"), "checkout"),
            (root.join("wt"), "worktree"),
        ] {
            std::fs::create_dir_all(dir.join("sub")).unwrap();
            std::fs::write(dir.join("sub/x"), text).unwrap();
        }
        for dir in ["common", "link"] {
            std::fs::create_dir_all(root.join(dir)).unwrap();
        }
        View {
            checkout,
            worktree: root.join("wt"),
            common_dir: root.join("common"),
            git_link: root.join("link"),
        }
    }

    /// What `cat x; pwd -P` prints, run through `wrap` from the worktree's `sub/`.
    fn seen_from_sub(wrap: &Wrap, view: &View) -> String {
        let finished = wrap
            .request(Path::new("/bin/sh"), &view.worktree.join("sub"))
            .args(["-c", "cat x; echo; pwd -P"])
            .run()
            .unwrap();
        assert!(finished.success(), "{finished:?}");
        String::from_utf8(finished.stdout).unwrap()
    }

    // Each script enters the kept namespaces itself, before its program starts: it reads the
    // commit's files at the checkout's path, from its own folder there, once the program that
    // made them is gone; the view is kept until released.
    #[test]
    fn a_kept_view_is_entered_by_each_script_at_the_checkouts_path() {
        let root = tempfile::tempdir().unwrap();
        let root = root.path().canonicalize().unwrap();
        let view = a_view(&root, root.join("real"));
        let wrap = enter(&view).expect("unprivileged user namespaces work here");
        assert!(matches!(wrap, Wrap::Enter { .. }), "{wrap:?}");
        let seen = format!("worktree\n{}\n", root.join("real/sub").display());
        assert_eq!(seen_from_sub(&wrap, &view), seen);
        let again = kept(&view.checkout, &view.worktree).expect("kept for the next commit");
        assert_eq!(seen_from_sub(&again, &view), seen);
        release(&view.worktree);
        assert!(kept(&view.checkout, &view.worktree).is_none());
    }

    // The trap: the checkout's path goes through an absolute link. The script's folder is
    // opened from the namespaces' root with the link resolved there too; resolved in the
    // caller's mounts, it would be the checkout's own folder, and the script would test the
    // checkout's files while its record names the commit.
    #[test]
    fn a_checkout_reached_through_an_absolute_link_is_the_commits_in_the_view() {
        let root = tempfile::tempdir().unwrap();
        let root = root.path().canonicalize().unwrap();
        std::os::unix::fs::symlink(&root, root.join("through")).unwrap();
        let view = a_view(&root, root.join("through/real"));
        let wrap = enter(&view).expect("unprivileged user namespaces work here");
        assert!(
            seen_from_sub(&wrap, &view).starts_with("worktree\n"),
            "the script ran in the checkout's folder"
        );
        release(&view.worktree);
    }

    fn vars(pairs: &[(&str, &str)]) -> Vec<(OsString, OsString)> {
        pairs
            .iter()
            .map(|(k, v)| (OsString::from(k), OsString::from(v)))
            .collect()
    }

    #[test]
    fn an_isolation_reads_as_it_is_written() {
        for isolation in [Isolation::Namespace, Isolation::None, Isolation::Checkout] {
            assert_eq!(Isolation::parse(isolation.as_str()), Some(isolation));
        }
        assert_eq!(Isolation::parse("partial"), None);
    }

    #[test]
    fn search_paths_into_the_checkout_are_leaks_and_siblings_are_not() {
        let root = tempfile::tempdir().unwrap();
        let checkout = root.path().join("repo");
        let sibling = root.path().join("repo-other");
        let worktree = root.path().join("wt");
        for dir in [&checkout, &sibling, &worktree] {
            std::fs::create_dir_all(dir.join("src")).unwrap();
        }
        let found = leaks(
            &checkout,
            &worktree,
            &vars(&[
                ("PYTHONPATH", &format!("{}/src", checkout.display())),
                ("NODE_PATH", &format!("{}/src", sibling.display())),
                ("PATH", "/nonexistent"),
            ]),
        );
        assert_eq!(
            found,
            vec![Leak {
                through: "PYTHONPATH".into(),
                target: checkout.join("src")
            }]
        );
    }

    #[test]
    fn an_editable_finder_naming_the_checkout_is_a_leak() {
        let root = tempfile::tempdir().unwrap();
        let checkout = root.path().join("repo");
        let site = root.path().join("site");
        std::fs::create_dir_all(&site).unwrap();
        std::fs::write(
            site.join("__editable___pkg_1_0_finder.py"),
            format!("MAPPING = {{'pkg': '{}/src/pkg'}}\n", checkout.display()),
        )
        .unwrap();
        std::fs::write(
            site.join("other.pth"),
            format!("{}-x/src\n", checkout.display()),
        )
        .unwrap();
        let found = editable_installs(&site, &Inside::new(&checkout, &root.path().join("wt")));
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!(found[0].target, checkout.join("src/pkg"));
    }

    #[test]
    fn a_node_modules_link_into_the_checkout_is_a_leak() {
        let root = tempfile::tempdir().unwrap();
        let checkout = root.path().join("repo");
        let worktree = root.path().join("wt");
        std::fs::create_dir_all(checkout.join("lib")).unwrap();
        std::fs::create_dir_all(worktree.join("node_modules/@scope")).unwrap();
        std::fs::create_dir_all(worktree.join("lib")).unwrap();
        std::os::unix::fs::symlink(
            checkout.join("lib"),
            worktree.join("node_modules/@scope/lib"),
        )
        .unwrap();
        std::os::unix::fs::symlink("../lib", worktree.join("node_modules/own")).unwrap();
        let found = node_links(&worktree, &Inside::new(&checkout, &worktree));
        assert_eq!(found.len(), 1, "{found:?}");
        assert!(found[0].through.ends_with("node_modules/@scope/lib"));
    }
}
