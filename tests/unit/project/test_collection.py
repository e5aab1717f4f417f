"""The project as the Ansible collection benchstack.bench (galaxy.yml, docs/collection.md): built by
``ansible-galaxy collection build``, installed into a folder of its own, and used from a plain playbook
outside the checkout with nothing of the checkout's: no ansible.cfg (so no roles_path, no plugin folders), no
PYTHONPATH to the checkout; the controller plugins import benchstack from the collection's own copy.

Inside a collection, a role finds its own collection's modules by their short names, but a filter only by
its FQCN (ansible-core looks up an unqualified filter among ansible.builtin's and the configured
filter_plugins folders only): a role that names one of ours without ``benchstack.bench.`` works from the
checkout (ansible.cfg's filter_plugins) and fails from the collection. The static test below reads every
filter and test name in the roles; the check-mode run proves the lookup for nginx and app_server."""

import importlib
import json
import os
import subprocess
import sys
import tarfile
import tomllib
import warnings
from pathlib import Path
from typing import Any

import ansible.plugins.filter
import ansible.plugins.test
import jinja2
import pytest
from conftest import in_child, printed_json, read_yaml
from jinja2 import nodes

ROOT = Path(__file__).resolve().parents[3]
GALAXY = read_yaml(ROOT / "galaxy.yml")
FQCN = f"{GALAXY['namespace']}.{GALAXY['name']}"
ROLES = sorted(p.name for p in (ROOT / "roles").iterdir() if (p / "tasks" / "main.yml").is_file())
MODULES = sorted(p.stem for p in (ROOT / "plugins" / "modules").glob("*.py"))
FILTERS = sorted(p.stem for p in (ROOT / "plugins" / "filter").glob("*.yml"))
CALLBACKS = sorted(p.stem for p in (ROOT / "plugins" / "callback").glob("*.py"))
# What a user of the roles and plugins needs (galaxy.yml's build_ignore leaves out everything else): the
# collection's own files, and the Python package its controller plugins import, with its pyproject.toml.
SHIPPED = {
    "MANIFEST.json",
    "FILES.json",
    "README.md",
    "LICENSE",
    "CHANGELOG.md",
    "meta",
    "roles",
    "plugins",
    "docs",
    "benchstack",
    "pyproject.toml",
}
# Task keywords whose value is a bare Jinja expression, not a template.
CONDITIONS = {"when", "changed_when", "failed_when", "until", "that"}

# A plain playbook as a user writes one, beside no ansible.cfg: the roles by their FQCN, no stacks (so
# nothing is written), nginx's packages left to the caller. Its check-mode run on localhost with the tags
# below runs the roles' variable checks (our filter, benchstack imported), nginx's per-OS variables and
# app_server's read of the host (read-only commands; check_mode: false), and changes nothing. Its facts are
# the distribution's alone: os_family and distribution are all the two roles read (the min subset's other
# collectors were ~0.3 s of the run's CPU).
PLAYBOOK = f"""---
- name: Web stack roles from the collection alone
  hosts: bench
  gather_facts: true
  gather_subset: ["!all", "!min", distribution]
  vars:
    nginx_install_packages: false
  roles:
    - role: {FQCN}.app_server
    - role: {FQCN}.nginx
"""
CHECK_TAGS = "bench_app_server,bench_nginx_install"
# Every role, for the syntax check only (most need a plan's stacks to run).
ALL_ROLES = f"""---
- name: Every role of the collection
  hosts: bench
  roles:
{"".join(f"    - role: {FQCN}.{role}{chr(10)}" for role in ROLES)}"""
INVENTORY = """---
all:
  hosts:
    bench:
      ansible_connection: local
      ansible_python_interpreter: "{{ ansible_playbook_python }}"
"""


def tool_path(tool: str) -> str:
    """An Ansible command beside this interpreter (the venv's, whatever PATH says)."""
    return str(Path(sys.executable).with_name(tool))


def use_the_collection(folder: str) -> dict[str, Any]:
    """Build the collection from the checkout, install it into ``folder`` and use it from there, step by step
    (each step's exit code and output; nothing runs after a failed build or install). ~15 s, most of it
    Ansible's start-up, in a child started with the session (conftest's early_commands)."""
    base = Path(folder)
    collections, plain = base / "collections", base / "plain"
    plain.mkdir(parents=True, exist_ok=True)
    installed = collections / "ansible_collections" / GALAXY["namespace"] / GALAXY["name"]
    config = base / "ansible.cfg"
    config.write_text(f"[defaults]\ncollections_path = {collections}\nretry_files_enabled = False\n")
    (plain / "site.yml").write_text(PLAYBOOK)
    (plain / "all-roles.yml").write_text(ALL_ROLES)
    (plain / "hosts.yml").write_text(INVENTORY)
    # Nothing of the checkout's: its ansible.cfg and PYTHONPATH (./run exports both) are left out.
    env = {k: v for k, v in os.environ.items() if not k.startswith("ANSIBLE_") and k != "PYTHONPATH"}
    env |= {
        "ANSIBLE_CONFIG": str(config),
        "ANSIBLE_HOME": str(base / "home"),
        "ANSIBLE_LOCAL_TEMP": str(base / "tmp"),
        "ANSIBLE_NOCOLOR": "1",
        # The collection's own copy of the package its controller plugins import (docs/collection.md: a
        # user pip-installs that folder).
        "PYTHONPATH": str(installed),
    }
    tarball = base / "dist" / f"{GALAXY['namespace']}-{GALAXY['name']}-{GALAXY['version']}.tar.gz"
    steps: list[tuple[str, list[str]]] = [
        (
            "build",
            [
                tool_path("ansible-galaxy"),
                "collection",
                "build",
                "--output-path",
                str(tarball.parent),
                str(ROOT),
            ],
        ),
        (
            "install",
            [
                tool_path("ansible-galaxy"),
                "collection",
                "install",
                "--no-deps",
                "-p",
                str(collections),
                str(tarball),
            ],
        ),
        ("package", [sys.executable, "-c", "import benchstack; print(benchstack.__file__)"]),
        (
            "syntax",
            [tool_path("ansible-playbook"), "-i", "hosts.yml", "--syntax-check", "site.yml", "all-roles.yml"],
        ),
        (
            "check",
            [tool_path("ansible-playbook"), "-i", "hosts.yml", "--check", "--tags", CHECK_TAGS, "site.yml"],
        ),
        # Every plugin and role of the collection in one process (three ansible-doc -t runs took ~1.3 s of
        # CPU, this one ~0.7 s): each page read as ansible-doc -t TYPE NAME reads it, and a page it cannot
        # read fails the run (a filter's is a warning).
        ("doc", [tool_path("ansible-doc"), "--metadata-dump", FQCN]),
    ]
    found: dict[str, Any] = {}
    for name, argv in steps:
        done = subprocess.run(argv, cwd=plain, env=env, capture_output=True, text=True, check=False)
        found[name] = {"rc": done.returncode, "out": done.stdout, "err": done.stderr}
        if name == "build" and done.returncode == 0:
            with tarfile.open(tarball) as tar:
                found["members"] = tar.getnames()
        if done.returncode != 0 and name in ("build", "install"):
            break
    found["installed"] = str(installed)
    return found


def collection_used(folder: Path) -> dict[str, tuple[list[str], dict[str, str], Path]]:
    return {"used": (in_child("test_collection", "use_the_collection", str(folder)), dict(os.environ), ROOT)}


def step(early_results: dict[str, subprocess.CompletedProcess[str]], name: str) -> dict[str, Any]:
    found = printed_json(early_results["used"])
    assert name in found, f"not run: an earlier step failed: {json.dumps(found, indent=1)[-3000:]}"
    done = found[name]
    assert done["rc"] == 0, f"{name} failed:\n{done['out'][-3000:]}\n{done['err'][-3000:]}"
    return done


def test_galaxy_yml_names_a_collection_as_ansible_galaxy_accepts_it() -> None:
    # Namespace and name: lowercase letters, digits and single underscores, not starting with a digit or an
    # underscore (ansible-galaxy's rule; galaxy.ansible.com's namespaces also no shorter than 2).
    for part in (GALAXY["namespace"], GALAXY["name"]):
        assert part.replace("_", "").isalnum() and part == part.lower(), part
        assert part[0].isalpha() and "__" not in part and len(part) >= 2, part
    # One version for the collection and the package it ships.
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert GALAXY["version"] == project["version"]


def test_the_license_is_the_one_the_roles_and_galaxy_yml_name() -> None:
    assert GALAXY["license"] == ["MIT"]
    assert (ROOT / "LICENSE").read_text(encoding="utf-8").startswith("MIT License\n")
    for role in ROLES:
        meta = read_yaml(ROOT / "roles" / role / "meta" / "main.yml")
        assert meta["galaxy_info"]["license"] == "MIT", role


def test_meta_runtime_names_the_ansible_core_ci_runs() -> None:
    runtime = read_yaml(ROOT / "meta" / "runtime.yml")
    assert runtime["requires_ansible"] == ">=2.19.0"


def test_the_checkout_resolves_as_the_collection_through_its_link() -> None:
    link = ROOT / "collections" / "ansible_collections" / GALAXY["namespace"] / GALAXY["name"]
    assert link.is_symlink() and os.readlink(link) == "../../.."
    assert link.resolve() == ROOT


def template_names(text: str) -> set[tuple[str, str]]:
    """Every (``filter`` or ``test``, name) a Jinja template or expression uses."""
    with warnings.catch_warnings():
        # A regex's '\.' in a Jinja string literal (app_server's '@\.service$'): Jinja decodes literals with
        # Python's unicode-escape, which warns on it (as it does when Ansible's templar parses the same).
        warnings.simplefilter("ignore", DeprecationWarning)
        tree = jinja2.Environment().parse(text)
    return {("filter", n.name) for n in tree.find_all(nodes.Filter)} | {
        ("test", n.name) for n in tree.find_all(nodes.Test)
    }


def yaml_names(node: Any, key: str = "") -> set[tuple[str, str]]:
    if isinstance(node, dict):
        return set().union(*(yaml_names(v, str(k)) for k, v in node.items()))
    if isinstance(node, list):
        return set().union(*(yaml_names(v, key) for v in node))
    if isinstance(node, str) and key in CONDITIONS:
        return template_names("{{ " + node + " }}")
    if isinstance(node, str) and ("{{" in node or "{%" in node):
        return template_names(node)
    return set()


def role_names() -> dict[tuple[str, str], list[str]]:
    """Every filter and test name in the roles' tasks, handlers, vars, defaults and templates, with the
    files that use it."""
    used: dict[tuple[str, str], list[str]] = {}
    for path in sorted((ROOT / "roles").rglob("*")):
        rel = path.relative_to(ROOT)
        if path.suffix == ".j2":
            names = template_names(path.read_text(encoding="utf-8"))
        elif path.suffix == ".yml" and rel.parts[2] in ("tasks", "handlers", "vars", "defaults"):
            names = yaml_names(read_yaml(path))
        else:
            continue
        for name in names:
            used.setdefault(name, []).append(str(rel))
    return used


def builtin_names() -> set[tuple[str, str]]:
    """Jinja's own filters and tests, and ansible.builtin's: the names that resolve unqualified anywhere."""
    names = {("filter", n) for n in jinja2.defaults.DEFAULT_FILTERS} | {
        ("test", n) for n in jinja2.defaults.DEFAULT_TESTS
    }
    for package in (ansible.plugins.filter, ansible.plugins.test):
        for file in Path(package.__file__).parent.glob("*.py"):
            module = importlib.import_module(f"{package.__name__}.{file.stem}")
            if hasattr(module, "FilterModule"):
                names |= {("filter", n) for n in module.FilterModule().filters()}
            if hasattr(module, "TestModule"):
                names |= {("test", n) for n in module.TestModule().tests()}
    return names


def test_the_static_check_reads_the_roles_filters() -> None:
    # The walk itself: an empty result cannot make the test below pass on nothing.
    used = role_names()
    assert ("filter", f"{FQCN}.bench_rolevar_problems") in used
    assert ("filter", f"{FQCN}.bench_server_command") in used  # a template's
    assert ("test", "skipped") in used and ("filter", "to_nice_json") in used


def test_every_filter_and_test_the_roles_use_resolves_from_the_collection() -> None:
    builtin = builtin_names()
    ours = {("filter", f"{FQCN}.{name}") for name in FILTERS}
    collections = {FQCN, "ansible.builtin", *GALAXY["dependencies"]}
    wrong = {}
    for (kind, name), files in role_names().items():
        if (kind, name) in builtin or (kind, name) in ours:
            continue
        if name.count(".") == 2 and not name.startswith(f"{FQCN}.") and name.rsplit(".", 1)[0] in collections:
            continue
        wrong[f"{kind} {name}"] = files
    assert not wrong, (
        f"names that resolve only from the checkout (ansible.cfg's plugin folders), not from the collection, "
        f"or from a collection galaxy.yml does not depend on (write {FQCN}.NAME for ours): {wrong}"
    )


@pytest.mark.ansible
@pytest.mark.early.with_args(collection_used)
def test_the_collection_builds_with_only_what_a_collection_needs(
    early_results: dict[str, subprocess.CompletedProcess[str]],
) -> None:
    step(early_results, "build")
    members = printed_json(early_results["used"])["members"]
    assert {m.split("/")[0] for m in members} == SHIPPED
    for path in [
        "roles/nginx/tasks/main.yml",
        "roles/app_server/meta/argument_specs.yml",
        "plugins/modules/bench_files.py",
        "plugins/action/bench_cell.py",
        "plugins/filter/bench_cpu_split.yml",
        "plugins/callback/bench_stack.py",
        "meta/runtime.yml",
        "benchstack/__init__.py",
        "benchstack/schemas/cell.schema.json",
    ]:
        assert path in members, path
    assert not [m for m in members if "__pycache__" in m or m.endswith(".pyc")]


@pytest.mark.ansible
@pytest.mark.early.with_args(collection_used)
def test_the_built_collection_installs_offline_and_carries_the_package_its_plugins_import(
    early_results: dict[str, subprocess.CompletedProcess[str]],
) -> None:
    # The venv's editable install of the checkout would lend its benchstack to any process that lacks one:
    # the Ansible runs here would pass on it. This is what proves the collection's own copy is imported.
    step(early_results, "install")
    installed = printed_json(early_results["used"])["installed"]
    imported = step(early_results, "package")["out"].strip()
    assert imported == f"{installed}/benchstack/__init__.py"


@pytest.mark.ansible
@pytest.mark.early.with_args(collection_used)
def test_a_plain_playbook_outside_the_checkout_passes_the_syntax_check_with_every_role(
    early_results: dict[str, subprocess.CompletedProcess[str]],
) -> None:
    done = step(early_results, "syntax")
    assert "couldn't resolve" not in done["err"] and "[ERROR]" not in done["err"], done["err"]


@pytest.mark.ansible
@pytest.mark.early.with_args(collection_used)
def test_nginx_and_app_server_run_in_check_mode_from_the_collection_alone(
    early_results: dict[str, subprocess.CompletedProcess[str]],
) -> None:
    out = step(early_results, "check")["out"]
    # Each role's first task, its variables checked with our filter (benchstack imported from the
    # collection), ran and passed; nothing changed.
    assert "TASK [benchstack.bench.app_server : Check the role's variables for where they land" in out
    assert "TASK [benchstack.bench.nginx : Check the role's variables for where they land" in out
    assert "TASK [benchstack.bench.nginx : Name the OS packages this role installs]" in out
    recap = out[out.index("PLAY RECAP") :]
    assert "failed=0" in recap and "changed=0" in recap, recap


@pytest.mark.ansible
@pytest.mark.early.with_args(collection_used)
@pytest.mark.parametrize(
    ("kind", "names"), [("module", MODULES), ("filter", FILTERS), ("callback", CALLBACKS)]
)
def test_ansible_doc_shows_every_plugin_of_the_installed_collection_by_its_fqcn(
    kind: str, names: list[str], early_results: dict[str, subprocess.CompletedProcess[str]]
) -> None:
    done = step(early_results, "doc")
    assert "[ERROR]" not in done["err"] and "[WARNING]" not in done["err"], done["err"][-3000:]
    pages = json.loads(done["out"])["all"][kind]
    assert sorted(pages) == sorted(f"{FQCN}.{name}" for name in names)
    for name, page in pages.items():
        assert page["doc"].get("short_description"), name
        assert page["doc"]["collection"] == FQCN, name
