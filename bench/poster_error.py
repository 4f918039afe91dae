#!/usr/bin/env python3
"""How far gifpack's posters are from the still they were made from: for every poster a build
derived (<cache>/derived/<settings>/<ab>/<sha256>-<size>.gif), its source GIF is read from the
cache's blob store, its still composited (docs/FORMAT.md, "Placeholders and posters": the first
non-blank screen, transparency over white), area-downscaled to the poster's size and rounded to
8 bits; the poster is decoded and compared pixel by pixel. Written independently of the Swift code
(its own GIF decoder and box filter), standard library only.

Prints one JSON object: posters compared, the mean absolute error per channel over all their pixels
(0-255), the worst poster's, and how many pure-white still pixels the posters do not keep white.

    python3 bench/poster_error.py CACHE_DIR [--size 80]
"""
import glob
import json
import os
import struct
import sys


class GIFError(Exception):
    pass


def sub_blocks(data, pos):
    chunks = []
    while True:
        if pos >= len(data):
            raise GIFError("truncated sub-blocks")
        size = data[pos]
        pos += 1
        if size == 0:
            return b"".join(chunks), pos
        chunks.append(data[pos:pos + size])
        pos += size


def lzw_decode(data, min_size, count):
    clear = 1 << min_size
    end = clear + 1
    out = bytearray()
    table = [bytes([i]) for i in range(clear)] + [b"", b""]
    size = min_size + 1
    previous = None
    bits = 0
    value = 0
    for byte in data:
        value |= byte << bits
        bits += 8
        while bits >= size:
            code = value & ((1 << size) - 1)
            value >>= size
            bits -= size
            if code == clear:
                table = table[:clear + 2]
                size = min_size + 1
                previous = None
                continue
            if code == end:
                return bytes(out[:count])
            if previous is None:
                entry = table[code]
            elif code < len(table):
                entry = table[code]
                table.append(previous + entry[:1])
            elif code == len(table):
                entry = previous + previous[:1]
                table.append(entry)
            else:
                raise GIFError("bad LZW code")
            out += entry
            previous = entry
            if len(table) == (1 << size) and size < 12:
                size += 1
            if len(out) >= count:
                return bytes(out[:count])
    return bytes(out[:count])


def frames(data):
    """Yields (width, height, frame) for each image: frame = (left, top, w, h, rgb rows or None for transparent)."""
    if data[:6] not in (b"GIF87a", b"GIF89a"):
        raise GIFError("not a GIF")
    width, height, packed = struct.unpack("<HHB", data[6:11])
    pos = 13
    global_table = None
    if packed & 0x80:
        n = 2 << (packed & 7)
        global_table = data[pos:pos + 3 * n]
        pos += 3 * n
    transparent = None
    disposal = 0
    while pos < len(data):
        kind = data[pos]
        pos += 1
        if kind == 0x3B:
            return
        if kind == 0x21:
            label = data[pos]
            block, pos = sub_blocks(data, pos + 1)
            if label == 0xF9 and len(block) >= 4:
                disposal = (block[0] >> 2) & 7
                transparent = block[3] if block[0] & 1 else None
            continue
        if kind != 0x2C:
            raise GIFError("unknown record")
        left, top, w, h, packed = struct.unpack("<HHHHB", data[pos:pos + 9])
        pos += 9
        table = global_table
        if packed & 0x80:
            n = 2 << (packed & 7)
            table = data[pos:pos + 3 * n]
            pos += 3 * n
        min_size = data[pos]
        lzw, pos = sub_blocks(data, pos + 1)
        indices = lzw_decode(lzw, min_size, w * h)
        indices += bytes(w * h - len(indices))
        rows = list(range(h))
        if packed & 0x40:
            rows = [r for start, step in ((0, 8), (4, 8), (2, 4), (1, 2)) for r in range(start, h, step)]
        order = [0] * h
        for file_row, screen_row in enumerate(rows):
            order[screen_row] = file_row
        yield width, height, (left, top, w, h, indices, order, table, transparent, disposal)
        transparent = None
        disposal = 0


def still(data):
    """The still as a flat [r, g, b, ...] list and its size."""
    screen = None
    first = None
    for width, height, (left, top, w, h, indices, order, table, transparent, disposal) in frames(data):
        if screen is None:
            screen = [255] * (width * height * 3)
        saved = list(screen) if disposal == 3 else None
        colors = len(table) // 3
        for row in range(h):
            base = order[row] * w
            offset = ((top + row) * width + left) * 3
            for x in range(w):
                index = indices[base + x]
                if index != transparent and index < colors:
                    screen[offset:offset + 3] = table[index * 3:index * 3 + 3]
                offset += 3
        image = list(screen)
        if len(set(zip(image[0::3], image[1::3], image[2::3]))) > 1:
            return image, width, height
        if first is None:
            first = image
        if disposal == 2:
            for row in range(top, top + h):
                start = (row * width + left) * 3
                screen[start:start + w * 3] = [255] * (w * 3)
        elif disposal == 3:
            screen = saved
    if first is None:
        raise GIFError("no frames")
    return first, width, height


def target_size(width, height, longest_side):
    longest = max(width, height)
    if longest <= longest_side:
        return width, height
    scaled = lambda side: max(1, (side * longest_side * 2 + longest) // (2 * longest))
    return (longest_side, scaled(height)) if width >= height else (scaled(width), longest_side)


def weights(source, target):
    scale = source / target
    result = []
    for index in range(target):
        start, end = index * scale, (index + 1) * scale
        row = []
        position = int(start)
        while position < end and position < source:
            covered = min(end, position + 1) - max(start, position)
            if covered > 0:
                row.append((position, covered / scale))
            position += 1
        result.append(row)
    return result


def box_downscale(pixels, width, height, tw, th):
    """Area (box) filter in double precision, rounded to 8 bits."""
    columns = weights(width, tw)
    rows = weights(height, th)
    horizontal = []
    for y in range(height):
        base = y * width * 3
        line = []
        for column in columns:
            r = g = b = 0.0
            for x, weight in column:
                p = base + x * 3
                r += pixels[p] * weight
                g += pixels[p + 1] * weight
                b += pixels[p + 2] * weight
            line.append((r, g, b))
        horizontal.append(line)
    output = []
    for row in rows:
        for x in range(tw):
            r = g = b = 0.0
            for y, weight in row:
                value = horizontal[y][x]
                r += value[0] * weight
                g += value[1] * weight
                b += value[2] * weight
            output += [min(255, int(r + 0.5)), min(255, int(g + 0.5)), min(255, int(b + 0.5))]
    return output


def main(argv):
    if not argv or argv[0] in ("-h", "--help"):
        print(__doc__.strip())
        return 0 if argv else 2
    cache = argv[0]
    size = int(argv[argv.index("--size") + 1]) if "--size" in argv else 80
    posters = sorted(glob.glob(os.path.join(cache, "derived", "*", "*", f"*-{size}.gif")))
    total_error = 0.0
    total_values = 0
    worst = 0.0
    white_pixels = white_lost = 0
    compared = 0
    for poster_path in posters:
        sha = os.path.basename(poster_path)[:-len(f"-{size}.gif")]
        blob = os.path.join(cache, "blobs", "sha256", sha[:2], sha + ".gif")
        if not os.path.exists(blob):
            continue
        with open(blob, "rb") as file:
            pixels, width, height = still(file.read())
        tw, th = target_size(width, height, size)
        reference = box_downscale(pixels, width, height, tw, th)
        with open(poster_path, "rb") as file:
            poster, pw, ph = still(file.read())
        if (pw, ph) != (tw, th):
            raise GIFError(f"{poster_path}: {pw}x{ph}, expected {tw}x{th}")
        error = sum(abs(a - b) for a, b in zip(poster, reference))
        total_error += error
        total_values += len(reference)
        worst = max(worst, error / len(reference))
        for index in range(0, len(reference), 3):
            if reference[index] == reference[index + 1] == reference[index + 2] == 255:
                white_pixels += 1
                if poster[index:index + 3] != [255, 255, 255]:
                    white_lost += 1
        compared += 1
    print(json.dumps({"size": size, "posters": compared,
                      "mean_abs_error": total_error / total_values if total_values else None,
                      "worst_poster_mean_abs_error": worst if compared else None,
                      "white_pixels": white_pixels, "white_pixels_not_white": white_lost}))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
