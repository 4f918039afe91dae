#!/usr/bin/env bash
# Where the WebP rendition's CPU time goes, stage by stage, on real GIFs: decoding the GIF, encoding
# rung q75 with and without mixed frames, decoding the WebP back, the SSIM of the frames (and the
# direct filter it replaced, checked equal), the comparison and the whole rendition; thread CPU
# time, best of N passes, per GIF and on average. Builds GifPackWebP in release and links
# bench/webp-timing/main.swift against its objects (swiftc -O, the package's own package name).
#
#   bench/webp-timing.sh [--real-data DIR] [--count N] [--passes N]
#
# DIR is the real sample (DIR/exercisedb-sample/gifs, DIR/gifs or DIR; BENCH_REAL_DATA); the first
# N GIFs by name (default 12) are timed.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
real_data=${BENCH_REAL_DATA:-}
count=12
passes=3
while [ $# -gt 0 ]; do
  case $1 in
    --real-data) real_data=$2; shift 2 ;;
    --count) count=$2; shift 2 ;;
    --passes) passes=$2; shift 2 ;;
    -h|--help) sed -n '2,10p' "$0"; exit 0 ;;
    *) echo "bench/webp-timing.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
[ -n "$real_data" ] || { echo "bench/webp-timing.sh: --real-data DIR (or BENCH_REAL_DATA) is required" >&2; exit 2; }
gifs=""
for candidate in "$real_data/exercisedb-sample/gifs" "$real_data/gifs" "$real_data"; do
  if compgen -G "$candidate/*.gif" >/dev/null; then gifs=$candidate; break; fi
done
[ -n "$gifs" ] || { echo "bench/webp-timing.sh: no .gif files under $real_data" >&2; exit 2; }

swift build -c release --static-swift-stdlib --package-path "$root" --target GifPackWebP 2>&1 | grep -E "error|warning: " >&2 || true
release=$(swift build -c release --static-swift-stdlib --package-path "$root" --show-bin-path)
work=$(mktemp -d "${TMPDIR:-/tmp}/gifpack-webp-timing.XXXXXX")
trap 'rm -rf "$work"' EXIT
objects=()
for module in GifPackSystem GifPackGIFCore GifPackGIF GifPackWebP; do
  objects+=("$release/$module.build/"*.o)
done
swiftc -O -swift-version 6 -package-name "$(basename "$root" | tr '[:upper:]-' '[:lower:]_')" \
  -I "$release/Modules" -I "$root/Sources/CGif" -I "$root/Sources/CWebP" \
  "$here/webp-timing/main.swift" "${objects[@]}" -lgif -lwebpmux -lwebpdemux -lwebp -o "$work/webp-timing"
mapfile -t files < <(ls "$gifs"/*.gif | head -n "$count")
"$work/webp-timing" --passes "$passes" "${files[@]}"
