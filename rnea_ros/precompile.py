"""
Compile every numba kernel once, into numba's cache: ``python -m rnea_ros.precompile``.

The kernels are compiled with ``cache=True`` on their first call, for the argument types of
that call; a later process loads them from the cache (in ``__pycache__`` beside the sources,
or where ``NUMBA_CACHE_DIR`` points, or the user's cache folder when the sources are not
writable). This module makes those first calls on a small robot, as the tools make them: the
library API (fixed and floating base, serial and threaded batches, the regressor), the
momentum observer, a contact solver, the node's control core, and ``rnea_bag`` on a short
generated bag (``rnea_ros.bag.precompile``). The set-up command (``scripts/_venv.sh``) runs it
after installing, so that no user command pays the compilation.
Editing a kernel's source file makes its cache stale: run it again.
"""
from __future__ import annotations

from pathlib import Path
import sys
import tempfile
import time

import numpy as np

from rnea_ros.dynamics.model import RobotModel

ROBOT = """<robot name="precompile">
  <link name="base"><inertial><mass value="2"/>
    <inertia ixx="0.1" iyy="0.1" izz="0.1" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <link name="upper"><inertial><origin xyz="0 0 0.1"/><mass value="1"/>
    <inertia ixx="0.01" iyy="0.02" izz="0.01" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <link name="fore"><inertial><origin xyz="0.1 0 0"/><mass value="0.5"/>
    <inertia ixx="0.01" iyy="0.01" izz="0.02" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <link name="tool"/>
  <joint name="shoulder" type="revolute"><parent link="base"/><child link="upper"/>
    <origin xyz="0 0 0.1" rpy="0 0.2 0"/><axis xyz="0 1 0"/>
    <limit lower="-2" upper="2" effort="50" velocity="2"/></joint>
  <joint name="slide" type="prismatic"><parent link="upper"/><child link="fore"/>
    <origin xyz="0 0 0.2"/><axis xyz="1 0 0"/>
    <limit lower="-0.5" upper="0.5" effort="80" velocity="1"/></joint>
  <joint name="tool_joint" type="fixed"><parent link="fore"/><child link="tool"/>
    <origin xyz="0.1 0 0"/></joint>
</robot>
"""
# Batches at least this long run on threads (model.MIN_SAMPLES_PER_THREAD per thread).
THREADED = 512


def library() -> None:
    """Call the RobotModel API as users do: single calls, batches, the regressor, kinematics."""
    rng = np.random.default_rng(0)
    for floating_base in (False, True):
        model = RobotModel.from_urdf_string(ROBOT, floating_base=floating_base)
        q = model.neutral_configuration()
        v, a = rng.uniform(-1, 1, (2, model.nv))
        wrench = {'tool': np.ones(6)}
        model.rnea(q, v, a)
        model.rnea(q, v, a, f_ext=wrench, gravity=(0.0, 0.0, -9.8))
        model.gravity_torques(q)
        model.mass_matrix(q)
        model.coriolis_transpose_velocity(q, v)
        model.coriolis_matrix(q, v)
        model.regressor(q, v, a)
        model.link_placement(q, 'tool')
        for frame in ('local', 'local_world_aligned', 'world'):
            model.link_jacobian(q, 'tool', frame)
        model.joint_reaction_wrenches(q, v, a, f_ext=wrench)
        model.forward_dynamics(q, v, a)
        model.forward_dynamics(q, v, a, f_ext=wrench, gravity=(0.0, 0.0, -9.8))
        for n, threads in ((8, 1), (THREADED, 2)):
            Q = np.repeat(q[None], n, axis=0)
            V, A = rng.uniform(-1, 1, (2, n, model.nv))
            model.rnea_batch(Q, V, A, threads=threads)
            model.rnea_batch(Q, V, A, f_ext=wrench, threads=threads)
            model.rnea_terms_batch(Q, V, A, threads=threads)
            model.regressor_batch(Q, V, A, threads=threads)
            model.forward_dynamics_batch(Q, V, A, f_ext=wrench, threads=threads)


def observer() -> None:
    """Run the momentum observer by sample (the node) and over a batch (rnea_bag); a wrench."""
    from rnea_ros.observer import estimate_wrench, MomentumObserver
    model = RobotModel.from_urdf_string(ROBOT)
    q = model.neutral_configuration()
    observer = MomentumObserver(model, 50.0)
    for stamp in (0.0, 0.001):
        observer.update(stamp, q, q, q)
    observer.run([0.002, 0.003], [q, q], [q, q], [q, q])
    for point in (None, np.zeros(3)):
        estimate_wrench(model, q, q, 'tool', point=point)


def contacts() -> None:
    """Build and solve a contact problem with a point and a surface contact."""
    from rnea_ros.contacts import Contact, ContactSolver
    model = RobotModel.from_urdf_string(ROBOT, floating_base=True)
    solver = ContactSolver(model, [Contact('tool'), Contact('base', kind='surface',
                                                            half_extents=(0.1, 0.05))])
    solver.solve(model.neutral_configuration(), np.zeros(model.nv), np.zeros(model.nv))


def node_core() -> None:
    """Run control cycles of the node's core (no ROS): joint states, a trajectory, friction."""
    from rnea_ros.control.core import ControlCore
    from rnea_ros.control.settings import Settings
    from rnea_ros.control.trajectory import Trajectory, warm_up
    warm_up()
    model = RobotModel.from_urdf_string(ROBOT)
    names = model.joint_names
    core = ControlCore(model, Settings(friction_compensation=True).validate())
    core.on_joint_states(names, [0.1, 0.0], [0.2, 0.1], [], now=1.0)
    core.on_desired(Trajectory.from_points(names, [(0.0, [0.1, 0.0], [], []),
                                                   (1.0, [0.3, 0.1], [], [])]), 0.0, now=1.0)
    core.cycle(1.01, 0.0)
    core.cycle(1.5, 0.0)  # inputs stale: the fault output
    # A feedback law acting on the predicted state (prediction: the model's rollout).
    predicting = ControlCore(model, Settings(control_law='pd_feedforward', prediction='model',
                                             gains={'kp.shoulder': 1.0}).validate())
    predicting.on_joint_states(names, [0.1, 0.0], [0.2, 0.1], [], now=1.0)
    predicting.cycle(1.0, 0.0)


def run_bag_tool(folder: Path) -> None:
    """Run ``rnea_bag`` (``rnea_ros.bag.precompile``: the bag tools' modules are imported)."""
    from rnea_ros.bag.precompile import run_on_generated_bag
    run_on_generated_bag(folder, ROBOT)


def main() -> int:
    """Compile everything; print one line per part with its time (or the module it lacks)."""
    steps = [('library', library), ('observer', observer), ('contacts', contacts),
             ('node core', node_core)]
    with tempfile.TemporaryDirectory(prefix='rnea_precompile_') as folder:
        steps.append(('rnea_bag', lambda: run_bag_tool(Path(folder))))
        for name, step in steps:
            start = time.perf_counter()
            try:
                step()
            except ModuleNotFoundError as exc:  # a ROS install without the bag tools' modules
                print(f'rnea_ros.precompile: {name} skipped: Python module {exc.name!r} is '
                      'missing', file=sys.stderr)
                continue
            print(f'rnea_ros.precompile: {name} kernels ready '
                  f'({time.perf_counter() - start:.1f} s)', file=sys.stderr)
    return 0


if __name__ == '__main__':
    sys.exit(main())
