"""bench_app_tree: a bundled app's folder, as the filetree lookup lists it, turned into bench_files items."""

from __future__ import annotations

from pathlib import Path

import pytest
from ansible.errors import AnsibleFilterError
from test_plugins import load_plugin

apps = load_plugin("filter", "bench_apps")
FILES = Path(__file__).resolve().parents[3] / "roles" / "webapp" / "files"


def tree(kind: str) -> list[dict[str, str]]:
    """What community.general.filetree answers for roles/webapp/files/KIND (the fields the filter reads)."""
    root = FILES / kind
    return [
        {"path": str(p.relative_to(root)), "src": str(p), "state": "directory" if p.is_dir() else "file"}
        for p in sorted(root.rglob("*"))
    ]


def test_the_sinatra_app_becomes_its_folder_and_files_with_their_contents() -> None:
    out = apps.bench_app_tree(tree("sinatra"), "/opt/bench-stack/apps/sinatra", "root", "bench")
    assert out["folders"] == [
        {"path": "/opt/bench-stack/apps/sinatra", "mode": "0755", "owner": "root", "group": "bench"}
    ]
    assert [(f["path"], f["mode"], f["group"]) for f in out["files"]] == [
        ("/opt/bench-stack/apps/sinatra/app.rb", "0644", "bench"),
        ("/opt/bench-stack/apps/sinatra/config.ru", "0644", "bench"),
    ]
    assert out["files"][1]["content"] == (FILES / "sinatra" / "config.ru").read_text()


def test_a_subfolder_is_a_folder_and_an_empty_or_binary_app_is_refused(tmp_path: Path) -> None:
    sub = [{"path": "lib", "src": str(tmp_path / "lib"), "state": "directory"}]
    (tmp_path / "lib").mkdir()
    (tmp_path / "lib" / "a.rb").write_text("A = 1\n")
    sub.append({"path": "lib/a.rb", "src": str(tmp_path / "lib" / "a.rb"), "state": "file"})
    out = apps.bench_app_tree(sub, "/srv/app/", "root", "bench")
    assert [f["path"] for f in out["folders"]] == ["/srv/app/", "/srv/app/lib"]
    assert [(f["path"], f["content"]) for f in out["files"]] == [("/srv/app/lib/a.rb", "A = 1\n")]
    with pytest.raises(AnsibleFilterError, match="no files here"):
        apps.bench_app_tree([], "/srv/app/nosuch", "root", "bench")
    (tmp_path / "logo.png").write_bytes(b"\x89PNG\xff")
    with pytest.raises(AnsibleFilterError, match="must be UTF-8 text"):
        apps.bench_app_tree(
            [{"path": "logo.png", "src": str(tmp_path / "logo.png"), "state": "file"}], "/srv/a", "r", "g"
        )
