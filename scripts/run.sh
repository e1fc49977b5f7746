#!/usr/bin/env bash
# The main job on the built-in default: plan, verify and cost a 256-GPU allreduce (32 DGX A100 nodes on HDR
# InfiniBand), with the algorithm chosen by the cost model. Extra arguments go to `cclab plan`.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/build.sh build >&2
exec build/cclab plan "$@"
