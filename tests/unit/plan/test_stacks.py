import copy
import re
from pathlib import Path
from typing import Any

import pytest

from benchstack.kinds.apps.static import ONE_KB_BODY
from benchstack.kinds.servers import processes as server_processes
from benchstack.kinds.stackfields import MAX_URL_PATH, Roots, StackError
from benchstack.plan.readers import front_checks, instance_checks, needs, port_warnings
from benchstack.plan.stacks import resolve, resolve_stack, resolve_stacks


def needs_of(stacks: list[dict]) -> dict:
    """The needs of the stacks as written, as the plan's fact holds them."""
    return needs(resolve_stacks(stacks)).to_dict()


def instance_checks_of(stacks: list[dict]) -> list[dict]:
    """The instance checks of the stacks as written, as the plan's fact holds them."""
    return [c.to_dict() for c in instance_checks(resolve_stacks(stacks))]


def front_checks_of(stacks: list[dict], host: str) -> list[dict]:
    """The front checks of the stacks as written, as the plan's fact holds them."""
    return [c.to_dict() for c in front_checks(resolve_stacks(stacks), host)]


def thin(name: str, port: int, instances: int = 1, bind: str | None = None, front: str = "nginx") -> dict:
    server: dict[str, Any] = {"kind": "thin", "instances": instances}
    if bind is not None:
        server["bind"] = bind
    return {
        "name": name,
        "port": port,
        "app": {"kind": "sinatra"},
        "server": server,
        "front": {"kind": front},
    }


def direct(name: str = "sinatra-thin-x1", port: int = 8001) -> dict:
    return {"name": name, "port": port, "app": {"kind": "sinatra"}, "server": {"kind": "thin"}}


def static(name: str = "nginx-static", port: int = 8010) -> dict:
    return {"name": name, "port": port, "app": {"kind": "static"}, "front": {"kind": "nginx"}}


# ---------------------------------------------------------------- endpoints


def test_unix_pool_gets_one_socket_per_instance() -> None:
    s = resolve_stack(thin("sinatra-thin-x4-nginx", 8004, instances=4, bind="unix"))
    assert [ep["socket"] for ep in s["endpoints"]] == [
        f"/run/bench-stack/sinatra-thin-x4-nginx-{i}/server.sock" for i in range(1, 5)
    ]
    assert [ep["unit"] for ep in s["endpoints"]] == [
        f"bench-sinatra-thin-x4-nginx@{i}.service" for i in range(1, 5)
    ]
    assert all(ep["port"] is None and ep["host"] is None for ep in s["endpoints"])
    assert s["server"]["unit"] == "bench-sinatra-thin-x4-nginx@.service"


def test_server_behind_a_front_binds_unix_by_default() -> None:
    s = resolve_stack(thin("pool", 8002, instances=2))
    assert s["server"]["bind"] == "unix"
    assert s["endpoints"][0]["socket"] == "/run/bench-stack/pool-1/server.sock"


def test_run_root_moves_the_sockets_and_the_runtime_folders() -> None:
    s = resolve_stack(thin("pool", 8002, instances=1), Roots(run="/run/bench-rr"))
    assert s["endpoints"][0]["socket"] == "/run/bench-rr/pool-1/server.sock"
    assert s["endpoints"][0]["address"] == "unix:/run/bench-rr/pool-1/server.sock"
    assert s["endpoints"][0]["runtime_directory"] == "bench-rr/pool-1"
    assert s["server"]["unit_runtime_directory"] == "bench-rr/pool-%i"


def test_every_instance_gets_its_printed_addresses_and_listen_arguments() -> None:
    s = resolve_stack(thin("pool", 8002, instances=2))
    assert s["upstream"] == "bench_pool"
    assert [ep["address"] for ep in s["endpoints"]] == [
        "unix:/run/bench-stack/pool-1/server.sock",
        "unix:/run/bench-stack/pool-2/server.sock",
    ]
    assert s["endpoints"][1]["balancer_member"] == "unix:/run/bench-stack/pool-2/server.sock|http://pool-2"
    assert s["endpoints"][1]["listen_args"] == "--socket /run/bench-stack/pool-2/server.sock"
    assert s["server"]["env_file"] == "/etc/bench-stack/units/pool.env"
    assert s["server"]["environment"] == {
        "BENCH_LISTEN_1": "--socket /run/bench-stack/pool-1/server.sock",
        "BENCH_LISTEN_2": "--socket /run/bench-stack/pool-2/server.sock",
    }


def test_a_config_file_server_reads_its_listen_address_from_its_own_file() -> None:
    s = resolve_stack(server_stack("puma", "sinatra", bind="tcp", instances=2))
    assert [ep["config_file"] for ep in s["endpoints"]] == [
        "/etc/bench-stack/units/sinatra-puma-1.puma.rb",
        "/etc/bench-stack/units/sinatra-puma-2.puma.rb",
    ]
    assert s["server"]["unit_config_file"] == "/etc/bench-stack/units/sinatra-puma-%i.puma.rb"
    assert [ep["config_listen"] for ep in s["endpoints"]] == [
        "tcp://127.0.0.1:21011",
        "tcp://127.0.0.1:21012",
    ]
    assert s["server"]["environment"] == {}


def test_roots_must_be_safe_paths_and_the_run_root_under_run() -> None:
    assert Roots().problems() == []
    assert Roots(run="/var/run/x").problems() == [
        "bench_run_root: must be a folder under /run (systemd's RuntimeDirectory=), not '/var/run/x'"
    ]
    [problem] = Roots(apps="/srv/my apps").problems()
    assert problem.startswith("bench_app_root: must be an absolute path")


@pytest.mark.parametrize(
    ("roots", "said"),
    [
        (Roots(units="/etc/systemd/network"), "bench_unit_config_dir: must not be in /etc/systemd, "),
        (Roots(run="/run/systemd"), "bench_run_root: must not be in /run/systemd, "),
        (Roots(run="/run/user/1000/x"), "bench_run_root: must not be in /run/user, "),
        (Roots(apps="/usr/lib/x/apps"), "bench_app_root: must not be in /usr/lib, "),
        (
            Roots(units="/etc/myapp"),
            "bench_unit_config_dir: must be a folder of bench-stack's own, with 'bench'",
        ),
        (Roots(run="/run/nginx"), "bench_run_root: must be a folder of bench-stack's own, with 'bench'"),
    ],
)
def test_roots_in_another_programs_folders_are_refused(roots: Roots, said: str) -> None:
    """Issue 44, finding 8: bench_unit_config_dir=/etc/systemd/network and bench_run_root=/run/systemd were
    accepted (deep enough, not a system folder themselves); the units' folders must be bench-stack's own."""
    [problem] = roots.problems()
    assert problem.startswith(said), problem


def test_an_app_root_need_not_be_named_after_bench_stack() -> None:
    assert Roots(apps="/srv/apps", units="/etc/bench-x/units", run="/run/benchmarks").problems() == []


def test_tcp_pool_behind_a_front_gets_backend_ports_derived_from_the_stack_port() -> None:
    s = resolve_stack(thin("tcp-pool", 8004, instances=3, bind="tcp"))
    assert [(ep["host"], ep["port"]) for ep in s["endpoints"]] == [
        ("127.0.0.1", 20041),
        ("127.0.0.1", 20042),
        ("127.0.0.1", 20043),
    ]
    assert all(ep["socket"] is None for ep in s["endpoints"])


def test_explicit_port_base_sets_the_backend_ports() -> None:
    stack = thin("tcp-pool", 8004, instances=2, bind="tcp")
    stack["server"]["port_base"] = 9100
    assert [ep["port"] for ep in resolve_stack(stack)["endpoints"]] == [9101, 9102]


def test_stack_without_front_is_one_tcp_instance_on_the_stack_port() -> None:
    s = resolve_stack(direct())
    assert s["front"] == {"kind": "none"}
    assert s["server"]["bind"] == "tcp" and s["server"]["instances"] == 1
    [ep] = s["endpoints"]
    assert (ep["unit"], ep["socket"], ep["host"], ep["port"]) == (
        "bench-sinatra-thin-x1@1.service",
        None,
        "0.0.0.0",
        8001,
    )
    assert ep["listen_args"] == "--address 0.0.0.0 --port 8001"
    assert s["upstream"] is None


def test_defaults_are_filled_in() -> None:
    s = resolve_stack(thin("pool", 8002))
    assert s["runtime"] == {"kind": "ruby"}
    assert s["front"]["profile"] == "tuned"
    assert s["app"]["dir"] == "/opt/bench-stack/apps/sinatra"
    assert [c["path"] for c in s["app"]["checks"]] == ["/", "/hello/bar"]


def test_app_root_moves_the_app_dir() -> None:
    assert resolve_stack(thin("pool", 8002), Roots(apps="/srv/apps"))["app"]["dir"] == "/srv/apps/sinatra"


def test_static_stack_has_no_server_and_no_endpoints() -> None:
    s = resolve_stack(static())
    assert s["server"] is None
    assert s["endpoints"] == []
    assert s["runtime"] == {"kind": "none"}


def test_normalize_does_not_modify_its_input() -> None:
    stack = thin("pool", 8002, instances=2)
    before = copy.deepcopy(stack)
    resolve_stack(stack)
    assert stack == before


def test_user_checks_are_kept() -> None:
    stack = thin("pool", 8002)
    stack["app"]["checks"] = [{"path": "/ping", "body": "pong"}]
    assert resolve_stack(stack)["app"]["checks"] == [{"path": "/ping", "body": "pong"}]


# ---------------------------------------------------------------- errors


@pytest.mark.parametrize(
    ("change", "field"),
    [
        (lambda s: s.update(name="Bad_Name"), "name"),
        (lambda s: s.update(name=""), "name"),
        (lambda s: s.update(port=0), "port"),
        (lambda s: s.update(port=70000), "port"),
        (lambda s: s.update(port=True), "port"),
        (lambda s: s.update(port="8002"), "port"),
        (lambda s: s.update(app={"kind": "rails"}), "app.kind"),
        (lambda s: s.update(runtime={"kind": "python"}), "runtime.kind"),
        (lambda s: s.update(front={"kind": "caddy"}), "front.kind"),
        (lambda s: s["front"].update(profile="fast"), "front.profile"),
        (lambda s: s.pop("server"), "server"),
        (lambda s: s["server"].update(kind="gunicorn"), "server.kind"),
        (lambda s: s["server"].update(kind="mongrel"), "server.kind"),
        (lambda s: s["server"].update(workers=2), "server.workers"),
        (lambda s: s["app"].update(dir="relative/app"), "app.dir"),
        (lambda s: s["app"].update(dir="/srv/../etc"), "app.dir"),
        (lambda s: s["server"].update(instances=0), "server.instances"),
        (lambda s: s["server"].update(instances=65), "server.instances"),
        (lambda s: s["server"].update(instances="2"), "server.instances"),
        (lambda s: s["server"].update(bind="udp"), "server.bind"),
        # Non-mappings must be a StackError naming the field, not an AttributeError.
        (lambda s: s.update(app="sinatra"), "app"),
        (lambda s: s.update(front="nginx"), "front"),
        (lambda s: s.update(front=None), "front"),
        (lambda s: s.update(runtime="ruby"), "runtime"),
        (lambda s: s.update(server="thin"), "server"),
    ],
)
def test_bad_stack_raises_stack_error_naming_stack_and_field(change: Any, field: str) -> None:
    stack = thin("pool", 8002, instances=2)
    change(stack)
    with pytest.raises(StackError) as err:
        resolve_stack(stack)
    message = str(err.value)
    assert message.startswith(f"stack {stack.get('name')!r}: {field}:"), message


def test_non_mapping_stack_is_rejected() -> None:
    with pytest.raises(StackError, match="must be a mapping"):
        resolve_stack(["not", "a", "stack"])  # type: ignore[arg-type]


def test_stack_without_front_cannot_have_a_pool() -> None:
    stack = direct()
    stack["server"]["instances"] = 2
    with pytest.raises(StackError, match=r"'sinatra-thin-x1': server: without a front"):
        resolve_stack(stack)


def test_stack_without_front_cannot_bind_unix() -> None:
    stack = direct()
    stack["server"]["bind"] = "unix"
    with pytest.raises(StackError, match="without a front"):
        resolve_stack(stack)


def test_static_app_rejects_an_app_server() -> None:
    stack = static()
    stack["server"] = {"kind": "thin"}
    with pytest.raises(StackError, match=r"'nginx-static': server: app static is served by its front"):
        resolve_stack(stack)


def test_static_app_needs_a_front() -> None:
    stack = static()
    stack["front"] = {"kind": "none"}
    with pytest.raises(StackError, match=r"'nginx-static': front.kind: app static needs a front \(nginx\)"):
        resolve_stack(stack)


@pytest.mark.parametrize("port_base", ["9000", None, True, 65534, -5])
def test_bad_port_base_names_the_field(port_base: object) -> None:
    stack = thin("tcp-pool", 8004, instances=2, bind="tcp")
    stack["server"]["port_base"] = port_base
    with pytest.raises(StackError, match=r"'tcp-pool': server.port_base:"):
        resolve_stack(stack)


def test_backend_port_on_the_stack_own_port_is_rejected() -> None:
    stack = thin("tcp-pool", 8004, instances=2, bind="tcp")
    stack["server"]["port_base"] = 8002  # backends 8003, 8004: 8004 is the front's port
    with pytest.raises(StackError, match=r"'tcp-pool': server.port_base: .*own port 8004"):
        resolve_stack(stack)


def test_port_base_is_ignored_for_unix_pools() -> None:
    stack = thin("pool", 8004, instances=2, bind="unix")
    stack["server"]["port_base"] = "unused"
    assert [ep["port"] for ep in resolve_stack(stack)["endpoints"]] == [None, None]


# ---------------------------------------------------------------- resolve_stacks


def test_resolve_stacks_keeps_order() -> None:
    out = resolve_stacks([direct(), thin("pool", 8002), static()])
    assert [s.name for s in out] == ["sinatra-thin-x1", "pool", "nginx-static"]


def test_resolve_stacks_rejects_a_non_list() -> None:
    with pytest.raises(StackError, match="must be a non-empty list"):
        resolve_stacks({"name": "x"})
    with pytest.raises(StackError, match="must be a non-empty list"):
        resolve_stacks([])


def test_every_problem_of_every_stack_is_reported_at_once() -> None:
    bad_app = thin("a", 8002)
    bad_app["app"].update(dir="/srv/x;y", dri="typo")
    bad_front = {**thin("Bad_Name", 0), "prot": 9000}
    bad_front["front"] = {"kind": "nginx", "profile": "fast"}
    with pytest.raises(StackError) as err:
        resolve_stacks([bad_app, bad_front])
    assert [p.split(": ")[1] for p in err.value.problems] == [
        "app.dri",
        "app.dir",
        "prot",
        "name",
        "port",
        "front.profile",
    ]


def test_two_stacks_with_one_name_are_rejected() -> None:
    with pytest.raises(StackError, match=r"stack 'pool': name: used by two stacks"):
        resolve_stacks([thin("pool", 8002), thin("pool", 8003)])


def test_two_stacks_on_one_port_are_rejected_naming_both() -> None:
    with pytest.raises(StackError, match=r"stack 'b': port: 8002 is also used by stack 'a'"):
        resolve_stacks([thin("a", 8002), thin("b", 8002)])


def test_backend_port_colliding_with_another_stack_is_rejected() -> None:
    # 8001 x 11 on TCP takes 20011..20021; 8002 starts at 20021.
    with pytest.raises(StackError, match=r"20021 is also used by stack"):
        resolve_stacks([thin("a", 8001, instances=11, bind="tcp"), thin("b", 8002, instances=1, bind="tcp")])


def test_stack_port_colliding_with_another_stack_backend_is_rejected() -> None:
    with pytest.raises(StackError, match=r"stack 'b': port: 20041 is also used by stack 'a'"):
        resolve_stacks([thin("a", 8004, instances=1, bind="tcp"), direct("b", 20041)])


def test_unix_pools_and_direct_stack_coexist() -> None:
    out = resolve_stacks([direct(), thin("x2", 8003, 2), thin("x4", 8004, 4), static()])
    sockets = [ep.socket for s in out for ep in s.endpoints if ep.socket]
    assert len(sockets) == len(set(sockets)) == 6


# ---------------------------------------------------------------- needs


def test_needs_lists_runtimes_gems_apps_fronts_and_servers_once() -> None:
    n = needs_of([direct(), thin("x2", 8003, 2), static()])
    assert n == {
        "runtimes": ["ruby"],
        "ruby_gems": ["rack", "sinatra", "thin"],
        "ruby_versions": [],
        "python_packages": [],
        "perl_modules": [],
        "app_kinds": ["sinatra", "static"],
        "fronts": ["nginx"],
        "servers": ["thin"],
        "apache_handlers": [],
    }


def test_static_only_needs_no_runtime_and_no_gems() -> None:
    assert needs_of([static()]) == {
        "runtimes": [],
        "ruby_gems": [],
        "ruby_versions": [],
        "python_packages": [],
        "perl_modules": [],
        "app_kinds": ["static"],
        "fronts": ["nginx"],
        "servers": [],
        "apache_handlers": [],
    }


def test_needs_lists_the_ruby_versions_stacks_name_once_sorted() -> None:
    a, b, c = direct(), thin("x2", 8003, 2), thin("x3", 8004, 1)
    a["runtime"] = {"kind": "ruby", "version": "3.3.6"}
    b["runtime"] = {"kind": "ruby", "version": "3.1.2"}
    c["runtime"] = {"version": "3.1.2"}
    assert needs_of([a, b, c])["ruby_versions"] == ["3.1.2", "3.3.6"]


@pytest.mark.parametrize(
    ("runtime", "field"),
    [
        ({"kind": "ruby", "version": 3.1}, "runtime.version"),
        ({"kind": "ruby", "version": "3.1"}, "runtime.version"),
        ({"kind": "ruby", "version": "../3.1.2"}, "runtime.version"),
        ({"kind": "ruby", "method": "rbenv"}, "runtime.method"),
    ],
)
def test_a_bad_runtime_version_is_refused_naming_the_field(runtime: dict[str, object], field: str) -> None:
    s = direct()
    s["runtime"] = runtime
    with pytest.raises(StackError, match=field.replace(".", r"\.")):
        resolve_stack(s)


def test_only_a_ruby_runtime_takes_a_version() -> None:
    s = {
        "name": "py",
        "app": {"kind": "wsgi"},
        "runtime": {"kind": "python", "version": "3.11.2"},
        "server": {"kind": "gunicorn"},
        "port": 8100,
    }
    with pytest.raises(StackError, match="only a ruby runtime"):
        resolve_stack(s)


def test_direct_stack_needs_no_front() -> None:
    assert needs_of([direct()])["fronts"] == []


# ---------------------------------------------------------------- checks


def test_instance_checks_ask_every_pool_member_every_check() -> None:
    checks = instance_checks_of([thin("x2", 8003, 2)])
    assert len(checks) == 2 * 2
    assert {c["unix_socket"] for c in checks} == {
        "/run/bench-stack/x2-1/server.sock",
        "/run/bench-stack/x2-2/server.sock",
    }
    first = checks[0]
    assert first == {
        "stack": "x2",
        "via": "bench-x2@1.service (unix:/run/bench-stack/x2-1/server.sock)",
        "unit": "bench-x2@1.service",
        "url": "http://localhost/",
        "unix_socket": "/run/bench-stack/x2-1/server.sock",
        "body": "Hello World! I am sinatra!",
        "protocol": "http",
    }
    assert checks[1]["url"] == "http://localhost/hello/bar" and checks[1]["body"] == "Hello bar!"


def test_instance_checks_of_a_direct_stack_ask_localhost_on_the_stack_port() -> None:
    checks = instance_checks_of([direct()])
    assert [c["url"] for c in checks] == ["http://127.0.0.1:8001/", "http://127.0.0.1:8001/hello/bar"]
    assert all(c["unix_socket"] is None for c in checks)
    assert checks[0]["via"] == "bench-sinatra-thin-x1@1.service (127.0.0.1:8001)"


def test_instance_checks_of_a_tcp_pool_ask_each_backend_port() -> None:
    checks = instance_checks_of([thin("tcp-pool", 8004, instances=2, bind="tcp")])
    assert [c["url"] for c in checks] == [
        "http://127.0.0.1:20041/",
        "http://127.0.0.1:20041/hello/bar",
        "http://127.0.0.1:20042/",
        "http://127.0.0.1:20042/hello/bar",
    ]


def test_static_stack_has_no_instance_checks() -> None:
    assert instance_checks_of([static()]) == []


def test_front_checks_ask_each_stack_port_on_the_given_host() -> None:
    checks = front_checks_of([direct(), thin("x2", 8003, 2), static()], "target1")
    assert [(c["stack"], c["url"]) for c in checks] == [
        ("sinatra-thin-x1", "http://target1:8001/"),
        ("sinatra-thin-x1", "http://target1:8001/hello/bar"),
        ("x2", "http://target1:8003/"),
        ("x2", "http://target1:8003/hello/bar"),
        ("nginx-static", "http://target1:8010/index.html"),
        ("nginx-static", "http://target1:8010/1k.html"),
    ]
    assert checks[0]["via"] == "port 8001 (none)"
    assert checks[2]["via"] == "port 8003 (nginx)"
    assert checks[4]["body"] == "Hello World! I am static!\n"
    assert all(c["unix_socket"] is None for c in checks)


def test_front_checks_bracket_an_ipv6_host() -> None:
    assert front_checks_of([static()], "fd00::2")[0]["url"] == "http://[fd00::2]:8010/index.html"


# ---------------------------------------------------------------- server kinds and their options


def server_stack(kind: str, app: str, front: str = "nginx", **server: Any) -> dict:
    return {
        "name": f"{app}-{kind}",
        "port": 8101,
        "app": {"kind": app},
        "server": {"kind": kind, **server},
        "front": {"kind": front},
    }


@pytest.mark.parametrize(
    ("kind", "app", "defaults"),
    [
        ("thin", "sinatra", {}),
        ("unicorn", "sinatra", {"workers": 2, "preload": True}),
        ("puma", "sinatra", {"workers": 0, "threads": 5, "preload": False}),
        ("starman", "psgi", {"workers": 2, "max_requests": 1000}),
        (
            "starlet",
            "sinatra",
            {"workers": 2, "max_request_per_child": 1000, "min_request_per_child": None},
        ),
        ("gunicorn", "wsgi", {"workers": 2, "max_requests": 0}),
        ("uvicorn", "asgi", {"workers": 1}),
        ("php-fpm", "php", {"workers": 2, "max_requests": 0}),
    ],
)
def test_every_server_kind_gets_its_option_defaults_and_a_unix_pool(
    kind: str, app: str, defaults: dict[str, Any]
) -> None:
    s = resolve_stack(server_stack(kind, app, instances=2))
    assert {k: s["server"][k] for k in defaults} == defaults
    assert s["server"]["bind"] == "unix"
    assert [ep["socket"] for ep in s["endpoints"]] == [
        f"/run/bench-stack/{app}-{kind}-1/server.sock",
        f"/run/bench-stack/{app}-{kind}-2/server.sock",
    ]


def test_typed_server_options_are_kept() -> None:
    s = resolve_stack(server_stack("puma", "sinatra", workers=2, threads=8, preload=True))
    assert (s["server"]["workers"], s["server"]["threads"], s["server"]["preload"]) == (2, 8, True)


@pytest.mark.parametrize(
    ("server", "field"),
    [
        ({"kind": "unicorn", "workers": 0}, "server.workers"),
        ({"kind": "unicorn", "workers": "4"}, "server.workers"),
        ({"kind": "unicorn", "workers": True}, "server.workers"),
        ({"kind": "unicorn", "preload": "yes"}, "server.preload"),
        ({"kind": "puma", "threads": 0}, "server.threads"),
        ({"kind": "puma", "workers": -1}, "server.workers"),
        ({"kind": "unicorn", "threads": 4}, "server.threads"),
        ({"kind": "starlet", "workers": 0}, "server.workers"),
        ({"kind": "starlet", "max_request_per_child": 0}, "server.max_request_per_child"),
        ({"kind": "starlet", "max_request_per_child": "1000"}, "server.max_request_per_child"),
        ({"kind": "starlet", "min_request_per_child": 0}, "server.min_request_per_child"),
        ({"kind": "starlet", "min_request_per_child": True}, "server.min_request_per_child"),
        ({"kind": "starlet", "max_requests": 1000}, "server.max_requests"),
    ],
)
def test_bad_server_options_name_the_field(server: dict[str, Any], field: str) -> None:
    stack = server_stack("x", "sinatra")
    stack["server"] = server
    with pytest.raises(StackError, match=rf"^stack 'sinatra-x': {field}:"):
        resolve_stack(stack)


@pytest.mark.parametrize(
    ("section", "value", "message"),
    [
        (
            "server",
            {"kind": "unicorn", "threads": 4},
            "server.threads: unknown option of unicorn "
            "(allowed: bind, instances, kind, port_base, preload, workers)",
        ),
        ("server", {"kind": "unicorn", "preload": "yes"}, "server.preload: must be true or false, not 'yes'"),
        ("server", {"kind": "puma", "threads": 0}, "server.threads: must be an integer from 1 to 256, not 0"),
        (
            "runtime",
            {"kind": "ruby", "method": "rbenv"},
            "runtime.method: unknown key (allowed: kind, version)",
        ),
        (
            "front",
            {"kind": "apache", "mpm": "worker", "profile": "tuned"},
            "front.profile: unknown key of an apache front with mpm worker (allowed: kind, "
            "max_connections_per_child, max_request_workers, max_spare_threads, min_spare_threads, mpm, "
            "start_servers, threads_per_child)",
        ),
        (
            "front",
            {"kind": "apache", "start_servers": 0},
            "front.start_servers: must be an integer from 1 to 1024, not 0",
        ),
    ],
)
def test_unknown_keys_and_bad_typed_values_read_alike_in_every_section(
    section: str, value: dict[str, Any], message: str
) -> None:
    stack = server_stack("thin", "sinatra")
    stack[section] = value
    with pytest.raises(StackError, match=rf"^stack 'sinatra-thin': {re.escape(message)}$"):
        resolve_stack(stack)


def test_webrick_is_tcp_only_and_says_so() -> None:
    with pytest.raises(StackError, match=r"server.bind: webrick listens on tcp only, not unix"):
        resolve_stack(server_stack("webrick", "sinatra", bind="unix"))
    s = resolve_stack(server_stack("webrick", "sinatra", instances=2))
    assert s["server"]["bind"] == "tcp"
    assert [ep["port"] for ep in s["endpoints"]] == [21011, 21012]


def test_webrick_serves_directly_on_the_stack_port() -> None:
    s = resolve_stack(server_stack("webrick", "sinatra", front="none"))
    assert s["endpoints"][0]["port"] == 8101


def test_starlet_takes_its_request_limits_and_an_optional_minimum() -> None:
    s = resolve_stack(
        server_stack("starlet", "sinatra", workers=8, max_request_per_child=1000, min_request_per_child=800)
    )
    assert (s["server"]["workers"], s["server"]["max_request_per_child"]) == (8, 1000)
    assert s["server"]["min_request_per_child"] == 800


def test_starlet_minimum_above_the_maximum_is_refused_naming_both() -> None:
    with pytest.raises(
        StackError,
        match=r"server\.min_request_per_child: must be at most server\.max_request_per_child \(100\)",
    ):
        resolve_stack(
            server_stack("starlet", "sinatra", max_request_per_child=100, min_request_per_child=101)
        )


def test_starlet_binds_tcp_too_and_serves_directly_on_the_stack_port() -> None:
    pool = resolve_stack(server_stack("starlet", "sinatra", instances=2, bind="tcp"))
    assert [(ep["host"], ep["port"]) for ep in pool["endpoints"]] == [
        ("127.0.0.1", 21011),
        ("127.0.0.1", 21012),
    ]
    direct_stack = resolve_stack(server_stack("starlet", "sinatra", front="none"))
    assert [(ep["host"], ep["port"]) for ep in direct_stack["endpoints"]] == [("0.0.0.0", 8101)]


def test_starlet_only_serves_rack_apps() -> None:
    with pytest.raises(StackError, match=r"server.kind: starlet cannot serve app psgi"):
        resolve_stack(server_stack("starlet", "psgi"))


def test_starlet_needs_its_gems_and_server_starter_but_not_starman() -> None:
    n = needs_of([server_stack("starlet", "sinatra")])
    assert n["ruby_gems"] == ["rack", "sinatra", "pico_http_parser", "prefork_engine"]
    assert n["perl_modules"] == ["Server-Starter"]
    assert n["runtimes"] == ["ruby"]
    assert n["servers"] == ["starlet"]


def test_perl_modules_are_listed_once_for_starman_and_starlet_together() -> None:
    n = needs_of(
        [
            server_stack("starlet", "sinatra"),
            {**server_stack("starman", "psgi"), "name": "s", "port": 8104},
        ]
    )
    assert n["perl_modules"] == ["Server-Starter", "Starman"]


@pytest.mark.parametrize(("kind", "app"), [("starman", "sinatra"), ("gunicorn", "asgi"), ("thin", "php")])
def test_a_server_only_serves_its_own_app_kinds(kind: str, app: str) -> None:
    with pytest.raises(StackError, match=rf"server.kind: {kind} cannot serve app {app}"):
        resolve_stack(server_stack(kind, app))


def test_php_fpm_needs_a_front() -> None:
    with pytest.raises(StackError, match=r"front.kind: php-fpm speaks fastcgi, not HTTP"):
        resolve_stack(server_stack("php-fpm", "php", front="none"))


def test_derived_fields_are_not_inputs_a_resolved_stack_is_refused_naming_them() -> None:
    once = resolve_stack(server_stack("unicorn", "sinatra", workers=3))
    with pytest.raises(StackError) as err:
        resolve_stack(once)
    fields = [p.split(": ")[1] for p in err.value.problems]
    assert {"endpoints", "upstream", "app.entry"} <= set(fields)


def test_a_user_app_dir_is_kept_and_names_its_entry_file() -> None:
    stack = server_stack("gunicorn", "wsgi")
    stack["app"]["dir"] = "/srv/my-wsgi"
    s = resolve_stack(stack)
    assert (s["app"]["dir"], s["app"]["entry"]) == ("/srv/my-wsgi", "app.py")


def test_needs_lists_python_packages_per_server() -> None:
    n = needs_of(
        [
            server_stack("gunicorn", "wsgi"),
            {**server_stack("uvicorn", "asgi"), "name": "u", "port": 8102},
            {**server_stack("puma", "sinatra"), "name": "p", "port": 8103},
            {**server_stack("starman", "psgi"), "name": "s", "port": 8104},
            {**server_stack("php-fpm", "php"), "name": "f", "port": 8105},
        ]
    )
    assert n["python_packages"] == ["gunicorn", "uvicorn"]
    assert n["ruby_gems"] == ["rack", "sinatra", "puma"]
    assert n["runtimes"] == ["perl", "php", "python", "ruby"]
    assert n["perl_modules"] == ["Starman", "Server-Starter"]
    assert n["servers"] == ["gunicorn", "php-fpm", "puma", "starman", "uvicorn"]


def test_fastcgi_instance_checks_name_the_script_and_the_uri() -> None:
    checks = instance_checks_of([server_stack("php-fpm", "php", bind="tcp")])
    assert checks[1]["protocol"] == "fastcgi"
    assert checks[1]["fastcgi"] == {
        "connect": "127.0.0.1:21011",
        "script": "/opt/bench-stack/apps/php/index.php",
        "uri": "/hello/bar",
    }
    assert checks[1]["body"] == "Hello bar!"


@pytest.mark.parametrize(
    ("kind", "app", "keepalive"),
    [
        ("thin", "sinatra", True),
        ("puma", "sinatra", True),
        ("uvicorn", "asgi", True),
        ("webrick", "sinatra", False),
        ("unicorn", "sinatra", False),
        ("gunicorn", "wsgi", False),
        ("starman", "psgi", False),
        ("starlet", "sinatra", False),
        ("php-fpm", "php", False),
    ],
)
def test_a_front_keeps_idle_connections_only_to_servers_that_keep_them_longer(
    kind: str, app: str, keepalive: bool
) -> None:
    assert resolve_stack(server_stack(kind, app))["server"]["upstream_keepalive"] is keepalive


# ---------------------------------------------------------------- apache fronts


def apache(name: str = "a", port: int = 8061, kind: str = "static", **front: Any) -> dict:
    return {"name": name, "port": port, "app": {"kind": kind}, "front": {"kind": "apache", **front}}


def test_apache_front_defaults_to_event_with_debians_tuning_and_its_own_instance() -> None:
    f = resolve_stack(apache("apache-static"))["front"]
    assert f["mpm"] == "event"
    assert f["instance"] == "bench-apache-static"
    assert f["handler"] == "static"
    assert f["modules"] == ["mpm_event"]
    assert f["modules_off"] == ["mpm_prefork", "mpm_worker", "php"]
    assert f["mpm_directives"] == [
        ["ServerLimit", 16],
        ["ThreadLimit", 64],
        ["StartServers", 2],
        ["MinSpareThreads", 25],
        ["MaxSpareThreads", 75],
        ["ThreadsPerChild", 25],
        ["MaxRequestWorkers", 150],
        ["MaxConnectionsPerChild", 0],
    ]


def test_apache_prefork_takes_the_seeds_tuning() -> None:
    f = resolve_stack(
        apache(
            mpm="prefork", start_servers=5, min_spare_servers=5, max_spare_servers=10, max_request_workers=250
        )
    )["front"]
    assert f["mpm_directives"] == [
        ["ServerLimit", 256],
        ["StartServers", 5],
        ["MinSpareServers", 5],
        ["MaxSpareServers", 10],
        ["MaxRequestWorkers", 250],
        ["MaxConnectionsPerChild", 0],
    ]


def test_apache_limits_grow_with_the_workers_so_apache_does_not_cap_them() -> None:
    prefork = resolve_stack(apache(mpm="prefork", max_request_workers=400))["front"]
    assert prefork["mpm_directives"][0] == ["ServerLimit", 400]
    event = resolve_stack(
        apache(mpm="event", threads_per_child=100, max_request_workers=2000, max_spare_threads=200)
    )["front"]
    assert event["mpm_directives"][:2] == [["ServerLimit", 20], ["ThreadLimit", 100]]


def test_apache_rejects_an_unknown_mpm() -> None:
    with pytest.raises(StackError, match=r"'a': front.mpm: must be one of prefork, worker, event, not 'itk'"):
        resolve_stack(apache(mpm="itk"))


def test_apache_prefork_rejects_thread_keys_naming_the_allowed_ones() -> None:
    with pytest.raises(
        StackError, match=r"front.threads_per_child: unknown key of an apache front with mpm prefork"
    ):
        resolve_stack(apache(mpm="prefork", threads_per_child=25))


def test_apache_front_has_no_nginx_profile() -> None:
    with pytest.raises(StackError, match=r"front.profile: unknown key"):
        resolve_stack(apache(profile="tuned"))


@pytest.mark.parametrize(
    ("front", "message"),
    [
        ({"max_request_workers": 0}, r"front.max_request_workers: must be an integer from 1 to 20000, not 0"),
        ({"start_servers": "5"}, r"front.start_servers: must be an integer from 1 to 1024, not '5'"),
        ({"max_connections_per_child": True}, r"front.max_connections_per_child: must be an integer"),
        (
            {"max_request_workers": 160},
            r"front.max_request_workers: must be a multiple of .*25.*round 160 down to 150",
        ),
        ({"max_spare_threads": 40}, r"front.max_spare_threads: must be at least .* \(50\)"),
        ({"mpm": "prefork", "min_spare_servers": 20}, r"front.max_spare_servers: must be at least"),
    ],
)
def test_apache_tuning_values_are_typed_and_consistent(front: dict, message: str) -> None:
    with pytest.raises(StackError, match=message):
        resolve_stack(apache(**front))


def test_apache_front_proxies_an_http_pool_with_the_balancer_modules() -> None:
    stack = thin("sinatra-thin-x2-apache", 8501, 2, "unix", front="apache")
    s = resolve_stack(stack)
    assert s["front"]["handler"] == "proxy"
    assert s["front"]["modules"] == [
        "mpm_event", "proxy", "proxy_http", "slotmem_shm", "proxy_balancer", "lbmethod_byrequests",
    ]  # fmt: skip
    assert [ep["socket"] for ep in s["endpoints"]] == [
        "/run/bench-stack/sinatra-thin-x2-apache-1/server.sock",
        "/run/bench-stack/sinatra-thin-x2-apache-2/server.sock",
    ]


def test_apache_front_refuses_a_fastcgi_server() -> None:
    stack = {
        "name": "php-fpm-apache",
        "port": 8070,
        "app": {"kind": "php"},
        "server": {"kind": "php-fpm"},
        "front": {"kind": "apache"},
    }
    with pytest.raises(
        StackError, match=r"front.kind: php-fpm speaks fastcgi; the apache front proxies HTTP only"
    ):
        resolve_stack(stack)


def test_php_without_a_server_under_apache_runs_on_mod_php_with_prefork() -> None:
    s = resolve_stack(apache("php-apache", kind="php", mpm="prefork"))
    assert s["server"] is None and s["endpoints"] == []
    assert s["front"]["handler"] == "mod_php"
    assert s["front"]["modules"] == ["mpm_prefork", "php", "alias"]
    assert "php" not in s["front"]["modules_off"]
    assert s["runtime"]["kind"] == "php"


def test_mod_php_refuses_a_threaded_mpm() -> None:
    with pytest.raises(StackError, match=r"front.mpm: mod_php needs the prefork MPM .*not event"):
        resolve_stack(apache("php-apache", kind="php"))


def test_php_without_a_server_behind_nginx_points_at_mod_php() -> None:
    stack = {"name": "p", "port": 8070, "app": {"kind": "php"}, "front": {"kind": "nginx"}}
    with pytest.raises(StackError, match=r"server: app php needs an app server .*front.kind apache.*mod_php"):
        resolve_stack(stack)


@pytest.mark.parametrize(
    ("kind", "module"),
    [("lua-inline", "lua"), ("lua-file", "lua"), ("mruby-inline", "mruby"), ("mruby-file", "mruby")],
)
def test_embedded_apps_run_inside_apache_only(kind: str, module: str) -> None:
    s = resolve_stack(apache("emb", kind=kind, mpm="worker"))
    assert s["front"]["handler"] == kind
    assert s["front"]["modules"] == ["mpm_worker", module]
    assert s["runtime"]["kind"] == "none"
    stack = {"name": "emb", "port": 8070, "app": {"kind": kind}, "front": {"kind": "nginx"}}
    with pytest.raises(StackError, match=rf"front.kind: app {kind} runs inside Apache \(mod_{module}\)"):
        resolve_stack(stack)


def test_lua_app_refuses_an_app_server() -> None:
    stack = apache("lua", kind="lua-file")
    stack["server"] = {"kind": "thin"}
    with pytest.raises(StackError, match=r"server: app lua-file is served by its front"):
        resolve_stack(stack)


def test_mruby_file_is_deployed_and_mruby_inline_lives_in_the_config() -> None:
    n = needs_of([apache("i", 8074, "mruby-inline"), apache("f", 8075, "mruby-file")])
    assert n["apache_handlers"] == ["mruby-file", "mruby-inline"]
    assert n["app_kinds"] == ["mruby-file"]
    stacks = [apache("i", 8074, "mruby-inline"), apache("f", 8075, "mruby-file")]
    checks = front_checks_of(stacks, "127.0.0.1")
    assert [(c["url"], c["body"]) for c in checks] == [
        ("http://127.0.0.1:8074/", "Hello World! I am mruby-inline!"),
        ("http://127.0.0.1:8075/hello.rb", "Hello World! I am mruby-file!"),
    ]


def test_resolving_does_not_modify_an_apache_stack() -> None:
    for stack in (
        apache(mpm="prefork", max_request_workers=250),
        apache(kind="lua-inline"),
        thin("t", 8501, 2, front="apache"),
    ):
        before = copy.deepcopy(stack)
        resolve_stack(stack)
        assert stack == before


def test_needs_lists_the_apache_handlers_and_only_apps_with_files() -> None:
    n = needs_of(
        [apache("i", 8071, "lua-inline"), apache("f", 8072, "lua-file"), thin("t", 8073, front="apache")]
    )
    assert n["fronts"] == ["apache"]
    assert n["apache_handlers"] == ["lua-file", "lua-inline", "proxy"]
    assert n["app_kinds"] == ["lua-file", "sinatra"]
    assert n["runtimes"] == ["ruby"]


def test_front_checks_name_the_apache_mpm() -> None:
    checks = front_checks_of([apache("p", 8061, mpm="prefork"), apache("i", 8071, "lua-inline")], "127.0.0.1")
    assert [c["via"] for c in checks] == ["port 8061 (apache prefork)"] * 2 + ["port 8071 (apache event)"]
    assert checks[2]["url"] == "http://127.0.0.1:8071/"
    assert checks[2]["body"] == "Hello World! I am lua-inline!"


def test_the_bundled_1k_file_is_exactly_1024_bytes_and_is_what_the_check_expects() -> None:
    bundled = Path(__file__).resolve().parents[3] / "roles/webapp/files/static/1k.html"
    assert len(ONE_KB_BODY.encode()) == 1024
    assert bundled.read_text(encoding="utf-8") == ONE_KB_BODY


# ---------------------------------------------------------------- names, ports and processes (issue 29)


@pytest.mark.parametrize(
    ("name", "problem"),
    [
        (None, "stacks[1]: name: missing: every stack needs a name of 1-48 lowercase letters"),
        (8080, "stacks[1]: name: must be a string of 1-48 lowercase letters"),
        (False, "stacks[1]: name: must be a string of 1-48 lowercase letters"),
        ([], "stacks[1]: name: must be a string of 1-48 lowercase letters"),
    ],
    ids=["missing", "number", "false", "list"],
)
def test_a_stack_without_a_string_name_is_one_problem_named_by_its_place(name: object, problem: str) -> None:
    # With a TCP pool behind a front: deriving its upstream and units from the name was the crash.
    stack = thin("pool", 8002, instances=2, bind="tcp")
    if name is None:
        del stack["name"]
    else:
        stack["name"] = name
    with pytest.raises(StackError) as err:
        resolve_stacks([static(), stack])
    assert len(err.value.problems) == 1 and err.value.problems[0].startswith(problem)


def test_a_stack_without_a_name_still_has_its_other_problems_listed() -> None:
    stack = {"port": 0, "app": {"kind": "sinatra"}, "server": {"kind": "thin", "instances": 0}}
    with pytest.raises(StackError) as err:
        resolve_stacks([stack])
    assert [p.split(":")[1].strip() for p in err.value.problems] == ["name", "port", "server.instances"]
    assert all(p.startswith("stacks[0]: ") for p in err.value.problems)


@pytest.mark.parametrize(("port_base", "instances"), [(0, 2), (21, 1), (1022, 2)])
def test_backends_below_port_1024_are_refused(port_base: int, instances: int) -> None:
    stack = thin("tcp-pool", 8004, instances=instances, bind="tcp")
    stack["server"]["port_base"] = port_base
    with pytest.raises(StackError, match=r"server.port_base: .* in 1024-65535 \(the app server listens"):
        resolve_stack(stack)


def test_backends_from_port_1024_are_accepted() -> None:
    stack = thin("tcp-pool", 8004, instances=2, bind="tcp")
    stack["server"]["port_base"] = 1023
    assert [ep["port"] for ep in resolve_stack(stack)["endpoints"]] == [1024, 1025]


def test_an_app_server_without_a_front_on_a_system_port_is_refused() -> None:
    with pytest.raises(StackError, match=r"'sinatra-thin-x1': port: 80 is below 1024: without a front"):
        resolve_stack(direct(port=80))
    assert resolve_stack(direct(port=1024))["port"] == 1024


def test_a_front_on_a_system_port_is_warned_about() -> None:
    warnings = port_warnings(resolve_stacks([static("a", 80), static("b", 21), static("c", 1024)]))
    assert warnings == [
        "stack 'a': port 80 is usually http's: the stack will not start if that service runs on the target",
        "stack 'b': port 21 is a system port (below 1024): the stack will not start if another service holds "
        "it on the target",
    ]


@pytest.mark.parametrize(
    ("server", "processes"),
    [
        ({"kind": "thin", "instances": 4}, 4),
        ({"kind": "unicorn", "instances": 64, "workers": 64}, 64 * 65),
        ({"kind": "unicorn", "instances": 2, "workers": 1}, 4),
        ({"kind": "puma", "instances": 2}, 2),  # workers 0: single mode, one process
        ({"kind": "puma", "instances": 2, "workers": 3}, 8),
        ({"kind": "uvicorn", "instances": 3}, 3),  # one worker runs in the listening process
        ({"kind": "uvicorn", "instances": 1, "workers": 4}, 5),
        ({"kind": "passenger", "instances": 2, "workers": 3}, 2 * (3 + 7)),  # its own 7 besides the app's
    ],
)
def test_server_processes_count_masters_and_workers(server: dict[str, Any], processes: int) -> None:
    kind = "asgi" if server["kind"] == "uvicorn" else "sinatra"
    stack = {"name": "s", "port": 8001, "app": {"kind": kind}, "server": server, "front": {"kind": "nginx"}}
    assert server_processes(resolve(stack)) == processes
    assert server_processes(resolve(static())) == 0


def test_a_url_path_over_the_length_limit_is_refused() -> None:
    stack = static()
    stack["path"] = "/" + "a" * MAX_URL_PATH
    with pytest.raises(
        StackError, match=f"path: must be a URL path of at most 1_500 characters, not {MAX_URL_PATH + 1:_}"
    ):
        resolve_stack(stack)
    stack["path"] = "/" + "a" * (MAX_URL_PATH - 1)
    assert resolve_stack(stack)["path"] == stack["path"]
