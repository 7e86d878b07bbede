#!/usr/bin/env bash
# tools/gpu/session.sh - what ccltune runs on the lent GPU machine (one H200, NCCL 2.28.9,
# OpenMPI, MPS; see ../shared/device/README.md).  Usage, from the repository root there:
#
#   . .devtools/env.sh .devdeps && . .devtools/mps.sh && bash tools/gpu/session.sh STAGE...
#
# Stages: build (ccltune, and nccl-tests when its source is carried in .ncclt/), tests
# (meson test, GPU suite included), probe, proof (the plugin inside real NCCL with a
# hand-written table), capture (nccl-tests logs for the importers), search2/search4 (the
# recorded dataset), tune2/tune4/tune8 (end to end), pipe (grouped/registered call
# modes), calib (a table's NCCL model constants, rules off, against NCCL's defaults
# and the oracle at 3/8 and 2/4 ranks), tunecal (tune fits nccl_constants from the
# NCCL model printout its search captured).  Logs go to $OUT/logs; a tarball of
# them and a summary come back.  Nothing here changes the GPU's settings.
set -uo pipefail
# Stages write under WORK; only results.tar.gz (refreshed after every stage when PACK=1) and
# summary.txt go to $OUT, so whatever a stopped command leaves is one archive.
FINAL=${OUT:-/tmp/ccltune-out}
# start from an empty work folder: a call that finds the machine still warm finds the last
# call's /tmp, and its stores would be packed again or appended to (a second run id)
if [ -n "${PACK:-}" ]; then OUT=/tmp/ccltune-work && rm -rf "$OUT"; else OUT=$FINAL; fi
mkdir -p "$FINAL"
LOG=$OUT/logs
mkdir -p "$LOG"
export PATH=/usr/local/cuda/bin:$PATH
export NCCL_NVLS_ENABLE=0
ROOT=$(pwd)
B=$ROOT/build-gpu
CCLTUNE=$B/src/cli/ccltune
PLUGIN=$B/src/plugin/libnccl-tuner-ccltune.so
NT=$ROOT/build-nt
summary() {
    echo "$*" | tee -a "$OUT/summary.txt"
    [ "$OUT" != "$FINAL" ] && echo "$*" >>"$FINAL/summary.txt"
}

# nccl-tests under mpirun, every rank on GPU 0 as its own NCCL "node" (own NCCL_HOSTID)
nt() {
    local np=$1
    shift
    timeout "${NT_TIMEOUT:-120}" mpirun --allow-run-as-root --oversubscribe --bind-to none -np "$np" \
        -x LD_LIBRARY_PATH -x PATH -x NCCL_NVLS_ENABLE -x CUDA_MPS_PIPE_DIRECTORY \
        -x CUDA_MPS_LOG_DIRECTORY -x NCCL_TESTS_DEVICE=0 -x NCCL_DEBUG -x NCCL_DEBUG_SUBSYS \
        -x NCCL_TUNER_PLUGIN -x CCLTUNE_TABLE -x NCCL_ALGO -x NCCL_PROTO -x CCLTUNE_CONSTANTS \
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
    local ntpid=${!:-}
    meson setup "$B" -Dnccl_home="$NCCL_HOME" -Dgpu_arch=90 -Dwerror=false >"$LOG/build.log" 2>&1 &&
        ninja -C "$B" >>"$LOG/build.log" 2>&1
    local rc=$?
    [ -n "$ntpid" ] && wait "$ntpid"
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

# the end-to-end pipeline: adaptive search + fit + table with `ccltune tune`,
# then `ccltune bench` of that table on the same kind of communicator
TUNE_ARGS=${TUNE_ARGS:---channels nccl,1,2,max --align 0,4 --buffsize default,1M --cycles 4 --timeout 60}
tune() {
    local ranks=$1 maxb=$2
    shift 2
    local t0=$SECONDS
    "$CCLTUNE" tune -o "$OUT/h200-socket-${ranks}ranks.yaml" --store "$OUT/tune-$ranks.db" --no-plots \
        --note "lent H200, $ranks rank processes sharing the GPU (MPS, NCCL_HOSTID per rank)" \
        --ranks-per-gpu "$ranks" --ranks "$ranks" --max-bytes "$maxb" $TUNE_ARGS "$@" >"$LOG/tune-$ranks.log" 2>&1
    summary "tune $ranks ranks: rc=$? wall=$((SECONDS - t0)) s; $(grep -E 'wrote|session [0-9]+/' "$LOG/tune-$ranks.log" | tr '\n' ' ')"
}
exhaustive() {
    local ranks=$1 maxb=$2
    local t0=$SECONDS
    "$CCLTUNE" search --exhaustive --store "$OUT/exhaustive-$ranks.db" --ranks-per-gpu "$ranks" \
        --ranks "$ranks" --max-bytes "$maxb" $TUNE_ARGS >"$LOG/exhaustive-$ranks.log" 2>&1
    summary "exhaustive $ranks ranks: rc=$? wall=$((SECONDS - t0)) s; $(grep -E 'session [0-9]+/' "$LOG/exhaustive-$ranks.log" | tr '\n' ' ')"
}
bench() {
    local ranks=$1 maxb=$2
    local t0=$SECONDS
    "$CCLTUNE" bench "$OUT/h200-socket-${ranks}ranks.yaml" --ranks-per-gpu "$ranks" --ranks "$ranks" \
        --max-bytes "$maxb" --store "$OUT/bench-$ranks.db" -o "$OUT/bench-$ranks.md" \
        --csv "$OUT/bench-$ranks.csv" >"$LOG/bench-$ranks.log" 2>&1
    summary "bench $ranks ranks: rc=$? wall=$((SECONDS - t0)) s; $(grep -E 'geometric' "$LOG/bench-$ranks.log" | tr '\n' ' ')"
}
# one rank per GPU on a multi-GPU kind (NVLink), without MPS: a real deployment's topology;
# NVGPUS=N uses the first N GPUs (ranks 0..N-1 on GPUs 0..N-1)
nvlink() {
    local what=$1 maxb=$2
    shift 2
    mps_stop >/dev/null 2>&1 || true
    local ngpu
    ngpu=${NVGPUS:-$(nvidia-smi -L | wc -l)}
    local t0=$SECONDS
    if [ "$what" = tune ]; then
        "$CCLTUNE" tune -o "$OUT/h200-nvlink-${ngpu}ranks.yaml" --store "$OUT/tune-nvlink-$ngpu.db" \
            --no-plots --note "lent H200 x$ngpu, one rank per GPU (NVLink)" --ranks "$ngpu" \
            --ranks-per-gpu 1 --max-bytes "$maxb" $TUNE_ARGS "$@" >"$LOG/tune-nvlink-$ngpu.log" 2>&1
    else
        "$CCLTUNE" bench "$OUT/h200-nvlink-${ngpu}ranks.yaml" --ranks "$ngpu" --ranks-per-gpu 1 \
            --max-bytes "$maxb" --store "$OUT/bench-nvlink-$ngpu.db" -o "$OUT/bench-nvlink-$ngpu.md" \
            --csv "$OUT/bench-nvlink-$ngpu.csv" >"$LOG/bench-nvlink-$ngpu.log" 2>&1
    fi
    summary "$what nvlink $ngpu ranks: rc=$? wall=$((SECONDS - t0)) s; $(grep -E 'wrote|session [0-9]+/[0-9]+:|complete in|geometric' "$LOG/$what-nvlink-$ngpu.log" | tr '\n' ' ')"
    mps_start >/dev/null 2>&1 || true
}
stage_exhnv() {
    mps_stop >/dev/null 2>&1 || true
    local ngpu t0=$SECONDS
    ngpu=${NVGPUS:-$(nvidia-smi -L | wc -l)}
    "$CCLTUNE" search --exhaustive --store "$OUT/exhaustive-nvlink-$ngpu.db" --ranks "$ngpu" \
        --ranks-per-gpu 1 --max-bytes "${NVMAX:-1G}" $TUNE_ARGS --align 0,4,8,12 \
        >"$LOG/exhaustive-nvlink-$ngpu.log" 2>&1
    summary "exhaustive nvlink $ngpu ranks: rc=$? wall=$((SECONDS - t0)) s; $(grep -E 'session [0-9]+/[0-9]+:|complete in' "$LOG/exhaustive-nvlink-$ngpu.log" | tr '\n' ' ')"
    mps_start >/dev/null 2>&1 || true
}
stage_tunenv() { nvlink tune "${NVMAX:-1G}" --align 0,4,8,12; }
stage_benchnv() { nvlink bench "${NVMAX:-1G}"; }
stage_probenv() {
    mps_stop >/dev/null 2>&1 || true
    { "$CCLTUNE" probe; echo; "$CCLTUNE" probe --json; echo; nvidia-smi topo -m; } >"$LOG/probe-multi.txt" 2>&1
    summary "probe: $(grep -E '^LL128|links' "$LOG/probe-multi.txt" | head -3 | tr '\n' ' ')"
    mps_start >/dev/null 2>&1 || true
}

# bench the committed tables (tables/*.yaml, or a path) as they are in git
committed() {
    local name=$1 ranks=$2 per=$3 maxb=$4
    local t0=$SECONDS file=$ROOT/tables/$1.yaml
    [ -f "$name" ] && file=$ROOT/$name && name=$(basename "$name" .yaml)
    "$CCLTUNE" bench "$file" --ranks "$ranks" --ranks-per-gpu "$per" \
        --max-bytes "$maxb" --store "$OUT/bench-$name.db" -o "$OUT/bench-$name.md" \
        --csv "$OUT/bench-$name.csv" >"$LOG/bench-$name.log" 2>&1
    summary "bench $name: rc=$? wall=$((SECONDS - t0)) s; $(grep -E 'geometric|main communicator' "$LOG/bench-$name.log" | tr '\n' ' ')"
}
stage_bcnv() {
    mps_stop >/dev/null 2>&1 || true
    committed h200-nvlink-2ranks 2 1 1G
    mps_start >/dev/null 2>&1 || true
}
stage_bc4nv() {
    mps_stop >/dev/null 2>&1 || true
    committed h200-nvlink-4ranks 4 1 1G
    mps_start >/dev/null 2>&1 || true
}
# the same table without its nccl_constants: one communicator, no second one for the default
stage_bc4nvrules() {
    mps_stop >/dev/null 2>&1 || true
    committed tests/data/h200/run-2026-11-29d/h200-nvlink-4ranks-rules-only.yaml 4 1 1G
    mps_start >/dev/null 2>&1 || true
}
stage_bc4() { committed h200-socket-4ranks 4 4 16M; }
stage_bc2() { committed h200-socket-2ranks 2 2 32M; }
stage_bc8() { committed h200-socket-8ranks 8 8 8M; }

# a short end-to-end check of the current code: adaptive search with a buffer session, fit, bench
stage_smoke() {
    local t0=$SECONDS
    "$CCLTUNE" tune -o "$OUT/smoke.yaml" --store "$OUT/smoke.db" --no-plots --ranks-per-gpu 2 \
        --ranks 2 --colls allreduce,allgather --max-bytes 4M --channels nccl,1,max \
        --buffsize default,1M --cycles 3 >"$LOG/smoke-tune.log" 2>&1
    local rc=$?
    "$CCLTUNE" bench "$OUT/smoke.yaml" --ranks-per-gpu 2 --ranks 2 --sizes 4K,100000,3M \
        --store "$OUT/smoke-bench.db" -o "$OUT/smoke-bench.md" >"$LOG/smoke-bench.log" 2>&1
    summary "smoke: tune rc=$rc bench rc=$? wall=$((SECONDS - t0)) s; $(grep -E 'session [0-9]/[0-9]:|wrote|geometric' "$LOG"/smoke-*.log | cut -c1-200 | tr '\n' ' ')"
}

# NCCL's own cost model as it prints it (NCCL_DEBUG_SUBSYS=TUNING: latency/bandwidth per
# collective, algorithm and protocol) with its default constants, at 2/3/4/8 shared ranks and,
# on a multi-GPU kind, one rank per GPU; plus what numPipeOps/regBuff NCCL hands the tuner for
# grouped (nccl-tests -m) and registered (-R 1) collectives (plugin trace).
stage_ncclmodel() {
    local d=$LOG/nccl-model
    mkdir -p "$d"
    for np in 2 3 4 8; do
        NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,GRAPH,TUNING,ENV nt "$np" "$NT/all_reduce_perf" \
            -b 1K -e 1K -n 1 -w 0 >"$d/model-socket-${np}ranks.log" 2>&1
    done
    local t=$ROOT/tests/data/proof/table-2rank.yaml
    for m in 1 4; do
        for r in 0 1; do
            NCCL_TUNER_PLUGIN=$PLUGIN CCLTUNE_TABLE=$t NCCL_DEBUG=TRACE NCCL_DEBUG_SUBSYS=TUNING \
                nt 2 "$NT/all_reduce_perf" -b 64K -e 4M -f 8 -n 2 -w 1 -m "$m" -R "$r" \
                >"$d/pipe-socket-m$m-R$r.log" 2>&1
            grep -o 'ccltune: comm [^ ]* [a-z]* [0-9]* bytes pipe_ops=[0-9-]* reg_buff=[0-9-]*' \
                "$d/pipe-socket-m$m-R$r.log" | awk '{print $4, $5, $7, $8}' | sort | uniq -c \
                >"$d/pipe-socket-m$m-R$r.txt"
        done
    done
    local ngpu
    ngpu=${NVGPUS:-$(nvidia-smi -L | wc -l)}
    if [ "$ngpu" -gt 1 ]; then
        mps_stop >/dev/null 2>&1 || true
        NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,GRAPH,TUNING,ENV timeout 120 mpirun --allow-run-as-root \
            --bind-to none -np "$ngpu" -x LD_LIBRARY_PATH -x PATH -x NCCL_NVLS_ENABLE -x NCCL_DEBUG \
            -x NCCL_DEBUG_SUBSYS "$NT/all_reduce_perf" -b 1K -e 1K -n 1 -w 0 \
            >"$d/model-nvlink-${ngpu}ranks.log" 2>&1
        for m in 1 4; do
            for r in 0 1; do
                NCCL_TUNER_PLUGIN=$PLUGIN CCLTUNE_TABLE=$t NCCL_DEBUG=TRACE NCCL_DEBUG_SUBSYS=TUNING \
                    timeout 120 mpirun --allow-run-as-root --bind-to none -np "$ngpu" \
                    -x LD_LIBRARY_PATH -x PATH -x NCCL_NVLS_ENABLE -x NCCL_DEBUG -x NCCL_DEBUG_SUBSYS \
                    -x NCCL_TUNER_PLUGIN -x CCLTUNE_TABLE "$NT/all_reduce_perf" -b 64K -e 4M -f 8 \
                    -n 2 -w 1 -m "$m" -R "$r" >"$d/pipe-nvlink-m$m-R$r.log" 2>&1
                grep -o 'ccltune: comm [^ ]* [a-z]* [0-9]* bytes pipe_ops=[0-9-]* reg_buff=[0-9-]*' \
                    "$d/pipe-nvlink-m$m-R$r.log" | awk '{print $4, $5, $7, $8}' | sort | uniq -c \
                    >"$d/pipe-nvlink-m$m-R$r.txt"
            done
        done
        mps_start >/dev/null 2>&1 || true
    fi
    summary "ncclmodel: $(grep -l 'Latency' "$d"/model-*.log 2>/dev/null | wc -l) model logs; pipe: $(head -c 300 "$d"/pipe-*R1.txt | tr '\n' ' ')"
}

# grouped (numPipeOps) and registered-buffer (regBuff) calls.  Tune allreduce and
# allgather at 2 shared ranks over plain, 4-op groups and registered buffers, then bench that
# table in 4-op group mode (and registered 4-op groups); the same over NVLink when the kind
# has more than one GPU.  Look for: "pipe_ops:"/"reg_buff:" sections in the table (keyed
# sections exist only where a mode decides otherwise) and tuned >= default in the benches.
PIPE_ARGS=${PIPE_ARGS:---colls allreduce,allgather --pipe-ops 1,4 --regbuff no,yes --max-bytes 16M --channels nccl --cycles 3 --timeout 30}
pipe_run() {
    local tag=$1 ranks=$2 rpg=$3
    local t0=$SECONDS y=$OUT/pipe-$tag.yaml
    timeout 150 "$CCLTUNE" tune -o "$y" --store "$OUT/pipe-$tag.db" --no-plots \
        --note "call modes, $tag" --ranks "$ranks" --ranks-per-gpu "$rpg" $PIPE_ARGS \
        >"$LOG/pipe-tune-$tag.log" 2>&1
    local rc=$?
    local keyed
    keyed=$(grep -cE '^ +(pipe_ops|reg_buff):' "$y" 2>/dev/null)
    for reg in no yes; do
        timeout 60 "$CCLTUNE" bench "$y" --ranks "$ranks" --ranks-per-gpu "$rpg" --pipe-ops 4 \
            --regbuff "$reg" --colls allreduce,allgather --sizes 16K,256K,1M,4M --cycles 4 \
            --store "$OUT/pipe-bench-$tag-$reg.db" -o "$OUT/pipe-bench-$tag-$reg.md" \
            >"$LOG/pipe-bench-$tag-$reg.log" 2>&1
        summary "pipe $tag bench --pipe-ops 4 --regbuff $reg: rc=$?; $(grep -E 'geometric' "$LOG/pipe-bench-$tag-$reg.log" | cut -c1-160)"
    done
    summary "pipe $tag: tune rc=$rc keyed-lines=${keyed:-0} wall=$((SECONDS - t0)) s; $(grep -E 'wrote|session [0-9]+/' "$LOG/pipe-tune-$tag.log" | cut -c1-160 | tr '\n' ' ')"
}
stage_pipe() {
    pipe_run socket-2ranks 2 2
    local ngpu
    ngpu=${NVGPUS:-$(nvidia-smi -L | wc -l)}
    if [ "$ngpu" -gt 1 ]; then
        mps_stop >/dev/null 2>&1 || true
        pipe_run "nvlink-${ngpu}ranks" "$ngpu" 1
        mps_start >/dev/null 2>&1 || true
    fi
}

# do the keyed sections help?  The pipe table refitted by the current fitter, with and
# without its pipe_ops/reg_buff sections (tools/strip_keyed_sections.py), benched back to back
# in 4-op group mode at 2 shared ranks, at the sizes where the keyed rules decide otherwise.
stage_pipecmp() {
    local p=$ROOT/tests/data/h200/run-2026-11-29c/pipe t0=$SECONDS
    for v in refit plain; do
        for reg in no yes; do
            timeout 90 "$CCLTUNE" bench "$p/pipe-socket-2ranks-$v.yaml" --ranks 2 --ranks-per-gpu 2 \
                --pipe-ops 4 --regbuff "$reg" --colls allreduce,allgather \
                --sizes 16K,64K,256K,1M,2M,3M --cycles 5 --store "$OUT/pipecmp-$v-$reg.db" \
                -o "$OUT/pipecmp-$v-$reg.md" >"$LOG/pipecmp-$v-$reg.log" 2>&1
            summary "pipecmp $v regbuff=$reg: rc=$?; $(grep -E 'geometric' "$LOG/pipecmp-$v-$reg.log" | cut -c1-200)"
        done
    done
    summary "pipecmp: $((SECONDS - t0)) s"
}

# a table's NCCL model constants (CALTABLE, e.g. from `ccltune calibrate`; default: the
# hand-written tests/data/tables/constants-only.yaml) benched with its rules off -- tuned = NCCL
# with the table's constants, default = NCCL untouched (second communicator), oracle = best of
# Ring/Tree x LL/LL128/Simple forced -- at rank counts the search did not measure (3, 8) and did
# (2, 4); CALRANKS picks them (each bench is bounded by CALTIMEOUT).  Then NCCL's own printed
# model (NCCL_DEBUG_SUBSYS=TUNING) at 3 ranks with the plugin writing the constants and with
# CCLTUNE_CONSTANTS=0: the latency/bandwidth lines must differ.  CALMAX/CALCYCLES/CALCOLLS
# shrink a bench (defaults 16M (8M at 8 ranks), 4, allreduce,allgather).
stage_calib() {
    local t=${CALTABLE:-$ROOT/tests/data/tables/constants-only.yaml} d=$LOG/calib
    mkdir -p "$d"
    cp "$t" "$OUT/calib-table.yaml"
    for np in ${CALRANKS:-3 8 2 4}; do
        local maxb=16M t0=$SECONDS
        [ "$np" -ge 8 ] && maxb=8M
        maxb=${CALMAX:-$maxb}
        timeout "${CALTIMEOUT:-300}" "$CCLTUNE" bench "$t" --rules off --ranks-per-gpu "$np" \
            --ranks "$np" --max-bytes "$maxb" --colls "${CALCOLLS:-allreduce,allgather}" \
            --cycles "${CALCYCLES:-4}" --store "$OUT/calib-$np.db" -o "$OUT/calib-$np.md" \
            --csv "$OUT/calib-$np.csv" >"$d/bench-$np.log" 2>&1
        summary "calib bench $np ranks (rules off): rc=$? wall=$((SECONDS - t0)) s; $(grep -E 'geometric' "$d/bench-$np.log" | tr '\n' ' ')"
    done
    for c in 1 0; do
        NCCL_TUNER_PLUGIN=$PLUGIN CCLTUNE_TABLE=$t CCLTUNE_CONSTANTS=$c NCCL_DEBUG=INFO \
            NCCL_DEBUG_SUBSYS=INIT,TUNING nt 3 "$NT/all_reduce_perf" -b 1K -e 64M -f 4 -n 5 -w 2 \
            >"$d/model-3ranks-constants$c.log" 2>&1
        # the model table, from the one process that prints it (all ranks share GPU [0]),
        # without the host/pid prefix
        local pid
        pid=$(grep -m1 -E 'NCCL INFO +Algorithm +\|' "$d/model-3ranks-constants$c.log" | cut -d: -f2)
        grep -E "^[^:]*:${pid:-none}:[0-9]+ .*NCCL INFO .*\|" "$d/model-3ranks-constants$c.log" |
            grep -v threadThresholds | sed 's/^.*NCCL INFO//' >"$d/model-3ranks-constants$c.txt"
    done
    local differ
    differ=$(diff "$d/model-3ranks-constants1.txt" "$d/model-3ranks-constants0.txt" | grep -c '^<')
    summary "calib model: $(wc -l <"$d/model-3ranks-constants1.txt") model lines, $differ differ with vs without constants; $(grep -m1 -o 'wrote [0-9]* NCCL model constants' "$d/model-3ranks-constants1.log"); off: $(grep -m1 -o 'not written ([A-Z_=0-9]*)' "$d/model-3ranks-constants0.log")"
}

# `ccltune tune` fits nccl_constants from NCCL's model printout that the
# search captures itself (a probe communicator before the first session, its own processes
# with NCCL_DEBUG=INFO; the measuring workers log nothing).  2 shared ranks, small search;
# then `ccltune calibrate STORE` without --nccl-log must find the stored printout.  Look for:
# "printout stored" in the search output, tune's nccl_constants line ("fitted" or "not
# written" with both agreement counts), constants in the table (entries > 0 when fitted),
# calibrate rc=0 with "1 topology from the NCCL logs stored", and 0 NCCL INFO lines in the
# search's own output (nothing logged while measuring).
TUNECAL_ARGS=${TUNECAL_ARGS:---colls allreduce,allgather --max-bytes 4M --channels nccl --cycles 3 --timeout 30}
stage_tunecal() {
    local y=$OUT/tunecal.yaml db=$OUT/tunecal.db l=$LOG/tunecal.log t0=$SECONDS
    rm -f "$db" "$db-wal" "$db-shm"
    timeout 300 "$CCLTUNE" tune -o "$y" --store "$db" --no-plots --ranks 2 --ranks-per-gpu 2 \
        --note "tune with captured NCCL model" $TUNECAL_ARGS >"$l" 2>&1
    local rc=$? wall=$((SECONDS - t0))
    local entries
    entries=$(sed -n '/^nccl_constants:/,/^[a-z]/p' "$y" 2>/dev/null | grep -c ': *{.*[0-9]')
    timeout 120 "$CCLTUNE" calibrate "$db" -o "$OUT/tunecal-calibrate.yaml" >"$LOG/tunecal-calibrate.log" 2>&1
    local crc=$?
    local stored=none
    command -v sqlite3 >/dev/null &&
        stored=$(sqlite3 "$db" "SELECT run_id || ':' || ranks || 'r/' || nodes || 'n/' || length(text) || 'B' FROM nccl_logs" 2>&1 | tr '\n' ' ')
    summary "tunecal: tune rc=$rc wall=$wall s; $(grep -o "NCCL's model printout ([0-9]* bytes) stored with run [0-9]*" "$l" | head -1); store nccl_logs: $stored; INFO lines in search output: $(grep -c 'NCCL INFO' "$l")"
    summary "tunecal: $(grep -m1 -o 'nccl_constants [^:]*: .*' "$l" | cut -c1-220); table constant families with entries: ${entries:-0}"
    summary "tunecal: calibrate-from-store rc=$crc; $(grep -m1 -E 'topolog|error' "$LOG/tunecal-calibrate.log" | cut -c1-160)"
}

stage_tune2() { tune 2 "${TMAX2:-256M}" --align 0,4,8,12; }
stage_tune4() { tune 4 "${MAX4:-16M}"; }
stage_tune8() { tune 8 "${MAX8:-8M}"; }
stage_exhaustive4() { exhaustive 4 "${MAX4:-16M}"; }
stage_bench2() { bench 2 "${MAX2:-64M}"; }
stage_bench4() { bench 4 "${MAX4:-16M}"; }
stage_bench8() { bench 8 "${MAX8:-8M}"; }

# keep what was produced so far even if the command is stopped at its time limit
pack() {
    tar -C "$OUT" -czf "$FINAL/results.tar.gz.tmp" . 2>/dev/null &&
        mv "$FINAL/results.tar.gz.tmp" "$FINAL/results.tar.gz"
}

. "$ROOT/.devtools/mps.sh"
mps_start >/dev/null 2>&1 || true
for s in "$@"; do
    t0=$SECONDS
    "stage_$s"
    summary "stage $s: $((SECONDS - t0)) s"
    [ -n "${PACK:-}" ] && pack
done
mps_stop >/dev/null 2>&1 || true
if [ -n "${PACK:-}" ]; then
    pack
else
    tar -C "$OUT" -czf "$OUT/logs.tar.gz" logs && rm -rf "$LOG"
fi
cat "$OUT/summary.txt"
