"""The report as users read it, held to stored files: report.md byte for byte, report.html after whitespace
normalisation (:func:`normal_html`), cells.csv, loadpoints.csv, run.json's verdict and comparisons, and what
``bench-stack report``, ``compare`` and ``validate --strict`` print, for run folders built from the captures
in tests/data, one per shape of report (a verdict with every kind of line, a valid run, comparisons, a
baseline without cells and no matplotlib, cells without run.json, two targets, latency distributions).

tests/data/report-golden/ was written by the report code before the report model (benchstack.report.model);
after a deliberate change of the report, ``BENCH_STACK_GOLDEN=write pytest
tests/unit/report/test_report_golden.py`` rewrites it, and the diff shows what a user will see change."""

from __future__ import annotations

import json
import os
import re
import sys
from pathlib import Path

import pytest
from conftest import read_data
from test_report import RUN_JSON, six_rounds
from test_report import cell as report_cell
from test_report_latency import cell as latency_cell
from test_targets import FAST, SLOW, measure_run
from test_verdict import AB_5XX, FINGERPRINT, Run, disturb, slow_run, steady

from benchstack import cli
from benchstack.provision.dns import probe_rows
from benchstack.results.cell import write_cell
from benchstack.results.runfolder import record_stop

GOLDEN = Path(__file__).resolve().parents[2] / "data" / "report-golden"
WRITE = os.environ.get("BENCH_STACK_GOLDEN") == "write"
# The run folders' names: report.md names its run folder.
NAME = "20250102T030405Z-{}"

# Block-level tags: whitespace beside them is layout, not text (beside <strong> or <code> it is text).
BLOCK_TAGS = (
    "html|head|meta|title|style|body|h1|h2|h3|p|ul|li|table|thead|tbody|tr|th|td|figure|img|pre|!DOCTYPE"
)


# Quotes as Python's html.escape wrote them and as Jinja's autoescape (markupsafe) does: the same characters.
ENTITIES = {"&#x27;": "&#39;", "&quot;": "&#34;"}


def normal_html(page: str) -> str:
    """The page with each run of whitespace as one space and none beside a block-level tag, and quotes
    escaped one way (:data:`ENTITIES`)."""
    for entity, same in ENTITIES.items():
        page = page.replace(entity, same)
    page = re.sub(r"\s+", " ", page)
    return re.sub(rf"\s*(</?(?:{BLOCK_TAGS})\b[^>]*>)\s*", r"\1", page).strip()


def noise_floor() -> dict[str, object]:
    return {
        "gen1": {
            "stack": "nginx-static",
            "url": "http://web1:8010/",
            "command": "wrk -t 1 -c 8 -d 2s",
            "rps": [10210.5, 10302.1, 10150.0],
            "requests": 61000,
            "cv": 0.0075,
            "foreign": 0.012,
            "steal": 0.004,
            "problem": None,
        }
    }


def dns_probe() -> dict[str, object]:
    runs = [
        {
            "runtime": "ruby",
            "client": "Net::HTTP",
            "phase": p,
            "name": f"rb.{p}.bench-dns.test",
            "requests": 5,
            "answered": 5,
        }
        for p in ("nocache", "nscd")
    ]
    return {
        "web1": {
            "requests": 5,
            "rows": probe_rows(runs, read_data("dnsmasq", "probe-nocache-nscd-unbound.log")),
        }
    }


def build_mixed(root: Path) -> list[Path]:
    """A verdict with every kind of line: invalid and noisy reasons (one naming more cells than shown),
    slow responses, notes not checked; a disturbed cell, parser notes, the noise floor, a seed, DNS."""
    path = root / NAME.format("mixed")
    run = Run(path)
    fine = steady(run, "fine", reps=6)
    extra = run.measure(
        "fine", {"tool": "ab", "concurrency": 2, "requests": 2800}, read_data("verdict", "ab-steady.txt"), 7
    )
    disturb(run, extra)
    run.measure("busy", AB_5XX, read_data("ab", "mixed-status-length.txt"))
    slow_run(run, "slowpoke")
    run.plan("stuck", {"tool": "ab", "concurrency": 2, "requests": 2800}, 1)
    run.write_info()
    record_stop(path, "stuck__ab__c2__r1", "hung", "ab completed no request", at="2025-01-02T03:30:00Z")
    stopped = json.loads((path / "run.json").read_text(encoding="utf-8"))["stopped"]
    assert len(fine) == 6
    run.write_info(
        stopped=stopped,
        verify={"passed": True, "at": "2025-01-02T03:00:00Z", "stacks": ["busy", "slowpoke", "stuck"]},
        noise_floor=noise_floor(),
        seed=42,
        dns_probe=dns_probe(),
    )
    return [path]


def build_valid(root: Path) -> list[Path]:
    """Nothing to doubt: one stack, eight steady rounds, loopback on split CPUs."""
    path = root / NAME.format("valid")
    run = Run(path, mode="loopback")
    steady(run)
    split = {**FINGERPRINT, "cpu_split": {"loadgen_cpus": "0", "stack_cpus": "1"}}
    run.write_info(hosts={"web1": split})
    return [path]


def build_comparisons(root: Path) -> list[Path]:
    """Two stacks against a baseline, ten rounds each: both comparisons resolved (ab's rows spread +-13 %,
    information beside a comparison, not marked noisy)."""
    path = root / NAME.format("comparisons")
    six_rounds(path)
    (path / "run.json").write_text(json.dumps(RUN_JSON), encoding="utf-8")
    return [path]


def build_missing_baseline(root: Path) -> list[Path]:
    """A baseline without cells; ab's rows noisy at the default 5 % target; matplotlib missing (report.html
    says so instead of showing plots)."""
    path = root / NAME.format("missing-baseline")
    six_rounds(path)
    load = {"baseline": "gone"}
    info = {**RUN_JSON, "experiment": {**RUN_JSON["experiment"], "load": load}}
    (path / "run.json").write_text(json.dumps(info), encoding="utf-8")
    return [path]


def build_bare(root: Path) -> list[Path]:
    """Cells without run.json: the summary from the cells' own fields; a parser's note."""
    path = root / NAME.format("bare")
    write_cell(path, report_cell("ab", "normal.txt", "a-stack", requests=2000))
    write_cell(path, report_cell("wrk", "timeouts.txt", "a-stack", duration_s=3))
    write_cell(path, report_cell("wrk", "latency.txt", "a|b", duration_s=3))
    return [path]


def build_targets(root: Path) -> list[Path]:
    """Two targets one after the other: a table each under its host type, and side by side."""
    path = root / NAME.format("targets")
    measure_run(path)
    return [path]


def build_latency(root: Path) -> list[Path]:
    """Latency distributions from wrk's histogram and ab's per-request file, pooled over repetitions."""
    path = root / NAME.format("latency")
    for n in (1, 2):
        write_cell(path, latency_cell("wrk", f"wrk-pair-lg{n}", "a-stack", n, duration_s=4))
    write_cell(path, latency_cell("wrk", "wrk-fast", "b-stack", 1, duration_s=3, concurrency=32))
    for n in (1, 2, 3):
        write_cell(path, latency_cell("ab", "ab-slow", "a-stack", n, requests=2000))
    return [path]


CASES = {
    "mixed": build_mixed,
    "valid": build_valid,
    "comparisons": build_comparisons,
    "missing-baseline": build_missing_baseline,
    "bare": build_bare,
    "targets": build_targets,
    "latency": build_latency,
}


def run_cli(capsys: pytest.CaptureFixture[str], root: Path, *argv: str) -> str:
    code = cli.main(list(argv))
    out, err = capsys.readouterr()
    return f"exit {code}\n{out}{err}".replace(str(root), "ROOT")


def produced(
    case: str, root: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> dict[str, str]:
    """Every file the golden folder holds for ``case``, as the code at hand makes them."""
    [path] = CASES[case](root)
    if case == "missing-baseline":
        monkeypatch.setitem(sys.modules, "benchstack.report.plots", None)  # as if matplotlib were missing
    files = {"stdout-report.txt": run_cli(capsys, root, "report", str(path))}
    for name in ("report.md", "report.html", "cells.csv", "loadpoints.csv"):
        files[name] = (path / name).read_text(encoding="utf-8")
    # The runner stamps the cells it measures with the time of the test (started_at, elapsed_s).
    files["cells.csv"] = re.sub(
        r",\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ,[\d.]+,", ",TIME,SECONDS,", files["cells.csv"]
    )
    info = json.loads((path / "run.json").read_text(encoding="utf-8")) if (path / "run.json").exists() else {}
    stored = {k: info.get(k) for k in ("verdict", "comparisons")}
    files["run-verdict.json"] = json.dumps(stored, indent=1, sort_keys=True) + "\n"
    if case == "mixed":
        files["stdout-validate.txt"] = run_cli(capsys, root, "validate", "--strict", str(path))
    if case == "comparisons":
        files["stdout-compare.txt"] = run_cli(capsys, root, "compare", str(path))
        other = build_missing_baseline(root)[0]
        files["stdout-compare-runs.txt"] = run_cli(capsys, root, "compare", str(path), str(other))
    if case == "targets":
        files["stdout-compare.txt"] = run_cli(capsys, root, "compare", str(path), "--targets", FAST, SLOW)
    return files


@pytest.mark.parametrize("case", list(CASES))
def test_the_report_and_what_the_commands_print_are_what_they_were(
    case: str, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    files = produced(case, tmp_path, capsys, monkeypatch)
    folder = GOLDEN / case
    if WRITE:
        folder.mkdir(parents=True, exist_ok=True)
        for name, text in files.items():
            (folder / name).write_text(text, encoding="utf-8")
    assert sorted(files) == sorted(p.name for p in folder.iterdir())
    for name, text in files.items():
        want = (folder / name).read_text(encoding="utf-8")
        if name.endswith(".html"):
            assert normal_html(text) == normal_html(want), f"{case}/{name}"
        else:
            assert text == want, f"{case}/{name}"


def test_html_normalisation_keeps_the_text_and_the_space_between_inline_tags() -> None:
    assert normal_html("<ul>\n  <li><strong>a</strong> <code>b</code>:  c</li>\n</ul>\n") == (
        "<ul><li><strong>a</strong> <code>b</code>: c</li></ul>"
    )
    assert normal_html("<li>a b</li>") != normal_html("<li>ab</li>")
    assert normal_html("<p>&#x27;a&#x27; &quot;b&quot;</p>") == "<p>&#39;a&#39; &#34;b&#34;</p>"
