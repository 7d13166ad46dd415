#!/usr/bin/python3
"""Every load command of the README runs as written (ctest loadgen_readme_commands).

usage: readme_commands.py README.md WORK_DIR BEAST_SERVER

Reads every line of the README's ```sh blocks that starts with `scripts/load.sh` (a trailing
`# comment` dropped, `\\` continuations joined), as check_cpp_blocks.py reads the ```cpp blocks,
and runs it with bash from the repository's root, unchanged but for two things the README
itself says: PORT is the port of a server this test starts, and the environment holds the test
build's programs (IDLEWHEEL_LOADGEN, IDLEWHEEL_DEMO_SERVER: nothing is built or installed) and
a small size (IDLEWHEEL_LOAD_CONNECTIONS=300, IDLEWHEEL_LOAD_OUT: a folder under WORK_DIR).
The server behind PORT is BEAST_SERVER (examples/websocket_server_async.cpp: Beast's timeout
option, idle 1000 ms) on 127.0.0.1, stopped by its PID. Each command must exit 0 and print
`checks: PASS`. Fails when the README has no such command.
"""
import os
import re
import subprocess
import sys
import time


def load_commands(readme):
    text = open(readme).read()
    commands = []
    for block in re.findall(r"^```sh[ \t]*\n(.*?)^```[ \t]*$", text, re.S | re.M):
        lines = block.split("\n")
        i = 0
        while i < len(lines):
            line = lines[i]
            while line.rstrip().endswith("\\") and i + 1 < len(lines):
                i += 1
                line = line.rstrip()[:-1] + " " + lines[i].strip()
            i += 1
            if line.startswith("scripts/load.sh"):
                commands.append(re.sub(r"\s+#.*$", "", line).strip())
    return commands


def start_server(program, work):
    log = open(os.path.join(work, "server.out"), "w")
    proc = subprocess.Popen([program, "127.0.0.1", "0", "2", "1000"], stdout=log, stderr=subprocess.STDOUT)
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        m = re.search(r"listening on port (\d+)", open(os.path.join(work, "server.out")).read())
        if m:
            return proc, m.group(1)
        if proc.poll() is not None:
            break
        time.sleep(0.05)
    proc.kill()
    sys.exit(f"readme_commands: {program} did not start (see {work}/server.out)")


def main(readme, work, beast_server):
    root = os.path.dirname(os.path.abspath(readme))
    os.makedirs(work, exist_ok=True)
    commands = load_commands(readme)
    if not commands:
        sys.exit(f"readme_commands: no scripts/load.sh command in {readme}")
    failed = 0
    for k, command in enumerate(commands):
        server, port = (None, None)
        if "PORT" in command:
            server, port = start_server(beast_server, work)
        env = dict(os.environ, IDLEWHEEL_LOAD_CONNECTIONS="300", IDLEWHEEL_LOAD_OUT=os.path.join(work, f"command-{k}"))
        run = command.replace("PORT", port) if port else command
        print(f"readme_commands: {command}" + (f"  (PORT={port})" if port else ""), flush=True)
        try:
            done = subprocess.run(["bash", "-c", run], cwd=root, env=env, capture_output=True, text=True, timeout=300)
        finally:
            if server:
                server.terminate()
                server.wait(timeout=10)
        with open(os.path.join(work, f"command-{k}.txt"), "w") as f:
            f.write(done.stdout + done.stderr)
        if done.returncode != 0 or not re.search(r"^checks: PASS", done.stdout, re.M):
            failed += 1
            sys.stdout.write(done.stdout[-4000:] + done.stderr[-2000:])
            print(f"readme_commands: FAILED (exit {done.returncode}): {command}")
        else:
            print(next(line for line in done.stdout.splitlines() if line.startswith("checks: ")))
    return 1 if failed else 0


if __name__ == "__main__":
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    sys.exit(main(*sys.argv[1:]))
