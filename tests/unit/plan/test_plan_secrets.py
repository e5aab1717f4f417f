"""app.env values, which may be secrets (issue 29, item 6): the plan keeps them out of the experiment that
run.json records, as keyed fingerprints a dictionary cannot check, and the plan task never prints them,
even with -vvv."""

import hashlib
import json
import os
import stat
import subprocess
from pathlib import Path

import pytest
from conftest import bench_stack, read_yaml
from test_app_server_units import render
from test_plugins import run_plan

from benchstack.plan.experiment import ExperimentError
from benchstack.plan.resolved import ENV_KEY_BYTES, compile_plan, env_key, env_key_path

ROOT = Path(__file__).resolve().parents[3]
SECRET = "hunter2-s3cr3t"


def experiment(tmp_path: Path, value: str = SECRET, name: str = "secret-env") -> Path:
    source = tmp_path / f"{name}.yml"
    source.write_text(
        f"name: {name}\n"
        "stacks:\n"
        "  - {name: sinatra-thin, port: 8001, server: {kind: thin}, front: {kind: nginx},\n"
        f"     app: {{kind: sinatra, env: {{API_TOKEN: {value}}}}}}}\n"
        "load: {plans: [{tool: wrk, concurrency: [1], duration_s: 1}]}\n",
        encoding="utf-8",
    )
    return source


def fingerprint(plan: dict) -> str:
    return plan["experiment"]["stacks"][0]["app"]["env"]["API_TOKEN"]


def test_a_value_is_kept_as_a_keyed_fingerprint_that_a_dictionary_cannot_check(tmp_path: Path) -> None:
    plan = compile_plan(experiment(tmp_path)).to_dict()
    shown = fingerprint(plan)
    assert shown.startswith("hmac-sha256:") and len(shown) == len("hmac-sha256:") + 16
    assert SECRET not in str(plan["experiment"])
    # An unsalted sha256 (what run.json kept before) is found by hashing candidates; this is not.
    assert hashlib.sha256(SECRET.encode()).hexdigest()[:16] not in shown
    # One place of the plan holds the values: the env file lines the app_server role alone reads. The
    # stacks, which every role loops over (and -v prints each item), hold the fingerprints.
    assert plan["app_env_lines"] == {"sinatra-thin": [f'API_TOKEN="{SECRET}"']}
    assert SECRET not in json.dumps({k: v for k, v in plan.items() if k != "app_env_lines"})
    assert plan["stacks"][0]["app"]["env"] == {"API_TOKEN": shown}
    assert "API_TOKEN" not in plan["stacks"][0]["server"]["environment"]


def test_the_env_file_gets_the_values_from_the_lines_apart(tmp_path: Path) -> None:
    plan = compile_plan(experiment(tmp_path)).to_dict()
    [stack] = plan["stacks"]
    text = render("stack.env.j2", stack, app_server_env_lines=plan["app_env_lines"])
    assert text.splitlines()[-2:] == [
        'BENCH_LISTEN_1="--socket /run/bench-stack/sinatra-thin-1/server.sock"',
        f'API_TOKEN="{SECRET}"',
    ]


def test_the_same_key_keeps_the_experiment_hash_and_another_value_changes_it(tmp_path: Path) -> None:
    first, again = compile_plan(experiment(tmp_path)).to_dict(), compile_plan(experiment(tmp_path)).to_dict()
    assert fingerprint(first) == fingerprint(again)
    assert first["experiment"]["sha256"] == again["experiment"]["sha256"]  # a run can be resumed
    other = compile_plan(experiment(tmp_path, "hunter3")).to_dict()
    assert fingerprint(other) != fingerprint(first)
    assert other["experiment"]["sha256"] != first["experiment"]["sha256"]


def test_another_controllers_key_gives_another_fingerprint(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    mine = fingerprint(compile_plan(experiment(tmp_path)).to_dict())
    monkeypatch.setenv("BENCH_STACK_KEY_FILE", str(tmp_path / "other" / "key"))
    assert fingerprint(compile_plan(experiment(tmp_path)).to_dict()) != mine


def test_the_key_is_made_once_readable_by_its_owner_only(tmp_path: Path) -> None:
    path = tmp_path / "cfg" / "bench-stack" / "key"
    key = env_key(path)
    assert len(key) == ENV_KEY_BYTES and env_key(path) == key
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert [p.name for p in path.parent.iterdir()] == ["key"]  # no temporary file left
    path.write_bytes(b"short")
    with pytest.raises(ExperimentError, match=r"5 bytes, not 32: remove it, a new one is made"):
        env_key(path)


def plan_play_vvv(folder: Path) -> dict[str, tuple[list[str], dict[str, str], Path]]:
    """The plan play as a user runs it, with -vvv (started with the session: conftest's early_commands)."""
    env = {
        **os.environ,
        "ANSIBLE_CONFIG": str(ROOT / "ansible.cfg"),
        "ANSIBLE_LOCAL_TEMP": str(folder / "tmp"),
        "ANSIBLE_NOCOLOR": "1",
        "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])),
    }
    argv = [
        "ansible-playbook",
        "-vvv",
        "-i",
        "localhost,",
        "-c",
        "local",
        str(ROOT / "playbooks" / "plan.yml"),
        "-e",
        f"experiment={experiment(folder)}",
        "-e",
        f"bench_results_dir={folder / 'results'}",
    ]
    git_argv = [*argv[:-3], f"experiment={git_experiment(folder)}", *argv[-2:]]
    return {"vvv": (argv, env, ROOT), "vvv-git": (git_argv, env, ROOT)}


@pytest.mark.ansible
@pytest.mark.early.with_args(plan_play_vvv)
def test_ansible_playbook_vvv_of_the_plan_never_prints_a_value(
    early_results: dict[str, subprocess.CompletedProcess[str]],
) -> None:
    """The plan task's result (the fact bench_plan holds the stacks' env files) printed every value three
    times."""
    for name, secret in (("vvv", SECRET), ("vvv-git", TOKEN)):
        out = early_results[name]
        text = out.stdout + out.stderr
        assert out.returncode == 0, text[-2000:]
        assert "Compile the plan" in text and "ok: [localhost]" in text
        assert secret not in text, name


def test_the_printed_plan_names_the_values_without_them(tmp_path: Path) -> None:
    out = bench_stack("experiment", "--plan", experiment(tmp_path))
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["app_env_lines"] == {"sinatra-thin": ["API_TOKEN=(not shown)"]}
    assert SECRET not in out.stdout + out.stderr


# ---------------------------------------------------------------- issue 44, item 8: a check changes nothing


def bare_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A user's home as a new user has it (no key yet), with the default key location."""
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("XDG_CONFIG_HOME", raising=False)
    monkeypatch.delenv("BENCH_STACK_KEY_FILE", raising=False)
    return home


def files_under(folder: Path) -> list[str]:
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*"))


def test_checking_an_experiment_with_app_env_writes_nothing_into_the_home(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`bench-stack experiment` made ~/.config/bench-stack/env-fingerprint.key as a side effect of a check."""
    home = bare_home(tmp_path, monkeypatch)
    source = experiment(tmp_path)
    for args in (["experiment", source], ["experiment", "--plan", source]):
        out = bench_stack(*args)
        assert out.returncode == 0, out.stderr
        assert SECRET not in out.stdout + out.stderr
    assert files_under(home) == []


def test_a_check_reads_the_key_a_run_made(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Once a run has made the key, a check shows the fingerprints (and content hash) that run records."""
    home = bare_home(tmp_path, monkeypatch)
    source = experiment(tmp_path)
    run = compile_plan(source).to_dict()  # a run: the plan play makes the key
    assert files_under(home) == [".config", ".config/bench-stack", ".config/bench-stack/env-fingerprint.key"]
    out = bench_stack("experiment", "--plan", source)
    assert out.returncode == 0, out.stderr
    checked = json.loads(out.stdout)
    assert fingerprint(checked) == fingerprint(run)
    assert checked["experiment"]["sha256"] == run["experiment"]["sha256"]


def test_without_a_key_a_check_still_shows_fingerprints_not_values(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    bare_home(tmp_path, monkeypatch)
    plan = compile_plan(experiment(tmp_path), make_key=False).to_dict()
    assert fingerprint(plan).startswith("hmac-sha256:")
    assert SECRET not in json.dumps({k: v for k, v in plan.items() if k != "app_env_lines"})
    assert not env_key_path().exists()


def test_the_plan_play_makes_the_key_for_a_run_and_not_for_a_check_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = bare_home(tmp_path, monkeypatch)
    source = str(experiment(tmp_path))
    run_plan(source, task_vars={"ansible_check_mode": True}, results_dir=str(tmp_path / "results"))
    assert files_under(home) == []
    run_plan(source, results_dir=str(tmp_path / "results"))
    assert (home / ".config" / "bench-stack" / "env-fingerprint.key").is_file()


# ---------------------------------------------------------------- issue 44, finding 6: secrets outside env

TOKEN = "ghp-t0ken-s3cr3t"
REPO = f"https://bench:{TOKEN}@git.example.invalid/shop.git"


def git_experiment(tmp_path: Path, repo: str = REPO) -> Path:
    source = tmp_path / "secret-git.yml"
    source.write_text(
        "name: secret-git\n"
        "stacks:\n"
        "  - {name: shop, port: 8101, server: {kind: gunicorn},\n"
        f"     app: {{kind: wsgi, name: shop, git: {{repo: '{repo}', version: v1}}}}}}\n"
        "load: {plans: [{tool: wrk, concurrency: [1], duration_s: 1}]}\n",
        encoding="utf-8",
    )
    return source


def test_a_token_in_a_repository_url_is_masked_everywhere_but_the_clone(tmp_path: Path) -> None:
    """app.git.repo with credentials was printed three times at -v and kept verbatim in run.json: the
    experiment as run (run.json's), the stacks and the user apps (which -v prints) hold it masked; one field,
    git_repos, holds it for the clone task (webapp_user_git_repos, no_log)."""
    plan = compile_plan(git_experiment(tmp_path))
    fact = plan.to_dict()
    masked = "https://***@git.example.invalid/shop.git"
    assert plan.as_run["stacks"][0]["app"]["git"]["repo"] == masked
    assert fact["stacks"][0]["app"]["git"]["repo"] == masked
    assert fact["user_apps"][0]["source"]["repo"] == masked
    assert fact["git_repos"] == {"shop": REPO}
    assert TOKEN not in json.dumps({k: v for k, v in fact.items() if k != "git_repos"})
    # A new token for the same repository is the same experiment and the same deployment.
    other = compile_plan(git_experiment(tmp_path, REPO.replace(TOKEN, "another"))).to_dict()
    assert other["experiment"]["sha256"] == fact["experiment"]["sha256"]
    assert other["user_apps"][0]["key"] == fact["user_apps"][0]["key"]
    # Without credentials, nothing is set apart.
    assert compile_plan(git_experiment(tmp_path, "https://git.example.invalid/shop.git")).git_repos == {}


def test_the_printed_plan_and_a_refusal_never_show_a_token(tmp_path: Path) -> None:
    out = bench_stack("experiment", "--plan", git_experiment(tmp_path))
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["git_repos"] == {"shop": "(not shown)"}
    assert TOKEN not in out.stdout + out.stderr
    refused = bench_stack("experiment", git_experiment(tmp_path, REPO + " x"))
    assert refused.returncode == 1 and "https://***@git.example.invalid" in refused.stderr
    assert TOKEN not in refused.stderr


def test_the_clone_task_alone_reads_the_url_as_written() -> None:
    tasks = read_yaml(ROOT / "roles" / "webapp" / "tasks" / "user-deploy.yml")
    (clone,) = [t for t in tasks if "benchstack.bench.bench_app_git" in t]
    assert (
        clone["benchstack.bench.bench_app_git"]["repo"]
        == "{{ webapp_user_git_repos[item.name] | default(item.source.repo) }}"
    )
    assert "source.repo" in clone["loop_control"]["label"]  # masked in the item
    roles = read_yaml(ROOT / "playbooks" / "vars" / "roles.yml")
    assert roles["webapp_user_git_repos"] == "{{ bench_plan.git_repos }}"
    specs = read_yaml(ROOT / "roles" / "webapp" / "meta" / "argument_specs.yml")
    assert specs["argument_specs"]["main"]["options"]["webapp_user_git_repos"]["no_log"] is True
