#!/usr/bin/env bash
# The main job on the built-in default: how a ResNet-50 data-parallel step scales on DGX A100 nodes (HDR
# InfiniBand) from 8 to 256 GPUs with ring, tree, hierarchical and auto allreduce; results also in out/predict.*.
# Extra arguments go to `cclab predict`.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/build.sh build cclab >&2
exec build/cclab predict --out out "$@"
