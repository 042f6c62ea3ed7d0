#!/usr/bin/env bash
# Builds the libFuzzer targets (Clang, ASan + UBSan), seeds each corpus from the repository's data
# files and runs every target for a fixed budget. Exit status 1 if any target found a crash, a
# leak, an uncaught exception (the CLI's "internal error"), an out-of-memory or a timeout; the
# input that did it is left in $FUZZ_BUILD/artifacts/<target>/ and its stack is printed.
#
#   fuzz/run.sh [seconds per target] [target ...]     (default: 25 s each, every target)
#
# Environment: FUZZ_BUILD (build directory, default build-fuzz), FUZZ_JOBS (build jobs).
# The corpora in $FUZZ_BUILD/corpus/ are kept between runs, so a long run's findings seed the next;
# fuzz/regressions/<target>/ holds inputs that once failed, and seeds every run.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${1:-25}"
shift || true
build="${FUZZ_BUILD:-build-fuzz}"
jobs="${FUZZ_JOBS:-$(nproc)}"
all=(fuzz_cluster fuzz_catalog fuzz_workload fuzz_validation_paths fuzz_validation_collectives fuzz_probe_profile
     fuzz_nccl_params fuzz_nvbandwidth fuzz_serving_trace fuzz_plan_file fuzz_job_trace fuzz_import_sacct fuzz_import_k8s
     fuzz_service fuzz_nccl_topo fuzz_topo_matrix)
targets=("$@")
[ ${#targets[@]} -eq 0 ] && targets=("${all[@]}")

if [ ! -f "$build/build.ninja" ]; then
  cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_COMPILER=clang++ \
        -DGPUFABRIC_FUZZ=ON -DGPUFABRIC_BUILD_TESTS=OFF -DGPUFABRIC_BUILD_BENCH=OFF \
        -DGPUFABRIC_WITH_CUDA=OFF -DGPUFABRIC_WITH_MPI=OFF
fi
cmake --build "$build" -j "$jobs" --target "${targets[@]}"

# Each validation suite also gives one small seed per row (its header plus that row), so the
# fuzzer starts from inputs that reach the prediction, not only from whole files.
split_rows() {  # file outdir prefix
  awk -v out="$2" -v prefix="$3" '
    /^  - id:/ { n++; if (n > 40) exit; file = sprintf("%s/%s-%03d.yaml", out, prefix, n); print "rows:" > file }
    n > 0 && file != "" { print >> file }
  ' "$1"
}

seed() {  # target corpus-dir
  local t="$1" dir="$2"
  mkdir -p "$dir"
  case "$t" in
    fuzz_cluster) cp data/presets/*.yaml data/validation/clusters/*.yaml tests/data/*.yaml "$dir"/ ;;
    fuzz_catalog) cp data/catalog/*.yaml "$dir"/
                  for d in tests/data/catalog_*; do for f in "$d"/*.yaml; do cp "$f" "$dir/$(basename "$d")-$(basename "$f")"; done; done ;;
    fuzz_workload) cp data/workloads/*.yaml "$dir"/ ;;
    fuzz_validation_paths) cp data/validation/topo_paths.yaml "$dir"/
                           split_rows data/validation/topo_paths.yaml "$dir" paths ;;
    fuzz_validation_collectives) for f in data/validation/collectives*.yaml; do
                                   cp "$f" "$dir"/; split_rows "$f" "$dir" "$(basename "$f" .yaml)"; done ;;
    fuzz_probe_profile) cp fuzz/seeds/probe_profile/*.json "$dir"/ ;;
    fuzz_nccl_params) cp data/comm/*.yaml "$dir"/ ;;
    fuzz_nvbandwidth) cp tests/data/nvbandwidth/*.txt "$dir"/ ;;
    fuzz_serving_trace) cp fuzz/seeds/serving_trace/*.csv "$dir"/ ;;
    fuzz_plan_file) cp data/plans/*.yaml data/prices/*.yaml tests/data/plan_*.yaml "$dir"/ ;;
    fuzz_job_trace) cp fuzz/seeds/job_trace/*.csv "$dir"/ ;;
    fuzz_import_sacct) cp tests/data/import/jobs/sacct_*.txt "$dir"/ ;;
    fuzz_import_k8s) cp tests/data/import/jobs/k8s_*.json "$dir"/ ;;
    fuzz_service) cp data/services/*.yaml data/services/*.csv "$dir"/ ;;
    fuzz_nccl_topo) cp tests/data/import/*.xml "$dir"/ ;;
    fuzz_topo_matrix) cp tests/data/import/*.topo-m.txt "$dir"/ ;;
  esac
  # Inputs that once failed (fixed since), so every run checks them again.
  if [ -d "fuzz/regressions/$t" ]; then cp fuzz/regressions/"$t"/* "$dir"/; fi
}

export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:allocator_may_return_null=0}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"
failed=()
summary=""
for t in "${targets[@]}"; do
  corpus="$build/corpus/$t"
  artifacts="$build/artifacts/$t"
  seed "$t" "$corpus"
  rm -rf "$artifacts"
  mkdir -p "$artifacts"
  dict=()
  case "$t" in
    fuzz_probe_profile | fuzz_import_k8s) dict=(-dict=fuzz/json.dict) ;;
    fuzz_nccl_topo) dict=(-dict=fuzz/nccl_topo.dict) ;;
    fuzz_topo_matrix) dict=(-dict=fuzz/topo_matrix.dict) ;;
    *) dict=(-dict=fuzz/yaml.dict) ;;
  esac
  log="$build/$t.log"
  echo "fuzz: $t for ${seconds}s"
  if "$build/fuzz/$t" "$corpus" "${dict[@]}" -max_total_time="$seconds" -timeout=20 -rss_limit_mb=2048 \
       -malloc_limit_mb=1024 -max_len=16384 -print_final_stats=1 -artifact_prefix="$artifacts/" >"$log" 2>&1; then
    :
  else
    failed+=("$t")
    tail -n 60 "$log"
  fi
  runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
  summary+="$(printf '  %-30s %12s runs%s' "$t" "${runs:-?}" "$([[ " ${failed[*]} " == *" $t "* ]] && echo '  FAILED' || true)")"$'\n'
done
echo "fuzz: executions per target (${seconds}s each)"
printf '%s' "$summary"
if [ ${#failed[@]} -gt 0 ]; then
  echo "fuzz: FAILED: ${failed[*]} (inputs in $build/artifacts/)" >&2
  exit 1
fi
