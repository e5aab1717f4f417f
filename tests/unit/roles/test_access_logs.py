"""The fronts' access logs for an experiment that ships them (issue 42, item 3): nginx's tuned server blocks
keep theirs on with nginx_access_log, Apache's virtual hosts log in the combined format to the path the
log_shipper role tails; both stay off by default, as the tuned profile has it."""

from typing import Any

import pytest
from conftest import render_template, role_vars

from benchstack.plan.rolecontract import project, stack_fields
from benchstack.plan.stacks import resolve_stack

NGINX = {"name": "web", "port": 8001, "app": {"kind": "static"}, "front": {"kind": "nginx"}}
APACHE = {"name": "web", "port": 8002, "app": {"kind": "static"}, "front": {"kind": "apache"}}


def lines(text: str) -> list[str]:
    return [line.strip() for line in text.splitlines() if line.strip() and not line.strip().startswith("#")]


def nginx_block(**variables: Any) -> list[str]:
    stacks = [project(resolve_stack(NGINX), stack_fields("nginx"))]
    return lines(render_template("nginx", "bench-stack.conf.j2", "Debian", nginx_stacks=stacks, **variables))


def apache_vhost(family: str, **variables: Any) -> list[str]:
    stack = project(resolve_stack(APACHE), stack_fields("apache"))
    return lines(render_template("apache", "vhost.conf.j2", family, stack=stack, **variables))


def test_a_tuned_nginx_server_logs_only_when_the_run_ships_its_access_log() -> None:
    assert "access_log off;" in nginx_block()
    logged = nginx_block(nginx_access_log=True)
    # No access_log of its own: the http context's, the distribution's access.log, which fluentd tails.
    assert not [line for line in logged if line.startswith("access_log")]
    assert "etag off;" in logged  # the rest of the profile stays


@pytest.mark.parametrize("family", ["Debian", "RedHat"])
def test_an_apache_instance_logs_where_the_log_shipper_tails_only_when_the_run_ships(family: str) -> None:
    assert not [line for line in apache_vhost(family) if line.startswith("CustomLog")]
    tailed = role_vars("log_shipper", family)["__log_shipper_access_logs"]["apache"]
    combined = r'"%h %l %u %t \"%r\" %>s %b \"%{Referer}i\" \"%{User-Agent}i\""'
    assert f"CustomLog {tailed} {combined}" in apache_vhost(family, apache_access_log=True)
