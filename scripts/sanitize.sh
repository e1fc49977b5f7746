#!/usr/bin/env bash
# AddressSanitizer + UndefinedBehaviorSanitizer build (CMake option CCLAB_SANITIZE) of the engine, topology,
# scenario, simulator and checkpoint code and their test suites, run under the sanitizers. Any finding fails the
# run (UBSan does not recover). Usage: scripts/sanitize.sh [BUILD_DIR, default build-asan]
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build-asan}
scripts/install-deps.sh
tests=(units_test topology_test schedule_test formulas_test mutation_test workload_test scenario_test sim_test
       reduce_kernels_test checkpoint_test calibration_test)
if [[ ! -f "$build/CMakeCache.txt" ]]; then
  cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCCLAB_SANITIZE=ON -DCCLAB_WITH_CUDA=OFF \
    -DCCLAB_BUILD_BENCH=OFF
fi
cmake --build "$build" -j"${CCLAB_JOBS:-2}" --target "${tests[@]}"
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1
regex=$(IFS='|'; echo "^(${tests[*]})$")
ctest --test-dir "$build" --output-on-failure -j"${CCLAB_JOBS:-2}" -R "$regex"
