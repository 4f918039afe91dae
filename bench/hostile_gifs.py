#!/usr/bin/env python3
"""Writes a fixture data folder (the layout of `exercisedb-fixture --real-data`: catalog-rapidapi.json,
catalog-v1.json, images.csv, gifs/<sha256>.gif) of small hostile GIFs for bench/run.sh, part 8: a
4096x4096 logical screen and 1,000-5,000 blank 1x1 frames (white or transparent pixels, every
disposal method in turn), 23-115 KB each. Decoding their stills once cost a pass over the whole
screen per frame (minutes and 209 MB each, issue 25 item 4). The catalog records are made up here.

    python3 bench/hostile_gifs.py OUT_DIR
"""
import hashlib
import json
import os
import random
import struct
import sys

SIDE = 4096


def gif(frames, seed, disposals=(0, 1, 2, 3), last_black=False):
    """GIF89a, global palette white, black, red, blue; `frames` 1x1 frames at random places."""
    rng = random.Random(seed)
    out = bytearray(b"GIF89a" + struct.pack("<HHBBB", SIDE, SIDE, 0xF1, 0, 0))
    out += bytes([255, 255, 255, 0, 0, 0, 220, 30, 30, 10, 20, 200])
    for index in range(frames):
        left, top = rng.randrange(SIDE), rng.randrange(SIDE)
        transparent = index % 5 == 4
        pixel = 1 if transparent else 0
        disposal = disposals[index % len(disposals)]
        if last_black and index == frames - 1:
            left = top = SIDE - 1
            pixel, transparent, disposal = 1, False, 0
        out += bytes([0x21, 0xF9, 4, (disposal << 2) | (1 if transparent else 0), 10, 0, 1 if transparent else 0, 0])
        out += b"\x2C" + struct.pack("<HHHHB", left, top, 1, 1, 0)
        # LZW, minimum code size 2, 3-bit codes: clear (4), the pixel, end (5).
        code = 4 | (pixel << 3) | (5 << 6)
        out += bytes([2, 2, code & 0xFF, code >> 8, 0])
    out += b"\x3B"
    return bytes(out)


VARIANTS = [
    ("1,000 blank frames", dict(frames=1000, seed=1)),
    ("5,000 blank frames", dict(frames=5000, seed=2)),
    ("5,000 frames, disposal 3 throughout", dict(frames=5000, seed=3, disposals=(3,))),
    ("4,999 blank frames, then a black pixel", dict(frames=5000, seed=4, last_black=True)),
]


def main(argv):
    if len(argv) != 1 or argv[0].startswith("-"):
        print(__doc__.strip())
        return 2
    out = argv[0]
    os.makedirs(os.path.join(out, "gifs"), exist_ok=True)
    exercises, rows = [], ["api,id,sha256"]
    for number, (name, options) in enumerate(VARIANTS, start=1):
        data = gif(**options)
        sha = hashlib.sha256(data).hexdigest()
        with open(os.path.join(out, "gifs", f"{sha}.gif"), "wb") as file:
            file.write(data)
        ident = f"{number:04d}"
        exercises.append({"bodyPart": "waist", "equipment": "body weight", "id": ident, "name": f"hostile: {name}",
                          "target": "abs", "secondaryMuscles": [], "instructions": ["Decode the still."],
                          "description": f"{len(data)} bytes, 4096x4096 screen, {name}.",
                          "difficulty": "beginner", "category": "strength"})
        rows.append(f"rapidapi,{ident},{sha}")
    with open(os.path.join(out, "catalog-rapidapi.json"), "w") as file:
        json.dump(exercises, file)
    with open(os.path.join(out, "catalog-v1.json"), "w") as file:
        json.dump([], file)
    with open(os.path.join(out, "images.csv"), "w") as file:
        file.write("\n".join(rows) + "\n")
    print(len(VARIANTS))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
