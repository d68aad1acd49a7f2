#!/usr/bin/env bash
# Hygiene that CI enforces: rustfmt (default configuration) and clippy with warnings as errors,
# with and without the solver. Run after scripts/setup.sh (the solver build needs HiGHS).
set -euo pipefail
cd "$(dirname "$0")/.."
cargo fmt --all --check
cargo clippy --release --quiet --no-default-features --workspace --all-targets -- -D warnings
cargo clippy --release --quiet --workspace --all-targets -- -D warnings
echo "lint: rustfmt and clippy clean"
