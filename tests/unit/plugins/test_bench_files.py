"""bench_files: a role's files and their folders written in one execution, changed only when their content,
owner or mode differ; check mode writes nothing; a secret never lies on disk readable by others."""

from __future__ import annotations

import grp
import os
import pwd
import stat
from pathlib import Path
from typing import Any

import pytest
from conftest import run_module, run_module_script
from test_plugins import load_plugin

files_mod = load_plugin("modules", "bench_files")
MODULE = Path(__file__).resolve().parents[3] / "plugins" / "modules" / "bench_files.py"
OWNER = pwd.getpwuid(os.geteuid()).pw_name
GROUP = grp.getgrgid(os.getegid()).gr_name


def run(
    tmp_path: Path, check: bool = False, diff: bool = False, script: bool = False, **args: Any
) -> dict[str, Any]:
    """bench_files' result for ``args``: in this process, or with ``script`` as its own process (its argument
    file in ``tmp_path``)."""
    payload = {**args, "_ansible_check_mode": check, "_ansible_diff": diff}
    return run_module_script(MODULE, payload, tmp_path) if script else run_module(files_mod, payload)


def mode(path: Path) -> str:
    return oct(stat.S_IMODE(path.stat().st_mode))


def unit_and_env(root: Path, env: str = "PORT=1\n") -> dict[str, Any]:
    return {
        "folders": [{"path": str(root / "units"), "mode": "0750", "owner": OWNER, "group": GROUP}],
        "files": [
            {"path": str(root / "app.service"), "content": "[Service]\n", "mode": "0644"},
            {"path": str(root / "units" / "app.env"), "content": env, "mode": "0640", "owner": OWNER},
        ],
    }


def test_files_and_their_folder_are_written_once_then_left_alone(tmp_path: Path) -> None:
    root = tmp_path / "etc"
    root.mkdir()
    first = run(tmp_path, script=True, **unit_and_env(root))
    assert first["changed"] is True
    assert first["changed_paths"] == [
        str(root / "units"),
        str(root / "app.service"),
        str(root / "units/app.env"),
    ]
    assert (root / "units" / "app.env").read_text() == "PORT=1\n"
    assert (mode(root / "units"), mode(root / "app.service"), mode(root / "units" / "app.env")) == (
        "0o750",
        "0o644",
        "0o640",
    )
    again = run(tmp_path, **unit_and_env(root))
    assert (again["changed"], again["changed_paths"]) == (False, [])


def test_a_changed_content_or_mode_changes_only_that_file(tmp_path: Path) -> None:
    root = tmp_path / "etc"
    root.mkdir()
    run(tmp_path, **unit_and_env(root))
    assert run(tmp_path, **unit_and_env(root, env="PORT=2\n"))["changed_paths"] == [
        str(root / "units/app.env")
    ]
    assert (root / "units" / "app.env").read_text() == "PORT=2\n"
    (root / "app.service").chmod(0o600)
    assert run(tmp_path, **unit_and_env(root, env="PORT=2\n"))["changed_paths"] == [str(root / "app.service")]
    assert mode(root / "app.service") == "0o644"


def test_check_mode_reports_the_changes_and_writes_nothing(tmp_path: Path) -> None:
    root = tmp_path / "etc"
    root.mkdir()
    result = run(tmp_path, check=True, diff=True, **unit_and_env(root))
    assert result["changed"] is True
    assert len(result["changed_paths"]) == 3
    assert [d["after"] for d in result["diff"]] == ["[Service]\n", "PORT=1\n"]
    assert sorted(p.name for p in root.iterdir()) == []


def test_absent_removes_a_file_and_a_missing_folder_is_named(tmp_path: Path) -> None:
    gone = tmp_path / "pin.conf"
    gone.write_text("x")
    result = run(tmp_path, files=[{"path": str(gone), "state": "absent"}])
    assert (result["changed"], gone.exists()) == (True, False)
    assert run(tmp_path, files=[{"path": str(gone), "state": "absent"}])["changed"] is False
    nowhere = tmp_path / "no" / "such" / "file"
    failed = run(tmp_path, files=[{"path": str(nowhere), "content": "x"}])
    assert failed["failed"] is True
    assert failed["msg"] == f"{nowhere}: its folder does not exist (name it under folders)"


class FakeModule:
    def user_and_group(self, path: str) -> tuple[int, int]:
        st = os.stat(path)
        return st.st_uid, st.st_gid

    def selinux_enabled(self) -> bool:
        return False


def test_a_secret_has_its_mode_before_it_takes_its_name(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen: list[str] = []
    real_replace = os.replace

    def replace(src: str, dst: str) -> None:
        seen.append(oct(stat.S_IMODE(os.stat(src).st_mode)))
        real_replace(src, dst)

    monkeypatch.setattr(files_mod.os, "replace", replace)
    env = tmp_path / "app.env"
    files_mod._write(FakeModule(), {"path": str(env), "mode": "0640"}, b"SECRET=1\n")  # type: ignore[arg-type]
    assert seen == ["0o640"]
    assert env.read_bytes() == b"SECRET=1\n"
    assert [p.name for p in tmp_path.iterdir()] == ["app.env"]  # no temporary file left beside it


def test_a_file_that_fails_validation_leaves_the_old_one_in_place(tmp_path: Path) -> None:
    conf = tmp_path / "nginx.conf"
    conf.write_text("ok 1\n")
    check = 'sh -c \'grep -q ^ok "$0" || { echo "no ok in $0" >&2; exit 1; }\' %s'
    failed = run(tmp_path, files=[{"path": str(conf), "content": "broken\n", "validate": check}])
    assert failed["failed"] is True
    assert failed["msg"].startswith(f"{conf}: failed to validate: no ok in {tmp_path}/.nginx.conf.")
    assert conf.read_text() == "ok 1\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["nginx.conf"]
    passed = run(tmp_path, files=[{"path": str(conf), "content": "ok 2\n", "validate": check}])
    assert (passed["changed"], conf.read_text()) == (True, "ok 2\n")


def test_missing_parents_get_the_folders_owner_and_mode_and_existing_ones_are_left(tmp_path: Path) -> None:
    tmp_path.chmod(0o711)
    app = tmp_path / "opt" / "apps" / "sinatra"
    result = run(tmp_path, folders=[{"path": str(app), "mode": "0750"}], files=[])
    assert result["changed_paths"] == [str(tmp_path / "opt"), str(tmp_path / "opt" / "apps"), str(app)]
    assert {mode(p) for p in (tmp_path / "opt", tmp_path / "opt" / "apps", app)} == {"0o750"}
    assert mode(tmp_path) == "0o711"
    assert run(tmp_path, folders=[{"path": str(app), "mode": "0750"}], files=[])["changed"] is False


def test_an_owner_the_host_lacks_is_named_and_nothing_is_left_behind(tmp_path: Path) -> None:
    env = tmp_path / "app.env"
    failed = run(tmp_path, files=[{"path": str(env), "content": "A=1\n", "owner": "no-such-user-here"}])
    assert (
        failed["msg"]
        == f"{env}: no such user or group on this host: getpwnam(): name not found: 'no-such-user-here'"
    )
    assert sorted(p.name for p in tmp_path.iterdir()) == []
