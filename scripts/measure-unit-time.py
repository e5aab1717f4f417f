"""The unit suite's time, split: wall, the tests' process CPU and its children's CPU (the early commands and
every subprocess a test runs), and with ``--waits`` the files whose tests waited longest (wall against the
process's own CPU, per file). Measure alone, against a checkout of main in the same sitting
(docs/testing.md, Keeping the unit suite fast).

    .venv/bin/python scripts/measure-unit-time.py [--waits] [PYTEST ARGS...]

The default arguments are ./run unit's (pytest-xdist's workers: their CPU is the children's). ``--waits``
needs the tests in this process: give it ``-p no:xdist -m "not ansible and not browser" tests/unit``, or
``-m "ansible or browser" tests/unit`` for ./run integration.
"""

from __future__ import annotations

import collections
import resource
import sys
import time
from collections.abc import Iterator
from typing import Any

import pytest


class Waits:
    """pytest plugin: each test's wall and the process's CPU over it, summed per file."""

    def __init__(self) -> None:
        self.per_file: dict[str, list[float]] = collections.defaultdict(lambda: [0.0, 0.0])

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_protocol(self, item: pytest.Item, nextitem: Any) -> Iterator[None]:
        wall, cpu = time.perf_counter(), time.process_time()
        yield
        sums = self.per_file[item.nodeid.split("::")[0]]
        sums[0] += time.perf_counter() - wall
        sums[1] += time.process_time() - cpu

    def lines(self, top: int = 20) -> list[str]:
        wall = sum(w for w, _ in self.per_file.values())
        cpu = sum(c for _, c in self.per_file.values())
        out = [f"tests: wall {wall:.1f} s, the process's CPU {cpu:.1f} s, waiting {wall - cpu:.1f} s"]
        ranked = sorted(self.per_file.items(), key=lambda kv: kv[1][1] - kv[1][0])
        for name, (w, c) in ranked[:top]:
            out.append(f"  {w - c:5.2f} s waiting of {w:5.2f} s ({c:5.2f} s CPU)  {name}")
        return out


def main(argv: list[str]) -> int:
    waits = Waits() if "--waits" in argv else None
    args = [a for a in argv if a != "--waits"] or [
        *(
            "-q",
            "-p",
            "no:cacheprovider",
            "-n",
            "auto",
            "--dist",
            "loadfile",
            "-m",
            "not ansible and not browser",
            "tests/unit",
        )
    ]
    started = time.perf_counter()
    code = int(pytest.main(args, plugins=[waits] if waits else []))
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    print(
        f"wall {time.perf_counter() - started:.1f} s; tests' process CPU {own.ru_utime + own.ru_stime:.1f} s "
        f"(user {own.ru_utime:.1f}); children's CPU {children.ru_utime + children.ru_stime:.1f} s "
        f"(user {children.ru_utime:.1f})"
    )
    if waits:
        print("\n".join(waits.lines()))
    return code


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
