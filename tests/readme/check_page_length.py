#!/usr/bin/env python3
"""No documentation page is longer than a reader finishes in one sitting.

Usage: check_page_length.py ROOT [--max LINES]

Fails when a Markdown page under ROOT/docs/ (any folder below it too) has more than LINES lines
(400 unless told). A page that grows past it is several pages: split it by task, as the Beast
pages are (docs/beast.md is their index).
"""
import pathlib
import sys


def main():
    args = sys.argv[1:]
    limit = 400
    if "--max" in args:
        i = args.index("--max")
        limit = int(args[i + 1])
        del args[i:i + 2]
    if len(args) != 1:
        print(__doc__, file=sys.stderr)
        return 2
    root = pathlib.Path(args[0])
    pages = sorted((root / "docs").rglob("*.md"))
    if not pages:
        print(f"{root / 'docs'}: no page found", file=sys.stderr)
        return 1
    too_long = 0
    for page in pages:
        lines = len(page.read_text().splitlines())
        if lines > limit:
            too_long += 1
            print(f"{page.relative_to(root)}: {lines} lines, over {limit}: split it by task", file=sys.stderr)
    print(f"{len(pages) - too_long} of {len(pages)} docs pages within {limit} lines")
    return 1 if too_long else 0


if __name__ == "__main__":
    sys.exit(main())
