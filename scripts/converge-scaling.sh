#!/usr/bin/env bash
# How converge time grows with the number of targets: for each N given (default: 1 2 4), start N fresh
# target containers (bench-multi-tI on bench-multi-net) and time hosts.yml + provision.yml on them at
# once, then remove them. Usage: scripts/converge-scaling.sh [N ...]   (from the project folder, via ./run's
# .venv: PATH=$PWD/.venv/bin:$PATH ANSIBLE_CONFIG=$PWD/ansible.cfg)
set -euo pipefail
cd "$(dirname "$0")/.."
experiment=${EXPERIMENT:-multi-host}
inv=$(mktemp -d)
trap 'rm -rf "$inv"' EXIT
for n in "${@:-1 2 4}"; do
  for count in $n; do
    names=$(seq -f 'bench-multi-t%g' 1 "$count")
    {
      echo "all:"
      echo "  vars:"
      echo "    ansible_connection: community.docker.docker"
      echo "    bench_container: {image: 'bench-stack/debian:bookworm', network: bench-multi-net}"
      echo "    experiment: $experiment"
      echo "  children:"
      echo "    targets:"
      echo "      hosts:"
      for h in $names; do echo "        $h:"; done
      echo "    loadgens:"
      echo "      hosts: {}"
    } > "$inv/hosts.yml"
    # shellcheck disable=SC2086
    docker rm -f $names >/dev/null 2>&1 || true
    start=$(date +%s)
    ansible-playbook -i "$inv/hosts.yml" playbooks/hosts.yml playbooks/provision.yml > "$inv/log.$count" 2>&1 \
      || { tail -n 40 "$inv/log.$count"; exit 1; }
    echo "targets=$count converge_s=$(( $(date +%s) - start ))"
    # shellcheck disable=SC2086
    docker rm -f $names >/dev/null
  done
done
