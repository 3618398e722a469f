#!/usr/bin/env bash
# Run the demo: load a robot and print its joint torques along a trajectory (set up .venv first).
# Extra arguments go to the demo, e.g. scripts/demo.sh --urdf my_robot.urdf --floating-base
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/_venv.sh"
ensure_venv
log "+ python -m rnea_ros.demo $*"
exec "$VENV_PYTHON" -m rnea_ros.demo "$@"
