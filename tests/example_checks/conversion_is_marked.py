#!/usr/bin/env python3
# Copyright (c) 2026 The idlewheel authors. Distributed under the Boost Software License 1.0.
"""Fails unless CONVERTED is ORIGINAL (Beast's file) with only comment lines, blank lines and
lines marked `// idlewheel` added or changed: what count_marked.py counts is then the whole
conversion.

    conversion_is_marked.py ORIGINAL CONVERTED"""
import difflib
import re
import sys

original = open(sys.argv[1], encoding="utf-8").read().splitlines()
converted = open(sys.argv[2], encoding="utf-8").read().splitlines()
unmarked = []
for group in difflib.SequenceMatcher(None, original, converted, autojunk=False).get_opcodes():
    tag, _, _, j1, j2 = group
    if tag in ("replace", "insert"):
        for number in range(j1, j2):
            line = converted[number].strip()
            if line and not line.startswith("//") and not re.search(r"//\s*idlewheel(:.*)?$", line):
                unmarked.append(f"{sys.argv[2]}:{number + 1}: {line}")
print("\n".join(unmarked) if unmarked else f"{sys.argv[2]}: every line that differs from {sys.argv[1]} is marked")
sys.exit(1 if unmarked else 0)
