#!/usr/bin/env bash
# Set up, run the whole test suite (the trusted core's tests and the solver's), and re-verify
# the committed certificates with the checker built without the LP solver.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
# --no-fail-fast: one failing test binary does not hide the failures of the others.
cargo test --release --workspace --no-fail-fast
cargo build --release --quiet --no-default-features --bin nkrank-check --target-dir target/checker
target/checker/release/nkrank-check certificates
# The manifest: every file's hash and claim, nothing missing or extra; prints the root hash.
target/checker/release/nkrank-check --manifest certificates/MANIFEST
# The JSON Schema of format v1 against every certificate and example (Python jsonschema).
scripts/check-schema.sh
