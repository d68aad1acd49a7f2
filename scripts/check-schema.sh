#!/usr/bin/env bash
# Validates every committed certificate and every example against docs/certificate.schema.json,
# and runs the Python snippet of docs/CERTIFICATES.md (see scripts/check_schema.py).
# Installs the validator (Python package jsonschema) for the current user if it is missing.
set -euo pipefail
cd "$(dirname "$0")/.."
if ! python3 -c 'import jsonschema' 2>/dev/null; then
    python3 -m pip install --user --quiet 'jsonschema==4.26.0'
fi
python3 scripts/check_schema.py
