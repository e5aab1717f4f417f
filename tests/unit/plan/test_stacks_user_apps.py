"""Users' apps in the one stack validator and the plan: app.src (read on the controller, relative to the
experiment file), app.git (pinned versions), app.env (the stack's env file) and what the plan hands the app
role (folders, content hash, key)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from benchstack.kinds.apps.deploy import user_apps
from benchstack.kinds.apps.fields import env_file_line
from benchstack.kinds.apps.userapp import scan
from benchstack.kinds.stackfields import StackError
from benchstack.plan.experiment import ExperimentError, load_experiment
from benchstack.plan.readers import needs
from benchstack.plan.resolved import compile_plan
from benchstack.plan.stacks import resolve_stack, resolve_stacks

USER = "/opt/bench-stack/apps/user"

# Every server the tests run the app on is in its bundle.
GEMFILE = 'source "https://rubygems.org"\ngem "sinatra"\ngem "puma"\ngem("thin", "~> 1.8")\n'


def make_app(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")
    return root


@pytest.fixture
def sinatra_src(tmp_path: Path) -> Path:
    return make_app(
        tmp_path / "apps" / "shop", {"config.ru": "run Shop\n", "app.rb": "x\n", "Gemfile": GEMFILE}
    )


def stack(stack_name: str = "shop-puma", port: int = 8101, **app: Any) -> dict[str, Any]:
    return {"name": stack_name, "port": port, "app": {"kind": "sinatra", **app}, "server": {"kind": "puma"}}


def problems(s: dict[str, Any], base_dir: Path | None = None) -> list[str]:
    with pytest.raises(StackError) as err:
        resolve_stack(s, base_dir=base_dir)
    return err.value.problems


def write_experiment(folder: Path, stacks: list[dict[str, Any]]) -> Path:
    path = folder / "exp.yml"
    data = {
        "name": "mine",
        "stacks": stacks,
        "load": {"plans": [{"tool": "ab", "concurrency": 1, "requests": 1}]},
    }
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    return path


# ---------------------------------------------------------------- app.src


def test_src_is_taken_relative_to_the_experiment_file(tmp_path: Path, sinatra_src: Path) -> None:
    exp = load_experiment(write_experiment(tmp_path, [stack(src="apps/shop")]))
    app = exp.resolved[0].app
    assert app.src is not None
    assert (app.deploy, app.src.path, app.dir) == ("src", str(sinatra_src), f"{USER}/shop-puma")
    assert app.src.sha256 == scan(sinatra_src).sha256


def test_a_missing_src_names_the_stack_the_field_and_the_folder(tmp_path: Path) -> None:
    assert problems(stack(src="apps/gone"), tmp_path) == [
        f"stack 'shop-puma': app.src: {tmp_path}/apps/gone does not exist"
    ]


def test_a_src_without_the_kinds_entry_file_is_refused(tmp_path: Path) -> None:
    make_app(tmp_path / "wsgi", {"app.py": "app = None\n"})
    assert problems(stack(src=str(tmp_path / "wsgi"))) == [
        f"stack 'shop-puma': app.src: {tmp_path}/wsgi has no config.ru, the entry file of a sinatra app"
    ]


def test_src_and_dir_together_are_refused(sinatra_src: Path) -> None:
    (problem,) = problems(stack(src=str(sinatra_src), dir="/srv/shop"))
    assert problem.startswith("stack 'shop-puma': app.dir and app.src: give one:")


def test_src_and_git_together_are_refused(sinatra_src: Path) -> None:
    (problem,) = problems(stack(src=str(sinatra_src), git={"repo": "https://g/x.git", "version": "v1"}))
    assert problem.startswith("stack 'shop-puma': app.src and app.git: give one:")


def test_a_relative_src_without_an_experiment_file_is_refused() -> None:
    assert problems(stack(src="apps/shop")) == [
        "stack 'shop-puma': app.src: 'apps/shop' is relative, "
        "and there is no experiment file to be relative to"
    ]


def test_a_src_over_the_size_limit_is_refused_in_the_plan(
    sinatra_src: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("benchstack.kinds.apps.userapp.MAX_APP_BYTES", 8)
    (problem,) = problems(stack(src=str(sinatra_src)))
    assert problem.startswith(f"stack 'shop-puma': app.src: {sinatra_src} holds 0.0 MiB in 3 files")
    assert "the limit is 0 MiB" in problem


def test_perl_dependency_files_are_refused_naming_the_supported_ones(tmp_path: Path) -> None:
    src = make_app(tmp_path / "psgi", {"app.psgi": "sub {}\n", "cpanfile": "requires 'Plack';\n"})
    s = {"name": "p", "port": 8102, "app": {"kind": "psgi", "src": str(src)}, "server": {"kind": "starman"}}
    (problem,) = problems(s)
    assert problem.startswith(
        f"stack 'p': app.src: {src} holds cpanfile: perl dependency files are not installed"
    )
    assert "supported dependency files: Gemfile with or without Gemfile.lock" in problem
    assert "requirements.txt" in problem


def test_an_app_whose_code_is_in_the_front_config_has_nothing_to_deploy(tmp_path: Path) -> None:
    s = {
        "name": "lua",
        "port": 8103,
        "app": {"kind": "lua-inline", "src": str(tmp_path)},
        "front": {"kind": "apache"},
    }
    assert problems(s) == [
        "stack 'lua': app.src: app lua-inline has no files to deploy (its code is in the front's config)"
    ]


def test_app_name_is_only_for_deployed_apps() -> None:
    assert problems(stack(name="shop")) == [
        "stack 'shop-puma': app.name: names an app deployed from app.src or app.git only"
    ]


# ---------------------------------------------------------------- app.git


def git_stack(**git: Any) -> dict[str, Any]:
    return stack(git={"repo": "https://git.example/shop.git", "version": "v1.2", **git})


def test_a_pinned_git_app_gets_a_key_and_its_folders() -> None:
    (app,) = user_apps(resolve_stacks([git_stack()]))
    assert app["source"] == {
        "type": "git",
        "repo": "https://git.example/shop.git",
        "version": "v1.2",
        "moving_ref": False,
    }
    assert app["key"].startswith("git:") and app["release"] is None
    assert app["git_cache"] == f"{USER}/.git/shop-puma.git"
    assert f"{USER}/.git" in app["folders"]


def test_a_moving_ref_has_no_key_so_it_is_resolved_every_run() -> None:
    (app,) = user_apps(resolve_stacks([git_stack(version="main", moving_ref=True)]))
    assert app["key"] is None


def test_head_is_refused_unless_the_stack_accepts_a_moving_ref() -> None:
    assert problems(git_stack(version="HEAD")) == [
        "stack 'shop-puma': app.git.version: HEAD is a moving ref: "
        "pin a tag or a commit, or set moving_ref: true"
    ]
    resolve_stack(git_stack(version="HEAD", moving_ref=True))


@pytest.mark.parametrize(
    ("git", "field"),
    [
        ({"repo": "https://x/y.git --upload-pack=evil", "version": "v1"}, "app.git.repo"),
        ({"repo": "-oProxyCommand=x", "version": "v1"}, "app.git.repo"),
        ({"repo": "https://x/y.git", "version": "--help"}, "app.git.version"),
        ({"repo": "https://x/y.git", "version": "a..b"}, "app.git.version"),
        ({"repo": "https://x/y.git", "version": "v1", "moving_ref": "yes"}, "app.git.moving_ref"),
        ({"repo": "https://x/y.git", "version": "v1", "branch": "main"}, "app.git.branch"),
    ],
)
def test_bad_git_fields_are_named(git: dict[str, Any], field: str) -> None:
    (problem,) = problems(stack(git=git))
    assert problem.startswith(f"stack 'shop-puma': {field}: ")


# ---------------------------------------------------------------- app.env


def test_env_goes_into_the_stacks_env_file_quoted_as_systemd_reads_it(sinatra_src: Path) -> None:
    s = resolve_stack(stack(src=str(sinatra_src), env={"GREETING": 'say "hi" \\o/', "WORKERS": 4}))
    assert s["server"]["environment"]["GREETING"] == 'say "hi" \\o/'
    assert s["server"]["environment"]["WORKERS"] == "4"
    assert 'GREETING="say \\"hi\\" \\\\o/"' in s["server"]["env_file_lines"]


def test_env_file_lines_escape_only_quotes_and_backslashes() -> None:
    assert env_file_line("A", "$HOME `x` 'y'") == "A=\"$HOME `x` 'y'\""
    assert env_file_line("B", 'a\\"b') == 'B="a\\\\\\"b"'


@pytest.mark.parametrize(
    ("env", "expected"),
    [
        (
            {"lower": "x"},
            "app.env: 'lower': a name must be uppercase letters, digits and '_', not a digit first",
        ),
        ({"1X": "x"}, "app.env: '1X': a name must be"),
        ({"BENCH_LISTEN_1": "x"}, "app.env.BENCH_LISTEN_1: names starting with BENCH_ or BUNDLE_ are set by"),
        ({"BUNDLE_PATH": "x"}, "app.env.BUNDLE_PATH: names starting with BENCH_ or BUNDLE_"),
        ({"A": "two\nlines"}, "app.env.A: must be one line of at most 4096 characters"),
        ({"A": "nul\0"}, "app.env.A: must be one line"),
        ({"A": True}, "app.env.A: must be a string or a number (quote true/false)"),
        ({"A": ["x"]}, "app.env.A: must be a string or a number"),
    ],
)
def test_bad_env_names_and_values_are_named(env: dict[str, Any], expected: str) -> None:
    (problem,) = problems(stack(env=env))
    assert problem.startswith(f"stack 'shop-puma': {expected}")


def test_env_for_an_app_its_front_serves_is_refused() -> None:
    s = {"name": "st", "port": 8104, "app": {"kind": "static", "env": {"A": "b"}}, "front": {"kind": "nginx"}}
    assert problems(s) == [
        "stack 'st': app.env: app static is served by its front: no app server reads an env file"
    ]


# ---------------------------------------------------------------- shared apps, needs and the plan


def test_stacks_naming_one_app_share_its_deployment(sinatra_src: Path) -> None:
    stacks = resolve_stacks(
        [
            stack("shop-puma", 8101, src=str(sinatra_src), name="shop"),
            {**stack("shop-thin", 8102, src=str(sinatra_src), name="shop"), "server": {"kind": "thin"}},
        ]
    )
    (app,) = user_apps(stacks)
    assert app["stacks"] == ["shop-puma", "shop-thin"]
    assert {s.app.dir for s in stacks} == {f"{USER}/shop"}
    assert app["release"] == f"{USER}/.releases/shop-{scan(sinatra_src).sha256[:16]}"
    assert app["record"] == f"{USER}/.records/shop.json"
    assert app["bundle"] == {
        "path": f"{USER}/.bundle/shop",
        "gemfile": f"{USER}/shop/Gemfile",
        "app_config": f"{USER}/.bundle/shop",
    }
    assert stacks[0].server is not None
    assert stacks[0].server.environment["BUNDLE_GEMFILE"] == f"{USER}/shop/Gemfile"


def test_stacks_naming_one_app_with_different_sources_are_refused(sinatra_src: Path, tmp_path: Path) -> None:
    other = make_app(tmp_path / "other", {"config.ru": "run Other\n"})
    with pytest.raises(StackError) as err:
        resolve_stacks(
            [
                stack("shop-puma", 8101, src=str(sinatra_src), name="shop"),
                stack("other-puma", 8102, src=str(other), name="shop"),
            ]
        )
    assert err.value.problems[0].startswith(
        "stack 'other-puma': app.name: 'shop' is also the app of stack 'shop-puma', with another kind, source"
    )


def test_a_users_ruby_app_needs_bundler_and_not_the_bundled_app(sinatra_src: Path) -> None:
    n = needs(resolve_stacks([stack(src=str(sinatra_src))]))
    assert "bundler" in n.ruby_gems
    assert n.app_kinds == ()
    bundled = needs(resolve_stacks([stack()]))
    assert "bundler" not in bundled.ruby_gems and bundled.app_kinds == ("sinatra",)


def test_the_plan_carries_each_user_app_and_keeps_env_values_out_of_the_experiment(
    tmp_path: Path, sinatra_src: Path
) -> None:
    path = write_experiment(tmp_path, [stack(src="apps/shop", env={"SECRET": "hunter2"})])
    plan = compile_plan(path).to_dict()
    (app,) = plan["user_apps"]
    assert app["source"]["path"] == str(sinatra_src)
    assert app["key"] == f"src:{scan(sinatra_src).sha256}"
    assert app["dependency_files"] == ["Gemfile"]
    assert "hunter2" not in str(plan["experiment"])
    assert plan["experiment"]["stacks"][0]["app"]["env"]["SECRET"].startswith("hmac-sha256:")
    assert plan["app_env_lines"] == {"shop-puma": ['SECRET="hunter2"']}


def test_the_plan_refuses_a_bad_src_before_anything_runs(tmp_path: Path) -> None:
    with pytest.raises(ExperimentError, match=r"stack 'shop-puma': app.src: .*/apps/gone does not exist"):
        compile_plan(write_experiment(tmp_path, [stack(src="apps/gone")]))


def test_a_server_gem_the_apps_gemfile_lacks_is_refused_naming_the_file_and_the_line_to_add(
    tmp_path: Path,
) -> None:
    src = make_app(
        tmp_path / "apps" / "own",
        {"config.ru": "run Own\n", "Gemfile": 'gem "sinatra"\n  gem "thin"\n# gem "puma"\n'},
    )
    assert resolve_stacks([{**stack(src=str(src), name="own"), "server": {"kind": "thin"}}])
    with pytest.raises(StackError) as err:
        resolve_stacks([stack(src=str(src), name="own")])
    (problem,) = err.value.problems
    assert f"{src}/Gemfile does not have puma" in problem
    assert f'add to {src}/Gemfile the line: gem "puma"' in problem


def test_with_a_gemfile_lock_the_server_gem_must_be_locked(tmp_path: Path) -> None:
    lock = "GEM\n  remote: https://rubygems.org/\n  specs:\n    rack (2.2.4)\n    thin (1.8.1)\n      rack\n"
    src = make_app(
        tmp_path / "apps" / "own",
        {"config.ru": "run Own\n", "Gemfile": 'gem "thin"\ngem "puma"\n', "Gemfile.lock": lock},
    )
    with pytest.raises(StackError) as err:
        resolve_stacks([stack(src=str(src), name="own")])
    (problem,) = err.value.problems
    assert f"{src}/Gemfile.lock does not have puma" in problem and "bundle lock" in problem
    assert resolve_stacks([{**stack(src=str(src), name="own"), "server": {"kind": "thin"}}])


def test_an_app_without_a_gemfile_runs_its_server_from_the_runtimes_gems(tmp_path: Path) -> None:
    src = make_app(tmp_path / "apps" / "own", {"config.ru": "run Own\n"})
    assert resolve_stacks([stack(src=str(src), name="own")])
