"""The package's modules import one way: no module imports a module that imports it back, even lazily."""

import ast
import functools
import gc
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
PACKAGE = ROOT / "benchstack"


def _module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _type_checking_nodes(tree: ast.AST) -> set[int]:
    """Nodes under ``if TYPE_CHECKING:``, which never run."""
    skipped: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            skipped |= {id(sub) for sub in ast.walk(node)}
    return skipped


def import_graph() -> dict[str, set[str]]:
    """Module -> the package modules it imports, at the top or inside a function (a copy per caller)."""
    return {name: set(deps) for name, deps in _import_graph().items()}


@functools.cache
def _import_graph() -> dict[str, set[str]]:
    """Parsed once per session: ~0.5 s of ast work for every module of the package. The collector rests
    meanwhile: syntax trees hold no cycles, and its passes over the session's heap while they were made took
    ~0.1 s."""
    collecting = gc.isenabled()
    gc.disable()
    try:
        return _graph_of_package()
    finally:
        if collecting:
            gc.enable()


def _graph_of_package() -> dict[str, set[str]]:
    modules = {_module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        skipped = _type_checking_nodes(tree)
        found: set[str] = set()
        for node in ast.walk(tree):
            if id(node) in skipped:
                continue
            if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("benchstack"):
                for alias in node.names:
                    sub = f"{node.module}.{alias.name}"
                    found.add(sub if sub in modules else node.module)
            elif isinstance(node, ast.Import):
                found |= {a.name for a in node.names if a.name.startswith("benchstack.")}
        found |= _discovered(name, tree, modules)
        # A package imports its own submodules; "benchstack" itself holds only the version.
        graph[name] = {m for m in found if m in modules and m not in (name, "benchstack")}
    return graph


def _discovered(package: str, tree: ast.Module, modules: dict[str, Path]) -> set[str]:
    """The modules a kinds' package imports by finding them (``Registry.of_package``): its submodules but
    those its ``SUPPORT`` names."""
    if not any(
        isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr == "of_package"
        for n in ast.walk(tree)
    ):
        return set()
    support = next(
        ast.literal_eval(node.value)
        for node in tree.body
        if isinstance(node, ast.Assign) and [ast.unparse(t) for t in node.targets] == ["SUPPORT"]
    )
    return {m for m in modules if m.rpartition(".")[0] == package and m.rpartition(".")[2] not in support}


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Every import cycle, each once, starting at its smallest module name."""
    found = []

    def walk(start: str, path: list[str]) -> None:
        for dep in sorted(graph[path[-1]]):
            if dep == start:
                found.append([*path, start])
            elif dep > start and dep not in path:
                walk(start, [*path, dep])

    for start in sorted(graph):
        walk(start, [start])
    return found


def test_the_import_graph_sees_lazy_imports() -> None:
    # report imports plots inside write_report, so that matplotlib is only needed for report.html.
    assert "benchstack.report.plots" in import_graph()["benchstack.report.build"]


def test_the_import_graph_sees_the_kinds_a_registry_finds() -> None:
    graph = import_graph()
    assert "benchstack.kinds.servers.thin" in graph["benchstack.kinds.servers"]
    assert "benchstack.kinds.loadtools.siege" in graph["benchstack.kinds.loadtools"]
    # loadcmd imports the registry: the registry must not import it back.
    assert "benchstack.kinds.loadtools.loadcmd" not in graph["benchstack.kinds.loadtools"]


def test_no_module_of_the_package_imports_itself_back() -> None:
    assert cycles(import_graph()) == []


# scipy.stats takes ~1-2 s to import: the CLI (every subcommand: experiment, parse, validate ...) and an extra
# round's worker (the bench_extra_cells action, a fresh process per round) must not load it; the functions
# that need it import it inside them (analysis.stats.mann_whitney, analysis.drift).
ALONE = [
    ("benchstack.report.plots", "benchstack.report.build"),
    ("benchstack.report.build", "benchstack.report.plots"),
    ("benchstack.analysis.compare", "benchstack.report.build"),
    ("benchstack.analysis.loadpoints", "benchstack.report.build"),
    ("benchstack.cli", "scipy"),
    ("benchstack.measure.repetitions", "scipy"),
    ("benchstack.analysis.stats", "scipy"),
    # SQLAlchemy and Alembic (~0.3 s): only the history's commands and the report step's record load them,
    # inside the call (benchstack.history.commands, benchstack.history.finished).
    ("benchstack.cli", "sqlalchemy"),
    ("benchstack.cli", "alembic"),
    ("benchstack.history.finished", "sqlalchemy"),
    # boto3 (~0.3 s): only publish, import s3://... and the report step's publish load it, inside the
    # call (benchstack.history.commands, benchstack.history.finished); the plan checks bench_publish without.
    ("benchstack.cli", "boto3"),
    ("benchstack.cli", "botocore"),
    ("benchstack.history.finished", "boto3"),
    ("benchstack.plan.settings", "boto3"),
    # hdrhistogram: only the report's hdr/*.hlog and hist --hlog load it, inside the call
    # (benchstack.report.hdrlog).
    ("benchstack.cli", "hdrh"),
    ("benchstack.report.build", "hdrh"),
]


def imported_alone(folder: Path) -> dict[str, tuple[list[str], dict[str, str], Path]]:
    """Each module imported alone by a new interpreter (started with the session: conftest's
    early_commands), which prints the module's file and which of the modules that must stay out of it
    it loaded: one interpreter per module, however many it is listed with."""
    names: dict[str, list[str]] = {}
    for module, not_loaded in ALONE:
        names.setdefault(module, []).append(not_loaded)
    return {
        module: (
            [
                sys.executable,
                "-c",
                f"import json, sys, {module}; print({module}.__file__); "
                f"print(json.dumps(sorted(n for n in {others!r} if n in sys.modules)))",
            ],
            dict(os.environ),
            ROOT,
        )
        for module, others in names.items()
    }


@pytest.mark.early.with_args(imported_alone)
@pytest.mark.parametrize(("module", "not_loaded"), ALONE)
def test_module_imports_alone_without_the_other(
    module: str, not_loaded: str, early_results: dict[str, subprocess.CompletedProcess[str]]
) -> None:
    done = early_results[module]
    assert done.returncode == 0, done.stderr
    file, loaded = done.stdout.splitlines()
    assert file == str(ROOT.joinpath(*module.split(".")).with_suffix(".py"))
    assert not_loaded not in json.loads(loaded), f"importing {module} loads {not_loaded}"


# The packages in the order they may depend on each other: each imports only from those before it (and
# itself), at the top or inside a function. Records are the measured data's types; kinds the adapters that
# parse into them; results the cell and the run folder; plan reads experiments into cells; provision makes
# the hosts; analysis decides from cells what they say; measure runs cells and asks analysis for more
# rounds; history keeps runs; report shows them; the command line drives all (docs/index.md).
LAYERS = (
    ("benchstack.common",),
    ("benchstack.records",),
    ("benchstack.kinds",),
    ("benchstack.results",),
    ("benchstack.plan",),
    ("benchstack.provision",),
    ("benchstack.analysis",),
    ("benchstack.measure",),
    ("benchstack.history",),
    ("benchstack.report",),
    # The package's faces: for people (the command line) and for the Ansible plugins (their base class).
    ("benchstack.cli", "benchstack.__main__", "benchstack.actionargs"),
)


def layer_of(module: str) -> int:
    if module == "benchstack":  # the package's __init__: its version only
        return 0
    for rank, prefixes in enumerate(LAYERS):
        if any(module == p or module.startswith(p + ".") for p in prefixes):
            return rank
    raise AssertionError(f"{module} is in no layer of LAYERS: add its package there")


def imports_back_up(graph: dict[str, set[str]]) -> list[str]:
    """Every import of a module from a later layer than the importer's, as ``importer -> imported``."""
    return sorted(
        f"{module} -> {dep}"
        for module, deps in graph.items()
        for dep in deps
        if layer_of(dep) > layer_of(module)
    )


def test_every_module_of_the_package_is_in_a_layer() -> None:
    for module in import_graph():
        layer_of(module)


def test_packages_import_only_from_the_layers_before_them() -> None:
    assert imports_back_up(import_graph()) == []


def test_an_import_back_up_is_found() -> None:
    graph = import_graph()
    graph["benchstack.kinds.loadtools.ab"].add("benchstack.measure.remote")
    assert imports_back_up(graph) == ["benchstack.kinds.loadtools.ab -> benchstack.measure.remote"]
