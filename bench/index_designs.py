#!/usr/bin/env python3
"""Measure where the index should go next (issue 28, item 4): one index against a root index.

Usage: bench/index_designs.py INDEX.json [--packs "1 10"] [--zstd-level 19]

Design A, today's: one `index.json` naming every pack and, per pack, every GIF (with its placeholder),
poster and exercise; published with a zstd copy `index.json.zst` beside it.

Design B, the candidate: a small root index naming a per-pack index by content hash
(`indexes/<sha256>.json`, immutable, cacheable forever), each holding one pack's `gifs`, `posters`
and `exercises`; the root keeps the rest of each pack's description, the sequence and the expiry, and
would carry the signature.

The index is split into K packs to model a catalog published as K packs (exercises grouped by the
first byte of their GIF's hash, so each group keeps its GIFs); K = 1 is the index as built. For each K
it prints, per design, the compressed bytes a client downloads (bodies only, what nginx logs as
`$body_bytes_sent`) for:
  - an unchanged daily check without conditional requests (with them both designs cost a 304 and no
    body: only the request and its headers),
  - an upgrade in which one pack changed,
  - an upgrade in which every pack changed (a 10 % upgrade spreads over all of them).
Compression uses the `zstd` tool at the given level, the same frame as the published copy.
Output: one JSON object on standard output.
"""
import hashlib
import json
import subprocess
import sys


def compact(value):
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


def pretty(value):
    # The index's own layout: sorted keys, two-space indentation, `"key" : value`, trailing newline.
    return (json.dumps(value, sort_keys=True, indent=2, separators=(",", " : "), ensure_ascii=False) + "\n").encode()


def zstd_size(data, level):
    result = subprocess.run(["zstd", f"-{level}", "-q", "-c", "--no-progress"], input=data,
                            stdout=subprocess.PIPE, check=True)
    return len(result.stdout)


def split_pack(pack, k):
    """One built pack as K packs: exercises grouped by their GIF hash's first byte modulo K."""
    if k == 1:
        return [pack]
    groups = [{"gifs": [], "exercises": [], "posters": []} for _ in range(k)]

    def group_of(sha):
        return int(sha[:2], 16) % k if sha else 0

    for gif in pack.get("gifs", []):
        groups[group_of(gif["sha256"])]["gifs"].append(gif)
    for exercise in pack.get("exercises", []):
        groups[group_of(exercise.get("gif"))]["exercises"].append(exercise)
    posters = pack.get("posters") or {}
    for poster in posters.get("posters", []):
        # poster paths are posters/<size>/<sha256>.gif
        sha = poster.get("path", "").rsplit("/", 1)[-1][:64]
        groups[group_of(sha)]["posters"].append(poster)
    packs = []
    for number, group in enumerate(groups):
        part = dict(pack)
        part["name"] = f"{pack['name']}-{number:02d}"
        part["gifs"] = group["gifs"]
        part["exercises"] = group["exercises"]
        if posters:
            part["posters"] = dict(posters, posters=group["posters"])
        packs.append(part)
    return packs


def measure(index, k, level):
    packs = [part for pack in index.get("packs", []) for part in split_pack(pack, k)]
    single = dict(index, packs=packs)
    single_plain = pretty(single)
    single_zst = zstd_size(single_plain, level)

    root_packs, pack_indexes = [], []
    for pack in packs:
        detail = {key: pack[key] for key in ("gifs", "exercises") if key in pack}
        if pack.get("posters"):
            detail["posters"] = pack["posters"].get("posters", [])
        body = compact(detail)
        digest = hashlib.sha256(body).hexdigest()
        pack_indexes.append(zstd_size(body, level))
        summary = {key: value for key, value in pack.items() if key not in ("gifs", "exercises")}
        if pack.get("posters"):
            summary["posters"] = {key: value for key, value in pack["posters"].items() if key != "posters"}
        summary["index"] = {"path": f"indexes/{digest}.json", "bytes": len(body), "sha256": digest}
        root_packs.append(summary)
    root = dict(index, packs=root_packs)
    root_zst = zstd_size(pretty(root), level)
    largest = max(pack_indexes) if pack_indexes else 0
    return {
        "packs": len(packs),
        "single": {"plain_bytes": len(single_plain), "zst_bytes": single_zst,
                   "unchanged_check_unconditional": single_zst,
                   "one_pack_upgrade": single_zst, "every_pack_upgrade": single_zst},
        "root": {"root_zst_bytes": root_zst, "pack_index_zst_bytes_total": sum(pack_indexes),
                 "pack_index_zst_bytes_largest": largest,
                 "unchanged_check_unconditional": root_zst,
                 "one_pack_upgrade": root_zst + largest,
                 "every_pack_upgrade": root_zst + sum(pack_indexes)},
    }


def main(argv):
    if len(argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    path, ks, level = argv[1], [1, 10], 19
    rest = argv[2:]
    while rest:
        if rest[0] == "--packs" and len(rest) > 1:
            ks = [int(x) for x in rest[1].split()]
            rest = rest[2:]
        elif rest[0] == "--zstd-level" and len(rest) > 1:
            level = int(rest[1])
            rest = rest[2:]
        else:
            print(f"index_designs.py: unknown argument {rest[0]}", file=sys.stderr)
            return 2
    with open(path, "rb") as handle:
        index = json.load(handle)
    exercises = sum(len(pack.get("exercises", [])) for pack in index.get("packs", []))
    print(json.dumps({"exercises": exercises, "zstd_level": level,
                      "designs": [measure(index, k, level) for k in ks]}))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
