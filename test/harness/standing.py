"""
Standing robots for the contact tests and benchmark.

Standing robots for the contact tests and benchmark: solo12 on four point feet, talos_reduced
on two soles, feet on the ground plane z = 0.
"""
from __future__ import annotations

from harness.oracle import robot_path
import numpy as np

from rnea_ros import RobotModel
from rnea_ros.contacts import Contact

SOLO_FEET = ('FL_FOOT', 'FR_FOOT', 'HL_FOOT', 'HR_FOOT')
TALOS_SOLES = ('left_sole_link', 'right_sole_link')
# Talos' sole: about 0.2 m x 0.13 m around the sole link origin (its z axis is the normal).
TALOS_SOLE_HALF_EXTENTS = (0.1, 0.065)
FRICTION = 0.7


def contacts(name: str) -> list[Contact]:
    if name == 'solo12':
        return [Contact(link, 'point', FRICTION) for link in SOLO_FEET]
    return [Contact(link, 'surface', FRICTION, half_extents=TALOS_SOLE_HALF_EXTENTS)
            for link in TALOS_SOLES]


def standing_joints(model: RobotModel, name: str) -> dict[str, float]:
    """
    Joint angles of a mirror-symmetric standing pose (others zero).

    solo12: knees bent in an X (front knees backwards, hind knees forwards), feet under the
    hips. talos_reduced: Talos' 'half-sitting' legs with only the pitch joints bent (hip,
    knee, ankle sum to zero: soles flat), arms slightly open.
    """
    if name == 'solo12':
        joints = {}
        for leg, sign in (('FL', 1), ('FR', 1), ('HL', -1), ('HR', -1)):
            joints.update({f'{leg}_HFE': 0.8 * sign, f'{leg}_KFE': -1.6 * sign})
        return joints
    joints = {'torso_2_joint': 0.006761}
    for side, sign in (('left', 1), ('right', -1)):
        joints.update({f'leg_{side}_3_joint': -0.411354, f'leg_{side}_4_joint': 0.859395,
                       f'leg_{side}_5_joint': -0.448041,
                       f'arm_{side}_1_joint': 0.25847 * sign,
                       f'arm_{side}_2_joint': 0.173046 * sign,
                       f'arm_{side}_4_joint': -0.525366, f'arm_{side}_7_joint': 0.1})
    return joints


def standing(name: str, model: RobotModel | None = None):
    """(model, q): the robot standing with its lowest foot link origin on z = 0, base level."""
    if model is None:
        model = RobotModel.from_urdf_file(robot_path(name), floating_base=True)
    q = model.neutral_configuration()
    for joint, angle in standing_joints(model, name).items():
        q[model.joint(joint).idx_q] = angle
    feet = [contact.link for contact in contacts(name)]
    _, positions = model.link_placements(q, feet)
    q[2] = -np.min(positions[:, 2])
    return model, q
