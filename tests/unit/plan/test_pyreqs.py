"""A Python user app's requirements.txt against the versions bench-stack pins in the stacks' venv
(benchstack.plan.pyreqs): a line pip would refuse on the target (ResolutionImpossible against the role's
constraints) is refused in the plan, naming the file, the line and what to write instead."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from conftest import read_yaml

from benchstack.plan import pyreqs
from benchstack.plan.experiment import ExperimentError
from benchstack.plan.resolved import compile_plan

ROOT = Path(__file__).resolve().parents[3]

APP = "def app(environ, start_response):\n    return []\n"


def experiment(tmp_path: Path, files: dict[str, str], kind: str = "wsgi", server: str = "gunicorn") -> Path:
    src = tmp_path / "apps" / "shop"
    for rel, text in {"app.py": APP, **files}.items():
        (src / rel).parent.mkdir(parents=True, exist_ok=True)
        (src / rel).write_text(text, encoding="utf-8")
    path = tmp_path / "exp.yml"
    stack = {
        "name": "shop",
        "port": 8101,
        "app": {"kind": kind, "src": "apps/shop"},
        "server": {"kind": server},
    }
    data = {
        "name": "mine",
        "stacks": [stack],
        "load": {"plans": [{"tool": "ab", "concurrency": 1, "requests": 1}]},
    }
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    return path


def refused(path: Path, **kwargs: Any) -> list[str]:
    with pytest.raises(ExperimentError) as err:
        compile_plan(path, **kwargs)
    return err.value.problems


def test_a_server_pin_the_venv_contradicts_is_refused_naming_the_file_the_line_and_what_to_write(
    tmp_path: Path,
) -> None:
    path = experiment(tmp_path, {"requirements.txt": "flask==3.0.3\ngunicorn==19.0\n"})
    (problem,) = refused(path)
    src = tmp_path / "apps" / "shop"
    assert problem.startswith(f"stack 'shop': app.src: {src}/requirements.txt line 2: `gunicorn==19.0` ")
    assert "contradicts gunicorn==23.0.0" in problem and "server.kind gunicorn runs from it" in problem
    assert "write that line as `gunicorn==23.0.0` (or plain `gunicorn`)" in problem


def test_a_server_missing_from_requirements_is_accepted_the_python_role_installs_it_first(
    tmp_path: Path,
) -> None:
    # pip install -r never removes what the venv holds: gunicorn stays at the role's version.
    plan = compile_plan(experiment(tmp_path, {"requirements.txt": "flask==3.0.3\n"}))
    assert plan.needs.python_packages == ("gunicorn",)


@pytest.mark.parametrize(
    "line",
    [
        "Gunicorn<23",
        "GUNICORN[setproctitle]==22.0.0",
        "Packaging<24",
        "h11==0.14.0",
        "Click<8",
        "uvicorn~=0.30.0",
    ],
)
def test_names_are_compared_after_pep503_normalization_whatever_the_extras(tmp_path: Path, line: str) -> None:
    assert len(refused(experiment(tmp_path, {"requirements.txt": f"{line}\n"}))) == 1


def test_separators_and_case_do_not_hide_a_pinned_name(tmp_path: Path) -> None:
    path = experiment(tmp_path, {"requirements.txt": "Python_Dotenv==0.9\nflask\n"})
    (problem,) = refused(path, python_constraints=["gunicorn==23.0.0", "python-dotenv==1.0.1"])
    assert "`Python_Dotenv==0.9` contradicts python-dotenv==1.0.1" in problem


@pytest.mark.parametrize("line", ["gunicorn", "gunicorn>=20", "Uvicorn[standard]", "h11==0.16.*", "flask"])
def test_lines_the_pins_satisfy_are_accepted(tmp_path: Path, line: str) -> None:
    compile_plan(experiment(tmp_path, {"requirements.txt": f"{line}\n"}))


def test_a_marker_false_on_every_target_python_is_left_out_as_pip_leaves_it_out(tmp_path: Path) -> None:
    compile_plan(experiment(tmp_path, {"requirements.txt": 'gunicorn==19.0; python_version < "3"\n'}))
    recent = experiment(tmp_path, {"requirements.txt": 'gunicorn==19.0; python_version >= "3.12"\n'})
    # Debian 13 and Ubuntu 24.04 run such a Python; the one pyenv Python of an inventory may not.
    assert refused(recent)
    compile_plan(recent, python_versions=["3.11.2"])
    assert refused(recent, python_versions=["3.12.8"])


def test_the_inventorys_python_constraints_replace_the_roles(tmp_path: Path) -> None:
    path = experiment(tmp_path, {"requirements.txt": "gunicorn==19.0\n"})
    compile_plan(path, python_constraints=["gunicorn==19.0"])
    (problem,) = refused(path, python_constraints=["gunicorn>=22"])
    assert "contradicts gunicorn>=22" in problem and "write that line as plain `gunicorn`" in problem


def test_comments_continuations_options_and_hashes_are_read_as_pip_reads_them() -> None:
    text = (
        "# a comment\n\nflask==3.0.3  # web\nurl#fragment-is-not-a-comment\n"
        "gunicorn==19.0 \\\n    --hash=sha256:00\n--index-url https://example.invalid/simple\n"
    )
    assert pyreqs.logical_lines(text) == [
        (3, "flask==3.0.3"),
        (4, "url#fragment-is-not-a-comment"),
        (5, "gunicorn==19.0     --hash=sha256:00"),
        (7, "--index-url https://example.invalid/simple"),
    ]


def test_a_conflict_with_a_hash_on_a_continued_line_is_named_at_its_first_line(tmp_path: Path) -> None:
    text = "flask\ngunicorn==19.0 \\\n    --hash=sha256:00\n"
    (problem,) = refused(experiment(tmp_path, {"requirements.txt": text}))
    assert "requirements.txt line 2: `gunicorn==19.0` contradicts" in problem


def test_an_included_file_is_followed_within_the_app_folder(tmp_path: Path) -> None:
    files = {
        "requirements.txt": "-r reqs/base.txt\n",
        "reqs/base.txt": "--requirement=../more.txt\n",
        "more.txt": "h11<0.16\n",
    }
    (problem,) = refused(experiment(tmp_path, files))
    assert (
        "more.txt line 1 (included from reqs/base.txt line 1): `h11<0.16` contradicts h11==0.16.0" in problem
    )


def test_an_include_through_a_link_to_a_folder_of_the_app_is_followed(tmp_path: Path) -> None:
    path = experiment(tmp_path, {"requirements.txt": "-r pinned/base.txt\n", "reqs/base.txt": "click<8\n"})
    (tmp_path / "apps" / "shop" / "pinned").symlink_to("reqs")
    (problem,) = refused(path)
    assert "reqs/base.txt line 1 (included from requirements.txt line 1): `click<8`" in problem


@pytest.mark.parametrize(
    ("line", "files", "said"),
    [
        ("-r ../other.txt", {}, "../other.txt is outside the app folder"),
        ("-r /etc/requirements.txt", {}, "/etc/requirements.txt is an absolute path"),
        (
            "-r https://example.invalid/r.txt",
            {},
            "https://example.invalid/r.txt is fetched by pip on the target",
        ),
        ("-r base.txt", {}, "base.txt is not in the app folder"),
        ("-r vendor/base.txt", {"vendor/base.txt": "flask\n"}, "vendor/base.txt is not in the app folder"),
        ("-r requirements.txt", {}, "requirements.txt is already being read (an include loop)"),
        ("flask=3.0", {}, "'flask=3.0' is not a requirement pip reads"),
    ],
)
def test_includes_pip_cannot_follow_in_the_app_and_unreadable_lines_are_refused(
    tmp_path: Path, line: str, files: dict[str, str], said: str
) -> None:
    (problem,) = refused(experiment(tmp_path, {"requirements.txt": f"flask\n{line}\n", **files}))
    assert f"requirements.txt line 2: {said}" in problem


@pytest.mark.parametrize(
    "line", ["./local-pkg", "dist/shop-1.0-py3-none-any.whl", "-e .", "git+https://example.invalid/x.git"]
)
def test_paths_urls_and_editables_are_left_to_pip(tmp_path: Path, line: str) -> None:
    compile_plan(experiment(tmp_path, {"requirements.txt": f"{line}\n"}))


def test_a_constraint_file_counts_for_the_packages_the_requirements_name(tmp_path: Path) -> None:
    files = {"requirements.txt": "-c constraints.txt\nflask\n", "constraints.txt": "gunicorn==19.0\n"}
    compile_plan(experiment(tmp_path, files))  # pip applies it to nothing it installs
    files["requirements.txt"] += "gunicorn\n"
    (problem,) = refused(experiment(tmp_path, files))
    assert "constraints.txt line 1 (included from requirements.txt line 1): `gunicorn==19.0`" in problem


def test_an_asgi_app_on_uvicorn_is_checked_against_uvicorns_pin(tmp_path: Path) -> None:
    path = experiment(tmp_path, {"requirements.txt": "uvicorn==0.20.0\n"}, kind="asgi", server="uvicorn")
    (problem,) = refused(path)
    assert "contradicts uvicorn==0.32.1" in problem and "server.kind uvicorn runs from it" in problem


def test_the_check_reads_the_python_roles_own_pins() -> None:
    roles = read_yaml(ROOT / "roles" / "python" / "defaults" / "main.yml")["python_constraints"]
    assert pyreqs.role_constraints() == roles and "gunicorn==23.0.0" in roles


def test_the_plan_play_checks_against_the_inventorys_pins_and_its_pyenv_python(tmp_path: Path) -> None:
    from ansible.errors import AnsibleActionFail
    from test_plugins import run_plan

    path = str(experiment(tmp_path, {"requirements.txt": 'gunicorn==19.0; python_version < "3.12"\n'}))
    with pytest.raises(AnsibleActionFail, match="contradicts gunicorn==23.0.0"):
        run_plan(path)  # Debian 12's python3 is 3.11
    run_plan(path, {"python_constraints": ["gunicorn==19.0"]})
    run_plan(path, {"python_method": "pyenv"})  # the role's python_pyenv_versions: 3.12.8
    with pytest.raises(AnsibleActionFail, match="contradicts gunicorn==23.0.0"):
        run_plan(path, {"python_method": "pyenv", "python_pyenv_global": "3.11.2"})


# ---------------------------------------------------------------- issue 44, finding 6: lines echoed whole


def test_a_long_line_with_a_password_is_quoted_cut_and_masked(tmp_path: Path) -> None:
    """A 5 MB line gave 15 MB of stderr (the line, then packaging's message quoting it twice more)."""
    url = "https://me:hunter2@idx.example.invalid/simple"
    for line in (f"flask!!3 ; extra == '{url}'", "flask!!" + "x" * 900_000 + f" ; extra == '{url}'"):
        (problem,) = refused(experiment(tmp_path, {"requirements.txt": f"{line}\n"}))
        assert "is not a requirement pip reads" in problem and len(problem) < 500, problem[:1000]
        assert "hunter2" not in problem
    assert (
        "https://***@idx.example.invalid"
        in refused(experiment(tmp_path, {"requirements.txt": f"flask!!3 ; x == '{url}'\n"}))[0]
    )


@pytest.mark.parametrize(
    "line",
    [
        "-r https://me:hunter2@idx.example.invalid/r.txt",
        '--index-url "https://me:hunter2@idx.example.invalid/simple',
        "-c https://me:hunter2@idx.example.invalid/c.txt",
    ],
)
def test_a_password_in_an_echoed_line_is_masked(tmp_path: Path, line: str) -> None:
    (problem,) = refused(experiment(tmp_path, {"requirements.txt": f"flask\n{line}\n"}))
    assert "https://***@idx.example.invalid/" in problem and "hunter2" not in problem


def test_a_requirements_file_linked_into_git_is_refused_without_its_lines(tmp_path: Path) -> None:
    """requirements.txt -> .git/config was read (its first line quoted as a requirement); .git is left out
    of the copy, so the link would lead nowhere on the target."""
    path = experiment(tmp_path, {".git/config": "[remote]\n\turl = https://me:hunter2@example.invalid/x\n"})
    (tmp_path / "apps" / "shop" / "requirements.txt").symlink_to(".git/config")
    (problem,) = refused(path)
    assert problem.endswith(
        "requirements.txt is a link to .git/config, into .git/, which is left out of the copy (the link "
        "would lead nowhere on the target)"
    )
    assert "remote" not in problem and "hunter2" not in problem
