#!/usr/bin/env python3
"""Fails if FILE has more than MAX lines of code marked `// idlewheel` (the idlewheel part of an
example converted from one of Beast's), or none. Comment lines do not count.

    count_marked.py FILE MAX"""
import re
import sys

path, most = sys.argv[1], int(sys.argv[2])
marked = [line for line in open(path, encoding="utf-8")
          if re.search(r"//\s*idlewheel(:.*)?$", line.rstrip()) and not line.lstrip().startswith("//")]
print(f"{path}: {len(marked)} lines marked // idlewheel (at most {most})")
sys.exit(0 if 0 < len(marked) <= most else 1)
