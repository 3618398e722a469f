# shellcheck shell=bash
# Shared set-up of scripts/demo.sh and scripts/test.sh (sourced, not run): go to the repository
# root and make sure the virtual environment .venv there exists and matches the pinned
# requirements. Installs only when an input changed since the last successful install.
set -euo pipefail

REPO_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$REPO_ROOT"

VENV="$REPO_ROOT/.venv"
VENV_PYTHON="$VENV/bin/python"
# sha256 of the install inputs at the last successful install.
STAMP="$VENV/.rnea_ros-install.sha256"
# The cache beside the sources belongs to this checkout, not to the venv (which two checkouts
# may share): its stamp and the package as the precompile step left it are kept here.
PRECOMPILED="$REPO_ROOT/.precompiled"
# sha256 of the files with numba kernels when the cache beside them was filled.
KERNEL_STAMP="$PRECOMPILED/kernels.sha256"
# Files whose change means the venv must be brought up to date.
INSTALL_INPUTS=(requirements*.txt constraints.txt setup.py setup.cfg package.xml
                scripts/_venv.sh)
# pip and setuptools are missing from constraints.txt (pip freeze leaves them out), so they are
# pinned here. The editable install builds with this setuptools (--no-build-isolation), not
# with whatever release PyPI has on the day.
PIP_PIN='pip==26.3'
SETUPTOOLS_PIN='setuptools==84.2.1'
# The ROS 2 wheels and the constraints are for CPython 3.11.
PYTHON_VERSION='3.11'

log() {
    printf '[%s] %s\n' "$(basename "$0")" "$*" >&2
}

run() {
    log "+ $*"
    "$@"
}

python_version_of() {
    "$1" -c 'import sys; print("%d.%d" % sys.version_info[:2])' 2>/dev/null || true
}

find_python() {
    local candidate
    for candidate in "python$PYTHON_VERSION" python3; do
        if command -v "$candidate" >/dev/null 2>&1 \
            && [[ "$(python_version_of "$candidate")" == "$PYTHON_VERSION" ]]
        then
            command -v "$candidate"
            return 0
        fi
    done
    log "error: Python $PYTHON_VERSION not found (tried python$PYTHON_VERSION and python3)"
    return 1
}

inputs_hash() {
    sha256sum "${INSTALL_INPUTS[@]}" | sha256sum | cut -d ' ' -f 1
}

ensure_venv() {
    if [[ -e "$VENV" && "$(python_version_of "$VENV_PYTHON")" != "$PYTHON_VERSION" ]]; then
        log ".venv has no working Python $PYTHON_VERSION: recreating it"
        run rm -rf "$VENV"
    fi
    if [[ ! -e "$VENV" ]]; then
        local python
        python="$(find_python)"
        log "creating the virtual environment .venv with $python"
        run "$python" -m venv "$VENV"
    fi
    local wanted
    wanted="$(inputs_hash)"
    if [[ -f "$STAMP" && "$(cat "$STAMP")" == "$wanted" ]]; then
        log ".venv is up to date (install inputs unchanged)"
        refresh_kernel_cache
        return 0
    fi
    log "installing the pinned requirements into .venv (the first time takes a few minutes)"
    rm -f "$STAMP"
    local pip=("$VENV_PYTHON" -m pip --no-input --disable-pip-version-check)
    run "${pip[@]}" install "$PIP_PIN" "$SETUPTOOLS_PIN"
    run "${pip[@]}" install -r requirements-test.txt -c constraints.txt
    run "${pip[@]}" install --no-deps --no-build-isolation -e .
    # Every numba kernel compiled once into the cache (rnea_ros/**/__pycache__), so that no
    # user command pays the compilation (about a minute of CPU).
    rm -f "$KERNEL_STAMP"
    refresh_kernel_cache
    printf '%s\n' "$wanted" > "$STAMP"
    log ".venv is ready"
}

# numba's cache checks only a kernel's own source file, not those of the jitted functions it
# calls: after a change in dynamics/joints.py, rnea.py's cached kernels would still run the old
# helpers. So any change to a file with kernels clears the whole cache beside the sources and
# fills it again.
kernels_hash() {
    grep -rl --include='*.py' -e 'njit' rnea_ros | LC_ALL=C sort | xargs sha256sum \
        | sha256sum | cut -d ' ' -f 1
}

refresh_kernel_cache() {
    if [[ -f "$KERNEL_STAMP" && "$(cat "$KERNEL_STAMP")" == "$(kernels_hash)" ]]; then
        return 0
    fi
    log "kernel sources changed: numba's cache beside them cleared and filled again"
    find rnea_ros -path '*/__pycache__/*' \( -name '*.nbi' -o -name '*.nbc' \) -delete
    rm -rf "$PRECOMPILED"
    run "$VENV_PYTHON" -m rnea_ros.precompile
    # The package with what the step compiled from an empty cache, before any other process
    # adds to it: test/test_precompile.py runs the users' first steps on this copy instead of
    # compiling every kernel a second time.
    mkdir -p "$PRECOMPILED"
    cp -a rnea_ros "$PRECOMPILED/rnea_ros"
    kernels_hash > "$KERNEL_STAMP"
}
