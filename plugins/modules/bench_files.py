#!/usr/bin/python
"""Module (runs on the host): write a role's small rendered files, and their folders, in one execution.

``ansible.builtin.template`` costs three round trips per file (a stat, a file transfer, the copy module), a
second or more each on a docker connection of a loaded 2-core machine; a folder beside it costs one more.
A role that writes a unit, an env file and their folder paid four. Here the content comes rendered in the
arguments (``lookup('ansible.builtin.template', ...)``) and every file is compared, written and given its
owner and mode in one execution. Each file is written to a temporary file in its folder that already has
its final owner and mode, then renamed over the old one: a reader never sees half a file, and a secret
(an env file's values) is never readable by others, not even for an instant.
"""

from __future__ import annotations

import grp
import os
import pwd
import tempfile
from typing import Any

from ansible.module_utils.basic import AnsibleModule

DOCUMENTATION = r"""
module: bench_files
short_description: Write several small files (and create their folders) in one execution
description:
  - >-
    Write a role's small rendered files, and their folders, in one execution on the host, where
    M(ansible.builtin.template) costs three round trips per file. The content comes rendered in the
    arguments (C(lookup('ansible.builtin.template', ...))).
  - >-
    Each file is compared, and when it differs written to a temporary file in its folder that already has its
    final owner and mode, then renamed over the old one: a reader never sees half a file, and a secret is
    never readable by others.
options:
  folders:
    description:
      - Folders created first; mode, owner and group set on each, and on the missing parents it creates.
    type: list
    elements: dict
    default: []
    options:
      path: {description: The folder., type: path, required: true}
      mode: {description: Its mode., type: raw, default: "0755"}
      owner: {description: Its owner (default the connection's user)., type: str}
      group: {description: Its group., type: str}
  files:
    description:
      - Files written when their content differs; owner and mode set when they differ.
      - C(state=absent) removes the file.
    type: list
    elements: dict
    required: true
    options:
      path: {description: The file., type: path, required: true}
      content: {description: Its whole content (rendered)., type: str}
      state:
        description: C(file) writes it; C(absent) removes it.
        type: str
        choices: [file, absent]
        default: file
      mode: {description: Its mode (default the old file's, else 0644 less the umask)., type: raw}
      owner: {description: Its owner (default the old file's, else the connection's user)., type: str}
      group: {description: Its group (default the old file's, else the connection's)., type: str}
      validate:
        description:
          - Command run on the new content before it replaces the file (%s is its path); a failure leaves
            the file as it was and fails the task with the command's output.
        type: str
notes:
  - Check mode reports what would change; diff mode shows each changed file (hide secrets with no_log).
"""

EXAMPLES = r"""
- name: Install a unit and its env file, and their folder
  bench_files:
    folders:
      - {path: /etc/bench-stack/shop, owner: root, group: root, mode: "0755"}
    files:
      - path: /etc/systemd/system/shop@.service
        content: "{{ lookup('ansible.builtin.template', 'unit.service.j2') }}"
        owner: root
        group: root
        mode: "0644"
        validate: systemd-analyze verify %s
      - path: /etc/bench-stack/shop/env
        content: "{{ lookup('ansible.builtin.template', 'env.j2') }}"
        mode: "0600"
  no_log: true
"""

RETURN = r"""
changed_paths: {description: The folders and files created, changed or removed., type: list, elements: str}
paths:
  description: >-
    Every file it keeps (state file), changed or not; the webapp role names them in the provisioning record.
  type: list
  elements: str
"""

FOLDER_SPEC: dict[str, Any] = {
    "path": {"type": "path", "required": True},
    "mode": {"type": "raw", "default": "0755"},
    "owner": {"type": "str"},
    "group": {"type": "str"},
}
FILE_SPEC: dict[str, Any] = {
    "path": {"type": "path", "required": True},
    "content": {"type": "str"},
    "state": {"type": "str", "choices": ["file", "absent"], "default": "file"},
    "mode": {"type": "raw"},
    "owner": {"type": "str"},
    "group": {"type": "str"},
    "validate": {"type": "str"},
}


def _attrs(module: AnsibleModule, item: dict[str, Any]) -> dict[str, Any]:
    return module.load_file_common_arguments(
        {
            "path": item["path"],
            "mode": item.get("mode"),
            "owner": item.get("owner"),
            "group": item.get("group"),
        }
    )


def _ids(module: AnsibleModule, item: dict[str, Any]) -> tuple[int, int]:
    """The file's owner and group ids: the named ones, else the old file's, else ours."""
    path = item["path"]
    uid, gid = module.user_and_group(path) if os.path.exists(path) else (os.geteuid(), os.getegid())
    try:
        if item.get("owner"):
            uid = pwd.getpwnam(item["owner"]).pw_uid
        if item.get("group"):
            gid = grp.getgrnam(item["group"]).gr_gid
    except KeyError as exc:
        module.fail_json(msg=f"{path}: no such user or group on this host: {exc.args[0]}")
    return uid, gid


def _mode(item: dict[str, Any], default: int) -> int:
    mode = item.get("mode")
    if mode is None:
        return default
    return mode if isinstance(mode, int) else int(str(mode), 8)


def _write(module: AnsibleModule, item: dict[str, Any], data: bytes) -> None:
    folder = os.path.dirname(item["path"])
    fd, tmp = tempfile.mkstemp(dir=folder, prefix=f".{os.path.basename(item['path'])}.")
    try:
        with os.fdopen(fd, "wb") as out:
            uid, gid = _ids(module, item)
            old_mode = os.stat(item["path"]).st_mode & 0o7777 if os.path.exists(item["path"]) else None
            umask = os.umask(0)
            os.umask(umask)
            os.fchown(out.fileno(), uid, gid)
            os.fchmod(out.fileno(), _mode(item, old_mode if old_mode is not None else 0o666 & ~umask))
            out.write(data)
            out.flush()
            os.fsync(out.fileno())
        if item.get("validate"):
            # As the copy and template modules do: the new file's path for %s, no shell.
            rc, out_text, err = module.run_command(item["validate"] % tmp)
            if rc != 0:
                module.fail_json(msg=f"{item['path']}: failed to validate: {(err or out_text).strip()}")
        os.replace(tmp, item["path"])
    except BaseException:
        os.unlink(tmp)
        raise
    if module.selinux_enabled():
        module.set_context_if_different(item["path"], module.selinux_default_context(item["path"]), False)


def main() -> None:
    module = AnsibleModule(
        argument_spec={
            "folders": {"type": "list", "elements": "dict", "default": [], "options": FOLDER_SPEC},
            "files": {"type": "list", "elements": "dict", "required": True, "options": FILE_SPEC},
        },
        supports_check_mode=True,
    )
    changed_paths: list[str] = []
    diffs: list[dict[str, str]] = []

    for folder in module.params["folders"]:
        path = folder["path"]
        # Missing parents get the folder's owner and mode, as the copy module gives them; parents that
        # exist are left as they are.
        missing = []
        parent = path
        while not os.path.isdir(parent):
            missing.append(parent)
            parent = os.path.dirname(parent)
        for created in reversed(missing):
            changed_paths.append(created)
            if not module.check_mode:
                os.mkdir(created, mode=0o700)
                module.set_fs_attributes_if_different(_attrs(module, {**folder, "path": created}), True)
        if not missing and module.set_fs_attributes_if_different(_attrs(module, folder), False):
            changed_paths.append(path)

    for item in module.params["files"]:
        path = item["path"]
        exists = os.path.lexists(path)
        if item["state"] == "absent":
            if exists:
                changed_paths.append(path)
                diffs.append(
                    {"before_header": path, "after_header": path, "before": "present\n", "after": "absent\n"}
                )
                if not module.check_mode:
                    os.unlink(path)
            continue
        if item.get("content") is None:
            module.fail_json(msg=f"{path}: content is required unless state is absent")
        if item.get("validate") and "%s" not in item["validate"]:
            module.fail_json(msg=f"{path}: validate must contain %s (the new file's path)")
        data = item["content"].encode("utf-8")
        before = b""
        if exists:
            if not os.path.isfile(path):
                module.fail_json(msg=f"{path} exists and is not a regular file")
            with open(path, "rb") as f:
                before = f.read()
        if exists and before == data:
            if module.set_fs_attributes_if_different(_attrs(module, item), False):
                changed_paths.append(path)
            continue
        changed_paths.append(path)
        diffs.append(
            {
                "before_header": path if exists else "(absent)",
                "after_header": path,
                "before": before.decode("utf-8", errors="replace"),
                "after": item["content"],
            }
        )
        if module.check_mode:
            continue
        if not os.path.isdir(os.path.dirname(path)):
            module.fail_json(msg=f"{path}: its folder does not exist (name it under folders)")
        _write(module, item, data)

    result: dict[str, Any] = {
        "changed": bool(changed_paths),
        "changed_paths": changed_paths,
        "paths": [item["path"] for item in module.params["files"] if item["state"] != "absent"],
    }
    if module._diff:  # noqa: SLF001 - AnsibleModule's only way to ask for diff mode
        result["diff"] = diffs
    module.exit_json(**result)


if __name__ == "__main__":
    main()
