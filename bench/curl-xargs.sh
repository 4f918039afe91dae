#!/usr/bin/env bash
# The script a user would write instead of gifpack, timed by bench/run.sh against the same server:
# page through /exercises with curl + jq, fetch one GIF per curl process (3 at a time, xargs -P3),
# refuse a response whose Content-Type is not image/gif, then pack everything with tar | zstd.
# No retries, no deduplication, no GIF decoding, no incremental rebuild.
#
#   bench/curl-xargs.sh BASE_URL API_KEY WORK_DIR OUTPUT.tar.zst
#
# Prints the seconds of each phase on stderr ("phase list 0.31"). Exits 1 when a GIF is refused.
set -euo pipefail

base=$1 key=$2 work=$3 output=$4
page_size=100
mkdir -p "$work/gifs"
: > "$work/ids"

started=$EPOCHREALTIME
offset=0
while :; do
  page=$(curl -fsS --compressed -H "X-RapidAPI-Key: $key" "$base/exercises?limit=$page_size&offset=$offset")
  jq -r '.[].id' <<<"$page" >> "$work/ids"
  [ "$(jq length <<<"$page")" -lt "$page_size" ] && break
  offset=$((offset + page_size))
done
listed=$EPOCHREALTIME

export base key work
xargs -P3 -I{} bash -c '
  type=$(curl -fsS -H "X-RapidAPI-Key: $key" -o "$work/gifs/{}.gif" -w "%{content_type}" \
    "$base/image?exerciseId={}&resolution=180") || { echo "failed: {}" >&2; exit 1; }
  [ "$type" = image/gif ] || { rm -f "$work/gifs/{}.gif"; echo "not a GIF ($type): {}" >&2; exit 1; }
' < "$work/ids"
fetched=$EPOCHREALTIME

tar -cf - -C "$work" gifs | zstd -q -9 -T0 -o "$output"
packed=$EPOCHREALTIME

awk -v a="$started" -v b="$listed" -v c="$fetched" -v d="$packed" \
  'BEGIN { printf "phase list %.3f\nphase fetch %.3f\nphase pack %.3f\n", b - a, c - b, d - c }' >&2
