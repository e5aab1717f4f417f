"""benchstack.provision.tuning: what the tuned profile writes, and the record of what a container allowed."""

from __future__ import annotations

from benchstack.provision.tuning import nofile_record, read_values, restore_list, sysctl_record, to_write

WANTED = {
    "net.core.somaxconn": 4096,
    "net.ipv4.ip_local_port_range": "1024 65535",
    "net.ipv4.tcp_max_syn_backlog": 4096,
    "net.core.netdev_max_backlog": 4096,
}
# A real `sysctl NAMES...` run in a Debian 12 container started with --sysctl net.core.somaxconn=4096
# (exit 1; stderr: "sysctl: cannot stat /proc/sys/net/core/netdev_max_backlog: No such file or directory").
NAMES = list(WANTED)
READ = (
    "net.core.somaxconn = 4096\n"
    "net.ipv4.tcp_max_syn_backlog = 2048\n"
    "net.ipv4.ip_local_port_range = 32768\t60999\n"
)


def test_values_collapse_whitespace_and_mark_missing_keys() -> None:
    assert read_values(NAMES, READ) == {
        "net.core.somaxconn": "4096",
        "net.ipv4.ip_local_port_range": "32768 60999",
        "net.ipv4.tcp_max_syn_backlog": "2048",
        "net.core.netdev_max_backlog": None,
    }


def test_only_present_and_different_settings_are_written() -> None:
    assert to_write(WANTED, read_values(NAMES, READ)) == [
        {"name": "net.ipv4.ip_local_port_range", "value": "1024 65535"},
        {"name": "net.ipv4.tcp_max_syn_backlog", "value": "4096"},
    ]


def test_record_in_a_container_names_why_each_setting_was_skipped() -> None:
    now = read_values(NAMES, READ)
    writes = [
        {
            "item": {"name": "net.ipv4.tcp_max_syn_backlog", "value": "4096"},
            "rc": 255,
            "stderr": 'sysctl: permission denied on key "net.ipv4.tcp_max_syn_backlog"',
        },
        {"item": {"name": "net.ipv4.ip_local_port_range", "value": "1024 65535"}, "rc": 0, "stderr": ""},
    ]
    after = {**now, "net.ipv4.ip_local_port_range": "1024 65535"}
    record = sysctl_record(WANTED, now, after, writes)
    assert record["net.core.somaxconn"] == {
        "wanted": "4096",
        "original": "4096",
        "value": "4096",
        "status": "set",
    }
    assert record["net.ipv4.ip_local_port_range"]["status"] == "set"
    assert record["net.ipv4.ip_local_port_range"]["original"] == "32768 60999"
    syn = record["net.ipv4.tcp_max_syn_backlog"]
    assert syn["status"] == "skipped" and "permission denied" in syn["reason"] and "--sysctl" in syn["reason"]
    backlog = record["net.core.netdev_max_backlog"]
    assert backlog["status"] == "skipped" and backlog["reason"].startswith("not present here")


def test_record_is_the_same_when_the_profile_is_applied_again() -> None:
    now = read_values(NAMES, READ)
    failed = [
        {"item": {"name": "net.ipv4.tcp_max_syn_backlog", "value": "4096"}, "rc": 255, "stderr": "denied"}
    ]
    first = sysctl_record(WANTED, now, now, failed)
    assert sysctl_record(WANTED, now, now, failed) == first


def test_stock_restores_only_changed_present_settings() -> None:
    original = {"a": "1", "b": "32768 60999", "c": None, "d": "5"}
    current = {"a": "1", "b": "1024 65535", "c": None, "d": None}
    assert restore_list(original, current) == [{"name": "b", "value": "32768 60999"}]


def test_nofile_set_when_a_session_gets_the_wanted_limit() -> None:
    record = nofile_record("bench", 16384, {"rc": 0, "stdout": "16384\n16384\n"})
    assert record == {"user": "bench", "wanted": 16384, "soft": "16384", "hard": "16384", "status": "set"}


def test_nofile_skipped_names_the_containers_hard_limit() -> None:
    # Real output of runuser -u bench -- sh -c 'ulimit -n; ulimit -Hn' in a Debian 12 container (hard limit
    # 20000 from dockerd) with "bench soft/hard nofile 65536" in limits.d: pam_limits could not raise it.
    record = nofile_record("bench", 65536, {"rc": 0, "stdout": "1024\n20000\n"})
    assert record["status"] == "skipped"
    assert "gets 1024 (hard 20000)" in record["reason"] and "--ulimit" in record["reason"]


def test_nofile_unreadable_session_is_skipped_with_the_error() -> None:
    record = nofile_record(
        "bench", 65536, {"rc": 1, "stdout": "", "stderr": "runuser: user bench does not exist"}
    )
    assert record["status"] == "skipped" and "does not exist" in record["reason"]
