"""The roles app and bench_host renamed webapp and host (issue 26, item 5) by scripts/rename-roles.py: no
tracked file names an old role or variable outside the migration's own files (benchstack/common/renamed.py,
docs/upgrading.md, their tests), the script finds nothing left to do, rewrites each kind of reference once,
and refuses a name it cannot classify before it moves anything."""

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import project_script

from benchstack.common.renamed import ROLES
from benchstack.plan.settings import role_options

ROOT = Path(__file__).resolve().parents[3]
rename = project_script("rename_roles", "rename-roles.py")


def test_the_old_roles_are_gone_and_the_script_finds_nothing_left() -> None:
    assert not (ROOT / "roles" / "app").exists() and not (ROOT / "roles" / "bench_host").exists()
    assert rename.ROLES == ROLES
    assert rename.rewrite_all(ROOT, write=False) == ({}, [])


def test_no_tracked_file_names_an_old_role_variable_outside_the_migration_table() -> None:
    options = dict(role_options())
    old = [old + name[len(new) :] for old, new in ROLES.items() for name in options[new]]
    pattern = re.compile(r"(?<![\w.])(?:{})(?!\w)".format("|".join(map(re.escape, old))))
    found = []
    for rel in rename.tracked(ROOT):
        text = rename.read_text(ROOT / rel)
        # Line by line only where the file holds one of the names at all (~0.3 s for every line otherwise).
        if rel in rename.EXEMPT or text is None or not any(name in text for name in old):
            continue
        for i, line in enumerate(text.split("\n"), 1):
            if rename.MARK in line or rename.TAG_LINE.search(line):  # the host role's tags keep their names
                continue
            # A plan field keeps its name (bench_plan.needs.app_kinds) in the files that mean the field.
            found += [
                f"{rel}:{i}: {m[0]}"
                for m in pattern.finditer(line)
                if rel not in rename.FIELD_FILES.get(m[0], ())
            ]
    assert found == []


VARIABLES = {
    "app": {"app_root", "app_kinds", "__app_tree"},
    "bench_host": {"bench_host_user", "bench_host_profile"},
}
TAGS = {"app": {"bench_app", "bench_app_user"}, "bench_host": {"bench_host", "bench_host_user"}}


@pytest.mark.parametrize(
    ("rel", "old", "new"),
    [
        ("roles/app/tasks/main.yml", 'dest: "{{ app_root }}/x"', 'dest: "{{ webapp_root }}/x"'),
        (
            "roles/app/tasks/main.yml",
            "  tags: [bench_app, bench_app_user]",
            "  tags: [bench_webapp, bench_webapp_user]",
        ),
        ("roles/app/tasks/main.yml", "register: __app_tree", "register: __webapp_tree"),
        # The host role's tags keep their names; its variable of the same spelling does not.
        (
            "roles/x/tasks/main.yml",
            "  tags: [bench_host, bench_host_user]",
            "  tags: [bench_host, bench_host_user]",
        ),
        ("roles/x/tasks/main.yml", 'name: "{{ bench_host_user }}"', 'name: "{{ host_user }}"'),
        (
            "x.py",
            'tags="bench_host_user", extra={"bench_host_profile": p}',
            'tags="bench_host_user", extra={"host_profile": p}',
        ),
        (
            "x.py",
            'ROLES = ["bench_host", "ruby", "app", "app_server"]',
            'ROLES = ["host", "ruby", "webapp", "app_server"]',
        ),
        ("x.py", "make(bench_host_profile=p)", "make(host_profile=p)"),
        (
            "x.py",
            'x = {"made": {"app": {}}}; manifests["app"]',
            'x = {"made": {"webapp": {}}}; manifests["webapp"]',
        ),
        (
            "x.py",
            'a if role == "app" else b if kind == "app" else c',
            'a if role == "webapp" else b if kind == "app" else c',
        ),
        # A keyword argument that names no role variable is a Python name: it stays, unreported.
        ("x.py", "Section(app_entry=e, app_dir=d)", "Section(app_entry=e, app_dir=d)"),
        # Python names, plan and stack fields, the app_server role, the lock action, the filter plugin stay.
        ("x.py", "def owned(stacks, app_kinds): ...", "def owned(stacks, app_kinds): ..."),
        (
            "x.py",
            '{"app": {"kind": "php"}, "front": {"kind": "nginx"}}',
            '{"app": {"kind": "php"}, "front": {"kind": "nginx"}}',
        ),
        (
            "x.yml",
            "app_kinds: '{{ bench_plan.needs.app_kinds }}'",
            "webapp_kinds: '{{ bench_plan.needs.app_kinds }}'",
        ),
        (
            "x.md",
            "app_server_user, app_env_lines, bench_host_lock",
            "app_server_user, app_env_lines, bench_host_lock",
        ),
        ("x.md", "filters `bench_apps`, `bench_host`", "filters `bench_apps`, `bench_host`"),
        (
            "x.md",
            "the app role's files in roles/app/files/",
            "the webapp role's files in roles/webapp/files/",
        ),
        ("x.md", "server: app php needs an app server", "server: app php needs an app server"),
        ("x.md", "(bench_host, ruby, app, app_server)", "(host, ruby, webapp, app_server)"),
        ("x.md", "app_root: /srv  # rename-roles: keep", "app_root: /srv  # rename-roles: keep"),
    ],
)
def test_a_reference_is_rewritten_once(rel: str, old: str, new: str) -> None:
    unknown: list[str] = []
    assert rename.rewrite_text(old, rel, VARIABLES, TAGS, unknown)[0] == new
    assert rename.rewrite_text(new, rel, VARIABLES, TAGS, unknown) == (new, 0)
    assert unknown == []


def test_a_name_in_no_table_is_reported() -> None:
    unknown: list[str] = []
    rename.rewrite_text("x: '{{ app_new_thing }}'", "a.yml", VARIABLES, TAGS, unknown)
    assert unknown == ["a.yml:1: app_new_thing"]


def git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=cwd, check=True)


@pytest.fixture(scope="module")
def made_old_tree(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A checkout with the old roles: the script, two small roles and a file that names them (made once)."""
    tree = tmp_path_factory.mktemp("old-tree")
    git(tree, "init", "-q")
    (tree / "scripts").mkdir()
    (tree / "scripts" / "rename-roles.py").write_bytes((ROOT / "scripts" / "rename-roles.py").read_bytes())
    for role, var in (("app", "app_root"), ("bench_host", "bench_host_user")):
        (tree / "roles" / role / "defaults").mkdir(parents=True)
        (tree / "roles" / role / "defaults" / "main.yml").write_text(f"---\n{var}: x\n")
    (tree / "play.yml").write_text("x: '{{ app_root }}/{{ bench_host_user }}'\n")
    git(tree, "add", "-A")
    git(tree, "commit", "-q", "-m", "old")
    return tree


@pytest.fixture
def old_tree(tmp_path: Path, made_old_tree: Path) -> Path:
    """A copy of the old checkout in the test's own folder: the script moves and rewrites its files."""
    tree = tmp_path / "tree"
    shutil.copytree(made_old_tree, tree, symlinks=True)
    return tree


def run(tree: Path) -> subprocess.CompletedProcess[str]:
    """The script run as a person runs it, from the checkout it is in."""
    return subprocess.run(
        [sys.executable, "scripts/rename-roles.py"], cwd=tree, capture_output=True, text=True, check=False
    )


def run_here(
    tree: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> subprocess.CompletedProcess[str]:
    """The script's main in this process, as if its file were in ``tree`` (a new interpreter costs ~0.1 s;
    :func:`run` runs it for real once)."""
    monkeypatch.setattr(rename, "ROOT", tree)
    capsys.readouterr()
    code = rename.main([])
    out, err = capsys.readouterr()
    return subprocess.CompletedProcess(["rename-roles.py"], code, out, err)


def test_the_script_renames_once_and_a_second_run_changes_nothing(
    old_tree: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    tree = old_tree
    first = run(tree)
    assert first.returncode == 0, first.stderr
    assert "git mv roles/app roles/webapp" in first.stdout
    assert (tree / "play.yml").read_text() == "x: '{{ webapp_root }}/{{ host_user }}'\n"
    assert (tree / "roles" / "host" / "defaults" / "main.yml").read_text() == "---\nhost_user: x\n"
    second = run_here(tree, monkeypatch, capsys)
    assert (second.returncode, second.stdout) == (0, "rename-roles: nothing to do\n")


def test_the_script_refuses_a_name_it_cannot_classify_before_moving_anything(
    old_tree: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    tree = old_tree
    (tree / "play.yml").write_text("x: '{{ app_root }}'\ny: '{{ app_newer_thing }}'\n")
    git(tree, "add", "-A")
    done = run_here(tree, monkeypatch, capsys)
    assert done.returncode == 2
    assert "play.yml:2: app_newer_thing" in done.stderr
    assert (tree / "roles" / "app").is_dir() and not (tree / "roles" / "webapp").exists()
    assert (tree / "play.yml").read_text() == "x: '{{ app_root }}'\ny: '{{ app_newer_thing }}'\n"
