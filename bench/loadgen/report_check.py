#!/usr/bin/python3
"""The load test's HTML report in a real browser: headless Chromium (Debian's `chromium`) over
the DevTools protocol, with the dashboard check's client (tests/demo_server/functional/
dashboard_check.py). It checks what a person would see, not only that the page loads:

1. the DOM: #overall says PASS (FAIL with --expect-fail), the verdict table has a row for every
   role named by --roles, each with verdict "pass" (with --expect-fail: at least one "FAIL");
2. each plot (#plot-closes, #plot-connections, #plot-lateness, #plot-echo; matplotlib's SVG, its
   series with ids "series-...") has drawn series in its SVG, and
   its screenshot (Page.captureScreenshot clipped to the plot) is not blank: some share of its
   pixels is not white, and some hundreds of them have the colour of its data series; with
   --expect-fail the close-time plot must also show closes outside their window (red);
3. a screenshot of the whole page is saved (a PNG of more than 10 KB).

usage: report_check.py REPORT.html SCREENSHOT.png [--roles idle,active,...] [--expect-fail]
                       [--plots plot-closes,...]   (the plots to check; default all four)
Every wait is bounded; Chromium (its process group) is always killed. One PASS or FAIL line.
"""

import asyncio
import base64
import json
import os
import shutil
import struct
import sys
import tempfile
import zlib

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, "..", "..", "tests", "demo_server", "functional"))
import dashboard_check as browser  # noqa: E402  (start_chromium, devtools_endpoint, DevTools)
from clients import Failure, check  # noqa: E402
import clients  # noqa: E402

# Each plot and the colour of its data (bench/loadgen/report.py's COLOURS).
# plot-closes: the promised window's band (WINDOW).
OUTSIDE = (0xb0, 0x00, 0x20)  # report.py's LATE: a close outside its window
PLOTS = {"plot-closes": (0xcf, 0xe8, 0xcf), "plot-connections": (0x7b, 0x32, 0x94), "plot-lateness": (0x1f, 0x6f, 0xb4),
         "plot-echo": (0x2c, 0xa0, 0x2c)}


def decode_png(data):
    """(width, height, rows of RGB tuples) of an 8-bit RGB or RGBA, non-interlaced PNG."""
    check(data.startswith(b"\x89PNG\r\n\x1a\n"), "not a PNG")
    pos, idat, header = 8, b"", None
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            header = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
    width, height, depth, colour, _, _, interlace = header
    check(depth == 8 and colour in (2, 6) and interlace == 0, f"unexpected PNG format {header}")
    bpp = 3 if colour == 2 else 4
    raw, stride, rows, prev = zlib.decompress(idat), width * bpp, [], bytearray(width * bpp)
    for y in range(height):
        kind, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0
            b, c = prev[i], prev[i - bpp] if i >= bpp else 0
            if kind == 1:
                line[i] = (line[i] + a) & 255
            elif kind == 2:
                line[i] = (line[i] + b) & 255
            elif kind == 3:
                line[i] = (line[i] + (a + b) // 2) & 255
            elif kind == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append([tuple(line[x * bpp:x * bpp + 3]) for x in range(width)])
        prev = line
    return width, height, rows


def pixel_counts(png, colour):
    """(share of pixels that are not white, pixels within a small distance of `colour`)."""
    width, height, rows = decode_png(png)
    inked = near = 0
    for row in rows:
        for r, g, b in row:
            if r < 235 or g < 235 or b < 235:
                inked += 1
            # Bars are drawn at 75 % opacity on white: accept the colour blended that way too.
            for alpha in (1.0, 0.75):
                want = [round(alpha * c + (1 - alpha) * 255) for c in colour]
                if abs(r - want[0]) + abs(g - want[1]) + abs(b - want[2]) < 40:
                    near += 1
                    break
    return inked / (width * height), near


DOM_STATE = """JSON.stringify({
  overall: (document.getElementById('overall') || {}).textContent || '',
  rows: [...document.querySelectorAll('#verdicts tbody tr')].map(r => ({role: r.dataset.role,
        verdict: r.dataset.verdict, text: r.innerText})),
  plots: Object.fromEntries([...document.querySelectorAll('figure')].map(f => { const b = f.querySelector('svg').getBoundingClientRect();
        return [f.id, {series: f.querySelectorAll('svg [id^="series-"]').length, x: b.left + scrollX, y: b.top + scrollY,
                       w: b.width, h: b.height}]; }))
})"""


async def exercise(report, screenshot, roles, expect_fail, profile_dir, chromium, plots):
    import websockets

    endpoint = await browser.devtools_endpoint(profile_dir, chromium)
    async with websockets.connect(endpoint, max_size=64 * 2**20, ping_interval=None, open_timeout=20) as ws:
        cdp = browser.DevTools(ws)
        target = await cdp.call("Target.createTarget", {"url": "about:blank"})
        session = (await cdp.call("Target.attachToTarget", {"targetId": target["targetId"], "flatten": True}))["sessionId"]
        await cdp.call("Page.enable", {}, session)
        await cdp.call("Emulation.setDeviceMetricsOverride",
                       {"width": 1280, "height": 1600, "deviceScaleFactor": 1, "mobile": False}, session)
        await cdp.call("Page.navigate", {"url": "file://" + os.path.abspath(report)}, session)
        state = None
        for _ in range(100):  # the page is local: it is there within a few seconds
            result = await cdp.call("Runtime.evaluate", {"expression": "location.protocol === 'file:' && document.readyState === 'complete' && " + DOM_STATE,
                                                         "returnByValue": True}, session)
            value = result.get("result", {}).get("value")
            if value:
                state = json.loads(value)
                break
            await asyncio.sleep(0.1)
        check(state is not None, "the report did not load within 10 s")
        want = "FAIL" if expect_fail else "PASS"
        check(state["overall"].startswith(want), f"#overall says {state['overall']!r}, expected {want}")
        by_role = {r["role"]: r for r in state["rows"]}
        check(set(roles) <= set(by_role), f"the verdict table has rows {sorted(by_role)}, expected {roles}")
        for role in roles:
            check(role in by_role[role]["text"], f"the {role} row does not show its role: {by_role[role]['text']!r}")
        verdicts = {r: by_role[r]["verdict"] for r in by_role}
        if expect_fail:
            check("fail" in verdicts.values(), f"expected a failed role, got {verdicts}")
            check(any("FAIL" in r["text"] for r in state["rows"]), "no row shows FAIL")
        else:
            check(all(v == "pass" for v in verdicts.values()), f"expected every role to pass, got {verdicts}")
            check(all("pass" in r["text"] for r in state["rows"]), "a row does not show pass")
        seen = []
        for plot, colour in ((p, PLOTS[p]) for p in plots):
            box = state["plots"].get(plot)
            check(box is not None, f"no #{plot} in the report")
            check(box["series"] > 0, f"#{plot} has no drawn series")
            shot = await cdp.call("Page.captureScreenshot", {"format": "png", "captureBeyondViewport": True, "clip": {
                "x": box["x"], "y": box["y"], "width": box["w"], "height": box["h"], "scale": 1}}, session)
            inked, near = pixel_counts(base64.b64decode(shot["data"]), colour)
            check(inked > 0.02, f"#{plot} looks blank: {inked:.1%} of its pixels are not white")
            check(near >= 200, f"#{plot} shows only {near} pixels of its series' colour")
            seen.append(f"{plot} {inked:.0%} inked, {near} series pixels")
            if plot == "plot-closes" and expect_fail:
                _, outside = pixel_counts(base64.b64decode(shot["data"]), OUTSIDE)
                check(outside >= 100, f"#{plot} shows only {outside} pixels of closes outside their window")
                seen.append(f"{plot} {outside} pixels of closes outside the window")
        shot = await cdp.call("Page.captureScreenshot", {"format": "png", "captureBeyondViewport": True}, session)
        png = base64.b64decode(shot["data"])
        with open(screenshot, "wb") as f:
            f.write(png)
        check(png.startswith(b"\x89PNG\r\n\x1a\n") and len(png) > 10 * 1024, f"the page screenshot is {len(png)} bytes")
        await cdp.call("Target.closeTarget", {"targetId": target["targetId"]})
        return f"{want}, verdicts {verdicts}; " + "; ".join(seen) + f"; screenshot {screenshot} ({len(png)} bytes)"


def main(argv):
    expect_fail = "--expect-fail" in argv
    argv = [a for a in argv if a != "--expect-fail"]
    roles = ["idle", "active", "pinger", "dead", "stalled"]
    if "--roles" in argv:
        i = argv.index("--roles")
        roles = argv[i + 1].split(",")
        del argv[i:i + 2]
    plots = list(PLOTS)
    if "--plots" in argv:
        i = argv.index("--plots")
        plots = argv[i + 1].split(",")
        del argv[i:i + 2]
    if len(argv) != 2 or not set(plots) <= set(PLOTS):
        print(__doc__.split("\n\n")[2], file=sys.stderr)
        return 2
    missing = clients.websockets_missing("report_check")
    if missing:
        print(missing)
        return 1
    if not os.access(browser.CHROMIUM, os.X_OK):
        print(f"FAIL: report_check: {browser.CHROMIUM} not found (scripts/setup.sh test installs Debian's chromium)")
        return 1
    chromium = None
    chromium_err = tempfile.TemporaryFile()
    profile_dir = tempfile.mkdtemp(prefix="idlewheel-report-")
    try:
        chromium = browser.start_chromium(profile_dir, chromium_err)
        detail = asyncio.run(asyncio.wait_for(exercise(argv[0], argv[1], roles, expect_fail, profile_dir, chromium, plots), 60))
        print(f"PASS: report_check: {detail}")
        return 0
    except Exception as e:  # one FAIL line, whatever went wrong
        print(f"FAIL: report_check: {type(e).__name__}: {e}")
        chromium_err.seek(0)
        print("---- chromium stderr (tail):\n" + chromium_err.read().decode(errors="replace")[-3000:], file=sys.stderr)
        return 1
    finally:
        clients.stop_process_group(chromium)
        shutil.rmtree(profile_dir, ignore_errors=True)
        chromium_err.close()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
