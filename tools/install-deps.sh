#!/usr/bin/env bash
# Install what ccltune needs to build and test on Debian 12 / Ubuntu 22.04+ (apt-get), and
# only what is missing: packages already installed (dpkg-query) are left alone, and nothing
# runs apt-get when every one is present.  Missing packages are installed as root, or with
# sudo where it is available; otherwise the script names them, says the command to run as
# root, and exits 1 (tools/tune.sh then goes on if the build works without them).
# The CUDA toolkit and NCCL are not installed here: on a GPU box they are present already;
# without them ccltune still builds (no GPU search) and its tests still run.
#
# Environment (for tests and unusual setups):
#   CCLTUNE_AS_UID   the user id to act as instead of `id -u` (0: act as root)
#   CCLTUNE_SUDO     the command that gains root [sudo]; a path that does not exist: none
# Exit status: 0 everything is present (or was installed), 1 packages are missing.
set -euo pipefail
PACKAGES="meson ninja-build pkg-config gcc g++ python3 libyaml-dev libgsl-dev libhwloc-dev
  libsqlite3-dev libcmocka-dev libopenmpi-dev openmpi-bin gnuplot-nox sqlite3 clang-format clang"
# libFuzzer's runtime (tests/fuzz): its own package from LLVM 14 on Debian 12, where it exists
OPTIONAL="libclang-rt-14-dev"

installed() {
  dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "install ok installed"
}

if ! command -v dpkg-query >/dev/null 2>&1; then
  echo "install-deps: no dpkg-query here (not Debian/Ubuntu): install by hand:" $PACKAGES >&2
  exit 1
fi
missing=()
for p in $PACKAGES; do
  installed "$p" || missing+=("$p")
done
for p in $OPTIONAL; do
  if ! installed "$p" && apt-cache show "$p" >/dev/null 2>&1; then missing+=("$p"); fi
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: every package is installed"
  exit 0
fi
uid=${CCLTUNE_AS_UID:-$(id -u)}
sudo_cmd=${CCLTUNE_SUDO:-sudo}
if [ "$uid" = 0 ]; then
  as_root=()
elif command -v "$sudo_cmd" >/dev/null 2>&1; then
  as_root=("$sudo_cmd")
else
  echo "install-deps: missing packages: ${missing[*]}" >&2
  echo "install-deps: not root and no sudo here: ask an administrator to run" \
    "apt-get install ${missing[*]}" >&2
  exit 1
fi
echo "install-deps: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
${as_root[@]+"${as_root[@]}"} apt-get update -qq
${as_root[@]+"${as_root[@]}"} apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
