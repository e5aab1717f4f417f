import sys
from pathlib import Path

# The shared testinfra helpers and the tests every scenario runs live in the project's tests/ folder.
sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "tests"))

from stack_contract import pytest_generate_tests  # noqa: E402, F401
