"""The loadgen's wrk, built from the mirror's source tarball with the system's OpenSSL
(loadgen_wrk_method: source), as on Amazon Linux 2023."""

import json
import os
from pathlib import Path

from testinfra.host import Host

testinfra_hosts = ["bench-mol-ssh-lg"]
RUN = Path(os.environ["MOLECULE_EPHEMERAL_DIRECTORY"]) / "run"
SHA = "2dc92a6936b7e8a2cb8e9c264e5a4637625758c56a27d609692471aff74b1bac"
BUILD = f"/var/lib/bench-stack/build/wrk-{SHA[:16]}"


def test_wrk_is_the_source_build_linked_to_the_systems_openssl(host: Host) -> None:
    assert host.check_output("command -v wrk") == "/usr/local/bin/wrk"
    assert host.file("/usr/local/bin/wrk").sha256sum == host.file(f"{BUILD}/wrk").sha256sum
    assert "wrk 4.2.0" in host.run("wrk --version").stdout
    assert "libssl.so.3 => /lib/x86_64-linux-gnu/libssl.so.3" in host.check_output("ldd /usr/local/bin/wrk")
    # wrk's own OpenSSL build was never used (the tarball has none): only the system's
    assert not host.file(f"{BUILD}/obj/openssl-1.1.1i").exists
    assert not host.package("wrk").is_installed


def test_the_wrk_cells_ran_the_source_build() -> None:
    [cell] = [json.loads(p.read_text(encoding="utf-8")) for p in (RUN / "cells").glob("*__wrk__*.json")]
    assert cell["tool_version"].startswith("wrk 4.2.0"), cell["tool_version"]
