#!/bin/sh
# The app loader's figures per tier (GIFLoader): median time of an answer from memory, the
# installed packs, the lazy disk cache and the network (one range request to nginx on loopback),
# and of twenty callers asking for one GIF at once (one request). Runs the GIFLoaderBench suite of
# the test build (a debug build: the times are this build's, for comparing tiers with each other)
# and prints a table; the JSON goes to bench/work/loader.json.
# Usage: bench/loader.sh   (after `swift build --build-tests`)
set -eu
cd "$(dirname "$0")/.."
mkdir -p bench/work
out="$PWD/bench/work/loader.json"
rm -f "$out"
GIFPACK_LOADER_BENCH="$out" swift test --skip-build --filter GifPackClientTests.GIFLoaderBench >bench/work/loader.log 2>&1 || {
    tail -20 bench/work/loader.log >&2
    exit 1
}
python3 - "$out" <<'PY'
import json, sys
f = json.load(open(sys.argv[1]))
print(f"loader tiers, median of {int(f['gifs'])} distinct GIFs (frame median {int(f['frameBytesMedian'])} bytes), debug build:")
for key, label in [("memory", "memory hit"), ("installed", "installed packs (read + SHA-256)"),
                   ("lazyCache", "lazy disk cache (read + SHA-256)"), ("network", "network, one range request"),
                   ("coalesced20", "20 callers, one GIF, coalesced")]:
    print(f"  {label:36s} {f[key] / 1000:9.3f} ms")
print(f"  range requests for 20 coalesced callers: {f['coalescedRequests']:.0f}")
PY
