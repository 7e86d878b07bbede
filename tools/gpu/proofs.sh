#!/usr/bin/env bash
# tools/gpu/proofs.sh - deployment and production-loop checks on the lent GPU machine (one
# H100 or H200, NCCL 2.28.9, PyTorch, MPS; ../shared/device/README.md).  From the repository root:
#
#   . .devtools/env.sh .devdeps && . .devtools/mps.sh && mps_start && bash tools/gpu/proofs.sh STEP...
#
# STEPs, in this order (a later call on the same warm machine may run the later ones):
# build tune suite doctor probe folder record bench jobtune overhead.
# Steps: build; `ccltune tune` at RANKS rank processes (the table T every later step uses);
# the GPU test suite; `ccltune doctor` with T (expect 0), a table of another GPU (1),
# NCCL_PROTO=Simple (1) and no plugin on the path (1); `probe --links` (text and JSON); a
# folder of tables inside PyTorch (NCCL's log says which one the plugin picked); a PyTorch
# training-step loop recorded by the profiler half, audited against T (expect 0), and again
# with NCCL_PROTO=Simple (expect 1); the recording overhead: a 1 KiB all_reduce loop with
# no profiler, the profiler loaded but not recording, recording, and the first arm again
# (A/A), in rotated order over ROUNDS rounds; then `ccltune bench` of T with the per-size
# argmin of its store and the older fitter's table compared in the same run.  Results: $OUT/results.tar.gz, $OUT/summary.txt.
set -uo pipefail
FINAL=${OUT:-/tmp/ccltune-out}
W=/tmp/proofs && mkdir -p "$W/logs" "$FINAL"
export PATH=/usr/local/cuda/bin:$PATH NCCL_NVLS_ENABLE=0
ROOT=$(pwd) B=$(pwd)/build-gpu
C=$B/src/cli/ccltune P=$B/src/plugin/libnccl-tuner-ccltune.so
RANKS=${RANKS:-4}
say() { echo "$*" | tee -a "$W/summary.txt"; cp "$W/summary.txt" "$FINAL/summary.txt"; }
pack() { tar -C "$W" -czf "$FINAL/results.tar.gz" --exclude='*.db' --exclude='*.db-wal' --exclude='*.db-shm' . 2>/dev/null; }
PORT=29600
job() {
    PORT=$((PORT + 1))
    MASTER_PORT=$PORT bash "$ROOT/tools/gpu/torch_job.sh" "$@"
}

step_build() {
rm -rf "${W:?}"/* && mkdir -p "$W/logs" "$W/rec" "$W/rec-simple" "$W/rec-loop-1" "$W/rec-loop-2" "$W/rec-loop-3"
t0=$SECONDS
if [ ! -x "$C" ]; then
    meson setup "$B" -Dnccl_home="$NCCL_HOME" -Dgpu_arch=90 -Dwerror=false >"$W/logs/build.log" 2>&1
fi
ninja -C "$B" >>"$W/logs/build.log" 2>&1
rc=$?
say "build: rc=$rc $((SECONDS - t0)) s"
[ $rc -eq 0 ] || { tail -20 "$W/logs/build.log"; pack; exit 1; }
}

T=$W/t$RANKS.yaml
step_tune() {
t0=$SECONDS
"$C" tune -o "$T" --store "$W/t$RANKS.db" --no-plots --ranks-per-gpu "$RANKS" --ranks "$RANKS" \
    --max-bytes "${MAXB:-64M}" >"$W/logs/tune.log" 2>&1
rc=$?
say "tune: rc=$rc $((SECONDS - t0)) s; $(grep -ciE 'pat' "$T" 2>/dev/null) lines naming PAT in the table"
"$C" explain "$T" --coll allreduce --ranks "$RANKS" --links "$W/t$RANKS.db" >"$W/logs/explain.txt" 2>&1
say "explain --links: exit $?; $(grep -ciE 'link' "$W/logs/explain.txt") lines on links"
if [ $rc -ne 0 ] || [ ! -f "$T" ]; then
    cp "$ROOT/tables/h200-socket-4ranks.yaml" "$T" && say "tune failed: the committed 4-rank table stands in"
fi
pack
}
step_suite() {
t0=$SECONDS
timeout 120 meson test -C "$B" --suite gpu --print-errorlogs --num-processes 2 >"$W/logs/gpu-tests.log" 2>&1
say "gpu suite: rc=$? $((SECONDS - t0)) s; $(grep -E '^(Ok|Fail|Skipped|Timeout):' "$W/logs/gpu-tests.log" | tr -s ' ' | tr '\n' ' ')"

}
# tables of another GPU and another NCCL, for doctor and the folder
export LD_LIBRARY_PATH=$B/src/plugin:${LD_LIBRARY_PATH:-}
step_doctor() {
sed -E 's/^  gpu: ".*"/  gpu: "NVIDIA A100-SXM4-80GB"/' "$T" >"$W/other-gpu.yaml"
sed -E 's/^  nccl: ".*"/  nccl: "2.27.3"/' "$T" >"$W/other-nccl.yaml"
doc() {
    local name=$1
    shift
    env NCCL_HOSTID=doctor "$@" --ranks "$RANKS" --nodes "$RANKS" >"$W/logs/doctor-$name.txt" 2>&1
    say "doctor $name: exit $?"
}
doc match env NCCL_TUNER_PLUGIN="$P" "$C" doctor --table "$T"
doc match-json env NCCL_TUNER_PLUGIN="$P" "$C" doctor --table "$T" --json
doc other-gpu env NCCL_TUNER_PLUGIN="$P" "$C" doctor --table "$W/other-gpu.yaml"
doc proto-simple env NCCL_TUNER_PLUGIN="$P" NCCL_PROTO=Simple "$C" doctor --table "$T"
doc no-plugin env -u NCCL_TUNER_PLUGIN LD_LIBRARY_PATH="${LD_LIBRARY_PATH#"$B"/src/plugin:}" "$C" doctor --table "$T"
}
step_probe() {
t0=$SECONDS
"$C" probe --links --ranks-per-gpu "$RANKS" --ranks "$RANKS" >"$W/logs/probe-links.txt" 2>&1
say "probe --links: exit $? $((SECONDS - t0)) s"
"$C" probe --links --json --ranks-per-gpu "$RANKS" --ranks "$RANKS" >"$W/logs/probe-links.json" 2>"$W/logs/probe-links-json.err"
say "probe --links --json: exit $?"
pack
}
step_folder() {
mkdir -p "$W/folder" && cp "$T" "$W/folder/this-box.yaml" && cp "$W/other-gpu.yaml" "$W/other-nccl.yaml" "$W/folder/"
NCCL_TUNER_PLUGIN=$P CCLTUNE_TABLE=$W/folder NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,TUNING,ENV \
    job "$RANKS" 5 >"$W/logs/folder-job.log" 2>&1
say "folder job: exit $?; $(grep -c 'ccltune' "$W/logs/folder-job.log") ccltune lines; $(grep -m1 -o 'init comm.*' "$W/logs/folder-job.log" | cut -c1-300)"
pack
}
step_record() {
t0=$SECONDS
NCCL_TUNER_PLUGIN=$P CCLTUNE_TABLE=$T NCCL_PROFILER_PLUGIN=$P CCLTUNE_RECORD=$W/rec \
    job "$RANKS" 20 >"$W/logs/record-job.log" 2>&1
say "recorded job: exit $? $((SECONDS - t0)) s; $(ls "$W/rec" 2>/dev/null | wc -l) recordings"
"$C" audit "$W/rec" --table "$T" --steps 110 >"$W/logs/audit.txt" 2>&1
say "audit: exit $?; $(grep -iE 'ran as|mismatch|save' "$W/logs/audit.txt" | head -4 | tr '\n' ' ')"
"$C" audit "$W/rec" --table "$T" --steps 110 --json >"$W/logs/audit.json" 2>&1
NCCL_PROTO=Simple NCCL_TUNER_PLUGIN=$P CCLTUNE_TABLE=$T NCCL_PROFILER_PLUGIN=$P CCLTUNE_RECORD=$W/rec-simple \
    job "$RANKS" 20 >"$W/logs/record-simple-job.log" 2>&1
say "recorded job NCCL_PROTO=Simple: exit $?"
"$C" audit "$W/rec-simple" --table "$T" >"$W/logs/audit-simple.txt" 2>&1
say "audit NCCL_PROTO=Simple: exit $?; $(grep -iE 'mismatch' "$W/logs/audit-simple.txt" | head -3 | tr '\n' ' ')"
pack
}
# overhead: arms none (no profiler), off (profiler loaded, not recording), on (recording), none2 (A/A)
arm() {
    case $1 in
    none | none2) JOB=loop1k NCCL_TUNER_PLUGIN=$P CCLTUNE_TABLE=$T job "$RANKS" "${LOOP:-20000}" ;;
    off) JOB=loop1k NCCL_TUNER_PLUGIN=$P CCLTUNE_TABLE=$T NCCL_PROFILER_PLUGIN=$P job "$RANKS" "${LOOP:-20000}" ;;
    on) JOB=loop1k NCCL_TUNER_PLUGIN=$P CCLTUNE_TABLE=$T NCCL_PROFILER_PLUGIN=$P CCLTUNE_RECORD=$W/rec-loop-$2 \
        job "$RANKS" "${LOOP:-20000}" ;;
    esac
}
step_overhead() {
arms=(none off on none2)
t0=$SECONDS
for r in $(seq 1 "${ROUNDS:-3}"); do
    for k in 0 1 2 3; do
        a=${arms[$(((k + r) % 4))]}
        arm "$a" "$r" >"$W/logs/loop-$a-$r.log" 2>&1
        echo "$a $r $(grep -o '[0-9.]* us per call' "$W/logs/loop-$a-$r.log" | awk '{print $1}' | tr '\n' ' ')" >>"$W/overhead.txt"
    done
done
say "overhead loop: $((SECONDS - t0)) s"
cat "$W/overhead.txt" | tee -a "$W/summary.txt"
pack
}
step_bench() {
# the fitted table against the per-size argmin of its own store and the older fitter's table
# (.oldfit/ccltune when carried), all in the same bench run
"$C" fit --argmin --store "$W/t$RANKS.db" -o "$W/argmin.yaml" >"$W/logs/fit-argmin.log" 2>&1
cmp=(--compare "$W/argmin.yaml")
if [ -x .oldfit/ccltune ] && .oldfit/ccltune fit --store "$W/t$RANKS.db" -o "$W/oldfit.yaml" \
    >"$W/logs/fit-oldfit.log" 2>&1; then cmp+=(--compare "$W/oldfit.yaml"); fi
t0=$SECONDS
"$C" bench "$T" --ranks-per-gpu "$RANKS" --ranks "$RANKS" --max-bytes "${MAXB:-64M}" \
    --colls "${BENCH_COLLS:-allgather,allreduce,reducescatter}" "${cmp[@]}" --store "$W/bench.db" \
    -o "$W/bench.md" --csv "$W/bench.csv" >"$W/logs/bench.log" 2>&1
say "bench: rc=$? $((SECONDS - t0)) s"
grep 'ccltune bench' "$W/logs/bench.log" | tee -a "$W/summary.txt"
gzip -9nc "$W/bench.db" >"$W/bench.db.gz"
pack
}
# the recorded job's own sizes: tune on them, then bench that table at exactly those sizes
step_jobtune() {
t0=$SECONDS
"$C" tune -o "$W/job.yaml" --store "$W/job.db" --no-plots --ranks-per-gpu "$RANKS" --ranks "$RANKS" \
    --sizes-from "$W/rec" >"$W/logs/jobtune.log" 2>&1
say "tune --sizes-from: rc=$? $((SECONDS - t0)) s"
t0=$SECONDS
"$C" bench "$W/job.yaml" --ranks-per-gpu "$RANKS" --ranks "$RANKS" --sizes-from "$W/rec" \
    --store "$W/jobbench.db" -o "$W/jobbench.md" --csv "$W/jobbench.csv" >"$W/logs/jobbench.log" 2>&1
say "bench --sizes-from: rc=$? $((SECONDS - t0)) s; $(grep 'ccltune bench: run' "$W/logs/jobbench.log")"
"$C" audit "$W/rec" --table "$W/job.yaml" --steps 110 --store "$W/jobbench.db" >"$W/logs/audit-job.txt" 2>&1
say "audit with the job table's bench: exit $?; $(grep -iE 'save' "$W/logs/audit-job.txt" | head -2 | tr '\n' ' ')"
gzip -9nc "$W/job.db" >"$W/job.db.gz"
gzip -9nc "$W/jobbench.db" >"$W/jobbench.db.gz"
pack
}

for s in "$@"; do
    "step_$s"
done
gzip -9nc "$W/t$RANKS.db" >"$W/t$RANKS.db.gz" 2>/dev/null
pack
say "done: $*"
