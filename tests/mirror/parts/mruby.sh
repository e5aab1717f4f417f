#!/usr/bin/env bash
# Mirror part mruby (see ../build-mirror.sh): git/mod_mruby.git, a bare repository of the mod_mruby bundle
# (one commit, upstream's v1.16.0 tree with mruby vendored, tag v1.16.0), served over dumb HTTP.
set -euo pipefail
out=$1
bundle=/shared/mod_mruby.bundle
if [ ! -f "$bundle" ]; then
  echo "mirror part mruby: $bundle (../shared/mirror/mod_mruby.bundle from the project's root) is missing" >&2
  exit 3
fi
export DEBIAN_FRONTEND=noninteractive
if ! command -v git >/dev/null; then
  apt-get update -q >/dev/null
  apt-get install -y -q --no-install-recommends git ca-certificates >/dev/null
fi
mkdir -p "$out/git"
git clone -q --bare "$bundle" "$out/git/mod_mruby.git"
git -C "$out/git/mod_mruby.git" rev-parse -q --verify refs/tags/v1.16.0 >/dev/null
git -C "$out/git/mod_mruby.git" repack -q -a -d
# Dumb HTTP (a static file server) needs info/refs and objects/info/packs.
git -C "$out/git/mod_mruby.git" update-server-info
git -C "$out/git/mod_mruby.git" for-each-ref --format='%(refname) %(objectname)'
