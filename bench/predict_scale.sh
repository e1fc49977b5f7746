#!/usr/bin/env bash
# Wall time of one training-step what-if (`cclab predict`, ResNet-50 on DGX A100, α-β backend) per algorithm
# and GPU count: how prediction cost grows with the world. Each cell is one process: plan, the compact checks,
# and the α-β time of the 5 DDP buckets of one step, on the compact form.
# Usage: bench/predict_scale.sh [BUILD_DIR] [MAX_NODES]      (8 GPUs per node; default up to 128 nodes)
set -euo pipefail
build=${1:-build}
max_nodes=${2:-128}
algorithms=(ring tree hierarchical halving_doubling auto)
printf "%6s" GPUs
for a in "${algorithms[@]}"; do printf " %17s" "$a"; done
printf "\n"
for ((nodes = 1; nodes <= max_nodes; nodes *= 2)); do
  printf "%6d" $((nodes * 8))
  for a in "${algorithms[@]}"; do
    out=$( { /usr/bin/time -f "%e %M" "$build/cclab" predict --set topology.nodes=$nodes \
      --set communication.algorithm=$a >/dev/null; } 2>&1 | tail -1)
    read -r seconds kb <<<"$out"
    printf " %7.2fs %6.0fMiB" "$seconds" "$((kb / 1024))"
  done
  printf "\n"
done
