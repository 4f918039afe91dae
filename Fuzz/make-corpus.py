#!/usr/bin/env python3
"""Writes the seed corpora in Fuzz/corpus/<target>/ (small files: a few valid inputs and a few edge
cases per target). Run from anywhere: python3 Fuzz/make-corpus.py. Needs zstd and minisign (make deps), and
webp's gif2webp and cwebp (make test-deps).

Valid artifacts in Fuzz/seeds/ were made with this project's own tools: `exercisedb-fixture --count 5`
(list pages, GIFs, response heads) and `gifpack build` of a two-pack manifest against it, signed with a
throwaway key from `gifpack keygen` (index.json, its signature, catalogs, packs). Everything else is
made here. Nothing comes from real ExerciseDB data.
"""
import json, os, struct, subprocess, tarfile, io, tempfile, shutil, base64

HERE = os.path.dirname(os.path.abspath(__file__))
SEEDS = os.path.join(HERE, "seeds")
CORPUS = os.path.join(HERE, "corpus")


def seed(name):
    with open(os.path.join(SEEDS, name), "rb") as f:
        return f.read()


def put(target, name, data):
    folder = os.path.join(CORPUS, target)
    os.makedirs(folder, exist_ok=True)
    if isinstance(data, str):
        data = data.encode()
    with open(os.path.join(folder, name), "wb") as f:
        f.write(data)


# ---------------------------------------------------------------- GIF
def lzw(indices, min_code_size):
    """A plain GIF LZW encoder (variable width up to 12 bits, clear when the table is full)."""
    clear, end = 1 << min_code_size, (1 << min_code_size) + 1
    out, bits, nbits = bytearray(), 0, 0
    width = min_code_size + 1

    def emit(code):
        nonlocal bits, nbits
        bits |= code << nbits
        nbits += width
        while nbits >= 8:
            out.append(bits & 0xFF)
            bits >>= 8
            nbits -= 8

    table = {(i,): i for i in range(clear)}
    next_code = end + 1
    emit(clear)
    w = ()
    for k in indices:
        wk = w + (k,)
        if wk in table:
            w = wk
            continue
        emit(table[w])
        if next_code < 4096:
            table[wk] = next_code
            next_code += 1
            if next_code > (1 << width) and width < 12:
                width += 1
        else:
            emit(clear)
            table = {(i,): i for i in range(clear)}
            next_code = end + 1
            width = min_code_size + 1
        w = (k,)
    if w:
        emit(table[w])
    emit(end)
    if nbits:
        out.append(bits & 0xFF)
    return bytes(out)


def sub_blocks(data, size=255):
    out = bytearray()
    for i in range(0, len(data), size):
        chunk = data[i:i + size]
        out += bytes([len(chunk)]) + chunk
    return bytes(out) + b"\x00"


def palette(n):
    return b"".join(bytes([(i * 67) % 256, (i * 131) % 256, (i * 29) % 256]) for i in range(n))


def gif(width, height, frames, version=b"89a", global_colors=4, loop=0, comment=None):
    """frames: dicts with w, h, left, top, pixels, delay, disposal, transparent, local_colors, interlaced."""
    size_bits = max(1, (global_colors - 1).bit_length()) if global_colors else 1
    flags = (0x80 | (size_bits - 1)) if global_colors else 0
    out = bytearray(b"GIF" + version + struct.pack("<HHBBB", width, height, flags | 0x70, 0, 0))
    if global_colors:
        out += palette(1 << size_bits)
    if loop is not None:
        out += b"\x21\xFF\x0BNETSCAPE2.0\x03\x01" + struct.pack("<H", loop) + b"\x00"
    if comment is not None:
        out += b"\x21\xFE" + sub_blocks(comment)
    for frame in frames:
        transparent = frame.get("transparent")
        packed = (frame.get("disposal", 0) << 2) | (1 if transparent is not None else 0)
        out += b"\x21\xF9\x04" + struct.pack("<BHB", packed, frame.get("delay", 10), transparent or 0) + b"\x00"
        local = frame.get("local_colors", 0)
        lbits = max(1, (local - 1).bit_length()) if local else 0
        iflags = (0x80 | (lbits - 1) if local else 0) | (0x40 if frame.get("interlaced") else 0)
        out += b"\x2C" + struct.pack("<HHHHB", frame.get("left", 0), frame.get("top", 0), frame["w"], frame["h"], iflags)
        if local:
            out += palette(1 << lbits)
        colors = max(2, 1 << (lbits or size_bits))
        code_size = max(2, (colors - 1).bit_length())
        out += bytes([code_size]) + sub_blocks(lzw(frame["pixels"], code_size))
    return bytes(out + b"\x3B")


def pattern(w, h, colors, shift=0):
    return [((x + y + shift) % colors) for y in range(h) for x in range(w)]


def gifs():
    g = {}
    g["one-frame"] = gif(4, 4, [dict(w=4, h=4, pixels=pattern(4, 4, 4))])
    g["two-frames-disposal"] = gif(8, 6, [
        dict(w=8, h=6, pixels=[0] * 48, transparent=0, disposal=2, delay=5),
        dict(w=4, h=3, left=2, top=2, pixels=pattern(4, 3, 4, 1), disposal=3, delay=7),
        dict(w=2, h=2, left=6, top=4, pixels=[1, 2, 3, 1], transparent=3, disposal=1)], loop=3)
    g["interlaced-local-palette"] = gif(5, 9, [dict(w=5, h=9, pixels=pattern(5, 9, 16), interlaced=True, local_colors=16)],
                                        comment=b"made by Fuzz/make-corpus.py")
    g["gif87a-no-global"] = gif(3, 2, [dict(w=3, h=2, pixels=pattern(3, 2, 2), local_colors=2)], version=b"87a",
                                global_colors=0, loop=None)
    g["blank-then-drawn"] = gif(6, 6, [dict(w=6, h=6, pixels=[1] * 36), dict(w=6, h=6, pixels=pattern(6, 6, 4))])
    long_run = gif(40, 40, [dict(w=40, h=40, pixels=[i % 2 for i in range(1600)])])
    g["table-fills"] = gif(64, 64, [dict(w=64, h=64, pixels=[(i * 7 + i // 64) % 256 for i in range(4096)],
                                         local_colors=256)])
    g["frame-outside-screen"] = gif(4, 4, [dict(w=4, h=4, left=2, top=2, pixels=pattern(4, 4, 4))])
    g["truncated"] = long_run[:len(long_run) // 2]
    g["no-trailer"] = long_run[:-1]
    g["small"] = seed("small.gif")
    g["poster"] = seed("poster.gif")
    g["fixture-0007"] = seed("fixture-0007.gif")
    return g


# ---------------------------------------------------------------- WebP
def chunk(code, data):
    return code + struct.pack("<I", len(data)) + data + (b"\0" if len(data) % 2 else b"")


def riff(chunks):
    body = b"".join(chunks)
    return b"RIFF" + struct.pack("<I", len(body) + 4) + b"WEBP" + body


def le24(value):
    return struct.pack("<I", value)[:3]


def vp8l(width, height, filler=9):
    bits = (width - 1) | (height - 1) << 14
    return chunk(b"VP8L", b"\x2f" + struct.pack("<I", bits) + b"\x5a" * filler)


def vp8(width, height, filler=12):
    tag = 1 << 4 | 10 << 5  # key frame, version 0, shown, first partition of 10 bytes
    return chunk(b"VP8 ", struct.pack("<I", tag)[:3] + b"\x9d\x01\x2a" + struct.pack("<HH", width, height) + b"\xa5" * filler)


def vp8x(width, height, animation, alpha=False):
    flags = (2 if animation else 0) | (0x10 if alpha else 0)
    return chunk(b"VP8X", bytes([flags, 0, 0, 0]) + le24(width - 1) + le24(height - 1))


def anmf(width, height, duration, image, x=0, y=0):
    return chunk(b"ANMF", le24(x // 2) + le24(y // 2) + le24(width - 1) + le24(height - 1) + le24(duration) + b"\0" + image)


def webps():
    """Containers written by hand (the layouts WebPWalker accepts, and a few it refuses), then real
    files from libwebp's own tools (Debian's webp: gif2webp, cwebp) made from the GIF seeds."""
    animated = riff([vp8x(16, 12, True), chunk(b"ANIM", b"\xff\xff\xff\xff\x00\x00"),
                     anmf(16, 12, 80, vp8l(16, 12)), anmf(8, 6, 80, chunk(b"ALPH", b"\0\1") + vp8(8, 6), x=4, y=2)])
    found = {
        "animated": animated,
        "still-lossless": riff([vp8l(7, 5)]),
        "still-lossy": riff([vp8(7, 5)]),
        "still-extended": riff([vp8x(7, 5, False, True), chunk(b"ALPH", b"\0\9"), vp8(7, 5)]),
        "frame-past-canvas": riff([vp8x(8, 8, True), chunk(b"ANIM", b"\0" * 6), anmf(8, 8, 10, vp8l(8, 8), x=2)]),
        "truncated": animated[:-7],
        "trailing": animated + b"\0\0",
    }
    work = tempfile.mkdtemp()
    try:
        for name in ["fixture-0007", "small"]:
            out = os.path.join(work, name + ".webp")
            subprocess.run(["gif2webp", "-quiet", "-mixed", os.path.join(SEEDS, name + ".gif"), "-o", out], check=True)
            with open(out, "rb") as f:
                found["gif2webp-" + name] = f.read()
        ppm = os.path.join(work, "still.ppm")
        with open(ppm, "wb") as f:
            f.write(b"P6\n7 5\n255\n" + bytes((i * 37) % 256 for i in range(105)))
        for name, flags in [("cwebp-lossy", ["-q", "80"]), ("cwebp-lossless", ["-lossless"])]:
            out = os.path.join(work, name + ".webp")
            subprocess.run(["cwebp", "-quiet"] + flags + [ppm, "-o", out], check=True)
            with open(out, "rb") as f:
                found[name] = f.read()
    finally:
        shutil.rmtree(work)
    return found


# ---------------------------------------------------------------- tar and zstd
def ustar(name, data, typeflag=b"0", prefix=""):
    info = tarfile.TarInfo(name)
    info.size = len(data)
    info.mtime = 1700000000
    info.mode = 0o644
    info.type = typeflag
    block = info.tobuf(format=tarfile.USTAR_FORMAT)
    if prefix:
        block = bytearray(block)
        block[345:345 + len(prefix)] = prefix.encode()
        block[148:156] = b" " * 8
        block[148:155] = ("%06o\0" % sum(block)).encode()
        block = bytes(block)
    pad = (512 - len(data) % 512) % 512
    return block + data + b"\0" * pad


def zstd(data, *flags):
    with tempfile.NamedTemporaryFile() as f:
        f.write(data)
        f.flush()
        return subprocess.run(["zstd", "-q", "-c", "-3", *flags, f.name], check=True, capture_output=True).stdout


# ---------------------------------------------------------------- minisign
def minisign_files():
    work = tempfile.mkdtemp()
    try:
        pub, sec, msg = (os.path.join(work, n) for n in ("k.pub", "k.key", "m"))
        subprocess.run(["minisign", "-G", "-W", "-p", pub, "-s", sec], check=True, capture_output=True)
        with open(msg, "wb") as f:
            f.write(b'{"formatVersion":"1.2"}')
        subprocess.run(["minisign", "-S", "-s", sec, "-m", msg, "-t", "timestamp:0\tfile:index.json"], check=True,
                       capture_output=True)
        prehashed = open(msg + ".minisig", "rb").read()
        subprocess.run(["minisign", "-S", "-l", "-s", sec, "-m", msg, "-x", msg + ".legacy"], check=True, capture_output=True)
        legacy = open(msg + ".legacy", "rb").read()
        return open(pub, "rb").read(), open(sec, "rb").read(), prehashed, legacy
    finally:
        shutil.rmtree(work)


def main():
    shutil.rmtree(CORPUS, ignore_errors=True)

    # json
    for name, text in {
        "object": '{"id":"0001","n":[1,2.5,-0,1e5,-1.25E-3],"t":true,"f":false,"z":null}',
        "escapes": r'{"s":"a\"b\\c\/d\b\f\n\r\t\u00e9\ud83d\ude00","k\u0000":""}',
        "nested": "[" * 15 + "1" + "]" * 15,
        "too-deep": "[" * 17 + "]" * 17,
        "numbers": "[9223372036854775807,-9223372036854775808,9223372036854775808,1e400,0.1,123456789012345678901234567890]",
        "discarded": '{"a":[{"b":[1,2]},"x"],"exercises":[{"id":"1"}],"c":{"a":[3]}}',
        "lone-surrogate": r'["\ud800","\udc00x"]',
        "duplicate-keys": '{"a":1,"a":2}',
        "trailing": '{"a":1} x',
        "bad-utf8": b'["\xff\xfe"]',
        "bom-space": '\ufeff [ ] ',
        # found by make fuzz: canonical JSON of a number just below Int64.min was not a fixed point
        "int64-min-boundary": "[-9223372036854775809,-9.223372036854776e+18]",
    }.items():
        put("json", name, text)
    put("json", "index", seed("index.json"))

    # catalog
    put("catalog", "rapidapi-page", seed("rapid-page.json"))
    put("catalog", "v1-page", seed("v1-page.json"))
    put("catalog", "v1-last-page", seed("v1-last.json"))
    put("catalog", "rapidapi-edge", json.dumps([
        {"id": "0001", "name": "a", "bodyPart": "chest", "equipment": ["x", 1], "target": None},
        {"id": "0001", "name": "duplicate"},
        {"id": "../x", "name": "bad id"},
        {"id": 7, "name": "numeric id"},
        {"id": "0002"},
        "not an object",
        {"id": "0003", "name": "big", "n": 1e308, "deep": [[[[]]]]}]))
    put("catalog", "v1-edge", json.dumps({"success": True, "metadata": {"nextPage": None, "totalExercises": 2**63 - 1},
                                          "data": [{"exerciseId": "a1", "name": "n", "gifUrl": "ftp://h/x.gif"},
                                                   {"exerciseId": "a2", "name": "n", "gifUrl": "http:///x.gif"},
                                                   {"exerciseId": "a3", "name": "n", "gifUrl": "HTTPS://h:99999/x.gif",
                                                    "bodyParts": ["a"], "equipments": [], "targetMuscles": "t"}]}))
    put("catalog", "v1-failure", '{"success":false,"data":[]}')

    # gif, still
    for name, data in gifs().items():
        put("gif", name, data)
        put("still", name, data)

    # webp
    for name, data in webps().items():
        put("webp", name, data)

    # lzw: code size, pixels (2 bytes), pixel multiplier, sub-block length, then the stream
    for name, (code_size, pixels) in {
        "two-bit": (2, pattern(4, 4, 4)),
        "eight-bit": (8, [(i * 13) % 256 for i in range(600)]),
        "table-full": (8, [(i * 7 + i // 64) % 256 for i in range(4096)]),
        "one-bit-kwkwk": (1, [0] * 300),
    }.items():
        stream = lzw(pixels, max(code_size, 2) if code_size > 1 else 2) if code_size != 1 else lzw(pixels, 2)
        size = max(code_size, 2)
        count = len(pixels)
        put("lzw", name, bytes([size, count & 0xFF, (count >> 8) & 0xFF, 0, 254]) + stream)
    put("lzw", "short-blocks", bytes([2, 16, 0, 0, 3]) + lzw(pattern(4, 4, 4), 2))
    put("lzw", "end-too-early", bytes([2, 255, 255, 3, 254]) + lzw(pattern(4, 4, 4), 2))

    # tar: flags (bit 0: fix the checksum; the rest: chunk size), size limit / 64, the entry
    gif_bytes = seed("small.gif")
    put("tar", "gif-entry", bytes([0x7E, 255]) + ustar("gifs/" + "a" * 64 + ".gif", gif_bytes))
    put("tar", "catalog-entry", bytes([0x00, 255]) + ustar("catalog.json", seed("two-catalog.json")))
    put("tar", "prefix-name", bytes([0x10, 8]) + ustar("b.gif", b"GIF89a", prefix="gifs/deep"))
    put("tar", "symlink", bytes([0x01, 1]) + ustar("gifs/link", b"", typeflag=b"2"))
    put("tar", "over-limit", bytes([0x02, 0]) + ustar("gifs/x.gif", b"x" * 100))
    put("tar", "two-entries", bytes([0x04, 255]) + ustar("a", b"1") + ustar("b", b"2"))
    put("tar", "cut-short", bytes([0x00, 255]) + ustar("a", b"x" * 700)[:900])
    put("tar", "bad-checksum", bytes([0x00, 255]) + bytes(512))

    # zstd-frames: mode byte even = the file as it is; odd = contents split at \x01, compressed, damaged
    put("zstd-frames", "pack", b"\x00" + seed("two.tar.zst"))
    put("zstd-frames", "posters-pack", b"\x00" + seed("two-posters.tar.zst"))
    entry = ustar("gifs/" + "b" * 64 + ".gif", gif_bytes)
    put("zstd-frames", "no-checksum", b"\x00" + zstd(entry, "--no-check"))
    put("zstd-frames", "no-content-size", b"\x00" + subprocess.run(["zstd", "-q", "-c", "-3"], input=entry,
                                                                  capture_output=True, check=True).stdout)
    put("zstd-frames", "skippable", b"\x00" + struct.pack("<II", 0x184D2A50, 4) + b"skip" + zstd(entry))
    put("zstd-frames", "trailing-garbage", b"\x00" + zstd(entry) + b"\x28\xb5\x2f")
    put("zstd-frames", "made-entries", b"\x01\x00" + ustar("catalog.json", b"{}") + b"\x01" + entry)
    put("zstd-frames", "made-cut", b"\x01\x05" + entry)

    # zstd-diff: zstd streams as the zstd tool writes them, and damaged ones
    text = json.dumps(json.loads(seed("rapid-page.json"))).encode()
    put("zstd-diff", "pack", seed("two.tar.zst"))
    put("zstd-diff", "level-19-long", zstd(text * 3, "-19", "--long=20"))
    put("zstd-diff", "no-checksum", zstd(text, "--no-check"))
    put("zstd-diff", "rle-and-raw", zstd(b"a" * 3000 + os.urandom(0) + bytes(range(256)) * 4))
    put("zstd-diff", "empty-content", zstd(b""))
    put("zstd-diff", "two-frames-and-skippable", zstd(b"first") + struct.pack("<II", 0x184D2A5F, 3) + b"abc" + zstd(text))
    put("zstd-diff", "streamed-no-size", subprocess.run(["zstd", "-q", "-c", "-1"], input=text, capture_output=True,
                                                        check=True).stdout)
    damaged = bytearray(zstd(text))
    damaged[len(damaged) // 2] ^= 0x40
    put("zstd-diff", "bit-flip", bytes(damaged))
    put("zstd-diff", "cut", zstd(text)[:-7])

    # minisign
    pub, sec, prehashed, legacy = minisign_files()
    put("minisign", "public-key", pub)
    put("minisign", "secret-key", sec)
    put("minisign", "signature", prehashed)
    put("minisign", "legacy-signature", legacy)
    put("minisign", "gifpack-signature", seed("index.json.minisig"))
    put("minisign", "gifpack-public-key", seed("gifpack.pub"))
    put("minisign", "crlf", prehashed.replace(b"\n", b"\r\n"))
    put("minisign", "base64-line-only", pub.splitlines()[1])
    put("minisign", "wrong-length", b"untrusted comment: x\n" + base64.b64encode(b"Ed" + bytes(30)) + b"\n")

    # s3-list
    put("s3-list", "list", '<?xml version="1.0" encoding="UTF-8"?>\n<ListBucketResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/">'
        "<Name>b</Name><Prefix>packs/</Prefix><KeyCount>2</KeyCount><MaxKeys>1000</MaxKeys><IsTruncated>true</IsTruncated>"
        "<Contents><Key>packs/a&amp;b.tar.zst</Key><LastModified>2024-01-01T00:00:00.000Z</LastModified><ETag>&quot;e&quot;</ETag>"
        "<Size>1234</Size><StorageClass>STANDARD</StorageClass></Contents>"
        "<Contents><Key>index.json</Key><Size>9223372036854775807</Size></Contents>"
        "<NextContinuationToken>1ueGcxLPRx1Tr/XYExHnhbYLgveDs2J/wm36Hy4vbOwM=</NextContinuationToken></ListBucketResult>")
    put("s3-list", "namespaced", "<s3:ListBucketResult><s3:Contents ><s3:Key>k&#x41;&#65;&lt;&gt;&apos;</s3:Key>"
        "<s3:Size>-1</s3:Size></s3:Contents></s3:ListBucketResult>")
    put("s3-list", "error", "<?xml version=\"1.0\"?><Error><Code>AccessDenied</Code><Message>Access &amp; Denied</Message>"
        "<RequestId>1</RequestId></Error>")
    put("s3-list", "unclosed", "<ListBucketResult><Contents><Key>a</Key><Contents><Key>b<")
    put("s3-list", "entities", "<Key>&#0;&#x110000;&#xD800;&#99999999999999999999;&amp&;</Key>")

    # http-head: the lines curl hands over
    put("http-head", "range-206", "HTTP/1.1 206 Partial Content\r\nContent-Range: bytes 100-199/5000\r\nETag: \"e\"\r\n"
        "Content-Length: 100\r\n\r\n")
    put("http-head", "continue-then-200", "HTTP/1.1 100 Continue\r\n\r\nHTTP/2 200\r\ncontent-type: image/gif\r\n"
        "X-Folded: a\r\n  b\r\n\r\n")
    put("http-head", "416", "HTTP/1.1 416 Range Not Satisfiable\r\nContent-Range: bytes */4999\r\n\r\n")
    put("http-head", "fixture-200", seed("head-range.txt"))
    put("http-head", "fixture-401", seed("head-401.txt"))
    put("http-head", "odd-ranges", "HTTP/1.1 206\r\nContent-Range: BYTES 100-199/*\r\nContent-Range: bytes 5-4/10\r\n"
        "Content-Range: bytes  1-2 / 3\r\nContent-Range: bytes 0-9223372036854775807/9223372036854775807\r\n: empty\r\n")

    # index: index.json, optionally NUL and a catalog.json
    index = seed("index.json")
    put("index", "index", index)
    put("index", "index-and-catalog", index + b"\x00" + seed("two-catalog.json"))
    put("index", "index-and-posters-catalog", index + b"\x00" + seed("two-posters-catalog.json"))
    doc = json.loads(index)
    one = dict(doc, packs=[p for p in doc["packs"] if p["name"] == "two"])
    put("index", "one-pack", json.dumps(one, separators=(",", ":")) + "\0" + seed("two-catalog.json").decode())
    put("index", "unsigned-fields", json.dumps({k: v for k, v in one.items() if k not in ("sequence", "expires")}))
    put("index", "future-major", json.dumps(dict(one, formatVersion="2.0")))
    put("index", "hostile-paths", json.dumps(dict(one, packs=[dict(one["packs"][0], name="../x", file="/etc/passwd",
                                                                  bytes=-1, entryCount=2**62)])))

    # blurhash: width byte, height byte, punch byte (32 = 1.0), then the hash
    for name, (width, height, punch, text) in {
        "readme": (32, 21, 32, "LEHV6nWB2yk8pyo0adR*.7kCMdnj"),
        "nine-by-nine": (64, 64, 32, "|" + "0" * 3 + "fQ" * 2 + "00" * 79),
        "one-component": (1, 1, 0, "00TI:j"),
        "too-short": (7, 5, 32, "LEHV6nWB2yk8pyo0adR*.7kCMdn"),
        "outside-alphabet": (4, 3, 32, "LEHV6nWB2yk8pyo0adR*.7kCMd\x7fj"),
        "size-zero": (0, 3, 32, "LEHV6nWB2yk8pyo0adR*.7kCMdnj"),
        "size-65": (65, 3, 255, "LEHV6nWB2yk8pyo0adR*.7kCMdnj"),
        "max-dc": (8, 8, 255, "L~~~~~~~" + "~~" * 10),
        "non-ascii": (8, 8, 32, "LEHV6nWB2yk8pyo0adR*.7kCM\u00e9nj"),
        "ten-rows": (8, 8, 32, "}" + "0" * 5 + "00" * 9),
    }.items():
        put("blurhash", name, bytes([width, height, punch]) + text.encode())

    # catalog-stream: a chunk-size byte (size = byte % 64 + 1), then a pack's catalog.json
    for name, (chunk, text) in {
        "two-in-one-chunk": (63, seed("two-catalog.json")),
        "two-byte-by-byte": (0, seed("two-catalog.json")),
        "posters-in-sevens": (6, seed("two-posters-catalog.json")),
        "ends-early": (3, seed("two-catalog.json")[:-9]),
        "no-exercises": (5, b'{"formatVersion":"1.2","pack":"x","source":{}}'),
        "exercises-as-a-value": (2, b'{"pack":"exercises","exercises":[]}'),
    }.items():
        put("catalog-stream", name, bytes([chunk]) + text)

    # index-stream: a chunk-size byte (size = byte % 64 + 1), then an index.json
    pack = one["packs"][0]
    for name, (chunk, text) in {
        "index-byte-by-byte": (0, index),
        "index-in-sixteens": (15, index),
        "ends-in-a-list": (4, index[:index.index(b'"exercises"') + 40]),
        "renditions": (9, json.dumps(dict(one, formatVersion="1.3", renditionPacks=[dict(pack, name="all.360")])).encode()),
        "formats": (11, json.dumps(dict(one, formatVersion="1.4", formatPacks=[dict(pack, name="all.180.avif", format="avif"),
                                                                                dict(pack, name="all.180.webp", format="webp")])).encode()),
        "escaped-key": (3, json.dumps(one).replace('"exercises"', '"exer\\u0063ises"').encode()),
        "trailing-comma": (7, json.dumps(dict(one, packs=[dict(pack, exercises=[])])).replace('"exercises": []', '"exercises": [{"id": "1"},]').encode()),
    }.items():
        put("index-stream", name, bytes([chunk]) + text)


if __name__ == "__main__":
    main()
