#!/usr/bin/env python3
"""Generate the benchmark's repositories with git fast-import: no downloads, deterministic.

    gen.py repo DIR FILES            a repository of FILES files in nested directories, checked out
    gen.py dirty DIR                 100 modified, 100 deleted and 1000 untracked files in DIR
    gen.py notes DIR COUNT           COUNT notes on random ids in refs/notes/prove-it, in git's
                                     two-level fanout (ab/cd/...), as git lays out 100k notes
    gen.py history DIR COMMITS       COMMITS commits on a small tree, each tree with a proof
                                     (one-level fanout, ab/..., as git lays out 10k notes)
    gen.py signed DIR COMMITS KEY    the same history, each proof signed with the SSH key KEY
                                     (ssh-keygen -Y sign, as `prove-it.sign` signs them)
    gen.py monorepo DIR KIND         packages/p01..p10, each with its own verify.sh that sleeps
                                     2 s and passes; KIND checks: a prove-it.toml declaring check
                                     pNN with inputs ["packages/pNN"], no root verify.sh; KIND
                                     baseline: no checks file, one root verify.sh running the 10
                                     package scripts one after another
    gen.py range DIR COMMITS         COMMITS commits on a small tree, no proofs, whose verify.sh
                                     sleeps $BENCH_SLEEP seconds (0.25 by default) and passes:
                                     a history to prove commit by commit
    gen.py bisect DIR COMMITS        the same history, whose verify.sh fails from the commit that
                                     writes "revision 30" on: a first failing commit to find
    gen.py own DIR COMMITS FILES     COMMITS commits over FILES files in 70 directories, no
                                     proofs, whose verify.sh is `exit 0`: each tool's own cost
                                     of proving a commit
    gen.py checks DIR CHECKS         commit a prove-it.toml to a `repo` repository: CHECKS checks,
                                     each a script of its own reading an equal share of the
                                     top-level directories, beside the root verify.sh

Every repository's verify.sh exits with $BENCH_VERIFY_EXIT, 1 by default: a measured stop that
missed the cache would run it and block, which the benchmark checks never happens. The
monorepo's scripts are the exception: their stops are meant to run them.
"""

import os
import random
import subprocess
import sys

VERIFY = b'#!/bin/sh\nexit "${BENCH_VERIFY_EXIT:-1}"\n'
IDENT = "Bench <bench@example.com>"
# Files per leaf directory; leaf directories nest three levels deep (d1/d2/d3/fN.txt).
PER_DIR = 50


def git(repo, *args, stdin=None, capture=False):
    env = dict(os.environ, GIT_CONFIG_NOSYSTEM="1", TZ="UTC", LC_ALL="C")
    # A commit made through the index (`checks`) gets the same date as fast-import's.
    env.update(GIT_AUTHOR_DATE="1700000000 +0000", GIT_COMMITTER_DATE="1700000000 +0000")
    result = subprocess.run(
        ["git", "-C", repo, *args],
        input=stdin,
        stdout=subprocess.PIPE if capture else subprocess.DEVNULL,
        env=env,
        check=True,
    )
    return result.stdout


def path_of(i):
    leaf = i // PER_DIR
    return f"d{leaf // 100:03}/d{(leaf // 10) % 10}/d{leaf % 10}/f{i % PER_DIR:02}.txt"


def content(i):
    return f"file {i}\n{'x' * (i % 200)}\n".encode()


def data(out, payload):
    out.append(b"data %d\n" % len(payload))
    out.append(payload)
    out.append(b"\n")


def init(repo):
    os.makedirs(repo, exist_ok=True)
    git(repo, "init", "-q", "-b", "main")
    for key, value in [
        ("user.name", "Bench"),
        ("user.email", "bench@example.com"),
        ("gc.auto", "0"),
        ("core.untrackedCache", "false"),
        ("core.fsmonitor", "false"),
    ]:
        git(repo, "config", key, value)


def checkout(repo):
    git(repo, "checkout", "-q", "-f", "main")
    # A fresh checkout leaves entries "racily clean" (written in the second the index was):
    # git and we would both rehash them. Wait a second and rewrite the index, as any later
    # `git status` or `git add` would, so the repository looks like one in everyday use.
    subprocess.run(["sleep", "1.1"], check=True)
    git(repo, "read-tree", "main")
    git(repo, "update-index", "-q", "--refresh")


def repo_cmd(repo, files):
    init(repo)
    out = [b"commit refs/heads/main\n", b"committer %s 1700000000 +0000\n" % IDENT.encode()]
    data(out, b"the benchmark's files\n")
    out.append(b"M 100755 inline verify.sh\n")
    data(out, VERIFY)
    for i in range(files):
        out.append(b"M 100644 inline %s\n" % path_of(i).encode())
        data(out, content(i))
    out.append(b"\n")
    git(repo, "fast-import", "--quiet", stdin=b"".join(out))
    checkout(repo)


def dirty_cmd(repo):
    files = int(git(repo, "ls-files", capture=True).count(b"\n")) - 1
    rng = random.Random(9)
    chosen = rng.sample(range(files), 200)
    for i in chosen[:100]:
        with open(os.path.join(repo, path_of(i)), "ab") as f:
            f.write(b"modified\n")
    for i in chosen[100:]:
        os.unlink(os.path.join(repo, path_of(i)))
    for n in range(1000):
        # Half next to tracked files, half in new directories.
        if n % 2:
            path = os.path.join(repo, os.path.dirname(path_of(rng.randrange(files))), f"new{n}.txt")
        else:
            path = os.path.join(repo, "untracked", f"u{n // 100}", f"new{n}.txt")
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb") as f:
            f.write(b"untracked %d\n" % n)


def notes_cmd(repo, count):
    rng = random.Random(100_000)
    parent = git(repo, "for-each-ref", "--format=%(objectname)", "refs/notes/prove-it", capture=True)
    out = [b"commit refs/notes/prove-it\n", b"committer %s 1700000000 +0000\n" % IDENT.encode()]
    data(out, b"the benchmark's notes\n")
    if parent.strip():
        out.append(b"from %s\n" % parent.strip())
    blob = git(repo, "hash-object", "-w", "--stdin", stdin=b"a note on some other tree\n", capture=True).strip()
    for _ in range(count):
        key = "%040x" % rng.getrandbits(160)
        out.append(b"M 100644 %s %s/%s/%s\n" % (blob, key[:2].encode(), key[2:4].encode(), key[4:].encode()))
    out.append(b"\n")
    git(repo, "fast-import", "--quiet", stdin=b"".join(out))


def sign(record, key):
    """The record followed by its signature lines, as `prove-it.sign` writes them."""
    armor = subprocess.run(
        ["ssh-keygen", "-q", "-Y", "sign", "-n", "git-prove-it", "-f", key],
        input=record.encode(),
        stdout=subprocess.PIPE,
        check=True,
    ).stdout.decode()
    return record + "".join(f"ssh-signature: {line}\n" for line in armor.splitlines())


def linear_history(repo, commits, verify, extra=(), files=100, path_of=path_of):
    """COMMITS commits on main, the first holding VERIFY as verify.sh, the EXTRA (path,
    content) pairs and FILES files (at PATH_OF(i)), each next one changing one of those files."""
    init(repo)
    out = []
    for c in range(commits):
        out.append(b"commit refs/heads/main\nmark :%d\n" % (c + 1))
        out.append(b"committer %s %d +0000\n" % (IDENT.encode(), 1700000000 + c))
        data(out, b"commit %d\n" % c)
        if c == 0:
            out.append(b"M 100755 inline verify.sh\n")
            data(out, verify)
            for path, payload in extra:
                out.append(b"M 100644 inline %s\n" % path.encode())
                data(out, payload)
            for i in range(files):
                out.append(b"M 100644 inline %s\n" % path_of(i).encode())
                data(out, content(i))
        else:
            out.append(b"M 100644 inline %s\n" % path_of(c % files).encode())
            data(out, b"revision %d\n" % c)
        out.append(b"\n")
    git(repo, "fast-import", "--quiet", stdin=b"".join(out))
    checkout(repo)


def history_cmd(repo, commits, key=None):
    linear_history(repo, commits, VERIFY)

    verify = git(repo, "rev-parse", "main:verify.sh", capture=True).strip().decode()
    pairs = git(repo, "log", "--format=%H %T", "main", capture=True).decode().split()
    out = [b"commit refs/notes/prove-it\n", b"committer %s 1700000000 +0000\n" % IDENT.encode()]
    data(out, b"the benchmark's proofs\n")
    for commit, tree in zip(pairs[::2], pairs[1::2]):
        record = (
            "prove-it-record: 1\noutcome: PROVEN\n"
            f"tree: {tree}\nhead: {commit}\nverify: {verify} 100755\nverify-anchor: none\n"
            "exit-code: 0\nduration-ms: 5\ntime: 2026-11-29T18:52:16Z\nhost: cli\n"
            f"session: none\ntool: git-prove-it 0.1.0\nSigned-off-by: {IDENT}\n"
        )
        if key is not None:
            record = sign(record, key)
        out.append(b"M 100644 inline %s/%s\n" % (tree[:2].encode(), tree[2:].encode()))
        data(out, record.encode())
    out.append(b"\n")
    git(repo, "fast-import", "--quiet", stdin=b"".join(out))


# A history's verify.sh: a quarter of a second of waiting (a test suite's I/O, say), then a pass.
RANGE_VERIFY = b'#!/bin/sh\nsleep "${BENCH_SLEEP:-0.25}"\nexit 0\n'


# The range's verify.sh, failing once a commit has written "revision 30" (commit 30 of the
# history, which no later commit of 41 writes over): the first failing commit bisect looks for.
BISECT_VERIFY = b'#!/bin/sh\nsleep "${BENCH_SLEEP:-0.25}"\n! grep -rqx --exclude-dir=.git "revision 30" .\n'


def bisect_cmd(repo, commits):
    """A history of COMMITS commits, each changing one file of 100, whose 30th fails."""
    linear_history(repo, commits, BISECT_VERIFY, [(".gitignore", b"target/\n")])


def range_cmd(repo, commits):
    """A history of COMMITS commits, each changing one file of 100, without proofs."""
    linear_history(repo, commits, RANGE_VERIFY, [(".gitignore", b"target/\n")])


# A verify.sh that costs nothing: what is measured is each tool's own cost per commit.
OWN_VERIFY = b"#!/bin/sh\nexit 0\n"

# Directories of the `own` history's tree: about a small project's (tomli: 848 files in 73).
OWN_DIRS = 70


def own_path(i):
    leaf = i % OWN_DIRS
    return f"d{leaf // 10}/d{leaf:02}/f{i:03}.txt"


def own_cmd(repo, commits, files):
    """A history of COMMITS commits over FILES files in OWN_DIRS directories (and their 7
    parents), each changing one file, without proofs, whose verify.sh exits 0 at once."""
    linear_history(
        repo, commits, OWN_VERIFY, [(".gitignore", b"target/\n")], files, own_path
    )


PACKAGES = 10
# Files per package, besides its verify.sh: enough for a package to be a directory of sources.
PACKAGE_FILES = 20
# A package's check: 2 s of work that passes, and a line in $BENCH_RAN (when set) for each run,
# so that the benchmark can count which checks each measured stop ran.
PACKAGE_VERIFY = b'#!/bin/sh\n[ -z "${BENCH_RAN:-}" ] || echo "${PWD##*/}" >> "$BENCH_RAN"\nsleep 2\nexit 0\n'
# Every package's script, one after another, from its own directory: the single verify.sh a
# repository without a checks file has.
BASELINE_VERIFY = b'#!/bin/sh\nset -e\nfor p in packages/*/; do (cd "$p" && ./verify.sh); done\n'


def package(n):
    return f"packages/p{n:02}"


def monorepo_cmd(repo, kind):
    init(repo)
    out = [b"commit refs/heads/main\n", b"committer %s 1700000000 +0000\n" % IDENT.encode()]
    data(out, b"the benchmark's monorepo\n")
    toml = []
    for n in range(1, PACKAGES + 1):
        pkg = package(n)
        out.append(b"M 100755 inline %s/verify.sh\n" % pkg.encode())
        data(out, PACKAGE_VERIFY)
        for i in range(PACKAGE_FILES):
            out.append(b"M 100644 inline %s/src/f%02d.txt\n" % (pkg.encode(), i))
            data(out, b"package %d, file %d\n" % (n, i))
        toml.append(f'[checks.p{n:02}]\nrun = "{pkg}/verify.sh"\ninputs = ["{pkg}"]\n')
    if kind == "checks":
        out.append(b"M 100644 inline prove-it.toml\n")
        data(out, "".join(toml).encode())
    elif kind == "baseline":
        out.append(b"M 100755 inline verify.sh\n")
        data(out, BASELINE_VERIFY)
    else:
        sys.exit(f"unknown monorepo kind {kind}")
    out.append(b"\n")
    git(repo, "fast-import", "--quiet", stdin=b"".join(out))
    checkout(repo)


def checks_cmd(repo, count):
    """Commit a checks file of COUNT checks on top of a `repo` repository, through the index."""
    tops = sorted({path.split("/")[0] for path in git(repo, "ls-files", capture=True).decode().split() if "/" in path})
    share = -(-len(tops) // count)
    os.makedirs(os.path.join(repo, "checks"), exist_ok=True)
    toml = []
    for c in range(count):
        script = f"checks/c{c}.sh"
        with open(os.path.join(repo, script), "wb") as f:
            f.write(VERIFY)
        os.chmod(os.path.join(repo, script), 0o755)
        inputs = ", ".join(f'"{top}"' for top in tops[c * share : (c + 1) * share])
        toml.append(f'[checks.c{c}]\nrun = "{script}"\ninputs = [{inputs}]\n')
    with open(os.path.join(repo, "prove-it.toml"), "w") as f:
        f.write("".join(toml))
    git(repo, "add", "prove-it.toml", "checks")
    git(repo, "commit", "-q", "-m", "the benchmark's checks")


def protect_cmd(repo):
    """Commit a checks file holding only a protect list (beside the root verify.sh): the list
    `init` writes for a Python project, and `d00*/`, a tenth of the generated files, so that
    `dirty` changes protected files in every one of those directories."""
    patterns = ["tests/", "test/", "test_*.py", "*_test.py", "conftest.py", "pytest.ini",
                "tox.ini", "setup.cfg", ".coveragerc", ".flake8", "ruff.toml", ".ruff.toml",
                "mypy.ini", ".pylintrc", ".github/workflows/", ".gitlab-ci.yml",
                ".pre-commit-config.yaml", "d00*/"]
    with open(os.path.join(repo, "prove-it.toml"), "w") as f:
        f.write("protect = [\n" + "".join(f'    "{p}",\n' for p in patterns) + "]\n")
    git(repo, "add", "prove-it.toml")
    git(repo, "commit", "-q", "-m", "the benchmark's protected paths")


def main():
    command, repo, *rest = sys.argv[1:]
    if command == "repo":
        repo_cmd(repo, int(rest[0]))
    elif command == "dirty":
        dirty_cmd(repo)
    elif command == "protect":
        protect_cmd(repo)
    elif command == "notes":
        notes_cmd(repo, int(rest[0]))
    elif command == "history":
        history_cmd(repo, int(rest[0]))
    elif command == "monorepo":
        monorepo_cmd(repo, rest[0])
    elif command == "checks":
        checks_cmd(repo, int(rest[0]))
    elif command == "range":
        range_cmd(repo, int(rest[0]))
    elif command == "bisect":
        bisect_cmd(repo, int(rest[0]))
    elif command == "own":
        own_cmd(repo, int(rest[0]), int(rest[1]))
    elif command == "signed":
        history_cmd(repo, int(rest[0]), rest[1])
    else:
        sys.exit(f"unknown command {command}")


if __name__ == "__main__":
    main()
