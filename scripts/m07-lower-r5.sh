#!/usr/bin/env bash
# Rebuilds and checks the certificate of r*(7, 3) >= 5 (docs/CASE_TREES.md section 12): rank 4
# refuted on the 14 queries of the complement of the 7-cycle by a cover whose clausal form
# CaDiCaL refutes. Together with the committed model of rank 5, r*(7, 3) = 5.
#
#   apt-get install cadical                 # once: the Debian package (version sc2021)
#   bash scripts/m07-lower-r5.sh [DIR]      # default DIR: m07-lower
#
# Two rounds: CaDiCaL (in its configuration for unsatisfiable formulas, --unsat) refutes the
# formula, nkrank adds the hints and keeps the lemmas the refutation needs; the formula's
# clauses that those name (the core, scripts/core-cnf.py) go to CaDiCaL again, and the hints
# of its shorter refutation make the certificate, which is written packed
# (docs/CERTIFICATES.md section 16.4) and fits the format's cap. 46 minutes in a fresh clone
# (after the build, beside two CI runs) and 2.9 GB of memory at the peak. With --python-sat,
# CaDiCaL 1.9.5 of the PyPI package python-sat (pip install python-sat) runs instead, with the
# same two options; its refutations, and so the certificate, differ.
#
# Each stage is skipped when its file exists, so a cut run resumes; every file is written whole
# or not at all. Prints the SHA-256 of every file, to compare with docs/CASE_TREES.md, and
# compares the certificate with the committed one.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
pysat=false
case "${1:-}" in
--python-sat) pysat=true && shift ;;
--unsat) shift ;; # the default since the core round; kept for earlier command lines
esac
out=${1:-m07-lower}
family=0000101,0001001,0001010,0010001,0010010,0010100,0100001,0100010,0100100,0101000,1000010,1000100,1001000,1010000
cargo build --release --quiet --bin nkrank --bin nkrank-check
if $pysat; then
    python3 -c 'import pysat' 2>/dev/null || {
        echo "m07-lower-r5: --python-sat needs python-sat: pip install python-sat" >&2
        exit 1
    }
else
    command -v cadical >/dev/null || {
        echo "m07-lower-r5: CaDiCaL comes from the Debian package: apt-get install cadical" >&2
        exit 1
    }
fi
# refute FORMULA PROOF: a DRUP proof of FORMULA, written under another name first so that a
# cut run leaves no proof behind (exit code 20 is CaDiCaL's "unsatisfiable").
refute() {
    [ -s "$2" ] && return
    if $pysat; then
        python3 "$root/scripts/cadical-drup.py" --unsat "$1" "$2.part" || [ $? -eq 20 ]
    else
        cadical --unsat --no-binary -q "$1" "$2.part" || [ $? -eq 20 ]
    fi
    mv "$2.part" "$2"
}
mkdir -p "$out"
cd "$out"
cert=len3/m07-lower-r5-case-tree.json.gz
cover=(lower chirotopes --m 7 --k 14 --rank 4 --cover --family "$family" --state state)
[ -s c7bar.cnf ] || "$root/target/release/nkrank" "${cover[@]}" --out . --write-cnf c7bar.cnf
refute c7bar.cnf c7bar.drup
[ -s "round1/$cert" ] || "$root/target/release/nkrank" "${cover[@]}" --out round1 --drup c7bar.drup
[ -s core.cnf ] || python3 "$root/scripts/core-cnf.py" "round1/$cert" c7bar.cnf core.cnf
refute core.cnf core.drup
[ -s "$cert" ] || "$root/target/release/nkrank" "${cover[@]}" --out . --drup core.drup
"$root/target/release/nkrank-check" "$cert"
sha256sum c7bar.cnf c7bar.drup "round1/$cert" core.cnf core.drup "$cert"
if cmp -s "$cert" "$root/certificates/$cert"; then
    echo "m07-lower-r5: the same bytes as certificates/$cert"
else
    echo "m07-lower-r5: differs from certificates/$cert (another CaDiCaL, or no such file)"
fi
