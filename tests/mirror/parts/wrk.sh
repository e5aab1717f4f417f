#!/usr/bin/env bash
# Mirror part "wrk": wrk 4.2.0's release files without its bundled OpenSSL tarball (test data from
# ../shared/mirror, see its README), at wrk/wrk-4.2.0-without-openssl.tar.gz, and the same files gzipped
# again (another sha256, wrk/wrk-4.2.0-repacked.tar.gz: "a new tarball" for the rebuild test). The loadgen role
# builds them with the system's OpenSSL (loadgen_wrk_method: source), as on Amazon Linux 2023.
set -euo pipefail
out=$1
file=wrk-4.2.0-without-openssl.tar.gz
if [ ! -f "/shared/$file" ]; then
  echo "mirror part wrk: ../shared/mirror/$file is missing" >&2
  exit 3
fi
mkdir -p "$out/wrk"
cp "/shared/$file" "$out/wrk/$file"
gzip -dc "/shared/$file" | gzip -1n >"$out/wrk/wrk-4.2.0-repacked.tar.gz"
(cd "$out/wrk" && sha256sum ./*.tar.gz | sed 's| \./| |' >SHA256SUMS)
