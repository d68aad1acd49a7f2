#!/usr/bin/env bash
# Hygiene that CI enforces: rustfmt (default configuration), clippy with warnings as errors,
# with and without the solver, and the API docs of the workspace's crates without a warning
# (a broken or private intra-doc link fails). Run after scripts/setup.sh (the solver build needs
# HiGHS).
set -euo pipefail
cd "$(dirname "$0")/.."
cargo fmt --all --check
cargo clippy --release --quiet --no-default-features --workspace --all-targets -- -D warnings
cargo clippy --release --quiet --workspace --all-targets -- -D warnings
RUSTDOCFLAGS="-D warnings" cargo doc --release --quiet --no-deps --workspace
echo "lint: rustfmt, clippy and rustdoc clean"
