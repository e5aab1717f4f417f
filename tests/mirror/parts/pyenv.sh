#!/usr/bin/env bash
# Mirror part "pyenv" (see build-mirror.sh), run inside a throwaway bookworm container; writes to $1:
#   git/pyenv.git                  pyenv, a bare clone of /shared/pyenv.bundle (tag v2.8.1), served over dumb HTTP
#   python/Python-3.11.2.tgz       CPython 3.11.2's upstream tarball (Debian's orig tarball is upstream's .tgz)
#   python/<sha256>                the same file under its sha256, as PYTHON_BUILD_MIRROR_URL names tarballs
set -euo pipefail
out=$1
export DEBIAN_FRONTEND=noninteractive
bundle=/shared/pyenv.bundle
PYENV_TAG=v2.8.1
# Upstream Python-3.11.2.tgz, as pyenv's own 3.11.2 definition names it.
PYTHON_SHA256=2411c74bda5bbcfcddaf4531f66d1adc73f247f529aee981b029513aefdbf849

if [ ! -f "$bundle" ]; then
  echo "mirror part pyenv: $bundle is missing (../shared/mirror/pyenv.bundle from the project's root)" >&2
  exit 3
fi

uri=$(sed -n 's/^URIs: *//p' /etc/apt/sources.list.d/debian.sources 2>/dev/null | head -1)
[ -n "$uri" ] || uri=$(awk '/^deb /{print $2; exit}' /etc/apt/sources.list)
cat > /etc/apt/sources.list.d/bench-src.sources <<SRC
Types: deb-src
URIs: $uri
Suites: bookworm
Components: main
SRC
apt-get update -q >/dev/null
apt-get install -y -q --no-install-recommends git ca-certificates >/dev/null

mkdir -p "$out/git"
git clone -q --bare "$bundle" "$out/git/pyenv.git"
git -C "$out/git/pyenv.git" rev-parse -q --verify "refs/tags/$PYENV_TAG" >/dev/null
git -C "$out/git/pyenv.git" repack -q -a -d
git -C "$out/git/pyenv.git" update-server-info

# Only the orig tarball is needed: fetched from the URI apt resolves, checked against the checksum apt lists.
mkdir -p "$out/python" /tmp/src
cd /tmp/src
apt-get source -q --print-uris python3.11/bookworm | grep -E "_3\.11\.2\.orig\.tar\.gz'" \
  | while read -r uri file _size sum; do
      uri=${uri//\'/}
      python3 -c 'import sys, urllib.request; urllib.request.urlretrieve(sys.argv[1], sys.argv[2])' "$uri" "$file"
      case $sum in
        SHA256:*) echo "${sum#SHA256:}  $file" | sha256sum -c --quiet ;;
        *) echo "${sum#*:}  $file" | md5sum -c --quiet ;;
      esac
    done
mv python3.11_3.11.2.orig.tar.gz "$out/python/Python-3.11.2.tgz"
echo "$PYTHON_SHA256  $out/python/Python-3.11.2.tgz" | sha256sum -c --quiet
ln "$out/python/Python-3.11.2.tgz" "$out/python/$PYTHON_SHA256"
ls -l "$out/python"
