#!/usr/bin/env python3
"""The bytes an upgrade needs, from the index a client holds and the one it upgrades to (issue 28).

Usage: bench/delivery_needed.py OLD_INDEX.json NEW_INDEX.json SITE_DIR

Needed, for every pack of the new index whose file differs from the old one's: the frames of the GIFs
the old index does not list (by SHA-256), the pack's catalog frame; for its posters pack, when that
changed too, the frames of the posters the old one does not list (by path, which names size and GIF
hash) and the posters catalog frame. Plus the index as published (`index.json.zst` when the site has
one, else `index.json`) and its signature (`signatures/<sha256 of index.json>.minisig`, else
`index.json.minisig`), when the site has one. Nothing is needed when the two indexes are the same
bytes. Output: one JSON object with the parts and their total, in bytes and in frames.
"""
import hashlib
import json
import os
import sys


def load(path):
    with open(path, "rb") as handle:
        data = handle.read()
    return data, json.loads(data)


def main(argv):
    if len(argv) != 4:
        print(__doc__, file=sys.stderr)
        return 2
    old_bytes, old = load(argv[1])
    new_bytes, new = load(argv[2])
    site = argv[3]
    parts = {"gif_frames": 0, "gif_frame_count": 0, "catalog_frames": 0, "poster_frames": 0,
             "poster_frame_count": 0, "posters_catalog_frames": 0, "index": 0, "signature": 0}
    if old_bytes != new_bytes:
        old_packs = {pack["name"]: pack for pack in old.get("packs", [])}
        for pack in new.get("packs", []):
            before = old_packs.get(pack["name"], {})
            if before.get("file") != pack["file"]:
                held = {gif["sha256"] for gif in before.get("gifs", [])}
                for gif in pack.get("gifs", []):
                    if gif["sha256"] not in held:
                        parts["gif_frames"] += gif["location"]["frameLength"]
                        parts["gif_frame_count"] += 1
                parts["catalog_frames"] += pack["catalog"]["frameLength"]
            posters, posters_before = pack.get("posters"), before.get("posters") or {}
            if posters and posters_before.get("file") != posters["file"]:
                held = {poster["path"] for poster in posters_before.get("posters", [])}
                for poster in posters.get("posters", []):
                    if poster["path"] not in held:
                        parts["poster_frames"] += poster["frameLength"]
                        parts["poster_frame_count"] += 1
                parts["posters_catalog_frames"] += posters["catalog"]["frameLength"]
        compressed = os.path.join(site, "index.json.zst")
        parts["index"] = os.path.getsize(compressed) if os.path.exists(compressed) else len(new_bytes)
        digest = hashlib.sha256(new_bytes).hexdigest()
        for name in (os.path.join(site, "signatures", f"{digest}.minisig"), os.path.join(site, "index.json.minisig")):
            if os.path.exists(name):
                parts["signature"] = os.path.getsize(name)
                break
    total = sum(value for key, value in parts.items() if not key.endswith("_count"))
    print(json.dumps(dict(parts, total=total)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
