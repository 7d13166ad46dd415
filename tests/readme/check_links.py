#!/usr/bin/env python3
"""Every relative link of the documentation leads somewhere: the file exists and, for a link
into a Markdown file, the #anchor is one of its headings (GitHub's slugs).

Usage: check_links.py ROOT

Checks ROOT/README.md, ROOT/docs/*.md, ROOT/bench/README.md, ROOT/bench/results/*.md (the
results notebooks), ROOT/CHANGELOG.md and ROOT/tests/README.md (the map of tests/): inline links
`[text](target)` and reference definitions `[label]: target` outside code blocks and code
spans. Links with a scheme (https:, mailto:) are not followed. An anchor is checked the way
GitHub makes it from a heading: the heading's text without its Markdown (code spans keep their
text, links their label), lower-cased, every character that is not a letter, a digit, a mark,
a space, `-` or `_` dropped, spaces made `-`; a repeated slug gets -1, -2, ... Anchors into
other kinds of file (a source file's #L10) are not checked.
"""
import pathlib
import re
import sys
import unicodedata

INLINE = re.compile(r"(!?)\[((?:[^\[\]]|\[[^\]]*\])*)\]\(\s*(<[^>]*>|[^)\s]*)(?:\s+\"[^\"]*\")?\s*\)")
REFDEF = re.compile(r"^ {0,3}\[[^\]]+\]:\s*(\S+)")
FENCE = re.compile(r"^[ \t]*(`{3,}|~{3,})")


def prose_lines(text):
    """(line number, line) outside fenced code blocks."""
    out, marker = [], None
    for n, line in enumerate(text.split("\n"), 1):
        m = FENCE.match(line)
        if marker is None and m:
            marker = m.group(1)
            continue
        if marker is not None:
            if m and m.group(1)[0] == marker[0] and len(m.group(1)) >= len(marker) \
                    and not line.strip()[len(m.group(1)):].strip():
                marker = None
            continue
        out.append((n, line))
    return out


def without_code_spans(line):
    return re.sub(r"(`+)(?:(?!\1).)+?\1", lambda m: " " * len(m.group(0)), line)


def slug(heading):
    text = re.sub(r"!?\[((?:[^\[\]]|\[[^\]]*\])*)\]\([^)]*\)", r"\1", heading)  # links: their label
    text = re.sub(r"<[^>]+>", "", text)                                          # inline HTML
    text = text.replace("`", "")
    text = re.sub(r"(\*\*|__|\*|(?<!\w)_(?!\w))", "", text)                     # emphasis
    text = text.strip().lower()
    kept = []
    for ch in text:
        if ch in " -_" or unicodedata.category(ch)[0] in "LNM":
            kept.append(ch)
    return "".join(kept).replace(" ", "-")


def anchors(path, cache={}):
    if path not in cache:
        seen, out = {}, set()
        for _, line in prose_lines(path.read_text()):
            m = re.match(r"^ {0,3}(#{1,6})[ \t]+(.*?)[ \t]*#*[ \t]*$", line)
            if not m:
                continue
            base = slug(m.group(2))
            n = seen.get(base, 0)
            seen[base] = n + 1
            out.add(base if n == 0 else f"{base}-{n}")
        cache[path] = out
    return cache[path]


def check(page, root):
    problems, count = [], 0
    for n, line in prose_lines(page.read_text()):
        plain = without_code_spans(line)
        targets = [m.group(3) for m in INLINE.finditer(plain)]
        ref = REFDEF.match(plain)
        if ref:
            targets.append(ref.group(1))
        for target in targets:
            target = target.strip("<>")
            if not target or re.match(r"^[a-zA-Z][a-zA-Z0-9+.-]*:", target):
                continue
            count += 1
            path_part, _, anchor = target.partition("#")
            dest = (page.parent / path_part).resolve() if path_part else page.resolve()
            where = f"{page.relative_to(root)}:{n}: [{target}]"
            if root.resolve() not in (dest, *dest.parents):
                problems.append(f"{where} leads out of the repository")
            elif not dest.exists():
                problems.append(f"{where}: {path_part} does not exist")
            elif anchor and dest.suffix == ".md" and dest.is_file() and anchor not in anchors(dest):
                problems.append(f"{where}: no heading of {dest.relative_to(root.resolve())} has the anchor #{anchor}")
    return count, problems


def main():
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    root = pathlib.Path(sys.argv[1])
    pages = [root / "README.md", *sorted((root / "docs").glob("*.md")), root / "bench" / "README.md",
             *sorted((root / "bench" / "results").glob("*.md")), root / "CHANGELOG.md",
             root / "tests" / "README.md"]
    failed = 0
    for page in pages:
        if not page.exists():
            print(f"{page}: missing", file=sys.stderr)
            failed += 1
            continue
        count, problems = check(page, root)
        for p in problems:
            print(p, file=sys.stderr)
        failed += len(problems)
        print(f"{page.relative_to(root)}: {count - len(problems)} of {count} relative links resolve")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
