"""The shell the runner sends to a loadgen (and in network mode to the target), so that whatever ends a cell -
the tool finishing, Ctrl-C, a lost connection, a killed playbook - leaves no process and no file behind.

Each load command (a cell's warm-up, its measured run) runs in a folder of its own,
``/tmp/bench-stack-run.<run>.XXXXXX`` (:func:`in_own_folder`, ``<run>`` names the playbook run): the script
writes its pid there, runs the tool in the background and waits for it, and its EXIT trap (reached from HUP,
INT, PIPE and TERM too) stops the tool and vmstat and removes the folder. The measured run's script
(:func:`measured_script`) also starts ``vmstat -n 1`` beside the tool, reads the loadgen's clock around it
(``BENCH-STACK-WINDOW <start> <end>`` on stderr) and prints, after the tool's own output and behind marker
lines, vmstat's samples and ab's ``-g`` file (:func:`split_measured`): nothing it wrote outlives the command.

A command whose client dies keeps running on the host over Docker's exec (and over SSH until it next
writes): it runs to its end, bounded by ``timeout``, and cleans up then. So that a resumed run never loads a
stack beside such a leftover, each cell first runs :func:`sweep_command`, which stops the scripts of other
runs still running there (the pid in their folder, checked against that process's working folder, so a
reused pid is never hit) and removes the folders of scripts that were killed outright. The target's vmstat
(network mode) runs in such a folder too (:func:`target_vmstat_start`) and is swept the same way.
"""

from __future__ import annotations

import base64
import re
import shlex
from typing import Any

from benchstack.kinds.loadtools.perrequest import REQUESTS_FILE
from benchstack.measure.hostevents import AFTER as STATE_AFTER
from benchstack.measure.hostevents import BEFORE as STATE_BEFORE
from benchstack.measure.hostevents import STATE_FUNCTION, print_state
from benchstack.measure.interference import MARKER as CPU_MARKER
from benchstack.measure.interference import SNAPSHOT_FUNCTION, print_snapshot


def without_tty(connection: Any) -> None:
    """Send this task's commands over ``connection`` without a terminal. Ansible's ssh connection asks for one
    (``ssh -tt``) for a become command that sends no input; the host then merges stderr into stdout and ends
    lines with CRLF, so the runner's marker lines (the window, vmstat, ab's -g file, the CPU snapshots, the
    noise probe) were not found over SSH. Other connections (docker) have no such option. sudo without a
    terminal needs ``requiretty`` off, as pipelining does."""
    if connection.has_option("use_tty"):
        connection.set_option("use_tty", False)


TEMP_ROOT = "/tmp"
PREFIX = "bench-stack-run"
VMSTAT_MARKER = "BENCH-STACK-VMSTAT"
REQUESTS_MARKER = "BENCH-STACK-REQUESTS"
WINDOW_MARKER = "BENCH-STACK-WINDOW"
# The tool's exit code when the script could not make its folder.
NO_FOLDER_RC = 125
_RUN_ID = re.compile(r"[A-Za-z0-9-]{1,64}")


def _checked(run_id: str) -> str:
    # The run id is printed into shell patterns unquoted: only letters, digits and '-'.
    if not _RUN_ID.fullmatch(run_id):
        raise ValueError(f"run id must be 1-64 letters, digits or '-', not {run_id!r}")
    return run_id


def folder_pattern(run_id: str) -> str:
    """The glob of one run's folders on a host."""
    return f"{TEMP_ROOT}/{PREFIX}.{_checked(run_id)}.*"


def in_own_folder(run_id: str, body: str) -> str:
    """Shell that runs ``body`` in a new folder of its own (``$d``, its working folder) and removes it on
    exit, whatever ends it; ``body`` runs its tool as :data:`START_TOOL` and vmstat as ``$v`` so that the
    trap stops them too."""
    folder = f"{TEMP_ROOT}/{PREFIX}.{_checked(run_id)}.XXXXXX"
    return (
        f"d=$(mktemp -d {folder}) || exit {NO_FOLDER_RC}; t= v=; "
        # A signal can land after `CMD &` and before `t=$!` (or vmstat's `v=$!`): t (v) still says pending,
        # and $! is the tool (vmstat). And a child forked but not yet running its command drops a signal (dash
        # runs it as a trap the fork then clears): so once something was there to stop, it is stopped twice
        # more, 0.1 and 0.4 s later.
        'trap \'[ "$t" = pending ] && t=$!; [ "$v" = pending ] && v=$!; if kill $t $v 2>/dev/null; then '
        'for s in 0.1 0.3; do sleep $s; kill $t $v 2>/dev/null; done; fi; cd /; rm -rf "$d"\' EXIT; '
        "trap 'exit 129' HUP; trap 'exit 130' INT; trap 'exit 141' PIPE; trap 'exit 143' TERM; "
        f'echo $$ > "$d/pid"; cd "$d" || exit {NO_FOLDER_RC}; {body}'
    )


# How a script of :func:`in_own_folder` starts its tool (``{}``: the command) and waits for it.
START_TOOL = "t=pending; {} & t=$!; wait $t; rc=$?; t="


def load_script(run_id: str, command: str) -> str:
    """Shell for a load command whose output is all the caller reads (a warm-up)."""
    return in_own_folder(run_id, f"{START_TOOL.format(command)}; exit $rc")


def measured_script(run_id: str, command: str, vmstat_s: int) -> str:
    """Shell for a cell's measured run: vmstat beside ``command`` (bounded to ``vmstat_s``), the loadgen's
    clock read just before and after it, then vmstat's samples and, when the tool wrote one, ab's ``-g``
    file (:data:`REQUESTS_FILE`) printed after the tool's output; exits with the tool's exit code."""
    return in_own_folder(
        run_id,
        f"{SNAPSHOT_FUNCTION}; {STATE_FUNCTION}; {print_state(STATE_BEFORE)} >&2; "
        f"v=pending; timeout {int(vmstat_s)} vmstat -n 1 > vmstat.txt 2>&1 < /dev/null & v=$!; "
        f"{print_snapshot('before')} >&2; "
        # The children's CPU just before and after the tool (vmstat is reaped later): their difference is
        # the load tool's own, without the snapshots' processes.
        f"times > times0.txt; s=$(date +%s.%N); {START_TOOL.format(command)}; times > times.txt; "
        f"e=$(date +%s.%N); {print_snapshot('after')} >&2; {print_state(STATE_AFTER)} >&2; "
        "kill $v 2>/dev/null; wait $v 2>/dev/null; v=; "
        f'echo "{WINDOW_MARKER} $s $e" >&2; '
        f'echo "{CPU_MARKER} times0 $(tail -n 1 times0.txt)" >&2; '
        f'echo "{CPU_MARKER} times $(tail -n 1 times.txt)" >&2; '
        f"printf '\\n%s\\n' {VMSTAT_MARKER}; cat vmstat.txt; "
        f"if [ -f {REQUESTS_FILE} ]; then printf '\\n%s\\n' {REQUESTS_MARKER}; cat {REQUESTS_FILE}; fi; "
        "exit $rc",
    )


def split_measured(stdout: str) -> tuple[str, str | None, str | None]:
    """(the tool's stdout, vmstat's output or None, ab's -g file or None) from a measured script's stdout.
    Without the vmstat marker (the script stopped before the tool ended) all of it is the tool's."""
    tool, sep, rest = stdout.rpartition(f"\n{VMSTAT_MARKER}\n")
    if not sep:
        return stdout, None, None
    vmstat, sep, requests = rest.partition(f"\n{REQUESTS_MARKER}\n")
    return tool, vmstat, requests if sep else None


def sweep_command(run_id: str) -> str:
    """Shell that stops every load script or vmstat of another run still running on this host, removes the
    folders they leave, and prints how many it stopped."""
    mine = folder_pattern(run_id)
    return (
        f"n=0; for o in {TEMP_ROOT}/{PREFIX}.*; do "
        '[ -d "$o" ] || continue; '
        f'case "$o" in {mine}) continue;; esac; '
        'p=$(cat "$o/pid" 2>/dev/null); '
        'if [ -n "$p" ] && [ "$(readlink "/proc/$p/cwd" 2>/dev/null)" = "$o" ]; then '
        'kill "$p" 2>/dev/null && n=$((n+1)); '
        # Give its trap a moment to stop the tool; then whatever is left of the folder goes.
        'for i in 1 2 3 4 5 6 7 8 9 10; do [ -d "$o" ] && kill -0 "$p" 2>/dev/null || break; '
        "sleep 0.2; done; fi; "
        'rm -rf "$o"; done; echo "$n"'
    )


def target_vmstat_start(run_id: str, seconds: int) -> str:
    """Shell that sweeps, then starts a bounded ``vmstat -n 1`` in the background in a folder of its own
    (the folder's pid is vmstat's ``timeout``) and prints ``<pid> <folder> <stopped>``; the target's state
    line (:mod:`benchstack.measure.hostevents`) goes to stderr."""
    folder = f"{TEMP_ROOT}/{PREFIX}.{_checked(run_id)}.XXXXXX"
    return (
        f"n=$({sweep_command(run_id)}); {SNAPSHOT_FUNCTION}; "
        f"{STATE_FUNCTION}; {print_state(STATE_BEFORE)} >&2; "
        f'd=$(mktemp -d {folder}) && cd "$d" && '
        f"{{ nohup timeout {int(seconds)} vmstat -n 1 > vmstat.txt 2>&1 < /dev/null & "
        f'echo $! > pid; {print_snapshot("before")} > snap; echo "$! $d $n"; }}'
    )


def target_vmstat_stop(pid: int, folder: str) -> str:
    """Shell that stops the target's vmstat, prints the target's state line (first, so a target whose
    folder went with a restart still answers it), what vmstat took and the CPU snapshots around it (marked
    lines, :mod:`benchstack.measure.interference`) and removes its folder."""
    where = shlex.quote(folder)
    return (
        f"kill {int(pid)} 2>/dev/null; {STATE_FUNCTION}; {print_state(STATE_AFTER)}; "
        f"{SNAPSHOT_FUNCTION}; {print_snapshot('after')} > {where}/snap.after; "
        f"sleep 0.2; cat {where}/vmstat.txt {where}/snap {where}/snap.after; rm -rf {where}"
    )


BATCH_MARKER = "BENCH-STACK-BATCH"


def batch_script(commands: list[str]) -> str:
    """Shell that runs ``commands`` one after another, each as its own ``sh`` process as a separate call
    would (its own ``$$``, which :func:`in_own_folder` writes for the sweep), and prints one line per
    command: the marker, its exit code, its stdout and its stderr in base64 (:func:`split_batch`). One
    round trip instead of one per command: over Docker's exec or SSH each costs about 0.1 s, and a cell's
    helpers and warm-up were three of them (issue 25: more cells per minute is more precision)."""
    parts = [
        f"b=$(mktemp -d {TEMP_ROOT}/bench-stack-batch.XXXXXX) || exit {NO_FOLDER_RC}",
        "trap 'rm -rf \"$b\"' EXIT",
        "trap 'exit 129' HUP; trap 'exit 130' INT; trap 'exit 141' PIPE; trap 'exit 143' TERM",
    ]
    for command in commands:
        encoded = base64.b64encode(command.encode()).decode()
        parts.append(
            f'echo {encoded} | base64 -d > "$b/c"; sh "$b/c" > "$b/o" 2> "$b/e" < /dev/null; r=$?; '
            f'echo "{BATCH_MARKER} $r $(base64 < "$b/o" | tr -d \'\\n\') $(base64 < "$b/e" | tr -d \'\\n\')"'
        )
    return "; ".join(parts)


def split_batch(stdout: str, count: int) -> list[tuple[int, str, str]]:
    """(exit code, stdout, stderr) of each of the ``count`` commands of a :func:`batch_script`; a command
    that printed no line (the batch ended first) gets exit code 1 and no output."""
    found: list[tuple[int, str, str]] = []
    for line in stdout.splitlines():
        fields = line.split(" ")
        if len(fields) != 4 or fields[0] != BATCH_MARKER or not fields[1].isdigit():
            continue
        try:
            out, err = (base64.b64decode(f, validate=True).decode("utf-8", "replace") for f in fields[2:])
        except ValueError:
            continue
        found.append((int(fields[1]), out, err))
    return (found + [(1, "", "not run: the batch ended before it")] * count)[:count]
