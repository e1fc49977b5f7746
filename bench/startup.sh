#!/usr/bin/env bash
# Start-up time of `cclab` commands that need neither MPI, NCCL, LibTorch nor SimGrid (the front loads none
# of them; bench/calibrate/train run in cclab-real, SimGrid is a module loaded on first use): the median wall
# time of N runs of each, side by side in one run (this machine is shared and noisy).
# Usage: bench/startup.sh [BUILD_DIR] [N]
set -euo pipefail
build=${1:-build}
n=${2:-10}
median_ms() {
  local times=()
  for ((i = 0; i < n; i++)); do
    local t0 t1
    t0=$(date +%s%N)
    "$@" >/dev/null 2>&1
    t1=$(date +%s%N)
    times+=($(((t1 - t0) / 1000)))
  done
  printf "%s\n" "${times[@]}" | sort -n | awk '{a[NR] = $1} END {m = (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2; printf "%.1f", m / 1000}'
}
printf "%-58s %12s\n" "command (median of $n)" "wall (ms)"
for cmd in "--version" "algorithms" "plan --topology dgx_a100:1 --size 1MiB" "topology dgx_h100:4"; do
  # shellcheck disable=SC2086
  printf "%-58s %12s\n" "cclab $cmd" "$(median_ms "$build/cclab" $cmd)"
done
if [[ -x "$build/cclab-real" ]]; then
  printf "%-58s %12s\n" "cclab bench --help (cclab-real: MPI, NCCL, LibTorch)" "$(median_ms "$build/cclab" bench --help)"
fi
