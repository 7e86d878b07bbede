#!/usr/bin/env bash
# The reliability half of CI (docs/fuzzing.md, docs/bad-input.md): the whole test suite
# built with AddressSanitizer + UndefinedBehaviorSanitizer (GCC; any finding aborts the
# test; it includes test_plugin_attacks, the plugin driven through its ABI with hostile
# input), the plugin's 64-thread tests (threads, attacks) built with ThreadSanitizer (a
# small build of just the plugin and those tests), and every libFuzzer target for a few
# seconds from its committed seed corpus (clang).  Each in its own build folder beside the main one;
# tools/test-counts.py adds up their meson counts.  Exit status 0 only if every step passed.
set -uo pipefail
cd "$(dirname "$0")/.."
jobs=$(nproc)
rc=0
ASAN_BUILD=${ASAN_BUILD:-build-ci-asan}
TSAN_BUILD=${TSAN_BUILD:-build-ci-tsan}
FUZZ_BUILD=${FUZZ_BUILD:-build-ci-fuzz}

# AddressSanitizer + UBSan: the first report ends the program (-fno-sanitize-recover=all
# makes UB fatal at compile time, the options make every report fatal at run time)
export ASAN_OPTIONS=halt_on_error=1:abort_on_error=1:detect_leaks=1
export UBSAN_OPTIONS=halt_on_error=1:abort_on_error=1:print_stacktrace=1
export TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1
# ninja quietly, but with the end of its output when a build fails (the error, not silence)
quiet_ninja() {
  local dir=$1 log
  shift
  log=$(mktemp)
  ninja -C "$dir" "$@" >"$log" 2>&1 || { tail -n 30 "$log"; rm -f "$log"; return 1; }
  rm -f "$log"
}

echo "== AddressSanitizer + UndefinedBehaviorSanitizer: the whole test suite ($ASAN_BUILD)"
if [ ! -f "$ASAN_BUILD/build.ninja" ]; then
  meson setup "$ASAN_BUILD" -Dwerror=true -Dcuda=disabled -Db_sanitize=address,undefined \
    -Dc_args=-fno-sanitize-recover=all >/dev/null || rc=1
fi
{ quiet_ninja "$ASAN_BUILD" &&
  meson test -C "$ASAN_BUILD" --print-errorlogs --num-processes "$jobs"; } || rc=1

echo "== ThreadSanitizer: the plugin's thread and attack tests, the profiler's (64 threads) ($TSAN_BUILD)"
if [ ! -f "$TSAN_BUILD/build.ninja" ]; then
  meson setup "$TSAN_BUILD" -Dwerror=true -Dcuda=disabled -Db_sanitize=thread >/dev/null || rc=1
fi
{ quiet_ninja "$TSAN_BUILD" tests/test_plugin_threads tests/test_plugin_attacks \
    tests/test_profiler_threads \
    src/plugin/libnccl-tuner-ccltune.so tests/fake_cuda/libcuda.so.1 &&
  meson test -C "$TSAN_BUILD" --no-rebuild --print-errorlogs plugin_threads plugin_attacks \
    profiler_threads; } ||
  rc=1

echo "== libFuzzer: each target from its seed corpus ($FUZZ_BUILD)"
if [ ! -f "$FUZZ_BUILD/build.ninja" ]; then
  CC=clang meson setup "$FUZZ_BUILD" -Dfuzz=true -Dcuda=disabled -Dmpi=disabled \
    -Db_sanitize=address,undefined -Db_lundef=false \
    -Dc_args="-fsanitize=fuzzer-no-link -fno-sanitize-recover=all" >/dev/null || rc=1
fi
targets=$(cd tests/fuzz && ls fuzz_*.c | sed 's|^\(.*\)\.c$|tests/fuzz/\1|')
{ quiet_ninja "$FUZZ_BUILD" $targets &&
  meson test -C "$FUZZ_BUILD" --no-rebuild --print-errorlogs --suite fuzz \
    --num-processes "$jobs"; } || rc=1
exit $rc
