#!/usr/bin/env bash
# Validates every committed certificate and every example against docs/certificate.schema.json,
# and runs the Python snippet of docs/CERTIFICATES.md (see scripts/check_schema.py).
# Installs the validators for the current user if they are missing: the Python package
# jsonschema, and jsonschema-rs (the Rust implementation, a binary wheel), which takes the large
# certificates in seconds where jsonschema takes minutes. Without a wheel of jsonschema-rs for
# this machine every file goes through jsonschema alone (slower, the same verdicts).
set -euo pipefail
cd "$(dirname "$0")/.."
if ! python3 -c 'import jsonschema' 2>/dev/null; then
    python3 -m pip install --user --quiet 'jsonschema==4.26.0'
fi
if ! python3 -c 'import jsonschema_rs' 2>/dev/null; then
    python3 -m pip install --user --quiet --only-binary :all: 'jsonschema-rs==0.61.2' ||
        echo "check-schema: no jsonschema-rs for this machine; jsonschema alone validates" >&2
fi
python3 scripts/check_schema.py "$@"
