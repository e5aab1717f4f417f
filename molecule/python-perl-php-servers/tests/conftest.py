import sys
from pathlib import Path

# The shared testinfra helpers live in the project's tests/ folder.
sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "tests"))
