"""bench_image_labels: the recipe labels of base images read from real `docker image inspect` output."""

from __future__ import annotations

from pathlib import Path

from test_plugins import load_plugin

image_labels = load_plugin("action", "bench_image_labels")
CAPTURE = (Path(__file__).resolve().parents[2] / "data" / "docker" / "image-inspect.json").read_text()


def test_labels_are_indexed_by_the_asked_tags() -> None:
    labels = image_labels.labels_by_tag(CAPTURE, ["bench-stack/debian:bookworm", "bench-stack/debian:trixie"])
    assert sorted(labels) == ["bench-stack/debian:bookworm", "bench-stack/debian:trixie"]
    for tag in labels:
        (recipe,) = labels[tag].values()
        assert list(labels[tag]) == ["org.bench-stack.recipe"] and len(recipe) == 40


def test_a_tag_not_asked_for_or_missing_is_left_out() -> None:
    assert list(image_labels.labels_by_tag(CAPTURE, ["bench-stack/debian:trixie", "nosuch:tag"])) == [
        "bench-stack/debian:trixie"
    ]
    assert image_labels.labels_by_tag("[]\n", ["nosuch:tag"]) == {}
