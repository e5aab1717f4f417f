"""The registry of load tool adapters against everything outside Python that names a tool: the published
schemas, the loadgen role (its choices and packages per OS) and the host fingerprint. scripts/kind_files.py
writes those parts from the registry (tests/unit/project/test_kind_files.py holds them up to date); these
tests say what they must mean."""

from __future__ import annotations

import inspect
import json
from pathlib import Path
from typing import Any

import pytest
from conftest import read_yaml, role_vars, templated, trusted

from benchstack.kinds import loadtools
from benchstack.kinds.loadtools import REGISTRY, TOOLS, by_name, warmup_tool
from benchstack.kinds.loadtools.base import PLAN_FIELDS, LoadTool
from benchstack.plan.loadplan import Load
from benchstack.records.distribution import Resolution
from benchstack.records.model import Counting

ROOT = Path(__file__).resolve().parents[3]
SCHEMAS = ROOT / "benchstack" / "schemas"
ROLE = ROOT / "roles" / "loadgen"


def _tool_enums(node: Any) -> list[list[str]]:
    """Every ``enum`` of a property named ``tool`` in a JSON schema."""
    found = []
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "tool" and isinstance(value, dict) and "enum" in value:
                found.append(value["enum"])
            found += _tool_enums(value)
    elif isinstance(node, list):
        for value in node:
            found += _tool_enums(value)
    return found


@pytest.mark.parametrize("name", ["cell.schema.json", "run.schema.json", "experiment.schema.json"])
def test_every_tool_a_schema_allows_has_an_adapter_and_every_adapter_is_allowed(name: str) -> None:
    enums = _tool_enums(json.loads((SCHEMAS / name).read_text(encoding="utf-8")))
    assert enums, f"{name} names no tool enum"
    for enum in enums:
        assert enum == list(TOOLS)
        assert [by_name(tool).name for tool in enum] == enum


def test_the_registry_holds_each_tool_under_its_own_name() -> None:
    assert set(REGISTRY) == set(TOOLS)
    for name, tool in REGISTRY.items():
        assert isinstance(tool, LoadTool)
        assert tool.name == name
        assert not inspect.isabstract(type(tool))


def test_every_adapter_declares_its_counting_resolution_and_docs() -> None:
    # The results format knows no tool: each adapter hands its rules to the functions that count and bucket.
    for tool in REGISTRY.values():
        assert isinstance(tool.counting, Counting) and isinstance(tool.resolution, Resolution)
        assert tool.resolution.source == tool.name and tool.resolution.label.startswith(f"{tool.name}: ")
        assert tuple(tool.plan_docs) == PLAN_FIELDS and tool.summary
        assert set(tool.packages) == {"Debian", "RedHat", "Amazon"}


def test_an_unknown_tool_is_refused_naming_the_known_ones() -> None:
    with pytest.raises(ValueError, match="unknown tool 'vegeta'; known: ab, wrk, httperf, siege"):
        by_name("vegeta")
    assert loadtools.find("vegeta") is None and loadtools.find(None) is None


def test_the_loadgen_role_offers_and_installs_exactly_the_registered_tools() -> None:
    specs = read_yaml(ROLE / "meta" / "argument_specs.yml")
    for entry in specs["argument_specs"].values():
        assert entry["options"]["loadgen_tools"]["choices"] == list(TOOLS)
    for family in ("Debian", "RedHat", "Amazon"):
        role_vars = read_yaml(ROLE / "vars" / f"{family}.yml")
        packages = role_vars["__loadgen_packages"]
        assert set(packages) == set(TOOLS), family
        for name, tool in REGISTRY.items():
            want = tool.packages[family]
            assert packages[name] == (None if want is None else list(want)), (family, name)


def role_packages(family: str, tools: list[str], **variables: Any) -> tuple[list[str], list[str]]:
    """(tools built from source, loadgen_os_packages) as tasks/packages.yml sets them on ``family``."""
    tasks = {t["name"]: t for t in read_yaml(ROLE / "tasks" / "packages.yml")}
    values = {**role_vars("loadgen", family), "loadgen_tools": tools, **variables}
    choose = tasks["Choose the tools built from source"]
    built = [
        tool
        for tool in templated(choose["loop"], values)
        if templated("{{ " + choose["when"] + " }}", {**values, "__loadgen_tool": tool})
    ]
    named = tasks["Name the OS packages this role installs"]["ansible.builtin.set_fact"]
    return built, templated(trusted(named["loadgen_os_packages"]), {**values, "__loadgen_built": built})


@pytest.mark.parametrize("family", ["Debian", "RedHat", "Amazon"])
def test_the_loadgen_role_installs_each_tools_packages_or_builds_it(family: str) -> None:
    tools = [name for name, tool in REGISTRY.items() if tool.packages[family] is not None]
    built, packages = role_packages(family, tools)
    expected = [p for name in tools if name not in built for p in REGISTRY[name].packages[family] or ()]
    assert packages[: len(expected)] == expected
    assert built == ([] if family == "Debian" else ["wrk"])
    # The one method variable a user sets overrides the OS default, either way.
    assert role_packages(family, ["wrk"], loadgen_wrk_method="package")[0] == []
    built, packages = role_packages(family, ["ab", "wrk"], loadgen_wrk_method="source")
    assert built == ["wrk"] and packages[0] == REGISTRY["ab"].packages[family][0]
    assert "wrk" not in packages and "unzip" in packages


def test_the_host_fingerprint_asks_every_tool_packages_version() -> None:
    defaults = read_yaml(ROOT / "roles" / "host" / "defaults" / "main.yml")
    fingerprinted = set(defaults["host_fingerprint_packages"])
    for tool in REGISTRY.values():
        for packages in tool.packages.values():
            assert set(packages or ()) <= fingerprinted, tool.name


def test_a_warmup_runs_the_open_loop_plans_own_tool_else_the_closed_loop_tool_of_its_bound() -> None:
    assert warmup_tool("httperf", {"requests": 10}) == "httperf"
    assert warmup_tool("wrk", {"requests": 10}) == "ab"
    assert warmup_tool("ab", {"duration_s": 1}) == "wrk"
    assert warmup_tool("ab", None) is None
    closed = [t for t in REGISTRY.values() if not t.open_loop]
    # Each bound a warm-up can have names a closed-loop tool (the first registered runs it).
    assert {t.bound for t in closed} == {"duration_s", "requests"}
    assert warmup_tool("siege", {"requests": 10}) == "ab"
    load = Load.from_dict({"plans": [{"tool": "wrk"}], "warmup": {"requests": 5}}, first_stack="a")
    assert load.tools() == ["ab", "wrk"]
