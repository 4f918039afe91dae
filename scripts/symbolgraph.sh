#!/usr/bin/env bash
# Extracts the symbol graph of what `import GifPackClient` gives an app: the client's public
# declarations and those of the modules it re-exports (@_exported), read from the built module
# with the toolchain's swift-symbolgraph-extract (no module is compiled again).
#
#     scripts/symbolgraph.sh BIN_DIR OUT_DIR     # OUT_DIR/GifPackClient.symbols.json (and extension graphs)
#
# BIN_DIR is where `swift build` put the modules (`swift build --show-bin-path`). scripts/docs.sh
# documents this graph; scripts/public-api.sh counts it. REEXPORTED overrides the list of
# re-exported modules (to count an older build, whose client re-exported more). Exits 2 when
# BIN_DIR has no built client.
set -euo pipefail

[ $# -eq 2 ] || { echo "usage: scripts/symbolgraph.sh BIN_DIR OUT_DIR" >&2; exit 2; }
modules="$1/Modules"
out=$2
[ -e "$modules/GifPackClient.swiftmodule" ] || {
  echo "symbolgraph: no GifPackClient.swiftmodule in $modules (build it first: swift build --target GifPackClient)" >&2
  exit 2
}
extract=${SYMBOLGRAPH_EXTRACT:-swift-symbolgraph-extract}
command -v "$extract" > /dev/null || { echo "symbolgraph: $extract is not on PATH (it comes with the Swift toolchain)" >&2; exit 2; }
# The modules whose public declarations an app gets from `import GifPackClient` (Exports.swift):
# their symbols appear in the client's graph while they are re-exported.
reexported=${REEXPORTED:-GifPackTransport}
triple=$(swiftc -print-target-info | sed -n 's/^ *"triple": "\(.*\)",*$/\1/p' | head -1)
mkdir -p "$out"
"$extract" -module-name GifPackClient -target "$triple" -I "$modules" -output-dir "$out" \
  -minimum-access-level public -skip-synthesized-members -emit-extension-block-symbols \
  -experimental-allowed-reexported-modules="$reexported"
