#!/usr/bin/env bash
# The upper-bound engine benchmark of docs/BENCHMARKS.md: for every m and engine, one run of
# `nkrank solve --engine E --time-limit BUDGET --seed 1` into a fresh folder (no known
# certificates, so every engine starts from nothing), and a Markdown row with the best rank it
# certified and the elapsed time at which that certificate was written (exact check included),
# as the run's own log reports it.
# Usage: scripts/bench-engines.sh [WORK_DIR] [M_LIST] [ENGINES] [BUDGET]
#   (defaults: out/bench-engines, "6 7 8 9 10", "structured alternating train train:gap", 600);
#   an engine written ENGINE:START runs with `--start START`; after the engine (and the start,
#   if any) each `+joint` adds `--joint-lps L` (L from the environment's JOINT_LPS, default 60),
#   each `+SCHEDULE` (cosine, cosine-max or cosine-damped) adds `--schedule SCHEDULE`, and each
#   `+stepsN` adds `--steps N`, so that `train+cosine-damped+joint` runs with both and
#   `train+cosine-damped+steps2000` runs the cosine-damped schedule for 2,000 steps.
set -euo pipefail
cd "$(dirname "$0")/.."
work="${1:-out/bench-engines}"
ms="${2:-6 7 8 9 10}"
engines="${3:-structured alternating train train:gap}"
budget="${4:-600}"
cargo build --release --quiet --bin nkrank
mkdir -p "$work"
echo "| m | engine | best rank | time to it (s) | budget (s) | command |"
echo "|---|---|---|---|---|---|"
for m in $ms; do
  for spec in $engines; do
    base="${spec%%+*}"
    engine="${base%%:*}"
    extra=""
    [[ "$base" == *:* ]] && extra="--start ${base#*:}"
    # Every "+WORD" after the engine adds one option, in any order.
    IFS=+ read -r -a mods <<< "${spec#"$base"}"
    for mod in "${mods[@]}"; do
      case "$mod" in
        "") ;;
        joint) extra="${extra:+$extra }--joint-lps ${JOINT_LPS:-60}" ;;
        cosine | cosine-max | cosine-damped) extra="${extra:+$extra }--schedule $mod" ;;
        steps[0-9]*) extra="${extra:+$extra }--steps ${mod#steps}" ;;
        *) echo "unknown engine modifier +$mod in $spec" >&2; exit 2 ;;
      esac
    done
    dir="$work/$(tr ':+' '--' <<< "$spec")-m$m"
    rm -rf "$dir"
    # shellcheck disable=SC2086 # $extra is empty or a few words
    cmd=(target/release/nkrank solve --m "$m" --engine "$engine" --time-limit "$budget" --seed 1 $extra --out "$dir")
    "${cmd[@]}" > "$dir.log" 2>&1 || { echo "| $m | $spec | failed, see $dir.log | | $budget | |"; continue; }
    # The log's lines "[upper m=M   T s] certified rank R -> FILE": the last one is the best.
    last="$(grep -E '^\[upper m=[0-9]+ +[0-9.]+s\] certified rank' "$dir.log" | tail -n 1 || true)"
    shown="\`nkrank solve --m $m --engine $engine --time-limit $budget --seed 1${extra:+ $extra}\`"
    if [[ -z "$last" ]]; then
      echo "| $m | $spec | none | | $budget | $shown |"
      continue
    fi
    secs="$(sed -E 's/^\[upper m=[0-9]+ +([0-9.]+)s\].*/\1/' <<< "$last")"
    rank="$(sed -E 's/.*certified rank ([0-9]+) .*/\1/' <<< "$last")"
    echo "| $m | $spec | $rank | $secs | $budget | $shown |"
  done
done
