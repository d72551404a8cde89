#!/bin/sh
# The check `unit` of prove-it.toml: every crate's unit tests. It runs from its own directory;
# the repository's root is two levels up.
#
# Right after the README's first command (`cargo install --path . --locked`, which builds the
# release profile in the same target directory), this must not build the dependencies again:
# - so it builds the release profile too, whose dependencies the install just built (the tests'
#   dependencies do not change their features: see Cargo.toml's dev-dependencies);
# - and it builds only this repository's own crates unoptimized (`--config`, which leaves every
#   dependency's fingerprint as the install left it): their tests compile in a third of the time,
#   and run as fast, the work being in git and the dependencies.
set -eu
cd "$(dirname "$0")/../.."
# No --quiet: a run killed at the timeout leaves cargo's progress in the log.
cargo test --release --locked --workspace --lib \
  --config 'profile.release.package."git-prove-it".opt-level = 0' \
  --config 'profile.release.package."git-prove-it-core".opt-level = 0' \
  --config 'profile.release.package."git-prove-it-claim".opt-level = 0'
