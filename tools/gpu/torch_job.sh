#!/usr/bin/env bash
# tools/gpu/torch_job.sh NRANKS [STEPS] - start tools/gpu/torch_job.py as NRANKS rank processes
# on GPU 0, each its own NCCL node (NCCL_HOSTID), for MPS; the caller sets NCCL_TUNER_PLUGIN,
# CCLTUNE_TABLE, NCCL_PROFILER_PLUGIN, CCLTUNE_RECORD, NCCL_DEBUG as the check needs.
# Exit status: that of the first rank that failed, else 0.
set -u
n=$1
steps=${2:-20}
py=${PYTHON:-/opt/torch/.venv/bin/python}
here=$(dirname "$0")
export WORLD_SIZE=$n MASTER_ADDR=127.0.0.1 MASTER_PORT=${MASTER_PORT:-29517}
pids=()
for r in $(seq 0 $((n - 1))); do
    RANK=$r NCCL_HOSTID=ccltune-torch-$r timeout 120 "$py" "$here/torch_job.py" "$steps" &
    pids+=($!)
done
rc=0
for p in "${pids[@]}"; do
    wait "$p"
    s=$?
    [ $s -ne 0 ] && [ $rc -eq 0 ] && rc=$s
done
exit $rc
