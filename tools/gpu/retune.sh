#!/usr/bin/env bash
# tools/gpu/retune.sh - re-tune stability on the lent GPU machine (one H200, NCCL 2.28.9, MPS;
# ../shared/device/README.md): build, N tunes of one setup with the same flags (each its own
# store and table), benches of the first store's tables against NCCL's default and the oracle
# -- the fitter's table, the per-size argmin of the same store (`fit --argmin`) and, when an
# older ccltune is carried in .oldfit/, that one's table -- and the GPU test suite.  From the
# repository root:
#
#   . .devtools/env.sh .devdeps && . .devtools/mps.sh && mps_start && bash tools/gpu/retune.sh
#
# Environment: TUNES (3), RANKS (4 rank processes sharing the GPU), MAXB (64M), BENCH_COLLS
# (allgather,allreduce,reducescatter).  Everything goes to $OUT as one tarball (results.tar.gz,
# refreshed after each step) and summary.txt, so a call stopped at its limit loses nothing.
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
for i in $(seq 1 "${TUNES:-3}"); do
    t0=$SECONDS
    "$C" tune -o "$W/tune-$i.yaml" --store "$W/tune-$i.db" --no-plots \
        --ranks-per-gpu "$RANKS" --ranks "$RANKS" --max-bytes "$MAXB" >"$W/logs/tune-$i.log" 2>&1
    say "tune $i: rc=$? $((SECONDS - t0)) s at $(date -u +%H:%M:%S)"
    pack
done
"$C" fit --argmin --store "$W/tune-1.db" -o "$W/argmin-1.yaml" >"$W/logs/fit-argmin-1.log" 2>&1
[ -x .oldfit/ccltune ] && .oldfit/ccltune fit --store "$W/tune-1.db" -o "$W/oldfit-1.yaml" \
    >"$W/logs/fit-oldfit-1.log" 2>&1
for t in tune argmin oldfit; do
    [ -f "$W/$t-1.yaml" ] || continue
    t0=$SECONDS
    "$C" bench "$W/$t-1.yaml" --ranks-per-gpu "$RANKS" --ranks "$RANKS" --max-bytes "$MAXB" \
        --colls "${BENCH_COLLS:-allgather,allreduce,reducescatter}" --store "$W/bench-$t.db" \
        -o "$W/bench-$t.md" --csv "$W/bench-$t.csv" >"$W/logs/bench-$t.log" 2>&1
    say "bench $t: rc=$? $((SECONDS - t0)) s; $(grep -iE 'geometric' "$W/logs/bench-$t.log" | head -3 | tr '\n' ' ')"
    pack
done
t0=$SECONDS
timeout 120 meson test -C "$B" --suite gpu --print-errorlogs --num-processes 2 >"$W/logs/gpu-tests.log" 2>&1
say "gpu suite: rc=$? $((SECONDS - t0)) s; $(grep -E '^(Ok|Fail|Skipped|Timeout):' "$W/logs/gpu-tests.log" | tr -s ' ' | tr '\n' ' ')"
for f in "$W"/*.db; do gzip -9n "$f"; done
rm -f "$W"/*.db-wal "$W"/*.db-shm
pack
say "done"
