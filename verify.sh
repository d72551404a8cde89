#!/bin/sh
# How this repository proves itself. git prove-it runs it and records a proof when it exits 0.
#
# It must pass cold, right after the README's first command (`cargo install --path . --locked`),
# within the default timeout on a 2-core machine: so it builds what the install just built (the
# release profile, in the same target directory, which cargo finds fresh) and drives that binary
# through a real repository. The slow rest (clippy on every target, the whole test suite, the
# docs) is CI's: .ci/run. Keep it under a minute when warm.
set -eu
git diff --check HEAD
cargo fmt --all --check
# No --quiet: a run killed at the timeout leaves cargo's progress in the log.
cargo build --release --locked
bin="${CARGO_TARGET_DIR:-target}/release/git-prove-it"
case $bin in /*) ;; *) bin="$PWD/$bin" ;; esac

# The built tool, end to end, in a throwaway repository: a passing verify.sh is proven and
# recorded, then found again; a failing one is refused with exit 1.
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
mkdir "$scratch/repo"
(
  cd "$scratch/repo"
  # The run below is not ours: it must not take this run's environment for its own.
  unset PROVE_IT PROVE_IT_TREE PROVE_IT_HOST PROVE_IT_SKIP PROVE_IT_TIMEOUT
  export GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null
  export GIT_AUTHOR_NAME=verify GIT_AUTHOR_EMAIL=verify@example.invalid
  export GIT_COMMITTER_NAME=verify GIT_COMMITTER_EMAIL=verify@example.invalid
  git init -q
  printf '#!/bin/sh\nexit 0\n' >verify.sh
  chmod +x verify.sh
  git add verify.sh
  git commit -qm smoke
  "$bin" run >"$scratch/run.out"
  grep -q '^proven: tree' "$scratch/run.out"
  "$bin" run >"$scratch/run.out"
  grep -q '^already proven: tree' "$scratch/run.out"
  "$bin" status >/dev/null
  printf '#!/bin/sh\nexit 1\n' >verify.sh
  if "$bin" run >/dev/null; then
    echo "verify.sh: a failing verify.sh was proven" >&2
    exit 1
  fi
)
