"""Action: deploy a user app's source folder (app.src) into its release folder on the target.

Packs exactly the files the plan hashed (benchstack.kinds.apps.userapp.write_archive, which refuses a folder
that changed since the plan), sends the archive and unpacks it with ansible.builtin.unarchive into the release
folder, owned by root and the benchmark group. One task execution, however many files the app has.
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

from ansible.errors import AnsibleActionFail

from benchstack.actionargs import BenchAction, action_args
from benchstack.kinds.apps.userapp import AppSourceError, write_archive

# What a task may pass: the options documented in plugins/modules/bench_app_unpack.py (ansible-doc).
ARGS = action_args(__file__)


class ActionModule(BenchAction):
    TRANSFERS_FILES = True
    ARGS = ARGS

    def act(self, result: dict[str, Any], args: dict[str, Any], task_vars: dict[str, Any]) -> dict[str, Any]:
        folder = self._execute_module(
            "ansible.builtin.file",
            module_args={
                "path": args["dest"],
                "state": "directory",
                "owner": "root",
                "group": args["group"],
                "mode": "0755",
            },
            task_vars=task_vars,
        )
        if folder.get("failed"):
            return folder
        with tempfile.TemporaryDirectory(prefix="bench-app-") as local:
            archive = Path(local) / "app.tar"
            try:
                count = write_archive(args["src"], args["sha256"], archive)
            except AppSourceError as exc:
                raise AnsibleActionFail(f"stack {args['stack']!r}: app.src: {exc}") from None
            remote_tmp = self._make_tmp_path()
            remote = self._connection._shell.join_path(remote_tmp, "app.tar")
            self._transfer_file(str(archive), remote)
            self._fixup_perms2((remote_tmp, remote))
            unpacked = self._execute_module(
                "ansible.builtin.unarchive",
                module_args={
                    "src": remote,
                    "dest": args["dest"],
                    "remote_src": True,
                    "owner": "root",
                    "group": args["group"],
                },
                task_vars=task_vars,
            )
            self._remove_tmp_path(remote_tmp)
        result.update(unpacked)
        result["files"] = count
        result["changed"] = bool(unpacked.get("changed") or folder.get("changed"))
        return result
