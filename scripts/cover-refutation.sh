#!/usr/bin/env bash
# Rebuilds and checks a certificate of a lower bound whose cover by circuits is proved by
# refutation (docs/CASE_TREES.md section 12): the cover's clausal form is refuted by CaDiCaL,
# and nkrank turns CaDiCaL's proof into a certificate that the checker replays.
#
#   apt-get install cadical                              # once: the Debian package (sc2021)
#   bash scripts/cover-refutation.sh NAME [--python-sat] [DIR]   # default DIR: NAME
#
# NAME is the certificate's name without its extension:
#   m07-lower-r5   r*(7, 3) >= 5: rank 4 on the 14 pairs of the complement of the 7-cycle
#                  (46 minutes in a fresh clone after the build, 2.9 GB of memory at the peak
#                  then; its first hint pass has since taken 1.4 GB)
#   m09-lower-r6   r*(9, 3) >= 6: rank 5 on those 14 pairs and the disjoint pair {7, 8}
#                  (CaDiCaL 35 minutes, then hints 29, CaDiCaL on the core 6, hints again)
#
# Two rounds: CaDiCaL (in its configuration for unsatisfiable formulas, --unsat) refutes the
# formula, nkrank adds the hints and keeps the lemmas the refutation needs; the formula's
# clauses that those name (the core, `--write-core`) go to CaDiCaL again, and the hints of its
# shorter refutation make the certificate. The refutation is written packed
# (docs/CERTIFICATES.md section 16.4), and one beyond the format's cap of 64 MiB goes on in
# part files beside the certificate (section 16.5). With --python-sat, CaDiCaL 1.9.5 of the
# PyPI package python-sat (pip install python-sat) runs instead, with the same two options;
# its refutations, and so the certificate, differ.
#
# Each stage is skipped when its file exists, so a cut run resumes; every file is written whole
# or not at all. A hint pass cut short resumes from its last save (every five minutes, in
# state/hints-PROOF.nkh) with the same result. Prints the SHA-256 of every file, to compare with docs/CASE_TREES.md, and
# compares the certificate with the committed one.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
name=${1:-}
shift || true
case "$name" in
m07-lower-r5)
    m=7 k=14 rank=4 base=c7bar
    family=0000101,0001001,0001010,0010001,0010010,0010100,0100001,0100010,0100100,0101000
    family+=,1000010,1000100,1001000,1010000
    ;;
m09-lower-r6)
    # The same 14 pairs in the order of their differences ({i, i + 2}, then {i, i + 3}, i up
    # to 6 modulo 7), then the pair {7, 8}.
    m=9 k=15 rank=5 base=c7e
    family=000000101,000001010,000010100,000101000,001010000,000100001,001000010
    family+=,000001001,000010010,000100100,001001000,000010001,000100010,001000100,110000000
    ;;
*)
    echo "usage: bash scripts/cover-refutation.sh m07-lower-r5|m09-lower-r6 [--python-sat] [DIR]" >&2
    exit 2
    ;;
esac
pysat=false
case "${1:-}" in
--python-sat) pysat=true && shift ;;
--unsat) shift ;; # the default since the core round; kept for earlier command lines
esac
out=${1:-$name}
cargo build --release --quiet --bin nkrank --bin nkrank-check
if $pysat; then
    python3 -c 'import pysat' 2>/dev/null || {
        echo "$name: --python-sat needs python-sat: pip install python-sat" >&2
        exit 1
    }
else
    command -v cadical >/dev/null || {
        echo "$name: CaDiCaL comes from the Debian package: apt-get install cadical" >&2
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
cert=len3/$name-case-tree.json.gz
cover=(lower chirotopes --m "$m" --k "$k" --rank "$rank" --cover --family "$family" --state state)
[ -s "$base.cnf" ] || "$root/target/release/nkrank" "${cover[@]}" --out . --write-cnf "$base.cnf"
refute "$base.cnf" "$base.drup"
[ -s core.cnf ] || "$root/target/release/nkrank" "${cover[@]}" --out . --drup "$base.drup" --write-core core.cnf
refute core.cnf core.drup
[ -s "$cert" ] || "$root/target/release/nkrank" "${cover[@]}" --out . --drup core.drup
"$root/target/release/nkrank-check" "$cert"
# The certificate and the part files of its refutation, if it has any.
written=("$cert")
for part in "len3/$name-case-tree.proof-part"*.gz; do
    [ -e "$part" ] && written+=("$part")
done
sha256sum "$base.cnf" "$base.drup" core.cnf core.drup "${written[@]}"
same=true
for f in "${written[@]}"; do
    cmp -s "$f" "$root/certificates/$f" || same=false
done
if $same; then
    echo "$name: the same bytes as certificates/$cert"
else
    echo "$name: differs from certificates/$cert (another CaDiCaL, or no such file)"
fi
