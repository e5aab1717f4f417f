"""What users hand bench-stack, read within bounds (benchstack.common.inputs): files that are not regular
files, YAML that would exhaust the memory or the stack, keys given twice, and messages that never echo a
file."""

import math
import os
import re
import subprocess
import time
import traceback
from pathlib import Path
from typing import Any

import pytest
from conftest import bench_stack, in_child, printed_json, read_yaml, yaml_text

from benchstack.common.inputs import (
    MAX_DEPTH,
    MAX_EXPERIMENT_BYTES,
    MAX_VALUES,
    SHOWN_CHARS,
    InputError,
    load_yaml,
    read_bounded,
    shown,
    shown_key,
)
from benchstack.plan.experiment import (
    MAX_CONCURRENCY,
    MAX_STACKS,
    ExperimentError,
    cells,
    experiment_from_dict,
    load_experiment,
)

ROOT = Path(__file__).resolve().parents[3]
VALID = (
    "name: e\nstacks: [{name: s, port: 8001, app: {kind: static}, front: {kind: nginx}}]\n"
    "load: {plans: [{tool: ab, concurrency: 1, requests: 10}]}\n"
)


def one_line(result: subprocess.CompletedProcess[str]) -> str:
    assert result.returncode == 1, result.stderr
    assert "Traceback" not in result.stderr
    assert result.stderr.count("\n") == 1, result.stderr
    return result.stderr.strip()


def bomb(levels: int = 9, leaf: str = "1") -> str:
    """A YAML document whose last anchor expands to 10**levels values."""
    lines = [f"a0: &a0 [{', '.join([leaf] * 10)}]"]
    lines += [f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 10)}]" for i in range(1, levels + 1)]
    return "\n".join(lines) + "\n"


# ---------------------------------------------------------------- files that are not regular files


def test_a_fifo_is_refused_without_waiting_for_a_writer(tmp_path: Path) -> None:
    fifo = tmp_path / "e.yml"
    os.mkfifo(fifo)
    start = time.monotonic()
    with pytest.raises(InputError, match=r"^not a regular file \(a FIFO\): not read$"):
        read_bounded(fifo, 100)
    assert time.monotonic() - start < 5


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda p: os.symlink("/dev/zero", p), "not a regular file (a character device): not read"),
        (lambda p: os.symlink(p, p), "cannot read the file: a loop of symbolic links"),
        (lambda p: p.mkdir(), "not a regular file (a folder): not read"),
        (lambda p: p.write_bytes(b"x" * (MAX_EXPERIMENT_BYTES + 1)), "larger than 1 MiB: not read"),
    ],
    ids=["dev-zero", "symlink-loop", "folder", "too-large"],
)
def test_what_is_not_a_bounded_regular_file_is_one_line(tmp_path: Path, make: Any, message: str) -> None:
    path = tmp_path / "e.yml"
    make(path)
    with pytest.raises(InputError) as err:
        read_bounded(path, MAX_EXPERIMENT_BYTES)
    assert str(err.value) == message


def test_a_file_of_exactly_the_limit_is_read(tmp_path: Path) -> None:
    path = tmp_path / "e.yml"
    path.write_bytes(b"x" * 1000)
    assert read_bounded(path, 1000) == b"x" * 1000


@pytest.mark.parametrize("kind", ["fifo", "dev-zero", "symlink-loop", "too-large"])
def test_the_command_line_names_an_experiment_that_is_not_a_file_in_one_line(
    tmp_path: Path, kind: str
) -> None:
    path = tmp_path / "e.yml"
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "dev-zero":
        os.symlink("/dev/zero", path)
    elif kind == "symlink-loop":
        os.symlink(path, path)
    else:
        path.write_bytes(b"# " + b"x" * MAX_EXPERIMENT_BYTES)
    error = one_line(bench_stack("experiment", path))
    reason = {
        "fifo": "not a regular file (a FIFO)",
        "dev-zero": "not a regular file (a character device)",
        "symlink-loop": "cannot read the file: a loop of symbolic links",
        "too-large": "larger than 1 MiB",
    }[kind]
    assert error.startswith("bench-stack: ") and reason in error, error


def test_a_bare_name_of_300_characters_is_not_looked_up() -> None:
    result = bench_stack("experiment", "a" * 300)
    assert result.returncode == 1 and "Traceback" not in result.stderr
    assert "no experiment named 'aaaa" in result.stderr and "not a name of letters" in result.stderr
    assert "a" * 100 not in result.stderr


# ---------------------------------------------------------------- YAML within bounds


def test_an_alias_bomb_is_refused_before_it_is_expanded() -> None:
    start = time.monotonic()
    with pytest.raises(InputError, match=rf"^line 5: more than {MAX_VALUES:_} values once its aliases"):
        load_yaml(bomb() + "c: *a9\n")
    assert time.monotonic() - start < 2


def test_aliases_below_the_limit_are_read_as_shared_values() -> None:
    data = load_yaml(bomb(levels=3))  # 10**3 values
    assert len(data["a3"]) == 10 and data["a3"][0] is data["a3"][1]


def test_an_experiment_text_read_again_is_a_copy_of_its_one_parse_and_a_bad_one_fails_again() -> None:
    """conftest.experiments_read_once parses an experiment's text once a session (what
    benchstack.plan.experiment reads through): a reader gets its own copy, its aliases still shared."""
    import benchstack.plan.experiment as experiment

    text = "base: &b {a: [1]}\nstacks: [*b, *b]\n"
    first, second = experiment.load_yaml(text), experiment.load_yaml(text)
    assert first == second == load_yaml(text)
    assert first is not second and first["base"] is not second["base"]
    assert first["stacks"][0] is first["stacks"][1] is first["base"]
    for _ in range(2):
        with pytest.raises(InputError, match="key a given twice"):
            experiment.load_yaml("a: 1\na: 2\n")


def test_a_large_document_without_aliases_is_no_alias_bomb(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 44, finding 8: 10,000 stacks (120,000 values, no alias) were refused as "an alias bomb?"; the
    file's size bounds such a document, and the experiment's own limit names the stacks. The same with a
    limit of 1,000 values and 1,001 stacks (the parser takes 4 s for 10,000)."""
    import benchstack.common.inputs as inputs

    monkeypatch.setattr(inputs, "MAX_VALUES", 1000)
    assert len(load_yaml("[" + ", ".join(["[1, 2, 3]"] * 400) + "]")) == 400
    with pytest.raises(InputError, match="an alias bomb"):
        load_yaml(
            "a: &a [1, 1, 1, 1, 1, 1, 1, 1, 1, 1]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]\n"
            "c: [*b, *b, *b, *b, *b, *b, *b, *b, *b, *b]\n"
        )
    stack = "  - {name: s%d, app: {kind: sinatra}, server: {kind: thin}, port: %d}"
    lines = [stack % (i, 1024 + i) for i in range(MAX_STACKS + 1)]
    path = tmp_path / "many.yml"
    load = "load: {plans: [{tool: ab, concurrency: 1, requests: 9}]}"
    path.write_text("name: many\nstacks:\n" + "\n".join(lines) + f"\n{load}\n", encoding="utf-8")
    with pytest.raises(ExperimentError) as err:
        load_experiment(path)
    assert err.value.problems == [
        f"stacks: {MAX_STACKS + 1:_} stacks, more than {MAX_STACKS:_}: each is a port, units and configs on "
        "every target; measure fewer stacks at a time"
    ]


@pytest.mark.parametrize(
    ("text", "said"),
    [
        (
            "port: 017620\n",
            "line 1: 017620 has a leading zero, which YAML 1.1 reads as an octal number (8080)",
        ),
        ("port: -0755\n", "line 1: -0755 has a leading zero, which YAML 1.1 reads as an octal number (-493)"),
        ("c: [1, 1:30]\n", "line 1: 1:30 is read by YAML 1.1 as a number in base 60 (90)"),
    ],
)
def test_a_number_yaml_1_1_reads_as_another_is_refused(text: str, said: str) -> None:
    """Issue 44, finding 8: `port: 017620` was silently port 8080."""
    with pytest.raises(InputError, match=re.escape(said)):
        load_yaml(text)


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ("a: \x01\n", "line 1: a character YAML does not allow (U+0001)"),
        ("a: 1\nb: 'x\ud800'\n", "line 2: a character YAML does not allow (U+D800)"),
        ("a: 1\n\nb: \ufffe\n", "line 3: a character YAML does not allow (U+FFFE)"),
    ],
)
def test_a_character_yaml_does_not_allow_is_named_with_its_line(text: str, said: str) -> None:
    # PyYAML refuses them before reading anything, outside its marked errors: a traceback before.
    with pytest.raises(InputError, match=re.escape(said)):
        load_yaml(text)


def test_libyaml_reads_a_valid_document_and_python_only_one_it_refuses(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # libyaml's parser for speed (~6 times PyYAML's); PyYAML's own reader only to word a refusal as always.
    import benchstack.common.inputs as inputs

    python_reader = inputs._BoundedLoader
    texts, read = [], []
    for path in [*SHIPPED, *sorted((ROOT / "tests" / "bad-inputs").glob("*.yml"))]:
        try:
            text = path.read_text(encoding="utf-8")
            read.append(load_yaml(text))
        except (InputError, UnicodeDecodeError):
            continue
        texts.append(text)
    assert len(texts) > 50

    def not_here(*args: object) -> None:
        raise AssertionError("PyYAML's reader for a document libyaml reads")

    monkeypatch.setattr(inputs, "_BoundedLoader", not_here)
    assert [load_yaml(text) for text in texts] == read
    with pytest.raises(AssertionError, match="PyYAML's reader"):
        load_yaml("a: [1, 2\n")
    # The same values as PyYAML's reader alone, with every check of this reader.
    monkeypatch.setattr(inputs, "_BoundedLoader", python_reader)
    monkeypatch.setattr(inputs, "LIBYAML", False)
    assert [load_yaml(text) for text in texts] == read


def test_a_vars_file_reads_numbers_as_ansible_does() -> None:
    """``bench-stack experiment --vars FILE`` stands for ``-e @FILE``, which Ansible reads as YAML 1.1."""
    assert load_yaml("a: 0755\n", numbers_as_written=False) == {"a": 493}


def test_zero_a_quoted_number_and_a_plain_one_are_read_as_written() -> None:
    assert load_yaml("a: 0\nb: '017620'\nc: 8080\nd: 1_000\ne: 0.5\n") == {
        "a": 0,
        "b": "017620",
        "c": 8080,
        "d": 1000,
        "e": 0.5,
    }


def test_a_recursive_alias_is_refused() -> None:
    with pytest.raises(InputError, match="an alias inside its own anchor"):
        load_yaml("a: &a [1, *a]\n")


@pytest.mark.parametrize(
    "text", ["[" * 100_000, "- " * 100_000 + "x", "a:\n" + "".join(" " * i + "a:\n" for i in range(1, 200))]
)
def test_deep_nesting_is_refused_without_recursion_error(text: str) -> None:
    with pytest.raises(InputError, match=rf"nested deeper than {MAX_DEPTH} levels"):
        load_yaml(text)


def test_nesting_at_the_limit_is_read() -> None:
    depth = MAX_DEPTH - 1
    assert load_yaml("[" * depth + "]" * depth) is not None


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("name: a\nload: {}\nname: b\n", "line 3: key name given twice (first on line 1)"),
        ("{a: 1, a: 2}\n", "line 1: key a given twice (first on line 1)"),
        (
            "stacks:\n  - name: a\n    port: 1\n    port: 2\n",
            "line 4: key port given twice (first on line 3)",
        ),
        ("'x': 1\nx: 2\n", "line 2: key x given twice (first on line 1)"),
    ],
    ids=["top", "flow", "in-a-list", "quoted-and-plain"],
)
def test_a_key_given_twice_is_refused_with_its_lines(text: str, message: str) -> None:
    with pytest.raises(InputError) as err:
        load_yaml(text)
    assert str(err.value) == message


def test_a_merge_key_then_an_override_is_not_a_duplicate() -> None:
    data = load_yaml("base: &b {port: 1, kind: thin}\nstack: {<<: *b, port: 2}\n")
    assert data["stack"] == {"port": 2, "kind": "thin"}


def test_keys_that_one_python_dict_cannot_hold_apart_are_given_twice() -> None:
    with pytest.raises(InputError, match=r"^line 2: key True given twice \(first on line 1\)$"):
        load_yaml("1: a\ntrue: b\n")


def test_a_number_too_long_for_python_is_one_line() -> None:
    with pytest.raises(InputError, match=r"^line 2: a number of more than 100 characters$"):
        load_yaml("a: 1\nb: 1" + "0" * 5000 + "\n")


@pytest.mark.parametrize(
    ("text", "line", "code"),
    [
        ('a: "x\\ud800y"\n', 1, "d800"),
        ('a: 1\nb: {"\\udc00": 1}\n', 2, "dc00"),  # a key
        ('a: 1\nb: ["\\ud83d\\ude00"]\n', 2, "d83d"),  # a pair written as two escapes: two lone ones
    ],
    ids=["value", "key", "pair"],
)
def test_a_lone_surrogate_in_any_string_is_one_line(text: str, line: int, code: str) -> None:
    """Issue 44: "\\ud800" in an env value or a check body was a UnicodeEncodeError (hash, fingerprint)."""
    with pytest.raises(InputError) as err:
        load_yaml(text)
    assert str(err.value).startswith(
        f"line {line}: a string with a lone surrogate (\\u{code}), which is not text"
    )


def test_a_character_beyond_the_basic_plane_written_as_one_escape_is_read() -> None:
    assert load_yaml('a: "\\U0001F600"\n') == {"a": "\U0001f600"}


def test_a_syntax_error_names_the_place_without_quoting_the_file() -> None:
    with pytest.raises(InputError) as err:
        load_yaml("password: hunter2-secret\n\tkey: [unclosed\n")
    assert str(err.value).startswith("not valid YAML: ") and "(line 2, column 1)" in str(err.value)
    assert "hunter2" not in str(err.value)


# ---------------------------------------------------------------- messages


def test_shown_cuts_long_values_and_escapes_control_characters() -> None:
    text = shown("a" * 10_000 + "\n")
    assert len(text) <= 2 * SHOWN_CHARS and "..." in text and "\n" not in text
    assert shown("thin") == "'thin'" and shown(8080) == "8080" and shown(None) == "None"
    assert shown(10**5000).startswith("<a number of about 5_000 digits>"[:14])


def test_shown_never_expands_a_structure_of_shared_references() -> None:
    value: Any = [1] * 10
    for _ in range(9):
        value = [value] * 10  # 10**10 leaves, 100 list objects
    start = time.monotonic()
    assert len(shown(value)) <= 2 * SHOWN_CHARS
    assert time.monotonic() - start < 1


def test_shown_key_prints_a_word_as_is_and_anything_else_quoted() -> None:
    assert shown_key("max_cv") == "max_cv"
    assert shown_key("a b") == "'a b'"
    assert len(shown_key("k" * 1000)) <= 2 * SHOWN_CHARS
    assert shown_key(None) == "None"


def test_a_file_that_is_not_an_experiment_is_named_and_never_echoed() -> None:
    path = ROOT / "tests" / "bad-inputs" / "not-an-experiment.yml"
    error = one_line(bench_stack("experiment", path))
    assert error == (
        f"bench-stack: {path}: not an experiment: a mapping of 3 keys, none of them description, load, logs, "
        "name, stacks"
    )
    assert "SECRETHASH" not in error and "daemon" not in error


def test_an_experiment_with_many_unknown_fields_names_five_and_counts_the_rest() -> None:
    data = {**yaml_text(VALID), **{f"extra{i}": i for i in range(100)}}
    with pytest.raises(ExperimentError) as err:
        experiment_from_dict(data)
    assert len(err.value.problems) == 6
    assert err.value.problems[-1] == "the experiment: 95 more unknown fields"


def test_a_field_made_wrong_after_its_valid_value_was_checked_is_a_problem_again() -> None:
    """The schema check remembers the values each property's schema found valid, by schema and value
    (benchstack.results.formats._properties): a document that differs from one checked in one field is
    checked again there, at every level."""
    from benchstack.plan.experiment_schema import schema_problems

    data = yaml_text(VALID)
    assert schema_problems(data) == []
    for where, wrong in ((("name",), 5), (("load", "plans", 0, "concurrency"), "many")):
        changed = yaml_text(VALID)
        node = changed
        for key in where[:-1]:
            node = node[key]
        node[where[-1]] = wrong
        assert [p.path for p in schema_problems(changed)] == [where], where
        assert schema_problems(data) == []


# ---------------------------------------------------------------- every field, every wrong type

WRONG = [None, True, [], {}, [1], {"a": 1}, 10**30, -1, 0, math.nan, math.inf, "x" * 5000, "", "a\nb", 1.5]


def _paths(node: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    found = [prefix] if prefix else []
    children = node.items() if isinstance(node, dict) else enumerate(node) if isinstance(node, list) else []
    for key, value in children:
        found += _paths(value, (*prefix, key))
    return found


SHIPPED = sorted((ROOT / "experiments").glob("*.yml"))


def _copied(node: Any) -> Any:
    """A new copy of a YAML document's mappings and lists (its scalars are immutable): what copy.deepcopy
    gives it, without deepcopy's memo and dispatch for each of the fuzz's 7,455 copies."""
    if isinstance(node, dict):
        return {key: _copied(value) for key, value in node.items()}
    if isinstance(node, list):
        return [_copied(value) for value in node]
    return node


def wrong_values_tried(path: str) -> dict[str, Any]:
    """Every field of the experiment at ``path`` given each of :data:`WRONG`: how many were tried, and each
    one that was neither refused with problems under 600 characters each nor accepted and expanded into
    cells (a crash: its traceback)."""
    base = read_yaml(Path(path))
    tried, failed = 0, []
    for where in _paths(base):
        for wrong in WRONG:
            data = _copied(base)
            node = data
            for key in where[:-1]:
                node = node[key]
            node[where[-1]] = _copied(wrong)
            tried += 1
            try:
                exp = experiment_from_dict(data, path)
            except ExperimentError as exc:
                if not all(len(p) < 600 for p in exc.problems):
                    failed.append(f"{where} = {shown(wrong)}: {exc.problems}")
                continue
            except Exception:  # noqa: BLE001 - the crash is what the test reports
                failed.append(f"{where} = {shown(wrong)}: {traceback.format_exc()}")
                continue
            try:
                cells(exp)  # what was accepted expands
            except Exception:  # noqa: BLE001
                failed.append(f"{where} = {shown(wrong)}, accepted: {traceback.format_exc()}")
    return {"tried": tried, "failed": failed}


def wrong_values_tried_on(paths: list[str]) -> dict[str, dict[str, Any]]:
    return {Path(path).stem: wrong_values_tried(path) for path in paths}


def wrong_values(folder: Path) -> dict[str, tuple[list[str], dict[str, str], Path]]:
    """:func:`wrong_values_tried` on every shipped experiment, in one new interpreter (~4.5 s of CPU, started
    with the session beside the other tests: conftest's early_commands)."""
    argv = in_child("test_inputs", "wrong_values_tried_on", [str(path) for path in SHIPPED], pure=True)
    return {"shipped": (argv, dict(os.environ), ROOT)}


@pytest.mark.early.with_args(wrong_values)
@pytest.mark.parametrize("path", SHIPPED, ids=lambda p: p.stem)
def test_every_field_of_a_shipped_experiment_given_a_wrong_value_is_a_problem_not_a_crash(
    path: Path, early_results: dict[str, subprocess.CompletedProcess[str]]
) -> None:
    found = printed_json(early_results["shipped"])[path.stem]
    base = read_yaml(path)
    assert found["tried"] == len(_paths(base)) * len(WRONG) > 0
    assert found["failed"] == []


def test_the_concurrency_limit_is_abs_own() -> None:
    from benchstack.kinds.loadtools.ab import AB_MAX_CONCURRENCY

    assert MAX_CONCURRENCY == AB_MAX_CONCURRENCY == 20_000
