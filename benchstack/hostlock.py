"""The host's lock, read and written ON the host (``python3 -c <this file's source> <json>``).

One bench-stack run at a time provisions and measures a host, whatever run folder or controller it comes
from: a second run's provisioning would stop the first one's stacks (units no stack of its plan owns) and
its cells would load the first one's. The controller judges who holds the lock (benchstack.runlock,
:func:`~benchstack.runlock.take_host`); this file only reads and writes it, under ``flock``, so two runs
asking at once cannot both take it. Standard library only, Python 3.6 and later (benchstack.hoststate).

The lock is :data:`PATH`: JSON naming the holder (``host``: its controller's host name, ``pid`` and
``started``: the controller process, ``run``: its run folder, ``at``: since when). Empty or unreadable
means free (a writer killed half way). The argument is a JSON object:

* ``op``: ``take`` writes ``me`` when the lock is free, already ``me``'s, or still exactly ``over`` (a
  holder the controller found ended); ``read`` writes nothing; ``release`` empties it when it is ``me``'s;
* ``me``, ``over``: holders; ``path``: another lock file (the tests).

Prints one JSON line: ``{"held": bool, "was": the holder found before (null when free)}``; ``held`` says
whether ``me`` holds the lock now (for ``release``: held it).
"""

import fcntl
import json
import os
import sys

PATH = "/var/lib/bench-stack/run.lock"
IDENTITY = ("host", "pid", "started")


def same(a: object, b: object) -> bool:
    return isinstance(a, dict) and isinstance(b, dict) and all(a.get(k) == b.get(k) for k in IDENTITY)


def main(argv: list) -> None:
    request = json.loads(argv[1])
    path = request.get("path") or PATH
    me, op = request.get("me"), request.get("op")
    if op != "take" and not os.path.exists(path):
        # Nothing to read or release; check mode must not create it.
        sys.stdout.write(json.dumps({"held": False, "was": None}) + "\n")
        return
    os.makedirs(os.path.dirname(path), mode=0o755, exist_ok=True)
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    with os.fdopen(fd, "r+", encoding="utf-8") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        text = handle.read()
        try:
            was = json.loads(text) if text.strip() else None
        except ValueError:
            was = None
        if not isinstance(was, dict):
            was = None
        held = same(was, me)
        write = None
        if op == "take" and (was is None or held or same(was, request.get("over"))):
            held, write = True, json.dumps(me, sort_keys=True) + "\n"
        elif op == "release" and held:
            write = ""
        if write is not None:
            handle.seek(0)
            handle.truncate()
            handle.write(write)
            handle.flush()
            os.fsync(handle.fileno())
    sys.stdout.write(json.dumps({"held": held, "was": was}, sort_keys=True) + "\n")


if __name__ == "__main__":
    main(sys.argv)
