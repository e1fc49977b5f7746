#!/usr/bin/env bash
# The GPU checks, in one go, on a machine with an NVIDIA GPU, the CUDA toolkit and NCCL (CUDA_HOME / NCCL_HOME,
# default /usr/local/cuda): builds cclab with its NCCL transport and CUDA kernels, then runs
#   1. cuda_kernels_test          CUDA reduction kernels vs the host kernels, bitwise, every type and op
#   2. cuda_reduce_bench          reduction bandwidth vs the device's copy bandwidth (goal >= 80%)
#   3. mpi_collectives_test --nccl  the executor over a 1-rank NCCL communicator: every algorithm, collective,
#                                 size, type and op, out of and in place, against MPI's result
#   4. cclab bench --transport nccl  engine schedules vs ncclAllReduce on device buffers
#   5. cclab train --transport nccl  a few validated training steps on CUDA through the NCCL transport (needs a
#                                 CUDA-enabled LibTorch: configure with -DTorch_DIR=...; skipped otherwise)
# and writes everything to out/gpu-check.log. Exit status: non-zero if any check failed. With more GPUs in the
# machine, set CCLAB_GPU_RANKS=N to run 3 and 4 with N ranks (one GPU each).
set -uo pipefail
cd "$(dirname "$0")/.."
mkdir -p out
log=out/gpu-check.log
ranks=${CCLAB_GPU_RANKS:-1}
mpirun_cmd=(mpirun --oversubscribe --allow-run-as-root -np "$ranks")
exec > >(tee "$log") 2>&1

if ! command -v nvidia-smi >/dev/null || ! nvidia-smi -L; then
  echo "gpu-check: no NVIDIA GPU visible (nvidia-smi); nothing to check here"
  exit 77
fi
scripts/build.sh build || exit 1
[[ -x build/bench/cuda_reduce_bench ]] || {
  echo "gpu-check: cclab was configured without CUDA+NCCL; set CUDA_HOME / NCCL_HOME and remove build/"
  exit 1
}

failed=()
step() {
  local name=$1
  shift
  echo "=== $name: $*"
  "$@"
  local status=$?
  if [[ $status -ne 0 ]]; then
    echo "=== $name: FAILED (status $status)"
    failed+=("$name")
  fi
}
step kernels build/tests/cuda_kernels_test
step bandwidth build/bench/cuda_reduce_bench 256
step executor "${mpirun_cmd[@]}" build/tests/mpi_collectives_test --nccl
step bench "${mpirun_cmd[@]}" build/cclab bench --transport nccl -b 8 -e 256M -f 8 --algo all
train_log=out/gpu-check-train.log
"${mpirun_cmd[@]}" build/cclab train --transport nccl --model resnet-tiny --steps 5 --validate >"$train_log" 2>&1
status=$?
cat "$train_log"
if grep -q "needs a CUDA-enabled LibTorch" "$train_log"; then
  echo "=== train: SKIPPED (this LibTorch has no CUDA; configure with -DTorch_DIR=/path/to/libtorch/share/cmake/Torch)"
elif [[ $status -ne 0 ]]; then
  echo "=== train: FAILED (status $status)"
  failed+=(train)
fi

if ((${#failed[@]})); then
  echo "gpu-check: FAILED: ${failed[*]} (log: $log)"
  exit 1
fi
echo "gpu-check: all checks passed (log: $log)"
