#!/usr/bin/env bash
# The main job on a fresh machine: install dependencies, build, and run `ccltune tune`
# (search + fit + table + plots).  Without a GPU, ccltune says so and runs fit, table and
# plots on the recorded H200 measurements.  Extra arguments go to `ccltune tune`.
# Output: out/table.yaml and out/plots/.
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/install-deps.sh
export PATH="/usr/local/cuda/bin:$PATH"
BUILD=${BUILD:-build}
[ -f "$BUILD/build.ninja" ] || meson setup "$BUILD" >/dev/null
ninja -C "$BUILD" >/dev/null
mkdir -p out
"$BUILD/src/cli/ccltune" tune -o out/table.yaml --plots out/plots --store out/measurements.db "$@"
"$BUILD/src/cli/ccltune" validate out/table.yaml
echo "table: out/table.yaml (see: $BUILD/src/cli/ccltune explain out/table.yaml --coll all --ranks N); plots: out/plots/"
