#!/bin/sh
# The app loader's figures per tier (GIFLoader): median time of an answer from memory, the
# installed packs, the lazy disk cache and the network (one range request to nginx on loopback),
# and of twenty callers asking for one GIF at once (one request); after a relaunch (a new loader on
# the installed packs, nothing in memory), twenty cells asking at once for twenty exercises against
# one cell alone (median of 9 rounds, each a fresh loader); then the lazy tier's answer at 1,000,
# 10,000 and 100,000 exercises (LazyLookupBench). Runs the GIFLoaderBench and LazyLookupBench suites of
# the test build (a debug build: the times are this build's, for comparing tiers with each other)
# and prints a table; the JSON goes to bench/work/loader.json.
# Usage: bench/loader.sh   (after `swift build --build-tests`)
set -eu
cd "$(dirname "$0")/.."
mkdir -p bench/work
out="$PWD/bench/work/loader.json"
rm -f "$out" "$out.lazy-scale"
GIFPACK_LOADER_BENCH="$out" swift test --skip-build --filter 'GifPackClientTests.(GIFLoaderBench|LazyLookupBench)' >bench/work/loader.log 2>&1 || {
    tail -20 bench/work/loader.log >&2
    exit 1
}
# The lazy tier's figures at scale join the tier figures.
python3 -c 'import json, sys; f = json.load(open(sys.argv[1])); f.update(json.load(open(sys.argv[2]))); json.dump(f, open(sys.argv[1], "w"), indent=2, sort_keys=True)' "$out" "$out.lazy-scale"
# The table render.py writes into bench/README.md (`make bench`), printed.
python3 -c 'import json, sys; sys.path.insert(0, "bench"); import render; print(render.loader_table(json.load(open(sys.argv[1]))))' "$out"
