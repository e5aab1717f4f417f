"""Both hosts as a cloud image has them and as the run left them: sshd refuses root, every login sshd
accepted was admin's (with the scenario's key), and root's rights came through sudo."""

from testinfra.host import Host

testinfra_hosts = ["bench-mol-ssh-target", "bench-mol-ssh-lg"]


def test_root_cannot_log_in_and_never_did(host: Host) -> None:
    assert "permitrootlogin no" in host.check_output("sshd -T").splitlines()
    # OpenSSH 9.8 (Debian 13) logs the logins from its per-connection process, sshd-session.
    log = host.check_output("journalctl --no-pager -o cat _COMM=sshd _COMM=sshd-session")
    accepted = [line for line in log.splitlines() if line.startswith("Accepted ")]
    assert accepted and all(" for admin from " in line for line in accepted), accepted
    if not host.exists("last"):
        return  # Debian 13 keeps logins in wtmpdb (not installed in the image), the journal above in any case
    logins = host.check_output("last -w --time-format notime").splitlines()
    # wtmp's own lines: its start, and a pseudo-user "reboot" per boot
    users = {line.split()[0] for line in logins if line.strip() and not line.startswith(("wtmp", "reboot"))}
    assert users <= {"admin"}


def test_admin_became_root_through_sudo(host: Host) -> None:
    sudo = host.check_output("journalctl --no-pager -o cat _COMM=sudo")
    assert "admin : PWD=" in sudo and "USER=root" in sudo
