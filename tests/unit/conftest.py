import base64
import contextlib
import copy
import functools
import gc
import hashlib
import importlib.util
import io
import json
import os
import re
import subprocess
import sys
import threading
import traceback
from collections.abc import Callable, Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
import yaml
from jsonschema import Draft202012Validator, validators

# Bytecode for the test modules and the package, even where PYTHONDONTWRITEBYTECODE is set (as in our
# sessions): pytest rewrote and compiled every test module again on each run, ~3 s of the suite's start.
# It goes to __pycache__ beside each file, which git ignores; only this process, not the ones it starts, but
# they read it. Before the package's first import: the modules imported above it were compiled again by every
# process, every run.
sys.dont_write_bytecode = False

from benchstack.common.inputs import PROJECT_YAML_LOADER  # noqa: E402
from benchstack.measure.remote import BATCH_MARKER, REQUESTS_MARKER, TEMP_ROOT, VMSTAT_MARKER  # noqa: E402
from benchstack.records.cellplan import CellPlan  # noqa: E402

# The tests live in one folder per area (tests/unit/plan/, ...), and some take helpers from another area's
# tests (from test_plugins import run_plan): every area's folder is on the path, whichever runs first, as
# tests/unit itself is for the helpers here. Test file names stay unique across the folders.
sys.path.extend(
    sorted(str(p) for p in Path(__file__).resolve().parent.iterdir() if p.is_dir() and p.name[0] != "_")
)

DATA = Path(__file__).resolve().parent.parent / "data"
# The run metadata a stored cell carries (benchstack.results.cell.RUN_REQUIRED) besides experiment, stack and
# repetition: a cell a test stores without them is refused by every reader, as `bench-stack validate` does.
STORED_META: dict[str, Any] = {
    "target": "t1",
    "loadgen": "l1",
    "mode": "loopback",
    "command": ["ab", "-n", "2000", "-c", "50", "http://t1:8001/"],
    "started_at": "2025-01-02T03:04:05Z",
    "raw_output": "raw/cell.txt",
}
# The fields a cell plan that a test writes in part takes where it leaves them out (no CellPlan default).
CELL_PLAN_BASE: dict[str, Any] = {
    "cell_id": "s__ab__c1__r1",
    "stack": "s",
    "port": 8001,
    "tool": "ab",
    "concurrency": None,
    "requests": None,
    "duration_s": None,
    "threads": None,
    "keepalive": False,
    "timeout_s": None,
    "repetition": 1,
    "path": "/",
    "threshold_ms": None,
    "warmup": None,
}


def cell_plan(fields: dict[str, Any]) -> CellPlan:
    """The CellPlan of a cell plan written as a dict (whole, or only the fields a test is about)."""
    return CellPlan.from_dict({**CELL_PLAN_BASE, **fields})


# The published schema files, read from the worktree on their own (not through benchstack.results.formats).
SCHEMAS = Path(__file__).resolve().parents[2] / "benchstack" / "schemas"


# What the plain validator's ``$ref`` found valid: (id of the schema holding the $ref, sha256 of the value's
# repr), the schemas kept so their ids stay theirs. Written here, not taken from benchstack.results.formats
# (which does the same), so that the second opinion stays independent of the code it checks.
_VALID_REFS: set[tuple[int, bytes]] = set()
_REF_SCHEMAS: dict[int, Any] = {}


def _remembering_ref(validator: Any, ref: str, instance: Any, schema: dict[str, Any]) -> Iterator[Any]:
    """jsonschema's own ``$ref``, skipped for a value it found valid against the same schema before: the
    cells of one capture, written by many tests, share their latency distribution (1,800 pairs, ~0.1 s to
    check plainly). A value as json.loads makes it is told by its repr."""
    key = (id(schema), hashlib.sha256(repr(instance).encode("utf-8", "surrogatepass")).digest())
    if key in _VALID_REFS:
        return
    found = False
    for error in Draft202012Validator.VALIDATORS["$ref"](validator, ref, instance, schema):
        found = True
        yield error
    if not found:
        _REF_SCHEMAS.setdefault(id(schema), schema)
        _VALID_REFS.add(key)


_PlainValidator = validators.extend(Draft202012Validator, {"$ref": _remembering_ref})


@functools.cache
def schema_file_validator(name: str) -> Draft202012Validator:
    """Plain jsonschema on a published schema file: what anyone else validating our results would run
    (with a memory of the parts found valid, :func:`_remembering_ref`)."""
    schema = json.loads((SCHEMAS / name).read_text(encoding="utf-8"))
    Draft202012Validator.check_schema(schema)
    return _PlainValidator(schema)  # type: ignore[no-any-return]


_FITTING: set[tuple[str, str]] = set()


def schema_file_errors(name: str, document: Any) -> list[str]:
    """Where ``document`` does not fit the schema file ``name``, one line per error (empty when it fits).
    A document found fitting is remembered: many tests write the same cells, each ~50 ms to check."""
    key = (name, hashlib.sha256(json.dumps(document, sort_keys=True).encode("utf-8")).hexdigest())
    if key in _FITTING:
        return []
    errors = schema_file_validator(name).iter_errors(document)
    found = [f"{'/'.join(map(str, e.absolute_path)) or '(document)'}: {e.message}"[:300] for e in errors]
    if not found:
        _FITTING.add(key)
    return found


@pytest.fixture(scope="session", autouse=True)
def stored_cells_fit_the_schema_file() -> Iterator[None]:
    """Every cell a test stores through the cell writer (benchstack.results.cell.write_cell) fits
    benchstack/schemas/cell.schema.json as plain jsonschema reads it, or the test fails there: a second
    opinion on benchstack.results.formats, which write_cell asks first. Once a session: a fixture per test
    cost ~0.1 ms each of 2,300 tests, for the same patch."""
    import benchstack.results.cell

    dumps = benchstack.results.cell.dumps_cell

    def dumps_checked(d: dict[str, Any]) -> str:
        text = dumps(d)
        # By the text first: the same cell written again (most are) skips parsing it and keying it by value.
        key = ("cell.schema.json text", hashlib.sha256(text.encode("utf-8")).hexdigest())
        if key in _FITTING:
            return text
        errors = schema_file_errors("cell.schema.json", json.loads(text))
        if not errors:
            _FITTING.add(key)
        assert not errors, f"a cell written does not fit benchstack/schemas/cell.schema.json: {errors}"
        return text

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(benchstack.results.cell, "dumps_cell", dumps_checked)
        yield


# Experiment texts benchstack.plan.experiment read (load_yaml), by their sha256 and the reader's limits: what
# it made of each (experiments_read_once).
_EXPERIMENTS_READ: dict[tuple[bytes, int, int, int], Any] = {}


@pytest.fixture(scope="session", autouse=True)
def experiments_read_once() -> Iterator[None]:
    """An experiment's YAML (benchstack.common.inputs.load_yaml, for benchstack.plan.experiment) is parsed
    once a session: the plans of the shipped experiments are compiled by many tests (481 reads of 110 texts,
    ~1.1 s of pure-Python YAML). Each reader gets a deep copy (the aliases of a document still shared within
    it), so no test's change reaches another; a text that fails is read, and fails, every time."""
    import benchstack.common.inputs as inputs
    import benchstack.plan.experiment

    load = benchstack.plan.experiment.load_yaml

    def read_once(text: str) -> Any:
        key = (
            hashlib.sha256(text.encode("utf-8", "surrogatepass")).digest(),
            inputs.MAX_DEPTH,
            inputs.MAX_VALUES,
            inputs.MAX_INT_CHARS,
        )
        if key not in _EXPERIMENTS_READ:
            _EXPERIMENTS_READ[key] = load(text)
        return copy.deepcopy(_EXPERIMENTS_READ[key])

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(benchstack.plan.experiment, "load_yaml", read_once)
        yield


@pytest.fixture(scope="session", autouse=True)
def files_not_flushed_to_disk() -> Iterator[None]:
    """os.fsync checks its descriptor and returns, in the tests' process: waiting for the disk (each stored
    cell's file, 853 of them, ~1 ms each on this machine's disk, more when it is busy) is what a crash
    needs, which no unit test makes. test_write_cell_syncs_the_whole_file_before_it_takes_its_name checks
    the call. SQLite's own syncs likewise (PRAGMA synchronous=OFF on every connection the tests' process
    opens): each statement of a history database's migrations committed on its own, ~8 ms each, ~0.2 s
    per new database (test_database's subprocess still syncs)."""
    import os
    import sqlite3
    import sqlite3.dbapi2

    def checked(fd: Any) -> None:
        os.fstat(fd if isinstance(fd, int) else fd.fileno())

    connect = sqlite3.dbapi2.connect

    def unsynced(*args: Any, **kwargs: Any) -> sqlite3.Connection:
        connection = connect(*args, **kwargs)
        connection.execute("PRAGMA synchronous=OFF")
        return connection

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(os, "fsync", checked)
        patch.setattr(sqlite3.dbapi2, "connect", unsynced)
        patch.setattr(sqlite3, "connect", unsynced)
        yield


@pytest.fixture(scope="session", autouse=True)
def no_team_history_database() -> Iterator[None]:
    """A team's history database (BENCH_STACK_DB in the developer's environment) is never written by a test:
    the tests that want one set it to a file under tmp_path."""
    with pytest.MonkeyPatch.context() as patch:
        patch.delenv("BENCH_STACK_DB", raising=False)
        # Nor a team's object store: the publishing tests start their own on loopback.
        patch.delenv("BENCH_STACK_PUBLISH", raising=False)
        yield


@pytest.fixture(scope="session")
def s3_server() -> Iterator[Any]:
    """One S3-compatible server (history/s3_cases.py) for the session's publishing tests, each in buckets of
    its own: starting and stopping one took ~0.5 s. botocore's data is loaded once for all their clients
    (s3_cases.data_loaded_once)."""
    from s3_cases import data_loaded_once, start_server

    with pytest.MonkeyPatch.context() as patch:
        data_loaded_once(patch)
        yield from start_server()


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "drawn: the report's plots are rasterized to PNG files (see plots_not_rasterized)"
    )
    config.addinivalue_line(
        "markers",
        "early(commands): commands(folder) start with the session; the test reads early_results, last",
    )
    config.addinivalue_line(
        "markers",
        "ansible: runs ansible-playbook, ansible-doc or ansible-galaxy: ./run integration, not ./run unit",
    )
    config.addinivalue_line(
        "markers", "browser: drives headless chromium (Selenium): ./run integration, not ./run unit"
    )


def pytest_collection_finish(session: pytest.Session) -> None:
    """What the collection made (every module, test item and parametrized value, and the imported libraries:
    scipy, matplotlib, ansible-core) stays for the session: frozen out of the garbage collector's passes,
    which walked it again in each full pass, and those passes rarer. The tests' process spent ~4 s of its
    ~32 s of CPU less (docs/testing.md)."""
    gc.collect()
    gc.freeze()
    gc.set_threshold(20_000, 20, 20)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """The tests marked ``early`` run last, in their order: their commands run beside all the others, so none
    waits for them (first, they waited for the slower ones). Under pytest-xdist (``./run unit``) they come
    first: a worker runs a test's commands in its turn, and the longest work handed out first leaves no
    worker with a long tail alone. There, ``--dist loadfile`` keeps a file's tests on one worker, so a
    marker's commands (each of a file's own) run once, not in each worker that gets one of its tests."""
    last = not hasattr(config, "workerinput")
    items[:] = sorted(items, key=lambda item: (item.get_closest_marker("early") is not None) == last)


# ---------------------------------------------------------------- commands started with the session

# A function of a folder -> {name: (argv, environment, working folder)}: the processes a test checks.
Commands = Callable[[Path], dict[str, tuple[list[str], dict[str, str], Path]]]


class Early:
    """The processes of one ``early`` marker's commands: each started in its own folder, stdout and stderr to
    files there (a pipe nobody reads yet would stop them), waited for by the test that reads them."""

    def __init__(self, commands: Commands, folder: Path, key_file: Path) -> None:
        self.folder = folder
        # Started before any test's fixtures: the fingerprint key where _env_key_file puts it.
        self.specs = {
            name: (argv, {**given, "BENCH_STACK_KEY_FILE": str(key_file)}, cwd)
            for name, (argv, given, cwd) in commands(folder).items()
        }
        self.procs: dict[str, tuple[list[str], subprocess.Popen[bytes]]] = {}
        self.made: dict[str, subprocess.CompletedProcess[str]] = {}
        self.lock = threading.Lock()
        self.stopped = False

    def launch(self, name: str, niceness: int = 0) -> subprocess.Popen[bytes] | None:
        """Start command ``name`` (under ``nice -n niceness`` when given) unless it was or the session ended:
        its process, None when stopped."""
        with self.lock:
            if name not in self.procs and not self.stopped:
                argv, env, cwd = self.specs[name]
                run = ["nice", "-n", str(niceness), *argv] if niceness else argv
                with (
                    (self.folder / f"{name}.out").open("wb") as out,
                    (self.folder / f"{name}.err").open("wb") as err,
                ):
                    self.procs[name] = (argv, subprocess.Popen(run, cwd=cwd, env=env, stdout=out, stderr=err))
            return self.procs[name][1] if name in self.procs else None

    def results(self, timeout: float = 300) -> dict[str, subprocess.CompletedProcess[str]]:
        """Every command's result: those not started yet start now, all at once (the test waits for them).
        In a pytest-xdist worker, a pure :func:`in_child` call is made in the worker itself, once."""
        worker = bool(os.environ.get("PYTEST_XDIST_WORKER"))
        for name, (argv, _, _) in self.specs.items():
            if worker and isinstance(argv, ChildCall) and argv.pure:
                if name not in self.made:
                    self.made[name] = argv.here()
            else:
                self.launch(name)
        done = dict(self.made)
        for name, (argv, proc) in self.procs.items():
            rc = proc.wait(timeout=timeout)
            out, err = (
                (self.folder / f"{name}.{part}").read_text(encoding="utf-8", errors="replace")
                for part in ("out", "err")
            )
            done[name] = subprocess.CompletedProcess(argv, rc, out, err)
        return {name: done[name] for name in self.specs}

    def stop(self) -> None:
        with self.lock:
            self.stopped = True
        for _, proc in self.procs.values():
            if proc.poll() is None:
                proc.kill()
            proc.wait()


_EARLY: dict[Commands, Early] = {}


def _start(commands: Commands, factory: pytest.TempPathFactory) -> Early:
    if commands not in _EARLY:
        key_file = factory.getbasetemp() / "env-fingerprint.key"
        _EARLY[commands] = Early(commands, factory.mktemp(commands.__name__), key_file)
    return _EARLY[commands]


# The niceness of each lane of the queue (_in_two_lanes): the first on the core the tests' process leaves
# idle, the second on whatever the tests' process leaves idle of its own core.
LANES = (5, 10)


def _in_two_lanes(queue: list[Early]) -> None:
    """Run the queued commands in the order their tests come, two lanes each taking the next one when its
    last ended: one process at a time on the core the tests' process leaves idle (nice 5), and one that runs
    when the tests' process waits (for a shell, a host-side script, a trap's sleep: ~7 s of a run) or is done
    (nice 10: it takes ~10 % of that core while the tests' process runs). All at once (ten ansible-playbook
    runs) they took both cores from the tests for the first ~8 s of a run, and the tests waited for them;
    one lane ended ~5 s after the other tests. At a lower priority: the processes a test waits for in its turn
    (test_remote's, whose timing it checks) go first."""
    todo = iter([(early, name) for early in queue for name in early.specs])
    lock = threading.Lock()

    def lane(niceness: int) -> None:
        while True:
            with lock:
                early, name = next(todo, (None, ""))
            proc = early.launch(name, niceness=niceness) if early is not None else None
            if proc is None:
                return
            proc.wait()

    for niceness in LANES[1:]:
        threading.Thread(target=lane, args=(niceness,), daemon=True).start()
    lane(LANES[0])


@pytest.fixture(scope="session", autouse=True)
def early_commands(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[None]:
    """The commands of every selected test marked ``early`` (ansible-playbook runs, ~1 s of CPU each, mostly
    starting up), started with the session in two lanes (:func:`_in_two_lanes`), beside the in-process
    tests instead of one after the other in their turn. A test that comes before its commands started starts
    them. Under pytest-xdist a file's commands start when its first test reads them
    (:func:`_start_the_files_commands`)."""
    if not hasattr(request.config, "workerinput"):
        queue = []
        for item in request.session.items:
            marker = item.get_closest_marker("early")
            if marker is not None and marker.args[0] not in _EARLY:
                queue.append(_start(marker.args[0], tmp_path_factory))
        threading.Thread(target=_in_two_lanes, args=(queue,), daemon=True).start()
    yield
    for early in _EARLY.values():
        early.stop()


class ChildCall(list[str]):
    """:func:`in_child`'s argv, and the call it makes."""

    def __init__(
        self, argv: list[str], module: str, function: str, args: tuple[Any, ...], pure: bool
    ) -> None:
        super().__init__(argv)
        self.module, self.function, self.args, self.pure = module, function, args, pure

    def here(self) -> subprocess.CompletedProcess[str]:
        """The call made in this process, as the child would have printed it."""
        try:
            function = getattr(importlib.import_module(self.module), self.function)
            found = function(*json.loads(json.dumps(self.args)))
        except Exception:  # noqa: BLE001 - the child's traceback and exit code, for the test to show
            return subprocess.CompletedProcess(list(self), 1, "", traceback.format_exc())
        return subprocess.CompletedProcess(list(self), 0, json.dumps(found) + "\n", "")


def in_child(module: str, function: str, *args: Any, pure: bool = False) -> list[str]:
    """argv of a new interpreter (in the checkout, with the tests' folders on its path) that prints, as JSON,
    what ``function(*args)`` of the test module ``module`` returns: a test's pure CPU work for an ``early``
    marker, run on the core the tests' process leaves idle. The test asserts on what it prints. The session's
    patches (the autouse fixtures here) are not made there: for work that writes no cell and draws no plot.
    ``pure``: the function only computes (no process, signal or clock of its own), so a pytest-xdist
    worker, whose other worker keeps the other core busy, calls it itself (under the session's patches)
    and saves the interpreter's start (~0.45 s)."""
    code = (
        "import importlib, json, sys; sys.path.insert(0, sys.argv[1]); import conftest; "
        "found = getattr(importlib.import_module(sys.argv[2]), sys.argv[3])(*json.loads(sys.argv[4])); "
        "print(json.dumps(found))"
    )
    tests = str(Path(__file__).resolve().parent)
    argv = [sys.executable, "-c", code, tests, module, function, json.dumps(args)]
    return ChildCall(argv, module, function, args, pure)


@pytest.fixture
def early_results(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> dict[str, subprocess.CompletedProcess[str]]:
    """What the commands of the test's ``early`` marker did: exit code, stdout and stderr by name."""
    marker = request.node.get_closest_marker("early")
    assert marker is not None, "early_results needs @pytest.mark.early(commands)"
    if os.environ.get("PYTEST_XDIST_WORKER"):
        _start_the_files_commands(request.node, tmp_path_factory)
    return _start(marker.args[0], tmp_path_factory).results()


@functools.cache
def _file_markers(session: pytest.Session, path: Path) -> list[Commands]:
    found: list[Commands] = []
    for item in session.items:
        marker = item.get_closest_marker("early")
        if marker is not None and item.path == path and marker.args[0] not in found:
            found.append(marker.args[0])
    return found


def _start_the_files_commands(node: pytest.Item, factory: pytest.TempPathFactory) -> None:
    """In a pytest-xdist worker, the first test of a file that reads its commands starts those of every
    ``early`` marker of its file (the worker runs the whole file: ``--dist loadfile``), so that their waits
    (test_remote's sleeps and signals: ~6 s one after the other) overlap, as they do in one process."""
    for commands in _file_markers(node.session, node.path):
        early = _start(commands, factory)
        for name, (argv, _, _) in early.specs.items():
            if not (isinstance(argv, ChildCall) and argv.pure):
                early.launch(name)


def project_script(module: str, filename: str) -> ModuleType:
    """scripts/``filename`` (no package, a dash allowed in its name) imported as ``module``."""
    spec = importlib.util.spec_from_file_location(
        module, Path(__file__).resolve().parents[2] / "scripts" / filename
    )
    assert spec and spec.loader
    found = importlib.util.module_from_spec(spec)
    sys.modules[module] = found
    spec.loader.exec_module(found)
    return found


def printed_json(done: subprocess.CompletedProcess[str]) -> Any:
    """What an ``early`` command that ended well printed as JSON (an :func:`in_child` function's answer,
    ansible-doc --json); its exit code and the end of its stderr otherwise."""
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout)


NOT_DRAWN = b"not drawn: a test not marked drawn (tests/unit/conftest.py)\n"


# Whether the running test is marked drawn (pytest_runtest_setup).
_DRAWN = [False]


def pytest_runtest_setup(item: pytest.Item) -> None:
    _DRAWN[0] = item.get_closest_marker("drawn") is not None


@pytest.fixture(scope="session", autouse=True)
def plots_not_rasterized() -> Iterator[None]:
    """A report's plots are made by benchstack.report.plots as a run makes them, every figure, line and label,
    but rasterized to PNG (~0.1 s a plot, most of a report's time) only in the tests marked ``drawn``, which
    check the files; elsewhere each plot file holds :data:`NOT_DRAWN`, which is no PNG."""
    import benchstack.report.plots

    save = benchstack.report.plots._save

    def saved_if_drawn(plt: Any, fig: Any, path: Path) -> Path:
        if _DRAWN[0]:
            return save(plt, fig, path)
        path.parent.mkdir(parents=True, exist_ok=True)
        plt.close(fig)
        path.write_bytes(NOT_DRAWN)
        return path

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(benchstack.report.plots, "_save", saved_if_drawn)
        yield


# libyaml's loader where PyYAML has it, as benchstack.plan.settings reads argument specs: the tests reading
# the roles' files (tasks, vars, specs) spent ~2 s of the suite in the pure-Python one. The same SafeLoader
# constructors and resolver: the same values.


def yaml_text(text: str) -> Any:
    """``text`` as yaml.safe_load reads it (libyaml's parser)."""
    return yaml.load(text, Loader=PROJECT_YAML_LOADER)


def read_yaml(path: Path) -> Any:
    """The YAML file at ``path``, as yaml.safe_load reads it (libyaml's parser)."""
    return yaml_text(path.read_text(encoding="utf-8"))


def read_data(tool: str, name: str) -> str:
    return (DATA / tool / name).read_text(encoding="utf-8")


@pytest.fixture
def data_dir() -> Path:
    return DATA


def bench_stack(*args: str | Path, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    """``bench-stack ARGS`` run in this process: benchstack.cli.main, as ``python -m benchstack`` runs it
    (test_plan runs that for real), at a fraction of a new interpreter's ~0.5 s each.

    Exit code, stdout and stderr as the command's: an exception escaping main is a traceback on stderr and
    exit 1, as the interpreter would show it; argparse's exit is its code. A hang fails at ``timeout``.
    """
    from benchstack.cli import main

    out, err = io.StringIO(), io.StringIO()
    done: list[int] = []

    def command() -> None:
        try:
            done.append(main([str(a) for a in args]))
        except SystemExit as exc:
            done.append(exc.code if isinstance(exc.code, int) else 1)
        except Exception:  # noqa: BLE001 - what the interpreter would print
            traceback.print_exc(file=err)
            done.append(1)

    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        thread = threading.Thread(target=command, daemon=True)
        thread.start()
        thread.join(timeout)
    assert done, f"bench-stack {' '.join(map(str, args))}: still running after {timeout} s"
    argv = ["bench-stack", *map(str, args)]
    return subprocess.CompletedProcess(argv, done[0], out.getvalue(), err.getvalue())


# What the target's vmstat start prints (benchstack.measure.remote.target_vmstat_start): pid, folder, runs
# stopped.
TARGET_VMSTAT_REPLY = "4242 /tmp/bench-stack-run.test.AbC123 0"
# ab's -g file, in the measured command's own folder (benchstack.measure.remote.REQUESTS_FILE).
AB_G_FILE = "requests.tsv"
WRK_SCRIPT_PATH = "/var/lib/bench-stack/bench-stack-wrk-report-0123456789abcdef.lua"
VMSTAT_MISSING = "timeout: failed to run command 'vmstat': No such file or directory\n"
# What the CPU snapshots around a measured wrk run printed in the default container on this machine
# (benchstack.measure.interference): 3 s of wrk -c32 on nginx-static while other work ran beside the container
# (foreign CPU 57 % of the machine's).
CPU_BEFORE = (
    "BENCH-STACK-CPU before 1796182358.409409413 100 e77ee28f-3095-49a9-9e29-491284ece4ff container-usec "
    "22278124 cpu 34378 0 10798 62071 799 0 255 186 0 0"
)
CPU_AFTER = (
    "BENCH-STACK-CPU after 1796182361.453865105 100 e77ee28f-3095-49a9-9e29-491284ece4ff container-usec "
    "24885333 cpu 34753 0 10996 62072 799 0 288 186 0 0"
)
CPU_TIMES = "BENCH-STACK-CPU times 0m0.130000s 0m0.810000s"
BUSY_CPU = (CPU_BEFORE, CPU_AFTER, CPU_TIMES)


class Helpers:
    """Answers the runner's commands like a loadgen would: the helpers (the sweep of an earlier run's
    leftovers, the target's vmstat, the wrk script) with :meth:`reply`, a load command with :meth:`run`.

    ``vmstat``: what vmstat printed during the cell; ``tsv``: the ab -g file's content. ``fail``: kinds
    that fail, e.g. {"vmstat"} (not installed). ``swept``: how many leftovers the sweep says it stopped.
    ``cpu``: the CPU snapshot lines around the measured run (and the target's), or None.
    """

    def __init__(
        self,
        vmstat: str | None = None,
        tsv: str = "",
        fail: frozenset[str] = frozenset(),
        swept: int = 0,
        cpu: tuple[str, str, str] | None = None,
        states: tuple[str, str | None] | None = None,
        units: str = "",
    ) -> None:
        self.vmstat = read_data("vmstat", "vmstat-during-wrk.txt") if vmstat is None else vmstat
        # The CPU snapshot lines a measured script prints on stderr (before, after, times); None: none.
        self.cpu = cpu
        # The host's state lines before and after the cell (benchstack.measure.hostevents; None after: not
        # printed).
        self.states = states
        # What the check of the stack's units before the cell printed (benchstack.measure.stackunits).
        self.units = units
        self.tsv = tsv
        self.fail = fail
        self.swept = swept
        self.commands: list[str] = []

    def reply(self, command: str) -> tuple[int, str, str] | None:
        """(rc, stdout, stderr) for a helper command, None for a load command."""
        kind, err = None, ""
        if "nohup timeout" in command and "vmstat -n 1" in command:
            kind, out = "vmstat", TARGET_VMSTAT_REPLY + "\n"
            err = f"{self.states[0]}\n" if self.states else ""
        elif command.startswith("n=0; for o in /tmp/bench-stack-run."):
            kind, out = "sweep", f"{self.swept}\n"
        elif command.startswith("kill "):
            kind, out = "vmstat", self.vmstat + (self.cpu[0] + "\n" + self.cpu[1] + "\n" if self.cpu else "")
            if self.states and self.states[1]:
                out = f"{self.states[1]}\n{out}"
        elif command.startswith("st() { systemctl show -p ActiveState"):
            kind, out = "units", self.units
        elif "bench-stack-wrk-report" in command and "base64 -d" in command:
            kind, out = "wrk-script", WRK_SCRIPT_PATH + "\n"
        if kind is None:
            return None
        self.commands.append(command)
        if kind in self.fail:
            return 1, "", f"{kind}: failed\n"
        return 0, out, err

    def measured(self, command: str, output: str) -> str:
        """What a measured script prints when its tool printed ``output``: vmstat's samples and, for ab,
        its -g file behind their markers (benchstack.measure.remote.measured_script)."""
        if VMSTAT_MARKER not in command:
            return output
        vmstat = VMSTAT_MISSING if "vmstat" in self.fail else self.vmstat
        text = f"{output}\n{VMSTAT_MARKER}\n{vmstat}"
        if self.tsv and f" -g {AB_G_FILE} " in command:
            text += f"\n{REQUESTS_MARKER}\n{self.tsv}"
        return text

    def run(self, command: str, output: str, rc: int = 0, stderr: str = "") -> tuple[int, str, str]:
        """A helper's reply, else the load command's: ``output`` (and, measured, what comes after it)."""
        return self.reply(command) or (rc, self.measured(command, output), self.stderr(command, stderr))

    def stderr(self, command: str, stderr: str = "") -> str:
        """A measured script's stderr: the CPU snapshot lines (when given), then the tool's."""
        if "bench_snap" not in command or "BENCH-STACK-WINDOW" not in command:
            return stderr
        lines = list(self.cpu or ())
        if self.states:
            lines = [self.states[0], *lines, *(self.states[1:] if self.states[1] else ())]
        return "".join(f"{line}\n" for line in lines) + stderr


def unwrap(command: str) -> str:
    """The load command inside a load or measured script (benchstack.measure.remote), or the command as it
    is."""
    m = re.search(r"s=\$\(date \+%s\.%N\); t=pending; (.*?) & t=\$!; wait \$t;", command) or re.search(
        r'cd "\$d" \|\| exit 125; t=pending; (.*?) & t=\$!; wait \$t;', command
    )
    return m.group(1) if m else command


def batch_commands(script: str) -> list[str] | None:
    """The commands inside a :func:`benchstack.measure.remote.batch_script`, None for any other command."""
    if not script.startswith(f"b=$(mktemp -d {TEMP_ROOT}/bench-stack-batch."):
        return None
    return [base64.b64decode(m).decode() for m in re.findall(r"echo ([A-Za-z0-9+/=]+) \| base64 -d", script)]


def batch_reply(replies: list[tuple[int, str, str]]) -> str:
    """What a batch script prints for commands that replied ``replies``."""

    def b64(text: str) -> str:
        return base64.b64encode(text.encode()).decode()

    return "".join(f"{BATCH_MARKER} {rc} {b64(out)} {b64(err)}\n" for rc, out, err in replies)


def is_helper(command: str) -> bool:
    """Whether the runner sent this command for the sweep, the target's vmstat or the wrk script."""
    return Helpers().reply(command) is not None


@pytest.fixture(scope="session", autouse=True)
def _env_key_file(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """Plans with app.env values make the controller's fingerprint key (benchstack.plan.resolved.env_key): in
    a folder of the test session, never in the user's home. A test that sets it otherwise (monkeypatch) gets
    this one back after it."""
    key = tmp_path_factory.getbasetemp() / "env-fingerprint.key"
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("BENCH_STACK_KEY_FILE", str(key))
        yield


@pytest.fixture(scope="session", autouse=True)
def _made_record_path(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """The host's record of what bench-stack made (benchstack.provision.made.PATH), for the tests that run the
    host side on this machine: in a folder of the test session, never /var/lib/bench-stack. A test that reads
    it patches its own (test_decision_facts' marker)."""
    from benchstack.provision import made

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(made, "PATH", str(tmp_path_factory.getbasetemp() / "made.json"))
        yield


# Rendering a role's templates by Ansible's own templating, without a host (test_app_server_units,
# test_app_server_restarts, test_role_contracts, test_nginx_server_blocks).
ROLES = Path(__file__).resolve().parents[2] / "roles"


# Jinja's compiled code of each template source, by its tokens and the settings its code depends on
# (templates_compiled_once).
_COMPILED: dict[tuple[Any, ...], Any] = {}


@pytest.fixture(scope="session", autouse=True)
def templates_compiled_once() -> Iterator[None]:
    """A template is compiled (parsed and turned into Python) once a session, then rendered as often as a test
    asks: Ansible's Templar compiles its text again on each render, ~3 ms of each (951 compiles of 78
    sources, ~0.9 s). The key is what the compiled code depends on: the tokens (the lexer's settings and
    Ansible's escaping of backslashes included), the parser's extensions, the code generator's settings, the
    name; a source that fails compiles, and fails, every time."""
    import jinja2

    compile_ = jinja2.Environment.compile

    def compiled_once(
        env: jinja2.Environment,
        source: Any,
        name: str | None = None,
        filename: str | None = None,
        raw: bool = False,
        defer_init: bool = False,
    ) -> Any:
        if not isinstance(source, str):  # an expression's tree (compile_expression)
            return compile_(env, source, name, filename, raw, defer_init)
        try:
            tokens = tuple(env.lex(source, name, filename))
        except jinja2.TemplateSyntaxError:
            return compile_(env, source, name, filename, raw, defer_init)
        settings = (type(env), tuple(sorted(env.extensions)), env.optimized, env.is_async, env.finalize)
        key = (tokens, settings, env.autoescape, name, filename, raw, defer_init)
        if key not in _COMPILED:
            _COMPILED[key] = compile_(env, source, name, filename, raw, defer_init)
        return _COMPILED[key]

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(jinja2.Environment, "compile", compiled_once)
        yield


def trusted(value: Any) -> Any:
    """A value read from a role file, marked as a trusted template as a play marks the role's files."""
    from ansible.template import trust_as_template

    if isinstance(value, str):
        return trust_as_template(value)
    if isinstance(value, dict):
        return {k: trusted(v) for k, v in value.items()}
    if isinstance(value, list):
        return [trusted(v) for v in value]
    return value


@functools.cache
def _role_files(files: tuple[str, ...]) -> dict[str, Any]:
    from ansible.parsing.dataloader import DataLoader

    loader = DataLoader()
    merged: dict[str, Any] = {}
    for name in files:
        merged.update(trusted(loader.load_from_file(str(ROLES / name))))
    return merged


def role_files(*files: str) -> dict[str, Any]:
    """The variables of ``files`` (paths under roles/, later ones winning), trusted. Read once a session (each
    render re-reading them was most of its time); a new dict each call, so a test's additions stay its own."""
    return dict(_role_files(files))


def role_vars(role: str, os_vars: str | None = None) -> dict[str, Any]:
    """The role's defaults, then vars/main.yml, then vars/``os_vars``.yml when given: as a play has them."""
    parts = ["defaults/main.yml", "vars/main.yml", *([f"vars/{os_vars}.yml"] if os_vars else [])]
    return role_files(*(f"{role}/{part}" for part in parts if (ROLES / role / part).is_file()))


@functools.cache
def collection_loader() -> None:
    """Ansible's collection loader, as ansible-playbook sets it up, with the checkout's collections/ first:
    the roles name our filters benchstack.bench.NAME (docs/collection.md), which only it resolves."""
    from ansible.plugins.loader import init_plugin_loader

    init_plugin_loader([str(ROLES.parent / "collections")])


def templated(text: str, variables: dict[str, Any], basedir: Path | None = None) -> Any:
    """``text`` (a template source or an expression) rendered by Ansible's Templar over ``variables``;
    ``basedir``: where an ``{% include %}`` looks, as the template module sets it."""
    from ansible.parsing.dataloader import DataLoader
    from ansible.template import Templar, trust_as_template

    collection_loader()
    loader = DataLoader()
    if basedir is not None:
        loader.set_basedir(str(basedir))
    return Templar(loader=loader, variables=variables).template(trust_as_template(text))


def render_template(role: str, template: str, os_vars: str | None = None, **variables: Any) -> str:
    """roles/ROLE/templates/TEMPLATE as the template module writes it: the role's variables
    (:func:`role_vars`), ansible_managed, then ``variables``."""
    folder = ROLES / role / "templates"
    values = {"ansible_managed": "managed", **role_vars(role, os_vars), **variables}
    return templated((folder / template).read_text(encoding="utf-8"), values, folder)


def resolved_stack(
    name: str, port: int, app: str, kind: str | None = None, front: str = "nginx", **server: Any
) -> dict[str, Any]:
    """A stack resolved by benchstack.plan.stacks (an app, a server of ``kind`` with ``server``'s fields when
    given, a front), as the plan holds it before projecting it for a role."""
    from benchstack.plan.stacks import resolve_stack

    servers = {"server": {"kind": kind, **server}} if kind is not None else {}
    return resolve_stack(
        {"name": name, "port": port, "app": {"kind": app}, **servers, "front": {"kind": front}}
    )


def run_module(module: Any, args: dict[str, Any]) -> dict[str, Any]:
    """The result an Ansible module (loaded with test_plugins.load_plugin) prints for ``args``: its main()
    in this process, the arguments handed over by ansible.module_utils.testing. A new interpreter per run
    cost ~0.15 s; each module's script entry is still run for real once (:func:`run_module_script`)."""
    from unittest import mock

    from ansible.module_utils.common import warnings
    from ansible.module_utils.testing import patch_module_args

    out = io.StringIO()
    with (
        patch_module_args(args),
        # Ansible keeps a module's warnings in globals: empty, as in the module's own process.
        mock.patch.dict(warnings._global_warnings, clear=True),
        mock.patch.dict(warnings._global_deprecations, clear=True),
        contextlib.redirect_stdout(out),
        pytest.raises(SystemExit),
    ):
        module.main()
    return json.loads(out.getvalue())


def run_module_script(path: Path, args: dict[str, Any], folder: Path) -> dict[str, Any]:
    """The result the module file at ``path`` prints run as a script with ``args`` in a file in ``folder``."""
    argfile = folder / "args.json"
    argfile.write_text(json.dumps({"ANSIBLE_MODULE_ARGS": args}), encoding="utf-8")
    out = subprocess.run(
        [sys.executable, str(path), str(argfile)], capture_output=True, text=True, check=False
    )
    return json.loads(out.stdout)
