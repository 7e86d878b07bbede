#!/usr/bin/env bash
# tools/gpu/retune.sh - re-tune stability on the lent GPU machine (one H200, NCCL 2.28.9, MPS;
# ../shared/device/README.md): build, N tunes of one setup with the same flags (each its own
# store and table), then for the first stores one bench each that times, in the same cycles,
# NCCL's default, the fitter's table, the oracle and the compared tables -- the per-size argmin
# of the same store (`fit --argmin`) and, when carried, the tables of older ccltune builds in
# .prevfit/ and .oldfit/ -- and the GPU test suite.  From the repository root:
#
#   . .devtools/env.sh .devdeps && . .devtools/mps.sh && mps_start && bash tools/gpu/retune.sh
#
# Environment: TUNES (3), BENCHES (2), SUITE (1: run the GPU suite), RANKS (4 rank processes sharing the GPU), MAXB (64M), BENCH_COLLS
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
pack() { tar -C "$W" -czf "$FINAL/results.tar.gz" --exclude='*.db' --exclude='*.db-wal' --exclude='*.db-shm' . 2>/dev/null; }

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
    gzip -9nc "$W/tune-$i.db" >"$W/tune-$i.db.gz"
    pack
done
# Each of the first BENCHES stores' table against, in the same bench run, the per-size argmin
# of that store and the tables of the two older fitters carried in .prevfit/ and .oldfit/ (the
# latter reads stores up to schema 3: it gets a copy without the chunk variants, marked 3).
for i in $(seq 1 "${BENCHES:-2}"); do
    cmp=()
    "$C" fit --argmin --store "$W/tune-$i.db" -o "$W/argmin-$i.yaml" >"$W/logs/fit-argmin-$i.log" 2>&1 &&
        cmp+=(--compare "$W/argmin-$i.yaml")
    [ -x .prevfit/ccltune ] && .prevfit/ccltune fit --store "$W/tune-$i.db" -o "$W/prevfit-$i.yaml" \
        >"$W/logs/fit-prevfit-$i.log" 2>&1 && cmp+=(--compare "$W/prevfit-$i.yaml")
    if [ -x .oldfit/ccltune ]; then
        cp "$W/tune-$i.db" "$W/old-$i.db"
        python3 -c "import sqlite3, sys; c = sqlite3.connect(sys.argv[1]); c.executescript(
            'DELETE FROM samples WHERE point_id IN (SELECT id FROM points WHERE chunk <> 0);'
            'DELETE FROM points WHERE chunk <> 0; PRAGMA user_version = 3;'); c.close()" "$W/old-$i.db" &&
            .oldfit/ccltune fit --store "$W/old-$i.db" -o "$W/oldfit-$i.yaml" \
                >"$W/logs/fit-oldfit-$i.log" 2>&1 && cmp+=(--compare "$W/oldfit-$i.yaml")
        rm -f "$W/old-$i.db"
    fi
    t0=$SECONDS
    "$C" bench "$W/tune-$i.yaml" --ranks-per-gpu "$RANKS" --ranks "$RANKS" --max-bytes "$MAXB" \
        --colls "${BENCH_COLLS:-allgather,allreduce,reducescatter}" "${cmp[@]}" \
        --store "$W/bench-$i.db" -o "$W/bench-$i.md" --csv "$W/bench-$i.csv" >"$W/logs/bench-$i.log" 2>&1
    say "bench $i: rc=$? $((SECONDS - t0)) s at $(date -u +%H:%M:%S)"
    grep 'ccltune bench' "$W/logs/bench-$i.log" | tee -a "$W/summary.txt"
    gzip -9nc "$W/bench-$i.db" >"$W/bench-$i.db.gz"
    pack
done
[ "${SUITE:-1}" = 1 ] || { say "done"; exit 0; }
t0=$SECONDS
timeout 120 meson test -C "$B" --suite gpu --print-errorlogs --num-processes 2 >"$W/logs/gpu-tests.log" 2>&1
say "gpu suite: rc=$? $((SECONDS - t0)) s; $(grep -E '^(Ok|Fail|Skipped|Timeout):' "$W/logs/gpu-tests.log" | tr -s ' ' | tr '\n' ' ')"
pack
say "done"
