#!/bin/sh
# How this repository proves itself. git prove-it runs it and records a proof when it exits 0.
# Keep it under a minute when warm; slower checks belong in CI (.ci/run).
set -eu
git diff --check HEAD
cargo fmt --check
cargo clippy --quiet --all-targets -- -D warnings
# The crash trials (dozens of kill -9 runs, about 15 s) run in CI's full `cargo test`, not here.
cargo test --quiet -- --skip crash::
