"""Run every benchmark at its quick size and sum up their targets (``make bench``).

Usage (from the repository root)::

    .venv/bin/python benchmarks/bench.py                  # every benchmark, --quick
    .venv/bin/python benchmarks/bench.py --only recrawl,revisit_sim
    .venv/bin/python benchmarks/bench.py --full           # the full sizes (tens of minutes)

Each benchmark runs as its own process with ``--quick``; its output is passed through as it comes.
``live_freshness`` runs as ``--matrix`` (quick: 3 live site shapes × 4 minutes side by side;
``--full``: the whole matrix, hours; ``docs/benchmarks.md``).
Every line ``target <name>: <value> <op> <threshold>: met|NOT met`` (``benchmarks/_targets.py``)
is collected; the summary repeats them and ends with::

    bench: N targets, M met, K NOT met

Exit status 0 when every target is met and every benchmark ran; 1 otherwise. A benchmark that
exits with status 2 lacks a prerequisite (the shared corpus, a Redis server) and is reported as
skipped, not failed. Figures without a target (``figure <name>: <value>``) are repeated in the
summary too. Quick sizes are smaller than the README's runs, and this machine is shared: a
target missed at the quick size deserves a full run (``--full`` or the script alone) before any
conclusion.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

BENCH_DIR = Path(__file__).resolve().parent
ROOT = BENCH_DIR.parent
sys.path.insert(0, str(BENCH_DIR))

from _targets import LINE  # noqa: E402

#: Every benchmark, cheapest first. (name, extra arguments at the quick size)
BENCHMARKS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("linkclass_quality", ()),
    ("story_quality", ()),
    ("extraction_quality", ()),
    ("search_latency", ()),
    ("revisit_sim", ()),
    ("crawl_throughput", ()),
    ("recrawl", ()),
    ("distributed", ()),
    # quick: 3 live site shapes x 4 minutes side by side; --full: the whole matrix (hours)
    ("live_freshness", ("--matrix",)),
)
SKIPPED = 2  # exit status of a benchmark whose prerequisite is missing


@dataclass
class Outcome:
    name: str
    returncode: int = 0
    seconds: float = 0.0
    targets: list[tuple[str, bool]] = field(default_factory=list)  # (line, met)
    figures: list[str] = field(default_factory=list)


def run_one(name: str, extra: tuple[str, ...], *, full: bool) -> Outcome:
    """Run ``benchmarks/<name>.py`` (with ``--quick`` unless ``full``), echo and parse its output."""
    cmd = [sys.executable, str(BENCH_DIR / f"{name}.py"), *(() if full else ("--quick",)), *extra]
    print(f"\n== {name}: {' '.join(cmd[1:])}", flush=True)
    outcome = Outcome(name)
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    started = time.perf_counter()
    with subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          text=True, errors="replace") as proc:
        assert proc.stdout is not None
        for line in proc.stdout:
            sys.stdout.write(line)
            sys.stdout.flush()
            text = line.rstrip("\n")
            match = LINE.match(text)
            if match:
                outcome.targets.append((text, match["verdict"] == "met"))
            elif text.startswith("figure "):
                outcome.figures.append(text)
    outcome.returncode = proc.returncode
    outcome.seconds = time.perf_counter() - started
    return outcome


def summary(outcomes: list[Outcome]) -> int:
    """Print the summary; return the exit status."""
    print("\n== summary")
    failed = False
    for o in outcomes:
        state = ("skipped (prerequisite missing)" if o.returncode == SKIPPED
                 else "ok" if o.returncode == 0 else f"FAILED (exit {o.returncode})")
        failed |= o.returncode not in (0, SKIPPED)
        print(f"{o.name}: {state}, {o.seconds:.0f} s")
        for line, _ in o.targets:
            print(f"  {line}")
        for line in o.figures:
            print(f"  {line}")
    targets = [met for o in outcomes for _, met in o.targets]
    met = sum(targets)
    print(f"bench: {len(targets)} targets, {met} met, {len(targets) - met} NOT met")
    return 1 if failed or met < len(targets) else 0


def _commit() -> str:
    """The checked-out commit (``+dirty`` with local changes), for the README's figures."""
    try:
        head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True,
                              text=True, check=True).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=ROOT,
                               capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    return head + ("+dirty" if dirty else "")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    names = [name for name, _ in BENCHMARKS]
    parser.add_argument("--only", default="", help=f"comma-separated subset of {','.join(names)}")
    parser.add_argument("--full", action="store_true", help="full sizes instead of --quick")
    args = parser.parse_args(argv)
    only = [n.strip() for n in args.only.split(",") if n.strip()]
    unknown = set(only) - set(names)
    if unknown:
        parser.error(f"unknown benchmark(s): {', '.join(sorted(unknown))}")
    print(f"bench: {time.strftime('%Y-%m-%d %H:%M:%S UTC', time.gmtime())}, commit {_commit()}; "
          f"{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.2f}; "
          f"{'full' if args.full else 'quick'} sizes", flush=True)
    outcomes = [run_one(name, extra, full=args.full) for name, extra in BENCHMARKS
                if not only or name in only]
    return summary(outcomes)


if __name__ == "__main__":
    sys.exit(main())
