"""The HTML report rendered by a real browser: Debian's headless Chromium opens the page (network
blocked), the charts must be drawn (plotly's ``<svg class="main-svg">`` in the DOM after the
scripts ran), the screenshot must not be blank, and the page must log nothing to the console
(an uncaught error, a failed load, a console.error all show up as ``CONSOLE`` lines).

``.ci/run`` installs ``chromium``; without it the test skips with a message, except on CI
(``CI`` set), where it fails.
"""

from __future__ import annotations

import os
import re
import shutil
import struct
import subprocess
import zlib
from pathlib import Path

import pytest

from newscrawl.algorithms.analytics import ReportBuilder
from newscrawl.report_html import write_html
from tests import analystdata

CHROMIUM_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                  "--disable-extensions", "--no-first-run", "--enable-logging=stderr", "--v=0",
                  "--host-resolver-rules=MAP * ~NOTFOUND", "--virtual-time-budget=15000",
                  "--window-size=1200,2000"]
CHARTS = 5


def chromium() -> str:
    for candidate in ("/usr/bin/chromium", shutil.which("chromium"), shutil.which("chromium-browser")):
        if candidate and Path(candidate).exists():
            return candidate
    if os.environ.get("CI"):
        pytest.fail("chromium is not installed on CI (.ci/run installs it with apt-get)")
    pytest.skip("needs Debian's chromium (apt-get install chromium) to render the HTML report")


def png_pixels(data: bytes) -> tuple[int, int, int, list[bytes]]:
    """Decode an 8-bit RGB / RGBA / grey PNG (non-interlaced): ``(width, height, channels,
    rows)``, each row the unfiltered bytes (PNG spec §9 filters)."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    pos, idat, header = 8, b"", None
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            header = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
    assert header is not None
    width, height, depth, color, _, _, interlace = header
    assert depth == 8 and interlace == 0, header
    channels = {0: 1, 2: 3, 4: 2, 6: 4}[color]
    raw = zlib.decompress(idat)
    stride = width * channels
    rows: list[bytes] = []
    prev = bytearray(stride)
    for y in range(height):
        start = y * (stride + 1)
        kind, line = raw[start], bytearray(raw[start + 1:start + 1 + stride])
        for i in range(stride):
            a = line[i - channels] if i >= channels else 0
            b = prev[i]
            c = prev[i - channels] if i >= channels else 0
            if kind == 1:
                line[i] = (line[i] + a) & 255
            elif kind == 2:
                line[i] = (line[i] + b) & 255
            elif kind == 3:
                line[i] = (line[i] + ((a + b) >> 1)) & 255
            elif kind == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append(bytes(line))
        prev = line
    return width, height, channels, rows


@pytest.fixture(scope="module")
def page(tmp_path_factory) -> Path:
    """The report of the analysts' sample, as ``newscrawl report --html`` writes it."""
    builder = ReportBuilder(analystdata.NOW, days=7, top=10)
    for doc in analystdata.articles():
        builder.add_article({**doc, "first_seen": doc["fetched_at"]})
    for record in analystdata.sources():
        builder.add_source(record)
    rows = [{"site": n["site"], "nodes": 1, "articles": 0,
             "links": {l["link_class"]: 1 for l in n["links"]}} for n in analystdata.nodes()]
    path = tmp_path_factory.mktemp("report") / "report.html"
    write_html(path, builder.build(), rows, title="newscrawl report: sample")
    return path


def test_chromium_renders_every_chart_without_console_errors(page, tmp_path):
    browser = chromium()
    proc = subprocess.run([browser, *CHROMIUM_FLAGS, "--dump-dom", page.as_uri()],
                          capture_output=True, text=True, timeout=90, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]
    drawn = re.findall(r'<svg class="main-svg"', proc.stdout)
    plots = proc.stdout.count('class="plotly-graph-div')
    assert plots == CHARTS and len(drawn) >= CHARTS, (plots, len(drawn))
    console = [line for line in proc.stderr.splitlines() if "CONSOLE" in line or "Uncaught" in line]
    assert console == [], console


def test_chromium_screenshot_is_not_blank(page, tmp_path):
    browser = chromium()
    shot = tmp_path / "report.png"
    proc = subprocess.run([browser, *CHROMIUM_FLAGS, f"--screenshot={shot}", page.as_uri()],
                          capture_output=True, text=True, timeout=90, cwd=tmp_path)
    assert proc.returncode == 0 and shot.exists(), proc.stderr[-3000:]
    console = [line for line in proc.stderr.splitlines() if "CONSOLE" in line or "Uncaught" in line]
    assert console == [], console
    width, height, channels, rows = png_pixels(shot.read_bytes())
    assert (width, height) == (1200, 2000)
    # every 4th pixel of every 4th row: how many differ from the background, how many colours
    pixels = [row[x:x + min(channels, 3)] for row in rows[::4] for x in range(0, len(row), channels * 4)]
    background = max(set(pixels), key=pixels.count)
    share = sum(p != background for p in pixels) / len(pixels)
    assert share > 0.03, f"only {share:.1%} of the screenshot differs from its background"
    assert len(set(pixels)) > 20
