#!/usr/bin/env bash
# make bench: gifpack against the fetch-only floor and against the curl/xargs script a user would
# write, on one fixture server process; then no-change rebuilds, packing alone and memory at scale.
# Prints a table and writes bench/results.json. See README.md, "Benchmarks".
#
#   bench/run.sh [--bin DIR] [--count N] [--latency-ms MS] [--real-data DIR] [--scale "1000 20000 100000"]
#                [--scale-distinct-gifs N] [--realistic-scale-gifs] [--quick] [--keep] [--upgrade-only]
#                [--upgrade-percents "0.1 1 10"] [--publish-only] [--no-publish] [--posters-only] [--no-posters]
#                [--floor-runs N] [--pack-runs N] [--install-only] [--no-install] [--install-runs N]
#                [--renditions-only] [--no-renditions] [--renditions-runs N]
#                [--loader-memory-only] [--no-loader-memory] [--webp-only] [--no-webp] [--webp-runs N]
#                [--install-counts "124 690 1480"]
#                [--parts "build scale scale-real upgrades publish posters install renditions loader-memory webp"]
#                [--passes "quiet neighbour"] [--sizes-from DIR]
#
# Environment equivalents: BENCH_COUNT, BENCH_LATENCY_MS, BENCH_REAL_DATA, BENCH_SCALE,
# BENCH_SCALE_DISTINCT_GIFS, BENCH_REALISTIC_SCALE_GIFS=1, BENCH_QUICK=1 (200 GIFs, scale 1000 only),
# BENCH_KEEP=1 (keep bench/work), BENCH_UPGRADE_ONLY=1 (section 6 alone: upgrades served by nginx),
# BENCH_UPGRADE_PERCENTS ("none": skip it), BENCH_PUBLISH_ONLY=1 (section 7 alone: gifpack publish to a
# directory and to moto's S3), BENCH_PUBLISH=0 (skip it), BENCH_POSTERS_ONLY=1 (section 8 alone:
# placeholders and posters), BENCH_POSTERS=0 (skip it), BENCH_FLOOR_RUNS, BENCH_PACK_RUNS,
# BENCH_INSTALL_ONLY=1 (section 9 alone: install speed against the stock pipeline), BENCH_INSTALL=0
# (skip it), BENCH_INSTALL_RUNS (pairs per row, default 9), BENCH_RENDITIONS_ONLY=1 (section 10 alone:
# a two-resolution build against two one-resolution builds), BENCH_RENDITIONS=0 (skip it),
# BENCH_RENDITIONS_RUNS (rounds, default 3), BENCH_LOADER_MEMORY_ONLY=1 (section 11 alone: the app
# loader's memory loading 500 GIFs by range against plain URLSession), BENCH_LOADER_MEMORY=0 (skip it),
# BENCH_LOADER_MEMORY_GIFS (default 500), BENCH_LOADER_MEMORY_BEFORE (an older build of the tool, measured too),
# BENCH_WEBP_ONLY=1 (section 12 alone: WebP renditions on the real sample), BENCH_WEBP=0 (skip it),
# BENCH_WEBP_RUNS (rounds, default 5).
# BENCH_INSTALL_COUNTS (section 9's catalogs: exercises of the realistic fixture, default "124 690 1480",
# packs of about 10, 56 and 120 MB). BENCH_PARTS (the parts to run, by name, overriding the flags above:
# build = 1-4, scale = 5, scale-real = 5 at 100,000 exercises with GIFs of the real sample's sizes,
# upgrades = 6, publish = 7, posters = 8, install = 9, renditions = 10, loader-memory = 11, webp = 12).
# BENCH_PASSES (default "quiet"; "quiet neighbour": the whole run again beside a CPU-bound neighbour,
# a busy loop pinned to core 0 that the script starts and kills; its results go to
# bench/results-neighbour.json). BENCH_RESULTS (default "results": the name of the results files, so a
# run of some parts, e.g. BENCH_RESULTS=results-webp, keeps bench/results.json, the last full run's, as it
# is). BENCH_SIZES_FROM (the real sample whose GIF sizes scale-real draws:
# default ../shared/realdata/exercisedb-sample beside the main checkout; only the sizes are read).
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
quick=${BENCH_QUICK:-0}
count=${BENCH_COUNT:-}
latency=${BENCH_LATENCY_MS:-20}
real_data=${BENCH_REAL_DATA:-}
scale=${BENCH_SCALE:-}
floor_runs=${BENCH_FLOOR_RUNS:-5}
pack_runs=${BENCH_PACK_RUNS:-5}
realistic_scale=${BENCH_REALISTIC_SCALE_GIFS:-0}
scale_distinct=${BENCH_SCALE_DISTINCT_GIFS:-1000}
keep=${BENCH_KEEP:-0}
bin=${BENCH_BIN:-}
upgrade_only=${BENCH_UPGRADE_ONLY:-0}
upgrade_percents=${BENCH_UPGRADE_PERCENTS:-0.1 1 10}
posters_only=${BENCH_POSTERS_ONLY:-0}
posters=${BENCH_POSTERS:-1}
publish_only=${BENCH_PUBLISH_ONLY:-0}
publish_bench=${BENCH_PUBLISH:-1}
install_only=${BENCH_INSTALL_ONLY:-0}
install_bench=${BENCH_INSTALL:-1}
install_runs=${BENCH_INSTALL_RUNS:-9}
renditions_only=${BENCH_RENDITIONS_ONLY:-0}
renditions_bench=${BENCH_RENDITIONS:-1}
renditions_runs=${BENCH_RENDITIONS_RUNS:-3}
loader_memory_only=${BENCH_LOADER_MEMORY_ONLY:-0}
loader_memory_bench=${BENCH_LOADER_MEMORY:-1}
install_counts=${BENCH_INSTALL_COUNTS:-}
parts=${BENCH_PARTS:-}
passes=${BENCH_PASSES:-quiet}
pass=${BENCH_PASS:-}
results_name=${BENCH_RESULTS:-results}
case $results_name in *[!A-Za-z0-9_-]*|"") echo "bench/run.sh: BENCH_RESULTS=$results_name: letters, digits, - and _ only" >&2; exit 2 ;; esac
sizes_from=${BENCH_SIZES_FROM:-}
all_args=("$@")
webp_only=${BENCH_WEBP_ONLY:-0}
webp_bench=${BENCH_WEBP:-1}
webp_runs=${BENCH_WEBP_RUNS:-5}

while [ $# -gt 0 ]; do
  case $1 in
    --bin) bin=$2; shift 2 ;;
    --count) count=$2; shift 2 ;;
    --latency-ms) latency=$2; shift 2 ;;
    --real-data) real_data=$2; shift 2 ;;
    --scale) scale=$2; shift 2 ;;
    --scale-distinct-gifs) scale_distinct=$2; shift 2 ;;
    --realistic-scale-gifs) realistic_scale=1; shift ;;
    --small-scale-gifs) realistic_scale=0; shift ;; # the default; kept for older command lines
    --quick) quick=1; shift ;;
    --keep) keep=1; shift ;;
    --upgrade-only) upgrade_only=1; shift ;;
    --upgrade-percents) upgrade_percents=$2; shift 2 ;;
    --posters-only) posters_only=1; shift ;;
    --no-posters) posters=0; shift ;;
    --publish-only) publish_only=1; shift ;;
    --floor-runs) floor_runs=$2; shift 2 ;;
    --pack-runs) pack_runs=$2; shift 2 ;;
    --no-publish) publish_bench=0; shift ;;
    --install-only) install_only=1; shift ;;
    --no-install) install_bench=0; shift ;;
    --install-runs) install_runs=$2; shift 2 ;;
    --renditions-only) renditions_only=1; shift ;;
    --no-renditions) renditions_bench=0; shift ;;
    --renditions-runs) renditions_runs=$2; shift 2 ;;
    --loader-memory-only) loader_memory_only=1; shift ;;
    --no-loader-memory) loader_memory_bench=0; shift ;;
    --install-counts) install_counts=$2; shift 2 ;;
    --parts) parts=$2; shift 2 ;;
    --passes) passes=$2; shift 2 ;;
    --sizes-from) sizes_from=$2; shift 2 ;;
    --webp-only) webp_only=1; shift ;;
    --no-webp) webp_bench=0; shift ;;
    --webp-runs) webp_runs=$2; shift 2 ;;
    -h|--help) sed -n '2,37p' "$0"; exit 0 ;;
    *) echo "bench/run.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
# Each pass is a whole run of this script: the quiet one writes bench/results.json, the one beside a
# CPU-bound neighbour bench/results-neighbour.json.
if [ -z "$pass" ]; then
  for p in $passes; do
    case $p in quiet|neighbour) ;; *) echo "bench/run.sh: unknown pass $p (quiet, neighbour)" >&2; exit 2 ;; esac
  done
  settle=0
  for p in $passes; do
    BENCH_PASS=$p BENCH_SETTLE=$settle "$0" "${all_args[@]}"
    settle=1
  done
  exit 0
fi
if [ "$quick" = 1 ]; then
  count=${count:-200}
  scale=${scale:-1000}
  install_counts=${install_counts:-124}
fi
install_counts=${install_counts:-124 690 1480}
count=${count:-1324}
scale=${scale:-1000 20000 100000}
[ "$scale" != none ] || scale=""
[ "$upgrade_percents" != none ] || upgrade_percents=""
if [ "$posters_only" = 1 ]; then
  [ "$upgrade_only" != 1 ] && [ "$publish_only" != 1 ] \
    || { echo "bench/run.sh: --posters-only excludes --upgrade-only and --publish-only" >&2; exit 2; }
  upgrade_only=1; upgrade_percents=""; publish_bench=0; posters=1
elif [ "$upgrade_only" = 1 ] || [ "$publish_only" = 1 ]; then
  posters=0
fi
if [ "$publish_only" = 1 ]; then upgrade_only=1; upgrade_percents=""; publish_bench=1; fi
if [ "$install_only" = 1 ]; then
  [ "$upgrade_only" != 1 ] || { echo "bench/run.sh: --install-only excludes the other --*-only modes" >&2; exit 2; }
  upgrade_only=1; upgrade_percents=""; publish_bench=0; posters=0; install_bench=1
elif [ "$upgrade_only" = 1 ]; then
  install_bench=0
fi
if [ "$renditions_only" = 1 ]; then
  [ "$upgrade_only" != 1 ] || { echo "bench/run.sh: --renditions-only excludes the other --*-only modes" >&2; exit 2; }
  upgrade_only=1; upgrade_percents=""; publish_bench=0; posters=0; install_bench=0; renditions_bench=1
elif [ "$upgrade_only" = 1 ]; then
  renditions_bench=0
fi
if [ "$loader_memory_only" = 1 ]; then
  [ "$upgrade_only" != 1 ] || { echo "bench/run.sh: --loader-memory-only excludes the other --*-only modes" >&2; exit 2; }
  upgrade_only=1; upgrade_percents=""; publish_bench=0; posters=0; install_bench=0; renditions_bench=0; loader_memory_bench=1
elif [ "$upgrade_only" = 1 ]; then
  loader_memory_bench=0
fi
if [ "$webp_only" = 1 ]; then
  [ "$upgrade_only" != 1 ] || { echo "bench/run.sh: --webp-only excludes the other --*-only modes" >&2; exit 2; }
  upgrade_only=1; upgrade_percents=""; publish_bench=0; posters=0; install_bench=0; renditions_bench=0; loader_memory_bench=0
  webp_bench=1
elif [ "$upgrade_only" = 1 ]; then
  webp_bench=0
fi
# Parts 1-4 and 5 run unless an --*-only mode is chosen.
build_bench=1; scale_bench=1; scale_real=0
if [ "$upgrade_only" = 1 ] || [ "$posters_only" = 1 ]; then build_bench=0; scale_bench=0; fi
if [ -n "$parts" ]; then
  for p in $parts; do
    case $p in build|scale|scale-real|upgrades|publish|posters|install|renditions|loader-memory|webp) ;;
      *) echo "bench/run.sh: unknown part $p" >&2; exit 2 ;;
    esac
  done
  has() { [[ " $parts " == *" $1 "* ]]; }
  build_bench=0; scale_bench=0; publish_bench=0; posters=0; install_bench=0; renditions_bench=0; loader_memory_bench=0; webp_bench=0
  has build && build_bench=1
  has scale && scale_bench=1
  has scale-real && scale_real=1
  has upgrades || upgrade_percents=""
  has publish && publish_bench=1
  has posters && posters=1
  has install && install_bench=1
  has renditions && renditions_bench=1
  has loader-memory && loader_memory_bench=1
  has webp && webp_bench=1
  # Sections 6-8 run inside the "upgrade" block; 1-4 and 5 are chosen by the flags above.
  upgrade_only=1
fi
if [ "$scale_real" = 1 ]; then
  sizes_from=${sizes_from:-$(cd "$root" && git worktree list --porcelain 2> /dev/null | awk 'NR == 1 {print $2}')/../shared/realdata/exercisedb-sample}
  [ -d "$sizes_from/gifs" ] || { echo "bench/run.sh: scale-real needs the real sample's GIFs at $sizes_from/gifs (--sizes-from DIR)" >&2; exit 2; }
fi
moto=$root/.venv-test/bin/moto_server
if [ "$publish_bench" = 1 ] && [ ! -x "$moto" ]; then
  echo "bench/run.sh: $moto is missing: run \`make test-venv\` (make bench does)" >&2; exit 2
fi
bin=${bin:-$(cd "$root" && swift build -c release --static-swift-stdlib --show-bin-path)}
if [ -n "$real_data" ] && [ ! -d "$real_data" ]; then
  echo "bench/run.sh: --real-data $real_data is not a directory" >&2; exit 2
fi
for tool in curl jq tar zstd python3 /usr/bin/time /usr/sbin/nginx "$bin/gifpack" "$bin/exercisedb-fixture"; do
  command -v "$tool" > /dev/null || { echo "bench/run.sh: $tool not found" >&2; exit 2; }
done

work=$root/bench/work
rm -rf "$work"; mkdir -p "$work/bin"
# After a pass before this one, whose files were just deleted: their inodes are reused 30 s later
# (see discard below), not while this pass's first runs are timed.
[ "${BENCH_SETTLE:-0}" != 1 ] || sleep 31
# The build directory is shared: copy the binaries so one run measures one build.
cp "$bin/gifpack" "$bin/exercisedb-fixture" "$work/bin/"
install_kinds="library http local"
if [ "$install_bench" = 1 ]; then
  if [ -x "$bin/gifpack-install-bench" ]; then
    cp "$bin/gifpack-install-bench" "$work/bin/"
  else
    echo "bench/run.sh: $bin/gifpack-install-bench not found (swift build -c release): no library row in part 9" >&2
    install_kinds="http local"
  fi
fi
if [ "$loader_memory_bench" = 1 ]; then
  if [ -x "$bin/gifpack-loader-memory-bench" ]; then
    cp "$bin/gifpack-loader-memory-bench" "$work/bin/"
  else
    echo "bench/run.sh: $bin/gifpack-loader-memory-bench not found (swift build -c release): no part 11" >&2
    loader_memory_bench=0
  fi
fi
bin=$work/bin
revision=$(git -C "$root" rev-parse --short HEAD 2> /dev/null || echo unknown)
[ -z "$(git -C "$root" status --porcelain --untracked-files=no -- Sources Package.swift 2> /dev/null)" ] || revision="$revision+uncommitted"
facts=$work/facts.jsonl
: > "$facts"
key=bench-key
export BENCH_EXERCISEDB_KEY=$key SOURCE_DATE_EPOCH=1700000000
fixture_pid=""

stop_fixture() {
  if [ -n "$fixture_pid" ]; then kill "$fixture_pid" 2> /dev/null || true; wait "$fixture_pid" 2> /dev/null || true; fi
  fixture_pid=""
}
moto_pid=""
stop_moto() {
  if [ -n "$moto_pid" ]; then kill -9 "$moto_pid" 2> /dev/null || true; wait "$moto_pid" 2> /dev/null || true; fi
  moto_pid=""
}
nginx_pid=""
stop_nginx() {
  if [ -n "$nginx_pid" ]; then kill "$nginx_pid" 2> /dev/null || true; wait "$nginx_pid" 2> /dev/null || true; fi
  nginx_pid=""
}
neighbour_pid=""
stop_neighbour() {
  if [ -n "$neighbour_pid" ]; then kill "$neighbour_pid" 2> /dev/null || true; wait "$neighbour_pid" 2> /dev/null || true; fi
  neighbour_pid=""
}
finish() {
  stop_neighbour
  stop_fixture
  stop_nginx
  stop_moto
  [ "$keep" = 1 ] || rm -rf "$work/runs" "$work/bin"
  rm -rf "$trash"
}
trap finish EXIT

# discard PATH...: moves what one timed run made out of the next one's way instead of deleting it
# (the trash is emptied when the run ends). On a filesystem without a journal, as this machine's
# ext4 is, ext4 does not reuse an inode freed in the last 30 s (vm.dirty_expire_centisecs) and walks
# past every such inode each time it allocates one: right after `rm -rf` of a fresh build's 8,000
# files the next build spent about a third of its CPU in that walk (perf: recently_deleted,
# find_inode_bit under openat and mkdir), and a floor run after it paid the same for its 1,324 files,
# so the pairs measured the deletion before them more than the programs. A rename frees no inode.
trash=$work/trash
discard() {
  mkdir -p "$trash"
  local p
  for p in "$@"; do [ ! -e "$p" ] || mv "$p" "$(mktemp -d "$trash/XXXXXX")/"; done
}

log() { printf '%s  %s\n' "$(date +%T)" "$*" >&2; }

# fact NAME JSON: one measured value, read by bench/summarize.py.
fact() { jq -nc --arg k "$1" --argjson v "$2" '{key: $k, value: $v}' >> "$facts"; }

# measure NAME COMMAND...: wall (nanosecond clock), user, sys, peak RSS (of the largest process), bytes
# written to the file system (%O, 512-byte blocks) and exit status of COMMAND, recorded as fact NAME. Output goes to runs/NAME.out and .err.
# Dirty pages of the previous step are written back first (sync), so no step pays for another's.
# Also recorded: the CPU time the hypervisor took from this virtual machine while COMMAND ran (steal,
# all cores, /proc/stat; 0 on bare metal), which tells a run the host disturbed from one that was slow.
measure() {
  local name=$1; shift
  local out=$work/runs/$name
  local t0 t1 rc user sys rss blocks steal0 steal1
  sync
  steal0=$(steal_ticks)
  t0=$(date +%s%N)
  set +e
  /usr/bin/time -f '%U %S %M %O' -o "$out.time" "$@" > "$out.out" 2> "$out.err"
  rc=$?
  set -e
  t1=$(date +%s%N)
  steal1=$(steal_ticks)
  read -r user sys rss blocks < <(tail -n 1 "$out.time")
  fact "$name" "{\"wall\": $(( (t1 - t0) / 1000 ))e-6, \"user\": $user, \"sys\": $sys, \"rss_kb\": $rss, \"written_bytes\": $(( blocks * 512 )), \"steal_s\": $(( steal1 - steal0 ))e-2, \"status\": $rc}"
  return 0
}

# steal_ticks: the steal column of /proc/stat's "cpu" line, in USER_HZ ticks (1/100 s).
steal_ticks() { awk '$1 == "cpu" { print $9 + 0; exit }' /proc/stat 2> /dev/null || echo 0; }

# start_fixture ARGS...: starts the fixture server, waits for its port; sets $port and $base.
start_fixture() {
  local portfile=$work/runs/fixture.port
  rm -f "$portfile"
  "$bin/exercisedb-fixture" --port 0 --api-key "$key" --port-file "$portfile" "$@" > "$work/runs/fixture.log" 2>&1 &
  fixture_pid=$!
  local waited=0
  until [ -s "$portfile" ]; do
    kill -0 "$fixture_pid" 2> /dev/null || { cat "$work/runs/fixture.log" >&2; echo "bench/run.sh: fixture server died" >&2; exit 1; }
    sleep 0.1; waited=$((waited + 1))
    [ $waited -lt 6000 ] || { echo "bench/run.sh: fixture server did not start in 10 minutes" >&2; exit 1; }
  done
  port=$(cat "$portfile")
  base=http://127.0.0.1:$port
}

reset_stats() { curl -fsS -X POST "$base/__reset" > /dev/null; }
# record_stats NAME: the server's counters since the last reset, as fact NAME.
record_stats() { fact "$1" "$(curl -fsS "$base/__stats" | jq -c 'del(.requestsByExercise)')"; }

# manifest PATH REFRESH_AFTER [POSTERS]: manifests/demo.yaml pointed at the fixture, one pack "all", pages
# of 100, catalog bounds raised for the 100,000-exercise scale row; POSTERS, e.g. "[80, 200]" or "[]",
# sets output.posters (default: the builder's, [80]).
manifest() {
  cat > "$1" <<EOF
# Generated by bench/run.sh from manifests/demo.yaml: the fixture server on port $port, one pack.
version: 1
source:
  kind: exercisedb-rapidapi
  base_url: $base
  api_key_env: BENCH_EXERCISEDB_KEY
  resolution: 180
  page_size: 100
fetch:
  concurrency: 3
  max_gif_bytes: 2MB
  max_missing: 1%
  refresh_after: $2
  max_catalog_records: 1000000
  max_catalog_bytes: 1GB
output:
  directory: dist
  zstd_level: 9
cache:
  directory: .gifpack-cache
EOF
  if [ -n "${3:-}" ]; then
    sed -i "s/^  zstd_level: 9\$/  zstd_level: 9\n  posters: $3/" "$1"
  fi
}

gifpack_build() { # NAME MANIFEST OUT CACHE
  mkdir -p "$(dirname "$3")" # gifpack build creates only the last component of --out
  measure "$1" "$bin/gifpack" build --quiet --manifest "$2" --out "$3" --cache "$4"
  if [ -f "$3/report.json" ]; then
    cp "$3/report.json" "$work/runs/$1.report.json"
    fact "$1.report" "$(jq -c '{exitStatus, message, stageSeconds, gifs: (.gifs | del(.rejectedByReason)), http, packs: [.packs[] | del(.file)]}' "$3/report.json")"
  else
    fact "$1.report" null
  fi
}

runs=$work/runs
mkdir -p "$runs"
fact machine "$(jq -nc --arg cpu "$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')" \
  --argjson nproc "$(nproc)" --argjson mem_kb "$(awk '/MemTotal/ {print $2}' /proc/meminfo)" \
  --arg load "$(cut -d' ' -f1-3 /proc/loadavg)" --arg kernel "$(uname -r)" \
  --arg swift "$(swift --version 2>&1 | head -n 1)" --arg curl "$(curl --version | head -n 1 | cut -d' ' -f1-2)" \
  --arg zstd "$(zstd --version)" --arg date "$(date -u +%FT%TZ)" --arg revision "$revision" \
  '{cpu: $cpu, nproc: $nproc, mem_kb: $mem_kb, load_at_start: $load, kernel: $kernel, swift: $swift, curl: $curl, zstd: $zstd, date: $date, revision: $revision}')"
fact config "$(jq -nc --argjson count "$count" --argjson latency "$latency" --arg real "$real_data" \
  --arg scale "$scale" --argjson quick "$quick" --argjson realistic_scale "$realistic_scale" --argjson distinct "$scale_distinct" \
  --arg percents "$upgrade_percents" --argjson upgrade_only "$upgrade_only" \
  --argjson publish "$publish_bench" --argjson publish_only "$publish_only" --argjson posters_only "$posters_only" \
  '{count: $count, latency_ms: $latency, real_data: $real, scale: ($scale | split(" ") | map(select(. != "") | tonumber)), quick: ($quick == 1), realistic_scale_gifs: ($realistic_scale == 1), scale_distinct_gifs: $distinct,
    upgrade_percents: ($percents | split(" ") | map(select(. != "") | tonumber)), upgrade_only: ($upgrade_only == 1),
    publish: ($publish == 1), publish_only: ($publish_only == 1), posters_only: ($posters_only == 1)}')"

# Warm the page cache with every program timed below, so the first timed step does not pay for it.
"$bin/gifpack" --version > /dev/null; "$bin/exercisedb-fixture" --help > /dev/null
curl --version > /dev/null; zstd --version > /dev/null; tar --version > /dev/null; jq --version > /dev/null

# The neighbour pass: a CPU-bound process pinned to one core for the whole run (killed at the end).
if [ "$pass" = neighbour ]; then
  taskset -c 0 bash -c 'while :; do :; done' &
  neighbour_pid=$!
  log "neighbour: busy loop on core 0 (pid $neighbour_pid)"
fi
fact pass "\"$pass\""

if [ "$build_bench" = 1 ]; then
# ---------------------------------------------------------------------------------------------
# 1-4: one fixture server process.
if [ -n "$real_data" ]; then
  log "fixture: real data $real_data, latency ${latency} ms"
  start_fixture --real-data "$real_data" --latency-ms "$latency"
else
  log "fixture: realistic catalog of $count, latency ${latency} ms"
  start_fixture --realistic --count "$count" --latency-ms "$latency"
fi
manifest "$runs/bench.yaml" 7d
manifest "$runs/bench-refresh0.yaml" 0

# The image URLs, listed outside any timing.
offset=0; : > "$runs/ids"
while :; do
  page=$(curl -fsS --compressed -H "X-RapidAPI-Key: $key" "$base/exercises?limit=100&offset=$offset")
  jq -r '.[].id' <<<"$page" >> "$runs/ids"
  [ "$(jq length <<<"$page")" -lt 100 ] && break
  offset=$((offset + 100))
done
images=$(wc -l < "$runs/ids")
fact images "$images"
mkdir -p "$runs/floor"
{
  printf 'header = "X-RapidAPI-Key: %s"\n' "$key"
  while read -r id; do
    printf 'url = "%s/image?exerciseId=%s&resolution=180"\noutput = "%s/floor/%s.gif"\n' "$base" "$id" "$runs" "$id"
  done < "$runs/ids"
} > "$runs/floor.curl"

# The same GIFs after the catalog's pages (as few as list the catalog: the last one short), all in
# one queue of 3 at a time: the least any build must ask through the same window. curl does not wait
# for the first page as a build must, so this floor is lower still than any build's.
pages=$(( images / 100 + 1 ))
{
  printf 'header = "X-RapidAPI-Key: %s"\ncompressed\n' "$key"
  for page in $(seq 0 $((pages - 1))); do
    printf 'url = "%s/exercises?limit=100&offset=%s"\noutput = "%s/floor/page-%s.json"\n' "$base" $((page * 100)) "$runs" "$page"
  done
  sed 1d "$runs/floor.curl"
} > "$runs/floor-catalog.curl"
fact floor_catalog.pages "$pages"

# floor NAME [CONFIG]: one curl process, keep-alive, 3 transfers at a time, nothing validated or packed.
floor() {
  discard "$runs/floor"; mkdir -p "$runs/floor"
  reset_stats
  measure "$1" curl -sS --no-progress-meter --fail --parallel --parallel-max 3 --config "${2:-$runs/floor.curl}"
  record_stats "$1.server"
}

# The floor is measured just before and just after gifpack's build; the ratio uses their mean,
# so a change of machine load during the run weighs on both sides alike.
log "fetch floor: curl --parallel --parallel-max 3, $images GIFs"
floor floor
fact floor.bytes "$(cat "$runs"/floor/*.gif | wc -c)"

log "gifpack build (fresh output and cache)"
reset_stats
gifpack_build build1 "$runs/bench.yaml" "$runs/out" "$runs/cache"
record_stats build1.server

log "fetch floor with the catalog's $pages pages"
floor floor_catalog "$runs/floor-catalog.curl"

log "fetch floor again"
floor floor2

# More rounds of the same comparison (a fresh build, then the floor again), so the ratio is known
# over several runs: round R compares build1.rR with the mean of the floor runs just before and after.
for round in $(seq 2 "$floor_runs"); do
  log "floor round $round of $floor_runs: gifpack build (fresh output and cache), fetch floor"
  reset_stats
  gifpack_build "build1.r$round" "$runs/bench.yaml" "$runs/out-r$round" "$runs/cache-r$round"
  discard "$runs/out-r$round" "$runs/cache-r$round"
  floor "floor_catalog.r$round" "$runs/floor-catalog.curl"
  floor "floor$((round + 1))"
done
fact floor_runs "$floor_runs"

log "curl + xargs -P3 + tar | zstd script"
reset_stats
measure script "$here/curl-xargs.sh" "$base" "$key" "$runs/script" "$runs/script.tar.zst"
record_stats script.server
fact script.phases "$(awk '/^phase / {printf "%s\"%s\": %s", (n++ ? ", " : "{"), $2, $3} END {print "}"}' "$runs/script.err")"
fact script.bytes "$(stat -c %s "$runs/script.tar.zst" 2> /dev/null || echo 0)"

log "no-change rebuild (refresh_after 7d)"
reset_stats
gifpack_build build2 "$runs/bench.yaml" "$runs/out" "$runs/cache"
record_stats build2.server

log "rebuild with refresh_after 0 (conditional requests)"
reset_stats
gifpack_build build3 "$runs/bench-refresh0.yaml" "$runs/out" "$runs/cache"
record_stats build3.server

log "pack stage alone: GIFs fresh in the cache, frame cache deleted, empty output"
discard "$runs/cache/frames"
reset_stats
gifpack_build packcold "$runs/bench.yaml" "$runs/out-packcold" "$runs/cache"
record_stats packcold.server
pack=$(ls "$runs"/out-packcold/packs/all-v*.tar.zst) # not the posters pack beside it
fact packcold.bytes "$(stat -c %s "$pack")"

log "solid tar | zstd -T1 -9 of the same entries (then fsync, as gifpack does)"
mkdir -p "$runs/solid/gifs"
tar --zstd -xf "$pack" -C "$runs/solid" catalog.json
jq -r '.packs[0].gifs[].sha256' "$runs/out-packcold/index.json" | while read -r sha; do
  ln "$runs/cache/blobs/sha256/${sha:0:2}/$sha.gif" "$runs/solid/gifs/$sha.gif"
done
fact solid.input "$(tar -cf - --sort=name --owner=0 --group=0 --numeric-owner --mtime=@$SOURCE_DATE_EPOCH -C "$runs/solid" catalog.json gifs | wc -c)"
fact solid.gif_bytes "$(cat "$runs"/solid/gifs/*.gif | wc -c)"
measure solid bash -c "tar -cf - --sort=name --owner=0 --group=0 --numeric-owner --mtime=@$SOURCE_DATE_EPOCH -C '$runs/solid' catalog.json gifs | zstd -q -T1 -9 -o '$runs/solid.tar.zst' && sync '$runs/solid.tar.zst'"
fact solid.bytes "$(stat -c %s "$runs/solid.tar.zst")"
# Packing alone moves by a factor of two or more from run to run on this shared machine (the solid
# side took 3.85 s in one run, 1.07 s in another): more rounds of the pair, gifpack then solid, and
# the ratio of their medians.
for round in $(seq 2 "$pack_runs"); do
  log "packing alone, round $round of $pack_runs: gifpack pack stage (frame cache deleted), solid tar | zstd"
  discard "$runs/cache/frames" "$runs/out-packcold$round"
  gifpack_build "packcold$round" "$runs/bench.yaml" "$runs/out-packcold$round" "$runs/cache"
  rm -f "$runs/solid.tar.zst"
  measure "solid$round" bash -c "tar -cf - --sort=name --owner=0 --group=0 --numeric-owner --mtime=@$SOURCE_DATE_EPOCH -C '$runs/solid' catalog.json gifs | zstd -q -T1 -9 -o '$runs/solid.tar.zst' && sync '$runs/solid.tar.zst'"
  discard "$runs/out-packcold$round"
done
fact pack_runs "$pack_runs"
stop_fixture
rm -rf "$runs/floor" "$runs/script" "$runs/solid"
fi

# ---------------------------------------------------------------------------------------------
# 5: scale, latency 0, one fixture per size. The fixture makes at most $scale_distinct distinct GIFs
# and later exercises share them (real catalogs share GIFs too), so 100,000 exercises fit on a disk and
# the server stays ahead of the build. Then a no-change rebuild of the same size (refresh_after 7d).
# scale-real (issue 45, item 4): 100,000 exercises whose 1,000 distinct GIFs have the real sample's
# sizes (180 px, 10-14 frames, each padded to a size drawn from the sample's GIF files), row "real100000".
scale_rows=""
[ "$scale_bench" != 1 ] || scale_rows=$scale
[ "$scale_real" != 1 ] || scale_rows="$scale_rows real100000"
fact config.scale_rows "$(jq -nc --arg rows "$scale_rows" '$rows | split(" ") | map(select(. != ""))')"
for n in $scale_rows; do
  if [ "$n" = real100000 ]; then
    log "scale real-size 100000: fixture (GIFs of the sizes of $sizes_from/gifs, $scale_distinct distinct)"
    start_fixture --realistic --count 100000 --distinct-gifs "$scale_distinct" --gif-sizes-from "$sizes_from/gifs"
    fact "scale$n.sizes" "$(python3 - "$sizes_from/gifs" <<'PY'
import json, os, statistics, sys
sample = sorted(os.path.getsize(os.path.join(sys.argv[1], n)) for n in os.listdir(sys.argv[1]) if n.endswith(".gif"))
def q(v): return {"n": len(v), "min": v[0], "median": statistics.median(v), "max": v[-1], "mean": sum(v) / len(v)}
print(json.dumps({"sample": q(sample)}))
PY
)"
  elif [ "$realistic_scale" = 1 ]; then
    log "scale $n: fixture (realistic GIFs, $scale_distinct distinct; generating them takes a while)"
    start_fixture --realistic --count "$n" --distinct-gifs "$scale_distinct"
  else
    log "scale $n: fixture (small generated GIFs, $scale_distinct distinct)"; start_fixture --count "$n" --distinct-gifs "$scale_distinct"
  fi
  manifest "$runs/scale.yaml" 7d
  log "scale $n: gifpack build"
  reset_stats
  gifpack_build "scale$n" "$runs/scale.yaml" "$runs/scale-out" "$runs/scale-cache"
  record_stats "scale$n.server"
  log "scale $n: no-change rebuild"
  reset_stats
  gifpack_build "scale$n.rebuild" "$runs/scale.yaml" "$runs/scale-out" "$runs/scale-cache"
  record_stats "scale$n.rebuild.server"
  stop_fixture
  if [ "$n" != real100000 ]; then
  # The release-review page of this build as a first release (every exercise added: the most
  # tiles), its time and peak memory (issue 36).
  log "scale $n: gifpack review"
  measure "scale$n.review" "$bin/gifpack" review --quiet "$runs/scale-out" --html "$runs/scale-review"
  rm -rf "$runs/scale-review"
  # The index read twice and diffed (its peak RSS against the 1,000 row's: the index is streamed).
  measure "scale$n.diff" "$bin/gifpack" diff --quiet "$runs/scale-out/index.json" "$runs/scale-out/index.json"
  # Where the index should go next (issue 28): today's single index against a root index naming
  # per-pack indexes by hash, on this size's index, as built and split into 10 packs.
  [ ! -f "$runs/scale-out/index.json" ] \
    || fact "scale$n.index_designs" "$(python3 "$here/index_designs.py" "$runs/scale-out/index.json" --packs "1 10")"
  fi
  # The sizes of the GIFs the build packed (real-size row): against the sample's.
  [ "$n" != real100000 ] || [ ! -f "$runs/scale-out/index.json" ] \
    || fact "scale$n.packed_sizes" "$(jq -c '[.packs[0].gifs[].location.size] | sort | {n: length, min: .[0], median: .[length / 2 | floor], max: .[-1], mean: (add / length)}' "$runs/scale-out/index.json")"
  rm -rf "$runs/scale-out" "$runs/scale-cache"
done
# The scale rows' files (several GB: deleted, not kept in the trash) were freed just now: what is timed
# next would walk past their inodes for 30 s (see discard), so it waits them out.
[ -z "$scale_rows" ] || sleep 31

# ---------------------------------------------------------------------------------------------
# 6: upgrades from static hosting: `gifpack install` of a new release served by nginx, sparse (only
# the frames the cache lacks, by range) against whole-pack (--no-sparse), for each percentage of
# GIFs changed. Bytes and requests come from nginx's access log; both caches must end identical.
start_nginx() { # ROOT
  local dir=$runs/nginx
  rm -rf "$dir"; mkdir -p "$dir"
  nginx_port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
  {
    echo "worker_processes 1; daemon off; master_process off;"
    [ "$(id -u)" -ne 0 ] || echo "user root;"
    echo "pid $dir/nginx.pid; error_log $dir/error.log warn;"
    echo "events { worker_connections 256; }"
    echo "http {"
    echo "  log_format bench \"\$request\\t\$status\\t\$bytes_sent\\t\$body_bytes_sent\\t\$http_range\";"
    echo "  access_log $dir/access.log bench;"
    echo "  client_body_temp_path $dir/body; proxy_temp_path $dir/proxy; fastcgi_temp_path $dir/fastcgi;"
    echo "  uwsgi_temp_path $dir/uwsgi; scgi_temp_path $dir/scgi;"
    echo "  default_type application/octet-stream; sendfile on;"
    echo "  server { listen 127.0.0.1:$nginx_port; root $1; }"
    echo "}"
  } > "$dir/nginx.conf"
  /usr/sbin/nginx -c "$dir/nginx.conf" -p "$dir" -e "$dir/error.log" &
  nginx_pid=$!
  for _ in $(seq 100); do
    [ -s "$dir/nginx.pid" ] && curl -fsS -o /dev/null "http://127.0.0.1:$nginx_port/index.json" 2> /dev/null && return 0
    sleep 0.1
  done
  cat "$dir/error.log" >&2; echo "bench/run.sh: nginx did not start" >&2; exit 1
}
access_lines() { wc -l < "$runs/nginx/access.log"; }
# served_since MARK: requests, bytes sent (headers included), body bytes and range requests logged after line MARK.
served_since() {
  sleep 0.2
  tail -n +"$(( $1 + 1 ))" "$runs/nginx/access.log" | awk -F '\t' '{n++; sent += $3; body += $4; if ($5 != "-") r++}
    END {printf "{\"requests\": %d, \"bytes_sent\": %d, \"body_bytes\": %d, \"range_requests\": %d}", n, sent, body, r}'
}
publish() { # OUT SITE: new packs first, the index last
  "$bin/gifpack" publish --quiet --from "$1" --to "$2" > /dev/null || { echo "bench/run.sh: publish $1 to $2 failed" >&2; exit 1; }
}
# untimed_build LABEL OUT CACHE REFRESH_AFTER [FIXTURE ARGS...]: an untimed build of a realistic catalog of $count.
untimed_build() {
  local label=$1 out=$2 cache=$3 refresh=$4; shift 4
  start_fixture --realistic --count "${build_count:-$count}" "$@"
  manifest "$runs/untimed.yaml" "$refresh"
  mkdir -p "$(dirname "$out")"
  if [ -n "${bench_signing_key:-}" ]; then
    printf 'signing:\n  secret_key_file: %s\n' "$bench_signing_key" >> "$runs/untimed.yaml"
  fi
  "$bin/gifpack" build --quiet --manifest "$runs/untimed.yaml" --out "$out" --cache "$cache" \
    || { echo "bench/run.sh: the $label build failed" >&2; exit 1; }
  stop_fixture
}

if [ -n "$upgrade_percents" ]; then
  # Signed, with 80 px posters (the default), as an app's packs are published.
  rm -f "$runs/bench.key" "$runs/bench.pub"
  "$bin/gifpack" keygen --secret-key "$runs/bench.key" --public-key "$runs/bench.pub" > /dev/null
  bench_signing_key=$runs/bench.key
  log "upgrades: v1 of a realistic catalog of $count"
  untimed_build v1 "$runs/up-v1/out" "$runs/up-v1/cache" 0
  checked_unchanged=0
  for pct in $upgrade_percents; do
    rm -rf "$runs/up" "$runs/site"; mkdir -p "$runs/up" "$runs/site"
    cp -a "$runs/up-v1/out" "$runs/up-v1/cache" "$runs/up/"
    publish "$runs/up/out" "$runs/site"
    start_nginx "$runs/site"
    url=http://127.0.0.1:$nginx_port/index.json
    trust=(--trusted-key "$runs/bench.pub" --with-posters)
    "$bin/gifpack" install "${trust[@]}" --index "$url" --cache "$runs/up/sparse" > /dev/null
    "$bin/gifpack" install "${trust[@]}" --no-sparse --index "$url" --cache "$runs/up/whole" > /dev/null
    if [ "$checked_unchanged" = 0 ]; then
      # The daily check when nothing changed: the same install again.
      log "upgrades: unchanged check"
      mark=$(access_lines)
      measure check.unchanged "$bin/gifpack" install "${trust[@]}" --index "$url" --cache "$runs/up/sparse"
      fact check.unchanged.served "$(served_since "$mark")"
      checked_unchanged=1
    fi
    cp "$runs/site/index.json" "$runs/up/old-index.json"
    log "upgrades: $pct% of GIFs changed, v2 build"
    untimed_build v2 "$runs/up/out" "$runs/up/cache" 0 --change-percent "$pct"
    publish "$runs/up/out" "$runs/site"
    fact "upgrade$pct.needed" "$(python3 "$here/delivery_needed.py" "$runs/up/old-index.json" "$runs/site/index.json" "$runs/site")"
    fact "upgrade$pct.pack" "$(jq -c '.packs[0] | {bytes, gifs: (.gifs | length)}' "$runs/site/index.json")"
    fact "upgrade$pct.index_bytes" "$(stat -c %s "$runs/site/index.json")"
    for mode in sparse whole; do
      log "upgrades: $pct% changed, $mode install"
      mark=$(access_lines)
      if [ "$mode" = sparse ]; then
        measure "upgrade$pct.$mode" "$bin/gifpack" install "${trust[@]}" --index "$url" --cache "$runs/up/$mode"
      else
        measure "upgrade$pct.$mode" "$bin/gifpack" install "${trust[@]}" --no-sparse --index "$url" --cache "$runs/up/$mode"
      fi
      fact "upgrade$pct.$mode.served" "$(served_since "$mark")"
      fact "upgrade$pct.$mode.fetch" "$(grep -m1 '^fetch ' "$runs/upgrade$pct.$mode.out" | jq -Rc . || echo null)"
    done
    if diff -r "$runs/up/sparse/" "$runs/up/whole/" > /dev/null; then fact "upgrade$pct.identical" true; else fact "upgrade$pct.identical" false; fi
    stop_nginx
  done
  rm -rf "$runs/up" "$runs/up-v1" "$runs/site"
  bench_signing_key=""
fi

# ---------------------------------------------------------------------------------------------
# 7: gifpack publish of a realistic build of $count GIFs (latency 0) to a directory and to moto's S3
# server on loopback: the first publish, then the same build again (nothing to send).
if [ "$publish_bench" = 1 ]; then
  log "publish: build of a realistic catalog of $count"
  untimed_build publish "$runs/pub/out" "$runs/pub/cache" 7d
  fact publish.build "$(jq -c '{packs: (.packs | length), bytes: ([.packs[].bytes] | add), gifs: ([.packs[].gifs | length] | add)}' "$runs/pub/out/index.json")"
  publish_run() { # NAME ARGS...: one timed publish; its summary line (the last of standard output) as NAME.summary
    local name=$1; shift
    measure "$name" "$bin/gifpack" publish --from "$runs/pub/out" "$@"
    fact "$name.summary" "$(tail -n 1 "$runs/$name.out" | jq -Rc .)"
  }
  log "publish: to a directory"
  publish_run publish.dir.first --to "$runs/pub/site"
  publish_run publish.dir.again --to "$runs/pub/site"
  log "publish: to S3 (moto on loopback)"
  moto_port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
  "$moto" -H 127.0.0.1 -p "$moto_port" > "$runs/moto.log" 2>&1 &
  moto_pid=$!
  for _ in $(seq 600); do curl -s -o /dev/null "http://127.0.0.1:$moto_port/" && break; sleep 0.1; done
  export AWS_ACCESS_KEY_ID=AKIAGIFPACKBENCH0001 AWS_SECRET_ACCESS_KEY=gifpack-bench-secret AWS_REGION=us-east-1
  curl -fsS -X PUT --aws-sigv4 "aws:amz:us-east-1:s3" --user "$AWS_ACCESS_KEY_ID:$AWS_SECRET_ACCESS_KEY" \
    "http://127.0.0.1:$moto_port/bench" > /dev/null || { echo "bench/run.sh: cannot create the moto bucket" >&2; exit 1; }
  publish_run publish.s3.first --to s3://bench/gifpack --endpoint "http://127.0.0.1:$moto_port"
  publish_run publish.s3.again --to s3://bench/gifpack --endpoint "http://127.0.0.1:$moto_port"
  unset AWS_ACCESS_KEY_ID AWS_SECRET_ACCESS_KEY AWS_REGION
  stop_moto
  rm -rf "$runs/pub"
fi

# ---------------------------------------------------------------------------------------------
# 8: placeholders and posters. Fresh builds (empty output and cache, same latency as section 1)
# without posters, with 80 px and with 200 px posters; then the 200 px build's cache rebuilt with
# [80, 200], which derives again from the stored GIFs without a GIF request. Recorded: wall and CPU,
# the posters pack's size, the index with and without placeholders (both re-indented by jq alike), and
# how far the 80 px posters are from the area downscale of their stills (mean error per channel; the
# real sample's GIFs with --real-data); then a build of small hostile GIFs (bench/hostile_gifs.py).
if [ "$posters" = 1 ]; then
  if [ -n "$real_data" ]; then
    log "posters: fixture, real data $real_data, latency ${latency} ms"
    start_fixture --real-data "$real_data" --latency-ms "$latency"
  else
    log "posters: fixture, realistic catalog of $count, latency ${latency} ms"
    start_fixture --realistic --count "$count" --latency-ms "$latency"
  fi
  posters_build() { # NAME POSTERS OUT-AND-CACHE-DIR
    manifest "$runs/$1.yaml" 7d "$2"
    reset_stats
    gifpack_build "$1" "$runs/$1.yaml" "$runs/$3/out" "$runs/$3/cache"
    record_stats "$1.server"
    fact "$1.posters_bytes" "$(jq '[.packs[].posters.bytes // 0] | add' "$runs/$3/out/index.json")"
    fact "$1.posters_count" "$(jq '[.packs[].posters.posters // [] | length] | add' "$runs/$3/out/index.json")"
    fact "$1.index_bytes" "$(stat -c %s "$runs/$3/out/index.json")"
  }
  log "posters: fresh build without posters"
  posters_build posters.none "[]" posters-none
  log "posters: fresh build with 80 px posters"
  posters_build posters.80 "[80]" posters-80
  log "posters: the 80 px posters against the area downscale of their stills (bench/poster_error.py)"
  fact posters.80.fidelity "$(python3 "$here/poster_error.py" "$runs/posters-80/cache" --size 80)"
  log "posters: fresh build with 200 px posters"
  posters_build posters.200 "[200]" posters-200
  log "posters: the 200 px cache rebuilt with [80, 200] (derived again, no GIF request)"
  posters_build posters.80_200 "[80, 200]" posters-200
  index=$runs/posters-80/out/index.json
  fact posters.index "$(jq -nc --argjson with "$(jq -S --indent 2 . "$index" | wc -c)" \
    --argjson without "$(jq -S --indent 2 'del(.packs[].gifs[].placeholder, .packs[].posters)' "$index" | wc -c)" \
    --argjson placeholders_only "$(jq -S --indent 2 'del(.packs[].posters)' "$index" | wc -c)" \
    --argjson exercises "$(jq '[.packs[].exercises | length] | add' "$index")" \
    --argjson gifs "$(jq '[.packs[].gifs | length] | add' "$index")" \
    '{with: $with, without: $without, placeholders_only: $placeholders_only, exercises: $exercises, gifs: $gifs}')"
  stop_fixture
  # Small hostile GIFs (bench/hostile_gifs.py: a 4096x4096 screen, 1,000-5,000 blank 1x1 frames) whose
  # stills once cost a pass over the screen per frame: a fresh build with 80 px posters, latency 0.
  log "posters: hostile GIFs (4096x4096 screen, 1,000-5,000 blank 1x1 frames), fresh build with 80 px posters"
  fact posters.hostile.gifs "$(python3 "$here/hostile_gifs.py" "$runs/hostile-data")"
  start_fixture --real-data "$runs/hostile-data"
  manifest "$runs/posters.hostile.yaml" 7d "[80]"
  gifpack_build posters.hostile "$runs/posters.hostile.yaml" "$runs/posters-hostile/out" "$runs/posters-hostile/cache"
  stop_fixture
  rm -rf "$runs"/posters-* "$runs/hostile-data"
fi

# ---------------------------------------------------------------------------------------------
# 9: install speed (issue 34): a first install of a realistic build of $count GIFs into an empty
# cache, through `gifpack install` (curl) from the local index and over HTTP (nginx on loopback),
# and through the library as an app runs it (gifpack-install-bench: PackInstaller, URLSessionTransport),
# each run paired with the stock pipeline on the same pack: `curl URL | zstd -dc | tar -x` (local:
# `zstd -dc PACK | tar -x`), then `sha256sum` of every extracted file. The pair's order alternates
# from round to round; the ratio is taken pair by pair and its median reported. The stock pipeline
# checks nothing and makes nothing durable; the install checks everything and ends with syncfs.
if [ "$install_bench" = 1 ]; then
  fact install_counts "$(jq -nc --arg counts "$install_counts" '$counts | split(" ") | map(select(. != "") | tonumber)')"
  for n in $install_counts; do
  log "install speed: build of a realistic catalog of $n"
  build_count=$n untimed_build install "$runs/inst/out" "$runs/inst/cache" 7d
  publish "$runs/inst/out" "$runs/inst/site"
  # Moved aside, not deleted: the pairs start right after, and on ext4 without a journal every file
  # they create would first walk past the inodes an `rm -rf` freed in the last 30 s (see discard).
  discard "$runs/inst/out" "$runs/inst/cache"
  start_nginx "$runs/inst/site"
  pack=$(jq -r '.packs[0].file' "$runs/inst/site/index.json")
  fact "install.$n.pack" "$(jq -c '{bytes: .packs[0].bytes, gifs: (.packs[0].gifs | length), exercises: (.packs[0].exercises | length)}' "$runs/inst/site/index.json")"
  x=$runs/inst/x c=$runs/inst/c url=http://127.0.0.1:$nginx_port
  hash_all="find '$x' -type f -print0 | xargs -0 sha256sum > /dev/null"
  for round in $(seq 1 "$install_runs"); do
    for kind in $install_kinds; do
      log "install speed, $n exercises, round $round of $install_runs: $kind and the stock pipeline"
      for side in $( [ $((round % 2)) = 1 ] && echo "stock install" || echo "install stock"); do
        discard "$x" "$c" "$c.d"; mkdir -p "$x"
        name=install.$n.$kind
        if [ "$side" = stock ]; then
          if [ "$kind" = local ]; then
            measure "$name.stock.r$round" bash -c "zstd -dc '$runs/inst/site/$pack' | tar -x -C '$x' && $hash_all"
          else
            measure "$name.stock.r$round" bash -c "set -o pipefail; curl -fsS '$url/$pack' | zstd -dc | tar -x -C '$x' && $hash_all"
          fi
        else
          # Each install's phases (InstallReport.phases): the bench executable prints them as JSON
          # on its last line, gifpack install as its "phases s:" line.
          case $kind in
            library) measure "$name.r$round" "$bin/gifpack-install-bench" "$url/index.json" "$c"
                     fact "$name.r$round.phases" "$(tail -n 1 "$runs/$name.r$round.out" | jq -c . 2> /dev/null || echo null)" ;;
            http) measure "$name.r$round" "$bin/gifpack" install --index "$url/index.json" --cache "$c" ;;
            local) measure "$name.r$round" "$bin/gifpack" install --index "$runs/inst/site/index.json" --cache "$c" ;;
          esac
          if [ "$kind" != library ]; then
            fact "$name.r$round.phases" "$(python3 -c '
import json, re, sys
for line in open(sys.argv[1]):
    if line.startswith("phases s: "):
        body, total = line[len("phases s: "):].strip().split("; total ")
        phases = {k: float(v) for k, v in (part.rsplit(" ", 1) for part in body.split(", "))}
        phases["total"] = float(total)
        print(json.dumps(phases)); break
else:
    print("null")' "$runs/$name.r$round.out")"
          fi
        fi
      done
    done
  done
  stop_nginx
  discard "$runs/inst"
  done
  fact install_runs "$install_runs"
fi

# ---------------------------------------------------------------------------------------------
# 10: renditions (issue 35): one build of two resolutions (`source.resolutions: [180, 360]`) against
# two builds of one resolution each (180, then 360), every build fresh (empty output and cache), on one
# fixture server of a realistic catalog of $count (latency as section 1, plan ULTRA: every resolution
# at its own size). An untimed two-resolution build first makes the fixture draw its 360 px GIFs, so
# no timed build waits for the synthesizer. The sides alternate from round to round. Recorded: wall
# and CPU of each build, the requests and bytes the server sent, and, from the two-resolution index,
# the bytes of each rendition's packs and GIFs.
if [ "$renditions_bench" = 1 ]; then
  log "renditions: fixture of a realistic catalog of $count, latency ${latency} ms"
  start_fixture --realistic --count "$count" --latency-ms "$latency" --plan ULTRA
  manifest "$runs/rend.180.yaml" 7d
  sed 's/^  resolution: 180$/  resolution: 360/' "$runs/rend.180.yaml" > "$runs/rend.360.yaml"
  sed 's/^  resolution: 180$/  resolutions: [180, 360]/' "$runs/rend.180.yaml" > "$runs/rend.both.yaml"
  log "renditions: untimed build (the fixture draws its 360 px GIFs)"
  mkdir -p "$runs/rend"
  "$bin/gifpack" build --quiet --manifest "$runs/rend.both.yaml" --out "$runs/rend/out" --cache "$runs/rend/cache" \
    || { echo "bench/run.sh: the untimed two-resolution build failed" >&2; exit 1; }
  fact rend.index "$(jq -c '{packs: [.packs[] | {name, resolution, bytes, gifs: (.gifs | length), gif_bytes: ([.gifs[].location.size] | add), posters_bytes: .posters.bytes}],
    renditionPacks: [(.renditionPacks // [])[] | {name, resolution, bytes, gifs: (.gifs | length), gif_bytes: ([.gifs[].location.size] | add)}]}' "$runs/rend/out/index.json")"
  for round in $(seq 1 "$renditions_runs"); do
    for side in $( [ $((round % 2)) = 1 ] && echo "both single" || echo "single both"); do
      if [ "$side" = both ]; then
        log "renditions, round $round of $renditions_runs: one build of 180 and 360 px"
        discard "$runs/rend"; reset_stats
        gifpack_build "rend.both.r$round" "$runs/rend.both.yaml" "$runs/rend/out" "$runs/rend/cache"
        record_stats "rend.both.r$round.served"
        fact "rend.both.r$round.renditions" "$(jq -c '[.renditions[]? | {resolution, downloaded: .gifs.downloaded, bytes: .gifs.bytesDownloaded, packs}]' "$runs/rend/out/report.json")"
      else
        for px in 180 360; do
          log "renditions, round $round of $renditions_runs: one build of $px px"
          discard "$runs/rend"; reset_stats
          gifpack_build "rend.$px.r$round" "$runs/rend.$px.yaml" "$runs/rend/out" "$runs/rend/cache"
          record_stats "rend.$px.r$round.served"
        done
      fi
    done
  done
  fact renditions_runs "$renditions_runs"
  stop_fixture
  rm -rf "$runs/rend"
fi

# ---------------------------------------------------------------------------------------------
# 11: the app loader's memory (issue 44, item 1): 500 distinct GIFs at 360 px (a one-resolution build
# of a realistic catalog, served by nginx on loopback) loaded by range through GIFLoader with a 5 MB
# memory tier (gifpack-loader-memory-bench loader: URLSessionTransport, 20 callers at once, at most 4
# fetches), against plain URLSession fetching the same ranges with the same concurrency in the same
# run (gifpack-loader-memory-bench urlsession), alternating. Recorded: the process's peak RSS
# (VmHWM), its RSS at the last answer and 3 s later (settled), and /usr/bin/time's figures.
if [ "$loader_memory_bench" = 1 ]; then
  lm_count=${BENCH_LOADER_MEMORY_GIFS:-500}
  # A realistic catalog shares some GIFs between exercises (500 exercises have about 440 distinct
  # GIFs): a fifth more exercises than GIFs wanted.
  log "loader memory: build of a realistic catalog of $((lm_count * 6 / 5)) at 360 px"
  start_fixture --realistic --count "$((lm_count * 6 / 5))" --plan ULTRA
  manifest "$runs/lm.yaml" 7d
  sed -i 's/^  resolution: 180$/  resolution: 360/' "$runs/lm.yaml"
  mkdir -p "$runs/lm"
  "$bin/gifpack" build --quiet --manifest "$runs/lm.yaml" --out "$runs/lm/out" --cache "$runs/lm/cache" \
    || { echo "bench/run.sh: the loader-memory build failed" >&2; exit 1; }
  stop_fixture
  publish "$runs/lm/out" "$runs/lm/site"
  rm -rf "$runs/lm/out" "$runs/lm/cache"
  start_nginx "$runs/lm/site"
  url=http://127.0.0.1:$nginx_port
  # One exercise per distinct GIF (every answer comes by range), at most $lm_count.
  jq -r --arg url "$url" '.packs[0] as $p | ($p.gifs | map({key: .sha256, value: .location}) | from_entries) as $loc
    | [$p.exercises[] | select(.gif != null)] | unique_by(.gif) | .[]
    | "\(.id) \($url)/\($p.file) \($loc[.gif].frameOffset) \($loc[.gif].frameOffset + $loc[.gif].frameLength - 1)"' \
    "$runs/lm/site/index.json" | head -n "$lm_count" > "$runs/lm/ranges.txt"
  fact lm.gifs "$(wc -l < "$runs/lm/ranges.txt")"
  fact lm.frame_bytes "$(awk '{s += $4 - $3 + 1} END {print s}' "$runs/lm/ranges.txt")"
  fact lm.resolution "$(jq '.packs[0].resolution // .source.resolution' "$runs/lm/site/index.json")"
  # BENCH_LOADER_MEMORY_BEFORE=PATH: another build of the tool (the code before a change) measured
  # beside the others in the same run, as side "before".
  lm_sides="loader urlsession"
  if [ -n "${BENCH_LOADER_MEMORY_BEFORE:-}" ]; then
    cp "$BENCH_LOADER_MEMORY_BEFORE" "$bin/gifpack-loader-memory-bench.before"
    lm_sides="before $lm_sides"
  fi
  for round in 1 2; do
    for side in $( [ "$round" = 1 ] && echo "$lm_sides" || echo "$lm_sides" | tr ' ' '\n' | tac | tr '\n' ' '); do
      log "loader memory, round $round: $side"
      rm -rf "$runs/lm/cache-app"
      if [ "$side" = loader ]; then
        measure "lm.loader.r$round" "$bin/gifpack-loader-memory-bench" loader "$url/index.json" "$runs/lm/cache-app" "$runs/lm/ranges.txt"
      elif [ "$side" = before ]; then
        measure "lm.before.r$round" "$bin/gifpack-loader-memory-bench.before" loader "$url/index.json" "$runs/lm/cache-app" "$runs/lm/ranges.txt"
      else
        measure "lm.urlsession.r$round" "$bin/gifpack-loader-memory-bench" urlsession "$runs/lm/ranges.txt"
      fi
      fact "lm.$side.r$round.memory" "$(tail -n 1 "$runs/lm.$side.r$round.out" | jq -c . 2> /dev/null || echo null)"
    done
  done
  stop_nginx
  rm -rf "$runs/lm"
fi

# ---------------------------------------------------------------------------------------------
# 12: WebP renditions (issue 47) on the real sample (--real-data; skipped without it): fresh builds
# (empty output and cache, latency as section 1) of `output.formats: [gif]` against `[gif, webp]`,
# alternating, then a no-change rebuild of the WebP build (its cache kept). Recorded: wall and CPU of
# each build; from the WebP build's report, the renditions by outcome (q75, q80, q90, lossless, gif), the
# SSIM (mean, worst, the worst frames' distribution), the renditions' bytes against the GIFs', and how
# many GIFs each build encoded (0 on the rebuild); the encoder's CPU time alone is the WebP build's
# CPU less the GIF-only build's.
if [ "$webp_bench" = 1 ] && [ -n "$real_data" ]; then
  log "webp: fixture of the real sample $real_data, latency ${latency} ms"
  start_fixture --real-data "$real_data" --latency-ms "$latency"
  manifest "$runs/webp.gif.yaml" 7d
  sed 's/^  zstd_level: 9$/  zstd_level: 9\n  formats: [gif, webp]/' "$runs/webp.gif.yaml" > "$runs/webp.webp.yaml"
  for round in $(seq 1 "$webp_runs"); do
    for side in $( [ $((round % 2)) = 1 ] && echo "webp gif" || echo "gif webp"); do
      log "webp, round $round of $webp_runs: a fresh build of formats [gif$( [ "$side" = webp ] && echo ", webp")]"
      discard "$runs/webp"
      gifpack_build "webp.$side.r$round" "$runs/webp.$side.yaml" "$runs/webp/out" "$runs/webp/cache"
      if [ "$side" = webp ]; then
        fact "webp.webp.r$round.renditions" "$(jq -c '.webp' "$runs/webp/out/report.json")"
        fact "webp.webp.r$round.gif_pack_bytes" "$(jq '[.packs[].bytes] | add' "$runs/webp/out/index.json")"
        fact "webp.webp.r$round.webp_pack_bytes" "$(jq '[(.formatPacks // [])[].bytes] | add // null' "$runs/webp/out/index.json")"
        log "webp, round $round of $webp_runs: a no-change rebuild"
        gifpack_build "webp.rebuild.r$round" "$runs/webp.webp.yaml" "$runs/webp/out" "$runs/webp/cache"
        fact "webp.rebuild.r$round.encoded" "$(jq '.webp.encoded' "$runs/webp/out/report.json")"
      fi
    done
  done
  fact webp_runs "$webp_runs"
  stop_fixture
  rm -rf "$runs/webp"
fi

fact load_at_end "\"$(cut -d' ' -f1-3 /proc/loadavg)\""
stop_neighbour
results=$root/bench/$results_name.json
[ "$pass" != neighbour ] || results=$root/bench/$results_name-neighbour.json
python3 "$here/summarize.py" "$facts" "$results"
