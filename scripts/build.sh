#!/usr/bin/env bash
# Installs missing Debian packages, configures (once) and builds incrementally.
# Usage: scripts/build.sh [BUILD_DIR [TARGET...]]   (no target: everything, tests and benchmarks included)
set -euo pipefail
cd "$(dirname "$0")/.."
build_dir=${1:-build}
shift || true
scripts/install-deps.sh
if [[ ! -f "$build_dir/CMakeCache.txt" ]]; then
  cmake -S . -B "$build_dir" -DCMAKE_BUILD_TYPE=Release
fi
targets=()
for t in "$@"; do targets+=(--target "$t"); done
cmake --build "$build_dir" -j"${CCLAB_JOBS:-2}" "${targets[@]}"
