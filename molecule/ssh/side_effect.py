"""The ssh scenario's side effect: provisioning over SSH again, every role this time, then with a new wrk
tarball. Evidence for the tests (tests/sideeffect.py); it asserts nothing itself.

1. ``every-role``: playbooks/provision.yml with bench_provision_skip_unchanged=false, as the user's inventory
   has it otherwise: every role runs again over SSH through sudo and must change nothing (wrk is not built
   again).
2. ``new-tarball``: the same with the markers on and loadgen_wrk_source_url/sha256 naming another tarball (the
   same files gzipped again, tests/mirror/parts/wrk.sh): only the loadgen role runs, and it builds wrk anew.
3. ``wrk-deleted``: the wrk binary deleted by hand on the loadgen (no package owns it), then the same
   provisioning: the record's hash of it differs, so only the loadgen role runs, and puts the build back.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from converge import HOSTS, MIRROR, run_bench, wrk_sha256  # noqa: E402

REPACKED = "wrk-4.2.0-repacked.tar.gz"


def main() -> int:
    every = run_bench("every-role", "playbooks/provision.yml", {"bench_provision_skip_unchanged": False})
    repacked = {
        "loadgen_wrk_source_url": f"{MIRROR}/wrk/{REPACKED}",
        "loadgen_wrk_source_sha256": wrk_sha256(REPACKED),
    }
    new = run_bench("new-tarball", "playbooks/provision.yml", repacked)
    subprocess.run(["docker", "exec", HOSTS["loadgen-1"], "rm", "/usr/local/bin/wrk"], check=True)
    deleted = run_bench("wrk-deleted", "playbooks/provision.yml", repacked)
    return 0 if every["rc"] == 0 and new["rc"] == 0 and deleted["rc"] == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
