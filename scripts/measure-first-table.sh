#!/usr/bin/env bash
# How long `./run bench` takes to its first table from a fresh clone: no .venv, no pip cache, the Debian 12
# base image and the local container removed (the Docker engine itself stays installed, and is started first:
# with it stopped, `docker rm` fails quietly and an old container would be reused). Prints every output
# line with the seconds since the start, so each step's time can be read off; the run's folder stays in the
# clone. Run as root from the project folder: scripts/measure-first-table.sh [CLONE_DIR]
set -euo pipefail
project=$(cd "$(dirname "$0")/.." && pwd)
clone=${1:-/tmp/bench-stack-first-table}
rm -rf "$clone"
git clone -q "$project" "$clone"
cd "$clone"
scripts/docker-engine.sh >/dev/null
docker rm -f bench-local >/dev/null 2>&1 || true
docker rmi -f bench-stack/debian:bookworm >/dev/null 2>&1 || true
start=$(date +%s)
PIP_NO_CACHE_DIR=1 ./run bench 2>&1 | while IFS= read -r line; do
  printf '%4d %s\n' "$(( $(date +%s) - start ))" "$line"
done
echo "first table after $(( $(date +%s) - start )) s"
