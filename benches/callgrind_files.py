#!/usr/bin/env python3
"""Self cost (instructions) of a callgrind dump summed per source file, inlined code
counted in the file it was written in (fi=/fe= lines override the function's fl=).

Usage: python3 benches/callgrind_files.py DUMP [DIVISOR] [TOP] [--categories]
  DIVISOR divides every figure (items per dump: per-item costs); TOP rows (default 30);
  --categories sums the files by the part of the work they are (see category()).
Files are shortened: a crate's registry path to crate@version/path, the toolchain's
library to std/..., this repository's to its path.
"""
import re
import sys
from collections import defaultdict


def short(path):
    m = re.search(r"/registry/src/[^/]+/([^/]+)/(.*)", path)
    if m:
        return f"{m.group(1)}/{m.group(2)}"
    m = re.search(r"/lib/rustlib/src/rust/library/(.*)", path) or re.search(
        r"/rustc/[0-9a-f]+/library/(.*)", path)
    if m:
        return "std/" + m.group(1)
    m = re.search(r"/(src/.*|build/.*|out/.*)$", path)
    return m.group(1) if m else path


def main():
    dump = sys.argv[1]
    divisor = float(sys.argv[2]) if len(sys.argv) > 2 else 1.0
    top = int(sys.argv[3]) if len(sys.argv) > 3 else 30
    categories = "--categories" in sys.argv
    names = {}
    costs = defaultdict(int)
    fl = fi = None
    skip_next = False
    ref = re.compile(r"^\((\d+)\)(?: (.*))?$")

    def name_of(value):
        m = ref.match(value)
        if not m:
            return value
        if m.group(2) is not None:
            names[m.group(1)] = m.group(2)
        return names.get(m.group(1), "?")

    with open(dump) as f:
        for line in f:
            if line[0].isdigit() or line[0] in "+-*":
                if skip_next:
                    skip_next = False
                    continue
                parts = line.split()
                if len(parts) >= 2:
                    costs[fi or fl] += int(parts[1])
                continue
            key, _, value = line.rstrip("\n").partition("=")
            if key == "fl":
                fl = name_of(value)
                fi = None
            elif key in ("fi", "fe"):
                fi = name_of(value)
            elif key == "fn":
                fi = None
            elif key in ("cfi", "cfl"):
                name_of(value)
            elif key == "calls":
                skip_next = True
    total = sum(costs.values())
    by_file = defaultdict(int)
    for path, cost in costs.items():
        by_file[short(path or "?")] += cost
    if categories:
        grouped = defaultdict(int)
        for path, cost in by_file.items():
            grouped[category(path)] += cost
        by_file = grouped
    print(f"| {'part' if categories else 'source file'} | instructions per item | share |")
    print("|---|---:|---:|")
    for path, cost in sorted(by_file.items(), key=lambda kv: -kv[1])[:top]:
        print(f"| {path} | {cost / divisor:,.0f} | {100 * cost / total:.1f}% |")
    print(f"| total | {total / divisor:,.0f} | 100% |")



def category(path):
    """The part of the work a source file's instructions are (for --categories)."""
    wire = path.startswith("src/games/") and path.endswith("/wire.rs")
    if (path.startswith("src/games/") and not wire) or path.startswith("src/kit/"):
        return "the rule (the games' rules and src/kit)"
    if wire or path.startswith(("src/glue/", "src/service/", "src/proto/")):
        return "our parsing and reply building (each game's wire.rs, src/glue, src/service, src/proto)"
    if path.startswith("prost-") or "arbiter.v1.rs" in path:
        return "prost: encoding and decoding (varints, generated code)"
    if "mimalloc" in path or "raw_vec" in path or path.startswith("std/alloc/src/vec") or "malloc" in path:
        return "allocator and Vec growth"
    if path.startswith("bytes-") or "memmove" in path or "memcpy" in path or "tonic-0.14.9/src/codec" in path:
        return "buffers and copies (bytes, memcpy, tonic's codec buffer)"
    if path.startswith("std/core/"):
        return "inlined core helpers (iterators, ptr, cmp, integer ops)"
    return "everything else (tokio, h2, hyper, tonic transport, std)"


if __name__ == "__main__":
    main()
