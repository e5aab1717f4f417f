"""Files of a run folder: JSON read with a one-line error that names the file, text and run.json written
atomically (a reader never sees half a file; an interrupted write leaves the old one).

A JSON file is read within bounds (:func:`benchstack.common.inputs.read_bounded`): a regular file of at most
:data:`benchstack.common.inputs.MAX_RECORD_BYTES`, so a FIFO or ``/dev/zero`` named ``cells/x.json`` is
refused instead of blocking or filling the memory, and nesting too deep for Python's parser is one line
too."""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any

from benchstack.common.inputs import MAX_RECORD_BYTES, InputError, read_bounded
from benchstack.results.formats import validate_run_info


def read_json(path: Path, what: str = "") -> Any:
    """The JSON value stored in ``path``. A file that cannot be read, is not UTF-8 or is not JSON raises
    ValueError: one line that names the file; ``what`` ("a cell") says what a binary file is not."""
    try:
        return json.loads(read_bounded(path, MAX_RECORD_BYTES).decode("utf-8"))
    except InputError as exc:
        raise ValueError(f"{path}: {exc}") from None
    except UnicodeDecodeError as exc:
        not_what = f"not {what}: " if what else ""
        raise ValueError(f"{path}: {not_what}not UTF-8 text (byte {exc.start})") from None
    except json.JSONDecodeError as exc:
        raise ValueError(f"{path}: not valid JSON: {exc}") from None
    except RecursionError:
        raise ValueError(f"{path}: not valid JSON: nested too deeply") from None


def write_atomic(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` through a temporary file in the same folder, renamed over it."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def write_json(path: Path, data: dict[str, Any]) -> None:
    """Write ``data`` as run.json is written: indented, keys sorted, anything else as its string. A record
    that does not fit the published run schema (:func:`benchstack.results.formats.validate_run_info`) is not
    written: ValueError naming the file and each field."""
    text = json.dumps(data, indent=2, sort_keys=True, default=str) + "\n"
    problems = validate_run_info(json.loads(text))
    if problems:
        raise ValueError(f"{path}: not writing an invalid run record: {'; '.join(problems)}")
    write_atomic(path, text)
