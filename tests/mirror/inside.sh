#!/usr/bin/env bash
# Runs inside a throwaway bookworm container (see build-mirror.sh); writes the mirror to $1.
set -euo pipefail
out=$1
export DEBIAN_FRONTEND=noninteractive
RUBY_SHA256=be063fa98dde118e869b916e300855a8d45d8c00a3de8179d973138b942394f2
GEM_PKGS="ruby-rack ruby-sinatra ruby-rack-protection ruby-mustermann ruby-tilt ruby-ruby2-keywords ruby-webrick"

# deb-src entries for bookworm and trixie (ruby-build's upstream v20241225.2 tree is trixie's), same URIs.
uri=$(sed -n 's/^URIs: *//p' /etc/apt/sources.list.d/debian.sources 2>/dev/null | head -1)
[ -n "$uri" ] || uri=$(awk '/^deb /{print $2; exit}' /etc/apt/sources.list)
cat > /etc/apt/sources.list.d/bench-src.sources <<SRC
Types: deb-src
URIs: $uri
Suites: bookworm trixie
Components: main
SRC
apt-get update -q >/dev/null
apt-get install -y -q --no-install-recommends ruby git xz-utils ca-certificates $GEM_PKGS >/dev/null

src=/tmp/src
mkdir -p "$src" && cd "$src"
# Only the upstream (orig) tarballs are needed; fetch them from the URIs apt resolves, checked against
# the checksum apt lists for them.
apt-get source -q --print-uris rbenv/bookworm ruby-build/trixie ruby3.1=3.1.2-7+deb12u1 \
  | grep -E "\.orig\.tar" | while read -r uri file size sum; do
      uri=${uri//\'/}
      python3 -c 'import sys, urllib.request; urllib.request.urlretrieve(sys.argv[1], sys.argv[2])' "$uri" "$file"
      case $sum in
        SHA256:*) echo "${sum#SHA256:}  $file" | sha256sum -c --quiet ;;
        *) echo "${sum#*:}  $file" | md5sum -c --quiet ;;
      esac
    done

# A bare git repository per tool, made from the upstream tree and tagged as upstream tags it.
git_repo() { # name orig-tarball tag
  local name=$1 tarball=$2 tag=$3 tree=/tmp/tree-$1
  mkdir -p "$tree"
  tar -C "$tree" --strip-components=1 -xzf "$tarball"
  git -C "$tree" init -q -b master
  git -C "$tree" add -A
  git -C "$tree" -c user.name=bench-stack -c user.email=bench-stack@localhost \
    commit -q -m "$name ${tag} (upstream tree from Debian's orig tarball)"
  git -C "$tree" tag "$tag"
  mkdir -p "$out/git"
  git clone -q --bare "$tree" "$out/git/$name.git"
  git -C "$out/git/$name.git" repack -q -a -d
  git -C "$out/git/$name.git" update-server-info
}
git_repo rbenv "$(ls rbenv_1.1.2.orig.tar.gz)" v1.1.2
git_repo ruby-build "$(ls ruby-build_20241225.2.orig.tar.gz)" v20241225.2

# Ruby 3.1.2: Debian's orig tarball (upstream minus bundled gems and libffi), repacked as .tar.gz.
mkdir -p "$out/ruby"
xz -dc ruby3.1_3.1.2.orig.tar.xz | gzip -n > "$out/ruby/ruby-3.1.2.tar.gz"
(cd "$out/ruby" && sha256sum ruby-3.1.2.tar.gz > SHA256SUMS)
echo "$RUBY_SHA256  $out/ruby/ruby-3.1.2.tar.gz" | sha256sum -c --quiet

# Gems: each Debian package's installed files (lib/ and bin/) plus its gemspec, built as a real .gem.
mkdir -p "$out/gems/gems"
for pkg in $GEM_PKGS; do
  spec=$(dpkg -L "$pkg" | grep -E '/specifications/[^/]+\.gemspec$' | head -1)
  stage=/tmp/gem-$pkg
  mkdir -p "$stage/lib" "$stage/bin"
  { dpkg -L "$pkg" | grep -E '^/usr/lib/ruby/vendor_ruby/.+\.rb$|^/usr/share/rubygems-integration/all/gems/[^/]+/lib/.+' || true; } \
    | while read -r f; do
        [ -f "$f" ] || continue
        rel=${f#/usr/lib/ruby/vendor_ruby/}
        rel=${rel#/usr/share/rubygems-integration/all/gems/*/lib/}
        mkdir -p "$stage/lib/$(dirname "$rel")"
        cp "$f" "$stage/lib/$rel"
      done
  { dpkg -L "$pkg" | grep -E '^/usr/bin/' || true; } | while read -r f; do cp "$f" "$stage/bin/"; done
  (cd "$stage" && ruby -e '
    require "rubygems/package"
    spec = Gem::Specification.load(ARGV[0]) or abort "no gemspec #{ARGV[0]}"
    spec.files = Dir["lib/**/*", "bin/*"].select { |f| File.file?(f) }
    spec.executables = Dir["bin/*"].map { |f| File.basename(f) }
    spec.bindir = "bin"
    spec.require_paths = ["lib"]
    spec.extensions = []
    file = Gem::Package.build(spec)
    puts "#{file} (#{spec.files.size} files)"
  ' "$spec")
  mv "$stage"/*.gem "$out/gems/gems/"
done
gem generate_index -q -d "$out/gems"
ls -l "$out/gems/gems"
