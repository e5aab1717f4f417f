import pytest

from benchstack.common.paths import CONTROLLER_FOREIGN_TREES, foreign_tree, system_folder_problem


@pytest.mark.parametrize(
    ("path", "tree"),
    [
        ("/etc/ssh", "/etc/ssh"),
        ("/etc/ssh/", "/etc/ssh"),
        ("/etc/ssh/sshd_config.d/x", "/etc/ssh"),
        ("/etc//ssh/x", "/etc/ssh"),
        ("/etc/./ssh/x", "/etc/ssh"),
        ("/proc/1", "/proc"),
        ("/srv/bench/.ssh/x", "a .ssh folder"),
        # A tree is a whole part of the path, not a prefix of its text.
        ("/etc/sshd-bench/x", None),
        ("/procfs/bench", None),
        ("/usr/binaries/bench", None),
        ("/srv/bench-stack", None),
        ("etc/ssh", None),
        ("//proc/x", None),
    ],
)
def test_a_path_lies_in_a_foreign_tree_only_below_a_whole_part(path: str, tree: str | None) -> None:
    assert foreign_tree(path) == tree


def test_the_controller_refuses_all_of_etc_and_usr_but_not_a_sibling() -> None:
    assert foreign_tree("/etc/bench", CONTROLLER_FOREIGN_TREES) == "/etc"
    assert foreign_tree("/usr/local/bench", CONTROLLER_FOREIGN_TREES) == "/usr"
    assert foreign_tree("/etcetera/bench", CONTROLLER_FOREIGN_TREES) is None


@pytest.mark.parametrize(
    ("path", "refused"),
    [
        ("/srv/bench", False),
        ("/srv", True),
        ("/etc/nginx", True),
        ("/etc/ssh/bench", True),
        ("/sysx/y", False),
    ],
)
def test_a_folder_of_its_own_is_deep_enough_and_in_no_foreign_tree(path: str, refused: bool) -> None:
    assert (system_folder_problem(path) is not None) == refused
