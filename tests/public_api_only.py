#!/usr/bin/env python3
"""Applications use idlewheel's public API only: fails, naming file:line, if a source file under
demo_server/, examples/ or program_support/ includes a header of idlewheel's detail/, core/ or impl/ (or Asio's
or Beast's detail/), or names a `detail::` namespace of idlewheel, Asio or Beast. The library
(lib/), its tests (tests/) and the benchmarks (bench/) may.

    public_api_only.py SOURCE_DIR"""
import pathlib
import re
import sys

CHECKED = ("demo_server", "examples", "program_support")
SUFFIXES = {".hpp", ".cpp", ".h", ".cc", ".ipp", ".in"}
INCLUDE = re.compile(r'^\s*#\s*include\s*[<"]\s*('
                     r'idlewheel/(?:.*/)?(?:detail|impl|core)/'
                     r'|(?:boost/)?asio/(?:.*/)?detail/'
                     r'|boost/beast/(?:.*/)?detail/)')
NAMESPACE = re.compile(r'\b(idlewheel|asio|beast)\s*::\s*detail\s*::')


def code_of(line):
    """The line without a // comment (good enough for these sources: no // inside strings
    that name a detail namespace)."""
    return line.split("//", 1)[0]


def main():
    root = pathlib.Path(sys.argv[1])
    found, files = [], 0
    for top in CHECKED:
        base = root / top
        if not base.is_dir():
            print(f"public_api_only: {base} is missing: wrong SOURCE_DIR?")
            return 2
        for path in sorted(base.rglob("*")):
            if path.suffix not in SUFFIXES or not path.is_file():
                continue
            files += 1
            for number, line in enumerate(path.read_text(encoding="utf-8", errors="replace").splitlines(), 1):
                if INCLUDE.search(line) or NAMESPACE.search(code_of(line)):
                    found.append(f"{path.relative_to(root)}:{number}: {line.strip()}")
    if files < 20:
        print(f"public_api_only: only {files} source files under {', '.join(CHECKED)}: wrong SOURCE_DIR?")
        return 2
    for f in found:
        print(f)
    if found:
        print(f"public_api_only: {len(found)} use(s) of a detail/ or impl/ API outside lib/, tests/ and bench/ "
              "(use the public API; make what is missing public in lib/)")
        return 1
    print(f"public_api_only: {files} files under {', '.join(CHECKED)} use the public API only")
    return 0


if __name__ == "__main__":
    sys.exit(main())
