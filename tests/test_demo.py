"""``bin/demo --dry-run``: the commands the README's live demo runs (no site, no crawl)."""

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def test_demo_dry_run_prints_the_crawl_and_report_commands(tmp_path):
    out = subprocess.run([sys.executable, str(REPO / "bin" / "demo"), "--dry-run", "--seconds", "7",
                          "--data-dir", str(tmp_path)], capture_output=True, text=True, timeout=30)
    assert out.returncode == 0, out.stderr
    site, crawl, report = out.stdout.splitlines()
    assert "tests/livesite.py" in site and '"feeds": true' in site
    assert " crawl http://127.0.0.41:PORT/ http://127.0.0.42:PORT/ http://127.0.0.43:PORT/ --watch" in crawl
    assert "-a for=7s" in crawl and f"--data-dir {tmp_path}" in crawl
    assert "NEWSCRAWL_ALLOWED_PRIVATE_HOSTS=127.0.0.41,127.0.0.42,127.0.0.43" in crawl
    assert report.endswith(f"report --data-dir {tmp_path}")
