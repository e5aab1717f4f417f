"""scripts/role_docs.py: role READMEs generated from argument_specs and defaults, and the check that keeps
them (and the two files) in step."""

import copy
from pathlib import Path

import pytest
import yaml

from scripts.role_docs import load_role, main, markup, render, run

SPECS = {
    "argument_specs": {
        "main": {
            "short_description": "Serve things",
            "description": ["Sets the fact C(demo_bin)."],
            "options": {
                "demo_port": {"type": "int", "default": 8080, "description": "Port C(demo) listens on."},
                "demo_mode": {"type": "str", "choices": ["fast", "slow"], "description": "How."},
                "demo_bin": {"type": "path", "description": "Executable; from the other role's fact."},
                "demo_method": {"type": "str", "description": "Install method."},
                "demo_name": {"type": "str", "required": True, "description": "Name."},
                "demo_hosts": {
                    "type": "list",
                    "elements": "dict",
                    "description": "Pinned names.",
                    "options": {"name": {"type": "str", "required": True, "description": "Host name."}},
                },
            },
        },
        "extra": {
            "short_description": "Do the extra step",
            "options": {
                "demo_port": {"type": "int", "default": 8080, "description": "Port C(demo) listens on."},
                "demo_extra_dir": {"type": "path", "description": "Where."},
            },
        },
    }
}
DEFAULTS = """---
# Port of the demo server.
demo_port: 8080
demo_mode: fast
demo_bin: "{{ other_bin | default('/usr/bin') }}/demo"
demo_hosts: []
demo_extra_dir: /var/lib/demo
"""


def make_role(root: Path, specs: dict = SPECS, defaults: str = DEFAULTS) -> Path:
    role = root / "roles" / "demo"
    (role / "meta").mkdir(parents=True)
    (role / "defaults").mkdir()
    (role / "vars").mkdir()
    specs_text = yaml.safe_dump(specs, sort_keys=False)
    (role / "meta" / "argument_specs.yml").write_text(specs_text, encoding="utf-8")
    (role / "meta" / "main.yml").write_text(
        yaml.safe_dump({"galaxy_info": {"description": "A demo role"}}), encoding="utf-8"
    )
    (role / "defaults" / "main.yml").write_text(defaults, encoding="utf-8")
    for os_name, method in (("Debian", "package"), ("RedHat", "source"), ("Amazon", "source")):
        (role / "vars" / f"{os_name}.yml").write_text(f"__demo_method: {method}\n", encoding="utf-8")
    return role


def row(readme: str, name: str) -> list[str]:
    line = next(line for line in readme.splitlines() if line.startswith(f"| `{name}` |"))
    return [cell.strip() for cell in line.strip("|").split(" | ")]


def test_each_variable_shows_its_type_default_and_description(tmp_path: Path) -> None:
    readme = render(load_role(make_role(tmp_path)))
    assert row(readme, "demo_port") == ["`demo_port`", "int", "`8080`", "Port `demo` listens on."]
    assert row(readme, "demo_mode") == ["`demo_mode`", "str", "`fast`", "How. One of: `fast`, `slow`."]
    assert row(readme, "demo_hosts")[1:] == [
        "list of dict",
        "`[]`",
        "Pinned names. Keys: `name` (str, required): Host name.",
    ]


def test_the_default_comes_from_defaults_main_even_when_argument_specs_has_none(tmp_path: Path) -> None:
    readme = render(load_role(make_role(tmp_path)))
    # A templated default is shown as written, its Jinja filter pipe escaped for the Markdown table.
    assert row(readme, "demo_bin")[2] == "`{{ other_bin \\| default('/usr/bin') }}/demo`"


def test_a_variable_without_a_default_shows_its_per_os_value_or_required(tmp_path: Path) -> None:
    readme = render(load_role(make_role(tmp_path)))
    assert row(readme, "demo_method")[2] == "per OS: `package` (Debian); `source` (RedHat, Amazon)"
    assert row(readme, "demo_name")[2] == "required"


def test_an_os_without_its_own_vars_file_shows_its_family_value(tmp_path: Path) -> None:
    role = make_role(tmp_path)
    (role / "vars" / "Amazon.yml").unlink()
    readme = render(load_role(role))
    # As the roles' first_found reads it: Amazon Linux (os_family RedHat) falls back to vars/RedHat.yml.
    assert row(readme, "demo_method")[2] == "per OS: `package` (Debian); `source` (RedHat, Amazon)"


def test_nested_keys_are_listed_under_the_table_one_per_line(tmp_path: Path) -> None:
    specs = copy.deepcopy(SPECS)
    specs["argument_specs"]["main"]["options"]["demo_hosts"]["options"]["addr"] = {
        "type": "dict",
        "description": "Where.",
        "options": {"port": {"type": "int", "required": True, "description": "Port.", "choices": [80, 443]}},
    }
    readme = render(load_role(make_role(tmp_path, specs)))
    assert row(readme, "demo_hosts")[3] == "Pinned names. Keys: listed below the table."
    keys = readme[readme.index("Keys of `demo_hosts`:") :].splitlines()
    assert keys[2:5] == [
        "- `name` (str, required): Host name.",
        "- `addr` (dict): Where.",
        "  - `port` (int, required): Port. One of: `80`, `443`.",
    ]


def test_a_variable_two_entry_points_take_is_listed_once(tmp_path: Path) -> None:
    readme = render(load_role(make_role(tmp_path)))
    assert readme.count("| `demo_port` |") == 1
    extra = readme[readme.index("## Entry point `extra`") :]
    assert "Also takes `demo_port`, described above." in extra
    assert "| `demo_extra_dir` |" in extra
    assert readme.index("## Entry point `main`") < readme.index("## Entry point `extra`")


def test_an_entry_point_with_mains_variables_says_so_instead_of_listing_them(tmp_path: Path) -> None:
    specs = copy.deepcopy(SPECS)
    specs["argument_specs"]["extra"]["options"] = specs["argument_specs"]["main"]["options"]
    readme = render(
        load_role(
            make_role(tmp_path, specs=specs, defaults=DEFAULTS.replace("demo_extra_dir: /var/lib/demo\n", ""))
        )
    )
    extra = readme[readme.index("## Entry point `extra`") :]
    assert "Include it with `tasks_from: extra`.\n\nTakes the same variables as `main`.\n" in extra
    assert "| variable |" not in extra


def test_a_default_no_entry_point_documents_is_refused(tmp_path: Path) -> None:
    role = make_role(tmp_path, defaults=DEFAULTS + "demo_secret_knob: 3\n")
    assert run(tmp_path / "roles", check=True) == [
        "roles/demo: demo_secret_knob is in defaults/main.yml but in no entry point of argument_specs"
    ]
    assert not (role / "README.md").exists()


def test_an_argument_specs_default_must_match_defaults_main(tmp_path: Path) -> None:
    specs = copy.deepcopy(SPECS)
    specs["argument_specs"]["main"]["options"]["demo_mode"]["default"] = "slow"
    specs["argument_specs"]["main"]["options"]["demo_method"]["default"] = "package"
    make_role(tmp_path, specs=specs)
    found = run(tmp_path / "roles", check=False)
    assert len(found) == 2
    assert found[0].startswith("roles/demo: demo_mode: argument_specs says default 'slow'")
    assert found[1].startswith("roles/demo: demo_method has a default in argument_specs only")


def test_a_long_comment_in_defaults_is_refused(tmp_path: Path) -> None:
    make_role(tmp_path, defaults=DEFAULTS.replace("# Port", "# One.\n# Two.\n# Port"))
    assert run(tmp_path / "roles", check=True) == [
        "roles/demo/defaults/main.yml:2: a 3-line comment; keep defaults' comments to 2 lines and explain "
        "in the argument_specs description"
    ]


def test_check_fails_until_the_readme_is_generated_and_again_when_it_goes_stale(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    role = make_role(tmp_path)
    roles = ["--roles-dir", str(tmp_path / "roles")]
    assert main(["--check", *roles]) == 1
    assert "roles/demo/README.md is missing" in capsys.readouterr().err
    assert main(roles) == 0
    assert main(["--check", *roles]) == 0
    defaults = role / "defaults" / "main.yml"
    defaults.write_text(defaults.read_text(encoding="utf-8").replace("8080", "9090"), encoding="utf-8")
    specs = role / "meta" / "argument_specs.yml"
    specs.write_text(specs.read_text(encoding="utf-8").replace("8080", "9090"), encoding="utf-8")
    assert main(["--check", *roles]) == 1
    assert "roles/demo/README.md is out of date" in capsys.readouterr().err


def test_ansible_markup_becomes_markdown() -> None:
    assert markup("C(front.kind=apache) and I(x), B(y), C({url, sha256})") == (
        "`front.kind=apache` and *x*, **y**, `{url, sha256}`"
    )


def test_the_tags_of_the_role_tasks_are_listed_once_without_always(tmp_path: Path) -> None:
    role = make_role(tmp_path)
    (role / "tasks").mkdir(exist_ok=True)
    (role / "tasks" / "main.yml").write_text(
        "- name: a\n  ansible.builtin.debug: {}\n  tags: [bench_demo, bench_demo_install]\n"
        "- name: b\n  block:\n    - name: c\n      ansible.builtin.debug: {}\n      tags: bench_demo_config\n"
        "  tags: [always]\n"
    )
    readme = render(load_role(role))
    tags = "`bench_demo`, `bench_demo_config`, `bench_demo_install`"
    assert f"Tags (`--tags`, `--skip-tags`): {tags}." in readme
