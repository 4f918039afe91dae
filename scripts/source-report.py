#!/usr/bin/env python3
"""The longest functions and files under the given folders, for a reader to judge.

`make lint` prints this report. It is not a limit: a type's story stays in one file where it reads
better so, and a long function that reads top to bottom is left whole. The report only points at
what a reviewer may want to look at first.

Usage: scripts/source-report.py [--top N] FOLDER...
Lines are counted as written (comments and blank lines included); a function runs from the line of
its declaration to the brace that closes its body. Comments and string literals are blanked before
braces are counted, so a brace inside them does not count.
"""
import os
import re
import sys

DECLARATION = re.compile(
    r"^\s*(?:@\w+(?:\([^)]*\))?\s+)*"
    r"(?:(?:public|private|fileprivate|internal|package|open|static|class|override|final|mutating|"
    r"nonmutating|nonisolated|convenience|required|dynamic|isolated|consuming|borrowing|indirect|lazy)"
    r"(?:\([^)]*\))?\s+)*"
    r"(func\s+([^\s(<]+)|init[?!]?|deinit|subscript)\b")


def blank_comments_and_strings(text):
    """The text with comments and string literal contents replaced by spaces (newlines kept)."""
    out = list(text)
    i, n = 0, len(text)

    def blank(start, end):
        for k in range(start, min(end, n)):
            if out[k] != "\n":
                out[k] = " "

    while i < n:
        if text.startswith("//", i):
            end = text.find("\n", i)
            end = n if end < 0 else end
            blank(i, end)
            i = end
        elif text.startswith("/*", i):
            depth, j = 1, i + 2
            while j < n and depth:
                if text.startswith("/*", j):
                    depth, j = depth + 1, j + 2
                elif text.startswith("*/", j):
                    depth, j = depth - 1, j + 2
                else:
                    j += 1
            blank(i, j)
            i = j
        elif text[i] == '"' or (text[i] == "#" and re.match(r'#+"', text[i:])):
            hashes = len(re.match(r'#*', text[i:]).group(0))
            j = i + hashes
            multi = text.startswith('"""', j)
            quote = '"""' if multi else '"'
            closing = quote + "#" * hashes
            j += len(quote)
            while j < n:
                if hashes == 0 and text[j] == "\\":
                    j += 2
                    continue
                if text.startswith(closing, j):
                    j += len(closing)
                    break
                if not multi and text[j] == "\n":
                    break
                j += 1
            blank(i + 1, j - 1)
            i = j
        else:
            i += 1
    return "".join(out)


def functions(code_lines):
    """(line number, name, length) of every function, initializer and subscript with a body."""
    found = []
    for start, line in enumerate(code_lines):
        match = DECLARATION.match(line)
        if not match:
            continue
        name = match.group(2) or match.group(1).split(" ")[0]
        depth, opened, end = 0, False, None
        for scan in range(start, len(code_lines)):
            for character in code_lines[scan]:
                if character == "{":
                    depth, opened = depth + 1, True
                elif character == "}":
                    depth -= 1
                    if opened and depth == 0:
                        end = scan
                        break
            if end is not None:
                break
            if not opened and scan > start and (DECLARATION.match(code_lines[scan]) or not code_lines[scan].strip()):
                break
        if end is not None:
            found.append((start + 1, name, end - start + 1))
    return found


def main(argv):
    top = 15
    if len(argv) > 1 and argv[0] == "--top":
        top, argv = int(argv[1]), argv[2:]
    if not argv:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    files, funcs = [], []
    for root in argv:
        if not os.path.isdir(root):
            print(f"source-report: {root} is not a folder", file=sys.stderr)
            return 2
        for folder, _, names in os.walk(root):
            for name in names:
                if not name.endswith(".swift"):
                    continue
                path = os.path.join(folder, name)
                with open(path, encoding="utf-8") as handle:
                    text = handle.read()
                lines = blank_comments_and_strings(text).split("\n")
                if lines and lines[-1] == "":
                    lines.pop()
                files.append((len(lines), path))
                funcs.extend((length, path, number, fname) for number, fname, length in functions(lines))
    files.sort(key=lambda item: (-item[0], item[1]))
    funcs.sort(key=lambda item: (-item[0], item[1], item[2]))
    total = sum(count for count, _ in files)
    print(f"source report: {len(files)} files, {total} lines, {len(funcs)} functions")
    print(f"longest files (lines):")
    for count, path in files[:top]:
        print(f"  {count:5d}  {path}")
    print(f"longest functions (lines):")
    for length, path, number, name in funcs[:top]:
        print(f"  {length:5d}  {path}:{number} {name}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
