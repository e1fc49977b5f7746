#!/usr/bin/env bash
# The compact IR's acceptance commands at 16,384 GPUs (DGX H100 nodes, 1 GiB allreduce, 8 channels; SHARP
# switches for collnet and nvls_sharp): wall time
# and peak RSS of one `cclab plan` process per algorithm, plan + verify alone (--cost never) and with the steps
# and the α-β time under the three NCCL protocols (the default), median of N runs side by side (this machine
# is shared and noisy). auto costs the candidates in the order of their lower bounds and skips those that
# cannot win (engine/model/lower_bound.hpp).
# Usage: bench/plan_scale.sh [BUILD_DIR] [NODES] [N]
set -euo pipefail
build=${1:-build}
nodes=${2:-2048}
n=${3:-3}
keys=""  # preset keys after the node count (",sharp=1" for the in-network algorithms)
run() {  # prints "median_seconds max_MiB" of n runs
  local times=() peak=0
  for ((i = 0; i < n; i++)); do
    read -r seconds kb < <({ /usr/bin/time -f "%e %M" "$build/cclab" plan --topology "dgx_h100:$nodes$keys" \
      --collective allreduce --size 1GiB "$@" >/dev/null; } 2>&1 | tail -1)
    times+=("$seconds")
    ((kb > peak)) && peak=$kb
  done
  printf "%s\n" "${times[@]}" | sort -n | awk -v peak="$peak" '{a[NR] = $1} END {printf "%7.2f s %6.0f MiB", a[int((NR + 1) / 2)], peak / 1024}'
}
printf "%-18s %22s %22s\n" "algorithm" "plan + verify" "+ steps, α-β (3 prot.)"
for a in ring tree hierarchical leader halving_doubling nvls_tree auto collnet nvls_sharp; do
  # CollNet and NVLS+SHARP reduce in the network's switches: the same nodes on SHARP switches.
  [[ $a == collnet || $a == nvls_sharp ]] && keys=",sharp=1"
  if [[ $a == auto ]]; then plain="-"; else plain=$(run --algo "$a" --cost never); fi
  printf "%-18s %22s %22s\n" "$a$keys" "$plain" "$(run --algo "$a")"
done
