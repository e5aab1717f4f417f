"""Callback (stdout): bench-stack's console, a line per phase and the cells' progress instead of every task.

Ansible's default output of bench-stack.yml ran to 1,400-2,400 lines (TASK headers, skipped tasks, the
extra-round loop unrolled), with 8 % of them about cells. At default verbosity this prints one line per
phase (plan, hosts, provision with the roles that run, verify, cells, report), the noise floor, a progress
line for the cells, the first table, the final table and the verdict. The words and the estimate are
``benchstack.report.console``'s; this plugin only feeds it Ansible's events.

What is never hidden: a failed or unreachable task prints exactly as the default callback prints it (its
task header, then its whole error), and so does the recap of a run that failed; warnings and deprecations
print as Ansible prints them. With ``-v`` (any verbosity from 1) the output is the default callback's, all
of it. On a terminal the progress line is rewritten in place (each second); into a file or pipe (CI logs,
``tee``) a progress line is written at most every 30 s. Either way an extra round gets a line of its own when
what it is for changed (or 30 s after the last).
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable
from typing import Any

from ansible import constants as C
from ansible.plugins.callback.default import CallbackModule as DefaultCallback

from benchstack.report.console import Cells, phase_line, phase_of, seconds_text

DOCUMENTATION = r"""
name: bench_stack
type: stdout
short_description: bench-stack's console, a line per phase and the cells' progress
description:
  - >-
    For bench-stack.yml at default verbosity: one line per phase (plan, hosts, provision with the roles that
    run, verify, cells, report), a progress line while the cells are measured (cells done against planned,
    the extra rounds and the comparisons they serve, time used against load.max_seconds, an estimate of
    what is left), the noise floor, the first table, the final table and the verdict.
  - >-
    A failed or unreachable task prints as the default callback prints it, its whole error included, and so
    does the recap of a failed run; warnings and deprecations print as Ansible prints them.
  - With C(-v) or more, the output is the default callback's.
  - >-
    On a terminal the progress line is rewritten in place, each second; into a file or a pipe, a progress
    line at most every 30 seconds. An extra round gets a line of its own when what it is for changed.
extends_documentation_fragment:
  - default_callback
  - result_format_callback
requirements:
  - set as stdout_callback in ansible.cfg (bench-stack's ansible.cfg does)
"""

EXAMPLES = r"""
# ansible.cfg
# [defaults]
# callback_plugins = plugins/callback
# stdout_callback = bench_stack

# Ansible's full output for one run:
#   ansible-playbook bench-stack.yml -v
#   ANSIBLE_STDOUT_CALLBACK=default ansible-playbook bench-stack.yml
"""

# playbooks/hosts.yml's work, as the hosts line says it (by the action of each changed loop item).
HOSTS_VERBS = {"docker_container": "started", "command": "built image", "docker_image_build": "built image"}
# Into a file or pipe: a progress line at most this often.
PROGRESS_EVERY_S = 30.0
# On a terminal: how often the progress line is redrawn between events (its clock).
TICK_S = 1.0
# What clears the line the terminal shows: carriage return, erase to the end of the line.
CLEAR = "\r\x1b[K"


def _action(task: Any) -> str:
    """A task's action without its collection: ``debug`` for ``ansible.builtin.debug``."""
    return str(getattr(task, "action", "") or "").rsplit(".", 1)[-1]


def _short(name: str) -> str:
    """A task name as the live line shows it: up to its first parenthesis."""
    return name.split(" (", 1)[0].strip()


class CallbackModule(DefaultCallback):
    CALLBACK_VERSION = 2.0
    CALLBACK_TYPE = "stdout"
    CALLBACK_NAME = "bench_stack"

    def __init__(
        self, clock: Callable[[], float] = time.monotonic, tty: bool | None = None, out: Any = None
    ) -> None:
        super().__init__()
        self._clock = clock
        self._out = out if out is not None else sys.stdout
        self._tty = self._out.isatty() if tty is None else tty
        self._live_shown = False
        self._started = clock()
        # The phase running, when it began, the phases already ended, and what each phase learnt.
        self._phase: str | None = None
        self._phase_started = self._started
        self._ended: list[str] = []
        self._failed = False
        self._task_name = ""
        self._role = ""
        self._plan_text = ""
        self._run_dir = ""
        self._report = ""
        self._roles: dict[str, list[str]] = {}
        self._hosts_notes: list[str] = []
        self._containers = False
        self._cells = Cells()
        self._last_progress: float | None = None
        self._last_serves: list[str] = []
        self._round_due = False
        self._wrapped = False
        # The terminal's line is written by the events and by a clock thread: one at a time, and with
        # Display's own writes (its lock is re-entrant, and the one sys.stdout's writes take).
        self._lock = getattr(self._display, "_lock", None) or threading.RLock()
        self._stopped = threading.Event()

    # -- what is shown where ------------------------------------------------------------------------------

    @property
    def _quiet(self) -> bool:
        """Default verbosity: bench-stack's console. From -v on: the default callback's output."""
        return self._display.verbosity < 1

    def _wrap_display(self) -> None:
        """On a terminal, clear the progress line before anything else prints (a warning, a worker's
        message, a failure): it would run into the line otherwise."""
        if self._wrapped or not self._tty:
            return
        self._wrapped = True
        original = self._display.display

        def display(*args: Any, **kwargs: Any) -> None:
            with self._lock:
                self._clear_live()
                original(*args, **kwargs)

        self._display.display = display
        # The line's clock moves between events too (a role's apt install, a cell's run): redrawn each second.
        threading.Thread(target=self._tick, name="bench-stack-console", daemon=True).start()

    def _tick(self) -> None:
        while not self._stopped.wait(TICK_S):
            with self._lock:
                if self._live_shown and not self._stopped.is_set():
                    self._status()

    def _clear_live(self) -> None:
        if self._live_shown:
            self._out.write(CLEAR)
            self._out.flush()
            self._live_shown = False

    def _live(self, text: str) -> None:
        """The progress line: rewritten in place on a terminal, nothing elsewhere."""
        if not self._tty or self._stopped.is_set():
            return
        self._wrap_display()
        with self._lock:
            self._clear_live()
            width = _width()
            self._out.write(text[: width - 1] if width else text)
            self._out.flush()
            self._live_shown = True

    def _say(self, text: str, color: str | None = None) -> None:
        with self._lock:
            self._clear_live()
            self._display.display(text, color=color)

    def _status(self) -> None:
        if self._phase is None:
            self._clear_live()  # between phases (the report's line is said, its table follows)
            return
        now = self._clock()
        if self._phase == "cells" and self._cells.started is not None:
            self._live(phase_line("cells", self._cells.line(now)))
            return
        what = " · ".join(p for p in (self._role, _short(self._task_name)) if p)
        self._live(phase_line(self._phase or "", f"{what} · {seconds_text(now - self._phase_started)}"))

    # -- phases ---------------------------------------------------------------------------------------------

    def _enter(self, phase: str) -> None:
        if phase == self._phase or phase in self._ended:
            return  # a play of a phase that ran already: plan.yml, imported again by each playbook
        self._end_phase()
        self._phase, self._phase_started = phase, self._clock()
        self._role = ""

    def _end_phase(self, failed: bool = False) -> None:
        if self._phase is None:
            return
        phase, self._phase = self._phase, None
        self._ended.append(phase)
        now = self._clock()
        text = "failed" if failed else self._phase_text(phase, now)
        self._say(phase_line(phase, text, now - self._phase_started), C.COLOR_ERROR if failed else None)

    def _phase_text(self, phase: str, now: float) -> str:
        if phase == "plan":
            where = f"; run folder {self._run_dir}" if self._run_dir else ""
            return f"{self._plan_text or 'checked'}{where}"
        if phase == "hosts":
            if not self._containers:
                return "no local containers in the inventory"
            return "; ".join(self._hosts_notes) or "local containers up as wanted"
        if phase == "provision":
            if not self._roles:
                return "no host to provision"
            return "; ".join(
                f"{host}: {', '.join(roles) if roles else 'as the plan says, no role runs'}"
                for host, roles in self._roles.items()
            )
        if phase == "verify":
            return "names resolve, every stack answers"
        if phase == "cells":
            if self._cells.started is None:
                return "nothing to measure"
            return self._cells.summary(now)
        if phase == "report":
            return self._report or "written"
        return "done"

    # -- Ansible's events ---------------------------------------------------------------------------------

    def v2_playbook_on_play_start(self, play: Any) -> None:
        if not self._quiet:
            super().v2_playbook_on_play_start(play)
            return
        self._play = play
        path = play.get_path() if hasattr(play, "get_path") else None
        self._enter(phase_of(path, play.get_name().strip()))

    def v2_playbook_on_task_start(self, task: Any, is_conditional: bool) -> None:
        if not self._quiet:
            super().v2_playbook_on_task_start(task, is_conditional)
            return
        self._remember(task, "TASK")

    def v2_playbook_on_handler_task_start(self, task: Any) -> None:
        if not self._quiet:
            super().v2_playbook_on_handler_task_start(task)
            return
        self._remember(task, "RUNNING HANDLER")

    def _remember(self, task: Any, prefix: str) -> None:
        """What a failure's header needs (the default callback's state), and the live line's task."""
        self._task_type_cache[task._uuid] = prefix
        self._last_task_name = task.get_name().strip()
        self._task_name = self._last_task_name
        role = getattr(task, "_role", None)
        self._role = role.get_name() if role is not None else ""
        if _action(task) == "bench_cell":
            self._cells.batch_started(self._clock())
            self._round_starts()
        self._status()

    def v2_runner_on_ok(self, result: Any) -> None:
        if not self._quiet:
            super().v2_runner_on_ok(result)
            return
        self._handle_warnings_and_exception(result)
        res = result.result
        action = _action(result.task)
        host = result.host.get_name()
        if action == "bench_plan":
            self._plan_text = str(res.get("msg") or "")
            plan = (res.get("ansible_facts") or {}).get("bench_plan") or {}
            self._run_dir = str(plan.get("run_dir") or "")
            budget = ((plan.get("experiment") or {}).get("load") or {}).get("max_seconds")
            self._cells.budget_s = float(budget) if budget else None
        elif action == "bench_provision_state" and "bench_provision" in (res.get("ansible_facts") or {}):
            self._roles[host] = list(res["ansible_facts"]["bench_provision"].get("run") or [])
        elif action == "bench_extra_cells" and self._cells.started is not None:
            self._round(res)
        elif action == "bench_containers":
            self._containers = True
        elif action == "bench_report":
            self._report = str(res.get("report_html") or "no report (check mode)")
            self._end_phase()
        elif action == "debug" and "msg" in res:
            self._message(res["msg"])
        self._status()

    def _round(self, res: dict[str, Any]) -> None:
        now = self._clock()
        cells = res.get("cells") or []
        serves = [str(s) for s in res.get("serves") or []]
        budget = res.get("budget_s")
        self._cells.round_planned(res.get("round"), len(cells), serves, res.get("left_s"), budget, now)
        if not cells:
            return
        due = self._last_progress is None or now - self._last_progress >= PROGRESS_EVERY_S
        if serves != self._last_serves or due:
            # Said when its cells start: the first table, which comes between, is the regular rounds'.
            self._round_due = True

    def _round_starts(self) -> None:
        if self._round_due:
            now = self._clock()
            self._say(phase_line("cells", self._cells.round_line(now)))
            self._last_serves, self._last_progress = list(self._cells.serves), now
            self._round_due = False

    def _message(self, msg: Any) -> None:
        """A debug task's message, for a person: a table as it is, a short line under the phase column."""
        if isinstance(msg, str) and "\n" in msg:
            self._say(msg)
            return
        for line in msg if isinstance(msg, list) else [msg]:
            self._say(phase_line("", str(line)))

    def v2_runner_item_on_ok(self, result: Any) -> None:
        if not self._quiet:
            super().v2_runner_item_on_ok(result)
            return
        self._handle_warnings_and_exception(result)
        res = result.result
        if _action(result.task) == "bench_cell":
            now = self._clock()
            label = str(res.get("_ansible_item_label") or "")
            item = res.get("item")
            cell_id = str(item.get("cell_id") or "") if isinstance(item, dict) else ""
            measured, failed = bool(res.get("changed")), bool(res.get("failed_cell"))
            self._cells.cell_done(label, measured, now, failed, cell_id)
            self._progress(now)
        elif self._phase == "hosts" and res.get("changed") and _action(result.task) in HOSTS_VERBS:
            label = str(res.get("_ansible_item_label") or "")
            self._hosts_notes.append(f"{HOSTS_VERBS[_action(result.task)]} {label}")
        self._status()

    def _progress(self, now: float) -> None:
        """Into a file or pipe: the progress line at most every PROGRESS_EVERY_S, and when the regular
        rounds end."""
        if self._tty:
            return
        cells = self._cells
        regular_end = cells.round is None and cells.planned and cells.position == cells.planned
        if regular_end or self._last_progress is None or now - self._last_progress >= PROGRESS_EVERY_S:
            if self._last_progress is None and not regular_end and cells.position == 1:
                self._last_progress = now  # not after the first cell: its pace is not known yet
                return
            self._say(phase_line("cells", cells.line(now)))
            self._last_progress = now

    def v2_runner_on_skipped(self, result: Any) -> None:
        if not self._quiet:
            super().v2_runner_on_skipped(result)
            return
        self._handle_warnings_and_exception(result)

    def v2_runner_item_on_skipped(self, result: Any) -> None:
        if not self._quiet:
            super().v2_runner_item_on_skipped(result)
            return
        self._handle_warnings_and_exception(result)
        if _action(result.task) == "bench_cell":
            msg = str(result.result.get("msg") or "")
            self._cells.cell_skipped("check mode" if msg.startswith("check mode") else "the run stopped")

    def v2_runner_on_failed(self, result: Any, ignore_errors: bool = False) -> None:
        if self._quiet:
            self._clear_live()
            self._failed = self._failed or not ignore_errors
        super().v2_runner_on_failed(result, ignore_errors)

    def v2_runner_item_on_failed(self, result: Any) -> None:
        if self._quiet:
            self._clear_live()
        super().v2_runner_item_on_failed(result)

    def v2_runner_on_unreachable(self, result: Any) -> None:
        if self._quiet:
            self._clear_live()
            self._failed = self._failed or not result.task.ignore_unreachable
        super().v2_runner_on_unreachable(result)

    def v2_runner_retry(self, result: Any) -> None:
        if not self._quiet:
            super().v2_runner_retry(result)
            return
        self._status()

    def v2_playbook_on_include(self, included_file: Any) -> None:
        if not self._quiet:
            super().v2_playbook_on_include(included_file)

    def v2_playbook_on_no_hosts_matched(self) -> None:
        if not self._quiet:
            super().v2_playbook_on_no_hosts_matched()

    def v2_playbook_on_stats(self, stats: Any) -> None:
        if not self._quiet:
            super().v2_playbook_on_stats(stats)
            return
        self._stopped.set()
        failed = self._failed or any(
            stats.summarize(h)["failures"] or stats.summarize(h)["unreachable"] for h in stats.processed
        )
        self._end_phase(failed=failed)
        if failed:
            super().v2_playbook_on_stats(stats)
            return
        hosts = sorted(stats.processed)
        named = ", ".join(hosts) if len(hosts) <= 4 else f"{len(hosts)} hosts"
        self._say(
            phase_line("done", f"no task failed on {named or 'any host'}", self._clock() - self._started)
        )


def _width() -> int:
    """The terminal's width (the progress line is cut to it), 0 when unknown."""
    try:
        import shutil

        return shutil.get_terminal_size((0, 0)).columns
    except OSError:
        return 0
