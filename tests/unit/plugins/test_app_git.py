"""bench_app_git: a pinned version of a real git repository (made here, read over a file path as over HTTP)
exported into a release folder; branches refused unless the stack accepts a moving ref; a version the
repository lacks named with the stack and field."""

from __future__ import annotations

import grp
import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
from conftest import run_module, run_module_script
from test_plugins import load_plugin

git_mod = load_plugin("modules", "bench_app_git")
MODULE = Path(__file__).resolve().parents[3] / "plugins" / "modules" / "bench_app_git.py"
GIT_ENV = {
    **os.environ,
    "GIT_AUTHOR_DATE": "2000-01-01T00:00:00Z",
    "GIT_COMMITTER_DATE": "2000-01-01T00:00:00Z",
    "GIT_CONFIG_GLOBAL": "/dev/null",
}


def git(*args: str, cwd: Path) -> str:
    out = subprocess.run(["git", *args], cwd=cwd, env=GIT_ENV, capture_output=True, text=True, check=True)
    return out.stdout.strip()


@pytest.fixture(scope="module")
def made_repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The repository, made once (ten git commands; its commits' dates are fixed, so their shas too)."""
    tmp_path = tmp_path_factory.mktemp("app-git")
    work = tmp_path / "work"
    work.mkdir()
    (work / "app.py").write_text("app = 1\n", encoding="utf-8")
    (work / "requirements.txt").write_text("six\n", encoding="utf-8")
    git("init", "-q", "-b", "main", cwd=work)
    git("add", "-A", cwd=work)
    git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "one", cwd=work)
    git("tag", "v1", cwd=work)
    git("-c", "user.name=t", "-c", "user.email=t@t", "tag", "-a", "-m", "annotated", "v1-annotated", cwd=work)
    git("branch", "next", cwd=work)  # a branch that is not the default one
    (work / "app.py").write_text("app = 2\n", encoding="utf-8")
    git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-am", "two", cwd=work)
    bare = tmp_path / "shop.git"
    git("clone", "-q", "--bare", str(work), str(bare), cwd=tmp_path)
    return bare


@pytest.fixture
def repo(tmp_path: Path, made_repo: Path) -> Path:
    """A copy of the repository in the test's own folder: a test may push to it."""
    bare = tmp_path / "shop.git"
    shutil.copytree(made_repo, bare, symlinks=True)
    return bare


def run(tmp_path: Path, repo: Path, version: str, script: bool = False, **extra: Any) -> dict[str, Any]:
    """bench_app_git's result: in this process, or with ``script`` as its own process."""
    args = {
        "repo": str(repo),
        "version": version,
        "name": "shop",
        "stack": "shop-gunicorn",
        "cache": str(tmp_path / "cache" / "shop.git"),
        "releases": str(tmp_path / "releases"),
        "group": grp.getgrgid(os.getgid()).gr_name,
        "look_for": ["requirements.txt", "Gemfile", "cpanfile"],
        **extra,
    }
    (tmp_path / "releases").mkdir(exist_ok=True)
    return run_module_script(MODULE, args, tmp_path) if script else run_module(git_mod, args)


def commit_of(repo: Path, ref: str) -> str:
    return git("rev-parse", f"{ref}^{{commit}}", cwd=repo)


@pytest.mark.skipif(os.geteuid() != 0, reason="the release is chowned to root")
def test_a_tag_is_exported_into_a_release_named_after_its_commit(tmp_path: Path, repo: Path) -> None:
    result = run(tmp_path, repo, "v1", script=True)
    commit = commit_of(repo, "v1")
    assert (result["commit"], result["ref_type"], result["changed"]) == (commit, "tag", True)
    release = Path(result["release"])
    assert release == tmp_path / "releases" / f"shop-{commit[:16]}"
    assert (release / "app.py").read_text(encoding="utf-8") == "app = 1\n"
    assert result["dependency_files"] == ["requirements.txt"]
    assert not (release / ".git").exists()
    again = run(tmp_path, repo, "v1")
    assert (again["changed"], again["release"]) == (False, result["release"])


@pytest.mark.skipif(os.geteuid() != 0, reason="the release is chowned to root")
def test_an_annotated_tag_and_a_sha_resolve_to_their_commit(tmp_path: Path, repo: Path) -> None:
    assert run(tmp_path, repo, "v1-annotated")["commit"] == commit_of(repo, "v1")
    head = commit_of(repo, "main")
    result = run(tmp_path, repo, head[:10])
    assert (result["commit"], result["ref_type"]) == (head, "commit")


def test_a_branch_is_refused_unless_the_stack_accepts_a_moving_ref(tmp_path: Path, repo: Path) -> None:
    refused = run(tmp_path, repo, "main")
    assert refused["failed"] and refused["msg"] == (
        "stack 'shop-gunicorn': app.git.version: 'main' is a branch, a moving ref: "
        f"pin a tag or a commit sha, or set app.git.moving_ref: true, in {repo}"
    )
    assert not (tmp_path / "cache").exists()


@pytest.mark.skipif(os.geteuid() != 0, reason="the release is chowned to root")
def test_a_moving_ref_follows_the_branch(tmp_path: Path, repo: Path) -> None:
    result = run(tmp_path, repo, "next", moving_ref=True)
    assert (result["commit"], result["ref_type"]) == (commit_of(repo, "next"), "branch")
    assert commit_of(repo, "next") != commit_of(repo, "HEAD")


def test_a_version_the_repository_lacks_is_named_with_its_tags(tmp_path: Path, repo: Path) -> None:
    result = run(tmp_path, repo, "v9")
    assert result["msg"] == (
        "stack 'shop-gunicorn': app.git.version: 'v9' is not a tag, branch or commit sha "
        f"(tags: v1, v1-annotated), in {repo}"
    )


def test_a_sha_the_repository_lacks_is_named(tmp_path: Path, repo: Path) -> None:
    result = run(tmp_path, repo, "0123456789abcdef")
    assert (
        result["msg"] == f"stack 'shop-gunicorn': app.git.version: commit '0123456789abcdef' is not in {repo}"
    )


def test_an_unreadable_repository_is_named(tmp_path: Path) -> None:
    result = run(tmp_path, tmp_path / "nowhere.git", "v1")
    assert result["msg"].startswith(
        f"stack 'shop-gunicorn': app.git.repo: cannot read {tmp_path}/nowhere.git: "
    )


def test_ls_remote_lines_become_refs() -> None:
    out = "aaa\tHEAD\nbbb\trefs/heads/main\nccc\trefs/tags/v1\nddd\trefs/tags/v1^{}\n"
    refs = git_mod.parse_ls_remote(out)
    assert git_mod.resolve(refs, "v1", False) == ("tag", "ddd", None)
    assert git_mod.resolve(refs, "HEAD", True) == ("branch", "aaa", None)
    assert git_mod.resolve(refs, "HEAD", False)[2].startswith("'HEAD' is the default branch, a moving ref")


@pytest.mark.skipif(os.geteuid() != 0, reason="the release is chowned to root")
def test_a_chain_of_links_out_of_the_release_is_refused(tmp_path: Path, repo: Path) -> None:
    work = tmp_path / "chain"
    git("clone", "-q", str(repo), str(work), cwd=tmp_path)
    (work / "d").mkdir()
    (work / "d" / "u1").symlink_to("..")
    for k in range(2, 8):
        (work / "d" / f"u{k}").symlink_to(f"u{k - 1}/..")
    (work / "d" / "etc").symlink_to("u7/etc")
    git("add", "-A", cwd=work)
    git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "chain", cwd=work)
    git("tag", "chain", cwd=work)
    git("push", "-q", "origin", "chain", cwd=work)
    result = run(tmp_path, repo, "chain")
    assert result.get("failed"), result
    assert "holds d/etc, a link that leads outside the app's folder (7 such links)" in result["msg"]
    assert list((tmp_path / "releases").iterdir()) == []


def test_the_credentials_of_a_repository_url_are_masked_in_what_the_module_returns(tmp_path: Path) -> None:
    """Issue 44, finding 6: a token in app.git.repo was printed at -v (the module's message quoted the
    URL, and its invocation holds it); nothing listens on port 9, so git fails at once. In this process: the
    result is the module's exit_json as its script prints it (invocation included); the script's own run is
    the first test's."""
    result = run(tmp_path, "https://bench:ghp-t0ken-s3cr3t@127.0.0.1:9/shop.git", "v1")
    assert result["failed"] and result["msg"].startswith(
        "stack 'shop-gunicorn': app.git.repo: cannot read https://"
    )
    assert "ghp-t0ken-s3cr3t" not in json.dumps(result)
