#!/usr/bin/env bash
# mypy on the code outside benchstack/ that calls it (settings and why: tests/mypy-callers.toml). One run per
# folder: each scenario has its own conftest.py (and side_effect.py, test_servers.py, ...), which one run
# would see as one module found twice. The runs share a cache, so only the first reads benchstack/ in full.
# Prints only errors; exits 1 when any run found one.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
shopt -s nullglob
status=0

check() {
  [ $# -gt 0 ] || return 0
  mypy --config-file tests/mypy-callers.toml --no-error-summary "$@" || status=1
}

for scenario in molecule/*/; do
  check "$scenario"*.py "$scenario"tests/*.py
done
check tests/*.py tests/e2e/*.py
# kind_files.py imports these as scripts.kindfiles.* and scripts.role_docs: named from the checkout's root.
package=(scripts/kind_files.py scripts/role_docs.py scripts/kindfiles/*.py)
check --explicit-package-bases "${package[@]}"
# The others run alone (`python scripts/measure-answer.py`), each named by its file, as their imports expect
# (`from benchruns import one_run`).
others=()
for file in scripts/*.py scripts/*/*.py; do
  [[ " ${package[*]} " == *" $file "* ]] || others+=("$file")
done
check "${others[@]}"
exit $status
