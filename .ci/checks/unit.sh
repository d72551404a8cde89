#!/bin/sh
# The check `unit` of prove-it.toml: every crate's unit tests. It runs from its own directory;
# the repository's root is two levels up.
#
# Right after the README's first command (`cargo install --path . --locked`, which builds the
# release profile in the same target directory), this must not build the dependencies again:
# - so it builds the release profile too, whose dependencies the install just built (the tests'
#   dependencies do not change their features: see Cargo.toml's dev-dependencies);
# - with this repository's crates and the tests' own dependencies unoptimized
#   (`unit-profile.toml`, whose overrides leave every other package as the install built it):
#   they compile in a fraction of the time, and the tests run as fast, their work being in git
#   and the dependencies.
set -eu
cd "$(dirname "$0")/../.."
# No --quiet: a run killed at the timeout leaves cargo's progress in the log.
cargo test --release --locked --workspace --lib --config .ci/checks/unit-profile.toml
