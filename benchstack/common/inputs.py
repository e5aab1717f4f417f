"""What users hand bench-stack, read within bounds and quoted back safely.

Every file a command reads on a user's say-so (an experiment, a cell, run.json) goes through
:func:`read_bounded`: a regular file, at most so many bytes. A FIFO would block the read forever and
``/dev/zero`` would never end, so the file is opened without blocking and checked before a byte is read.

Experiments are YAML, read by :func:`load_yaml`: PyYAML's safe loader, plus what it lacks for input from
anyone: a depth limit (PyYAML composes recursively, so 100,000 nested brackets end in RecursionError), a
limit on the values the document holds with every alias expanded (nine levels of ten aliases are 10**9
values: harmless as shared references, but the first ``repr()`` or JSON dump of them fills the memory), no
recursive aliases, and no key given twice in one mapping (PyYAML keeps the last one silently).

Every string a YAML document holds is text UTF-8 can write: a ``"\\ud800"`` escape (a lone surrogate) is
refused where it is read, not later by whatever encodes it (a hash, an env file, the plan's JSON).

A path a user writes (an experiment's, an ``app.src``) becomes a file's through :func:`user_path`: ``~`` of a
user that does not exist, a NUL, a name too long or a loop of links is one line, never a traceback.

Messages quote values through :func:`shown` and keys through :func:`shown_key`: short, escaped, never the
whole of a long value, so a file that is not an experiment (``/etc/shadow``) is never echoed back; and the
credentials of a URL (``https://user:token@host/``) masked (:func:`masked`), wherever they are quoted.
"""

from __future__ import annotations

import errno
import os
import re
import reprlib
import stat
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO

import yaml
from yaml.composer import Composer
from yaml.constructor import SafeConstructor
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode
from yaml.resolver import Resolver

try:
    from yaml._yaml import CParser

    LIBYAML = True
except ImportError:  # a PyYAML built without libyaml: the Python loader reads every document
    CParser = yaml.SafeLoader  # type: ignore[assignment,misc]
    LIBYAML = False

# The project's own YAML (the roles' defaults, vars and argument specs, the plugins' docs): yaml.safe_load's
# reading, by libyaml where PyYAML has it (the Python loader took ~5 times as long).
PROJECT_YAML_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

MAX_EXPERIMENT_BYTES = 1024 * 1024
# A cell is 1 to 30 kB (its latency distribution included) and run.json tens of kB: 16 MiB is far above
# both and still bounds what one file can make a command hold in memory.
MAX_RECORD_BYTES = 16 * 1024 * 1024
# A load tool's captured output (`bench-stack parse`): a few kB (ab, wrk, httperf summaries); the bound is
# a record's, so /dev/zero or a runaway log is refused rather than read into memory.
MAX_OUTPUT_BYTES = MAX_RECORD_BYTES
# A dependency file of a user's app read on the controller (requirements.txt, Gemfile, Gemfile.lock): a
# large Gemfile.lock is tens of kB.
MAX_DEPENDENCY_FILE_BYTES = 1024 * 1024
# An experiment nests about six levels (load.plans[0].concurrency[1]); anchors and merge keys add none.
MAX_DEPTH = 32
# Values (scalars, lists and mappings) of an experiment with every alias expanded. The largest shipped
# experiment holds under 300.
MAX_VALUES = 100_000
MAX_INT_CHARS = 100
# How many characters of a value a message quotes.
SHOWN_CHARS = 60
MERGE_TAG = "tag:yaml.org,2002:merge"


class InputError(ValueError):
    """A file or document that is not read: one line, without the file's name (the caller adds it)."""


def _kind_of(mode: int) -> str:
    kinds = [
        (stat.S_ISDIR, "a folder"),
        (stat.S_ISFIFO, "a FIFO"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
        (stat.S_ISSOCK, "a socket"),
    ]
    return next((name for test, name in kinds if test(mode)), "a special file")


def read_bounded(path: str | os.PathLike[str], limit: int) -> bytes:
    """The bytes of the regular file ``path``, at most ``limit`` of them; InputError otherwise."""
    try:
        # O_NONBLOCK: opening a FIFO without a writer would wait forever; regular files ignore it.
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | getattr(os, "O_CLOEXEC", 0))
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise InputError("cannot read the file: a loop of symbolic links") from None
        raise InputError(f"cannot read the file: {exc.strerror}") from None
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            raise InputError(f"not a regular file ({_kind_of(mode)}): not read")
        chunks, size = [], 0
        while size <= limit:
            chunk = os.read(fd, min(1024 * 1024, limit + 1 - size))
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
    except OSError as exc:
        raise InputError(f"cannot read the file: {exc.strerror}") from None
    finally:
        os.close(fd)
    if size > limit:
        raise InputError(f"larger than {_size(limit)}: not read")
    return b"".join(chunks)


def read_bounded_stream(stream: BinaryIO, limit: int) -> bytes:
    """At most ``limit`` bytes of ``stream`` (standard input); InputError when it holds more."""
    data = stream.read(limit + 1)
    if len(data) > limit:
        raise InputError(f"larger than {_size(limit)}: not read")
    return data


def user_path(text: str, base: Path | None = None, what: str = "file") -> Path:
    """The absolute path the user wrote as ``text``: ``~`` expanded, relative to ``base`` (else the working
    folder), symbolic links resolved; InputError (one line, without the path: the caller names it) when it
    cannot be one (a NUL, ``~`` of a user that does not exist, a name too long, a loop of links). A path
    that does not exist is returned: its reader says so. ``what`` names it in the message (a file, a
    folder)."""
    if "\0" in text:
        raise InputError("a path cannot hold a NUL character")
    try:
        path = Path(text).expanduser()
    except RuntimeError:  # ~name of no user
        raise InputError(f"{shown(text.split('/', 1)[0])}: no such user, so '~' cannot be expanded") from None
    if not path.is_absolute():
        path = (base or Path.cwd()) / path
    try:
        # Python < 3.13 raises RuntimeError on a loop; later ones leave the loop in place, and stat names it.
        path = path.resolve()
        os.stat(path)
    except RuntimeError:
        raise InputError(f"cannot read the {what}: a loop of symbolic links") from None
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise InputError(f"cannot read the {what}: a loop of symbolic links") from None
        if exc.errno == errno.ENAMETOOLONG:
            raise InputError(f"cannot read the {what}: {exc.strerror}") from None
        # Missing, or not a folder on the way: its reader says so in its own words.
    return path


def _size(n: int) -> str:
    return f"{n // (1024 * 1024)} MiB" if n % (1024 * 1024) == 0 else f"{n:_} bytes"


# ---------------------------------------------------------------- quoting


def _repr() -> reprlib.Repr:
    r = reprlib.Repr()
    r.maxlevel = 2
    r.maxstring = SHOWN_CHARS
    r.maxother = SHOWN_CHARS
    r.maxlong = 40
    r.maxlist = r.maxtuple = r.maxdict = r.maxset = r.maxfrozenset = 4
    return r


_REPR = _repr()
# The user information of a URL (``user:token@`` after ``scheme://``, up to the last '@' before the host's
# end): a token in app.git.repo or a requirements line's index URL (issue 44).
_URL_CREDENTIALS_RE = re.compile(r"\b([A-Za-z][A-Za-z0-9+.-]*://)[^/\s'\"@]+(?:@[^/\s'\"@]+)*@")
MASK = "***"


def masked(text: str) -> str:
    """``text`` with the credentials of every URL in it replaced by ``***`` (``https://***@host/x.git``)."""
    return _URL_CREDENTIALS_RE.sub(rf"\1{MASK}@", text)


def shown(value: object) -> str:
    """``value`` as a message quotes it: its repr, escaped, cut to about :data:`SHOWN_CHARS` characters
    (and only the first items of a list or mapping, two levels deep: an alias bomb is never expanded), the
    credentials of a URL masked (:func:`masked`) before it is cut."""
    if isinstance(value, str):
        value = masked(value)
    try:
        text = masked(_REPR.repr(value))
    except ValueError:  # an int past Python's digit limit for str()
        return f"<a number of about {int(value.bit_length() * 0.30103):_} digits>"  # type: ignore[attr-defined]
    if len(text) > 2 * SHOWN_CHARS:
        text = text[: 2 * SHOWN_CHARS - 3] + "..."
    return text


def clipped(text: str) -> str:
    """``text`` as a message quotes it between its own marks (a line of a file, a path): as :func:`shown`
    does, credentials masked, control characters escaped, cut, without repr's quotes."""
    text = masked(text)
    if len(text) > 2 * SHOWN_CHARS:
        text = text[: 2 * SHOWN_CHARS - 3] + "..."
    return repr(text)[1:-1]


_PLAIN_KEY = re.compile(r"^[A-Za-z0-9_.-]{1,40}$")


def shown_key(key: object) -> str:
    """A mapping key as a field name in a message: as written when it is a short word, else :func:`shown`."""
    return key if isinstance(key, str) and _PLAIN_KEY.match(key) else shown(key)


# ---------------------------------------------------------------- YAML


class _Bounded(Composer):
    """PyYAML's composer that refuses deep nesting and keys given twice, at composition (before the merge
    keys are flattened, so ``<<: *base`` then a key of the base is an override, not a duplicate)."""

    _depth = 0
    # Refuse the integers YAML 1.1 reads as another number (_construct_int).
    numbers_as_written = True
    if TYPE_CHECKING:  # the parser's and the constructor's, in each loader below

        def peek_event(self) -> Any: ...

        def construct_object(self, node: Node, deep: bool = False) -> Any: ...

    def compose_node(self, parent: Node | None, index: int) -> Node | None:
        self._depth += 1
        try:
            if self._depth > MAX_DEPTH:
                line = self.peek_event().start_mark.line + 1
                raise InputError(f"line {line}: nested deeper than {MAX_DEPTH} levels")
            return super().compose_node(parent, index)
        finally:
            self._depth -= 1

    def compose_mapping_node(self, anchor: Any) -> MappingNode:  # types-PyYAML's anchor type is wrong
        node: MappingNode = super().compose_mapping_node(anchor)
        first: dict[Any, int] = {}
        for key_node, _ in node.value:
            if not isinstance(key_node, ScalarNode) or key_node.tag == MERGE_TAG:
                continue
            key = self.construct_object(key_node)
            line = key_node.start_mark.line + 1
            # Python's equality, not YAML's: 1 and true are two YAML keys but one dict key, and the dict
            # would keep the last of them as silently as a repeated key.
            if key in first:
                raise InputError(
                    f"line {line}: key {shown_key(key)} given twice (first on line {first[key]})"
                )
            first[key] = line
        return node


# YAML 1.1 (PyYAML's) reads a plain 017620 as octal (8080) and 1:30 as base 60 (90): a port, a count or a
# level written so is silently another number (issue 44: `port: 017620` became 8080).
_OCTAL_INT_RE = re.compile(r"^[-+]?0[0-9_]+$")
_SEXAGESIMAL_INT_RE = re.compile(r"^[-+]?[1-9][0-9_]*(?::[0-5]?[0-9])+$")


def _construct_int(loader: _BoundedLoader | _LibyamlBoundedLoader, node: ScalarNode) -> int:
    line = node.start_mark.line + 1
    # Python refuses to read an int of more than 4,300 digits (ValueError, no line); no setting needs 30.
    if len(node.value) > MAX_INT_CHARS:
        raise InputError(f"line {line}: a number of more than {MAX_INT_CHARS} characters")
    value: int = loader.construct_yaml_int(node)
    if not loader.numbers_as_written:
        return value
    # A plain scalar's style: None from PyYAML's parser, "" from libyaml's.
    if not node.style and _OCTAL_INT_RE.match(node.value):
        raise InputError(
            f"line {line}: {node.value} has a leading zero, which YAML 1.1 reads as an octal number "
            f"({value}): write the number without it"
        )
    if not node.style and _SEXAGESIMAL_INT_RE.match(node.value):
        raise InputError(
            f"line {line}: {node.value} is read by YAML 1.1 as a number in base 60 ({value}): "
            "write the number itself"
        )
    return value


_SURROGATE = re.compile(r"[\ud800-\udfff]")


def _construct_str(loader: _BoundedLoader | _LibyamlBoundedLoader, node: ScalarNode) -> str:
    # A "\ud800" escape reads as a lone surrogate, which no UTF-8 writer takes: its hash, the env file and
    # the plan's JSON each failed with a traceback.
    value: str = loader.construct_yaml_str(node)
    found = _SURROGATE.search(value)
    if found:
        line = node.start_mark.line + 1
        raise InputError(
            f"line {line}: a string with a lone surrogate (\\u{ord(found.group()):04x}), which is not text: "
            "write the character itself, or its pair of surrogates as one \\U escape"
        )
    return value


class _BoundedLoader(_Bounded, yaml.SafeLoader):
    """PyYAML's safe loader, all Python: the messages of a document it refuses."""

    def __init__(self, stream: str, numbers_as_written: bool = True) -> None:
        super().__init__(stream)
        self.numbers_as_written = numbers_as_written


class _LibyamlBoundedLoader(_Bounded, CParser, SafeConstructor, Resolver):
    """The same loader on libyaml's scanner and parser (Ansible reads YAML with them where PyYAML has them):
    our composer and constructors over its events, ~6 times faster. A document it refuses is read again
    by :class:`_BoundedLoader`, whose messages (and answer) are the ones given."""

    def __init__(self, stream: str, numbers_as_written: bool = True) -> None:
        CParser.__init__(self, stream)
        Composer.__init__(self)
        SafeConstructor.__init__(self)
        Resolver.__init__(self)
        self.numbers_as_written = numbers_as_written


for _loader in (_BoundedLoader, _LibyamlBoundedLoader):
    _loader.add_constructor("tag:yaml.org,2002:int", _construct_int)  # type: ignore[type-var]
    _loader.add_constructor("tag:yaml.org,2002:str", _construct_str)  # type: ignore[type-var]


def _children(node: Node) -> list[Node]:
    if isinstance(node, SequenceNode):
        return list(node.value)
    if isinstance(node, MappingNode):
        return [part for pair in node.value for part in pair]
    return []


def _check_expanded_size(root: Node) -> None:
    """Refuse a document whose aliases, expanded, add more than MAX_VALUES values to those it writes, or
    that holds a recursive alias. Each node is counted once (aliases share nodes), so this costs the file's
    size."""
    sizes: dict[int, int] = {}
    open_nodes: set[int] = set()
    todo: list[tuple[Node, bool]] = [(root, False)]
    while todo:
        node, finished = todo.pop()
        key = id(node)
        if finished:
            open_nodes.discard(key)
            sizes[key] = 1 + sum(sizes[id(c)] for c in _children(node))
            # What the aliases add: the values once expanded beyond the nodes written (a lower bound until
            # the root). A document without aliases is bounded by its file's size: 10,000 stacks are too
            # many stacks (the schema says so), not an alias bomb.
            if sizes[key] - len(sizes) > MAX_VALUES:
                raise InputError(
                    f"line {node.start_mark.line + 1}: more than {MAX_VALUES:_} values once its aliases are "
                    "expanded (an alias bomb?)"
                )
            continue
        if key in sizes:
            continue
        if key in open_nodes:
            raise InputError(
                f"line {node.start_mark.line + 1}: an alias inside its own anchor (a recursive value)"
            )
        open_nodes.add(key)
        todo.append((node, True))
        todo += [(child, False) for child in reversed(_children(node)) if id(child) not in sizes]


def load_yaml(text: str, numbers_as_written: bool = True) -> Any:
    """The one YAML document in ``text``, read within the limits above; InputError (one line, with a line
    number where there is one, never a quote of the file) otherwise. ``numbers_as_written``: refuse an
    integer YAML 1.1 reads as another number (``017620`` is 8080); off for a file read as Ansible reads it."""
    if LIBYAML:
        try:
            return _loaded(_LibyamlBoundedLoader, text, numbers_as_written)
        except ValueError:  # InputError, or a text libyaml cannot take (a lone surrogate)
            pass  # read again in Python: its message, the one this reader always gave
    return _loaded(_BoundedLoader, text, numbers_as_written)


def _loaded(kind: type[_BoundedLoader | _LibyamlBoundedLoader], text: str, numbers_as_written: bool) -> Any:
    try:
        loader = kind(text, numbers_as_written)
    except yaml.reader.ReaderError as exc:  # PyYAML checks the characters before it reads anything
        line = text.count("\n", 0, exc.position) + 1
        raise InputError(
            f"line {line}: a character YAML does not allow (U+{exc.character:04X}): write it as an escape "
            "in a double-quoted string"
        ) from None
    try:
        node = loader.get_single_node()
        if node is None:
            return None
        _check_expanded_size(node)
        return loader.construct_document(node)
    except yaml.MarkedYAMLError as exc:
        # str(exc) quotes the offending line of the file: name the place only.
        mark = exc.problem_mark or exc.context_mark
        where = f" (line {mark.line + 1}, column {mark.column + 1})" if mark else ""
        raise InputError(f"not valid YAML: {exc.problem or exc.context}{where}") from None
    except yaml.YAMLError as exc:
        raise InputError(f"not valid YAML: {shown(str(exc))}") from None
    except ValueError as exc:
        if isinstance(exc, InputError):
            raise
        # The constructor's own: an integer past Python's digit limit, a date that does not exist.
        raise InputError(f"not valid YAML: a value that cannot be read ({shown(str(exc))})") from None
    except RecursionError:
        raise InputError(f"nested deeper than {MAX_DEPTH} levels") from None
    finally:
        loader.dispose()
