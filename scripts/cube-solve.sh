#!/usr/bin/env bash
# Refutes one cube of a cover's clausal form with CaDiCaL and keeps its DRUP proof, for
# `nkrank lower chirotopes ... --drup-cubes STEM.cubes` (docs/CASE_TREES.md, section 12,
# "Cubes"). One run per cube, each with its own memory, so that a scheduler runs them:
#
#   parallel -j 2 scripts/cube-solve.sh STEM.cnf STEM.cubes ::: $(seq 0 15)
#   sbatch --array=0-15 --mem=16G --wrap 'scripts/cube-solve.sh STEM.cnf STEM.cubes $SLURM_ARRAY_TASK_ID'
#
# The formula is read with the cube's literals appended as unit clauses (CaDiCaL's --force
# accepts the header's clause count as it stands). The proof goes to STEM.cube-I.drup, first
# as STEM.cube-I.drup.part and renamed once CaDiCaL reports the cube unsatisfiable, so a cut
# run leaves no proof behind (binary DRUP, CaDiCaL's default: about 40 % of the text's size);
# a cube whose proof is already there is skipped, so a rerun of the same command resumes. Exit status 0 (refuted, or done before), 10 (satisfiable: the cover
# does not close), anything else an error (so that a scheduler counts only those as failed).
# Needs `cadical` (Debian package `cadical`), or CADICAL=path.
set -euo pipefail

if [ $# -ne 3 ]; then
    echo "usage: cube-solve.sh STEM.cnf STEM.cubes I" >&2
    exit 2
fi
cnf=$1
cubes=$2
index=$3
cadical=${CADICAL:-cadical}
case $index in
    '' | *[!0-9]*)
        echo "cube-solve.sh: the cube index must be a number, found '$index'" >&2
        exit 2
        ;;
esac
proof="${cubes%.cubes}.cube-$index.drup"
if [ -e "$proof" ]; then
    echo "cube $index: refuted before ($proof)"
    exit 0
fi
# Line I of the cubes that are not comments: `a l_1 ... l_d 0`.
cube=$(grep -E '^a ' "$cubes" | sed -n "$((index + 1))p")
if [ -z "$cube" ]; then
    echo "cube-solve.sh: $cubes has no cube $index" >&2
    exit 2
fi
units=$(echo "$cube" | sed -e 's/^a //' -e 's/ 0$//')
start=$(date +%s)
status=0
{
    cat "$cnf"
    for l in $units; do
        echo "$l 0"
    done
} | "$cadical" --force --unsat -q - "$proof.part" >/dev/null || status=$?
elapsed=$(($(date +%s) - start))
case $status in
    20)
        mv "$proof.part" "$proof"
        echo "cube $index ($units): unsatisfiable after $elapsed s, proof in $proof"
        status=0
        ;;
    10)
        rm -f "$proof.part"
        echo "cube $index ($units): SATISFIABLE after $elapsed s: a chirotope escapes the closed splits"
        ;;
    *)
        rm -f "$proof.part"
        echo "cube $index ($units): cadical stopped with status $status after $elapsed s" >&2
        ;;
esac
exit "$status"
