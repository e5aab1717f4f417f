"""The local Docker engine as the controller-side actions see it: `docker ... inspect` run and read.

images.yml (``bench_image_labels``) and hosts.yml (``bench_containers``) each ask one ``docker inspect``
instead of a local module run per image or container (a Python process each, a second or more on a loaded
2-core machine).
"""

from __future__ import annotations

import hashlib
import json
import subprocess
from typing import Any


class DockerError(Exception):
    """The docker CLI failed for another reason than an object that does not exist."""


def inspect(args: list[str], missing: str) -> str:
    """`docker ARGS`'s JSON. A missing object makes the exit status 1 but the others are still printed:
    errors that contain ``missing`` (lower case, as "no such image") are not failures."""
    done = subprocess.run(["docker", *args], capture_output=True, text=True, check=False)
    errors = [e for e in done.stderr.splitlines() if e.strip() and missing not in e.lower()]
    if done.returncode != 0 and errors:
        raise DockerError(f"docker {' '.join(args[:2])} failed: {'; '.join(errors)}")
    return done.stdout


def images_by_tag(inspect_json: str, tags: list[str]) -> dict[str, dict[str, Any]]:
    """`docker image inspect`'s answer, indexed by the asked tags it names."""
    found: dict[str, dict[str, Any]] = {}
    for image in json.loads(inspect_json or "[]"):
        for tag in image.get("RepoTags") or []:
            if tag in tags:
                found[tag] = image
    return found


def settings_hash(settings: dict[str, Any]) -> str:
    """The same settings give the same hash whatever their keys' order."""
    return hashlib.sha256(json.dumps(settings, sort_keys=True).encode()).hexdigest()[:32]


def current_containers(
    inspect_json: str, wanted: dict[str, dict[str, Any]], label: str, image_ids: dict[str, str]
) -> list[str]:
    """The names in ``wanted`` whose container (`docker container inspect`'s answer) runs, from the image
    its settings' tag names now, with ``label`` holding the hash of those settings: docker_container can
    skip them."""
    found = {c.get("Name", "").lstrip("/"): c for c in json.loads(inspect_json or "[]")}
    current = []
    for name, settings in wanted.items():
        c = found.get(name)
        if c is None or not (c.get("State") or {}).get("Running"):
            continue
        if ((c.get("Config") or {}).get("Labels") or {}).get(label) != settings_hash(settings):
            continue
        # docker_container re-creates a container whose tag now names another image (a rebuilt base image).
        if c.get("Image") != image_ids.get(settings.get("image", "")):
            continue
        current.append(name)
    return current
