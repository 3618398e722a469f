#!/usr/bin/env bash
# Run the whole test suite: python -m pytest test -q [ARGS...] in .venv (set up first).
# --fast (first) runs the fast tier only: the tests with none of FULL_ONLY's markers (the
# markers are registered in pytest.ini; test/conftest.py derives ros, sim and browser).
# Extra arguments go to pytest, e.g. scripts/test.sh -k oracle -x; naming test files or folders
# (scripts/test.sh test/bag -x) runs only those instead of the whole of test/.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/_venv.sh"
FULL_ONLY='ros or sim or realtime or slow or docs or browser'
tier=()
if [[ "${1:-}" == --fast ]]; then
    shift
    tier=(-m "not ($FULL_ONLY)")
fi
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
log "+ python -m pytest ${targets[*]} -q ${tier[*]:+-m \"${tier[1]}\"} $*"
exec "$VENV_PYTHON" -m pytest "${targets[@]}" -q "${tier[@]}" "$@"
