#!/usr/bin/env bash
# Runs each libFuzzer target of tests/fuzz for a bounded time over its seed
# corpus (tests/fuzz/corpus/<reader>/). New inputs go to build/fuzz/corpus/,
# findings (crashing, leaking or slow inputs) to build/fuzz/findings/; the
# run fails when any target found one. Turn each finding into a regression
# by copying it to tests/fuzz/regressions/<reader>/ (test_fuzz_corpus.cpp
# replays them in every `make test`) and fixing the reader.
#   tools/fuzz.sh [SECONDS_PER_TARGET] [READER...]     (default: 60 s, every reader)
set -euo pipefail

seconds="${1:-60}"
shift || true
build=build/fuzz
readers=("$@")
if [ ${#readers[@]} -eq 0 ]; then readers=(safetensors checkpoint train_config idx csv graph_archive); fi

failed=()
for reader in "${readers[@]}"; do
  target="$build/tests/fuzz/fuzz_$reader"
  [ -x "$target" ] || { echo "fuzz: no target $target (run make fuzz)" >&2; exit 2; }
  mkdir -p "$build/corpus/$reader" "$build/findings"
  echo "fuzz: $reader for ${seconds} s"
  if ! "$target" "$build/corpus/$reader" "tests/fuzz/corpus/$reader" \
      -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -malloc_limit_mb=2048 -max_len=65536 \
      -print_final_stats=1 -artifact_prefix="$build/findings/$reader-" > "$build/findings/$reader.log" 2>&1; then
    failed+=("$reader")
    tail -n 40 "$build/findings/$reader.log" >&2
  fi
  grep -E "stat::number_of_executed_units|stat::peak_rss_mb" "$build/findings/$reader.log" | sed "s/^/  /" || true
done
if [ ${#failed[@]} -ne 0 ]; then
  echo "fuzz: findings in ${failed[*]} (see $build/findings/)" >&2
  exit 1
fi
echo "fuzz: no findings"
