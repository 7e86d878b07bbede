#!/usr/bin/env python3
"""test-counts.py BUILD_DIR...: meson's counts over several builds (the main one, the
sanitizer and fuzz builds of tools/ci-reliability.sh), printed as CI's last two lines:
"N skipped (...)" and "N passed, N failed".  A build whose tests never ran counts one
failure, so a step that broke before testing cannot pass unnoticed."""
import json
import os
import sys

passed = failed = skipped = 0
for build in sys.argv[1:]:
    log = os.path.join(build, "meson-logs", "testlog.json")
    try:
        lines = open(log).read().splitlines()
    except OSError:
        print(f"{build}: no test log (the build or its tests did not run)")
        failed += 1
        continue
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
