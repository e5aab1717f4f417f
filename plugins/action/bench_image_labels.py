"""Action (controller only): make sure the local Docker engine answers, then read the labels of base images.

images.yml rebuilds an image only when its recipe label differs. As a local ``command`` task (the engine
script) plus ``community.docker.docker_image_info`` plus a set_fact loop this cost 1.7 s of every cold
converge on a loaded 2-core machine, for work the docker CLI does in 0.05 s: each local module execution
packs and starts a Python process of its own. Here the engine script and one ``docker image inspect`` run
from the controller's own process.
"""

from __future__ import annotations

import subprocess
from typing import Any

from ansible.errors import AnsibleActionFail

from benchstack.actionargs import BenchAction, action_args
from benchstack.provision.localdocker import DockerError, images_by_tag, inspect


def labels_by_tag(inspect_json: str, tags: list[str]) -> dict[str, dict[str, str]]:
    """`docker image inspect`'s answer: the labels of each asked tag it names."""
    return {
        tag: (image.get("Config") or {}).get("Labels") or {}
        for tag, image in images_by_tag(inspect_json, tags).items()
    }


# What a task may pass: the options documented in plugins/modules/bench_image_labels.py (ansible-doc).
ARGS = action_args(__file__)


class ActionModule(BenchAction):
    ARGS = ARGS

    def check_args(self, args: dict[str, Any]) -> None:
        if not all(args["tags"] or []):
            raise self.failure("tags must be a list of image tags")

    def act(self, result: dict[str, Any], args: dict[str, Any], task_vars: dict[str, Any]) -> dict[str, Any]:
        tags = args["tags"] or []
        result.update(changed=False, labels={})
        if not tags:
            return result
        engine = args["engine_script"]
        if engine and not self._task.check_mode:
            started = subprocess.run([engine], capture_output=True, text=True, check=False)
            if started.returncode != 0:
                raise AnsibleActionFail(f"{engine} failed: {(started.stderr or started.stdout).strip()}")
        try:
            result["labels"] = labels_by_tag(inspect(["image", "inspect", *tags], "no such image"), tags)
        except DockerError as exc:
            raise AnsibleActionFail(str(exc)) from exc
        return result
