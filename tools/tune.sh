#!/usr/bin/env bash
# The main job on a fresh machine: check dependencies (tools/install-deps.sh installs only
# missing packages, and only as root or with sudo; without either it names them and this
# script goes on if the build works), build, and run `ccltune tune` (search + fit + table +
# plots).  Without a GPU, ccltune says so and runs fit, table and plots on the recorded H200
# measurements.  Extra arguments go to `ccltune tune`.  No root needed when the
# dependencies are present.  Without gnuplot the table is still written (a warning, no plots).
# Output: out/table.yaml and out/plots/; the last lines say where they and the plugin are.
# Environment: BUILD (build folder [build]); CCLTUNE_AS_UID and CCLTUNE_SUDO go to
# tools/install-deps.sh (see its header).
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="/usr/local/cuda/bin:$PATH"
BUILD=${BUILD:-build}
if ! bash tools/install-deps.sh; then
  echo "tune.sh: warning: some dependencies are missing (above); trying the build anyway" >&2
fi
if [ ! -f "$BUILD/build.ninja" ]; then
  meson setup "$BUILD" >/dev/null
fi
ninja -C "$BUILD" >/dev/null
mkdir -p out
plots=(--plots out/plots)
if ! command -v gnuplot >/dev/null 2>&1; then
  plots=() # ccltune tune warns and writes the table without plots
fi
"$BUILD/src/cli/ccltune" tune -o out/table.yaml ${plots[@]+"${plots[@]}"} \
  --store out/measurements.db "$@"
"$BUILD/src/cli/ccltune" validate out/table.yaml
exe="$BUILD/src/cli/ccltune"
echo "table: out/table.yaml (see: $exe explain out/table.yaml --coll all --ranks N)"
if [ -d out/plots ] && [ ${#plots[@]} -gt 0 ]; then
  echo "plots: out/plots/"
else
  echo "plots: none (gnuplot is not installed)"
fi
echo "plugin: $(cd "$BUILD/src/plugin" && pwd)/libnccl-tuner-ccltune.so" \
  "(deploy: NCCL_TUNER_PLUGIN=ccltune with that folder on LD_LIBRARY_PATH, or meson install)"
if grep -q '^  ranks_per_gpu: [2-9]' out/table.yaml || grep -q '^  ranks_per_gpu: [1-9][0-9]' out/table.yaml; then
  echo "note: this table comes from rank processes sharing a GPU; it applies only where" \
    "NCCL_HOSTID is set and never matches a real deployment (check one with: $exe doctor)"
fi
