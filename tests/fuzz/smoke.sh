#!/bin/sh
# smoke.sh TARGET SEEDS DICT SECONDS WORKDIR: a short libFuzzer run of TARGET starting from
# the committed seed corpus SEEDS (read, never written: new inputs go to WORKDIR), for the
# CI step that makes fuzzing regressions surface.  Exit status: the fuzzer's (0 = no crash).
set -eu
target=$1 seeds=$2 dict=$3 seconds=$4 work=$5
rm -rf "$work"
mkdir -p "$work/corpus" "$work/artifacts"
exec "$target" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -max_len=8192 \
  -dict="$dict" -artifact_prefix="$work/artifacts/" -print_final_stats=1 \
  "$work/corpus" "$seeds"
