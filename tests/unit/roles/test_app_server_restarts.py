"""The app_server role's restart handler (roles/app_server/handlers/main.yml), evaluated by Ansible's own
templating over the results the role's tasks register: a change restarts exactly the instances it
affects, each once, and not one the start task has just started with the new files. Molecule's idempotence
step proves the other half: a re-run with nothing changed notifies nothing."""

import subprocess
from pathlib import Path
from typing import Any

from conftest import ROLES, read_yaml, resolved_stack, role_vars, templated, trusted

from benchstack.plan.rolecontract import project, stack_fields

ROLE = ROLES / "app_server"
(HANDLER,) = read_yaml(ROLE / "handlers" / "main.yml")


def stack(name: str, port: int, app: str, kind: str, instances: int = 2) -> dict[str, Any]:
    """A stack as the role receives it from the plan."""
    return project(resolved_stack(name, port, app, kind, instances=instances), stack_fields("app_server"))


THIN = stack("sinatra-thin", 8001, "sinatra", "thin")
PUMA = stack("sinatra-puma", 8002, "sinatra", "puma")
STARMAN = stack("psgi-starman", 8003, "psgi", "starman", instances=1)
STARMAN_2 = stack("psgi-starman-2", 8004, "psgi", "starman", instances=1)
STACKS = [THIN, PUMA, STARMAN, STARMAN_2]


def restarted(
    files: tuple[str, ...] = (),
    configs: tuple[str, ...] = (),
    apps: tuple[str, ...] = (),
    helpers: tuple[str, ...] = (),
    started: tuple[str, ...] = (),
    enabled_again: tuple[str, ...] = (),
    exe_gone: tuple[str, ...] = (),
) -> list[str]:
    """The units the handler restarts when the stacks named in ``files`` had their unit or env file
    changed, the instances in ``configs`` their config file, the apps of the stacks in ``apps`` changed,
    and the start task started the ``started`` units (inactive before) and enabled ``enabled_again``
    (active before); the host state read found ``exe_gone`` running an executable no longer on disk."""
    variables = role_vars("app_server")
    variables.update(trusted(HANDLER["vars"]))
    pairs = [(s, ep) for s in STACKS for ep in s["endpoints"]]
    sep, exe_sep = variables["__app_server_separator"], variables["__app_server_exe_separator"]
    variables.update(
        __app_server_host_state={
            "stdout": f"{sep}\nbench-sinatra-thin@1.service loaded active running x\n{exe_sep}\n"
            + "".join(f"{unit}\n" for unit in exe_gone)
        },
        app_server_stacks=STACKS,
        app_server_changed_apps=[s["app"]["dir"] for s in STACKS if s["name"] in apps],
        __app_server_files={"results": [{"stack": s, "changed": s["name"] in files} for s in STACKS]},
        __app_server_configs={
            "results": [
                {"item": [s, ep], "changed": ep["unit"] in configs}
                for s, ep in pairs
                if s["server"]["unit_config_file"]
            ]
        },
        # The copy task's results: one per helper file of the stacks' servers (each once), as it loops.
        __app_server_helpers={
            "results": [
                {"item": {"src": src, "dest": f"/x/{src}"}, "changed": src in helpers}
                for src in dict.fromkeys(h["src"] for s in STACKS for h in s["server"]["helper_files"])
            ]
        },
        __app_server_started={
            "results": [
                {
                    "item": [s, ep],
                    "changed": ep["unit"] in started + enabled_again,
                    "status": {"ActiveState": "active" if ep["unit"] in enabled_again else "inactive"},
                }
                for s, ep in pairs
            ]
        },
    )
    return templated(HANDLER["loop"], variables)


def test_the_handler_listens_on_the_topic_every_changing_task_notifies() -> None:
    tasks = read_yaml(ROLE / "tasks" / "main.yml")
    notifying = {t["name"] for t in tasks if t.get("notify") == "bench app_server restart"}
    registered = {
        t["register"] for t in tasks if t.get("notify") == "bench app_server restart" and "register" in t
    }
    assert HANDLER["listen"] == "bench app_server restart"
    assert registered == {
        "__app_server_files",
        "__app_server_configs",
        "__app_server_helpers",
    }
    assert "Name the stacks whose app changed" in notifying
    assert "Name the instances whose executable was installed again since they started" in notifying
    assert tasks[-1]["ansible.builtin.meta"] == "flush_handlers"


def test_nothing_changed_restarts_nothing() -> None:
    assert restarted() == []


def test_a_changed_unit_or_env_file_restarts_every_instance_of_its_stack_only() -> None:
    assert restarted(files=("sinatra-thin",)) == [
        "bench-sinatra-thin@1.service",
        "bench-sinatra-thin@2.service",
    ]


def test_a_changed_config_file_restarts_its_own_instance_only() -> None:
    assert restarted(configs=("bench-sinatra-puma@2.service",)) == ["bench-sinatra-puma@2.service"]


def test_a_changed_app_restarts_the_instances_serving_it() -> None:
    # Both starman stacks serve the bundled PSGI app.
    assert restarted(apps=("psgi-starman",)) == [
        "bench-psgi-starman@1.service",
        "bench-psgi-starman-2@1.service",
    ]


def test_a_changed_helper_restarts_every_stack_whose_server_loads_it() -> None:
    assert restarted(helpers=("perl/BenchStack/StarterUnix.pm",)) == [
        "bench-psgi-starman@1.service",
        "bench-psgi-starman-2@1.service",
    ]
    assert restarted(helpers=("ruby/bench_stack/starlet_peer_gone.rb",)) == []


def test_an_instance_running_an_executable_installed_again_restarts_alone() -> None:
    # A Ruby unpacked again, or thin's package installed again, after drift: its files did not change.
    assert restarted(exe_gone=("bench-sinatra-thin@2.service", "bench-psgi-starman@1.service")) == [
        "bench-sinatra-thin@2.service",
        "bench-psgi-starman@1.service",
    ]
    assert restarted(files=("sinatra-thin",), exe_gone=("bench-sinatra-thin@2.service",)) == [
        "bench-sinatra-thin@1.service",
        "bench-sinatra-thin@2.service",
    ]


def test_an_instance_changed_twice_restarts_once() -> None:
    assert restarted(files=("sinatra-puma",), configs=("bench-sinatra-puma@1.service",)) == [
        "bench-sinatra-puma@1.service",
        "bench-sinatra-puma@2.service",
    ]


def test_an_instance_just_started_already_runs_the_new_files() -> None:
    assert restarted(files=("sinatra-thin",), started=("bench-sinatra-thin@2.service",)) == [
        "bench-sinatra-thin@1.service"
    ]


def test_an_instance_only_enabled_again_still_runs_the_old_files() -> None:
    assert restarted(files=("sinatra-thin",), enabled_again=("bench-sinatra-thin@2.service",)) == [
        "bench-sinatra-thin@1.service",
        "bench-sinatra-thin@2.service",
    ]


def test_the_host_read_names_the_running_instances_whose_executable_is_gone(tmp_path: Path) -> None:
    """The role's one host read, run by sh with systemctl and readlink standing in for the host's: its last
    section, as vars/main.yml parses it, names exactly the instance whose process runs a deleted file."""
    tasks = read_yaml(ROLE / "tasks" / "main.yml")
    (task,) = [t for t in tasks if t.get("register") == "__app_server_host_state"]
    variables = {**role_vars("app_server"), **trusted(task["vars"]), "app_server_stacks": STACKS}
    argv = templated(task["ansible.builtin.command"]["argv"], variables)
    fake = tmp_path / "bin"
    fake.mkdir()
    (fake / "systemctl").write_text(
        # As systemd's does: one value per unit asked, in that order, apart by blank lines.
        '#!/bin/sh\n[ "$1" = list-units ] && exit 0\n'
        '[ "$1 $2 $3 $4" = "show -p MainPID --value" ] || exit 2; shift 4\n'
        'for u; do case "$u" in *sinatra-thin@2*) echo 42;; *psgi-starman@1*) echo 43;; *) echo 0;; esac;'
        " echo; done\n"
    )
    (fake / "readlink").write_text(
        '#!/bin/sh\ncase "$1" in /proc/42/exe) echo "/opt/rbenv/versions/3.3.6/bin/ruby (deleted)";;'
        " /proc/43/exe) echo /usr/bin/perl;; *) exit 1;; esac\n"
    )
    for tool in fake.iterdir():
        tool.chmod(0o755)
    done = subprocess.run(
        argv, capture_output=True, text=True, env={"PATH": f"{fake}:/usr/bin:/bin"}, check=True
    )
    stale = templated(
        "{{ __app_server_stale_exe }}", {**variables, "__app_server_host_state": {"stdout": done.stdout}}
    )
    assert stale == ["bench-sinatra-thin@2.service"]
