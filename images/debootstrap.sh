#!/bin/sh
# Build a systemd-ready Debian base image offline: debootstrap + docker import.
# Usage: debootstrap.sh SUITE IMAGE_TAG RECIPE_HASH
# The Debian mirror is the one this host's apt already uses (or BENCH_STACK_DEBIAN_MIRROR),
# so the image comes from the same place as the host's own packages.
set -eu
suite=$1 tag=$2 recipe=$3

mirror=${BENCH_STACK_DEBIAN_MIRROR:-}
if [ -z "$mirror" ]; then
  mirror=$(sed -n 's/^URIs:[[:space:]]*\([^[:space:]]*\).*/\1/p' /etc/apt/sources.list.d/*.sources 2>/dev/null \
           | grep -v -- '-security' | head -n1 || true)
fi
if [ -z "$mirror" ]; then
  mirror=$(awk '$1 == "deb" && $2 !~ /security/ {print $2; exit}' /etc/apt/sources.list 2>/dev/null || true)
fi
[ -n "$mirror" ] || { echo "no Debian mirror found; set BENCH_STACK_DEBIAN_MIRROR" >&2; exit 2; }

root=$(mktemp -d /var/tmp/bench-stack-rootfs.XXXXXX)
trap 'rm -rf "$root"' EXIT

debootstrap --variant=minbase \
  --include=python3,netbase,systemd,systemd-sysv,dbus,ca-certificates,iproute2,procps \
  "$suite" "$root" "$mirror" >&2

# The image needs an apt source pointing at the same mirror, for later installs.
rm -f "$root/etc/apt/sources.list"
cat > "$root/etc/apt/sources.list.d/debian.sources" <<SRC
Types: deb
URIs: $mirror
Suites: $suite
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
SRC
# Services that make no sense in a container and slow boot.
for unit in systemd-resolved.service systemd-timesyncd.service getty@tty1.service \
            apt-daily.timer apt-daily-upgrade.timer e2scrub_reap.service; do
  ln -sf /dev/null "$root/etc/systemd/system/$unit"
done
: > "$root/etc/machine-id"
rm -rf "$root"/var/cache/apt/archives/*.deb "$root"/var/lib/apt/lists/*

tar -C "$root" -c . | docker import \
  --change 'CMD ["/lib/systemd/systemd"]' \
  --change 'ENV container=docker' \
  --change "LABEL org.bench-stack.recipe=$recipe" \
  - "$tag"
