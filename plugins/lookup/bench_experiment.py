"""Lookup: load and validate an experiment through the benchstack package.

``lookup('bench_experiment', NAME_OR_PATH)`` gives the experiment as a dict with its stacks, its load plan
and ``cells``: every cell in measuring order. A bare name is looked up as ``experiments/NAME.yml`` in
the project; anything with a ``/`` or a ``.yml``/``.yaml`` suffix is a path.
"""

from __future__ import annotations

from dataclasses import asdict
from pathlib import Path
from typing import Any

from ansible.errors import AnsibleLookupError
from ansible.plugins.lookup import LookupBase

from benchstack.experiment import ExperimentError, cells, load_experiment
from benchstack.stacks import StackError, normalize_stacks

DOCUMENTATION = """
name: bench_experiment
short_description: Load and validate a bench-stack experiment
description:
  - Reads an experiment YAML file, validates it and expands its cells.
options:
  _terms:
    description: Experiment name (experiments/NAME.yml) or path.
    required: true
"""

PROJECT_DIR = Path(__file__).resolve().parents[2]


def resolve(term: str, base: Path = PROJECT_DIR) -> Path:
    if "/" in term or term.endswith((".yml", ".yaml")):
        return Path(term).expanduser().resolve()
    return base / "experiments" / f"{term}.yml"


class LookupModule(LookupBase):
    def run(self, terms: list[str], variables: dict[str, Any] | None = None, **kwargs: Any) -> list[Any]:
        out = []
        for term in terms:
            path = resolve(str(term))
            if path.parent == PROJECT_DIR / "experiments" and not path.exists():
                known = ", ".join(sorted(p.stem for p in path.parent.glob("*.yml"))) or "none"
                raise AnsibleLookupError(f"no experiment named {term!r}: no {path} (there are: {known})")
            try:
                exp = load_experiment(path)
                normalize_stacks(exp.stacks)
            except (ExperimentError, StackError) as exc:
                # Ansible prints every chained cause after the message: the message alone says it all.
                raise AnsibleLookupError(str(exc)) from None
            out.append(
                {
                    "name": exp.name,
                    "description": exp.description,
                    "source": str(path),
                    "stacks": exp.stacks,
                    "load": exp.load,
                    "cells": [asdict(c) for c in cells(exp)],
                }
            )
        return out
