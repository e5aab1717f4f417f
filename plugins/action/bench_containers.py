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

import hashlib
import json
import subprocess
from typing import Any

from ansible.errors import AnsibleActionFail
from ansible.plugins.action import ActionBase

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


def settings_hash(settings: dict[str, Any]) -> str:
    """The same settings give the same hash whatever their keys' order."""
    return hashlib.sha256(json.dumps(settings, sort_keys=True).encode()).hexdigest()[:32]


def current_containers(
    inspect_json: str, wanted: dict[str, dict[str, Any]], label: str, image_ids: dict[str, str]
) -> list[str]:
    """The names in ``wanted`` whose container (in `docker inspect`'s answer) docker_container can skip."""
    found = {c.get("Name", "").lstrip("/"): c for c in json.loads(inspect_json or "[]")}
    current = []
    for name, settings in wanted.items():
        c = found.get(name)
        if c is None or not (c.get("State") or {}).get("Running"):
            continue
        labels = (c.get("Config") or {}).get("Labels") or {}
        if labels.get(label) != settings_hash(settings):
            continue
        # docker_container re-creates a container whose tag now names another image (a rebuilt base image).
        if c.get("Image") != image_ids.get(settings.get("image", "")):
            continue
        current.append(name)
    return current


def image_ids(inspect_json: str, tags: list[str]) -> dict[str, str]:
    """`docker image inspect`'s answer: the image id each asked tag names."""
    ids: dict[str, str] = {}
    for image in json.loads(inspect_json or "[]"):
        for tag in image.get("RepoTags") or []:
            if tag in tags:
                ids[tag] = image.get("Id", "")
    return ids


def _inspect(args: list[str], missing: str) -> str:
    done = subprocess.run(["docker", *args], capture_output=True, text=True, check=False)
    # A missing object makes the exit status 1 but the others are still printed; any other error is fatal.
    errors = [e for e in done.stderr.splitlines() if e.strip() and missing not in e.lower()]
    if done.returncode != 0 and errors:
        raise AnsibleActionFail(f"docker {' '.join(args[:2])} failed: {'; '.join(errors)}")
    return done.stdout


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
            ids = image_ids(_inspect(["image", "inspect", *tags], "no such image"), tags)
            found = _inspect(["container", "inspect", *wanted], "no such container")
            current = current_containers(found, wanted, label, ids)
        result.update(
            changed=False, current=current, stale=[n for n in wanted if n not in current], hashes=hashes
        )
        return result
