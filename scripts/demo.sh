#!/usr/bin/env bash
# Run the demo: the rnea node on a real robot (panda) over DDS, fed a smooth trajectory, with a
# live summary of rate, latency and torques (set up .venv first). Extra arguments go to the
# demo, e.g. scripts/demo.sh --duration 10 --rate 1000; the library-only demo is
# `.venv/bin/python -m rnea_ros.demo`.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/_venv.sh"
ensure_venv
log "+ python -m rnea_ros.node.demo $*"
exec "$VENV_PYTHON" -m rnea_ros.node.demo "$@"
