#!/usr/bin/env bash
# Runs each libFuzzer target for a bounded time from its seed corpus (Fuzz/corpus/<target>/), writing new
# corpus entries to Fuzz/work/corpus/<target>/ and crashes, leaks and timeouts to Fuzz/work/artifacts/<target>/,
# and prints per target: executions, exec/s, new coverage (edges and features beyond what the seed and working
# corpora reached at the start), findings.
# Usage: Fuzz/run.sh BIN_DIR SECONDS TARGET...   (`make fuzz` builds the targets and calls it)
set -uo pipefail
bin=$1; seconds=$2; shift 2
here=$(cd "$(dirname "$0")" && pwd)
work=$here/work
mkdir -p "$work/logs"
# libFuzzer and AddressSanitizer report crashes; Swift's own backtracer would only hold the process up.
export SWIFT_BACKTRACE=enable=no
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0:symbolize=1}
rows=()
status=0
for target in "$@"; do
    exe=$bin/fuzz-$target
    [ -x "$exe" ] || { echo "fuzz: no target fuzz-$target in $bin" >&2; exit 2; }
    mkdir -p "$work/corpus/$target" "$work/artifacts/$target"
    before=$(find "$work/artifacts/$target" -type f | wc -l)
    log=$work/logs/$target.log
    echo "== fuzz-$target: ${seconds}s (log: ${log#$here/../})"
    "$exe" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -max_len=16384 -print_final_stats=1 \
        -artifact_prefix="$work/artifacts/$target/" "$work/corpus/$target" "$here/corpus/$target" > "$log" 2>&1
    rc=$?
    inited=$(grep -m1 -E '^#[0-9]+[[:space:]]+INITED' "$log")
    last=$(grep -E '^#[0-9]+[[:space:]]+(DONE|NEW|REDUCE|pulse|INITED)' "$log" | tail -1)
    field() { sed -nE "s/.* $1: ([0-9]+).*/\1/p" <<<"$2"; }
    execs=$(sed -nE 's/^stat::number_of_executed_units: *([0-9]+).*/\1/p' "$log")
    speed=$(sed -nE 's/^stat::average_exec_per_sec: *([0-9]+).*/\1/p' "$log")
    [ -n "$execs" ] || execs=$(sed -nE 's/^#([0-9]+).*/\1/p' <<<"$last")
    cov0=$(field cov "$inited"); cov1=$(field cov "$last"); ft0=$(field ft "$inited"); ft1=$(field ft "$last")
    new_cov=$(( ${cov1:-0} - ${cov0:-0} )); new_ft=$(( ${ft1:-0} - ${ft0:-0} ))
    found=$(( $(find "$work/artifacts/$target" -type f | wc -l) - before ))
    kind=""
    if [ "$rc" -ne 0 ] || [ "$found" -gt 0 ]; then
        status=1
        kind=$(grep -m1 -oE 'ERROR: (libFuzzer|AddressSanitizer|LeakSanitizer): [a-z-]+( [a-z-]+)?|fuzz property broken.*|Fatal error.*' "$log" | head -1 | cut -c1-160)
        newest=$(ls -t "$work/artifacts/$target" 2>/dev/null | head -1)
        echo "   FOUND: ${kind:-exit $rc} -> ${newest:+Fuzz/work/artifacts/$target/$newest}"
    fi
    echo "   executions ${execs:-?}, ${speed:-?} exec/s, new coverage +$new_cov edges (+$new_ft features, ${cov1:-?} edges in all), findings $found"
    rows+=("$(printf '%-12s %12s %9s %10s %10s %8s  %s' "$target" "${execs:-?}" "${speed:-?}" "+$new_cov" "+$new_ft" "$found" "${kind}")")
done
echo
echo "fuzz summary (${seconds}s per target; logs and findings in Fuzz/work/)"
printf '%-12s %12s %9s %10s %10s %8s  %s\n' target executions exec/s new-edges new-feats findings kind
for row in "${rows[@]}"; do echo "$row"; done
exit $status
