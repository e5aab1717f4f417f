#!/usr/bin/env bash
# Mirror part `fluentd` (see ../build-mirror.sh): fluentd and fluent-plugin-s3 with the pure-Ruby gems Debian 12
# does not package, built from the git bundles in ../shared/mirror (test data, mounted at /shared) into
# $1/gems/gems with their own index:
#   fluentd 1.16.6, fluent-plugin-s3 1.7.2, serverengine 2.3.2, sigdump 0.2.5, tzinfo-data 1.2026.1 (tags)
#   aws-sdk-sqs 1.52.0 (aws-sdk-sqs-1.52.0-src.tar.gz; fluent-plugin-s3's gemspec asks for it)
# The other dependencies come from Debian's ruby-* packages on the host (the log_shipper role's Debian vars),
# which `gem install` takes as installed gems.
set -euo pipefail
out=$1
export DEBIAN_FRONTEND=noninteractive
for f in fluentd-v1.16.6.bundle fluent-plugin-s3-v1.7.2.bundle serverengine-v2.3.2.bundle sigdump-v0.2.5.bundle \
  tzinfo-data-v1.2026.1.bundle aws-sdk-sqs-1.52.0-src.tar.gz; do
  if [ ! -f "/shared/$f" ]; then
    echo "mirror part fluentd: missing ../shared/mirror/$f" >&2
    exit 3
  fi
done
apt-get update -q >/dev/null
apt-get install -y -q --no-install-recommends ruby git ca-certificates >/dev/null

src=/tmp/src
mkdir -p "$src" "$out/gems/gems"
# The gemspecs call `git ls-files`: build from clones checked out at the tags.
build() { # bundle tag
  git clone -q "/shared/$1.bundle" "$src/$1" 2>/dev/null
  git -C "$src/$1" -c advice.detachedHead=false checkout -q "$2"
  # sigdump's gemspec requires its own version file: from the clone, not Debian's older copy.
  (cd "$src/$1" && RUBYLIB=lib gem build -q ./*.gemspec)
  mv "$src/$1"/*.gem "$out/gems/gems/"
}
build fluentd-v1.16.6 v1.16.6
build fluent-plugin-s3-v1.7.2 v1.7.2
build serverengine-v2.3.2 v2.3.2
build sigdump-v0.2.5 v0.2.5
build tzinfo-data-v1.2026.1 v1.2026.1
tar -C "$src" -xzf /shared/aws-sdk-sqs-1.52.0-src.tar.gz
(cd "$src"/aws-sdk-ruby-*/gems/aws-sdk-sqs && gem build -q aws-sdk-sqs.gemspec && mv ./*.gem "$out/gems/gems/")
gem generate_index -q -d "$out/gems"
ls -l "$out/gems/gems"
