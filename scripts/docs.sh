#!/usr/bin/env bash
# Builds the DocC documentation of GifPackClient (Sources/GifPackClient/GifPackClient.docc and the
# doc comments of what `import GifPackClient` gives an app) with warnings as errors: a broken
# ``symbol link`` or <doc:article> link fails it.
#
#     scripts/docs.sh BIN_DIR OUT_DIR        # `make docs` runs it with `swift build --show-bin-path` and .build/docs
#
# BIN_DIR is where `swift build` put the modules (GifPackClient.swiftmodule in BIN_DIR/Modules): the
# symbol graph is read from the built module with the toolchain's swift-symbolgraph-extract, so no
# module is compiled again and no flag of the normal build changes (the package declares no
# documentation plugin an app would have to resolve): scripts/symbolgraph.sh, which
# scripts/public-api.sh counts too. The module the client re-exports (the transport) is documented
# as part of it, as an app sees it. OUT_DIR is replaced by a static-hosting DocC archive
# (OUT_DIR/documentation/gifpackclient/…/index.html). Exits 1 on any warning, 2 when BIN_DIR has no
# built client. DOCS_CATALOG names another catalog folder (the tests break a copy on purpose).
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
[ $# -eq 2 ] || { echo "usage: scripts/docs.sh BIN_DIR OUT_DIR" >&2; exit 2; }
bin=$1
out=$2
modules="$bin/Modules"
[ -e "$modules/GifPackClient.swiftmodule" ] || {
  echo "docs: no GifPackClient.swiftmodule in $modules (build it first: swift build --target GifPackClient)" >&2
  exit 2
}
docc=${DOCC:-docc}
command -v "$docc" > /dev/null || { echo "docs: $docc is not on PATH (it comes with the Swift toolchain)" >&2; exit 2; }

graphs=$(mktemp -d)
trap 'rm -rf "$graphs"' EXIT
# The symbol graph of what `import GifPackClient` gives an app (the client and the modules it
# re-exports), the one scripts/public-api.sh counts.
"$root/scripts/symbolgraph.sh" "$bin" "$graphs"

rm -rf "$out"
mkdir -p "$(dirname "$out")"
# docc prints its diagnostics (on standard output); --warnings-as-errors makes any of them fail the build.
"$docc" convert "${DOCS_CATALOG:-$root/Sources/GifPackClient/GifPackClient.docc}" --additional-symbol-graph-dir "$graphs" \
  --output-path "$out" --fallback-display-name GifPackClient --fallback-bundle-identifier gifpack.GifPackClient \
  --warnings-as-errors
echo "docs: $out/documentation/gifpackclient/index.html"
