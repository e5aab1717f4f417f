"""Provisioning markers (benchstack.provision.markers, roles): which roles a re-run skips, and what the host
records."""

import dataclasses
import json
import shlex
from pathlib import Path

from conftest import read_yaml

from benchstack.plan import roles as provision
from benchstack.plan.readers import Needs
from benchstack.plan.stacks import resolve_stacks
from benchstack.provision import hostcommand, hostrecord, markers

ROLES = ["host", "ruby", "webapp", "app_server", "nginx", "loadgen"]
HASHES = {role: f"h-{role}" for role in ROLES}
UNITS = {"app_server": ["bench-a@1.service", "bench-a@2.service"], "nginx": ["nginx.service"]}
ALL_UNITS = [u for units in UNITS.values() for u in units]


def recorded(hashes: dict[str, str] = HASHES, facts: dict[str, dict] | None = None) -> dict:
    facts = facts or {}
    return {
        "schema": hostrecord.SCHEMA,
        "roles": {r: {"hash": h, "facts": facts.get(r, {}), "at": "t"} for r, h in hashes.items()},
    }


def active(*down: str) -> dict[str, bool]:
    return {u: u not in down for u in ALL_UNITS}


def test_nothing_changed_and_every_service_active_skips_every_role_and_restores_their_facts() -> None:
    record = recorded(facts={"ruby": {"ruby_bin_dir": "/usr/bin", "ruby_bin_dirs": {}}})
    d = markers.decide(ROLES, HASHES, record, UNITS, active())
    assert d.run == {}
    assert d.skip == ROLES
    assert d.facts == {"ruby_bin_dir": "/usr/bin", "ruby_bin_dirs": {}}


def test_a_fresh_host_runs_every_role() -> None:
    d = markers.decide(ROLES, HASHES, {}, UNITS, {})
    assert list(d.run) == ROLES
    assert set(d.run.values()) == {"no record of it on this host"}


def test_a_changed_input_reruns_that_role_and_the_roles_that_depend_on_it_only() -> None:
    d = markers.decide(ROLES, {**HASHES, "ruby": "new"}, recorded(), UNITS, active())
    assert d.run == {"ruby": "its inputs changed", "app_server": "ruby runs"}
    assert d.skip == ["host", "webapp", "nginx", "loadgen"]


def test_a_service_that_is_down_reruns_the_role_that_keeps_it() -> None:
    d = markers.decide(ROLES, HASHES, recorded(), UNITS, active("bench-a@2.service"))
    assert d.run == {"app_server": "not active: bench-a@2.service"}


def test_skip_unchanged_off_runs_every_role() -> None:
    d = markers.decide(ROLES, HASHES, recorded(), UNITS, active(), skip_unchanged=False)
    assert list(d.run) == ROLES and d.skip == []


def test_the_record_keeps_skipped_roles_and_takes_the_new_hashes_and_facts_of_those_that_ran() -> None:
    old = recorded(facts={"ruby": {"ruby_bin_dir": "/old"}})
    d = markers.decide(ROLES, {**HASHES, "ruby": "new"}, old, UNITS, active())
    after = hostrecord.record_after(old, d, {"ruby_bin_dir": "/usr/bin", "ruby_bin_dirs": {}}, "now")
    assert after["roles"]["ruby"] == {
        "hash": "new",
        "facts": {"ruby_bin_dir": "/usr/bin", "ruby_bin_dirs": {}},
        "at": "now",
    }
    assert (
        after["roles"]["app_server"]["hash"] == "h-app_server" and after["roles"]["app_server"]["at"] == "now"
    )
    assert after["roles"]["nginx"] == old["roles"]["nginx"]


def test_the_roles_about_to_run_lose_their_record_first() -> None:
    assert set(hostrecord.without(recorded(), ["ruby", "app_server"])["roles"]) == {
        "host",
        "webapp",
        "nginx",
        "loadgen",
    }


def test_reading_the_record_and_the_units_is_one_command_and_parses_back(tmp_path: Path) -> None:
    command = hostcommand.read_command(ALL_UNITS)
    # One Python on the host, no shell around it: it reads the record and the units' states itself.
    assert shlex.split(command)[:2] == ["python3", "-c"] and len(shlex.split(command)) == 4
    text = f"{hostrecord.write_command(recorded())}"
    assert text.startswith("mkdir -p /var/lib/bench-stack")
    stdout = "\n".join([json.dumps(recorded()), "", hostcommand.SEPARATOR, "active", "failed", "active"])
    record, states = hostcommand.parse_read(stdout, ALL_UNITS)
    assert record == recorded()
    assert states == {"bench-a@1.service": True, "bench-a@2.service": False, "nginx.service": True}


def test_a_missing_or_foreign_record_reads_as_none() -> None:
    assert hostcommand.parse_read(f"\n{hostcommand.SEPARATOR}\nactive\n", ["x"]) == ({}, {"x": True})
    assert hostcommand.parse_read(f"not json\n{hostcommand.SEPARATOR}\n", ["x"]) == ({}, {"x": False})
    assert hostcommand.parse_read(f'{{"roles": {{}}}}\n{hostcommand.SEPARATOR}\n', []) == ({}, {})


def test_a_role_hash_changes_with_its_files_variables_and_os_but_not_with_other_facts() -> None:
    facts = {"distribution": "Debian", "distribution_major_version": "12", "os_family": "Debian"}
    base = markers.role_hash("f", {"nginx_profile": "tuned"}, facts)
    assert markers.role_hash("g", {"nginx_profile": "tuned"}, facts) != base
    assert markers.role_hash("f", {"nginx_profile": "stock"}, facts) != base
    assert (
        markers.role_hash("f", {"nginx_profile": "tuned"}, {**facts, "distribution_major_version": "13"})
        != base
    )
    assert markers.role_hash("f", {"nginx_profile": "tuned"}, {**facts, "uptime_seconds": 5}) == base


def test_a_role_sees_its_own_variables_only_not_the_facts_it_exports() -> None:
    variables = {
        "webapp_kinds": ["sinatra"],
        "app_server_stacks": [],
        "webapp_changed_dirs": ["/opt/bench-stack/apps/sinatra"],
        "webapp_bundled_dirs": ["/opt/bench-stack/apps/user/shop"],
        "ruby_gems": ["thin"],
        "ruby_bin_dir": "/usr/bin",
    }
    assert markers.role_variables("webapp", variables) == {"webapp_kinds": ["sinatra"]}
    assert markers.role_variables("ruby", variables) == {"ruby_gems": ["thin"]}


def test_no_roles_variable_prefix_starts_another_roles_or_the_projects_own() -> None:
    # role_variables selects a role's variables by prefix alone: app_ took in app_server_*, bench_host_ the
    # project's bench_* (issue 26, item 5), and the hash that decides a re-run hashed another role's inputs.
    roles = sorted(p.name for p in (Path(__file__).resolve().parents[3] / "roles").iterdir() if p.is_dir())
    prefixes = [f"{role}_" for role in roles]
    clashes = [(a, b) for a in prefixes for b in [*prefixes, "bench_"] if a != b and b.startswith(a)]
    clashes += [(a, "bench_") for a in prefixes if a.startswith("bench_")]
    assert clashes == []
    variables = {
        "webapp_kinds": ["sinatra"],
        "app_server_stacks": [],
        "host_profile": "tuned",
        "bench_user": "b",
    }
    assert markers.role_variables("host", variables) == {"host_profile": "tuned"}


# A host an older bench-stack provisioned records the renamed roles (webapp, host) under their old names.
OLD_NAMES = {"app": "h-old-app", "bench_host": "h-old-host"}  # rename-roles: keep


def test_a_host_recorded_under_the_old_role_names_runs_the_renamed_roles_once_and_forgets_the_old() -> None:
    record = recorded({**{r: h for r, h in HASHES.items() if r not in ("webapp", "host")}, **OLD_NAMES})
    d = markers.decide(ROLES, HASHES, record, UNITS, active())
    new = "no record of it on this host"
    assert d.run == {"host": new, "webapp": new, "app_server": "webapp runs"}
    assert d.skip == ["ruby", "nginx", "loadgen"]
    # Written before the roles run (bench_provision_state) and after (bench_provision_record): no old entry.
    assert set(hostrecord.without(record, d.run)["roles"]) == {"ruby", "nginx", "loadgen"}
    after = hostrecord.record_after(record, d, {}, "now")
    assert set(after["roles"]) == set(ROLES)
    assert not hostrecord.same_state(record, after)
    # The next run finds every role recorded under its own name and skips them all.
    again = markers.decide(ROLES, HASHES, after, UNITS, active())
    assert again.run == {} and again.skip == ROLES


def test_a_file_tree_hash_sees_contents_and_names(tmp_path: Path) -> None:
    (tmp_path / "r" / "tasks").mkdir(parents=True)
    (tmp_path / "r" / "tasks" / "main.yml").write_text("a")
    first = markers.tree_hash([tmp_path / "r"])
    (tmp_path / "r" / "tasks" / "main.yml").write_text("b")
    second = markers.tree_hash([tmp_path / "r"])
    (tmp_path / "r" / "tasks" / "main.yml").rename(tmp_path / "r" / "tasks" / "other.yml")
    assert len({first, second, markers.tree_hash([tmp_path / "r"])}) == 3


def test_rerunning_every_role_with_the_same_inputs_changes_nothing_in_the_record() -> None:
    old = recorded(facts={"ruby": {"ruby_bin_dir": "/usr/bin", "ruby_bin_dirs": {}}})
    d = markers.decide(ROLES, HASHES, old, UNITS, active(), skip_unchanged=False)
    after = hostrecord.record_after(old, d, {"ruby_bin_dir": "/usr/bin", "ruby_bin_dirs": {}}, "later")
    assert hostrecord.same_state(old, after)
    changed = hostrecord.record_after(
        old, d, {"ruby_bin_dir": "/opt/rbenv/bin", "ruby_bin_dirs": {}}, "later"
    )
    assert not hostrecord.same_state(old, changed)


def test_what_changed_in_one_run_is_neither_recorded_nor_restored() -> None:
    d = markers.decide(ROLES, {**HASHES, "webapp": "new"}, recorded(), UNITS, active())
    after = hostrecord.record_after(
        recorded(), d, {"webapp_changed_dirs": ["/opt/bench-stack/apps/sinatra"]}, "now"
    )
    assert after["roles"]["webapp"]["facts"] == {}
    rerun = markers.decide(ROLES, {**HASHES, "webapp": "new"}, after, UNITS, active())
    assert "webapp_changed_dirs" not in rerun.facts


def test_which_users_apps_run_through_bundle_exec_is_restored_when_the_app_role_is_skipped() -> None:
    d = markers.decide(ROLES, {**HASHES, "webapp": "new"}, recorded(), UNITS, active())
    bundled = {"webapp_bundled_dirs": ["/opt/bench-stack/apps/user/shop"], "webapp_changed_dirs": []}
    after = hostrecord.record_after(recorded(), d, bundled, "now")
    assert after["roles"]["webapp"]["facts"] == {"webapp_bundled_dirs": ["/opt/bench-stack/apps/user/shop"]}
    rerun = markers.decide(ROLES, {**HASHES, "webapp": "new"}, after, UNITS, active())
    assert "webapp" not in rerun.run
    assert rerun.facts["webapp_bundled_dirs"] == ["/opt/bench-stack/apps/user/shop"]


def test_the_roles_whose_packages_install_at_once_are_the_ones_with_a_packages_entry_point() -> None:
    roles = Path(__file__).resolve().parents[3] / "roles"
    with_entry = {p.parent.parent.name for p in roles.glob("*/tasks/packages.yml")}
    assert set(provision.PACKAGED) == with_entry
    # Each takes <role>_install_packages, which provision.yml sets false for a run that installs at once.
    playbook = read_yaml(roles.parent / "playbooks" / "vars" / "roles.yml")
    assert {
        name.removesuffix("_install_packages") for name in playbook if name.endswith("_install_packages")
    } == (with_entry)


def test_the_packages_of_the_roles_that_run_install_at_once_unless_tags_limit_or_skip_them() -> None:
    run = ["host", "ruby", "webapp", "app_server", "nginx", "loadgen"]
    assert provision.package_roles(run, ["all"], []) == ["host", "ruby", "nginx", "loadgen"]
    # --tags: every role installs its own.
    assert provision.package_roles(run, ["bench_ruby"], []) == []
    # --skip-tags of a role or of its install stage leaves its packages out (host's tag: bench_host).
    skipped = ["bench_ruby_install", "bench_nginx", "bench_host", "bench_loadgen_config", "other"]
    assert provision.skipped_roles(skipped) == ["host", "ruby", "nginx"]
    assert provision.package_roles(run, ["all"], skipped) == ["loadgen"]


def needs_of(**given: tuple[str, ...]) -> Needs:
    """Needs with ``given`` fields, the others empty."""
    empty = {f.name: () for f in dataclasses.fields(Needs)}
    return Needs(**{**empty, "front_roles": {}, **given})


def test_a_target_runs_the_roles_its_stacks_need_in_provisioning_order() -> None:
    needs = needs_of(runtimes=("python", "ruby"), servers=("thin",), fronts=("apache", "nginx"))
    assert provision.target_roles(needs) == ["ruby", "python", "webapp", "app_server", "nginx", "apache"]
    # Server::Starter's start_server runs the Ruby Starlet: Perl without a Perl stack.
    static = needs_of(perl_modules=("Server::Starter",), fronts=("nginx",))
    assert provision.target_roles(static) == ["perl", "webapp", "nginx"]
    assert provision.host_roles(static, target=True, loadgen=True) == [
        "host",
        "perl",
        "webapp",
        "nginx",
        "loadgen",
    ]
    assert provision.host_roles(static, target=False, loadgen=True) == ["host", "loadgen"]


def test_the_units_and_files_each_role_keeps_depend_on_the_os_family_where_apache_names_them() -> None:
    stacks = resolve_stacks(
        [
            {
                "name": "a",
                "app": {"kind": "sinatra"},
                "server": {"kind": "thin", "instances": 2},
                "front": {"kind": "nginx"},
                "port": 8001,
            },
            {"name": "b", "app": {"kind": "static"}, "front": {"kind": "apache"}, "port": 8002},
        ]
    )
    debian, redhat = (provision.role_units(stacks, family) for family in ("Debian", "RedHat"))
    assert debian["app_server"] == redhat["app_server"] == ["bench-a@1.service", "bench-a@2.service"]
    assert debian["apache"] == ["apache2@bench-b.service"] and redhat["apache"] == ["httpd@bench-b.service"]
    made = provision.role_made(stacks, "Debian")
    assert made["app_server"] == {
        "files": ["/etc/systemd/system/bench-a@.service", "/etc/bench-stack/units/a.env"],
        "units": debian["app_server"],
    }
    assert made["apache"] == {
        "files": ["/etc/apache2-bench-b/sites-available/bench-stack.conf"],
        "units": ["apache2@bench-b.service"],
    }
    assert provision.role_made(stacks, "RedHat")["apache"]["files"] == []
    assert provision.host_sysctls("tuned", {"net.core.somaxconn": 4096}) == ["net.core.somaxconn"]
    assert provision.host_sysctls("stock", {"net.core.somaxconn": 4096}) == []


def test_provisioning_includes_every_role_a_host_can_get_once_and_in_dependency_order() -> None:
    root = Path(__file__).resolve().parents[3]
    play = read_yaml(root / "playbooks" / "provision.yml")[1]
    loops = [
        task["loop"]
        for task in play["tasks"]
        if (task.get("ansible.builtin.include_role") or {}).get("name") == "{{ bench_role }}"
        and "tasks_from" not in task["ansible.builtin.include_role"]
    ]
    # Both stages, in order, around the sweep of what no stack owns.
    assert loops == ["{{ bench_provision.stages[0] }}", "{{ bench_provision.stages[1] }}"]
    every = needs_of(
        runtimes=provision.RUNTIMES, servers=("thin",), fronts=("nginx", "apache"), log_shipping=("nginx",)
    )
    included = provision.host_roles(every, target=True, loadgen=True)
    roles = {p.parent.parent.name for p in (root / "roles").glob("*/tasks/main.yml")}
    # build_archive is included by ruby and python; dns_check runs in playbooks/dns_check.yml; log_shipper
    # runs after the fronts when the experiment ships their access logs (its logs).
    assert sorted(included) == sorted(roles - {"build_archive", "dns_check"})
    assert included.index("log_shipper") > max(included.index("nginx"), included.index("apache"))
    for role, needs in markers.DEPENDS.items():
        assert all(included.index(n) < included.index(role) for n in needs), role
    first, then = provision.stages(included)
    assert first + then == included and then == list(provision.SECOND_STAGE)


def test_the_package_list_a_role_names_is_not_one_of_its_inputs() -> None:
    variables = {"ruby_gems": ["thin"], "ruby_os_packages": ["ruby", "thin"], "ruby_install_packages": False}
    expected = {"ruby_gems": ["thin"], "ruby_install_packages": False}
    assert markers.role_variables("ruby", variables) == expected


def test_role_default_is_one_variable_of_the_roles_defaults_and_none_for_a_name_it_lacks(
    tmp_path: Path,
) -> None:
    (tmp_path / "r" / "defaults").mkdir(parents=True)
    (tmp_path / "r" / "defaults" / "main.yml").write_text(
        "r_profile: stock\nr_sysctls: {net.core.somaxconn: 4096}\n"
    )
    assert provision.role_default("r", "r_profile", tmp_path) == "stock"
    assert provision.role_default("r", "r_sysctls", tmp_path) == {"net.core.somaxconn": 4096}
    assert provision.role_default("r", "r_missing", tmp_path) is None
    assert provision.role_default("host", "host_profile") == "stock"
