#!/usr/bin/env bash
# Install what ccltune needs to build and test on Debian 12 / Ubuntu 22.04+ (apt-get).
# The CUDA toolkit and NCCL are not installed here: on a GPU box they are present already;
# without them ccltune still builds (no GPU search) and its tests still run.
set -euo pipefail
SUDO=""
if [ "$(id -u)" != 0 ]; then SUDO="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends \
  meson ninja-build pkg-config gcc g++ python3 \
  libyaml-dev libgsl-dev libhwloc-dev libsqlite3-dev libcmocka-dev \
  libopenmpi-dev openmpi-bin gnuplot-nox sqlite3 clang-format clang >/dev/null
# libFuzzer's runtime (tests/fuzz): its own package from LLVM 14 on Debian 12
if apt-cache show libclang-rt-14-dev >/dev/null 2>&1; then
  $SUDO apt-get install -y -qq --no-install-recommends libclang-rt-14-dev >/dev/null
fi
