#!/usr/bin/env python3
# Copyright (c) 2026 The idlewheel authors. Distributed under the Boost Software License 1.0.
"""patch_size.py PATCH INSERTIONS,DELETIONS: fails unless the unified diff PATCH changes exactly
that many lines (diffstat's count), so that a conversion cannot grow unnoticed and the sizes
examples/beast/README.md shows stay true."""
import sys

added = removed = 0
with open(sys.argv[1]) as f:
    for line in f:
        if line.startswith("+++") or line.startswith("---"):
            continue
        added += line.startswith("+")
        removed += line.startswith("-")
want = tuple(int(n) for n in sys.argv[2].split(","))
if (added, removed) != want:
    print(f"{sys.argv[1]}: {added} insertions, {removed} deletions; expected {want[0]}, {want[1]}")
    sys.exit(1)
print(f"{sys.argv[1]}: {added} insertions, {removed} deletions")
