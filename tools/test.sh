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
python3 - "$BUILD/meson-logs/testlog.json" <<'PY'
import json, sys
passed = failed = skipped = 0
try:
    lines = open(sys.argv[1]).read().splitlines()
except OSError:
    lines = []
for line in lines:
    if not line.strip():
        continue
    r = json.loads(line).get("result")
    if r in ("OK", "EXPECTEDFAIL"):
        passed += 1
    elif r == "SKIP":
        skipped += 1
    else:
        failed += 1
print(f"{skipped} skipped (GPU tests skip where no GPU is present)")
print(f"{passed} passed, {failed} failed")
PY
exit $rc
