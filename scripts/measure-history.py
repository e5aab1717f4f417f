#!/usr/bin/env python3
"""What the history of runs costs (docs/history.md): N copies of one run folder imported into a new SQLite
file, then imported again unchanged, then `history` and `regress`, each timed with the interpreter's start.

    .venv/bin/python scripts/measure-history.py [--runs 100] [--run tests/data/history/01-new-quiet]
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def timed(args: list[str]) -> tuple[float, subprocess.CompletedProcess[str]]:
    start = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-m", "benchstack.cli", *args], cwd=ROOT, capture_output=True, text=True, check=False
    )
    return time.monotonic() - start, done


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=100)
    parser.add_argument("--run", type=Path, default=ROOT / "tests/data/history/01-new-quiet")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        folders = []
        for i in range(args.runs):
            # Each copy is its own run: the folder name is part of a run's key.
            folder = base / "results" / f"{i:04d}-{args.run.name}"
            shutil.copytree(args.run, folder)
            folders.append(str(folder))
        db = str(base / "history.sqlite")
        rows = []
        for label, command in (
            ("import (new)", ["import", "--db", db, *folders]),
            ("import (again, unchanged)", ["import", "--db", db, *folders]),
            ("history --limit 100", ["history", "--db", db, "--limit", "100"]),
            ("regress (the last copy)", ["regress", "--db", db, folders[-1]]),
        ):
            seconds, done = timed(command)
            if done.returncode not in (0, 4):
                print(done.stdout, done.stderr, file=sys.stderr)
                return 1
            rows.append((label, seconds, done.returncode))
        size = Path(db).stat().st_size
    print(f"{args.runs} copies of {args.run} ({len(list(args.run.glob('cells/*.json')))} cells each)")
    for label, seconds, code in rows:
        print(f"  {label:28} {seconds:6.2f} s  (exit {code})")
    print(f"  database size               {size / 1e6:6.2f} MB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
