#!/usr/bin/env bash
# tools/gpu/retune.sh - re-tune stability on the lent GPU machine (one H200, NCCL 2.28.9, MPS;
# ../shared/device/README.md): build, the GPU test suite, N tunes of the same setup with the
# same flags (each its own store and table), and a bench of the first table against NCCL's
# default, the oracle and the per-size argmin of the same store.  From the repository root:
#
#   . .devtools/env.sh .devdeps && . .devtools/mps.sh && mps_start && bash tools/gpu/retune.sh
#
# Environment: TUNES (3), RANKS (4 rank processes sharing the GPU), MAXB (64M), BENCH (1: bench
# the first table), BENCH_ARGS (extra bench flags).  Everything goes to $OUT as one tarball
# (results.tar.gz, refreshed after each step) and summary.txt, so a stopped call loses nothing.
set -uo pipefail
FINAL=${OUT:-/tmp/ccltune-out}
W=/tmp/retune && rm -rf "$W" && mkdir -p "$W/logs" "$FINAL"
export PATH=/usr/local/cuda/bin:$PATH NCCL_NVLS_ENABLE=0
B=$(pwd)/build-gpu
C=$B/src/cli/ccltune
RANKS=${RANKS:-4} MAXB=${MAXB:-64M}
say() { echo "$*" | tee -a "$W/summary.txt"; cp "$W/summary.txt" "$FINAL/summary.txt"; }
pack() { tar -C "$W" -czf "$FINAL/results.tar.gz" . 2>/dev/null; }

t0=$SECONDS
meson setup "$B" -Dnccl_home="$NCCL_HOME" -Dgpu_arch=90 -Dwerror=false >"$W/logs/build.log" 2>&1 &&
    ninja -C "$B" >>"$W/logs/build.log" 2>&1
rc=$?
say "build: rc=$rc $((SECONDS - t0)) s"
[ $rc -eq 0 ] || { tail -20 "$W/logs/build.log"; pack; exit 1; }
t0=$SECONDS
meson test -C "$B" --suite gpu --print-errorlogs --num-processes 4 >"$W/logs/gpu-tests.log" 2>&1
say "gpu suite: rc=$? $((SECONDS - t0)) s; $(grep -E '^(Ok|Fail|Skipped|Timeout):' "$W/logs/gpu-tests.log" | tr -s ' ' | tr '\n' ' ')"
pack
for i in $(seq 1 "${TUNES:-3}"); do
    t0=$SECONDS
    "$C" tune -o "$W/tune-$i.yaml" --store "$W/tune-$i.db" --no-plots \
        --ranks-per-gpu "$RANKS" --ranks "$RANKS" --max-bytes "$MAXB" >"$W/logs/tune-$i.log" 2>&1
    say "tune $i: rc=$? $((SECONDS - t0)) s at $(date -u +%H:%M:%S)"
    pack
done
if [ "${BENCH:-1}" = 1 ]; then
    t0=$SECONDS
    "$C" bench "$W/tune-1.yaml" --ranks-per-gpu "$RANKS" --ranks "$RANKS" --max-bytes "$MAXB" \
        --store "$W/bench-1.db" -o "$W/bench-1.md" --csv "$W/bench-1.csv" ${BENCH_ARGS:-} \
        >"$W/logs/bench-1.log" 2>&1
    say "bench: rc=$? $((SECONDS - t0)) s; $(grep -E 'geometric' "$W/logs/bench-1.log" | tr '\n' ' ')"
fi
for f in "$W"/*.db; do sqlite3 "$f" 'PRAGMA wal_checkpoint(TRUNCATE)' >/dev/null 2>&1; gzip -9n "$f"; done
rm -f "$W"/*.db-wal "$W"/*.db-shm
pack
say "done"
