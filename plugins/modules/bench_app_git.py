#!/usr/bin/python
"""Module (runs on the target): deploy a user app from a git repository (app.git) at a pinned version.

The version is resolved against the repository's refs first (``git ls-remote``): a tag, or a commit sha; a
branch only when the stack accepts a moving ref. The repository is cloned bare into a cache folder (fetched
again only when the commit is missing), and the commit's tree is exported with ``git archive`` into a release
folder named after the commit, made under a temporary name and renamed when complete. Errors name the stack
and the field to change.
"""

from __future__ import annotations

import grp
import os
import re
import shutil
import subprocess

from ansible.module_utils.basic import AnsibleModule

DOCUMENTATION = r"""
module: bench_app_git
short_description: Export a pinned version of a git repository into a release folder
description:
  - >-
    Deploy a user app from a git repository (app.git) at a pinned version, on the target. The version is
    resolved against the repository's refs first (C(git ls-remote)): a tag, or a commit sha; a branch only
    with O(moving_ref).
  - >-
    The repository is cloned bare into O(cache) (fetched again only when the commit is missing), and the
    commit's tree is exported with C(git archive) into a release folder under O(releases) named after the
    commit, made under a temporary name and renamed when complete. A tree holding a link that leads outside
    the app's folder is refused. Errors name the stack and the field to change.
  - Credentials in the repository's URL are masked in everything the module returns.
options:
  repo: {description: Repository URL or path., type: str, required: true}
  version: {description: Tag or commit sha; a branch only with moving_ref., type: str, required: true}
  moving_ref: {description: Accept a branch (a moving ref)., type: bool, default: false}
  name: {description: The app's name (names its release folder)., type: str, required: true}
  stack: {description: A stack of the app, named in errors., type: str, required: true}
  cache: {description: Bare clone of the repository kept on the target., type: path, required: true}
  releases: {description: Folder of the app's release folders., type: path, required: true}
  group: {description: Group owning the release files (the benchmark group)., type: str, required: true}
  look_for:
    description: Files whose presence at the top of the release is reported (dependency files).
    type: list
    elements: str
    default: []
"""

EXAMPLES = r"""
- name: Deploy a user app at a tag
  bench_app_git:
    repo: https://git.example.org/shop.git
    version: v1.4.2
    name: shop
    stack: shop-puma
    cache: /var/lib/bench-stack/git/shop.git
    releases: /srv/bench-stack/apps/releases
    group: bench
    look_for: [Gemfile, Gemfile.lock]
"""

RETURN = r"""
commit: {description: The commit deployed (full sha)., type: str, returned: success}
ref_type: {description: What the version named (tag, branch or commit)., type: str, returned: success}
release: {description: The release folder of the commit., type: str, returned: success}
dependency_files:
  description: The files of O(look_for) found at the top of the release.
  type: list
  elements: str
  returned: success
"""

SHA_RE = re.compile(r"^[0-9a-f]{7,40}$")
GIT_ENV = {"GIT_TERMINAL_PROMPT": "0", "GIT_ASKPASS": "/bin/true", "LC_ALL": "C"}


def parse_ls_remote(out: str) -> dict[str, str]:
    """``git ls-remote`` lines (``SHA<TAB>REF``) as {ref: sha}."""
    refs = {}
    for line in out.splitlines():
        sha, _, ref = line.partition("\t")
        if ref:
            refs[ref.strip()] = sha.strip()
    return refs


def resolve(refs: dict[str, str], version: str, moving_ref: bool) -> tuple[str, str | None, str | None]:
    """(what the version is: tag, branch, head or commit; its commit sha when a ref names it; why it is
    refused, or None)."""
    tag = refs.get(f"refs/tags/{version}^{{}}") or refs.get(f"refs/tags/{version}")
    if tag:
        return "tag", tag, None
    branch = refs.get(f"refs/heads/{version}")
    if branch or version == "HEAD":
        if not moving_ref:
            what = "a branch" if branch else "the default branch"
            return (
                "branch",
                None,
                f"{version!r} is {what}, a moving ref: pin a tag or a commit sha, "
                "or set app.git.moving_ref: true",
            )
        return "branch", branch or refs.get("HEAD"), None
    if SHA_RE.fullmatch(version):
        return "commit", None, None
    tags = sorted(r.removeprefix("refs/tags/") for r in refs if r.startswith("refs/tags/") and "^" not in r)
    return (
        "missing",
        None,
        f"{version!r} is not a tag, branch or commit sha (tags: {', '.join(tags) or 'none'})",
    )


# A URL's scheme and its user information (``user:token``, up to the last '@' before the host).
URL_CREDENTIALS_RE = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*://)([^/\s]+)@")


def main() -> None:
    module = AnsibleModule(
        argument_spec={
            "repo": {"type": "str", "required": True},
            "version": {"type": "str", "required": True},
            "moving_ref": {"type": "bool", "default": False},
            "name": {"type": "str", "required": True},
            "stack": {"type": "str", "required": True},
            "cache": {"type": "path", "required": True},
            "releases": {"type": "path", "required": True},
            "group": {"type": "str", "required": True},
            "look_for": {"type": "list", "elements": "str", "default": []},
        },
        supports_check_mode=False,
    )
    p = module.params
    where = f"stack {p['stack']!r}: app.git"
    # The credentials of the repository's URL (a token): masked in all the module returns (its messages,
    # git's errors, the invocation's arguments), as Ansible masks a no_log argument, and never kept in the
    # clone's config on the target (issue 44: a token was printed at -v and kept in run.json).
    credentials = URL_CREDENTIALS_RE.match(p["repo"])
    shown_repo = p["repo"]
    if credentials:
        module.no_log_values.add(credentials.group(2))
        shown_repo = f"{credentials.group(1)}***@{p['repo'][credentials.end() :]}"

    def git(*args: str, cwd: str | None = None) -> str:
        rc, out, err = module.run_command(["git", *args], cwd=cwd, environ_update=GIT_ENV)
        if rc != 0:
            raise RuntimeError((err or out).strip())
        return out

    try:
        refs = parse_ls_remote(git("ls-remote", "--", p["repo"]))
    except RuntimeError as exc:
        module.fail_json(msg=f"{where}.repo: cannot read {p['repo']}: {exc}")
    kind, commit, refused = resolve(refs, p["version"], p["moving_ref"])
    if refused:
        module.fail_json(msg=f"{where}.version: {refused}, in {p['repo']}")

    changed = False
    cache = p["cache"]
    try:
        if not os.path.isdir(os.path.join(cache, "objects")):
            shutil.rmtree(cache, ignore_errors=True)
            git("clone", "--quiet", "--bare", "--", p["repo"], cache)
            git("remote", "set-url", "origin", shown_repo, cwd=cache)  # fetches name the URL itself
            changed = True
        wanted = commit or p["version"]
        present = module.run_command(["git", "cat-file", "-e", f"{wanted}^{{commit}}"], cwd=cache)[0] == 0
        if not present:
            git(
                "fetch",
                "--quiet",
                "--force",
                "--tags",
                "--",
                p["repo"],
                "+refs/heads/*:refs/heads/*",
                cwd=cache,
            )
            changed = True
        rc, out, _err = module.run_command(
            ["git", "rev-parse", "--verify", "--quiet", f"{wanted}^{{commit}}"], cwd=cache
        )
    except RuntimeError as exc:
        module.fail_json(msg=f"{where}.repo: cannot clone or fetch {p['repo']}: {exc}")
    if rc != 0:
        module.fail_json(msg=f"{where}.version: commit {p['version']!r} is not in {p['repo']}")
    commit = out.strip()

    release = os.path.join(p["releases"], f"{p['name']}-{commit[:16]}")
    if not os.path.isdir(release):
        partial = f"{release}.partial"
        shutil.rmtree(partial, ignore_errors=True)
        os.makedirs(partial, mode=0o755)
        archive = subprocess.Popen(
            ["git", "archive", "--format=tar", commit], cwd=cache, stdout=subprocess.PIPE
        )
        untar = subprocess.run(
            ["tar", "-x", "--no-same-owner", "-C", partial], stdin=archive.stdout, capture_output=True
        )
        archive.wait()
        if archive.returncode != 0 or untar.returncode != 0:
            module.fail_json(
                msg=f"{where}: exporting {commit} failed: {untar.stderr.decode(errors='replace')}"
            )
        leaving = links_leaving(partial)
        if leaving:
            shutil.rmtree(partial, ignore_errors=True)
            module.fail_json(
                msg=f"{where}: {commit[:12]} holds {leaving[0]}, a link that leads outside the app's folder "
                f"({len(leaving)} such links): remove it from the repository (nothing was deployed)"
            )
        gid = _gid(module, p["group"])
        for dirpath, dirnames, filenames in os.walk(partial):
            for n in [dirpath, *(os.path.join(dirpath, f) for f in dirnames + filenames)]:
                os.lchown(n, 0, gid)
        os.rename(partial, release)
        changed = True
    found = [f for f in p["look_for"] if os.path.isfile(os.path.join(release, f))]
    module.exit_json(changed=changed, commit=commit, ref_type=kind, release=release, dependency_files=found)


def links_leaving(root: str) -> list[str]:
    """The links of the exported tree ``root`` (relative paths, sorted) that the kernel follows to somewhere
    outside it, through every other link: the tree is the one deployed, so it is read as it is, not
    link by link (``d/u2 -> u1/..`` is harmless alone, and leaves the folder when ``d/u1 -> ..``)."""
    top = os.path.realpath(root)
    out = []
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            path = os.path.join(dirpath, name)
            if os.path.islink(path):
                real = os.path.realpath(path)
                if real != top and not real.startswith(top + os.sep):
                    out.append(os.path.relpath(path, root))
    return sorted(out)


def _gid(module: AnsibleModule, group: str) -> int:
    try:
        return grp.getgrnam(group).gr_gid
    except KeyError:
        module.fail_json(msg=f"group {group!r} does not exist on the target")
        raise


if __name__ == "__main__":
    main()
