"""Action (controller only): which local hosts' containers already run exactly as hosts.yml would start them.

hosts.yml starts each local host with ``community.docker.docker_container``. Checking one container that
already runs as wanted cost that module 1.3-2.3 s of every converge (it packs and starts a Python process,
imports the Docker SDK and compares every option); ``docker inspect`` answers the same question in 0.05 s.
Each container hosts.yml creates carries a label with the hash of the settings it was created from. Here,
one ``docker inspect`` of the containers and their images tells which ones run, from the image their tag
names now, with the label of the settings wanted now: those are left alone. The others go to
docker_container, which compares, creates or re-creates them, and labels them with the current hash.
"""

from __future__ import annotations

from typing import Any

from ansible.errors import AnsibleActionFail

from benchstack.actionargs import BenchAction, action_args
from benchstack.provision.localdocker import (
    DockerError,
    current_containers,
    images_by_tag,
    inspect,
    settings_hash,
)

# What a task may pass: the options documented in plugins/modules/bench_containers.py (ansible-doc).
ARGS = action_args(__file__)


class ActionModule(BenchAction):
    ARGS = ARGS

    def check_args(self, args: dict[str, Any]) -> None:
        if not all(isinstance(s, dict) for s in args["containers"].values()):
            raise self.failure("containers must map each name to its settings")

    def act(self, result: dict[str, Any], args: dict[str, Any], task_vars: dict[str, Any]) -> dict[str, Any]:
        wanted, label = args["containers"], args["label"]
        hashes = {name: settings_hash(s) for name, s in wanted.items()}
        current: list[str] = []
        if wanted:
            tags = sorted({str(s.get("image", "")) for s in wanted.values()})
            try:
                images = images_by_tag(inspect(["image", "inspect", *tags], "no such image"), tags)
                found = inspect(["container", "inspect", *wanted], "no such container")
            except DockerError as exc:
                raise AnsibleActionFail(str(exc)) from exc
            ids = {tag: str(image.get("Id", "")) for tag, image in images.items()}
            current = current_containers(found, wanted, label, ids)
        result.update(
            changed=False, current=current, stale=[n for n in wanted if n not in current], hashes=hashes
        )
        return result
