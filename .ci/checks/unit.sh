#!/bin/sh
# The check `unit` of prove-it.toml: every crate's unit tests. It runs from its own directory;
# the repository's root is two levels up.
#
# In the release profile, so that right after the README's first command (`cargo install
# --path . --locked`, which builds that profile in the same target directory) it reuses the
# dependencies already built instead of building them all again for the test profile.
set -eu
cd "$(dirname "$0")/../.."
# No --quiet: a run killed at the timeout leaves cargo's progress in the log.
cargo test --release --locked --workspace --lib
