"""The app_server role's unit and listen files, rendered by Ansible's own templating from the role's defaults
and vars, for stacks resolved by benchstack.plan.stacks: what systemd would run, without a host.

Kinds whose packages cannot be fetched here (starlet) are covered by this and by the failure run in the
README; the others also run in Molecule."""

import json
import shlex
from pathlib import Path
from typing import Any

import pytest
from app_server_cases import CASES, role_variables
from conftest import ROLES, render_template, resolved_stack, role_files, templated

from benchstack.kinds.apps import REGISTRY as APPS
from benchstack.kinds.servers import HOST_VALUES, REGISTRY
from benchstack.plan.rolecontract import project, stack_fields
from benchstack.plan.stacks import resolve_stack

ROLE = ROLES / "app_server"
HANDLER = "/var/lib/gems/3.1.0/gems/prefork_engine-0.0.7/example/starlet.rb"


def render(template: str, stack: dict[str, Any], **extra: Any) -> str:
    # As the plan hands it over: only the fields the role's argument_specs declare.
    declared = project(stack, stack_fields("app_server"))
    handlers = {stack["name"]: HANDLER}
    return render_template(
        "app_server", template, stack=declared, __app_server_starlet_handlers=handlers, **extra
    )


def unit_lines(stack: dict[str, Any], prefix: str, **extra: Any) -> list[str]:
    return [
        line for line in render("server@.service.j2", stack, **extra).splitlines() if line.startswith(prefix)
    ]


def listen(stack: dict[str, Any], instance: int = 1) -> str:
    """Instance ``instance``'s line of the stack's env file (its unit reads $BENCH_LISTEN_<instance>)."""
    text = render("stack.env.j2", stack)
    return next(line for line in text.splitlines() if line.startswith(f"BENCH_LISTEN_{instance}="))


GOLDEN = json.loads(
    (Path(__file__).parents[2] / "data" / "app_server" / "files.json").read_text(encoding="utf-8")
)


def files_of(case: str) -> dict[str, str]:
    """Every file the role writes for the case's stack: its unit, its env file and each instance's config,
    by name (as tests/data/app_server/files.json holds them)."""
    spec, extra = CASES[case]
    stack = project(resolve_stack(spec), stack_fields("app_server"))
    variables = role_variables(stack, extra)
    files = {
        "unit": render_template("app_server", "server@.service.j2", stack=stack, **variables),
        "env": render_template("app_server", "stack.env.j2", stack=stack, **variables),
    }
    for ep in stack["endpoints"]:
        if ep["config_file"]:
            files[ep["config_file"]] = render_template(
                "app_server",
                stack["server"]["config_template"],
                stack=stack,
                endpoint=ep,
                app_server_stacks=[stack],
                **variables,
            )
    return files


def test_the_golden_cases_are_of_kinds_the_registry_holds() -> None:
    # The golden files are those of the kinds that ran before the move; every kind, those added since too, is
    # rendered by the test below.
    assert {spec["server"]["kind"] for spec, _ in CASES.values()} <= set(REGISTRY)
    assert sorted(GOLDEN) == sorted(CASES)


def app_of(name: str) -> str:
    return next(app for app, kind in APPS.items() if kind.interface == REGISTRY[name].interface)


@pytest.mark.parametrize("name", list(REGISTRY))
@pytest.mark.parametrize("front", ["nginx", "none"])
def test_every_kinds_unit_runs_its_command_where_the_plan_says_it_listens(name: str, front: str) -> None:
    kind = REGISTRY[name]
    if kind.protocol != "http" and front == "none":
        return
    for bind in kind.binds if front == "nginx" else ("tcp",):
        stack = resolved_stack("k", 8100, app_of(name), name, front, bind=bind)
        (start,) = unit_lines(stack, "ExecStart=")
        # Every placeholder filled with this host's value, the executable by its absolute path.
        assert "{" not in start and start.startswith("ExecStart=/"), start
        ep = stack["endpoints"][0]
        where = {"socket": ep["socket"], "host": ep["host"], "port": ep["port"]}
        if kind.listen:
            assert start.endswith("$BENCH_LISTEN_%i") or " $BENCH_LISTEN_%i " in start
            assert listen(stack) == f'BENCH_LISTEN_1="{kind.listen[bind].format(**where)}"'
        else:
            declared = project(stack, stack_fields("app_server"))
            config = render_template(
                "app_server",
                kind.config_template or "",
                stack=declared,
                endpoint=declared["endpoints"][0],
                app_server_stacks=[declared],
                **role_variables(declared, {}),
            )
            assert kind.config_listen[bind].format(**where) in config


@pytest.mark.parametrize("case", sorted(CASES))
def test_every_file_is_byte_identical_to_the_roles_before_start_commands_moved_into_python(case: str) -> None:
    assert files_of(case) == GOLDEN[case]


def test_the_role_has_a_value_for_every_placeholder_and_no_other() -> None:
    values = templated("{{ __app_server_host_values | list }}", role_files("app_server/vars/main.yml"))
    assert sorted(values) == sorted(HOST_VALUES)


def test_a_placeholder_the_host_has_no_value_for_fails_the_unit_naming_it() -> None:
    stack = resolved_stack("t", 8004, "sinatra", "thin")
    stack["server"]["exec"] = "{ruby_bin}/thin {nowhere_bin}/x"
    with pytest.raises(Exception, match="no host value for nowhere_bin"):
        unit_lines(stack, "ExecStart=")


def passenger(front: str = "nginx", **server: Any) -> dict[str, Any]:
    return resolved_stack("p", 8300, "sinatra", "passenger", front, **server)


def test_passenger_runs_its_builtin_engine_in_the_foreground_on_the_stacks_ruby() -> None:
    stack = passenger(workers=3)
    stack["runtime"]["version"] = "3.1.2"
    rbenv = {"ruby_bin_dirs": {"3.1.2": "/opt/rbenv/versions/3.1.2/bin"}}
    (line,) = unit_lines(stack, "ExecStart=", **rbenv)
    argv = line.removeprefix("ExecStart=").split()
    assert argv[:4] == ["/opt/rbenv/versions/3.1.2/bin/passenger", "start", "--engine", "builtin"]
    assert argv[argv.index("--ruby") + 1] == "/opt/rbenv/versions/3.1.2/bin/ruby"
    assert argv[argv.index("--min-instances") + 1] == argv[argv.index("--max-pool-size") + 1] == "3"
    # Where the unit's RuntimeDirectory is: the bench user may write there, not in the app folder.
    assert argv[argv.index("--pid-file") + 1] == "%t/bench-stack/p-%i/passenger.pid"
    assert argv[argv.index("--log-file") + 1] == "%t/bench-stack/p-%i/passenger.log"
    assert unit_lines(stack, "RuntimeDirectory=", **rbenv) == ["RuntimeDirectory=bench-stack/p-%i"]
    assert "--daemonize" not in argv and "-d" not in argv
    assert {"--disable-security-update-check", "--disable-anonymous-telemetry"} <= set(argv)
    assert argv[-1] == "$BENCH_LISTEN_%i"
    assert unit_lines(stack, "ExecReload=", **rbenv) == []


def test_passenger_is_not_run_through_bundle_exec(tmp_path: Path) -> None:
    stack = users_sinatra_app(tmp_path, "passenger")
    (start,) = unit_lines(stack, "ExecStart=", app_server_bundled_apps=[stack["app"]["dir"]])
    assert start.startswith("ExecStart=/usr/bin/passenger start ")


@pytest.mark.parametrize(
    ("front", "bind", "args"),
    [
        ("nginx", "unix", "--socket /run/bench-stack/p-1/server.sock"),
        ("nginx", "tcp", "--address 127.0.0.1 --port 23001"),
        ("none", "tcp", "--address 0.0.0.0 --port 8300"),
    ],
)
def test_passenger_listens_where_the_plan_says(front: str, bind: str, args: str) -> None:
    assert listen(passenger(front, bind=bind)) == f'BENCH_LISTEN_1="{args}"'


def starlet(front: str = "nginx", **server: Any) -> dict[str, Any]:
    return resolved_stack("sinatra-starlet", 8035, "sinatra", "starlet", front, **server)


def test_starlet_runs_rackup_with_the_gems_handler_under_start_server() -> None:
    assert unit_lines(starlet(workers=8, max_request_per_child=500), "ExecStart=") == [
        "ExecStart=/usr/bin/start_server $BENCH_LISTEN_%i --kill-old-delay=5 -- /usr/bin/rackup"
        f" --require {HANDLER} --require /opt/bench-stack/ruby/bench_stack/starlet_peer_gone.rb"
        " --env production --server Starlet --option MaxWorkers=8 --option MaxRequestPerChild=500 config.ru"
    ]


def test_starlet_passes_min_request_per_child_only_when_set() -> None:
    (line,) = unit_lines(starlet(max_request_per_child=1000, min_request_per_child=800), "ExecStart=")
    assert line.endswith("--option MaxRequestPerChild=1000 --option MinRequestPerChild=800 config.ru")


def test_starlet_hot_restarts_by_sighup_to_start_server() -> None:
    assert unit_lines(starlet(), "ExecReload=") == ["ExecReload=/bin/kill -HUP $MAINPID"]


def test_a_server_without_a_reload_signal_gets_no_exec_reload() -> None:
    thin = resolved_stack("t", 8004, "sinatra", "thin")
    assert unit_lines(thin, "ExecReload=") == []


def test_starlet_uses_the_rbenv_ruby_its_stack_names() -> None:
    stack = starlet()
    stack["runtime"]["version"] = "3.1.2"
    (line,) = unit_lines(stack, "ExecStart=", ruby_bin_dirs={"3.1.2": "/opt/rbenv/versions/3.1.2/bin"})
    assert " -- /opt/rbenv/versions/3.1.2/bin/rackup " in line


def test_start_server_holds_a_unix_socket_per_instance() -> None:
    stack = starlet(instances=2)
    assert listen(stack, 2) == 'BENCH_LISTEN_2="--path /run/bench-stack/sinatra-starlet-2/server.sock"'


def test_start_server_holds_a_tcp_port_behind_a_front_and_the_stack_port_without_one() -> None:
    assert listen(starlet(bind="tcp")) == 'BENCH_LISTEN_1="--port 127.0.0.1:20351"'
    assert listen(starlet(front="none")) == 'BENCH_LISTEN_1="--port 0.0.0.0:8035"'


def test_one_env_file_per_stack_holds_every_instance_and_nothing_else() -> None:
    text = render("stack.env.j2", resolved_stack("t", 8004, "sinatra", "thin", instances=2, bind="tcp"))
    assert [line for line in text.splitlines() if not line.startswith("#")] == [
        'BENCH_LISTEN_1="--address 127.0.0.1 --port 20041"',
        'BENCH_LISTEN_2="--address 127.0.0.1 --port 20042"',
    ]


def test_a_unit_reads_its_instance_listen_arguments_and_its_runtime_folder_from_the_plan() -> None:
    stack = resolved_stack("t", 8004, "sinatra", "thin", instances=2)
    (start,) = unit_lines(stack, "ExecStart=")
    assert start.endswith(" $BENCH_LISTEN_%i")
    assert unit_lines(stack, "EnvironmentFile=") == ["EnvironmentFile=/etc/bench-stack/units/t.env"]
    assert unit_lines(stack, "RuntimeDirectory=") == ["RuntimeDirectory=bench-stack/t-%i"]


def test_a_config_file_server_names_its_instance_config_and_no_listen_variable() -> None:
    stack = resolved_stack("u", 8006, "sinatra", "unicorn", instances=2, bind="tcp")
    (start,) = unit_lines(stack, "ExecStart=")
    assert "--config-file /etc/bench-stack/units/u-%i.unicorn.rb config.ru" in start
    assert "BENCH_LISTEN" not in start
    text = render("unicorn.rb.j2", stack, endpoint=stack["endpoints"][1])
    assert 'listen "127.0.0.1:20062", backlog: 1024' in text.splitlines()


def role_value(expression: str, *files: str, **extra: Any) -> Any:
    """Evaluate an expression against role files (defaults, vars) as a play would."""
    return templated(expression, {**role_files(*files), **extra})


def test_the_starlet_handler_is_looked_up_at_the_ruby_roles_pin_of_prefork_engine() -> None:
    files = ("ruby/defaults/main.yml", "app_server/defaults/main.yml")
    assert role_value("{{ app_server_starlet_gem_version }}", *files) == "0.0.7"
    pinned = role_value(
        "{{ app_server_starlet_gem_version }}", *files, ruby_gem_versions={"prefork_engine": "0.0.6"}
    )
    assert pinned == "0.0.6"
    assert role_value("{{ app_server_starlet_gem_version }}", "app_server/defaults/main.yml") == ""


def test_the_ruby_role_asks_gem_install_for_pinned_gems_by_name_and_version() -> None:
    files = ("ruby/defaults/main.yml", "ruby/vars/main.yml")
    gems = ["rack", "sinatra", "pico_http_parser", "prefork_engine"]
    specs = role_value("{{ __ruby_gem_specs }}", *files, ruby_gems=gems)
    assert specs == ["rack", "sinatra", "pico_http_parser:0.0.4", "prefork_engine:0.0.7"]
    assert role_value("{{ __ruby_gem_specs }}", *files, ruby_gems=[]) == []


def starman(front: str = "nginx", **server: Any) -> dict[str, Any]:
    return resolved_stack("s", 8104, "psgi", "starman", front, **server)


def exec_argv(stack: dict[str, Any]) -> list[str]:
    """Instance 1's ExecStart as systemd runs it: %i is 1, an unbraced $BENCH_LISTEN_1 splits into words."""
    (line,) = unit_lines(stack, "ExecStart=")
    # systemd unquotes the env file's value, then splits the unbraced variable on whitespace.
    (value,) = shlex.split(listen(stack).split("=", 1)[1])
    words = value.split()
    return [
        w
        for word in line.split("=", 1)[1].replace("%i", "1").split()
        for w in (words if word == "$BENCH_LISTEN_1" else [word])
    ]


@pytest.mark.parametrize(
    ("bind", "listen_args"),
    [("unix", ["--path", "/run/bench-stack/s-1/server.sock"]), ("tcp", ["--port", "127.0.0.1:21041"])],
)
def test_starman_runs_under_start_server_on_both_binds_with_the_unix_socket_fix_loaded(
    bind: str, listen_args: list[str]
) -> None:
    args = exec_argv(starman(bind=bind, workers=3))
    assert args[: 1 + len(listen_args)] == ["/usr/bin/start_server", *listen_args]
    starter, server = args[: args.index("--")], args[args.index("--") + 1 :]
    assert "--signal-on-hup=QUIT" in starter
    assert server[:4] == [
        "/usr/bin/perl",
        "-I/opt/bench-stack/perl5",
        "-MBenchStack::StarterUnix",
        "/usr/bin/starman",
    ]
    assert "--listen" not in server
    assert server[server.index("--workers") + 1] == "3"
    assert server[-1] == "app.psgi"


def test_the_unix_socket_fix_is_the_module_the_role_installs_where_starman_loads_it() -> None:
    stacks = [starman(), starman(bind="tcp"), starlet(), resolved_stack("t", 8004, "sinatra", "thin")]
    helpers = templated(
        "{{ __app_server_helper_files }}",
        {
            **role_files("app_server/defaults/main.yml", "app_server/vars/main.yml"),
            "app_server_stacks": stacks,
        },
    )
    # Each file once, however many stacks load it, under the role's folders.
    assert helpers == [
        {"src": "perl/BenchStack/StarterUnix.pm", "dest": "/opt/bench-stack/perl5/BenchStack/StarterUnix.pm"},
        {
            "src": "ruby/bench_stack/starlet_peer_gone.rb",
            "dest": "/opt/bench-stack/ruby/bench_stack/starlet_peer_gone.rb",
        },
    ]
    module = ROLE / "files" / helpers[0]["src"]
    assert module.read_text(encoding="utf-8").startswith("package BenchStack::StarterUnix;\n")
    assert (ROLE / "files" / helpers[1]["src"]).is_file()
    assert "-I/opt/bench-stack/perl5 -MBenchStack::StarterUnix " in unit_lines(starman(), "ExecStart=")[0]


@pytest.mark.parametrize("bind", ["unix", "tcp"])
def test_a_starman_unit_reloads_by_sending_hup_to_start_server(bind: str) -> None:
    assert unit_lines(starman(bind=bind), "ExecReload=") == ["ExecReload=/bin/kill -HUP $MAINPID"]


def test_a_directly_reached_starman_keeps_its_keep_alive() -> None:
    (line,) = unit_lines(starman(front="none"), "ExecStart=")
    assert "--keepalive-timeout 30" in line
    assert "--disable-keepalive" not in line


def users_sinatra_app(tmp_path: Path, kind: str) -> dict[str, Any]:
    src = tmp_path / "shop"
    src.mkdir(exist_ok=True)
    (src / "config.ru").write_text("run Shop\n", encoding="utf-8")
    return resolve_stack(
        {
            "name": f"shop-{kind}",
            "port": 8070,
            "app": {"kind": "sinatra", "src": str(src), "name": "shop", "env": {"TOKEN": 'a "b"'}},
            "server": {"kind": kind},
            "front": {"kind": "nginx"},
        }
    )


@pytest.mark.parametrize("kind", ["thin", "puma", "unicorn", "webrick"])
def test_an_app_with_a_gemfile_runs_its_own_server_gem_through_bundle_exec(tmp_path: Path, kind: str) -> None:
    stack = users_sinatra_app(tmp_path, kind)
    bundled = [stack["app"]["dir"]]
    (start,) = unit_lines(stack, "ExecStart=", app_server_bundled_apps=bundled)
    server = "rackup" if kind == "webrick" else kind
    assert start.startswith(f"ExecStart=/usr/bin/bundle exec {server} ")
    (plain,) = unit_lines(stack, "ExecStart=", app_server_bundled_apps=[])
    assert plain.startswith(f"ExecStart=/usr/bin/{server} ")


def test_the_env_file_holds_bundlers_settings_and_app_env_quoted(tmp_path: Path) -> None:
    lines = render("stack.env.j2", users_sinatra_app(tmp_path, "thin")).splitlines()
    assert 'BUNDLE_GEMFILE="/opt/bench-stack/apps/user/shop/Gemfile"' in lines
    assert 'BUNDLE_PATH="/opt/bench-stack/apps/user/.bundle/shop"' in lines
    assert 'TOKEN="a \\"b\\""' in lines
