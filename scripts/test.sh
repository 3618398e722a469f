#!/usr/bin/env bash
# Run the whole test suite: python -m pytest test -q [ARGS...] in .venv (set up first), in two
# phases: every test but the serial ones on PARALLEL pytest-xdist workers, then the tests that
# judge the wall clock (tiers.SERIAL_MARKERS: test/conftest.py's --phase) alone. Each phase's
# failures count; the last line says the result of both.
# --fast (first) runs the fast tier only: the tests with none of FULL_ONLY's markers (the
# markers are registered in pytest.ini; test/conftest.py derives ros, sim and browser).
# Extra arguments go to pytest in both phases, e.g. scripts/test.sh -k oracle -x; naming test
# files or folders (scripts/test.sh test/bag -x) runs only those instead of the whole of test/.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/_venv.sh"
FULL_ONLY='ros or sim or realtime or slow or docs or browser'
# Workers of the parallel phase (CI's machine has 2 cores); each file runs on one worker, so
# that its module fixtures are made once, in the order the conftest gives (longest files first),
# not xdist's (most tests first).
PARALLEL=(-n 2 --dist loadfile --no-loadscope-reorder)
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

# pytest's exit code 5 (no test selected) is no failure when the other phase ran tests.
phase() {
    local name=$1 start=$SECONDS code=0
    shift
    log "+ python -m pytest ${targets[*]} -q ${tier[*]:+-m \"${tier[1]}\"} --phase $name $*"
    "$VENV_PYTHON" -m pytest "${targets[@]}" -q "${tier[@]}" --phase "$name" "$@" || code=$?
    log "$name phase: exit code $code after $((SECONDS - start)) s"
    return "$code"
}

parallel=0
phase parallel "${PARALLEL[@]}" "$@" || parallel=$?
serial=0
if [[ -z "${tier[*]}" ]]; then  # the fast tier has no serial test (realtime is FULL_ONLY)
    phase serial "$@" || serial=$?
else
    serial=5
fi
if [[ $parallel == 5 && $serial == 5 ]]; then
    log 'no test selected'
    exit 5
fi
for code in "$parallel" "$serial"; do
    if [[ $code != 0 && $code != 5 ]]; then
        log "FAILED: parallel phase exit code $parallel, serial phase exit code $serial"
        exit "$code"
    fi
done
log "passed (exit codes: parallel phase $parallel, serial phase $serial; 5: no test selected)"
