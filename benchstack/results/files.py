"""Files of a run folder: JSON read with a one-line error that names the file, text and run.json written
atomically (a reader never sees half a file; an interrupted write leaves the old one).

A JSON file is read within bounds (:func:`benchstack.common.inputs.read_bounded`): a regular file of at most
:data:`benchstack.common.inputs.MAX_RECORD_BYTES`, so a FIFO or ``/dev/zero`` named ``cells/x.json`` is
refused instead of blocking or filling the memory, and nesting too deep for Python's parser is one line
too.

A write that fails (the disk full, the folder no longer writable) is named in one line by
:func:`storage_problem`; :func:`probe_writable` asks the file system before a cell's load is sent."""

from __future__ import annotations

import errno
import hashlib
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
    return _json_of(_bounded(path), path, what)


def read_json_and_digest(path: Path, what: str = "") -> tuple[Any, bytes]:
    """:func:`read_json`, and the sha256 of the bytes it read (what a reader that remembers a file it found
    valid keys it by: the same bytes, the same value)."""
    raw = _bounded(path)
    return _json_of(raw, path, what), hashlib.sha256(raw).digest()


def _bounded(path: Path) -> bytes:
    try:
        return read_bounded(path, MAX_RECORD_BYTES)
    except InputError as exc:
        raise ValueError(f"{path}: {exc}") from None


def _json_of(raw: bytes, path: Path, what: str) -> Any:
    try:
        return json.loads(raw.decode("utf-8"))
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


def storage_problem(exc: OSError, path: str | os.PathLike[str] | None = None) -> str:
    """One line for a failed write: the errno's name, its text and the path (``path``, else the error's
    own), e.g. ``ENOSPC (No space left on device): results/run/cells/x.json``."""
    name = errno.errorcode.get(exc.errno or 0, "OSError")
    text = exc.strerror or str(exc) or type(exc).__name__
    where = path if path is not None else exc.filename
    return f"{name} ({text})" + (f": {where}" if where is not None else "")


def probe_writable(folder: Path) -> None:
    """Write a few bytes into ``folder`` (or, when it does not exist yet, into the nearest folder above it,
    where it would be made) and remove them: OSError when the file system refuses (EACCES, EPERM, EROFS,
    ENOSPC; ENOTDIR for a file in its place). Nothing is left behind and no folder is made."""
    if folder.exists() and not folder.is_dir():
        raise NotADirectoryError(errno.ENOTDIR, os.strerror(errno.ENOTDIR), str(folder))
    where = folder
    while not where.is_dir() and where != where.parent:
        where = where.parent
    fd, tmp = tempfile.mkstemp(dir=where, prefix=".bench-stack-probe.")
    try:
        os.write(fd, b"bench-stack\n")
    finally:
        os.close(fd)
        Path(tmp).unlink(missing_ok=True)


def write_json(path: Path, data: dict[str, Any]) -> None:
    """Write ``data`` as run.json is written: indented, keys sorted, anything else as its string. A record
    that does not fit the published run schema (:func:`benchstack.results.formats.validate_run_info`) is not
    written: ValueError naming the file and each field."""
    text = json.dumps(data, indent=2, sort_keys=True, default=str) + "\n"
    problems = validate_run_info(json.loads(text))
    if problems:
        raise ValueError(f"{path}: not writing an invalid run record: {'; '.join(problems)}")
    write_atomic(path, text)
