#!/usr/bin/env python3
# Copyright (c) 2026 The idlewheel authors. Distributed under the Boost Software License 1.0.
"""own_code_only.py SOURCE_DIR [UPSTREAM_DIR...]: the repository holds only its own code.

Fails when a file of the repository (git ls-files, else every file under SOURCE_DIR but build/
and .git/) carries another author's copyright line (a line with "copyright" and a year that
does not name "The idlewheel authors"), or holds someone else's file verbatim: WINDOW
consecutive non-blank lines of a source file found under an UPSTREAM_DIR (Beast's and Asio's
examples, from the Boost doc package) are a copy. A patch's context and added lines are
compared without their first column, so a patch that carries more than its context fails too
(its removed lines are the upstream file's by nature).

--self-test: shows both checks fail on a foreign copyright line and on a copied file.
"""
import os
import re
import subprocess
import sys
import tempfile

WINDOW = 20
YEAR = re.compile(r"\b(19|20)[0-9]{2}\b")
OURS = "the idlewheel authors"
SOURCE_EXT = (".cpp", ".hpp", ".ipp", ".h", ".c", ".cc")


def repository_files(root):
    try:
        out = subprocess.run(["git", "-C", root, "ls-files", "-z"], check=True, capture_output=True).stdout
        return [f for f in out.decode().split("\0") if f and os.path.isfile(os.path.join(root, f))]
    except (OSError, subprocess.CalledProcessError):
        files = []
        for d, dirs, names in os.walk(root):
            dirs[:] = [x for x in dirs if not (d == root and x in ("build", ".git"))]
            files += [os.path.relpath(os.path.join(d, n), root) for n in names]
        return files


def text_lines(path):
    try:
        with open(path, encoding="utf-8") as f:
            return f.read().splitlines()
    except (UnicodeDecodeError, OSError):
        return None


def normalized(lines, patch):
    out = []
    for line in lines:
        if patch:
            if line.startswith(("+++", "---", "@@", "-")):
                continue  # a removed line is what a diff must show of what it removes
            line = line[1:]
        line = " ".join(line.split())
        if line:
            out.append(line)
    return out


def windows(lines):
    return {hash(tuple(lines[i:i + WINDOW])) for i in range(0, max(0, len(lines) - WINDOW + 1))}


def upstream_windows(dirs):
    seen = {}
    for top in dirs:
        for d, _, names in os.walk(top):
            for n in names:
                if n.endswith(SOURCE_EXT):
                    path = os.path.join(d, n)
                    lines = text_lines(path)
                    if lines:
                        for w in windows(normalized(lines, False)):
                            seen.setdefault(w, path)
    return seen


def check(root, upstream_dirs):
    failures = []
    seen = upstream_windows(upstream_dirs)
    for rel in repository_files(root):
        lines = text_lines(os.path.join(root, rel))
        if lines is None:
            continue
        for n, line in enumerate(lines, 1):
            low = line.lower()
            if "copyright" in low and YEAR.search(line) and OURS not in low:
                failures.append(f"{rel}:{n}: another author's copyright line: {line.strip()}")
        if seen:
            norm = normalized(lines, rel.endswith((".patch", ".diff")))
            for i in range(0, max(0, len(norm) - WINDOW + 1)):
                origin = seen.get(hash(tuple(norm[i:i + WINDOW])))
                if origin:
                    failures.append(f"{rel}: {WINDOW} lines from its line {i + 1} on are {origin}'s, verbatim")
                    break
    return failures


def self_test():
    with tempfile.TemporaryDirectory() as tmp:
        up = os.path.join(tmp, "upstream")
        repo = os.path.join(tmp, "repo")
        os.makedirs(up)
        os.makedirs(repo)
        body = "".join(f"int line_{i} = {i};\n" for i in range(40))
        with open(os.path.join(up, "theirs.cpp"), "w") as f:
            f.write(body)
        with open(os.path.join(repo, "ours.cpp"), "w") as f:
            f.write("// Copyright (c) 2026 The idlewheel authors.\nint x;\n")
        good = check(repo, [up])
        with open(os.path.join(repo, "copied.cpp"), "w") as f:
            f.write("// Copy" + "right (c) " + str(1990 + 26) + " Someone Else\n" + body)  # not a line of ours
        bad = check(repo, [up])
    ok = good == [] and len(bad) == 2
    print("self-test:", "passed" if ok else f"failed: {good} {bad}")
    return 0 if ok else 1


def main():
    if sys.argv[1:2] == ["--self-test"]:
        return self_test()
    root = sys.argv[1]
    upstream = [d for d in sys.argv[2:] if os.path.isdir(d)]
    failures = check(root, upstream)
    for f in failures:
        print(f)
    print(f"own_code_only: {len(failures)} problem(s); upstream folders compared: {upstream or 'none found'}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
