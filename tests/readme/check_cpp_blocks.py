#!/usr/bin/env python3
"""Every ```cpp block of a Markdown file compiles as written, as a whole translation unit.

Usage: check_cpp_blocks.py CXX INCLUDE_DIR MARKDOWN WORK_DIR

Each block is written to WORK_DIR/block_<line>.cpp and compiled with
`CXX -std=c++20 -fsyntax-only -IINCLUDE_DIR`: only the includes the block shows, nothing
prepended. A block whose first line is a comment starting `// C++17` is compiled a second time
with `-std=c++17 -pedantic-errors` (GCC would otherwise accept C++20's designated initializers
in C++17 with a mere warning). A block that is not meant to stand alone has no place in the
README.
"""
import pathlib
import re
import subprocess
import sys


def blocks(text):
    """(line number of the opening fence, code) for each ```cpp block."""
    out = []
    for m in re.finditer(r"^```cpp[ \t]*\n(.*?)^```[ \t]*$", text, re.S | re.M):
        out.append((text.count("\n", 0, m.start()) + 1, m.group(1)))
    return out


def main():
    cxx, include_dir, markdown, work_dir = sys.argv[1:5]
    work = pathlib.Path(work_dir)
    work.mkdir(parents=True, exist_ok=True)
    found = blocks(pathlib.Path(markdown).read_text())
    if not found:
        print(f"{markdown}: no ```cpp block found", file=sys.stderr)
        return 1
    failed = 0
    for line, code in found:
        source = work / f"block_{line}.cpp"
        source.write_text(code)
        standards = [["-std=c++20"]]
        if code.startswith("// C++17"):
            standards.append(["-std=c++17", "-pedantic-errors"])
        for flags in standards:
            result = subprocess.run([cxx, *flags, "-fsyntax-only", f"-I{include_dir}", str(source)],
                                    capture_output=True, text=True)
            if result.returncode == 0:
                print(f"{markdown}:{line}: compiles ({' '.join(flags)})")
            else:
                failed += 1
                print(f"{markdown}:{line}: does not compile as written with {' '.join(flags)} ({source}):\n"
                      f"{result.stderr}", file=sys.stderr)
                break
    print(f"{len(found) - failed} of {len(found)} ```cpp blocks compile")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
