#!/usr/bin/env bash
# Build vox's fuzz targets (fuzz/README.md) and run each for a bounded time; any crash, leak,
# sanitizer report, timeout or memory blow-up fails the run (its input is kept under
# build/fuzz/artifacts/<target>/). Every input of fixtures/fuzz/<target>/ (seeds and regression
# inputs) is run first.
#
#   scripts/fuzz.sh                      # short run: every target 15 s, as many at once as there are cores
#   scripts/fuzz.sh --ci                 # CI's run: every target 10 s, 2 at a time (~1 minute after the
#                                        # build), the Python targets instrumenting vox's own code only
#   scripts/fuzz.sh --seconds 60 --only tmod,json
#   scripts/fuzz.sh --long               # a campaign: every target 1 hour (or --runs N executions), the
#                                        # corpora kept in build/fuzz/corpus/ and grown run after run
# Options: --seconds N, --runs N (stop each target after N executions), --jobs J (targets at once),
#          --only LIST, --c-only, --py-only, --no-build, --long, --fork N (N fuzzer processes per target over
#          one shared corpus, --runs split between them and the executions summed),
#          --coverage (no fuzzing: the line coverage of the readers by build/fuzz/corpus/ and
#          fixtures/fuzz/, clang source coverage for C and coverage.py for Python, into build/fuzz/coverage.txt).
# Needs clang with libFuzzer (libclang-rt-*-dev), the Python package (import vox) with atheris for the
# Python targets, and, for tvoice/py_tvoice, a Qwen3-TTS Base .tmod: VOX_FUZZ_QWEN3_MODEL, else made
# once into build/fuzz/ from the tiny official fixture (fixtures/qwen3_tiny.py: torch + qwen-tts).
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
SECONDS_PER=15
RUNS=0
JOBS=$(nproc)
ONLY=""
KINDS="c py"
BUILD=1
FORK=0
COVERAGE=0
while [ $# -gt 0 ]; do
  case "$1" in
    --seconds) SECONDS_PER=$2; shift 2 ;;
    --runs) RUNS=$2; shift 2 ;;
    --jobs) JOBS=$2; shift 2 ;;
    --only) ONLY=",$2,"; shift 2 ;;
    --c-only) KINDS="c"; shift ;;
    --py-only) KINDS="py"; shift ;;
    --no-build) BUILD=0; shift ;;
    --long) SECONDS_PER=3600; shift ;;
    --fork) FORK=$2; shift 2 ;;
    --coverage) COVERAGE=1; shift ;;
    --ci) SECONDS_PER=10; JOBS=$(( $(nproc) < 2 ? $(nproc) : 2 )); export VOX_FUZZ_PY_SCOPE=vox; shift ;;
    -h|--help) sed -n '2,22p' "$0"; exit 0 ;;
    *) echo "fuzz.sh: unknown option $1" >&2; exit 2 ;;
  esac
done

C_TARGETS="tmod tvoice json qwen3_tokenizer kokoro_text utf8"
PY_TARGETS="torch_pickle onnx pronunciations audio py_tmod py_tvoice"
# the largest input libFuzzer makes for each target (the seeds of .tmod files are 4096-aligned)
max_len() { case "$1" in tmod|py_tmod) echo 65536 ;; tvoice|py_tvoice|audio|torch_pickle) echo 16384 ;; *) echo 8192 ;; esac; }
seeds() { case "$1" in py_tmod) echo tmod ;; py_tvoice) echo tvoice ;; *) echo "$1" ;; esac; }
wanted() { [ -z "$ONLY" ] || [[ "$ONLY" == *",$1,"* ]]; }

OUT=${VOX_FUZZ_OUT:-build/fuzz}   # the build, corpora, logs and artifacts
mkdir -p "$OUT/logs" "$OUT/corpus" "$OUT/artifacts"

if [[ " $KINDS " == *" c "* ]] && [ "$BUILD" = 1 ]; then
  echo "== building the C fuzz targets (clang, libFuzzer + ASan + UBSan)"
  CC=${FUZZ_CC:-clang} cmake -S . -B "$OUT" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_C_FLAGS_RELWITHDEBINFO="-O1 -g" \
    -DVOX_FUZZ=ON > "$OUT/logs/cmake.log"
  cmake --build "$OUT" --target vox_fuzz -j"$(nproc)" > "$OUT/logs/build.log" 2>&1 || { tail -30 "$OUT/logs/build.log"; exit 1; }
fi

need_model=0
for t in tvoice py_tvoice; do wanted "$t" && need_model=1; done
if [ "$need_model" = 1 ] && [ -z "${VOX_FUZZ_QWEN3_MODEL:-}" ]; then
  case "$OUT" in /*) VOX_FUZZ_QWEN3_MODEL=$OUT/base06.tmod ;; *) VOX_FUZZ_QWEN3_MODEL=$PWD/$OUT/base06.tmod ;; esac
  if [ ! -f "$VOX_FUZZ_QWEN3_MODEL" ]; then
    echo "== converting the tiny Qwen3-TTS Base fixture for the .tvoice targets"
    "$PY" - "$VOX_FUZZ_QWEN3_MODEL" <<'PY'
import sys
from fixtures.qwen3_tiny import fixture_dir
from vox.convert import convert
convert(fixture_dir("base06"), sys.argv[1], dtype="bf16", quant="q8", overwrite=True)
PY
  fi
fi
if [ -z "${VOX_FUZZ_QWEN3_TOKENIZER:-}" ] && wanted qwen3_tokenizer && [ "$need_model" = 1 ]; then
  # the real Qwen2 tokenizer files of the same fixture (else fuzz/data/qwen3_tokenizer/, a subset)
  VOX_FUZZ_QWEN3_TOKENIZER=$("$PY" -c "from fixtures.qwen3_tiny import fixture_dir; print(fixture_dir('base06'))")
fi
export VOX_FUZZ_QWEN3_MODEL="${VOX_FUZZ_QWEN3_MODEL:-}" VOX_FUZZ_QWEN3_TOKENIZER="${VOX_FUZZ_QWEN3_TOKENIZER:-}"
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:allocator_may_return_null=0:abort_on_error=0}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
export OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1

if [ "$COVERAGE" = 1 ]; then
  # The replay programs (fuzz/replay_main.c) built with clang's source coverage, run over the corpora;
  # the Python targets replayed under coverage.py. Lines of the readers' files only.
  COV=build/fuzz-cov
  echo "== coverage of the readers by the corpora"
  CC=${FUZZ_CC:-clang} cmake -S . -B "$COV" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DVOX_BUILD_EXAMPLES=OFF \
    -DCMAKE_C_FLAGS="-fprofile-instr-generate -fcoverage-mapping" > "$OUT/logs/cov-cmake.log"
  report=$OUT/coverage.txt
  : > "$report"
  objs=()
  for t in $C_TARGETS; do
    wanted "$t" || continue
    cmake --build "$COV" --target "fuzz_replay_$t" -j"$(nproc)" > "$OUT/logs/cov-build.log" 2>&1 || { tail -20 "$OUT/logs/cov-build.log"; exit 1; }
    LLVM_PROFILE_FILE="$COV/$t.profraw" "$COV/fuzz/fuzz_replay_$t" "$OUT/corpus/$t" "fixtures/fuzz/$t" > /dev/null
    objs+=(-object "$COV/fuzz/fuzz_replay_$t")
  done
  if [ ${#objs[@]} -gt 0 ]; then
    PROFDATA=$(command -v llvm-profdata || command -v llvm-profdata-14)
    LLVMCOV=$(command -v llvm-cov || command -v llvm-cov-14)
    "$PROFDATA" merge -o "$COV/all.profdata" "$COV"/*.profraw
    "$LLVMCOV" report "${objs[@]:1}" -instr-profile="$COV/all.profdata" core/src/json.c core/src/tmod.c \
      core/src/tvoice.c core/src/unicode/utf8.c core/src/qwen3/bpe.c core/src/qwen3/pretok.c \
      core/src/qwen3/tokenizer.c core/src/kokoro/text/*.c | tee -a "$report"
  fi
  if [[ " $KINDS " == *" py "* ]]; then
    rm -f .coverage
    for t in $PY_TARGETS; do
      wanted "$t" || continue
      "$PY" -m coverage run -a --include='*/vox/formats/*,*/vox/convert/onnx_proto.py,*/vox/families/kokoro/frontend_data.py,*/vox/families/kokoro/convert.py,*/vox/reference/common/safetensors.py' \
        fuzz/py/replay.py "$t" "$OUT/corpus/$t" "fixtures/fuzz/$(seeds "$t")"
    done
    "$PY" -m coverage report | tee -a "$report"
  fi
  exit 0
fi

# one target: libFuzzer (or atheris) over its working corpus and its committed inputs
run_one() {
  local kind=$1 t=$2 log=$OUT/logs/$2.log
  mkdir -p "$OUT/corpus/$t" "$OUT/artifacts/$t"
  local args=(-max_total_time="$SECONDS_PER" -timeout=30 -rss_limit_mb=2048 -malloc_limit_mb=1024
              -max_len="$(max_len "$t")" -print_final_stats=1 -artifact_prefix="$OUT/artifacts/$t/")
  [ "$RUNS" != 0 ] && args+=(-runs="$RUNS")
  local cmd=("$OUT/fuzz/fuzz_$t")
  [ "$kind" = py ] && cmd=("$PY" fuzz/py/run.py "$t")
  if [ "$FORK" -le 1 ]; then
    "${cmd[@]}" "${args[@]}" "$OUT/corpus/$t" "fixtures/fuzz/$(seeds "$t")" > "$log" 2>&1
  else
    # FORK whole fuzzer processes over one corpus (each reloads what the others add), the executions
    # split between them and summed into the target's log. Not libFuzzer's -fork mode: its short jobs
    # reload the whole corpus each time and ran kokoro_text 4-6x slower per core than this.
    local w pids=() ok=0 total=0 n
    [ "$RUNS" != 0 ] && args=("${args[@]/#-runs=*/-runs=$(( (RUNS + FORK - 1) / FORK ))}")
    for ((w = 0; w < FORK; w++)); do
      "${cmd[@]}" "${args[@]}" -reload=1 "$OUT/corpus/$t" "fixtures/fuzz/$(seeds "$t")" \
        > "$log.$w" 2>&1 &
      pids+=($!)
    done
    for w in "${pids[@]}"; do wait "$w" || ok=1; done
    local rate=0 r
    for ((w = 0; w < FORK; w++)); do
      n=$(grep -a 'stat::number_of_executed_units:' "$log.$w" | tail -1 | awk '{print $2}' || true)
      r=$(grep -a 'stat::average_exec_per_sec:' "$log.$w" | tail -1 | awk '{print $2}' || true)
      total=$(( total + ${n:-0} )) rate=$(( rate + ${r:-0} ))
    done
    { for ((w = 0; w < FORK; w++)); do echo "---- worker $w"; cat "$log.$w"; done
      echo "stat::number_of_executed_units: $total (the sum of $FORK workers)"
      echo "stat::average_exec_per_sec: $rate (the sum of $FORK workers)"; } > "$log"
    rm -f "$log".[0-9]*
    return $ok
  fi
}

list=()
for k in $KINDS; do
  if [ "$k" = c ]; then ts=$C_TARGETS; else ts=$PY_TARGETS; fi
  for t in $ts; do wanted "$t" && list+=("$k:$t"); done
done
[ ${#list[@]} -gt 0 ] || { echo "fuzz.sh: no target selected" >&2; exit 2; }

echo "== fuzzing ${#list[@]} targets, ${SECONDS_PER} s each$( [ "$RUNS" != 0 ] && echo " or $RUNS runs"), $JOBS at a time"
# JOBS lanes, each running its share of the targets one after the other; a status file per target
rm -f "$OUT"/logs/*.status
for ((lane = 0; lane < JOBS; lane++)); do
  (
    for ((i = lane; i < ${#list[@]}; i += JOBS)); do
      item=${list[$i]}
      if run_one "${item%%:*}" "${item#*:}"; then echo ok; else echo FAILED; fi > "$OUT/logs/${item#*:}.status"
    done
  ) &
done
wait
declare -A status_of
fail=0
for item in "${list[@]}"; do
  status_of[$item]=$(cat "$OUT/logs/${item#*:}.status" 2>/dev/null || echo FAILED)
  [ "${status_of[$item]}" = ok ] || fail=1
done

# a line per target from libFuzzer's final stats and its last status line
printf "%-16s %-7s %12s %8s %8s %8s %9s\n" target result executions exec/s cov features corpus
for item in "${list[@]}"; do
  t=${item#*:}
  log=$OUT/logs/$t.log
  runs=$(grep -a 'stat::number_of_executed_units:' "$log" | tail -1 | awk '{print $2}' || true)
  [ -n "$runs" ] || runs=$(grep -a -E '^#[0-9]+' "$log" | tail -1 | sed -n 's/^#\([0-9]*\).*/\1/p' || true)  # fork mode
  rate=$(grep -a 'stat::average_exec_per_sec:' "$log" | tail -1 | awk '{print $2}' || true)
  last=$(grep -a -E '^#[0-9]+.*(cov|ft):' "$log" | tail -1 || true)
  cov=$(sed -n 's/.*cov: \([0-9]*\).*/\1/p' <<< "$last")
  ft=$(sed -n 's/.*ft: \([0-9]*\).*/\1/p' <<< "$last")
  corp=$(sed -n 's/.*corp: \([0-9]*\).*/\1/p' <<< "$last")
  printf "%-16s %-7s %12s %8s %8s %8s %9s\n" "$t" "${status_of[$item]}" "${runs:--}" "${rate:--}" "${cov:--}" \
    "${ft:--}" "${corp:--}"
done | tee "$OUT/summary.txt"
if [ "$fail" != 0 ]; then
  for item in "${list[@]}"; do
    [ "${status_of[$item]}" = ok ] && continue
    echo "---- ${item#*:} ($OUT/logs/${item#*:}.log; inputs in $OUT/artifacts/${item#*:}/)"
    grep -a -E "ERROR|SUMMARY|Traceback|Error|invariant|==[0-9]+==" "$OUT/logs/${item#*:}.log" | head -20 || true
  done
  exit 1
fi
