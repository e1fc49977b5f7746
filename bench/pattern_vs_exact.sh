#!/usr/bin/env bash
# The pattern-level simulation against the op-by-op one (its reference) on training scenarios: each scenario's
# `backend: sim` points predicted both ways (`cclab predict S --backend sim [--exact] --format csv`), with the
# wall time of each and the largest difference in step time and in the step's collective time (comm_ms)
# between them. docs/simulation.md, "Pattern-level mode", has the table this prints.
# Usage: bench/pattern_vs_exact.sh [BUILD_DIR] [SCENARIO.yaml...]   (default: every shipped scenario)
set -euo pipefail
build=${1:-build}
here=$(cd "$(dirname "$0")/.." && pwd)
if (($# > 1)); then scenarios=("${@:2}"); else scenarios=("$here"/scenarios/*.yaml); fi
cclab=$build/cclab
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

now() { date +%s.%N; }
printf "%-22s %6s %10s %10s %14s %14s\n" scenario points "op by op" "by pattern" "worst step" "worst comm"
for scenario in "${scenarios[@]}"; do
  name=$(basename "$scenario" .yaml)
  t0=$(now)
  "$cclab" predict "$scenario" --backend sim --exact --format csv >"$work/exact.csv"
  t1=$(now)
  "$cclab" predict "$scenario" --backend sim --format csv >"$work/pattern.csv"
  t2=$(now)
  # Rows pair up in order (the same sweep); columns are found by name in the header.
  paste -d '\n' "$work/pattern.csv" "$work/exact.csv" | awk -F, -v name="$name" -v te="$(echo "$t1 - $t0" | bc)" \
    -v tp="$(echo "$t2 - $t1" | bc)" '
    NR == 1 { for (i = 1; i <= NF; ++i) col[$i] = i; next }
    NR == 2 { next }
    NR % 2 == 1 { step = $col["step_ms"]; comm = $col["comm_ms"]; next }
    {
      ++points
      d = (step - $col["step_ms"]) / $col["step_ms"]
      c = $col["comm_ms"] > 0 ? (comm - $col["comm_ms"]) / $col["comm_ms"] : 0
      if (d * d > worst * worst) worst = d
      if (c * c > worst_comm * worst_comm) worst_comm = c
    }
    END { printf "%-22s %6d %9.1fs %9.1fs %+13.3f%% %+13.2f%%\n", name, points, te, tp, 100 * worst, 100 * worst_comm }'
done
