#!/usr/bin/env bash
# Run the whole test suite: python -m pytest test -q [ARGS...] in .venv (set up first).
# Extra arguments go to pytest, e.g. scripts/test.sh -k oracle -x; naming test files or folders
# (scripts/test.sh test/bag -x) runs only those instead of the whole of test/.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/_venv.sh"
ensure_venv
# Subprocesses started by tests (console scripts, python) must come from .venv.
export PATH="$VENV/bin:$PATH"
targets=(test)
for arg in "$@"; do
    if [[ "$arg" != -* && -e "$arg" ]]; then
        targets=()
        break
    fi
done
log "+ python -m pytest ${targets[*]} -q $*"
exec "$VENV_PYTHON" -m pytest "${targets[@]}" -q "$@"
