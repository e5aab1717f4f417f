"""benchstack.provision.localdocker: the containers hosts.yml (bench_containers) leaves alone, from
`docker inspect`.

The capture (tests/data/docker/container-inspect.json) holds bench-local as hosts.yml started it (running,
labelled), bench-capture-old started with the same settings by `docker run` without the label (running), and
bench-capture-stopped started with the same settings and label, then stopped.
"""

from __future__ import annotations

import json
from pathlib import Path

from conftest import read_yaml

from benchstack.provision import localdocker as containers

DATA = Path(__file__).resolve().parents[2] / "data" / "docker"
CONTAINERS = (DATA / "container-inspect.json").read_text()
IMAGES = (DATA / "container-images.json").read_text()
LABEL = "org.bench-stack.container"
ROOT = Path(__file__).resolve().parents[3]


def wanted_settings() -> dict:
    """What hosts.yml gives bench-local: its base settings plus the default inventory's bench_container."""
    play = next(p for p in read_yaml(ROOT / "playbooks" / "hosts.yml")
                if p.get("name") == "Local Docker containers")  # fmt: skip
    host = read_yaml(ROOT / "inventories" / "local" / "host_vars" / "bench-local.yml")
    return {**host["bench_container"], **play["vars"]["bench_container_base"]}


def ids() -> dict[str, str]:
    images = containers.images_by_tag(IMAGES, ["bench-stack/debian:bookworm"])
    return {tag: image["Id"] for tag, image in images.items()}


def test_the_capture_is_what_hosts_yml_made() -> None:
    # The label in the capture is the hash of today's settings: a change to hosts.yml's base settings or to
    # the default inventory turns this red, and the capture must be taken again.
    (local,) = [c for c in json.loads(CONTAINERS) if c["Name"] == "/bench-local"]
    assert local["Config"]["Labels"][LABEL] == containers.settings_hash(wanted_settings())


def test_a_running_container_with_the_wanted_hash_and_image_is_left_alone() -> None:
    assert containers.current_containers(CONTAINERS, {"bench-local": wanted_settings()}, LABEL, ids()) == [
        "bench-local"
    ]


def test_other_settings_than_the_label_records_go_to_docker_container() -> None:
    changed = {**wanted_settings(), "sysctls": {"net.core.somaxconn": "1024"}}
    assert containers.current_containers(CONTAINERS, {"bench-local": changed}, LABEL, ids()) == []


def test_a_rebuilt_image_goes_to_docker_container() -> None:
    rebuilt = {"bench-stack/debian:bookworm": "sha256:" + "0" * 64}
    assert containers.current_containers(CONTAINERS, {"bench-local": wanted_settings()}, LABEL, rebuilt) == []


def test_a_stopped_unlabelled_or_missing_container_goes_to_docker_container() -> None:
    for name in ("bench-capture-stopped", "bench-capture-old", "bench-nosuch"):
        assert containers.current_containers(CONTAINERS, {name: wanted_settings()}, LABEL, ids()) == [], name
    assert containers.current_containers("[]\n", {"bench-local": wanted_settings()}, LABEL, ids()) == []


def test_the_hash_ignores_key_order_only() -> None:
    settings = wanted_settings()
    reordered = dict(reversed(list(settings.items())))
    assert containers.settings_hash(reordered) == containers.settings_hash(settings)
    other = {**settings, "image": "bench-stack/debian:trixie"}
    assert containers.settings_hash(other) != containers.settings_hash(settings)


def test_image_ids_index_the_asked_tags() -> None:
    assert list(ids()) == ["bench-stack/debian:bookworm"]
    assert ids()["bench-stack/debian:bookworm"].startswith("sha256:")
    assert containers.images_by_tag(IMAGES, ["nosuch:tag"]) == {}
