#!/usr/bin/env bash
# Validates every committed certificate and every example against docs/certificate.schema.json,
# and runs the Python snippet of docs/CERTIFICATES.md (see scripts/check_schema.py).
# Installs the validators if they are missing: the Python package jsonschema, and jsonschema-rs
# (the Rust implementation, a binary wheel), which takes the large certificates in seconds where
# jsonschema takes minutes. Without a wheel of jsonschema-rs for this machine every file goes
# through jsonschema alone (slower, the same verdicts). They go to the user's site packages;
# where the system's Python refuses that (an "externally managed" Python, PEP 668, as Debian and
# Ubuntu ship it) or has no pip, both go to a virtual environment of this script's own,
# target/schema-venv, which `cargo clean` removes with the rest of target/.
set -euo pipefail
cd "$(dirname "$0")/.."
VENV=target/schema-venv
JSONSCHEMA='jsonschema==4.26.0'
JSONSCHEMA_RS='jsonschema-rs==0.61.2'
py=python3
[ -x "$VENV/bin/python" ] && py="$VENV/bin/python"

# Installs one validator for $py: $1 is the module, $2 the pinned requirement, and "optional"
# in $3 turns a failure into a note (no wheel of jsonschema-rs for this machine).
install() {
    local module=$1 req=$2 optional=${3:-}
    local opts=(--quiet)
    [ "$module" = jsonschema_rs ] && opts+=(--only-binary :all:)
    "$py" -c "import $module" 2>/dev/null && return 0
    local log
    if [ "$py" = python3 ]; then
        log=$(python3 -m pip install --user "${opts[@]}" "$req" 2>&1) && return 0
        if grep -Eq 'externally-managed-environment|No module named pip' <<<"$log"; then
            echo "check-schema: this Python does not install for the user (PEP 668, or no pip); using a virtual environment, $VENV" >&2
            python3 -m venv "$VENV" || {
                echo "check-schema: python3 -m venv failed; install the venv module (Debian: apt-get install python3-venv) or the package $req" >&2
                exit 1
            }
            py="$VENV/bin/python"
            # Both validators now go to the new environment, the one installed before as well.
            install jsonschema_rs "$JSONSCHEMA_RS" optional
            install jsonschema "$JSONSCHEMA"
            return 0
        fi
    else
        log=$("$py" -m pip install "${opts[@]}" "$req" 2>&1) && return 0
    fi
    if [ "$optional" = optional ]; then
        echo "check-schema: no $req for this machine; jsonschema alone validates" >&2
        return 0
    fi
    printf '%s\n' "$log" >&2
    echo "check-schema: could not install $req" >&2
    exit 1
}

install jsonschema_rs "$JSONSCHEMA_RS" optional
install jsonschema "$JSONSCHEMA"
"$py" scripts/check_schema.py "$@"
