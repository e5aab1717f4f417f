#!/bin/sh
# Make sure a Docker engine answers and debootstrap is there to build the base images.
# Installs Debian's docker.io / debootstrap when missing and starts dockerd: through systemd where
# systemd runs, otherwise in the background with a log file.
set -eu
log=${BENCH_STACK_DOCKERD_LOG:-/var/log/bench-stack-dockerd.log}

missing=
command -v docker >/dev/null 2>&1 && command -v dockerd >/dev/null 2>&1 || missing="$missing docker.io"
command -v debootstrap >/dev/null 2>&1 || missing="$missing debootstrap"
if [ -n "$missing" ]; then
  if ! command -v apt-get >/dev/null 2>&1; then
    echo "missing:$missing and no apt-get: install them yourself, then rerun" >&2
    exit 1
  fi
  apt-get update -q
  # shellcheck disable=SC2086
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q $missing
fi

docker info >/dev/null 2>&1 && exit 0
if [ -d /run/systemd/system ] && systemctl start docker 2>/dev/null; then
  :
else
  # No systemd here (a container or a minimal VM): run the engine as a plain background process.
  setsid dockerd >"$log" 2>&1 </dev/null &
fi
i=0
until docker info >/dev/null 2>&1; do
  i=$((i + 1))
  if [ "$i" -gt 60 ]; then
    echo "dockerd did not answer within 60 s; see $log" >&2
    tail -n 20 "$log" >&2 || true
    exit 1
  fi
  sleep 1
done
