"""A user's app folder read at plan time (what is copied, its content hash, the size limit), the archive the
webapp role sends, and the deployment decisions the webapp role takes from the target's records."""

from __future__ import annotations

import base64
import json
import tarfile
from pathlib import Path

import pytest
from ansible.errors import AnsibleActionFail
from conftest import DATA
from test_plugins import load_plugin, make_action

from benchstack.kinds.apps import userapp
from benchstack.kinds.apps.userapp import (
    AppSourceError,
    app_record,
    app_state,
    apps_to_deploy,
    bundler_failure,
    releases_to_install,
    scan,
    write_archive,
)

SOURCE = "http://127.0.0.1:8799/gems/"


def make_app(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root


@pytest.fixture
def app(tmp_path: Path) -> Path:
    return make_app(
        tmp_path / "app",
        {
            "config.ru": "run App\n",
            "app.rb": "class App; end\n",
            "Gemfile": "gem 'sinatra'\n",
            "lib/x.rb": "1\n",
        },
    )


# ---------------------------------------------------------------- what is copied and hashed


def test_development_folders_are_neither_copied_nor_hashed(app: Path) -> None:
    before = scan(app)
    make_app(
        app,
        {
            ".git/HEAD": "ref\n",
            "lib/.git/config": "x\n",
            "node_modules/a/index.js": "x\n",
            "lib/__pycache__/x.pyc": "x\n",
            "log/production.log": "x\n",
            "tmp/cache": "x\n",
            "vendor/bundle/gem.rb": "x\n",
        },
    )
    after = scan(app)
    assert after.files == before.files == ("Gemfile", "app.rb", "config.ru", "lib/x.rb")
    assert after.sha256 == before.sha256


def test_log_tmp_and_vendor_are_left_out_only_at_the_top(app: Path) -> None:
    make_app(app, {"lib/log/levels.rb": "x\n", "lib/vendor/shim.rb": "x\n"})
    assert {"lib/log/levels.rb", "lib/vendor/shim.rb"} <= set(scan(app).files)


def test_editing_one_file_changes_the_content_hash(app: Path) -> None:
    before = scan(app).sha256
    (app / "lib" / "x.rb").write_text("2\n", encoding="utf-8")
    assert scan(app).sha256 != before


def test_making_a_file_executable_changes_the_content_hash(app: Path) -> None:
    before = scan(app).sha256
    (app / "app.rb").chmod(0o755)
    assert scan(app).sha256 != before


def test_moving_a_file_changes_the_content_hash(app: Path) -> None:
    before = scan(app).sha256
    (app / "lib" / "x.rb").rename(app / "lib" / "y.rb")
    assert scan(app).sha256 != before


def test_dependency_and_lock_files_are_found_and_the_locks_hashed(app: Path) -> None:
    (app / "Gemfile.lock").write_text("GEM\n", encoding="utf-8")
    found = scan(app)
    assert found.dependency_files == ("Gemfile", "Gemfile.lock")
    assert found.lock_sha256 == {
        "Gemfile.lock": "055a6e4513b1c93b6d8ffe6e55c3709b6709753fa89e79795be76f8955b735fb"
    }


def test_a_folder_over_the_size_limit_is_refused_saying_how_big_it_is(app: Path) -> None:
    (app / "data.bin").write_bytes(b"\0" * 3 * 2**20)
    with pytest.raises(
        AppSourceError, match=r"holds 3\.0 MiB in 5 files .* the limit is 2 MiB and 20000 files"
    ):
        scan(app, max_bytes=2 * 2**20)
    assert scan(app, max_bytes=4 * 2**20).bytes > 3 * 2**20


def test_the_limit_counts_files_too(app: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(userapp, "MAX_APP_FILES", 3)
    with pytest.raises(AppSourceError, match="4 files"):
        scan(app)


def test_a_link_out_of_the_folder_is_refused(app: Path, tmp_path: Path) -> None:
    (app / "secrets").symlink_to(tmp_path)
    with pytest.raises(AppSourceError, match=r"secrets is a link to .*, outside the app folder"):
        scan(app)


def test_a_link_inside_the_folder_is_kept_as_a_link(app: Path) -> None:
    (app / "lib" / "current.rb").symlink_to("x.rb")
    assert "lib/current.rb" in scan(app).files


def make_chain(app: Path) -> None:
    """Issue 29's chain: each link's text stays inside the folder, together they reach the host's /etc."""
    (app / "d").mkdir()
    (app / "d" / "u1").symlink_to("..")
    for k in range(2, 8):
        (app / "d" / f"u{k}").symlink_to(f"u{k - 1}/..")
    (app / "d" / "etc").symlink_to("u7/etc")


def test_a_chain_of_links_out_of_the_folder_is_refused(app: Path, tmp_path: Path) -> None:
    make_chain(app)
    # The chain does reach out: the kernel follows it to the folder above the app's.
    assert (app / "d" / "u2").resolve() == app.parent
    with pytest.raises(AppSourceError, match=r"d/etc is a link to u7/etc, outside the app folder"):
        scan(app)
    with pytest.raises(AppSourceError, match="outside the app folder"):
        write_archive(app, "0" * 64, tmp_path / "app.tar")
    assert not (tmp_path / "app.tar").exists()


def test_links_through_links_that_stay_inside_are_kept(app: Path) -> None:
    (app / "d").mkdir()
    (app / "d" / "up").symlink_to("..")  # the app folder itself
    (app / "d" / "lib").symlink_to("up/lib")
    (app / "d" / "x.rb").symlink_to("lib/x.rb")
    assert {"d/up", "d/lib", "d/x.rb"} <= set(scan(app).files)


def test_a_loop_of_links_is_refused(app: Path) -> None:
    (app / "a").symlink_to("b")
    (app / "b").symlink_to("a")
    with pytest.raises(
        AppSourceError, match=r"[ab] is a link to [ab], a chain of more than 40 links \(or a loop\)"
    ):
        scan(app)


def test_a_missing_folder_is_named(tmp_path: Path) -> None:
    with pytest.raises(AppSourceError, match=f"{tmp_path}/nope does not exist"):
        scan(tmp_path / "nope")


def test_a_folder_that_cannot_be_read_is_one_line_not_a_traceback(tmp_path: Path) -> None:
    """Issue 44: an OSError of the walk (here a name too long for the file system) is AppSourceError."""
    with pytest.raises(AppSourceError, match=r"^'/.*\.\.\..*': cannot read it: File name too long$"):
        scan(tmp_path / ("a" * 300))


def test_a_folder_the_walk_cannot_list_is_refused_not_skipped(
    app: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """os.walk skips a folder it cannot list unless told otherwise: the hash and copy would leave it out."""
    (app / "private").mkdir()
    listdir = userapp.os.scandir

    def refused(path: object) -> object:
        if str(path).endswith("private"):
            raise PermissionError(13, "Permission denied", str(path))
        return listdir(path)  # type: ignore[arg-type]

    monkeypatch.setattr(userapp.os, "scandir", refused)
    with pytest.raises(AppSourceError, match=r"private': cannot read it: Permission denied$"):
        scan(app)


# ---------------------------------------------------------------- the archive the webapp role sends


def test_the_archive_holds_exactly_the_hashed_files_owned_by_root(app: Path, tmp_path: Path) -> None:
    (app / "bin").mkdir()
    (app / "bin" / "run").write_text("#!/bin/sh\n", encoding="utf-8")
    (app / "bin" / "run").chmod(0o700)
    make_app(app, {".git/HEAD": "x\n", "log/a.log": "x\n"})
    planned = scan(app)
    count = write_archive(app, planned.sha256, tmp_path / "app.tar")
    with tarfile.open(tmp_path / "app.tar") as tar:
        members = {m.name: m for m in tar.getmembers()}
        assert tar.extractfile("lib/x.rb").read() == b"1\n"  # type: ignore[union-attr]
    assert sorted(members) == list(planned.files) and count == len(planned.files)
    assert {(m.uid, m.gid, m.uname) for m in members.values()} == {(0, 0, "root")}
    assert (members["bin/run"].mode, members["app.rb"].mode) == (0o755, 0o644)


def test_a_folder_changed_since_the_plan_is_not_sent(app: Path, tmp_path: Path) -> None:
    planned = scan(app).sha256
    (app / "app.rb").write_text("class Changed; end\n", encoding="utf-8")
    with pytest.raises(AppSourceError, match="changed since the run's plan was compiled"):
        write_archive(app, planned, tmp_path / "app.tar")
    assert not (tmp_path / "app.tar").exists()


# ---------------------------------------------------------------- Bundler's failures


def test_a_missing_gem_is_named_with_the_source_really_asked() -> None:
    stderr = (DATA / "bundler" / "missing-gem.stderr").read_text(encoding="utf-8")
    assert bundler_failure(stderr, SOURCE) == (
        "the Gemfile needs gem 'bench-stack-no-such-gem (= 1.0)', "
        f"which the gem source {SOURCE} does not have"
    )


def test_a_locked_version_the_source_lacks_is_named() -> None:
    stderr = (DATA / "bundler" / "locked-version-gone.stderr").read_text(encoding="utf-8")
    assert bundler_failure(stderr, SOURCE) == (
        f"Gemfile.lock pins sinatra (3.9.9), which the gem source {SOURCE} does not have"
    )


def test_another_failure_keeps_bundlers_last_lines_without_the_root_warning() -> None:
    stderr = (
        "Don't run Bundler as root. Bundler can ask\nThere was an error parsing `Gemfile`: syntax error\n"
    )
    assert bundler_failure(stderr, SOURCE) == (
        f"bundle install from {SOURCE} failed: There was an error parsing `Gemfile`: syntax error"
    )


# ---------------------------------------------------------------- what the webapp role deploys


def planned_app(name: str = "shop", **over: object) -> dict:
    base = {
        "name": name,
        "kind": "sinatra",
        "runtime": "ruby",
        "stacks": [f"{name}-thin"],
        "dir": f"/opt/bench-stack/apps/user/{name}",
        "releases": "/opt/bench-stack/apps/user/.releases",
        "record": f"/opt/bench-stack/apps/user/.records/{name}.json",
        "bundle": {"path": "/b", "gemfile": f"/opt/bench-stack/apps/user/{name}/Gemfile", "app_config": "/b"},
        "refuses": [],
        "source": {"type": "src", "path": "/src", "sha256": "ab" * 32},
        "key": "src:" + "ab" * 32,
        "release": f"/opt/bench-stack/apps/user/.releases/{name}-abababababababab",
        "dependency_files": ["Gemfile", "Gemfile.lock"],
    }
    base.update(over)
    return base


def git_app(moving: bool = False) -> dict:
    return planned_app(
        "gitapp",
        source={
            "type": "git",
            "repo": "http://r/x.git",
            "version": "main" if moving else "v1",
            "moving_ref": moving,
        },
        key=None if moving else "git:123",
        release=None,
        dependency_files=None,
    )


def test_an_app_whose_record_holds_the_planned_key_is_not_deployed() -> None:
    app = planned_app()
    assert apps_to_deploy([app], {"shop": {"key": app["key"]}}) == []


def test_a_new_or_changed_app_is_deployed_with_its_previous_record() -> None:
    app = planned_app()
    assert apps_to_deploy([app], {}) == [{**app, "previous": None}]
    old = {"key": "src:old"}
    assert apps_to_deploy([app], {"shop": old}) == [{**app, "previous": old}]


def test_a_moving_ref_is_looked_at_every_run_but_installed_only_when_it_moved() -> None:
    app = git_app(moving=True)
    record = {"key": None, "release": "/r/gitapp-1111"}
    todo = apps_to_deploy([app], {"gitapp": record})
    assert len(todo) == 1
    same = {"gitapp": {"release": "/r/gitapp-1111", "commit": "1111", "dependency_files": []}}
    assert releases_to_install(todo, same) == []
    moved = {"gitapp": {"release": "/r/gitapp-2222", "commit": "2222", "dependency_files": []}}
    assert [r["release"] for r in releases_to_install(todo, moved)] == ["/r/gitapp-2222"]


def test_bundler_installs_from_the_release_and_frozen_only_with_a_lock() -> None:
    (locked,) = releases_to_install(apps_to_deploy([planned_app()], {}), {})
    assert locked["bundle_install_env"] == {
        "BUNDLE_GEMFILE": f"{locked['release']}/Gemfile",
        "BUNDLE_PATH": "/b",
        "BUNDLE_APP_CONFIG": "/b",
        "BUNDLE_SILENCE_ROOT_WARNING": "1",
        "BUNDLE_FROZEN": "true",
    }
    (unlocked,) = releases_to_install(apps_to_deploy([planned_app(dependency_files=["Gemfile"])], {}), {})
    assert "BUNDLE_FROZEN" not in unlocked["bundle_install_env"]
    (plain,) = releases_to_install(apps_to_deploy([planned_app(dependency_files=[])], {}), {})
    assert plain["bundle_install_env"] is None


def test_a_git_release_reports_the_dependency_files_the_runtime_refuses() -> None:
    app = {**git_app(), "runtime": "perl", "bundle": None, "refuses": ["cpanfile"]}
    got = {"gitapp": {"release": "/r/gitapp-1", "commit": "1", "dependency_files": ["cpanfile"]}}
    (item,) = releases_to_install(apps_to_deploy([app], {}), got)
    assert item["refused_files"] == ["cpanfile"]


def test_the_record_names_the_commit_of_a_git_app_and_the_lock_hashes() -> None:
    got = {"gitapp": {"release": "/r/gitapp-1", "commit": "c0ffee", "dependency_files": ["Gemfile"]}}
    (item,) = releases_to_install(apps_to_deploy([git_app()], {}), got)
    record = app_record(item, {"Gemfile.lock": "99"})
    assert record["source"] == {"type": "git", "repo": "http://r/x.git", "version": "v1", "moving_ref": False,
                                "commit": "c0ffee"}  # fmt: skip
    assert (record["release"], record["lock_sha256"]) == ("/r/gitapp-1", {"Gemfile.lock": "99"})


def test_only_deployed_apps_restart_and_bundle_exec_follows_each_apps_gemfile() -> None:
    shop, blog = planned_app(), planned_app("blog")
    records = {"blog": {"dependency_files": ["Gemfile"]}}
    (deployed,) = releases_to_install(apps_to_deploy([shop], {}), {})
    state = app_state([shop, blog], records, [deployed])
    assert state == {"changed_dirs": [shop["dir"]], "bundled_dirs": [shop["dir"], blog["dir"]]}
    no_gemfile = app_state([shop], {"shop": {"dependency_files": []}}, [])
    assert no_gemfile == {"changed_dirs": [], "bundled_dirs": []}


def test_an_app_without_a_bundle_never_runs_through_bundle_exec() -> None:
    wsgi = planned_app("w", runtime="python", bundle=None, dependency_files=["Gemfile"])
    assert app_state([wsgi], {"w": {"dependency_files": ["Gemfile"]}}, [])["bundled_dirs"] == []


def test_the_filters_read_records_from_slurp_results_and_locks_from_stat_results() -> None:
    filters = load_plugin("filter", "bench_apps").FilterModule().filters()
    shop, blog, gone = planned_app(), planned_app("blog"), planned_app("gone")
    slurped = [
        {"item": shop, "content": base64.b64encode(json.dumps({"key": shop["key"]}).encode()).decode()},
        {"item": blog, "content": base64.b64encode(b"{not json").decode()},
        {"item": gone, "failed": True, "msg": "file not found"},
    ]
    todo = filters["bench_apps_to_deploy"]([shop, blog, gone], slurped)
    assert [a["name"] for a in todo] == ["blog", "gone"]
    (item, _) = filters["bench_app_releases"](todo, [])
    stats = [
        {"item": [item, "Gemfile.lock"], "stat": {"exists": True, "checksum": "11"}},
        {"item": [item, "requirements.txt"], "stat": {"exists": False}},
    ]
    assert filters["bench_app_record"](item, stats)["lock_sha256"] == {"Gemfile.lock": "11"}


class FakeTarget:
    """Stands in for the target: the file module makes the folder, unarchive unpacks what was sent."""

    def __init__(self, tmp: Path) -> None:
        self.tmp = tmp
        self.sent: list[Path] = []
        self.modules: list[str] = []

    def execute(self, name: str, module_args: dict, task_vars: dict | None = None) -> dict:
        self.modules.append(name)
        if name == "ansible.builtin.file":
            Path(module_args["path"]).mkdir(parents=True, exist_ok=True)
            return {"changed": True}
        with tarfile.open(module_args["src"]) as tar:
            tar.extractall(module_args["dest"], filter="data")
        return {"changed": True, "dest": module_args["dest"]}

    def transfer(self, local: str, remote: str) -> str:
        Path(remote).write_bytes(Path(local).read_bytes())
        self.sent.append(Path(remote))
        return remote


def unpack_action(args: dict, target: FakeTarget) -> object:
    action = make_action(load_plugin("action", "bench_app_unpack"), args)
    action._execute_module = target.execute
    action._transfer_file = target.transfer
    action._make_tmp_path = lambda: str(target.tmp)
    action._fixup_perms2 = lambda paths: None
    action._remove_tmp_path = lambda path: None
    action._connection._shell.join_path = lambda *parts: str(Path(*parts))
    return action


def test_bench_app_unpack_sends_the_planned_files_into_the_release(app: Path, tmp_path: Path) -> None:
    (tmp_path / "remote").mkdir()
    target = FakeTarget(tmp_path / "remote")
    make_app(app, {".git/HEAD": "x\n"})
    release = tmp_path / "release"
    args = {"src": str(app), "sha256": scan(app).sha256, "dest": str(release), "group": "bench", "stack": "s"}
    result = unpack_action(args, target).run(task_vars={})
    assert result["changed"] and result["files"] == 4
    assert target.modules == ["ansible.builtin.file", "ansible.builtin.unarchive"]
    assert sorted(str(p.relative_to(release)) for p in release.rglob("*") if p.is_file()) == list(
        scan(app).files
    )


def test_bench_app_unpack_refuses_a_folder_changed_since_the_plan_naming_the_stack(
    app: Path, tmp_path: Path
) -> None:
    (tmp_path / "remote").mkdir()
    target = FakeTarget(tmp_path / "remote")
    args = {
        "src": str(app),
        "sha256": "0" * 64,
        "dest": str(tmp_path / "r"),
        "group": "bench",
        "stack": "shop",
    }
    with pytest.raises(AnsibleActionFail, match=r"^stack 'shop': app.src: .* changed since the run's plan"):
        unpack_action(args, target).run(task_vars={})
    assert target.sent == []


def test_a_git_app_that_was_not_exported_is_not_installed() -> None:
    assert releases_to_install(apps_to_deploy([git_app()], {}), {}) == []
