#!/usr/bin/env bash
# Set up, run the whole test suite, and re-verify the committed certificates with the checker
# built without the LP solver.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
cargo test --release
cargo build --release --quiet --no-default-features --bin nkrank-check --target-dir target/checker
target/checker/release/nkrank-check certificates
