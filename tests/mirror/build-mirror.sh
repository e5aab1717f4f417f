#!/usr/bin/env bash
# Builds the local artifact mirror the offline tests install from, in parts, and prints its folder:
#   build-mirror.sh [PART...]     (default: base)
# base (inside.sh), out of Debian packages only:
#   git/rbenv.git, git/ruby-build.git   upstream trees (Debian's orig tarballs), tagged as upstream
#   ruby/ruby-3.1.2.tar.gz             Debian's Ruby source repacked (its sha256 in ruby/SHA256SUMS)
#   gems/                              a static gem source: pure-Ruby gems rebuilt from Debian's files
# parts/NAME.sh: further parts, some from the git bundles in ../shared/mirror (test data, not the project's
# code), mounted read-only at /shared; a part that needs a missing file exits 3 naming it.
# Each part builds in a throwaway container of the project's bookworm image (nothing lands on this host but
# the mirror), is cached under $BENCH_MIRROR_CACHE/NAME-<hash of its scripts> and rebuilt only when missing.
# Several parts are merged (hard links) into one folder, cached the same way.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cache=${BENCH_MIRROR_CACHE:-/var/cache/bench-stack/mirror}
image=${BENCH_MIRROR_IMAGE:-bench-stack/debian:bookworm}
shared=$(cd "$here/../../.." && pwd)/shared/mirror
[ $# -gt 0 ] || set -- base
mkdir -p "$cache"

part_script() {
  if [ "$1" = base ]; then echo "$here/inside.sh"; else echo "$here/parts/$1.sh"; fi
}

# build_part NAME: prints the part's cached folder, building it first when missing.
build_part() {
  local name=$1 script key out work rc=0
  script=$(part_script "$name")
  if [ ! -f "$script" ]; then
    echo "no mirror part '$name' ($script)" >&2
    return 2
  fi
  key=$(cat "$here/build-mirror.sh" "$script" | sha256sum | cut -c1-16)
  out=$cache/$name-$key
  if [ -f "$out/READY" ]; then
    echo "$out"
    return 0
  fi
  work=$(mktemp -d "$cache/.build-$name-XXXXXX")
  local mounts=(-v "$script:/part.sh:ro" -v "$work:/out")
  [ -d "$shared" ] && mounts+=(-v "$shared:/shared:ro")
  docker run --rm --name "bench-mirror-$name-$$" --network bridge "${mounts[@]}" \
    "$image" bash /part.sh /out >&2 || rc=$?
  if [ $rc != 0 ]; then
    rm -rf "$work"
    [ $rc = 3 ] && echo "mirror part '$name' needs a file of $shared (see its message above)" >&2
    return $rc
  fi
  touch "$work/READY"
  rm -rf "$out"
  mv "$work" "$out"
  chmod 0755 "$out"
  echo "$out"
}

folders=()
for part in "$@"; do
  folders+=("$(build_part "$part")")
done
if [ ${#folders[@]} = 1 ]; then
  echo "${folders[0]}"
  exit 0
fi
key=$(printf '%s\n' "${folders[@]}" | sha256sum | cut -c1-16)
out=$cache/merged-$key
if [ ! -f "$out/READY" ]; then
  work=$(mktemp -d "$cache/.merge-XXXXXX")
  gem_parts=0
  for folder in "${folders[@]}"; do
    cp -al "$folder/." "$work/"
    [ -d "$folder/gems/gems" ] && gem_parts=$((gem_parts + 1))
  done
  rm -f "$work/READY"
  # Each part's gem index lists its own gems only: index them all together.
  if [ $gem_parts -gt 1 ]; then
    rm -rf "$work"/gems/*specs* "$work/gems/quick"
    docker run --rm --name "bench-mirror-index-$$" --network bridge -v "$work/gems:/gems" "$image" \
      bash -c 'apt-get update -q >/dev/null && apt-get install -y -q --no-install-recommends ruby >/dev/null && gem generate_index -q -d /gems' >&2
  fi
  touch "$work/READY"
  rm -rf "$out"
  mv "$work" "$out"
  chmod 0755 "$out"
fi
echo "$out"
