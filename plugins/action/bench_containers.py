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
from ansible.plugins.action import ActionBase

from benchstack.localdocker import DockerError, current_containers, images_by_tag, inspect, settings_hash

DOCUMENTATION = """
module: bench_containers
short_description: Tell which containers run as wanted; give each one's settings hash for its label
options:
  containers:
    description: Per container name, the docker_container settings hosts.yml starts it with (image included).
    type: dict
    required: true
  label: {description: The label that holds a container's settings hash., type: str, required: true}
"""
RETURN = """
current: {description: Names whose container runs its tag's image and has the wanted hash., type: list}
stale: {description: "The others, in the order given: missing, stopped, older image or settings.", type: list}
hashes: {description: Per name, the hash of its wanted settings (the label's value)., type: dict}
"""


class ActionModule(ActionBase):
    TRANSFERS_FILES = False
    _VALID_ARGS = frozenset(("containers", "label"))

    def run(self, tmp: Any = None, task_vars: dict[str, Any] | None = None) -> dict[str, Any]:
        result = super().run(tmp, task_vars)
        wanted = self._task.args.get("containers")
        label = self._task.args.get("label")
        if not isinstance(wanted, dict) or not all(isinstance(s, dict) for s in wanted.values()):
            raise AnsibleActionFail("bench_containers: containers must map each name to its settings")
        if not isinstance(label, str) or not label:
            raise AnsibleActionFail("bench_containers: label must name the label that holds the hash")
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
