#!/usr/bin/env bash
# AddressSanitizer + UndefinedBehaviorSanitizer build (CMake option CCLAB_SANITIZE) of everything but the CUDA and
# LibTorch code, and its test suites run under the sanitizers: engine, topology, scenario, simulator,
# checkpoint and calibration suites; the executor against Open MPI's collectives under mpirun (every
# mpi_collectives entry); the planner matrix for world sizes up to 11 and the topology-derived worlds (the
# sizes 16-64 are most of its time, which ASan multiplies; the Release suite runs them). Not here: the CLI, training
# and bench tests, which need the cclab executable and with it LibTorch (not built with ASan).
# Any finding fails the run (UBSan does not recover). Usage: scripts/sanitize.sh [BUILD_DIR, default build-asan]
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build-asan}
scripts/install-deps.sh
tests=(units_test topology_test schedule_test expansion_test formulas_test mutation_test workload_test scenario_test sim_test sim_pattern_test
       ring_search_test compare_test compact_cost_test
       reduce_kernels_test checkpoint_test calibration_test)
mpi_tests=(mpi_collectives_np2 mpi_collectives_np3 mpi_collectives_np4 mpi_collectives_streams_np2
           mpi_collectives_streams_np4 mpi_collectives_streams_2x2)
if [[ ! -f "$build/CMakeCache.txt" ]]; then
  cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCCLAB_SANITIZE=ON -DCCLAB_WITH_CUDA=OFF \
    -DCCLAB_BUILD_BENCH=OFF
fi
cmake --build "$build" -j"${CCLAB_JOBS:-2}" --target "${tests[@]}" planner_matrix_test mpi_collectives_test
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1
regex=$(IFS='|'; echo "^(${tests[*]})$")
ctest --test-dir "$build" --output-on-failure -j"${CCLAB_JOBS:-2}" -R "$regex"
# The planner matrix in CCLAB_JOBS shards at once (GoogleTest's sharding), each its own process on a core.
shards=${CCLAB_JOBS:-2}
pids=()
for ((shard = 0; shard < shards; ++shard)); do
  GTEST_TOTAL_SHARDS=$shards GTEST_SHARD_INDEX=$shard "$build/tests/planner_matrix_test" --gtest_brief=1 \
    --gtest_filter='-*_P16:*_P24:*_P31:*_P64' &
  pids+=($!)
done
for pid in "${pids[@]}"; do wait "$pid"; done
# The mpirun suites with full stacks for leaks (fast_unwind_on_malloc=0, slow for malloc-heavy code, hence
# only here): Open MPI allocates through libc frames without frame pointers, and only a full stack reaches
# the Open MPI library that tests/lsan-openmpi.supp names.
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:fast_unwind_on_malloc=0
export LSAN_OPTIONS=suppressions=$PWD/tests/lsan-openmpi.supp:print_suppressions=0
regex=$(IFS='|'; echo "^(${mpi_tests[*]})$")
ctest --test-dir "$build" --output-on-failure -j"${CCLAB_JOBS:-2}" -R "$regex"
