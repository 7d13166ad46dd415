#!/usr/bin/env python3
"""Every ```cpp block of the documentation compiles as written, as a whole translation unit.

Usage:
  check_cpp_blocks.py CXX INCLUDE_DIR MARKDOWN WORK_DIR [--require-blocks]
  check_cpp_blocks.py --registered ROOT PAGE...

The first form checks one page. Each block is written to WORK_DIR/block_<line>.cpp and
compiled with `CXX -std=c++20 -fsyntax-only -IINCLUDE_DIR`: only the includes the block shows,
nothing prepended. A block whose first line is a comment starting `// C++17` is compiled a
second time with `-std=c++17 -pedantic-errors` (GCC would otherwise accept C++20's designated
initializers in C++17 with a mere warning). A block that is not meant to stand alone has no
place in the docs. A C++ block the compiler would not see fails the page: a fence labelled
`c++`, `cxx`, `cc`, `hpp` or `h`, a ```cpp fence with more on its line or indented (in a
list), a ~~~ fence, or an unlabelled block that holds an #include. --require-blocks fails a
page with no block at all (the README: a page that should have blocks and lost them).

The second form fails when README.md or a page under ROOT/docs/ is not among the PAGEs the
build registered a test for (a page added since the last configure: build again).
"""
import pathlib
import re
import subprocess
import sys

CPP_LABELS = {"cpp", "c++", "cxx", "cc", "hpp", "hxx", "h", "c"}
FENCE = re.compile(r"^(?P<indent>[ \t]*)(?P<marker>`{3,}|~{3,})(?P<info>.*)$")


def blocks(text):
    """(line number of the opening fence, code) for each ```cpp block: what gets compiled."""
    out = []
    for m in re.finditer(r"^```cpp[ \t]*\n(.*?)^```[ \t]*$", text, re.S | re.M):
        out.append((text.count("\n", 0, m.start()) + 1, m.group(1)))
    return out


def fences(text):
    """(line, indent, marker, info, body) for every fenced block, as a Markdown reader sees them."""
    out = []
    lines = text.split("\n")
    i = 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        start, marker = i, m.group("marker")
        body = []
        i += 1
        while i < len(lines):
            close = FENCE.match(lines[i])
            if close and close.group("marker")[0] == marker[0] and len(close.group("marker")) >= len(marker) \
                    and not close.group("info").strip():
                break
            body.append(lines[i])
            i += 1
        out.append((start + 1, m.group("indent"), marker, m.group("info"), body))
        i += 1
    return out


def unchecked(text):
    """Messages for C++ blocks that blocks() does not pick up."""
    problems = []
    for line, indent, marker, info, body in fences(text):
        label = info.strip().split(" ")[0].split("{")[0].lower() if info.strip() else ""
        exact = not indent and marker == "```" and info.rstrip(" \t") == "cpp"
        if label in CPP_LABELS and not exact:
            problems.append(f"{line}: a C++ block that is not compiled: open it with a bare ```cpp at the "
                            f"start of the line (found {indent + marker + info!r})")
        elif not label and any(l.lstrip().startswith("#include") for l in body):
            problems.append(f"{line}: an unlabelled block with an #include: label it ```cpp so it is compiled")
    return problems


def check_page(cxx, include_dir, markdown, work_dir, require_blocks):
    work = pathlib.Path(work_dir)
    work.mkdir(parents=True, exist_ok=True)
    text = pathlib.Path(markdown).read_text()
    found = blocks(text)
    problems = unchecked(text)
    for problem in problems:
        print(f"{markdown}:{problem}", file=sys.stderr)
    if len(found) != sum(1 for f in fences(text) if not f[1] and f[2] == "```" and f[3].rstrip(" \t") == "cpp"):
        print(f"{markdown}: the ```cpp blocks found and the fences read do not agree (an unclosed block?)",
              file=sys.stderr)
        problems.append("count")
    if not found and require_blocks:
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
    print(f"{markdown}: {len(found) - failed} of {len(found)} ```cpp blocks compile")
    return 1 if failed or problems else 0


def check_registered(root, registered):
    root = pathlib.Path(root)
    pages = [root / "README.md", *sorted((root / "docs").glob("*.md"))]
    known = {pathlib.Path(p).resolve() for p in registered}
    missing = [p for p in pages if p.resolve() not in known]
    for p in missing:
        print(f"{p}: no test compiles this page's C++ blocks: build again (cmake re-globs docs/*.md)",
              file=sys.stderr)
    gone = [p for p in known if not p.exists()]
    for p in gone:
        print(f"{p}: registered but gone: build again", file=sys.stderr)
    print(f"{len(pages) - len(missing)} of {len(pages)} pages have a test")
    return 1 if missing or gone else 0


def main():
    args = sys.argv[1:]
    if args and args[0] == "--registered" and len(args) >= 2:
        return check_registered(args[1], args[2:])
    require = "--require-blocks" in args
    args = [a for a in args if a != "--require-blocks"]
    if len(args) != 4:
        print(__doc__, file=sys.stderr)
        return 2
    return check_page(*args, require)


if __name__ == "__main__":
    sys.exit(main())
