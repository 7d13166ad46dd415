#!/usr/bin/env python3
"""The layers of lib/include/idlewheel, checked (docs/design.md, "Layers", describes them).

LAYERS below is the one definition of the layer table: every header of lib/include/idlewheel
belongs to exactly one layer (a header in none, or in two, fails: add it to the table), and a
header may include only headers of its own layer or of a layer below it. Nothing in lib/
includes an umbrella. The core/ headers (the Asio-free wheel) include only the standard
library and each other, and each compiles on its own as C++17 from a copy of core/ alone,
the compiler's -H list showing no Boost or Asio header.

    header_layers.py SOURCE_DIR CXX       the check (fails, naming header:line)
    header_layers.py --self-test SOURCE_DIR CXX
                                          the check must fail on copies of lib/include with an
                                          upward include, an umbrella include, a Boost include
                                          in core/ and an unlisted header put in"""
import fnmatch
import pathlib
import re
import shutil
import subprocess
import sys
import tempfile

# Lowest first. Patterns are relative to lib/include/idlewheel. A detail/ or impl/ header sits
# in the layer of what it serves.
LAYERS = [
    ("core", ["core/*.hpp", "version.hpp"]),  # version.hpp: macros only, it includes nothing
    ("glue", ["detail/asio.hpp", "detail/executor_check.hpp", "detail/wait_op.hpp", "detail/cancel_after_handler.hpp",
              "detail/entry_access.hpp", "detail/jitter.hpp", "detail/lowest_socket.hpp"]),
    ("engine", ["error.hpp", "timeout.hpp", "timer_node.hpp", "wheel_timer.hpp", "impl/wheel_timer.hpp",
                "bind_member.hpp", "callback.hpp", "owner_offset.hpp", "detail/owner_of.hpp", "manual_clock.hpp", "liveness_stats.hpp",
                "cancel_after.hpp", "impl/cancel_after.hpp", "detail/cancel_after_op.hpp", "repeating_timer.hpp",
                "impl/repeating_timer.hpp", "detail/liveness_access.hpp"]),
    ("liveness", ["idle_watch.hpp", "heartbeat.hpp", "operation_deadline.hpp", "session_liveness.hpp",
                  "member_liveness.hpp", "stream_liveness.hpp", "detail/owner_hook.hpp", "impl/idle_watch.hpp",
                  "impl/heartbeat.hpp", "impl/session_liveness.hpp"]),
    ("pool", ["wheel_pool.hpp", "per_shard.hpp", "detail/pool_gather.hpp"]),
    ("beast", ["beast/*.hpp", "beast/impl/*.hpp"]),
    ("umbrella", ["idlewheel.hpp", "beast.hpp"]),
]
UMBRELLAS = {"idlewheel.hpp", "beast.hpp"}
INCLUDE = re.compile(r'^\s*#\s*include\s*[<"]([^>"]+)[>"]')
STANDARD = re.compile(r"^[a-z_]+$")  # <cstdint>, <type_traits>: the standard library's names


def includes(path):
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        m = INCLUDE.match(line)
        if m:
            yield number, m.group(1)


def layer_of(name):
    found = [i for i, (_, patterns) in enumerate(LAYERS) if any(fnmatch.fnmatchcase(name, p) for p in patterns)]
    return found


def check_tree(include_dir, cxx, quiet=False):
    """The problems found under include_dir (a lib/include), as "file:line: what" strings."""
    root = include_dir / "idlewheel"
    headers = sorted(p.relative_to(root).as_posix() for p in root.rglob("*.hpp"))
    problems, layer = [], {}
    for h in headers:
        found = layer_of(h)
        if len(found) != 1:
            where = "no layer" if not found else "layers " + ", ".join(LAYERS[i][0] for i in found)
            problems.append(f"lib/include/idlewheel/{h}: in {where} of tests/header_layers.py's LAYERS: put it in one")
        else:
            layer[h] = found[0]
    for h in headers:
        if h not in layer:
            continue
        for number, target in includes(root / h):
            where = f"lib/include/idlewheel/{h}:{number}: #include <{target}>"
            if target.startswith("idlewheel/"):
                inner = target[len("idlewheel/"):]
                if inner in UMBRELLAS:
                    problems.append(f"{where}: nothing in lib/ includes an umbrella")
                elif LAYERS[layer[h]][0] == "core" and not inner.startswith("core/"):
                    problems.append(f"{where}: a core/ header includes only the standard library and core/")
                elif inner not in layer:
                    problems.append(f"{where}: not a header of the table")
                elif layer[inner] > layer[h]:
                    problems.append(f"{where}: layer {LAYERS[layer[h]][0]} includes layer {LAYERS[layer[inner]][0]} "
                                    "(above it)")
            elif LAYERS[layer[h]][0] == "core" and not STANDARD.match(target):
                problems.append(f"{where}: a core/ header includes only the standard library and core/")
    core = [h for h in headers if h.startswith("core/")]
    if len(core) < 5:
        problems.append(f"only {len(core)} headers in lib/include/idlewheel/core: wrong SOURCE_DIR?")
    problems += compile_core(root / "core", core, cxx)
    return headers, problems


def compile_core(core_dir, core, cxx):
    """Each core/ header alone, C++17, from a copy of core/ only (no other idlewheel header can
    be found); -H lists every header read: none may be Boost's or Asio's."""
    problems = []
    with tempfile.TemporaryDirectory(prefix="header_layers_") as tmp:
        inc = pathlib.Path(tmp) / "include"
        shutil.copytree(core_dir, inc / "idlewheel" / "core")
        for h in core:
            source = pathlib.Path(tmp) / (h.replace("/", "_") + ".cpp")
            source.write_text(f"#include <idlewheel/{h}>\n#include <idlewheel/{h}>\n")  # twice: the guard too
            run = subprocess.run([cxx, "-std=c++17", "-fsyntax-only", "-H", "-Wall", "-Wextra", "-Wpedantic",
                                  "-Werror", "-I", str(inc), str(source)], capture_output=True, text=True)
            if run.returncode != 0:
                errors = [line for line in run.stderr.splitlines() if not line.startswith(".")]
                errors = errors[:errors.index("Multiple include guards may be useful for:")] \
                    if "Multiple include guards may be useful for:" in errors else errors
                problems.append(f"lib/include/idlewheel/{h}: does not compile alone (C++17, core/ only):\n"
                                + "\n".join(errors))
                continue
            read = [line.lstrip(". ").strip() for line in run.stderr.splitlines() if line.startswith(".")]
            bad = [p for p in read if re.search(r"/(boost|asio)(/|\.hpp)", p)]
            if bad:
                problems.append(f"lib/include/idlewheel/{h}: reads {bad[0]}")
            if not read:
                problems.append(f"lib/include/idlewheel/{h}: the compiler's -H listed no header: cannot check")
    return problems


def main(argv):
    if len(argv) == 4 and argv[1] == "--self-test":
        return self_test(pathlib.Path(argv[2]), argv[3])
    if len(argv) != 3:
        print(__doc__)
        return 2
    headers, problems = check_tree(pathlib.Path(argv[1]) / "lib" / "include", argv[2])
    for p in problems:
        print(p)
    if problems:
        print(f"header_layers: {len(problems)} problem(s) (the layers: docs/design.md#layers, tests/header_layers.py)")
        return 1
    print(f"header_layers: {len(headers)} headers in {len(LAYERS)} layers, none includes one above it or an umbrella; "
          "core/ includes the standard library only and each core/ header compiles alone")
    return 0


def self_test(source_dir, cxx):
    """Each mutation of a copy of lib/include must be reported."""
    mutations = [
        ("heartbeat.hpp", "#include <idlewheel/wheel_pool.hpp>\n", "above it"),
        ("beast/tcp_stream.hpp", "#include <idlewheel/beast.hpp>\n", "umbrella"),
        ("core/bits.hpp", "#include <boost/config.hpp>\n", "standard library and core/"),
        ("core/wheel.hpp", "#include <idlewheel/detail/asio.hpp>\n", "standard library and core/"),
        ("new_thing.hpp", "#pragma once\n", "no layer"),
    ]
    failed = 0
    for name, line, expected in mutations:
        with tempfile.TemporaryDirectory(prefix="header_layers_self_") as tmp:
            inc = pathlib.Path(tmp) / "include"
            shutil.copytree(source_dir / "lib" / "include", inc)
            path = inc / "idlewheel" / name
            text = path.read_text(encoding="utf-8") if path.exists() else ""
            path.write_text(text + line, encoding="utf-8")
            _, problems = check_tree(inc, cxx)
            hit = [p for p in problems if expected in p]
            print(f"{name} + {line.strip()}: {'reported: ' + hit[0].splitlines()[0] if hit else 'NOT reported'}")
            if not hit:
                failed += 1
    _, clean = check_tree(source_dir / "lib" / "include", cxx)
    if clean:
        print(f"the unmutated tree has {len(clean)} problem(s): run the check itself")
        failed += 1
    print(f"header_layers self-test: {len(mutations)} mutations, each reported" if not failed
          else f"header_layers self-test: FAILED ({failed} miss(es))")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
