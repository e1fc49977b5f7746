#!/usr/bin/env bash
# cclab bench across hosts with Open MPI's mpirun and a hostfile, one rank per GPU (or per core with
# --transport mpi). Usage:
#   scripts/cluster/bench-mpirun.sh HOSTFILE RANKS_PER_HOST [cclab bench options...]
# HOSTFILE lists one host per line ("node1 slots=8"). Every host needs the same cclab build at the same path.
# Environment: NCCL_* variables are forwarded to every rank (-x); CCLAB_MPIRUN_ARGS adds mpirun options
# (e.g. "--mca btl_tcp_if_include ib0" to keep MPI's own traffic off the management network).
set -euo pipefail
if (($# < 2)); then
  sed -n '2,8p' "$0"
  exit 2
fi
hostfile=$1
per_host=$2
shift 2
hosts=$(grep -cvE '^\s*(#|$)' "$hostfile")
forward=()
while IFS='=' read -r name _; do
  forward+=(-x "$name")
done < <(env | grep -E '^NCCL_' || true)
cd "$(dirname "$0")/../.."
# --map-by ppr:N:node puts N consecutive ranks on each host: the local ranks cclab maps to GPUs.
exec mpirun --hostfile "$hostfile" -np $((hosts * per_host)) --map-by "ppr:${per_host}:node" --bind-to core \
  "${forward[@]}" ${CCLAB_MPIRUN_ARGS:-} build/cclab bench "$@"
