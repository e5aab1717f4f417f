"""No backslash escape inside a Jinja expression of a task file: ansible-core 2.19 keeps a Jinja string
literal's '\\n' as a backslash and an n, so `to_nice_json ~ '\\n'` wrote `}\\n` into original.json and
the next tuned run failed to parse it (dns-check's idempotence step, in CI). A newline belongs outside the
braces, in a double-quoted YAML scalar ("{{ x }}\\n"), where YAML turns it into a real one."""

import re
from pathlib import Path
from typing import Any

import yaml
from conftest import yaml_text

ROOT = Path(__file__).resolve().parents[3]
FILES = sorted(
    path
    for folder in ("roles", "playbooks", "molecule")
    for path in (ROOT / folder).rglob("*.yml")
    if "files" not in path.parts
)
JINJA = re.compile(r"\{\{.*?\}\}|\{%.*?%\}", re.S)
ESCAPE = re.compile(r"\\[ntr]")
# libyaml's parser where PyYAML has it: the same documents, several times faster to read.
LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def escapes_in(value: Any, where: str = "") -> list[str]:
    """Where a parsed YAML value holds a Jinja expression with a backslash escape in it."""
    if isinstance(value, dict):
        return [hit for key, item in value.items() for hit in escapes_in(item, f"{where}/{key}")]
    if isinstance(value, list):
        return [hit for i, item in enumerate(value) for hit in escapes_in(item, f"{where}/{i}")]
    if isinstance(value, str):
        return [f"{where}: {m.group(0)[:80]!r}" for m in JINJA.finditer(value) if ESCAPE.search(m.group(0))]
    return []


def test_the_check_finds_the_escape_that_broke_original_json() -> None:
    task = yaml_text("- copy:\n    content: >-\n      {{ {'a': 1} | to_nice_json ~ '\\n' }}\n")
    assert escapes_in(task) == ["/0/copy/content: \"{{ {'a': 1} | to_nice_json ~ '\\\\n' }}\""]
    fixed = yaml_text("- copy:\n    content: \"{{ {'a': 1} | to_nice_json }}\\n\"\n")
    assert escapes_in(fixed) == []


def test_no_backslash_escape_inside_jinja() -> None:
    """One test over every file (a case per file was ~190 tests of a few ms each): a hit names its file and
    the place in it."""
    assert len(FILES) > 100, "the glob should find the roles', playbooks' and scenarios' YAML"
    hits = [
        f"{path.relative_to(ROOT)} {hit}"
        for path in FILES
        for doc in yaml.load_all(path.read_text(encoding="utf-8"), Loader=LOADER)
        for hit in escapes_in(doc)
    ]
    assert hits == []


def test_a_template_compiled_once_a_session_is_compiled_anew_for_other_tokens_or_settings() -> None:
    """conftest.templates_compiled_once: the same source, compiled once, renders each test's variables; the
    escaping Ansible applies (an expression's '\\n' kept as a backslash and an n) or not, and trim_blocks,
    each give the code of their own."""
    import jinja2
    from ansible.parsing.dataloader import DataLoader
    from ansible.template import Templar, trust_as_template
    from conftest import templated

    source = "{{ 'a\\nb' }}|{% if x %}\nyes{% endif %}\n"
    assert templated(source, {"x": True}) == "a\\nb|yes\n"
    assert templated(source, {"x": False}) == "a\\nb|\n"
    unescaped = Templar(loader=DataLoader(), variables={"x": True})
    assert unescaped.template(trust_as_template(source), escape_backslashes=False) == "a\nb|yes\n"
    assert jinja2.Environment().from_string(source).render(x=True) == "a\nb|\nyes"
    assert jinja2.Environment(trim_blocks=True).from_string(source).render(x=True) == "a\nb|yes"
