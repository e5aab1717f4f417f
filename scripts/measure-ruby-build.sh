#!/usr/bin/env bash
# Times the ruby-rbenv scenario's Ruby build (the test mirror's Ruby 3.1.2, configure + make + make install)
# under several configure option sets, one after the other in one throwaway container of the project's
# bookworm image, with the build packages the ruby role installs. Prints seconds per step and option set.
#   scripts/measure-ruby-build.sh ['OPTS A' 'OPTS B' ...]
# Default: the scenario's options without and with --disable-jit-support. Run alone: it uses both cores.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ $# -eq 0 ]; then
  base='--without-baseruby --disable-install-doc optflags=-O0'
  set -- "$base" "$base --disable-jit-support"
fi
mirror=$(tests/mirror/build-mirror.sh)
name=bench-ruby-build-$$
trap 'docker rm -f "$name" >/dev/null 2>&1 || true' EXIT
docker run -d --name "$name" --network bridge -v "$mirror/ruby:/mirror:ro" bench-stack/debian:bookworm sleep 7200 >/dev/null
packages=$(python3 -c 'import sys, yaml; print(" ".join(yaml.safe_load(open(sys.argv[1]))["__ruby_rbenv_build_packages"]))' \
  roles/ruby/vars/Debian.yml)
docker exec "$name" sh -c "apt-get update -q >/dev/null && DEBIAN_FRONTEND=noninteractive \
  apt-get install -y -q --no-install-recommends $packages >/dev/null"
for opts in "$@"; do
  docker exec "$name" sh -c 'rm -rf /b /p && mkdir /b && tar -C /b --strip-components=1 -xzf /mirror/ruby-3.1.2.tar.gz'
  line="$opts:"
  for step in "configure:./configure --prefix=/p $opts" "make:make -j2" "install:make install"; do
    start=$(date +%s%N)
    docker exec -w /b "$name" sh -c "${step#*:} >/tmp/log 2>&1" || { docker exec "$name" tail -30 /tmp/log; exit 1; }
    line="$line ${step%%:*} $(( ($(date +%s%N) - start) / 1000000000 )) s"
  done
  echo "$line"
done
