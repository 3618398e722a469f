#!/usr/bin/env bash
# Run the whole test suite: python -m pytest test -q [ARGS...] in .venv (set up first).
# Extra arguments go to pytest, e.g. scripts/test.sh -k oracle -x
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/_venv.sh"
ensure_venv
# Subprocesses started by tests (console scripts, python) must come from .venv.
export PATH="$VENV/bin:$PATH"
log "+ python -m pytest test -q $*"
exec "$VENV_PYTHON" -m pytest test -q "$@"
