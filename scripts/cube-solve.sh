#!/usr/bin/env bash
# Refutes one cube of a cover's clausal form with CaDiCaL (or Kissat) and keeps its DRUP
# proof, for `nkrank lower chirotopes ... --drup-cubes STEM.cubes` (docs/CASE_TREES.md,
# section 12, "Cubes"). One run per cube, each with its own memory, so that a scheduler runs
# them:
#
#   parallel -j 2 scripts/cube-solve.sh STEM.cnf STEM.cubes ::: $(seq 0 15)
#   sbatch --array=0-15 --mem=16G --wrap 'scripts/cube-solve.sh STEM.cnf STEM.cubes $SLURM_ARRAY_TASK_ID'
#
# The formula is read with the cube's literals appended as unit clauses. The proof goes to
# STEM.cube-I.drup, first as STEM.cube-I.drup.part and renamed once the solver reports the
# cube unsatisfiable, so a cut run leaves no proof behind (binary DRUP, both solvers' default:
# about 40 % of the text's size); a cube whose proof is already there is skipped, so a rerun
# of the same command resumes. Exit status 0 (refuted, or done before), 10 (satisfiable:
# the cover does not close), anything else an error (so that a scheduler counts only those
# as failed).
# Needs `cadical` (Debian package `cadical`), or CADICAL=path; with SOLVER=kissat, Kissat
# instead (`kissat` on the PATH, or KISSAT=path; not installed by the repository), run with
# --factor=false: its bounded variable addition writes proof steps that add variables, which
# the hint pass does not take.
set -euo pipefail

if [ $# -ne 3 ]; then
    echo "usage: cube-solve.sh STEM.cnf STEM.cubes I" >&2
    exit 2
fi
cnf=$1
cubes=$2
index=$3
proof="${cubes%.cubes}.cube-$index.drup"
proof_part="$proof.part"
solver=${SOLVER:-cadical}
case $solver in
    cadical | kissat) ;;
    *)
        echo "cube-solve.sh: SOLVER must be cadical or kissat, found '$solver'" >&2
        exit 2
        ;;
esac
case $index in
    '' | *[!0-9]*)
        echo "cube-solve.sh: the cube index must be a number, found '$index'" >&2
        exit 2
        ;;
esac
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
feed() {
    cat "$cnf"
    for l in $units; do
        echo "$l 0"
    done
}
# CaDiCaL's --force and Kissat's --relaxed accept the header's clause count as it stands.
if [ "$solver" = cadical ]; then
    solve=("${CADICAL:-cadical}" --force --unsat -q)
else
    solve=("${KISSAT:-kissat}" --relaxed --factor=false -q)
fi
# The formula reaches the solver through a FIFO beside the proof, removed on exit, so that it
# is not copied per cube (Kissat writes a proof only after a formula named by its path, and
# refuses /dev/stdin).
fifo="$proof.fifo"
rm -f "$fifo"
mkfifo "$fifo"
trap 'rm -f "$fifo"' EXIT
feed >"$fifo" &
writer=$!
"${solve[@]}" "$fifo" "$proof_part" >/dev/null || status=$?
# A writer still blocked on the FIFO (the solver stopped before reading it) is stopped.
kill "$writer" 2>/dev/null || true
elapsed=$(($(date +%s) - start))
case $status in
    20)
        mv "$proof_part" "$proof"
        echo "cube $index ($units): unsatisfiable after $elapsed s, proof in $proof"
        status=0
        ;;
    10)
        rm -f "$proof_part"
        echo "cube $index ($units): SATISFIABLE after $elapsed s: a chirotope escapes the closed splits"
        ;;
    *)
        rm -f "$proof_part"
        echo "cube $index ($units): $solver stopped with status $status after $elapsed s" >&2
        # Status 0 is a run cut by the solver's own limit (undecided): a failure, not a refutation.
        [ "$status" -ne 0 ] || status=1
        ;;
esac
exit "$status"
