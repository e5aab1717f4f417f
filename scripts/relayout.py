#!/usr/bin/env python3
"""Move benchstack's flat modules into one package per step of a run (issue 26, item 6), and every
reference to them with them.

A run flows plan -> provision -> measure -> results -> analysis -> report (docs/index.md); the package has
one sub-package per step, plus ``kinds`` (the adapters: apps, fronts, servers, load tools) and ``common``
(what every step reads user input and numbers with). ``cli`` and ``actionargs`` stay at the top: they are
the package's two faces, for people (``python -m benchstack``, ``bench-stack``) and for the Ansible plugins.

What it does, each step skipped when already done, so it can run again on a newer main (or on a branch that
still has the old layout) and a second run changes nothing:

1. Refuses to move anything when a module at the top of ``benchstack/`` or a test in ``tests/unit/`` is not
   in its table below (someone added one since): add it to :data:`MOVES` or :data:`TESTS`, then run again.
2. ``git mv`` every module to its new place (:data:`MOVES`) and every unit test to ``tests/unit/<area>/``
   (:data:`TESTS`); a moved file's ``Path(__file__).parent...`` gains the levels it went down.
3. Rewrites every tracked text file (the package, plugins, scripts, tests, Molecule, playbooks, roles, docs,
   README): ``from benchstack import x, y`` (split by new package, ``as x`` where the module was renamed),
   every dotted name ``benchstack.x...``, every path ``benchstack/x.py`` and ``tests/unit/test_x.py``, and a
   bare ``x.py`` naming a moved module; never a line that says ``relayout: keep`` (an old path on purpose).
   The old paths are not kept as aliases: nothing imports them.
4. Sorts the imports and formats the Python files it changed (ruff, from .venv when there).

Usage: ``scripts/relayout.py`` (from anywhere in the checkout); ``--check`` lists what it would do, exits 1 if
anything, and writes nothing. What is left to a person afterwards: lines grown past the length limits (ruff's
E501, yamllint), and prose that names a module without its path (``the plan module``).
"""

from __future__ import annotations

import argparse
import ast
import io
import re
import shutil
import subprocess
import sys
import tokenize
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = "benchstack"

# Each area's package docstring, in the order of a run. It names its modules bare, never as a dotted path
# (a second run would take ``<package>.plan`` for the old module).
AREAS: dict[str, str] = {
    "common": (
        "What every step shares: files users hand us, read within bounds and quoted back safely\n"
        "(inputs), and number checks, medians and how a table prints a number (numbers)."
    ),
    "plan": (
        "Step 1, the plan: an experiment read, validated and resolved once per run (resolved:\n"
        "compile_plan), the stacks resolved through the kinds, each role's fields and variables, each\n"
        "loadgen's target."
    ),
    "kinds": (
        "The adapters, one module per kind: app kinds (apps/), fronts (fronts/), app server kinds\n"
        "(servers/), load tools (loadtools/), each package with its REGISTRY (registry), and the\n"
        "checks of a stack's fields the adapters share (stackfields)."
    ),
    "provision": (
        "Step 2, the hosts: which roles each host runs (roles) and which may be skipped (markers:\n"
        "the provisioning markers and drift; the host's record in hostrecord, the command that reads a\n"
        "host in hostcommand), what no stack of the plan owns (sweep: stale units and files), what the\n"
        "roles made as it is on a host (hoststate, run there), host tuning, the loopback CPU split, local\n"
        "containers (localdocker), name resolution (dns)."
    ),
    "measure": (
        "Step 3, the cells: one cell measured (runner) with its command, remote shell, system statistics,\n"
        "interference and host events; several loadgens (barrier, merge, resume), the run lock, the noise\n"
        "probe, and the extra rounds until the target precision (repetitions)."
    ),
    "results": (
        "Step 4, what a run stores: the cell (cell, model, distribution), the published formats (formats,\n"
        "schemas/), the run folder and its files, and dropping cells from it."
    ),
    "analysis": (
        "Step 5, what the numbers say: statistics, load points, the verdict and its checks (checks/),\n"
        "each stack against the baseline (comparison), two runs compared (compare, hostdiff), whether\n"
        "the load fits the hosts (capacity)."
    ),
    "report": (
        "Step 6, what a person reads: report.md, report.html and cells.csv (built once as a model, rendered\n"
        "to markdown and through templates/ to HTML), the plots, and a stored cell's latency distribution\n"
        "(hist)."
    ),
    "history": (
        "Step 7, runs beyond one run: every finished run recorded in a results database (schema:\n"
        "the tables, database: open and upgrade it with migrations/, record: a run folder imported,\n"
        "finished: the report step's best-effort record), and what reads it (queries: history, trend,\n"
        "the regression check; commands: their command line; defaults: what they need without SQLAlchemy)."
    ),
}

# Old top-level module (or sub-package) -> its new dotted path under the package. Three are renamed, because
# their area package took their name: plan -> plan.resolved, provision -> provision.roles,
# report -> report.build (report.py built the report; the model and its renderer come beside it).
MOVES: dict[str, str] = {
    # common
    "inputs": "common.inputs",
    "numbers": "common.numbers",
    # plan
    "plan": "plan.resolved",
    "experiment": "plan.experiment",
    "experiment_schema": "plan.experiment_schema",
    "loadplan": "plan.loadplan",
    "stacks": "plan.stacks",
    "userapp": "plan.userapp",
    "pyreqs": "plan.pyreqs",
    "rolecontract": "plan.rolecontract",
    "rolevars": "plan.rolevars",
    "innervars": "plan.innervars",
    # Never a flat module: listed so that a dotted name tells it from one (issue 42, access-log shipping).
    "logship": "plan.logship",
    "settings": "plan.settings",
    "paths": "plan.paths",
    "targets": "plan.targets",
    "topology": "plan.topology",
    "trace": "plan.trace",
    # Split out of plan.stacks (never a flat module): listed so that a dotted name tells it from one.
    "readers": "plan.readers",
    # The plan with its checks, for the plan play and the CLI (issue 43; never a flat module): listed so
    # that a dotted name tells it from one.
    "checked": "plan.checked",
    # kinds
    "registry": "kinds.registry",
    "stackfields": "kinds.stackfields",
    "apps": "kinds.apps",
    "fronts": "kinds.fronts",
    "servers": "kinds.servers",
    "loadtools": "kinds.loadtools",
    # provision
    "provision": "provision.roles",
    "hoststate": "provision.hoststate",
    "tuning": "provision.tuning",
    "cpusplit": "provision.cpusplit",
    "localdocker": "provision.localdocker",
    "dns": "provision.dns",
    # Split out of provision.roles (never flat modules): listed so that a dotted name tells them from the old
    # provision module (submodules).
    "markers": "provision.markers",
    "hostrecord": "provision.hostrecord",
    "hostcommand": "provision.hostcommand",
    "sweep": "provision.sweep",
    "made": "provision.made",
    "accounts": "provision.accounts",
    # measure
    "runner": "measure.runner",
    "loadcmd": "measure.loadcmd",
    "remote": "measure.remote",
    "sysstats": "measure.sysstats",
    "interference": "measure.interference",
    "hostevents": "measure.hostevents",
    "perrequest": "measure.perrequest",
    "barrier": "measure.barrier",
    "merge": "measure.merge",
    "resume": "measure.resume",
    "runlock": "measure.runlock",
    "probe": "measure.probe",
    "repetitions": "measure.repetitions",
    # results
    "cell": "results.cell",
    "model": "results.model",
    "distribution": "results.distribution",
    "formats": "results.formats",
    "files": "results.files",
    "runfolder": "results.runfolder",
    "drop": "results.drop",
    # analysis
    "stats": "analysis.stats",
    "loadpoints": "analysis.loadpoints",
    "verdict": "analysis.verdict",
    "comparison": "analysis.comparison",
    "compare": "analysis.compare",
    "hostdiff": "analysis.hostdiff",
    "capacity": "analysis.capacity",
    # report
    "report": "report.build",
    "reportmodel": "report.model",
    "render": "report.render",
    "plots": "report.plots",
    "hist": "report.hist",
    # Split out of report.build (never a flat module): listed so that a dotted name tells it from one.
    "csvfiles": "report.csvfiles",
    "hdrlog": "report.hdrlog",
    # The console's words (plugins/callback/bench_stack.py), never a flat module either.
    "console": "report.console",
    # Split out of report.build too (the report's host lines, its latency figures), never flat modules.
    "hosts": "report.hosts",
    "latency": "report.latency",
    # The shipped access logs' part of the report (issue 42), never a flat module either.
    "shipping": "report.shipping",
}
# Folders of the package that move whole (the rest of MOVES are modules).
MOVED_PACKAGES = {"apps", "fronts", "servers", "loadtools"}
# What stays at the top: the package itself, the command line (both ways in), the plugins' argument check,
# and package data.
STAYS = {"__init__", "__main__", "cli", "actionargs", "data", "schemas", "templates"}

# Unit tests by area; the areas of the package, plus the command line, the roles, the plugins and the
# project's own checks. Helpers shared by several areas stay in tests/unit/ (conftest puts it on sys.path).
TESTS: dict[str, str] = {
    "test_inputs.py": "common",
    "test_numbers.py": "common",
    "test_plan.py": "plan",
    "test_plan_secrets.py": "plan",
    "test_experiment.py": "plan",
    "test_experiment_schema.py": "plan",
    "test_bad_inputs.py": "plan",
    "test_stacks.py": "plan",
    "test_stacks_golden.py": "plan",
    "test_stacks_user_apps.py": "plan",
    "test_resolved_stack.py": "plan",
    "test_userapp.py": "plan",
    "test_pyreqs.py": "plan",
    "test_role_variables.py": "plan",
    "test_targets.py": "plan",
    "test_topology.py": "plan",
    "test_apps.py": "kinds",
    "test_fronts.py": "kinds",
    "test_servers.py": "kinds",
    "test_loadtools.py": "kinds",
    "test_loadtool_ab.py": "kinds",
    "test_loadtool_httperf.py": "kinds",
    "test_loadtool_wrk.py": "kinds",
    "test_parsers_ab.py": "kinds",
    "test_parsers_httperf.py": "kinds",
    "test_parsers_wrk.py": "kinds",
    "test_truncated_output.py": "kinds",
    "test_provision.py": "provision",
    "test_drift.py": "provision",
    "test_stale.py": "provision",
    "test_hostlock.py": "provision",
    "test_tuning.py": "provision",
    "test_cpusplit.py": "provision",
    "test_containers.py": "provision",
    "test_image_labels.py": "provision",
    "test_dns.py": "provision",
    "test_runner.py": "measure",
    "test_loadcmd.py": "measure",
    "test_remote.py": "measure",
    "test_perrequest.py": "measure",
    "test_interference.py": "measure",
    "test_hostevents.py": "measure",
    "test_fault_corpus.py": "measure",
    "test_barrier.py": "measure",
    "test_merge.py": "measure",
    "test_merge_distributions.py": "measure",
    "test_runlock.py": "measure",
    "test_probe.py": "measure",
    "test_repetitions.py": "measure",
    "test_cell.py": "results",
    "test_model.py": "results",
    "test_distribution.py": "results",
    "test_files.py": "results",
    "test_runfolder.py": "results",
    "test_results_format.py": "results",
    "test_stats.py": "analysis",
    "test_loadpoints.py": "analysis",
    "test_verdict.py": "analysis",
    "test_comparison.py": "analysis",
    "test_compare.py": "analysis",
    "test_capacity.py": "analysis",
    "test_report.py": "report",
    "test_report_golden.py": "report",
    "test_report_dns.py": "report",
    "test_report_latency.py": "report",
    "test_cli_hist.py": "report",
    "test_cli.py": "cli",
    "test_cli_bad_input.py": "cli",
    "test_plugins.py": "plugins",
    "test_plugin_docs.py": "plugins",
    "test_app_git.py": "plugins",
    "test_bench_files.py": "plugins",
    "test_dns_plugins.py": "plugins",
    "test_http_check.py": "plugins",
    "test_role_contracts.py": "roles",
    "test_role_docs.py": "roles",
    "test_role_tags.py": "roles",
    "test_os_vars.py": "roles",
    "test_cpu_pinning.py": "roles",
    "test_jinja_escapes.py": "roles",
    "test_apache_vhosts.py": "roles",
    "test_nginx_server_blocks.py": "roles",
    "test_app_server_units.py": "roles",
    "test_app_server_restarts.py": "roles",
    "test_app_tree.py": "roles",
    "test_run_script.py": "project",
    "test_final_newline.py": "project",
    "test_imports.py": "project",
}
TEST_SUPPORT = {"conftest.py", "stack_cases.py", "app_server_cases.py", "plan_cases.py"}
UNIT = Path("tests/unit")

# Files never rewritten: this script (its tables name the old modules) and its test, the captured output under
# tests/data (as the tools printed it; its README and scripts are ours), and the requirements, whose hash
# ./run compares to reinstall .venv (a comment's module name is not worth a reinstall everywhere).
NOT_REWRITTEN = {
    "scripts/relayout.py",
    "tests/unit/project/test_relayout.py",  # its examples are old paths
    "requirements.txt",
    "requirements-dev.txt",
}
CAPTURES = "tests/data/"


class LayoutError(Exception):
    pass


def submodules(area: str) -> set[str]:
    """The modules the table puts in ``area`` (how a dotted name tells a new path from an old one)."""
    return {new.split(".")[1] for new in MOVES.values() if new.split(".")[0] == area}


def check_tables(root: Path) -> None:
    """Refuse to run when the tree holds a module or a test the tables do not place."""
    problems = []
    if set(MOVES) & set(AREAS) - {"plan", "provision", "report"}:
        problems.append("an old name is also an area other than plan, provision, report: see dotted()")
    pkg = root / PACKAGE
    for path in sorted(pkg.iterdir()):
        name = path.stem if path.suffix == ".py" else path.name
        if not (path.is_dir() or path.suffix == ".py") or path.name == "__pycache__":
            continue
        if (path.is_dir() and name in AREAS) or name in STAYS:
            continue
        if name not in MOVES:
            problems.append(
                f"{path.relative_to(root)} is in no table: add it to MOVES in scripts/relayout.py (its area)"
            )
        elif path.is_dir() != (name in MOVED_PACKAGES):
            problems.append(
                f"{path.relative_to(root)}: a {'folder' if path.is_dir() else 'module'} in the tree"
            )
    for path in sorted((root / UNIT).glob("*.py")):
        if path.name not in TESTS and path.name not in TEST_SUPPORT:
            problems.append(
                f"{path.relative_to(root)} is in no table: add it to TESTS in scripts/relayout.py (its area)"
            )
    for old in MOVES:
        src = pkg / (old if old in MOVED_PACKAGES else f"{old}.py")
        dst = new_path(root, old)
        if src.exists() and dst.exists():
            problems.append(
                f"both {src.relative_to(root)} and {dst.relative_to(root)} exist: merge them by hand"
            )
    if problems:
        raise LayoutError("\n".join(problems))


def new_path(root: Path, old: str) -> Path:
    parts = MOVES[old].split(".")
    if old in MOVED_PACKAGES:
        return root.joinpath(PACKAGE, *parts)
    return root.joinpath(PACKAGE, *parts[:-1], parts[-1] + ".py")


# Path(__file__)[.resolve()] followed by .parent.parent... or .parents[N]: the levels up to a folder.
FILE_UP = re.compile(
    r"Path\(__file__\)(?P<resolve>\.resolve\(\))?(?:(?P<ups>(?:\.parent\b)+)|\.parents\[(?P<n>\d+)\])"
)


def deeper(text: str, levels: int) -> str:
    """``text`` of a file moved ``levels`` folders down: each ``Path(__file__)`` climb that much longer."""

    def climb(m: re.Match[str]) -> str:
        up = m["ups"].count(".parent") if m["ups"] else int(m["n"]) + 1
        up += levels
        tail = ".parent" if up == 1 else f".parents[{up - 1}]"
        return f"Path(__file__){m['resolve'] or ''}{tail}"

    return FILE_UP.sub(climb, text)


def git(root: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=root, check=True, capture_output=True, text=True).stdout


def moves_pending(root: Path) -> list[tuple[Path, Path]]:
    """(old, new) of every module and test still at its old place."""
    pending = []
    for old in MOVES:
        src = root / PACKAGE / (old if old in MOVED_PACKAGES else f"{old}.py")
        if src.exists():
            pending.append((src, new_path(root, old)))
    for name, area in TESTS.items():
        src = root / UNIT / name
        if src.exists():
            pending.append((src, root / UNIT / area / name))
    return pending


def move(root: Path, src: Path, dst: Path) -> None:
    """git mv ``src`` to ``dst``, its ``Path(__file__)`` climbs made as much longer as it went deeper."""
    levels = len(dst.relative_to(root).parts) - len(src.relative_to(root).parts)
    dst.parent.mkdir(parents=True, exist_ok=True)
    git(root, "mv", str(src.relative_to(root)), str(dst.relative_to(root)))
    files = [dst] if dst.is_file() else sorted(dst.rglob("*.py"))
    for path in files:
        text = path.read_text(encoding="utf-8")
        new = deeper(text, levels)
        if new != text:
            path.write_text(new, encoding="utf-8")


def area_inits(root: Path) -> list[Path]:
    """The area packages' ``__init__.py`` files that do not exist yet."""
    inits = (root / PACKAGE / area / "__init__.py" for area in AREAS)
    return [path for path in inits if not path.exists()]


def write_init(root: Path, path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f'"""{AREAS[path.parent.name]}"""\n', encoding="utf-8")
    git(root, "add", str(path.relative_to(root)))


FROM_PACKAGE = re.compile(
    rf"^(?P<indent>[ \t]*)from {PACKAGE} import "
    r"(?P<names>\([^)]*\)|[^\n#]*[^\s#])(?P<comment>[ \t]*#[^\n]*)?$",
    re.M,
)


def from_package(m: re.Match[str]) -> str:
    """``from benchstack import a, b as c``: one import per package the names now live in."""
    names = [n.strip() for n in m["names"].strip("()").replace("\n", ",").split(",") if n.strip()]
    if not any(n.split()[0] in MOVES for n in names):
        return m[0]
    groups: dict[str, list[str]] = {}
    for name in names:
        old, _, alias = name.partition(" as ")
        old, alias = old.strip(), alias.strip()
        if old not in MOVES:
            groups.setdefault(PACKAGE, []).append(name)
            continue
        parent, _, leaf = f"{PACKAGE}.{MOVES[old]}".rpartition(".")
        shown = alias or old
        groups.setdefault(parent, []).append(leaf if leaf == shown else f"{leaf} as {shown}")
    comment = m["comment"] or ""
    return "\n".join(
        f"{m['indent']}from {parent} import {', '.join(n)}{comment}" for parent, n in groups.items()
    )


DOTTED = re.compile(rf"\b{PACKAGE}((?:\.[A-Za-z_]\w*)+)")
IMPORTED = re.compile(r"\s+import\s+\(?\s*(\w+)")


def dotted(m: re.Match[str]) -> str:
    """``benchstack.x.y``: the new path of module ``x``, unless it already is a new path."""
    parts = m[1][1:].split(".")
    head = parts[0]
    if head not in MOVES:
        return m[0]
    if head in AREAS:
        # plan, provision, report: the old module's name is the new area's. What follows tells them apart:
        # a module of the area (benchstack.plan.stacks, from benchstack.plan import stacks) is new.
        follows = parts[1] if len(parts) > 1 else None
        if follows is None:
            imported = IMPORTED.match(m.string, m.end())
            follows = imported[1] if imported else None
        if follows in submodules(head):
            return m[0]
    return ".".join([PACKAGE, MOVES[head], *parts[1:]])


PACKAGE_PATH = re.compile(rf"\b{PACKAGE}/(\w+)(\.py\b|(?![\w.-]))")


def package_path(m: re.Match[str]) -> str:
    """``benchstack/x.py`` or ``benchstack/apps/...``: the new path."""
    old, suffix = m[1], m[2]
    if old not in MOVES or (suffix == ".py") == (old in MOVED_PACKAGES):
        return m[0]
    return f"{PACKAGE}/{MOVES[old].replace('.', '/')}{suffix}"


# Not in quotes: a string in code is a file name (tmp_path / "hoststate.py"), not a reference.
BARE = re.compile(r"(?<![\w/.'\"-])(\w+)\.py\b")


def bare(m: re.Match[str]) -> str:
    """A bare ``x.py`` naming a moved module: its path from the project root."""
    old = m[1]
    if old not in MOVES or old in MOVED_PACKAGES:
        return m[0]
    return f"{PACKAGE}/{MOVES[old].replace('.', '/')}.py"


TEST_PATH = re.compile(rf"\b{UNIT.as_posix()}/(test_\w+\.py)\b")


def test_path(m: re.Match[str]) -> str:
    area = TESTS.get(m[1])
    return f"{UNIT.as_posix()}/{area}/{m[1]}" if area else m[0]


# ruff's line-length (pyproject.toml): a docstring or comment line a longer name pushed past it is reflowed.
LINE_LIMIT = 110
# The docs are wrapped at about this width (nothing checks it).
MARKDOWN_LIMIT = 115
BULLET = re.compile(r"(?:[-*]|\d+\.) ")


def markdown_prose(text: str) -> dict[int, tuple[str, int]]:
    """Line index -> ("md", 0) for the lines of Markdown paragraphs and list items: not in a fenced block,
    not a table row, a heading, a quote or HTML."""
    found: dict[int, tuple[str, int]] = {}
    fenced = False
    for row, line in enumerate(text.split("\n")):
        stripped = line.lstrip()
        if stripped.startswith(("```", "~~~")):
            fenced = not fenced
        elif not fenced and stripped and stripped[0] not in "|#<>":
            found[row] = ("md", 0)
    return found


def prose_lines(text: str, markdown: bool = False) -> dict[int, tuple[str, int]]:
    """Line index -> (kind, the column a continuation starts at) for lines that are prose: whole-line
    comments and docstrings. Other strings may be data (a script, an expected output) and are left alone."""
    if markdown:
        return markdown_prose(text)
    found: dict[int, tuple[str, int]] = {}
    try:
        tree = ast.parse(text)
        tokens = list(tokenize.generate_tokens(io.StringIO(text).readline))
    except (SyntaxError, tokenize.TokenError):
        return found
    for node in ast.walk(tree):
        if not isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        first = node.body[0] if node.body else None
        if (
            isinstance(first, ast.Expr)
            and isinstance(first.value, ast.Constant)
            and isinstance(first.value.value, str)
        ):
            for row in range(first.lineno - 1, (first.end_lineno or first.lineno)):
                found[row] = ("doc", first.col_offset)
    for tok in tokens:
        if tok.type == tokenize.COMMENT and not tok.line[: tok.start[1]].strip():
            found[tok.start[0] - 1] = ("comment", tok.start[1])
    return found


def _prefix(line: str, kind: str, column: int, first: bool) -> tuple[str, str]:
    """(what the line's prose starts after, what a continuation line starts with)."""
    if kind == "comment":
        lead = re.match(r"\s*#+ ?", line)[0]  # type: ignore[index]
    elif first:
        lead = re.match(r'\s*[rRbBuU]?("""|\'\'\')', line)[0]  # type: ignore[index]
    else:
        lead = re.match(r"\s*", line)[0]  # type: ignore[index]
    more = re.match(r"\s*", line[len(lead) :])[0]  # type: ignore[index]
    bullet = BULLET.match(line[len(lead) + len(more) :])
    cont = (lead if kind == "comment" else " " * (column if first else len(lead))) + more
    return lead + more, cont + (" " * len(bullet[0]) if bullet else "")


def _split_at(line: str, start: int, limit: int) -> int | None:
    """The last space before ``limit`` outside inline code, that does not start the moved words with a
    bullet or a closing quote."""
    best = None
    for pos in range(start + 1, min(limit, len(line) - 1) + 1):
        if line[pos] != " " or line.count("`", 0, pos) % 2:
            continue
        rest = line[pos + 1 :]
        if (
            rest
            and not rest[0].isspace()
            and not BULLET.match(rest)
            and not rest.startswith(('"""', *"#|>+="))
        ):
            best = pos
    return best


def _continues(nxt: str, start: str, rest: str) -> bool:
    """Whether ``nxt`` goes on with the paragraph at ``start``, so that ``rest`` can be put in front of it."""
    text = nxt[len(start) :]
    return (
        nxt.startswith(start)
        and text[:1] not in ("", " ", *"#|>")
        and not BULLET.match(text)
        and not nxt.strip().startswith(('"""', "'''"))
        and not rest.endswith(('"""', "'''"))
    )


def reflowed(text: str, fresh: set[str], limit: int = LINE_LIMIT, markdown: bool = False) -> str:
    """``text`` with every prose line of ``fresh`` longer than ``limit`` broken at a space, the words
    pushed into the next line of the same paragraph (or a new one), as far down as they need to go."""
    lines = text.split("\n")
    i = 0
    while i < len(lines):
        line = lines[i]
        if len(line) <= limit or line not in fresh:
            i += 1
            continue
        prose = prose_lines("\n".join(lines), markdown)
        if i not in prose:
            i += 1
            continue
        kind, column = prose[i]
        first = kind == "doc" and (
            i - 1 not in prose or prose[i - 1][0] != "doc" or prose[i - 1][1] != column
        )
        first = first and bool(re.match(r'\s*[rRbBuU]?("""|\'\'\')', line))
        lead, cont = _prefix(line, kind, column, first)
        split = _split_at(line, len(lead), limit)
        if split is None:
            i += 1
            continue
        head, rest = line[:split].rstrip(), line[split + 1 :]
        nxt = lines[i + 1] if i + 1 < len(lines) and i + 1 in prose and prose[i + 1][0] == kind else None
        # The next line of the paragraph takes the words where its text starts: a table's or a hanging
        # indent's continuation column may lie right of the line's own.
        starts = [cont]
        if nxt is not None:
            indent = re.match(r"\s*#+ ?\s*" if kind == "comment" else r"\s*", nxt)[0]  # type: ignore[index]
            if len(indent) > len(cont) and indent.startswith(cont):
                starts.insert(0, indent)
        into = next((start for start in starts if nxt is not None and _continues(nxt, start, rest)), None)
        lines[i] = head
        if into is not None:
            lines[i + 1] = f"{into}{rest} {nxt[len(into) :]}"  # type: ignore[index]
        else:
            lines.insert(i + 1, f"{cont}{rest}")
        fresh.add(lines[i + 1])
        i += 1
    return "\n".join(lines)


# A line that names an old path on purpose (code that reads an older revision) says so, and keeps it.
KEEP = "relayout: keep"


def rewritten(text: str, bare_names: bool = True) -> str:
    lines = text.split("\n")
    held = {i: line for i, line in enumerate(lines) if KEEP in line}
    if held:
        text = "\n".join(f"\0{i}\0" if i in held else line for i, line in enumerate(lines))
        text = rewritten(text, bare_names)
        return re.sub(r"\0(\d+)\0", lambda m: held[int(m[1])], text)
    text = FROM_PACKAGE.sub(from_package, text)
    text = DOTTED.sub(dotted, text)
    text = PACKAGE_PATH.sub(package_path, text)
    if bare_names:
        text = BARE.sub(bare, text)
    return TEST_PATH.sub(test_path, text)


def text_files(root: Path) -> list[Path]:
    out = []
    for name in git(root, "ls-files", "-z").split("\0"):
        if (
            not name
            or name in NOT_REWRITTEN
            or (name.startswith(CAPTURES) and not name.endswith((".md", ".py")))
        ):
            continue
        path = root / name
        if not path.is_file() or path.is_symlink():
            continue
        data = path.read_bytes()
        if b"\0" in data:
            continue
        try:
            data.decode("utf-8")
        except UnicodeDecodeError:
            continue
        out.append(path)
    return out


def rewrite_all(root: Path, write: bool) -> list[Path]:
    changed = []
    for path in text_files(root):
        text = path.read_text(encoding="utf-8")
        # A bare name is the package's only in its docs and Python: roles have files of their own
        # (roles/dns_check/files/probe.py).
        relative = path.relative_to(root)
        new = rewritten(text, relative.suffix in (".md", ".py") and relative.parts[0] != "roles")
        generated = path.name == "README.md" and path.parent.parent.name == "roles"  # scripts/role_docs.py's
        if path.suffix in (".py", ".md") and new != text and not generated:
            fresh = set(new.split("\n")) - set(text.split("\n"))
            markdown = path.suffix == ".md"
            new = reflowed(new, fresh, MARKDOWN_LIMIT if markdown else LINE_LIMIT, markdown)
        if new != text:
            changed.append(path)
            if write:
                path.write_text(new, encoding="utf-8")
    return changed


def tidy(root: Path, paths: list[Path]) -> None:
    """Imports sorted and formatted as ruff wants them (a rewritten import sorts elsewhere)."""
    py = [str(p.relative_to(root)) for p in paths if p.suffix == ".py"]
    if not py:
        return
    ruff = root / ".venv" / "bin" / "ruff"
    command = str(ruff) if ruff.exists() else shutil.which("ruff")
    if command is None:
        print(
            "no ruff: sort the imports yourself (ruff check --select I --fix; ruff format)", file=sys.stderr
        )
        return
    subprocess.run([command, "check", "--quiet", "--select", "I", "--fix", *py], cwd=root, check=False)
    subprocess.run([command, "format", "--quiet", *py], cwd=root, check=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="list what would change, write nothing")
    args = parser.parse_args(argv)
    root = Path(git(ROOT, "rev-parse", "--show-toplevel").strip())
    try:
        check_tables(root)
    except LayoutError as e:
        print(f"relayout: nothing moved:\n{e}", file=sys.stderr)
        return 2
    pending = moves_pending(root)
    inits = area_inits(root)
    if args.check:
        for path in inits:
            print(f"create {path.relative_to(root)}")
        for src, dst in pending:
            print(f"move {src.relative_to(root)} -> {dst.relative_to(root)}")
        if pending or inits:
            print("(and the references, once moved)")
            return 1
        changed = rewrite_all(root, write=False)
        for path in changed:
            print(f"rewrite {path.relative_to(root)}")
        return 1 if changed else 0
    for path in inits:
        write_init(root, path)
    for src, dst in pending:
        move(root, src, dst)
    changed = rewrite_all(root, write=True)
    tidy(root, changed)
    print(f"relayout: {len(inits)} packages made, {len(pending)} files moved, {len(changed)} files rewritten")
    return 0


if __name__ == "__main__":
    sys.exit(main())
