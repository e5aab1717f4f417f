#!/usr/bin/env bash
# scripts/molecule-on.sh SCENARIO [RELEASE]: run a Debian 12 Molecule scenario once on another base image
# (default trixie, Debian 13) without changing the scenario, to try a row of the support matrix that CI does
# not run. A copy, molecule/SCENARIO-RELEASE, with every bench-stack/debian:bookworm platform on
# bench-stack/debian:RELEASE, is run by `./run molecule` and removed afterwards. The copy keeps the
# scenario's container names: never run it beside the scenario itself (or beside `./run test`).
set -euo pipefail

scenario=${1:?usage: scripts/molecule-on.sh SCENARIO [RELEASE]}
release=${2:-trixie}
root=$(cd "$(dirname "$0")/.." && pwd)
source_dir=$root/molecule/$scenario
copy=$scenario-$release
dir=$root/molecule/$copy

[ -f "$source_dir/molecule.yml" ] || { echo "no scenario molecule/$scenario" >&2; exit 2; }
[ ! -e "$dir" ] || { echo "molecule/$copy exists: remove it first" >&2; exit 2; }
grep -q 'bench-stack/debian:bookworm' "$source_dir/molecule.yml" ||
  { echo "molecule/$scenario has no bench-stack/debian:bookworm platform" >&2; exit 2; }

trap 'rm -rf "$dir"' EXIT
cp -r "$source_dir" "$dir"
grep -rl 'bench-stack/debian:bookworm' "$dir" | xargs sed -i "s#bench-stack/debian:bookworm#bench-stack/debian:$release#g"
cd "$root"
./run molecule "$copy"
