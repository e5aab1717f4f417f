"""The apache role's virtual hosts, rendered by Ansible's own templating from the role's vars, for stacks
resolved by benchstack.plan.stacks: what an Apache instance serves from an app folder (issue 29, item 2)."""

from pathlib import Path
from typing import Any

import pytest
from ansible.parsing.dataloader import DataLoader
from ansible.template import Templar, trust_as_template

from benchstack.plan.rolecontract import project, stack_fields
from benchstack.plan.stacks import resolve_stack

ROLE = Path(__file__).resolve().parents[3] / "roles" / "apache"


def vhost(stack: dict[str, Any], family: str = "Debian") -> list[str]:
    """The virtual host's directives, one per line, comments left out."""
    loader = DataLoader()
    variables: dict[str, Any] = {"ansible_managed": "managed"}
    for part in ("defaults/main.yml", f"vars/{family}.yml"):
        variables.update(loader.load_from_file(str(ROLE / part)))
    variables = {k: trust_as_template(v) if isinstance(v, str) else v for k, v in variables.items()}
    # As the plan hands it over: only the fields the role's argument_specs declare.
    variables["stack"] = project(resolve_stack(stack), stack_fields("apache"))
    source = (ROLE / "templates" / "vhost.conf.j2").read_text(encoding="utf-8")
    text = Templar(loader=loader, variables=variables).template(trust_as_template(source))
    return [line.strip() for line in text.splitlines() if line.strip() and not line.strip().startswith("#")]


PHP = {
    "name": "php-apache",
    "port": 8503,
    "app": {"kind": "php"},
    "front": {"kind": "apache", "mpm": "prefork"},
}


@pytest.mark.parametrize("family", ["Debian", "RedHat"])
def test_a_mod_php_stack_runs_its_entry_for_every_path_and_serves_no_other_file(family: str) -> None:
    lines = vhost(PHP, family)
    # FallbackResource served every existing file of the app folder: other .php files ran, configs were read.
    assert not [line for line in lines if line.startswith(("FallbackResource", "DirectoryIndex"))]
    assert 'AliasMatch "^/" "/opt/bench-stack/apps/php/index.php"' in lines
    directory = lines[lines.index("<Directory /opt/bench-stack/apps/php>") :]
    directory = directory[: directory.index("</Directory>") + 1]
    assert directory == [
        "<Directory /opt/bench-stack/apps/php>",
        "Options None",
        "AllowOverride None",
        "Require all denied",
        '<Files "index.php">',
        "Require all granted",
        "</Files>",
        "</Directory>",
    ]


def test_a_mod_php_stack_turns_on_the_module_that_maps_every_path() -> None:
    assert resolve_stack(PHP)["front"]["modules"] == ["mpm_prefork", "php", "alias"]


def test_a_static_stack_still_serves_its_folder() -> None:
    lines = vhost(
        {
            "name": "static-apache",
            "port": 8502,
            "app": {"kind": "static"},
            "front": {"kind": "apache", "mpm": "event"},
        }
    )
    assert "Require all granted" in lines and not [line for line in lines if "AliasMatch" in line]
