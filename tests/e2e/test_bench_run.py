"""bench-stack.yml end to end: from a bare container to a report, then a rerun that resumes."""

from __future__ import annotations

import json
import os
import statistics
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from jsonschema import Draft202012Validator

from benchstack.cell import load_cells, validate_cell
from benchstack.cli import main as cli_main
from benchstack.experiment import cells, load_experiment
from benchstack.repetitions import is_noisy

PROJECT = Path(__file__).resolve().parents[2]
INVENTORY = Path(__file__).resolve().parent / "inventory"
CONTAINER = "bench-e2e"
EXPERIMENT = Path(__file__).resolve().parent / "experiment.yml"
SCHEMAS = PROJECT / "benchstack" / "schemas"


def playbook(run_dir: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "ANSIBLE_CONFIG": str(PROJECT / "ansible.cfg"), "ANSIBLE_NOCOLOR": "1"}
    return subprocess.run(
        [
            "ansible-playbook",
            "bench-stack.yml",
            "-i",
            str(INVENTORY),
            "-e",
            f"experiment={EXPERIMENT}",
            "-e",
            f"bench_results_dir={run_dir.parent}",
            "-e",
            f"bench_run_dir={run_dir}",
        ],
        cwd=PROJECT,
        env=env,
        capture_output=True,
        text=True,
        timeout=1500,
        check=False,
    )


def remove_container() -> None:
    subprocess.run(["docker", "rm", "-f", CONTAINER], capture_output=True, check=False, timeout=120)


@pytest.fixture(scope="module")
def fresh_container() -> Iterator[None]:
    """No bench-e2e container before the run (a failed run's would be reused, stacks and all) and none after,
    whether the run passed or failed: this fixture's teardown runs even when `run` fails in its setup."""
    remove_container()
    yield
    remove_container()


@pytest.fixture(scope="module")
def run(fresh_container: None, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str, str]:
    run_dir = tmp_path_factory.mktemp("results") / "e2e"
    first = playbook(run_dir)
    assert first.returncode == 0, first.stdout[-6000:] + first.stderr[-3000:]
    second = playbook(run_dir)
    assert second.returncode == 0, second.stdout[-6000:] + second.stderr[-3000:]
    return run_dir, first.stdout, second.stdout


def ran(output: str, role: str) -> list[str]:
    """The tasks of ``role`` that ran (ok or changed, not skipped) in a playbook's output."""
    blocks = output.split("\nTASK [")[1:]
    return [
        b.split("]", 1)[0]
        for b in blocks
        if b.startswith(f"{role} : ") and ("\nok: [" in b or "\nchanged: [" in b)
    ]


def test_the_rerun_skips_every_role_whose_inputs_did_not_change(run: tuple[Path, str, str]) -> None:
    """The first run provisions (the roles' tasks run); the rerun, with nothing changed and every service
    active, runs none of them (provisioning markers) and still verifies and resumes. The fingerprint, which
    reads the host at every run, is bench_host's only part that runs again."""
    _, first, second = run
    for role in ("ruby", "app", "app_server", "nginx", "loadgen"):
        assert len(ran(first, role)) >= 3, role
        assert ran(second, role) == [], f"{role} ran again with nothing changed"
    provisioning = (
        "Install base packages",
        "Create the unprivileged benchmark user",
        "Apply the tuning profile",
    )
    assert [t for t in ran(first, "bench_host") if t.split(" : ")[1].startswith(provisioning)]
    assert [t for t in ran(second, "bench_host") if t.split(" : ")[1].startswith(provisioning)] == []
    assert "TASK [Ask each stack through its public port]" in second


def test_every_cell_of_the_experiment_is_stored_and_valid(run: tuple[Path, str, str]) -> None:
    run_dir, _, _ = run
    planned = {c.cell_id for c in cells(load_experiment(EXPERIMENT))}
    stored = load_cells(run_dir)
    # The two planned repetitions, and one extra round for every load point they left noisy. max_cv 0.0001
    # makes nearly all of them noisy; an open-loop point (httperf at a fixed rate) can repeat its req/s to the
    # last digit and then rightly gets no extra round.
    by_id = {Path(c["raw_output"]).stem: c for c in stored}
    extra = {
        f"{base}__r3"
        for base in (cid.removesuffix("__r2") for cid in planned if cid.endswith("__r2"))
        if is_noisy([by_id[f"{base}__r1"], by_id[f"{base}__r2"]], 0.0001)
    }
    assert len(extra) >= len(planned) // 4  # ab and wrk points always vary: the round ran
    assert {Path(c["raw_output"]).stem for c in stored} == planned | extra
    for cell in stored:
        assert validate_cell(cell, require_meta=True) == []
        assert (run_dir / cell["raw_output"]).read_text().strip()
    assert cli_main(["validate", str(run_dir)]) == 0


def schema_file_errors(name: str, document: object) -> list[str]:
    """Plain jsonschema on a published schema file (docs/results-format.md), not bench-stack's validator."""
    schema = json.loads((SCHEMAS / name).read_text(encoding="utf-8"))
    Draft202012Validator.check_schema(schema)
    errors = Draft202012Validator(schema).iter_errors(document)
    return [f"{'/'.join(map(str, e.absolute_path)) or '(document)'}: {e.message}"[:300] for e in errors]


def test_every_cell_and_run_json_fit_the_published_schema_files(run: tuple[Path, str, str]) -> None:
    run_dir, _, _ = run
    stored = [p for p in sorted(run_dir.glob("cells/*.json")) if not p.name.startswith(".")]
    assert len(stored) == len(load_cells(run_dir)) > len(cells(load_experiment(EXPERIMENT)))  # + extra round
    for path in stored + sorted(run_dir.glob("loadgens/*/cells/[!.]*.json")):
        cell = json.loads(path.read_text(encoding="utf-8"))
        assert schema_file_errors("cell.schema.json", cell) == [], path
    info = json.loads((run_dir / "run.json").read_text(encoding="utf-8"))
    assert {"experiment", "hosts", "verify", "verdict"} <= set(info)  # as the run and its report left it
    assert schema_file_errors("run.schema.json", info) == []


def test_repetitions_give_the_median_and_range_of_their_cells(run: tuple[Path, str, str]) -> None:
    run_dir, _, _ = run
    report = (run_dir / "report.md").read_text()
    row = next(line for line in report.splitlines() if line.startswith("| sinatra-thin-x1 | wrk |"))
    cols = [c.strip() for c in row.strip("|").split("|")]
    rps = [c["rps"] for c in load_cells(run_dir) if (c["stack"], c["tool"]) == ("sinatra-thin-x1", "wrk")]
    assert cols[3] == str(len(rps)) == "3"  # n repetitions: 2 planned, 1 extra round
    assert cols[4] == f"{statistics.median(rps):.2f}"
    assert cols[5] == f"{min(rps):.2f}–{max(rps):.2f}"


def test_every_cell_measured_real_traffic_without_errors(run: tuple[Path, str, str]) -> None:
    run_dir, _, _ = run
    for cell in load_cells(run_dir):
        assert cell["rps"] > 0, cell["stack"]
        assert cell["requests_completed"] > 0, cell["stack"]
        assert cell["latency_ms"]["p50"] is not None and cell["latency_ms"]["p50"] >= 0
        # Correctness only: slow responses (timeout, over_threshold) depend on how busy the machine is.
        functional = {k: v for k, v in cell["errors"].items() if k not in ("timeout", "over_threshold")}
        assert not any(functional.values()), (cell["stack"], cell["tool"], cell["errors"])
        if cell["tool"] == "httperf":
            # Open loop: slower than the threshold is aborted there and counted as a timeout.
            assert cell["rate"] == 200 and cell["errors"]["over_threshold"] is None
            assert any("slower than the threshold (300 ms)" in n for n in cell["notes"])
        else:
            assert cell["errors"]["over_threshold"] is not None  # measured from per-request data
        assert cell["mode"] == "loopback"
        assert cell["target"] == cell["loadgen"] == CONTAINER


def test_static_nginx_outruns_ruby_on_thin(run: tuple[Path, str, str]) -> None:
    # A ratio, not a speed: serving a file from nginx needs far less work than a Ruby request.
    run_dir, _, _ = run
    rps = {(c["stack"], c["tool"]): c["rps"] for c in load_cells(run_dir)}
    for tool in ("ab", "wrk"):
        assert rps[("nginx-static", tool)] > 1.5 * rps[("sinatra-thin-x1", tool)]


def test_run_json_fingerprints_the_host(run: tuple[Path, str, str]) -> None:
    run_dir, _, _ = run
    info = json.loads((run_dir / "run.json").read_text())
    assert info["experiment"]["name"] == "e2e"
    assert info["mode"] == "loopback"
    fp = info["hosts"][CONTAINER]
    assert int(fp["cpu_count"]) >= 1
    assert fp["distribution"].startswith("Debian")
    assert {"nginx", "thin", "wrk", "httperf"} <= set(fp["packages"])
    assert "net.core.somaxconn" in fp["sysctls"]
    assert len(fp["config_sha256"]["/etc/nginx/conf.d/bench-stack.conf"]) == 64


def test_report_lists_every_stack_and_is_printed(run: tuple[Path, str, str]) -> None:
    run_dir, first, _ = run
    report = (run_dir / "report.md").read_text()
    for stack in ("sinatra-thin-x1", "sinatra-thin-x4-nginx", "nginx-static"):
        assert f"| {stack} | ab | c100 |" in report
        assert f"| {stack} | wrk | c32 |" in report
        assert f"| {stack} | httperf (open loop) | 200/s |" in report
        assert f"| {stack} | wrk |" in first
    assert (run_dir / "cells.csv").exists()
    page = (run_dir / "report.html").read_text()
    pngs = sorted((run_dir / "plots").glob("*.png"))
    assert len(pngs) >= 3
    assert page.count("data:image/png;base64,") == len(pngs)
    assert "report.html" in first


def test_rerun_resumes_without_measuring_again(run: tuple[Path, str, str]) -> None:
    run_dir, first, second = run
    measure = second.split("TASK [Measure each cell", 1)[1].split("TASK [", 1)[0]
    assert "changed:" not in measure
    planned = len(cells(load_experiment(EXPERIMENT)))
    assert measure.count("ok: [bench-e2e]") == planned
    # The extra round ran once, in the first run; the rerun finds every load point at max_repetitions.
    extra_first = first.split("TASK [Measure the next repetition of each noisy load point]", 1)[1]
    assert (
        extra_first.split("TASK [", 1)[0].count("changed: [bench-e2e]") == len(load_cells(run_dir)) - planned
    )
    extra_second = second.split("TASK [Measure the next repetition of each noisy load point]", 1)[1]
    assert "changed:" not in extra_second.split("TASK [", 1)[0]


def test_the_run_ends_with_its_verdict_and_validate_strict_gates_on_it(run: tuple[Path, str, str]) -> None:
    run_dir, first, _ = run
    info = json.loads((run_dir / "run.json").read_text())
    assert info["verify"]["passed"] is True
    assert set(info["verify"]["stacks"]) == {"sinatra-thin-x1", "sinatra-thin-x4-nginx", "nginx-static"}
    verdict = info["verdict"]
    # max_cv 0.0001: every load point is noisy even after its extra round; nothing makes the run invalid.
    assert verdict["status"] == "noisy", verdict
    assert "cv" in {r["code"] for r in verdict["reasons"]}
    assert "Verdict: NOISY" in first
    assert cli_main(["validate", str(run_dir), "--strict"]) == 0
    assert cli_main(["validate", str(run_dir), "--strict", "--fail-on-noisy"]) == 3
