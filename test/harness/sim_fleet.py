"""
A generated fleet for the drift check: three simulated pandas, one joint's friction raised.

``make_fleet(root)`` writes what a fleet operator has, with a known truth:

- ``root/bags/<robot>/run_<k>``: ``BAGS`` bags of each of ``ROBOTS``, a week apart, each what
  ``rnea_sim --record`` keeps of ``DURATION`` s of a lockstep run (``joint_states`` and
  ``desired_accelerations``; ``sim_identification.record``, one physics step per 1 ms step):
  the panda plant with the default reality gap drawn with the robot's own seed (its own
  inertia errors and sensor offsets; the 0.5 kg tool, armature 0.1, Coulomb 0.5 and viscous
  0.2 per joint) tracks a Fourier excitation of ``sim_identification`` (one period of it, the
  same on every robot, bag k from ``PHASE`` k s into it: the same motion) under the sim's
  drive PD 100/10 with the URDF's feed-forward, as the node gives it: the tracking error and
  the unmodelled tool make the desired accelerations differ from the motion.
- The one drift: ``WORN`` robot's ``WORN_JOINT`` Coulomb friction is ``WORN_COULOMB`` N m
  instead of 0.5 in its last ``WORN_BAGS`` bags (a failing gearbox); nothing else changes.
- ``root/models/<robot>.urdf`` and ``<robot>_actuation.yaml``: each robot's identified model,
  as ``rnea_identify`` writes it from an excitation of that robot before the change. Its
  truth stands in for the identification here (the plant's true rigid bodies, and the gap's
  armature, friction and sensor offsets as the actuation model), which ``rnea_identify``
  approaches on lockstep recordings (docs/identify.md, "judged against the simulated robot").
- ``root/fleet.yaml``: the manifest of docs/fleet.md, a robot per entry with its model.
"""
from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from harness import sim_identification
from harness.oracle import robot_path
import yaml

from rnea_ros.dynamics.actuation import Actuation
from rnea_ros.params.actuation_file import actuation_yaml
from rnea_ros.sim.gap import load_gap
from rnea_ros.sim.loop import START_NS
from rnea_ros.sim.plant import Plant

ROBOTS = ('arm_a', 'arm_b', 'arm_c')
BAGS = 4
DURATION = 2.0    # s per bag: one period of the excitation
PHASE = 0.7       # s between the excitation's starts of consecutive bags
FILL = 0.3        # of each joint's range
WORN, WORN_JOINT, WORN_COULOMB, WORN_BAGS = 'arm_b', 'panda_joint2', 2.0, 2
WEEK_NS = 7 * 24 * 3600 * 10**9
EXCITATION_SEED = 11


def robot_gap(robot: str, worn: bool = False):
    """Return the default gap drawn with ``robot``'s seed; ``worn``: its joint worn."""
    gap = load_gap('default')
    gap = replace(gap, seed=gap.seed + 10 * ROBOTS.index(robot))
    if worn:
        gap = replace(gap, joints={**gap.joints, WORN_JOINT: {'coulomb': WORN_COULOMB}})
    return gap


def identified_model(robot: str, folder: Path) -> tuple[Path, Path]:
    """Write ``robot``'s model (its truth, module docstring): the URDF and actuation.yaml."""
    plant = Plant(robot_path(sim_identification.ROBOT).read_text(),
                  gap=robot_gap(robot))
    terms = sim_identification.plant_joint_terms(plant)
    params = {}
    for k, joint in enumerate(plant.joint_names):
        row = plant.nominal.joint(joint).idx_v
        params[f'friction.{joint}.coulomb'] = float(terms['coulomb'][row])
        params[f'friction.{joint}.viscous'] = float(terms['viscous'][row])
        params[f'armature.{joint}'] = float(terms['armature'][row])
        params[f'effort_bias.{joint}'] = float(plant.torque_offset[k])
    folder.mkdir(parents=True, exist_ok=True)
    urdf = folder / f'{robot}.urdf'
    urdf.write_text(plant.true_urdf)
    actuation = folder / f'{robot}_actuation.yaml'
    actuation.write_text(actuation_yaml(Actuation.from_parameters(plant.nominal, params)))
    return urdf, actuation


def make_fleet(root: Path) -> Path:
    """Write the fleet of the module docstring under ``root``; return the manifest's path."""
    robots = {}
    for r, robot in enumerate(ROBOTS):
        for k in range(BAGS):
            worn = robot == WORN and k >= BAGS - WORN_BAGS
            sim_identification.record(
                root / 'bags' / robot / f'run_{k}', DURATION, EXCITATION_SEED,
                gap=robot_gap(robot, worn), substeps=1, phase=k * PHASE,
                base_frequency=1.0 / DURATION, fill=FILL, desired=True,
                start_ns=START_NS + k * WEEK_NS + r * 3600 * 10**9)
        urdf, actuation = identified_model(robot, root / 'models')
        robots[robot] = {'urdf': str(urdf.relative_to(root)),
                         'actuation': str(actuation.relative_to(root)),
                         'bags': [f'bags/{robot}']}
    manifest = root / 'fleet.yaml'
    manifest.write_text(yaml.safe_dump({'robots': robots}, sort_keys=False))
    return manifest
