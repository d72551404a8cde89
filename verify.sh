#!/bin/sh
# How this repository proves itself. git prove-it runs it and records a proof when it exits 0.
# Keep it under a minute when warm; slower checks belong in CI (.ci/run).
set -eu
git diff --check HEAD
cargo fmt --check
cargo clippy --quiet --all-targets -- -D warnings
cargo test --quiet
