#!/usr/bin/env bash
# Four apt transactions against one for the same packages (tests/perf/apt-transactions.yml), each on a fresh
# systemd container from the local Debian 12 base image, alternating, ROUNDS times (default 2). Prints wall
# seconds per run. Run from the project folder with ./run's tools: scripts/measure-apt-transactions.sh [ROUNDS]
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-2}
name=bench-perf-apt
trap 'docker rm -f "$name" >/dev/null 2>&1 || true' EXIT
for _ in $(seq "$rounds"); do
  for how in four one; do
    docker rm -f "$name" >/dev/null 2>&1 || true
    docker run -d --name "$name" --tmpfs /run --tmpfs /run/lock -v /sys/fs/cgroup:/sys/fs/cgroup:ro \
      bench-stack/debian:bookworm /lib/systemd/systemd >/dev/null
    until docker exec "$name" systemctl is-system-running 2>/dev/null | grep -qE 'running|degraded'; do
      sleep 0.5
    done
    start=$(date +%s.%N)
    .venv/bin/ansible-playbook -i "$name," -e ansible_connection=community.docker.docker \
      -e apt_transactions="$how" tests/perf/apt-transactions.yml >/dev/null
    printf '%-5s %6.1f s\n' "$how" "$(echo "$(date +%s.%N) - $start" | bc)"
  done
done
