"""The unit suite's own process writes the bytecode of every module of the package it imports, even where
PYTHONDONTWRITEBYTECODE is set (conftest turns it off before its first import of the package): the processes
the tests start read it. Those that conftest imported before turning it off were compiled again by every
process of every run, as no process ever wrote them (docs/testing.md, Keeping the unit suite fast)."""

import sys
from pathlib import Path

import benchstack


def test_every_module_of_the_package_this_process_imported_has_its_bytecode_on_disk() -> None:
    package = Path(benchstack.__file__).resolve().parent
    imported = {
        name: module
        for name, module in sys.modules.items()
        if name.startswith("benchstack") and getattr(module, "__cached__", None)
    }
    assert len(imported) > 20  # conftest's imports and theirs at least
    missing = sorted(
        name
        for name, module in imported.items()
        if Path(module.__file__).resolve().is_relative_to(package) and not Path(module.__cached__).is_file()
    )
    assert missing == []
