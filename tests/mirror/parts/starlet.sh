#!/usr/bin/env bash
# Mirror part `starlet` (see ../build-mirror.sh): the Ruby Starlet's gems, built from the git bundles in
# ../shared/mirror (test data, mounted at /shared) into $1/gems/gems with their own index:
#   pico_http_parser 0.0.4 (HEAD 9d9c599, with its picohttpparser submodule from picohttpparser.bundle)
#   prefork_engine 0.0.7 (tag v0.0.7; its example/starlet.rb is the Starlet Rack handler)
#   proc-wait3 1.7.3 (tag proc-wait3-1.7.3; prefork_engine asks for ~> 1.7.2)
# Merged with `base` (rack, sinatra) they form one gem source. Start_server is Debian's libserver-starter-perl.
set -euo pipefail
out=$1
export DEBIAN_FRONTEND=noninteractive
for bundle in pico_http_parser picohttpparser prefork_engine proc-wait3; do
  if [ ! -f "/shared/$bundle.bundle" ]; then
    echo "mirror part starlet: missing ../shared/mirror/$bundle.bundle" >&2
    exit 3
  fi
done
apt-get update -q >/dev/null
# ruby-dev and a compiler only for the install check below: the gems carry C sources, built on the target.
apt-get install -y -q --no-install-recommends ruby ruby-dev build-essential git ca-certificates >/dev/null

src=/tmp/src
mkdir -p "$src" "$out/gems/gems"
clone() { # bundle ref
  git clone -q "/shared/$1.bundle" "$src/$1"
  git -C "$src/$1" -c advice.detachedHead=false checkout -q "$2"
}
clone prefork_engine v0.0.7
clone proc-wait3 proc-wait3-1.7.3
clone pico_http_parser 9d9c599
# The submodule's URL is GitHub's: point it at the bundle.
git -C "$src/pico_http_parser" config submodule.ext/pico_http_parser/picohttpparser.url /shared/picohttpparser.bundle
git -C "$src/pico_http_parser" -c protocol.file.allow=always submodule -q update --init

# pico_http_parser's gemspec adds the submodule's files by absolute path, which RubyGems refuses at install
# ("installing into parent path ... is not allowed"): build it with the files git lists, submodule included.
# shellcheck disable=SC2016 # Ruby code, not shell
(cd "$src/pico_http_parser" && ruby -e '
  require "rubygems/package"
  spec = Gem::Specification.load("pico_http_parser.gemspec") or abort "no gemspec"
  spec.files = `git ls-files -z --recurse-submodules`.split("\x0")
  spec.test_files = spec.files.grep(%r{^(test|spec|features)/})
  puts Gem::Package.build(spec)
')
(cd "$src/prefork_engine" && gem build -q prefork_engine.gemspec)
(cd "$src/proc-wait3" && gem build -q ./*.gemspec)
mv "$src"/pico_http_parser/*.gem "$src"/prefork_engine/*.gem "$src"/proc-wait3/*.gem "$out/gems/gems/"
gem generate_index -q -d "$out/gems"

# The gems install from this source alone (C extensions compile), the parser parses and the handler is packed.
gem install -q --no-document --clear-sources --source "file://$out/gems/" --install-dir /tmp/check \
  pico_http_parser:0.0.4 prefork_engine:0.0.7 >/dev/null
# shellcheck disable=SC2016 # Ruby code, not shell
GEM_HOME=/tmp/check GEM_PATH=/tmp/check ruby -e '
  require "pico_http_parser"
  require "proc/wait3"
  env = {}
  n = PicoHTTPParser.parse_http_request("GET /hello/bar HTTP/1.1\r\nHost: x\r\n\r\n", env)
  abort "pico_http_parser parsed #{n}, #{env.inspect}" unless n > 0 && env["PATH_INFO"] == "/hello/bar"
  spec = Gem::Specification.find_by_name("prefork_engine", "0.0.7")
  abort "prefork_engine packs no example/starlet.rb" unless File.file?(File.join(spec.gem_dir, "example/starlet.rb"))
'
ls -l "$out/gems/gems"
