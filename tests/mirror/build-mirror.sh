#!/usr/bin/env bash
# Builds the local artifact mirror the rbenv tests install from, out of Debian packages only:
#   git/rbenv.git, git/ruby-build.git   upstream trees (Debian's orig tarballs), tagged as upstream
#   ruby/ruby-3.1.2.tar.gz             Debian's Ruby source repacked (its sha256 in ruby/SHA256SUMS)
#   gems/                              a static gem source: pure-Ruby gems rebuilt from Debian's files
# The build runs in a throwaway container of the project's bookworm image (nothing lands on this host but
# the mirror). The result is cached under $BENCH_MIRROR_CACHE/<hash of this folder> and rebuilt only when
# missing. Prints the mirror's folder on stdout.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cache=${BENCH_MIRROR_CACHE:-/var/cache/bench-stack/mirror}
image=${BENCH_MIRROR_IMAGE:-bench-stack/debian:bookworm}
key=$(cat "$here/build-mirror.sh" "$here/inside.sh" | sha256sum | cut -c1-16)
out=$cache/$key
if [ -f "$out/READY" ]; then
  echo "$out"
  exit 0
fi
mkdir -p "$cache"
work=$(mktemp -d "$cache/.build-XXXXXX")
trap 'rm -rf "$work"' EXIT
# The apt sources the image already uses (the Debian mirror it was bootstrapped from).
name=bench-rbenv-mirror-$$
docker run --rm --name "$name" --network bridge \
  -v "$here/inside.sh:/inside.sh:ro" -v "$work:/out" \
  "$image" bash /inside.sh /out >&2
touch "$work/READY"
rm -rf "$out"
mv "$work" "$out"
trap - EXIT
chmod 0755 "$out"
echo "$out"
