#!/usr/bin/env bash
# The main job: set up, reproduce the certified table r*(m, 3) for a range of m (both sides)
# into OUT_DIR by rerunning the command recorded in each committed certificate, and check every
# result with the solver-free checker.
# Usage: scripts/run.sh [OUT_DIR] [M_RANGE] [TIME_LIMIT_PER_M]   (defaults: out/certificates, 1-6,
# the time limit recorded in each command; a smaller limit that binds may give other models)
#
# The commands come from `nkrank table --format csv certificates` (the provenance of the best
# certificate of each side), so the run never searches a rank that a certificate already
# refutes or beats: each search asks for exactly the rank of the committed model, and
# `--known certificates` passes the committed bounds on (e.g. no rank-2 search at m = 5, which
# the case tree refutes). A rerun into the same OUT_DIR resumes: ranks already certified there
# are not searched again.
set -euo pipefail
cd "$(dirname "$0")/.."
out="${1:-out/certificates}"
range="${2:-1-6}"
limit="${3:-}"
lo="${range%-*}"
hi="${range#*-}"
scripts/setup.sh
mkdir -p "$out"
table="$(mktemp)"
trap 'rm -f "$table"' EXIT
target/release/nkrank table --format csv --max-m "$hi" certificates > "$table"
declare -A seen=()
while IFS= read -r line; do
  # Rows of length 3 only: "3,m,...".
  [[ "$line" == 3,* ]] || continue
  m="$(cut -d, -f2 <<< "$line")"
  (( m >= lo && m <= hi )) || continue
  # The lower and upper commands are the quoted fields that start with "nkrank "; the upper
  # one runs first, so that a search run by the lower one finds its rank already certified.
  while IFS= read -r cmd; do
    [[ -n "$cmd" && -z "${seen[$cmd]:-}" ]] || continue
    seen[$cmd]=1
    read -r -a words <<< "$cmd"
    if [[ -n "$limit" ]]; then
      for i in "${!words[@]}"; do
        [[ "${words[$i]}" == --time-limit ]] && words[i+1]="$limit"
      done
    fi
    # A refutation of another SAT solver (`--drup FILE`) is rebuilt by scripts/cover-refutation.sh,
    # which runs that solver first (apt-get install cadical): r*(7, 3) >= 5 (46 minutes in a
    # fresh clone beside CI runs) and r*(9, 3) >= 6; its certificate is copied into OUT_DIR.
    if [[ " $cmd " == *" --drup "* ]]; then
      name="" m_arg=0
      for i in "${!words[@]}"; do
        [[ "${words[$i]}" == --m ]] && m_arg="${words[i+1]}"
        [[ "${words[$i]}" == --rank ]] && name="$(printf 'm%02d-lower-r%d' "$m_arg" $((words[i+1] + 1)))"
      done
      # The script knows which certificates it rebuilds; it exits with 2 for any other name.
      echo "+ scripts/cover-refutation.sh $name $out/$name" >&2
      status=0
      scripts/cover-refutation.sh "$name" "$out/$name" || status=$?
      if (( status == 2 )); then
        echo "run.sh: no script rebuilds the proof that this command reads: $cmd" >&2
      elif (( status != 0 )); then
        exit "$status"
      else
        mkdir -p "$out/len3"
        # The certificate and the part files of its refutation, if any.
        cp "$out/$name/len3/$name-case-tree".*.gz "$out/len3/"
      fi
      continue
    fi
    extra=(--out "$out")
    [[ "${words[1]}" == solve ]] && extra+=(--known certificates)
    # A chirotope search keeps its resumable state beside its certificates, not in the clone.
    [[ "${words[1]} ${words[2]:-}" == "lower chirotopes" ]] && extra+=(--state "$out/chirotope-state")
    echo "+ target/release/${cmd} ${extra[*]}" >&2
    "target/release/${words[0]}" "${words[@]:1}" "${extra[@]}"
  done < <(grep -o '"nkrank [^"]*"' <<< "$line" | tr -d '"' | tac)
done < "$table"
cargo build --release --quiet --no-default-features --bin nkrank-check --target-dir target/checker
target/checker/release/nkrank-check "$out"
