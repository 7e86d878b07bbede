#!/usr/bin/env bash
# tools/gpu/session.sh - what ccltune runs on the lent GPU machine (one H200, NCCL 2.28.9,
# OpenMPI, MPS; see ../shared/device/README.md).  Usage, from the repository root there:
#
#   . .devtools/env.sh .devdeps && . .devtools/mps.sh && bash tools/gpu/session.sh STAGE...
#
# Stages: build (ccltune, and nccl-tests when its source is carried in .ncclt/), tests
# (meson test, GPU suite included), probe, proof (the plugin inside real NCCL with a
# hand-written table), capture (nccl-tests logs for the importers), search2/search4 (the
# recorded dataset), tune2/tune4/tune8 (end to end).  Logs go to $OUT/logs; a tarball of
# them and a summary come back.  Nothing here changes the GPU's settings.
set -uo pipefail
OUT=${OUT:-/tmp/ccltune-out}
LOG=$OUT/logs
mkdir -p "$LOG"
export PATH=/usr/local/cuda/bin:$PATH
export NCCL_NVLS_ENABLE=0
ROOT=$(pwd)
B=$ROOT/build-gpu
CCLTUNE=$B/src/ccltune
PLUGIN=$B/src/plugin/libnccl-tuner-ccltune.so
NT=$ROOT/build-nt
summary() { echo "$*" | tee -a "$OUT/summary.txt"; }

# nccl-tests under mpirun, every rank on GPU 0 as its own NCCL "node" (own NCCL_HOSTID)
nt() {
    local np=$1
    shift
    timeout "${NT_TIMEOUT:-120}" mpirun --allow-run-as-root --oversubscribe --bind-to none -np "$np" \
        -x LD_LIBRARY_PATH -x PATH -x NCCL_NVLS_ENABLE -x CUDA_MPS_PIPE_DIRECTORY \
        -x CUDA_MPS_LOG_DIRECTORY -x NCCL_TESTS_DEVICE=0 -x NCCL_DEBUG -x NCCL_DEBUG_SUBSYS \
        -x NCCL_TUNER_PLUGIN -x CCLTUNE_TABLE -x NCCL_ALGO -x NCCL_PROTO \
        bash -c 'NCCL_HOSTID=ccltune-nt-$OMPI_COMM_WORLD_RANK exec "$@"' _ "$@"
}

stage_build() {
    local t0=$SECONDS
    if [ -d .ncclt ]; then
        (
            mkdir -p /tmp/ncclhome/lib && ln -sf "$NCCL_HOME/include" /tmp/ncclhome/include &&
                ln -sf "$NCCL_HOME/lib/libnccl.so.2" /tmp/ncclhome/lib/libnccl.so &&
                ln -sf "$NCCL_HOME/lib/libnccl.so.2" /tmp/ncclhome/lib/libnccl.so.2
            mpi_inc=$(mpicc --showme:incdirs | awk '{print $1}')
            make -C .ncclt/src -j8 MPI=1 MPI_HOME="$(dirname "$mpi_inc")" NCCL_HOME=/tmp/ncclhome \
                NVCC_GENCODE="-gencode=arch=compute_90,code=sm_90" BUILDDIR="$NT" \
                "$NT/all_reduce_perf" "$NT/all_gather_perf" "$NT/reduce_scatter_perf" \
                "$NT/broadcast_perf" "$NT/reduce_perf"
        ) >"$LOG/build-nccl-tests.log" 2>&1 &
    fi
    local ntpid=$!
    meson setup "$B" -Dnccl_home="$NCCL_HOME" -Dgpu_arch=90 -Dwerror=false >"$LOG/build.log" 2>&1 &&
        ninja -C "$B" >>"$LOG/build.log" 2>&1
    local rc=$?
    [ -d .ncclt ] && wait $ntpid
    summary "build: ccltune rc=$rc ($((SECONDS - t0)) s); nccl-tests: $(ls "$NT" 2>/dev/null | tr '\n' ' ')"
    tail -5 "$LOG/build.log"
    return $rc
}

stage_tests() {
    meson test -C "$B" --print-errorlogs --num-processes 4 >"$LOG/tests.log" 2>&1
    local rc=$?
    cp "$B/meson-logs/testlog.txt" "$LOG/testlog.txt" 2>/dev/null
    summary "tests: rc=$rc; $(grep -E '^(Ok|Fail|Skipped|Timeout):' "$LOG/tests.log" | tr -s ' ' | tr '\n' ' ')"
    grep -E 'gpu_|FAIL' "$LOG/tests.log" | head -20
}

stage_probe() {
    {
        echo "\$ ccltune probe"; "$CCLTUNE" probe
        echo; echo "\$ ccltune probe --ranks-per-gpu 2"; "$CCLTUNE" probe --ranks-per-gpu 2
        echo; echo "\$ ccltune probe --ranks-per-gpu 4 --json"; "$CCLTUNE" probe --ranks-per-gpu 4 --json
        echo; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv
    } >"$LOG/probe.txt" 2>&1
    summary "probe: $(grep -m1 'LL128' "$LOG/probe.txt")"
}

stage_proof() {
    # the plugin inside real NCCL: the TUNING log must show what the table asks for
    local t=$ROOT/tests/data/proof/table-2rank.yaml
    NCCL_TUNER_PLUGIN=$PLUGIN CCLTUNE_TABLE=$t NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,TUNING \
        nt 2 "$NT/all_reduce_perf" -b 4K -e 1M -f 4 -n 5 -w 2 >"$LOG/proof-table.log" 2>&1
    summary "proof (table): rc=$? loaded=$(grep -c 'Successfully loaded external tuner plugin' "$LOG/proof-table.log") ccltune-info=$(grep -c 'ccltune' "$LOG/proof-table.log")"
    NCCL_TUNER_PLUGIN=$PLUGIN CCLTUNE_TABLE=$ROOT/tests/data/proof/table-malformed.yaml \
        NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,TUNING \
        nt 2 "$NT/all_reduce_perf" -b 4K -e 1M -f 4 -n 5 -w 2 >"$LOG/proof-malformed.log" 2>&1
    summary "proof (malformed): rc=$? warns=$(grep -c 'WARN' "$LOG/proof-malformed.log") wrong=$(awk '/^ +[0-9]+ +[0-9]+ +float/ {w+=$9+$13} END {print w+0}' "$LOG/proof-malformed.log")"
    NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,TUNING \
        nt 2 "$NT/all_reduce_perf" -b 4K -e 1M -f 4 -n 5 -w 2 >"$LOG/proof-default.log" 2>&1
    summary "proof (no plugin): rc=$?"
}

stage_capture() {
    # nccl-tests logs (text and JSON) for the importers' replay tests; 2 ranks on the GPU
    local d=$LOG/nccl-tests
    mkdir -p "$d"
    for c in all_reduce all_gather reduce_scatter broadcast reduce; do
        NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=ENV,TUNING nt 2 "$NT/${c}_perf" -b 1K -e 16M -f 2 -n 10 -w 3 \
            -J "$d/${c}_2ranks_default.json" >"$d/${c}_2ranks_default.txt" 2>&1
    done
    for ap in Ring:LL Ring:Simple Tree:LL Tree:Simple; do
        NCCL_ALGO=${ap%:*} NCCL_PROTO=${ap#*:} NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=ENV \
            nt 2 "$NT/all_reduce_perf" -b 1K -e 16M -f 2 -n 10 -w 3 \
            >"$d/all_reduce_2ranks_${ap/:/_}.txt" 2>&1
    done
    summary "capture: $(ls "$d" | wc -l) files"
}

search() {
    local ranks=$1 maxb=$2
    shift 2
    "$CCLTUNE" search --ranks-per-gpu "$ranks" --ranks "$ranks" --store "$OUT/search-$ranks.db" \
        --max-bytes "$maxb" --timeout 60 "$@" >"$LOG/search-$ranks.log" 2>&1
    local rc=$?
    summary "search $ranks ranks: rc=$rc; $(grep -E 'session [0-9]+/[0-9]+:' "$LOG/search-$ranks.log" | tr '\n' ' ')"
}
stage_search2() { search 2 "${MAX2:-64M}" ${SEARCH_ARGS:-}; }
stage_search4() { search 4 "${MAX4:-64M}" ${SEARCH_ARGS:-}; }

. "$ROOT/.devtools/mps.sh"
mps_start >/dev/null 2>&1 || true
for s in "$@"; do
    t0=$SECONDS
    "stage_$s"
    echo "stage $s: $((SECONDS - t0)) s" | tee -a "$OUT/summary.txt"
done
mps_stop >/dev/null 2>&1 || true
tar -C "$OUT" -czf "$OUT/logs.tar.gz" logs && rm -rf "$LOG"
cat "$OUT/summary.txt"
