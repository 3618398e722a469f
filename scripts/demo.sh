#!/usr/bin/env bash
# Run the demo: the simulated panda (rnea_sim, MuJoCo, a reality gap) driven at 1 kHz over DDS,
# first by its joint PD alone, then with the rnea node's feed-forward; live tracking error, the
# node's rate and latency, the ratio at the end (set up .venv first). Extra arguments go to the
# demo, e.g. scripts/demo.sh --phase 10 --gap none. scripts/demo.sh --open-loop [ARGS...] runs the
# open-loop node demo instead (the node fed a trajectory, its torques against RobotModel.rnea);
# the library-only demo is `.venv/bin/python -m rnea_ros.demos.library`.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/_venv.sh"
ensure_venv
module=rnea_ros.demos.closed_loop_demo
if [[ "${1:-}" == --open-loop ]]; then
    shift
    module=rnea_ros.demos.node_demo
fi
log "+ python -m $module $*"
exec "$VENV_PYTHON" -m "$module" "$@"
