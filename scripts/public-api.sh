#!/usr/bin/env bash
# Counts the public declarations an app sees with one `import GifPackClient`, per module they are
# declared in, and how many of them have no doc comment, from the symbol graph
# (scripts/symbolgraph.sh). PublicAPITests runs it on the test build and holds the total at most
# 150, every one documented (issue 46).
#
#     scripts/public-api.sh BIN_DIR          # "<module> <public> <undocumented>" per module, then "total …"
#     LIST=1 scripts/public-api.sh BIN_DIR   # then each declaration: "<module> <kind> <path> [undocumented]"
#
# A declaration is a symbol of the graph other than an extension block (the members an extension
# adds count one by one): types, their members, protocol requirements, the synthesized `init(rawValue:)`
# and `init(from:)` that Codable and raw values give. Needs jq.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
[ $# -eq 1 ] || { echo "usage: scripts/public-api.sh BIN_DIR" >&2; exit 2; }
graphs=$(mktemp -d)
trap 'rm -rf "$graphs"' EXIT
# GRAPHS names a folder of symbol graphs to count instead (PublicAPITests counts a made-up one).
if [ -n "${GRAPHS:-}" ]; then cp "$GRAPHS"/*.symbols.json "$graphs"/; else "$root/scripts/symbolgraph.sh" "$1" "$graphs"; fi
# Every graph file: the client's own and one per extended module (GifPackClient@Swift.symbols.json, …).
# A member without a source location (a synthesized init(from:) or init(rawValue:)) counts in its
# type's module.
jq -rs '[.[].symbols[] | select(.kind.identifier != "swift.extension")] as $all
       | ($all | map(select(.location) | {key: (.pathComponents | join(".")),
                                          value: (.location.uri | capture("/Sources/(?<m>[^/]+)/").m)}) | from_entries) as $home
       | $all[]
       | [(if .location then (.location.uri | capture("/Sources/(?<m>[^/]+)/").m)
           else ($home[.pathComponents[:-1] | join(".")] // "unknown") end),
          .kind.identifier, (.pathComponents | join(".")), (if .docComment then "documented" else "undocumented" end)]
       | @tsv' "$graphs"/*.symbols.json | sort > "$graphs/list.tsv"
awk -F'\t' '{ n[$1]++; if ($4 == "undocumented") u[$1]++; t++; if ($4 == "undocumented") tu++ }
            END { for (m in n) printf "%s %d %d\n", m, n[m], u[m] + 0; printf "total %d %d\n", t, tu + 0 }' "$graphs/list.tsv" | sort
if [ -n "${LIST:-}" ]; then
  awk -F'\t' '{ printf "%s %s %s%s\n", $1, $2, $3, ($4 == "undocumented" ? " [undocumented]" : "") }' "$graphs/list.tsv"
fi
