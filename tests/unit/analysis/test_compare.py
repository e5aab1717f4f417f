import dataclasses
import json
import math
from pathlib import Path

import pytest
from conftest import read_data

from benchstack.analysis.compare import baseline_rows, compare_rows, compare_table, p_text, significance
from benchstack.cli import main
from benchstack.kinds.loadtools import parse
from benchstack.results.cell import Cell, make_cell, write_cell


def cell(stack: str, repetition: int, rps: float, p99: float = 4.0, name: str = "normal.txt") -> Cell:
    c = make_cell(
            parse("ab", read_data("ab", name)),
            experiment="cmp", stack=stack, target="t", loadgen="t", mode="loopback", command="ab",
            url="http://127.0.0.1/", requests=2000, repetition=repetition,
            started_at="2025-01-02T03:04:05Z", raw_output=f"raw/{stack}-{repetition}.txt",
    )  # fmt: skip
    return dataclasses.replace(c, rps=rps, latency_ms=dataclasses.replace(c.latency_ms, p99=p99))


def test_a_clear_improvement_over_five_repetitions_is_significant() -> None:
    a = [cell("s", r, v, p99=10.0) for r, v in enumerate([5120.5, 5210.3, 5098.7, 5150.0, 5170.2], 1)]
    b = [cell("s", r, v, p99=8.0) for r, v in enumerate([5402.1, 5388.0, 5450.9, 5420.0, 5399.9], 1)]
    [row] = compare_rows(a, b)
    assert row["req/s A"] == "5150.00" and row["req/s B"] == "5402.10"
    assert row["req/s change"] == "+4.9%"
    assert row["p99 change"] == "-20.0%"
    # every B above every A: the exact two-sided Mann-Whitney p is 2 / C(10, 5) = 0.0079
    assert row["significant"] == "yes (p=0.008)"


def test_a_change_inside_the_noise_shows_no_difference() -> None:
    a = [cell("s", r, v) for r, v in enumerate([1000.0, 1100.0, 1200.0, 1300.0], 1)]
    b = [cell("s", r, v) for r, v in enumerate([1050.0, 1150.0, 1250.0, 1350.0], 1)]
    # B is +4.5 % but interleaved with A: U = 6 of 16, exact p = 48 / 70 (scipy.stats.mannwhitneyu)
    assert compare_rows(a, b)[0]["significant"] == "~ (p=0.69)"


def test_two_repetitions_a_side_are_not_tested() -> None:
    # Welch's t-test called 3 of 6 such pairs significant, in opposite directions
    two = [cell("s", 1, 100.0), cell("s", 2, 101.0)]
    four = [cell("s", r, v) for r, v in enumerate([150.0, 151.0, 152.0, 153.0], 1)]
    assert significance(two, four) == significance(four, two) == "n/a (n<4)"
    assert significance(
        four, [cell("s", r, v + 10) for r, v in enumerate([150.0, 151.0, 152.0, 153.0], 1)]
    ) == (
        "yes (p=0.029)"  # 4 against 4, all apart: 2 / C(8, 4)
    )


@pytest.mark.parametrize(
    ("p", "shown"), [(0.4, "=0.40"), (0.1, "=0.10"), (0.049, "=0.049"), (0.0004, "<0.001")]
)
def test_a_p_value_below_0_1_keeps_a_third_decimal(p: float, shown: str) -> None:
    assert p_text(p) == shown


def test_disturbed_cells_are_listed_but_neither_tested_nor_in_the_medians() -> None:
    a = [cell("s", r, v) for r, v in enumerate([100.0, 101.0, 102.0, 103.0], 1)]
    b = [cell("s", r, v) for r, v in enumerate([200.0, 201.0, 202.0], 1)]
    b += [dataclasses.replace(cell("s", r, 1.0, p99=999.0), disturbed=["steal 40 %"]) for r in (4, 5, 6, 7)]
    [row] = compare_rows(a, b)
    assert (row["n A"], row["n B"]) == ("4", "3 (+4 disturbed)")
    assert (row["req/s B"], row["p99 B ms"]) == ("201.00", "4.00")
    assert row["significant"] == "n/a (n<4)"  # 3 counted: the disturbed ones do not make up the number


def test_only_load_points_in_both_runs_are_compared_and_the_rest_is_named() -> None:
    a = [cell("s", 1, 100.0), cell("only-a", 1, 5.0)]
    b = [cell("s", 1, 90.0), cell("only-b", 1, 7.0, name="keepalive.txt")]
    text = compare_table(a, b, "runA", "runB")
    lines = text.splitlines()
    assert lines[:2] == ["A: runA", "B: runB"]
    assert lines[3].startswith("| stack | tool | load | n A | n B | req/s A | req/s B | req/s change |")
    assert lines[5] == "| s | ab | c50 | 1 | 1 | 100.00 | 90.00 | -10.0% | 4.00 | 4.00 | +0.0% | n/a (n<4) |"
    assert "Only in A: only-a ab c50." in lines
    assert "Only in B: only-b ab -k c100." in lines


def test_cli_compare_prints_the_table_and_exits_0(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    for run, values in (("a", [100.0, 102.0, 101.0, 103.0]), ("b", [150.0, 151.0, 152.0, 149.0])):
        for rep, v in enumerate(values, 1):
            write_cell(tmp_path / run, cell("s", rep, v))
    assert main(["compare", str(tmp_path / "a"), str(tmp_path / "b")]) == 0
    out = capsys.readouterr().out
    assert "| s | ab | c50 | 4 | 4 | 101.50 | 150.50 | +48.3% | 4.00 | 4.00 | +0.0% | yes (p=0.029) |" in out
    assert "significant: the Mann-Whitney U test" in out
    assert main(["compare", str(tmp_path / "a"), str(tmp_path / "missing")]) == 1


# ---------------------------------------------------------------- against each run's baseline

BASE = [5000.0, 5400.0, 4700.0, 5200.0, 4900.0, 5600.0]
RATIO = [1.12, 1.15, 1.10, 1.14, 1.13, 1.11]


def stacks_run(level: float, ratios: list[float] = RATIO) -> list[dict]:
    """One run of a baseline and a stack "s" whose req/s is ``ratios`` x the baseline's, round by round,
    on a host running at ``level`` x the first run's speed."""
    return [cell("base", r, level * v) for r, v in enumerate(BASE, 1)] + [
        cell("s", r, level * v * q) for r, (v, q) in enumerate(zip(BASE, ratios, strict=True), 1)
    ]


def test_a_slower_host_moves_every_stack_but_not_their_ratio_to_the_baseline() -> None:
    # The case measured: the same stacks 20-28 % apart in runs minutes apart, their ratios held.
    a, b = stacks_run(1.0), stacks_run(0.75)
    assert {row["stack"]: row["significant"] for row in compare_rows(a, b)} == {
        "base": "yes (p=0.002)",
        "s": "yes (p=0.002)",
    }
    table = compare_table(a, b, baseline="base")
    assert "Against each run's baseline, base" in table
    assert "| s | ab | c50 | 6 | 6 | 1.12x (1.10-1.15) | 1.12x (1.10-1.15) | +0.0% | ~ (p=1.00) |" in table


def test_a_stack_that_changed_shows_in_its_ratio_to_the_baseline() -> None:
    faster = [q * 1.1 for q in RATIO]
    [row] = baseline_rows(stacks_run(1.0), stacks_run(0.75, faster), "base")
    assert (row["change"], row["significant"]) == ("+10.0%", "yes (p=0.002)")
    # Without a common baseline there is no second table.
    assert "Against each run's baseline" not in compare_table(stacks_run(1.0), stacks_run(0.75))
    assert baseline_rows(stacks_run(1.0), stacks_run(0.75), "missing") == []


# ---------------------------------------------------------------- the hosts behind the numbers

SHA = "48c6a4ec1e1fd28ccf968490f07e34a1d7f755793b2108a3ed8670b1ee2a0aa2"  # sha256sum /etc/nginx/nginx.conf
FP = {
    "hostname": "web1", "cpu_model": "AMD EPYC", "cpu_count": "2", "memory_mb": "24105",
    "kernel": "6.18.44-fc-v657", "architecture": "x86_64", "distribution": "Debian 12.11",
    "virtualization": "docker/guest", "sysctls": {"net.core.somaxconn": "4096"}, "nofile_limit": "20000",
    "tuning": {"profile": "stock", "sysctls": {}}, "dns": None,
    "config_sha256": {"/etc/nginx/nginx.conf": SHA},
    "packages": {"nginx": "1.22.1-9+deb12u11", "wrk": "4.1.0-3+b2"},
}  # fmt: skip
STACK = {"name": "s", "port": 8001, "server": {"kind": "thin", "instances": 2}}


def run_json(path: Path, mode: str = "loopback", fp: dict | None = None, **changes: object) -> None:
    hosts = {"web1": fp or FP}
    loadgens = ["web1"] if mode == "loopback" else ["gen1"]
    if mode == "network":
        hosts["gen1"] = FP
    info = {
        "schema": "bench-stack/run/v1", "bench_stack_version": "0.1.0", "mode": mode,
        "targets": ["web1"], "loadgens": loadgens, "hosts": hosts,
        "experiment": {"name": "cmp", "stacks": [STACK], "load": {"path": "/", "repetitions": 3}},
    }  # fmt: skip
    info.update(changes)
    (path / "run.json").write_text(json.dumps(info), encoding="utf-8")


def two_runs(tmp_path: Path) -> tuple[Path, Path]:
    for run, values in (("a", [100.0, 102.0]), ("b", [150.0, 151.0])):
        for rep, v in enumerate(values, 1):
            write_cell(tmp_path / run, cell("s", rep, v))
    return tmp_path / "a", tmp_path / "b"


def test_compare_lists_every_host_difference_that_can_explain_a_change(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    a, b = two_runs(tmp_path)
    run_json(a)
    other = {
        **FP,
        "kernel": "6.1.0-18-amd64",
        "cpu_count": "4",
        "packages": {"nginx": "1.22.1-9", "wrk": "4.1.0-3+b2"},
        "config_sha256": {"/etc/nginx/nginx.conf": "0f" * 32},
        "tuning": {"profile": "tuned", "cpu_governor": {"wanted": "performance", "value": ["performance"]}},
        "cpu_split": {"loadgen_cpus": "0", "stack_cpus": "1-3"},
    }
    stack_b = {**STACK, "server": {"kind": "thin", "instances": 4}}
    exp_b = {"name": "cmp", "stacks": [stack_b], "load": {"path": "/", "repetitions": 5}}
    run_json(b, fp=other, experiment=exp_b)
    assert main(["compare", str(a), str(b)]) == 0
    out = capsys.readouterr().out
    assert "Hosts and setup: 8 differences that can explain a change (A -> B):" in out
    for line in (
        "- target web1: CPU count: 2 -> 4",
        "- target web1: kernel: 6.18.44-fc-v657 -> 6.1.0-18-amd64",
        "- target web1: package nginx: 1.22.1-9+deb12u11 -> 1.22.1-9",
        f"- target web1: config sha256 of /etc/nginx/nginx.conf: {SHA} -> {'0f' * 32}",
        "- target web1: tuning profile: stock -> tuned",
        '- target web1: CPU governor: (none) -> ["performance"]',
        '- target web1: CPU split: (none) -> {"loadgen_cpus": "0", "stack_cpus": "1-3"}',
        "- stack s server.instances: 2 -> 4",
    ):
        assert line in out.splitlines()
    assert "load.repetitions" not in out  # how often a load point was measured, not what it measured
    assert out.index("Hosts and setup") < out.index("| stack | tool |")


def test_compare_strict_refuses_runs_whose_hosts_differ(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    a, b = two_runs(tmp_path)
    run_json(a, mode="loopback")
    run_json(b, mode="network")
    assert main(["compare", "--strict", str(a), str(b)]) == 3
    captured = capsys.readouterr()
    assert "- mode: loopback -> network" in captured.out
    assert "| stack |" not in captured.out
    assert "Hosts and setup: 1 difference that can explain a change (A -> B):" in captured.out
    assert "--strict: not comparing: the hosts or setup differ" in captured.err


def test_compare_strict_compares_runs_on_the_same_setup(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    a, b = two_runs(tmp_path)
    run_json(a)
    run_json(b)
    assert main(["compare", "--strict", str(a), str(b)]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[3].startswith("Hosts and setup: no difference found")
    assert "| s | ab | c50 | 2 | 2 | 101.00 | 150.50 | +49.0% |" in out


def test_compare_strict_refuses_a_run_without_run_json(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    a, b = two_runs(tmp_path)
    run_json(a)
    assert main(["compare", "--strict", str(a), str(b)]) == 3
    assert "- run.json missing in B: the hosts and setup cannot be compared" in capsys.readouterr().out


# ---------------------------------------------------------------- one run: its stacks against its baseline


def test_compare_of_one_run_prints_its_stacks_against_its_baseline(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for stack, rps in (("x1", 1000.0), ("x2", 1210.0)):
        for rep in range(1, 9):
            write_cell(tmp_path, cell(stack, rep, rps + rep))
    assert main(["compare", str(tmp_path)]) == 0
    assert capsys.readouterr().out.splitlines() == [
        "Comparisons (baseline x1):",
        "ab c50:",
        "  x2: faster, 1.21x the req/s of x1 (1.21-1.21; 8 pairs 0.0 s apart)",
    ]
    run_json(tmp_path, experiment={"name": "cmp", "stacks": [STACK], "load": {"baseline": "x2"}})
    assert main(["compare", str(tmp_path)]) == 0
    assert (
        "  x1: slower, 0.83x the req/s of x2 (0.83-0.83; 8 pairs 0.0 s apart)"
        in capsys.readouterr().out.splitlines()
    )


def test_compare_of_a_run_of_one_stack_says_there_is_nothing_to_compare(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write_cell(tmp_path, cell("s", 1, 100.0))
    assert main(["compare", str(tmp_path)]) == 0
    assert capsys.readouterr().out == "One stack: nothing to compare.\n"
    assert main(["compare", str(tmp_path / "missing")]) == 1
    assert main(["compare", str(tmp_path), str(tmp_path), "--targets", "a", "b"]) == 2


# ---------------------------------------------------------------- compare A B --fail-on-regression


def runs_of(tmp_path: Path, a: list[float], b: list[float]) -> tuple[Path, Path]:
    for run, values in (("a", a), ("b", b)):
        for rep, v in enumerate(values, 1):
            write_cell(tmp_path / run, cell("s", rep, v))
    return tmp_path / "a", tmp_path / "b"


A_RPS = [1000.0, 1010.0, 990.0, 1005.0, 995.0, 1002.0]


def test_fail_on_regression_exits_4_when_the_whole_interval_is_below_1_minus_the_margin(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    a, b = runs_of(tmp_path, A_RPS, [v * 0.8 for v in A_RPS])  # B 20 % slower, tightly
    assert main(["compare", str(a), str(b), "--fail-on-regression"]) == 4
    captured = capsys.readouterr()
    assert "- s ab c50: 0.800x (0.79" in captured.out and "): REGRESSION" in captured.out
    assert captured.err == (
        "bench-stack: --fail-on-regression: 1 load point(s) of B slower than A by more than 5 %: s ab c50\n"
    )
    # The same slowdown within a wider margin is no regression; without the flag, compare exits 0.
    assert main(["compare", str(a), str(b), "--fail-on-regression", "--margin", "0.25"]) == 0
    capsys.readouterr()
    assert main(["compare", str(a), str(b)]) == 0
    assert "Regressions" not in capsys.readouterr().out


def test_a_slowdown_whose_interval_reaches_past_1_minus_the_margin_is_no_regression(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # B's median 4 % slower, inside the 5 % margin; and a faster B is never a regression.
    a, b = runs_of(tmp_path, A_RPS, [v * 0.96 for v in A_RPS])
    assert main(["compare", str(a), str(b), "--fail-on-regression"]) == 0
    assert "no regression shown" in capsys.readouterr().out
    faster = tmp_path / "faster"
    a2, b2 = runs_of(faster, A_RPS, [v * 1.5 for v in A_RPS])
    assert main(["compare", str(a2), str(b2), "--fail-on-regression"]) == 0


def test_a_slower_median_whose_interval_still_reaches_above_1_minus_the_margin_is_no_regression(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # B's median 6.5 % below A's, past the margin, but its interval (0.889-0.980) reaches above 0.95: a
    # regression needs the whole interval below 1 - margin.
    a, b = runs_of(tmp_path, A_RPS, [880.0, 920.0, 930.0, 940.0, 960.0, 990.0])
    assert main(["compare", str(a), str(b), "--fail-on-regression"]) == 0
    assert "- s ab c50: 0.935x (0.889-0.980; n A 6, n B 6): no regression shown" in capsys.readouterr().out


def test_too_few_cells_for_an_interval_show_no_regression_and_say_so(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    a, b = runs_of(tmp_path, A_RPS[:3], [v * 0.5 for v in A_RPS[:3]])
    assert main(["compare", str(a), str(b), "--fail-on-regression"]) == 0
    assert "- s ab c50: 0.500x, no interval (n A 3, n B 3; 4 a side needed): no regression shown" in (
        capsys.readouterr().out
    )


def test_the_regression_interval_is_the_mann_whitney_inversion_of_the_log_ratios() -> None:
    from benchstack.analysis.compare import regression_check

    a = [cell("s", r, v) for r, v in enumerate(A_RPS, 1)]
    b = [cell("s", r, v * 0.8) for r, v in enumerate(A_RPS, 1)]
    check = regression_check("s", a, b, 0.05)
    # 6 against 6 at 95 %: the 6th smallest and largest of the 36 differences (R: qwilcox(0.025, 6, 6) = 6)
    diffs = sorted(math.log(y.rps) - math.log(x.rps) for x in a for y in b)
    assert check.low == pytest.approx(math.exp(diffs[5])) and check.high == pytest.approx(math.exp(diffs[30]))
    assert check.ratio == pytest.approx(0.8) and check.regressed


@pytest.mark.parametrize("margin", ["-0.1", "1", "x"])
def test_a_margin_outside_0_to_1_is_wrong_usage(tmp_path: Path, margin: str) -> None:
    a, b = runs_of(tmp_path, A_RPS, A_RPS)
    with pytest.raises(SystemExit) as exc:
        main(["compare", str(a), str(b), "--fail-on-regression", "--margin", margin])
    assert exc.value.code == 2


def test_fail_on_regression_needs_two_runs(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    a, _ = runs_of(tmp_path, A_RPS, A_RPS)
    assert main(["compare", str(a), "--fail-on-regression"]) == 2
    assert "--fail-on-regression compares two runs" in capsys.readouterr().err
