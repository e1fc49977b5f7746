#!/usr/bin/env bash
# Builds the libFuzzer harnesses (fuzz/, CMake option CCLAB_FUZZ with clang-14, ASan + UBSan) and runs each for
# a bounded time, starting from the seed corpus in fuzz/corpus/HARNESS; new inputs go to BUILD/corpus/HARNESS
# (outside the source tree), findings to BUILD/findings/. Exits non-zero on any finding.
#   scripts/fuzz.sh [SECONDS per harness, default 60] [HARNESS...]      e.g. scripts/fuzz.sh 3600 scenario
# Environment: CCLAB_FUZZ_BUILD (default build-fuzz).
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-60}
shift || true
harnesses=("$@")
if ((${#harnesses[@]} == 0)); then harnesses=(units topology_yaml scenario schedule_json nccl_tests_log); fi
build=${CCLAB_FUZZ_BUILD:-build-fuzz}
scripts/install-deps.sh
if [[ ! -f "$build/CMakeCache.txt" ]]; then
  cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_COMPILER=clang++-14 -DCCLAB_FUZZ=ON \
    -DCCLAB_WITH_CUDA=OFF
fi
targets=()
for h in "${harnesses[@]}"; do targets+=("${h}_fuzz"); done
cmake --build "$build" -j"${CCLAB_JOBS:-2}" --target "${targets[@]}"

# Findings abort (fuzz/fuzz_check.cpp); leaks and UB are findings too. Allocation stacks are not recorded and
# the quarantine is small: that makes the YAML harnesses about 25% faster (malloc-heavy yaml-cpp). To see a
# finding's allocation stacks, run it alone with default options: build-fuzz/fuzz/HARNESS_fuzz FILE.
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:allocator_may_return_null=1:malloc_context_size=0:quarantine_size_mb=16
export UBSAN_OPTIONS=print_stacktrace=1
# One harness, its verdict in $build/fuzz-$h.status (0 or 1) and its report on stdout.
fuzz_one() {
  local h=$1 corpus="$build/corpus/$1" findings="$build/findings/$1" log="$build/fuzz-$1.log" status=0
  mkdir -p "$corpus" "$findings"
  # -timeout: an input that runs 10 s is a hang; -rss_limit_mb: one that needs 4 GiB is a memory bug.
  if ! "$build/fuzz/${h}_fuzz" "$corpus" "fuzz/corpus/$h" -max_total_time="$seconds" -timeout=10 \
      -rss_limit_mb=4096 -max_len=8192 -print_final_stats=1 \
      -artifact_prefix="$findings/" >"$log" 2>&1; then
    status=1
    echo "fuzz: $h: FINDING (see $log and $findings/)"
    grep -A3 "FUZZ FINDING\|ERROR: \|runtime error" "$log" | head -20 || true
  fi
  executed=$(grep -h "stat::number_of_executed_units" "$log" | awk '{s += $2} END {print s + 0}')
  echo "fuzz: $h: $executed executions in ${seconds}s, corpus $(ls "$corpus" | wc -l) inputs"
  echo "$status" >"$build/fuzz-$h.status"
}
# CCLAB_JOBS harnesses at a time (each is one process on one core), reports in the harnesses' order.
jobs=${CCLAB_JOBS:-2}
for ((i = 0; i < ${#harnesses[@]}; i += jobs)); do
  batch=("${harnesses[@]:i:jobs}")
  for h in "${batch[@]}"; do fuzz_one "$h" >"$build/fuzz-$h.report" & done
  wait
  for h in "${batch[@]}"; do cat "$build/fuzz-$h.report"; done
done
status=0
for h in "${harnesses[@]}"; do
  [[ $(cat "$build/fuzz-$h.status") == 0 ]] || status=1
done
exit $status
