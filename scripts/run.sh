#!/usr/bin/env bash
# The main job: set up, solve r*(m, 3) for the default range, and check every certificate with
# the solver-free checker. Usage: scripts/run.sh [OUT_DIR] [M_RANGE] [TIME_LIMIT_PER_M]
set -euo pipefail
cd "$(dirname "$0")/.."
out="${1:-out/certificates}"
range="${2:-1-8}"
limit="${3:-60}"
scripts/setup.sh
target/release/nkrank solve --m "$range" --length 3 --time-limit "$limit" --out "$out"
cargo build --release --quiet --no-default-features --bin nkrank-check --target-dir target/checker
target/checker/release/nkrank-check "$out"
