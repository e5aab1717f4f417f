"""Callback: count a playbook run's crossings from YAML/Jinja into the project's Python (issue 26).

A crossing is one call of a project filter (``plugins/filter``) from a template, or one run of a task of
the project's own (an action plugin of ``plugins/action`` or a module of ``plugins/modules``; one per loop
item). Each is written as one line to the file named by
``$BENCH_CROSSINGS`` (appended by every worker, with the playbook run's pid), and the totals are printed at
the end of the playbook run. Not loaded by bench-stack itself; enable it for one run::

    BENCH_CROSSINGS=/tmp/crossings.log ANSIBLE_CALLBACK_PLUGINS=plugins/callback:scripts/crossings \\
        ANSIBLE_CALLBACKS_ENABLED=crossings ansible-playbook bench-stack.yml ...

(plugins/callback too: it holds the console, ansible.cfg's stdout_callback, which the variable would hide.)
"""

from __future__ import annotations

import collections
import os
from pathlib import Path
from typing import Any

from ansible._internal._templating._jinja_plugins import JinjaPluginIntercept
from ansible.plugins.action import ActionBase
from ansible.plugins.callback import CallbackBase

DOCUMENTATION = """
name: crossings
type: aggregate
short_description: Count the calls of bench-stack's filters, action plugins and modules
description: Writes one line per call to $BENCH_CROSSINGS and prints the totals at the end.
"""

PLUGINS = Path(__file__).resolve().parents[2] / "plugins"
TASKS = {p.stem for kind in ("action", "modules") for p in (PLUGINS / kind).glob("*.py")}
FILTERS = {
    line.split('"')[1]
    for p in (PLUGINS / "filter").glob("*.py")
    for line in p.read_text(encoding="utf-8").splitlines()
    if line.strip().startswith('"bench_') and '":' in line
}
LOG = os.environ.get("BENCH_CROSSINGS", "")
# The playbook run's pid: the workers are forked from it.
RUN = os.getpid()


def note(kind: str, name: str) -> None:
    if LOG:
        with open(LOG, "a", encoding="utf-8") as fh:
            fh.write(f"{RUN} {kind} {name}\n")


_invoke = JinjaPluginIntercept._invoke_plugin


def _counted_invoke(instance: Any, *args: Any, **kwargs: Any) -> Any:
    name = str(instance.ansible_name).rpartition(".")[2]
    if instance.plugin_type == "filter" and name in FILTERS:
        note("filter", name)
    return _invoke(instance, *args, **kwargs)


JinjaPluginIntercept._invoke_plugin = staticmethod(_counted_invoke)
_run = ActionBase.run


def _counted_run(self: Any, tmp: Any = None, task_vars: Any = None) -> Any:
    name = str(self._task.action).rpartition(".")[2]
    if name in TASKS:
        note("task", name)
    return _run(self, tmp, task_vars)


ActionBase.run = _counted_run


class CallbackModule(CallbackBase):
    CALLBACK_VERSION = 2.0
    CALLBACK_TYPE = "aggregate"
    CALLBACK_NAME = "crossings"
    CALLBACK_NEEDS_ENABLED = True

    def v2_playbook_on_stats(self, stats: Any) -> None:
        if not LOG or not Path(LOG).exists():
            return
        lines = [line.split() for line in Path(LOG).read_text(encoding="utf-8").splitlines()]
        counts = collections.Counter((kind, name) for run, kind, name in lines if run == str(RUN))
        total = sum(counts.values())
        self._display.display(f"crossings: {total} calls of {len(counts)} project plugins")
        for (kind, name), n in sorted(counts.items()):
            self._display.display(f"  {kind:6} {name:28} {n}")
