#!/usr/bin/env bash
# The promise about versions (issue 46, item 4): the public API an app compiles against (what
# `import GifPackClient` gives: the client and the modules its Exports.swift re-exports) is
# recorded in api/GifPackClient-<version>.json, a swift-api-digester dump of the last release.
# A change that breaks it (a declaration removed, renamed, retyped, a protocol requirement added…)
# fails unless CHANGELOG.md's `## [Unreleased]` section has a `### Breaking (X.Y.Z)` heading whose
# version raises the baseline's minor number (before 1.0; its major from 1.0 on). Additions never fail.
#
#     scripts/api-check.sh BIN_DIR                      # the built modules against the newest baseline
#     scripts/api-check.sh --dump BIN_DIR OUT.json      # the built modules' API (`make api-baseline`)
#     scripts/api-check.sh --compare BASELINE CURRENT   # two dumps (APIBreakageTests breaks a copy)
#
# BIN_DIR is `swift build --show-bin-path` (its Modules folder). CHANGELOG names another changelog
# (the tests). Prints the breaking changes; exits 0 (nothing breaks, or the break is announced),
# 1 (an unannounced break), 2 (usage, no built client, no baseline). Takes a few seconds: no compile.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
digester=${API_DIGESTER:-swift-api-digester}
command -v "$digester" > /dev/null || { echo "api-check: $digester is not on PATH (it comes with the Swift toolchain)" >&2; exit 2; }
triple=$(swiftc -print-target-info | sed -n 's/^ *"triple": "\(.*\)",*$/\1/p' | head -1)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# `swift-api-digester -dump-sdk` of GifPackClient and of each module its Exports.swift re-exports.
dump() {
  local modules="$1/Modules" out=$2 args=(-module GifPackClient)
  [ -e "$modules/GifPackClient.swiftmodule" ] || { echo "api-check: no GifPackClient.swiftmodule in $modules (swift build first)" >&2; exit 2; }
  for module in $(sed -n 's/^@_exported import \([A-Za-z0-9_]*\).*/\1/p' "$root/Sources/GifPackClient/Exports.swift"); do
    args+=(-module "$module")
  done
  "$digester" -dump-sdk "${args[@]}" -I "$modules" -target "$triple" -o "$out" -avoid-location -avoid-tool-args
}

# The breaking changes of CURRENT against BASELINE, one a line (the digester's section headers and blank lines dropped).
breaks() {
  "$digester" -diagnose-sdk -input-paths "$1" -input-paths "$2" -o "$work/diagnosis.txt" 2> "$work/digester.err" || {
    cat "$work/digester.err" >&2; exit 2
  }
  grep -vE '^\s*$|^/\*.*\*/$' "$work/diagnosis.txt" || true
}

case "${1:-}" in
  --dump)
    [ $# -eq 3 ] || { echo "usage: scripts/api-check.sh --dump BIN_DIR OUT.json" >&2; exit 2; }
    dump "$2" "$3"; exit 0 ;;
  --compare)
    [ $# -eq 3 ] || { echo "usage: scripts/api-check.sh --compare BASELINE CURRENT" >&2; exit 2; }
    baseline=$2; current=$3 ;;
  *)
    [ $# -eq 1 ] || { echo "usage: scripts/api-check.sh BIN_DIR" >&2; exit 2; }
    baseline=$(ls "$root"/api/GifPackClient-*.json 2> /dev/null | sort -V | tail -1)
    [ -n "$baseline" ] || { echo "api-check: no baseline api/GifPackClient-<version>.json" >&2; exit 2; }
    current="$work/current.json"
    dump "$1" "$current" ;;
esac

base_version=$(basename "$baseline" .json | sed -n 's/^GifPackClient-\([0-9]*\.[0-9]*\.[0-9]*\)$/\1/p')
[ -n "$base_version" ] || { echo "api-check: the baseline's name carries no version: $baseline" >&2; exit 2; }
found=$(breaks "$baseline" "$current")
if [ -z "$found" ]; then
  echo "api-check: the public API keeps every declaration of $base_version"
  exit 0
fi
count=$(printf '%s\n' "$found" | wc -l)
# The version a `### Breaking (X.Y.Z)` heading of the [Unreleased] section announces, if any.
changelog=${CHANGELOG:-$root/CHANGELOG.md}
announced=$(awk '/^## \[/{ inside = ($0 ~ /^## \[Unreleased\]/) } inside && /^### Breaking \([0-9]+\.[0-9]+\.[0-9]+\)/' "$changelog" \
  | head -1 | sed 's/^### Breaking (\([0-9.]*\)).*/\1/')
IFS=. read -r bmajor bminor _ <<< "$base_version"
raises=no
if [ -n "$announced" ]; then
  IFS=. read -r amajor aminor _ <<< "$announced"
  if [ "$bmajor" -eq 0 ]; then
    { [ "$amajor" -gt 0 ] || [ "$aminor" -gt "$bminor" ]; } && raises=yes
  else
    [ "$amajor" -gt "$bmajor" ] && raises=yes
  fi
fi
if [ "$raises" = yes ]; then
  echo "api-check: $count breaking changes against $base_version, announced in CHANGELOG.md as $announced"
  exit 0
fi
printf '%s\n' "$found" | head -50
[ "$count" -le 50 ] || echo "… and $((count - 50)) more"
if [ -n "$announced" ]; then
  echo "api-check: $count breaking changes against $base_version; CHANGELOG.md announces $announced, which does not raise the $([ "$bmajor" -eq 0 ] && echo minor || echo major) version" >&2
else
  echo "api-check: $count breaking changes against $base_version, not announced: give CHANGELOG.md's [Unreleased] section a '### Breaking (X.Y.Z)' heading with the next $([ "$bmajor" -eq 0 ] && echo minor || echo major) version, or keep the API" >&2
fi
exit 1
