#!/usr/bin/env python3
"""Source shape check: no function (func/init/deinit/subscript/closure-property accessor bodies
counted from their declaration line to the matching closing brace) over MAX_FUNCTION lines and no
Swift file over MAX_FILE lines.

Usage: scripts/source-shape.py [--max-function N] [--max-file N] [--exclude PATH_PREFIX ...] [ROOT ...]
Prints one violation a line, `path:line name length`, and exits 1 if there is any (0 otherwise).
Roots default to Sources/. Braces inside string literals, character escapes and comments are ignored.
"""
import argparse
import os
import re
import sys

DECL = re.compile(r'^\s*(?:@\w+(?:\([^)]*\))?\s+)*(?:(?:public|private|fileprivate|internal|package|open|static|class|'
                  r'override|final|mutating|nonmutating|nonisolated|convenience|required|dynamic|isolated|'
                  r'consuming|borrowing|indirect|lazy)\s+)*'
                  r'(func\s+([^\s(<]+)|init[?!]?|deinit|subscript)\b')


def strip_code(line, state):
    """Returns the line with string contents and comments removed. `state` carries an open block
    comment depth and an open multi-line string across lines."""
    out = []
    i = 0
    n = len(line)
    while i < n:
        if state['block'] > 0:
            if line.startswith('*/', i):
                state['block'] -= 1
                i += 2
            elif line.startswith('/*', i):
                state['block'] += 1
                i += 2
            else:
                i += 1
            continue
        if state['multi']:
            if line.startswith('"""', i):
                state['multi'] = False
                i += 3
            elif line[i] == '\\':
                i += 2
            else:
                i += 1
            continue
        if line.startswith('//', i):
            break
        if line.startswith('/*', i):
            state['block'] += 1
            i += 2
            continue
        if line.startswith('"""', i):
            state['multi'] = True
            i += 3
            continue
        if line[i] == '"':
            # A single-line string; interpolations may hold nested strings, skip them by depth.
            i += 1
            depth = 0
            while i < n:
                c = line[i]
                if c == '\\' and i + 1 < n and line[i + 1] == '(':
                    depth += 1
                    i += 2
                    continue
                if c == '\\':
                    i += 2
                    continue
                if depth > 0:
                    if c == '(':
                        depth += 1
                    elif c == ')':
                        depth -= 1
                    i += 1
                    continue
                if c == '"':
                    i += 1
                    break
                i += 1
            out.append('""')
            continue
        out.append(line[i])
        i += 1
    return ''.join(out)


def check_file(path, max_function, max_file):
    with open(path, encoding='utf-8') as handle:
        lines = handle.read().split('\n')
    if lines and lines[-1] == '':
        lines.pop()
    violations = []
    if len(lines) > max_file:
        violations.append((path, 1, '<file>', len(lines)))
    state = {'block': 0, 'multi': False}
    code = [strip_code(line, state) for line in lines]
    for number, line in enumerate(code):
        match = DECL.match(line)
        if not match:
            continue
        name = match.group(2) or match.group(1).split()[0]
        # Find the body's opening brace (the signature may span lines; a protocol requirement has none).
        depth = 0
        opened = False
        end = None
        for scan in range(number, len(code)):
            text = code[scan]
            for char in text:
                if char == '{':
                    depth += 1
                    opened = True
                elif char == '}':
                    depth -= 1
                    if opened and depth == 0:
                        end = scan
                        break
            if end is not None:
                break
            if not opened and scan > number and (DECL.match(text) or text.strip() == ''):
                break  # a requirement without a body
        if end is None:
            continue
        length = end - number + 1
        if length > max_function:
            violations.append((path, number + 1, name, length))
    return violations


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('--max-function', type=int, default=100)
    parser.add_argument('--max-file', type=int, default=450)
    parser.add_argument('--exclude', action='append', default=[], help='path prefix to leave out (repeatable)')
    parser.add_argument('roots', nargs='*', default=['Sources'])
    args = parser.parse_args()
    violations = []
    for root in args.roots:
        paths = [root] if os.path.isfile(root) else [
            os.path.join(directory, name) for directory, _, names in os.walk(root) for name in names if name.endswith('.swift')]
        for path in sorted(paths):
            if any(path.startswith(prefix) for prefix in args.exclude):
                continue
            violations.extend(check_file(path, args.max_function, args.max_file))
    for path, line, name, length in violations:
        print(f'{path}:{line} {name} {length}')
    return 1 if violations else 0


if __name__ == '__main__':
    sys.exit(main())
