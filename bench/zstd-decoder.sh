#!/usr/bin/env bash
# Decode throughput of GifPackZstd (the pure-Swift zstd decoder) against libzstd, in-process, on the
# same frames: one frame per GIF, as in a pack. Prints MB/s of both and the ratio (thread CPU time,
# best of N passes; wall time in brackets) and one JSON line per frames file.
#
#   bench/zstd-decoder.sh [--real-data DIR] [--pack FILE]... [--levels "3 19"] [--iterations N] [--bin DIR]
#
# Frames: --pack FILE benches FILE as it is (a gifpack pack, or any back-to-back zstd frames that
# declare their sizes). Otherwise the GIFs of --real-data DIR (a real-sample folder: DIR/gifs or
# DIR/exercisedb-sample/gifs or DIR itself; BENCH_REAL_DATA) are compressed one frame per GIF with
# `zstd -LEVEL` for each level; without real data, 200 realistic synthetic GIFs are dumped by the
# fixture (`exercisedb-fixture --dump-gifs`, from --bin DIR or .build/release).
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
real_data=${BENCH_REAL_DATA:-}
levels="3 19"
iterations=7
bin=${BENCH_BIN:-$root/.build/release}
packs=()
while [ $# -gt 0 ]; do
  case $1 in
    --real-data) real_data=$2; shift 2 ;;
    --pack) packs+=("$2"); shift 2 ;;
    --levels) levels=$2; shift 2 ;;
    --iterations) iterations=$2; shift 2 ;;
    --bin) bin=$2; shift 2 ;;
    -h|--help) sed -n '2,13p' "$0"; exit 0 ;;
    *) echo "bench/zstd-decoder.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
command -v zstd >/dev/null || { echo "bench/zstd-decoder.sh: the zstd tool is missing (make deps)" >&2; exit 2; }

work=$(mktemp -d "${TMPDIR:-/tmp}/gifpack-zstd-bench.XXXXXX")
trap 'rm -rf "$work"' EXIT

if [ ${#packs[@]} -eq 0 ]; then
  gifs=""
  if [ -n "$real_data" ]; then
    for candidate in "$real_data/exercisedb-sample/gifs" "$real_data/gifs" "$real_data"; do
      if compgen -G "$candidate/*.gif" >/dev/null; then gifs=$candidate; break; fi
    done
    [ -n "$gifs" ] || { echo "bench/zstd-decoder.sh: no .gif files under $real_data" >&2; exit 2; }
  else
    [ -x "$bin/exercisedb-fixture" ] || { echo "bench/zstd-decoder.sh: $bin/exercisedb-fixture is missing (make build, or --real-data DIR)" >&2; exit 2; }
    gifs=$work/gifs
    mkdir -p "$gifs"
    "$bin/exercisedb-fixture" --realistic --count 200 --dump-gifs "$gifs" >/dev/null
  fi
  echo "GIFs: $gifs ($(ls "$gifs" | wc -l) files, $(du -sh "$gifs" | cut -f1))"
  for level in $levels; do
    frames=$work/frames-$level.zst
    for gif in "$gifs"/*.gif; do zstd -q -T1 "-$level" -c "$gif" >> "$frames"; done
    packs+=("$frames")
  done
fi

GIFPACK_INTERNAL_PRODUCTS=1 swift build -c release --package-path "$here/zstd-bench" 2>&1 | grep -E "error|warning: " >&2 || true
tool=$(GIFPACK_INTERNAL_PRODUCTS=1 swift build -c release --package-path "$here/zstd-bench" --show-bin-path)/zstd-bench
[ -x "$tool" ] || { echo "bench/zstd-decoder.sh: building bench/zstd-bench failed" >&2; exit 1; }
for pack in "${packs[@]}"; do
  echo "== $(basename "$pack")"
  "$tool" "$pack" "$iterations"
done
