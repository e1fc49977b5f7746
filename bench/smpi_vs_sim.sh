#!/usr/bin/env bash
# cclab sim against SimGrid's own MPI simulator, side by side in one run: the same ring allreduce (SMPI's
# `lr`: ring reduce-scatter then ring allgather, unpipelined, one ring in rank order; cclab: ring with one
# channel and no chunking) on the same platform (cclab writes it with --dump-platform --platform-all-pairs)
# under the same network model (CM02, no cross-traffic, no TCP window; cclab weighs every flow the same where
# CM02 weighs by route latency, which cannot matter here: one flow per link), reductions free on both sides
# (SMPI: smpi/simulate-computation:no; cclab: --reduce-bw 1000TB/s), no NCCL protocol (--protocol raw).
# cclab runs twice: op by op (the reference) and by pattern (the default; --exact is op by op, docs/simulation.md).
#
# Prints, per rank count: the predicted times and their differences from SMPI's, the wall times and SMPI's
# over cclab's.
# Usage: bench/smpi_vs_sim.sh [BUILD_DIR] [SIZE_BYTES] [NODES...]   (default 2 8 32 nodes = 16, 64, 256 ranks;
#        needs smpicc/smpirun: libsimgrid-dev)
set -euo pipefail
build=${1:-build}
bytes=${2:-67108864}
if (($# > 2)); then node_counts=("${@:3}"); else node_counts=(2 8 32); fi
cclab=$build/cclab
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
command -v smpicc >/dev/null || { echo "smpi_vs_sim: smpicc not found (install libsimgrid-dev)" >&2; exit 1; }
smpicc -O2 -o "$work/allreduce" "$(dirname "$0")/smpi/allreduce.c"

now() { date +%s.%N; }
printf "# ring allreduce of %s bytes (f32), %s\n" "$bytes" "$(smpirun -version 2>/dev/null | head -1 || true)"
printf "%6s %-12s %14s %14s %9s %14s %9s %10s %10s %8s %10s %8s\n" ranks topology "smpi(us)" "cclab(us)" "diff" \
  "fast(us)" "diff" "smpi wall" "cclab wall" "speedup" "fast wall" "speedup"
for nodes in "${node_counts[@]}"; do
  ranks=$((nodes * 8))
  topo="dgx_a100:$nodes"
  args=(sim --topology "$topo" --algo ring --channels 1 --chunk 0 -b "$bytes" -e "$bytes" --reduce-bw 1000TB/s
    --protocol raw)
  "$cclab" "${args[@]}" --dump-platform "$work/p.xml" --platform-all-pairs >/dev/null
  grep -o 'host id="[^"]*"' "$work/p.xml" | cut -d'"' -f2 >"$work/hosts"

  t0=$(now)
  cclab_us=$("$cclab" "${args[@]}" --exact | awk '$1 == "ring" {print $6}')
  t1=$(now)
  fast_us=$("$cclab" "${args[@]}" | awk '$1 == "ring" {print $6}')
  tf=$(now)
  smpi_us=$(smpirun -np "$ranks" -platform "$work/p.xml" -hostfile "$work/hosts" \
    --cfg=smpi/allreduce:lr --cfg=network/model:CM02 --cfg=network/crosstraffic:0 \
    --cfg=network/TCP-gamma:0 --cfg=smpi/simulate-computation:no \
    "$work/allreduce" "$bytes" 2>/dev/null | awk '/smpi allreduce/ {print $(NF-1)}')
  t2=$(now)
  awk -v r="$ranks" -v t="$topo" -v s="$smpi_us" -v c="$cclab_us" -v f="$fast_us" -v a="$t0" -v b="$t1" \
    -v e="$tf" -v d="$t2" 'BEGIN {
    printf "%6d %-12s %14.3f %14.3f %8.4f%% %14.3f %8.4f%% %9.2fs %9.3fs %7.0fx %9.3fs %7.0fx\n", r, t, s, c,
           100 * (c - s) / s, f, 100 * (f - s) / s, d - e, b - a, (d - e) / (b - a), e - b, (d - e) / (e - b) }'
done
