#!/usr/bin/env bash
# tools/gpu/nccl230.sh - ccltune on NCCL 2.30 built from source on the lent GPU machine (one
# H100 or H200, MPS; ../shared/device/README.md has the recipe).  The NCCL source is carried in the
# ignored folder .ncclsrc (never committed), nccl-tests' in .ncclt.  From the repository root:
#
#   . .devtools/env.sh .devdeps && . .devtools/mps.sh && mps_start && bash tools/gpu/nccl230.sh STEP...
#
# Steps: build (NCCL 2.30 into /tmp/n230, kept while the machine is warm; ccltune; nccl-tests
# against the image's NCCL, which runs unchanged on 2.30), tune (`ccltune tune` on 2.30 at 2
# and 4 rank processes, chunk sizes searched: CHUNKS), bench (each table against 2.30's
# defaults and the oracle), suite (the GPU test suite on 2.30), folder (a folder holding the
# 2.28 table TABLE228 and the 2.30 one: nccl-tests on 2.30 log which one the plugin picked;
# doctor on both), chunklog (nccl-tests allreduce on 2.30 with the 4-rank table, NCCL's and
# the plugin's logs of the chunk asked for and used).  Results: $OUT/results-STEP.tar.gz and
# $OUT/summary.txt.
set -uo pipefail
FINAL=${OUT:-/tmp/ccltune-out}
W=/tmp/n230work && mkdir -p "$W/logs" "$FINAL"
export PATH=/usr/local/cuda/bin:$PATH NCCL_NVLS_ENABLE=0
ROOT=$(pwd) B=$(pwd)/build-gpu N230=/tmp/n230 NT=/tmp/nt
C=$B/src/cli/ccltune P=$B/src/plugin/libnccl-tuner-ccltune.so
say() { echo "$*" | tee -a "$W/summary.txt"; cp "$W/summary.txt" "$FINAL/summary.txt"; }
pack() { tar -C "$W" -czf "$FINAL/results-$1.tar.gz" --exclude='*.db' . 2>/dev/null; }
on230() { LD_LIBRARY_PATH=$N230/lib:${LD_LIBRARY_PATH:-} "$@"; }
nt() {
    local np=$1
    shift
    timeout 120 mpirun --allow-run-as-root --oversubscribe --bind-to none -np "$np" \
        -x LD_LIBRARY_PATH -x PATH -x NCCL_NVLS_ENABLE -x CUDA_MPS_PIPE_DIRECTORY \
        -x CUDA_MPS_LOG_DIRECTORY -x NCCL_TESTS_DEVICE=0 -x NCCL_DEBUG -x NCCL_DEBUG_SUBSYS \
        -x NCCL_TUNER_PLUGIN -x CCLTUNE_TABLE -x NCCL_PROTO -x NCCL_PROFILER_PLUGIN -x CCLTUNE_RECORD \
        bash -c 'NCCL_HOSTID=ccltune-nt-$OMPI_COMM_WORLD_RANK exec "$@"' _ "$@"
}

step_build() {
    local t0=$SECONDS
    if [ ! -f "$N230/lib/libnccl.so.2" ]; then
        (cd .ncclsrc && make -j16 src.build TRACE=${NCCL_TRACE:-0} NVCC_GENCODE="-gencode=arch=compute_90,code=sm_90" \
            BUILDDIR=$N230 >"$W/logs/build-nccl230.log" 2>&1) &
    fi
    local npid=${!:-}
    if [ ! -x "$NT/all_reduce_perf" ] && [ -d .ncclt ]; then
        (
            mkdir -p /tmp/ncclhome/lib && ln -sf "$NCCL_HOME/include" /tmp/ncclhome/include &&
                ln -sf "$NCCL_HOME/lib/libnccl.so.2" /tmp/ncclhome/lib/libnccl.so &&
                ln -sf "$NCCL_HOME/lib/libnccl.so.2" /tmp/ncclhome/lib/libnccl.so.2
            mpi_inc=$(mpicc --showme:incdirs | awk '{print $1}')
            make -C .ncclt/src -j8 MPI=1 MPI_HOME="$(dirname "$mpi_inc")" NCCL_HOME=/tmp/ncclhome \
                NVCC_GENCODE="-gencode=arch=compute_90,code=sm_90" BUILDDIR="$NT" \
                "$NT/all_reduce_perf" "$NT/all_gather_perf"
        ) >"$W/logs/build-nccl-tests.log" 2>&1 &
    fi
    [ -x "$C" ] || meson setup "$B" -Dnccl_home="$NCCL_HOME" -Dgpu_arch=90 -Dwerror=false >"$W/logs/build.log" 2>&1
    ninja -C "$B" >>"$W/logs/build.log" 2>&1
    local rc=$?
    wait
    say "build: ccltune rc=$rc; NCCL 2.30: $(ls $N230/lib/libnccl.so.2* 2>/dev/null | head -1); nccl-tests: $(ls $NT 2>/dev/null | tr '\n' ' '); $((SECONDS - t0)) s"
    tail -3 "$W/logs/build-nccl230.log" 2>/dev/null
}

step_tune() {
    for r in ${RANKS_LIST:-4 2}; do
        local t0=$SECONDS
        on230 "$C" tune -o "$W/h200-nccl230-${r}ranks.yaml" --store "$W/tune230-$r.db" --no-plots \
            --note "H200, $r rank processes sharing the GPU (MPS, NCCL_HOSTID per rank), NCCL 2.30.7 built from source" \
            --ranks-per-gpu "$r" --ranks "$r" --max-bytes "${MAXB:-64M}" ${CHUNKS:+--chunk "$CHUNKS"} \
            >"$W/logs/tune230-$r.log" 2>&1
        say "tune 2.30 $r ranks: rc=$? $((SECONDS - t0)) s; $(grep -E 'wrote|NCCL 2' "$W/logs/tune230-$r.log" | head -3 | tr '\n' ' ')"
        cp "$W/tune230-$r.db" "$W/keep-tune230-$r.db" 2>/dev/null
        gzip -9nc "$W/tune230-$r.db" >"$W/tune230-$r.db.gz"
        pack tune
    done
}

step_bench() {
    for r in ${RANKS_LIST:-4 2}; do
        local t0=$SECONDS
        on230 "$C" bench "$W/h200-nccl230-${r}ranks.yaml" --ranks-per-gpu "$r" --ranks "$r" \
            --max-bytes "${MAXB:-64M}" --store "$W/bench230-$r.db" -o "$W/bench230-$r.md" \
            --csv "$W/bench230-$r.csv" >"$W/logs/bench230-$r.log" 2>&1
        say "bench 2.30 $r ranks: rc=$? $((SECONDS - t0)) s; $(grep 'ccltune bench: run' "$W/logs/bench230-$r.log")"
        gzip -9nc "$W/bench230-$r.db" >"$W/bench230-$r.db.gz"
        pack bench
    done
}

step_suite() {
    on230 timeout 120 meson test -C "$B" --suite gpu --print-errorlogs --num-processes 2 >"$W/logs/gpu-tests-230.log" 2>&1
    say "gpu suite on 2.30: rc=$?; $(grep -E '^(Ok|Fail|Skipped|Timeout):' "$W/logs/gpu-tests-230.log" | tr -s ' ' | tr '\n' ' ')"
    pack suite
}

step_folder() {
    local t230=$W/h200-nccl230-4ranks.yaml
    mkdir -p "$W/folder" && cp "$t230" "$W/folder/nccl230.yaml"
    [ -n "${TABLE228:-}" ] && cp "$TABLE228" "$W/folder/nccl228.yaml"
    export LD_LIBRARY_PATH=$B/src/plugin:${LD_LIBRARY_PATH:-}
    for t in "$W/folder/nccl230.yaml" ${TABLE228:+"$TABLE228"}; do
        NCCL_HOSTID=doctor NCCL_TUNER_PLUGIN=$P "$C" doctor --table "$t" --nccl "$N230/lib/libnccl.so.2" \
            --ranks 4 --nodes 4 >"$W/logs/doctor230-$(basename "$t" .yaml).txt" 2>&1
        local rc=$?
        say "doctor on 2.30 with $(basename "$t"): exit $rc"
    done
    NCCL_TUNER_PLUGIN=$P CCLTUNE_TABLE=$W/folder NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,TUNING,ENV \
        on230 nt 4 "$NT/all_reduce_perf" -b 1K -e 1M -f 4 -n 5 -w 2 >"$W/logs/folder230.log" 2>&1
    say "folder on 2.30: exit $?; $(grep -m1 -o 'init comm.*' "$W/logs/folder230.log" | cut -c1-300)"
    NCCL_TUNER_PLUGIN=$P CCLTUNE_TABLE=$W/folder NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,TUNING,ENV \
        nt 4 "$NT/all_reduce_perf" -b 1K -e 1M -f 4 -n 5 -w 2 >"$W/logs/folder228.log" 2>&1
    say "folder on 2.28: exit $?; $(grep -m1 -o 'init comm.*' "$W/logs/folder228.log" | cut -c1-300)"
    pack folder
}

step_chunklog() {
    NCCL_TUNER_PLUGIN=$P CCLTUNE_TABLE=$W/h200-nccl230-4ranks.yaml NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=TUNING \
        NCCL_PROFILER_PLUGIN=$P CCLTUNE_RECORD=$W/rec230 \
        on230 nt 4 "$NT/all_reduce_perf" -b 1K -e 64M -f 2 -n 5 -w 2 >"$W/logs/chunk230.log" 2>&1
    say "chunk log on 2.30: exit $?; $(grep -c 'chunk' "$W/logs/chunk230.log") chunk lines"
    pack chunklog
}

for s in "$@"; do "step_$s"; done
say "done: $*"
