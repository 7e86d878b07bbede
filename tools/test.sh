#!/usr/bin/env bash
# Configure (warnings are errors), build, run every test suite, and print meson's own
# counts as the last line: "N passed, N failed".  Exit status: 0 only if nothing failed.
set -uo pipefail
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
export PATH="/usr/local/cuda/bin:$PATH"
if [ ! -f "$BUILD/build.ninja" ]; then
  meson setup "$BUILD" -Dwerror=true || exit 1
fi
ninja -C "$BUILD" || exit 1
meson test -C "$BUILD" --print-errorlogs --num-processes "$(nproc)" "$@"
rc=$?
python3 tools/test-counts.py "$BUILD"
exit $rc
