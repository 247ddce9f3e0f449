"""The one format every benchmark prints its targets and figures in (read by ``benchmarks/bench.py``).

A target line::

    target <name>: <value> <op> <threshold>: met
    target <name>: <value> <op> <threshold>: NOT met

A figure (a measured value without a target)::

    figure <name>: <value>

``<name>`` is ``<benchmark> <what>``, e.g. ``recrawl speedup``. A value that could not be measured
(NaN) is ``NOT met``.
"""

from __future__ import annotations

import math
import operator
import re
from collections.abc import Callable

__all__ = ["LINE", "OPS", "figure", "target"]

#: Comparison operators a target may use.
OPS: dict[str, Callable[[float, float], bool]] = {
    ">=": operator.ge,
    "<=": operator.le,
    ">": operator.gt,
    "<": operator.lt,
    "==": operator.eq,
}

#: A target line as printed by :func:`target` (groups: name, value, op, threshold, verdict).
LINE = re.compile(r"^target (?P<name>.+?): (?P<value>\S+) (?P<op>>=|<=|==|>|<) "
                  r"(?P<threshold>\S+): (?P<verdict>met|NOT met)$")


def _fmt(value: float, digits: int) -> str:
    if isinstance(value, int):
        return str(value)
    return f"{value:.{digits}f}"


def target(name: str, value: float, op: str, threshold: float, *, digits: int = 2) -> bool:
    """Print ``target <name>: <value> <op> <threshold>: met|NOT met``; return whether it is met.

    Raises:
        ValueError: an unknown ``op``.

    >>> target("demo speedup", 6.123, ">=", 5, digits=1)
    target demo speedup: 6.1 >= 5: met
    True
    >>> target("demo ratio", float("nan"), "<=", 0.05, digits=3)
    target demo ratio: nan <= 0.050: NOT met
    False
    """
    if op not in OPS:
        raise ValueError(f"unknown operator {op!r}; expected one of {sorted(OPS)}")
    met = not math.isnan(value) and OPS[op](value, threshold)
    shown = str(int(threshold)) if float(threshold).is_integer() else _fmt(threshold, digits)
    print(f"target {name}: {_fmt(value, digits)} {op} {shown}: {'met' if met else 'NOT met'}",
          flush=True)
    return met


def figure(name: str, value: float | str, *, digits: int = 3, note: str = "") -> None:
    """Print ``figure <name>: <value>`` (a measured value without a target).

    >>> figure("demo F1", 0.97213, note="(README 0.972)")
    figure demo F1: 0.972 (README 0.972)
    """
    shown = value if isinstance(value, str) else _fmt(value, digits)
    print(f"figure {name}: {shown}" + (f" {note}" if note else ""), flush=True)
