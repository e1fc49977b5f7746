#!/usr/bin/env bash
# Installs the Debian packages cclab builds against. Idempotent: packages already present are skipped,
# and apt is not touched at all when nothing is missing. Run as root (or with sudo) on Debian 12.
set -euo pipefail

# Required for the core (topology, engine, cli, tests, bench).
core=(build-essential cmake pkg-config ccache python3
      libboost-graph-dev libyaml-cpp-dev nlohmann-json3-dev libcli11-dev libfmt-dev
      libgtest-dev libgmock-dev libbenchmark-dev)
# Backends: SimGrid (sim/), Open MPI (real/), LibTorch + Gloo headers (training loop), gnuplot (plots).
backends=(libsimgrid-dev libopenmpi-dev openmpi-bin libtorch-dev libgloo-dev gnuplot-nox)
# The fuzz harnesses (scripts/fuzz.sh): clang and its libFuzzer runtime.
backends+=(clang-14 libclang-rt-14-dev)

want=("${core[@]}")
if [[ "${CCLAB_CORE_ONLY:-0}" != 1 ]]; then want+=("${backends[@]}"); fi

missing=()
for pkg in "${want[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q 'install ok installed'; then
    missing+=("$pkg")
  fi
done

if ((${#missing[@]} == 0)); then
  echo "install-deps: all ${#want[@]} packages present"
  exit 0
fi

echo "install-deps: installing ${missing[*]}"
sudo=""
if [[ $(id -u) -ne 0 ]]; then sudo="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
echo "install-deps: done"
