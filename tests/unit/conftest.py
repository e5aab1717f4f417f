from pathlib import Path

import pytest

DATA = Path(__file__).resolve().parent.parent / "data"


def read_data(tool: str, name: str) -> str:
    return (DATA / tool / name).read_text(encoding="utf-8")


@pytest.fixture
def data_dir() -> Path:
    return DATA
