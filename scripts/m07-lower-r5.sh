#!/usr/bin/env bash
# Rebuilds and checks the certificate of r*(7, 3) >= 5 (docs/CASE_TREES.md section 12): rank 4
# refuted on the 14 queries of the complement of the 7-cycle by a cover whose clausal form
# CaDiCaL refutes. Together with the committed model of rank 5, r*(7, 3) = 5.
#
#   bash scripts/setup.sh && pip install python-sat   # once
#   bash scripts/m07-lower-r5.sh [DIR]                # default DIR: m07-lower
#
# or, with the Debian package's CaDiCaL in its configuration for unsatisfiable formulas
# (2.3 times fewer steps; 27 minutes after the build and 3.3 GB of memory at the peak):
#
#   apt-get install cadical                          # once
#   bash scripts/m07-lower-r5.sh --unsat [DIR]       # default DIR: m07-lower-unsat
#
# About an hour on 2 cores (build, circuit splits 2 min, CaDiCaL 22 min, hints 30 min, check
# 10 s; 51 min in a fresh clone beside a CI run) and 8.2 GB of memory at the peak. The
# certificate (112 MB gzip, 611 MB of JSON) is beyond the format's cap of 64 MiB, so it is not
# in certificates/ and nkrank-check reads it with --max-mib 1024. Each stage is skipped when
# its file exists, so a cut run resumes; every file is written whole or not at all. Prints the
# SHA-256 of the formula, the proof and the certificate, to compare with docs/CASE_TREES.md.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
unsat=false
if [ "${1:-}" = --unsat ]; then
    unsat=true
    shift
fi
if $unsat; then out=${1:-m07-lower-unsat}; else out=${1:-m07-lower}; fi
family=0000101,0001001,0001010,0010001,0010010,0010100,0100001,0100010,0100100,0101000,1000010,1000100,1001000,1010000
cargo build --release --quiet --bin nkrank --bin nkrank-check
if $unsat; then
    command -v cadical >/dev/null || {
        echo "m07-lower-r5: --unsat runs the Debian package's CaDiCaL: apt-get install cadical" >&2
        exit 1
    }
else
    python3 -c 'import pysat' 2>/dev/null || {
        echo "m07-lower-r5: CaDiCaL comes from python-sat: pip install python-sat" >&2
        exit 1
    }
fi
mkdir -p "$out"
cd "$out"
cover=(lower chirotopes --m 7 --k 14 --rank 4 --cover --family "$family" --state state --out .)
[ -s c7bar.cnf ] || "$root/target/release/nkrank" "${cover[@]}" --write-cnf c7bar.cnf
if [ ! -s c7bar.drup ]; then
    if $unsat; then
        # Written under another name first, so that a cut run leaves no proof behind.
        cadical --unsat --no-binary -q c7bar.cnf c7bar.drup.part || [ $? -eq 20 ]
        mv c7bar.drup.part c7bar.drup
    else
        python3 "$root/scripts/cadical-drup.py" c7bar.cnf c7bar.drup || [ $? -eq 20 ]
    fi
fi
cert=len3/m07-lower-r5-case-tree.json.gz
[ -s "$cert" ] || "$root/target/release/nkrank" "${cover[@]}" --drup c7bar.drup
"$root/target/release/nkrank-check" --max-mib 1024 "$cert"
sha256sum c7bar.cnf c7bar.drup "$cert"
