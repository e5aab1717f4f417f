"""The nginx role's server blocks, rendered by Ansible's own templating from the role's vars, for stacks
resolved by benchstack.plan.stacks: what nginx serves from an app folder (issue 29, item 2)."""

import re
from typing import Any

from conftest import render_template

from benchstack.plan.rolecontract import project, stack_fields
from benchstack.plan.stacks import resolve_stack


def server_block(stack: dict[str, Any]) -> str:
    # As the plan hands it over: only the fields the role's argument_specs declare.
    stacks = [project(resolve_stack(stack), stack_fields("nginx"))]
    text = render_template("nginx", "bench-stack.conf.j2", "Debian", nginx_stacks=stacks)
    return text[text.index("server {") :]


def directives(block: str) -> list[str]:
    return [line.strip() for line in block.splitlines() if line.strip() and not line.strip().startswith("#")]


def test_a_static_stack_follows_no_link_below_its_app_folder() -> None:
    block = server_block(
        {"name": "static-nginx", "port": 8091, "app": {"kind": "static"}, "front": {"kind": "nginx"}}
    )
    lines = directives(block)
    assert "root /opt/bench-stack/apps/static;" in lines
    assert "disable_symlinks on from=$document_root;" in lines
    assert lines.index("disable_symlinks on from=$document_root;") < lines.index("location / {")


def test_a_php_fpm_stack_sends_every_path_to_its_entry_and_serves_no_file_as_it_is() -> None:
    block = server_block(
        {
            "name": "php-fpm",
            "port": 8092,
            "app": {"kind": "php"},
            "server": {"kind": "php-fpm"},
            "front": {"kind": "nginx"},
        }
    )
    lines = directives(block)
    # try_files $uri served every existing file of the app folder as it is: other .php sources, configs.
    assert not [line for line in lines if re.match(r"try_files\b", line)]
    location = block[block.index("location / {") :]
    assert directives(location[: location.index("}")]) == ["location / {", "rewrite ^ /index.php last;"]
    assert "fastcgi_param SCRIPT_FILENAME $document_root/index.php;" in lines
