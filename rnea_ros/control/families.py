"""
The node's per-link and per-joint parameter families, each declared once (``Family``).

Declared with the node's other parameters (``declaration`` re-exports them). The families take
their defaults from the library that owns them: ``contact.<link>.*`` from
``rnea_ros.contacts.Contact``, ``armature.<joint>``, ``friction.<joint>.*``,
``effort_bias.<joint>`` and ``effort_gain.<joint>`` from ``rnea_ros.dynamics.actuation``
(which also checks their values, as it does for ``rnea_bag --actuation``). Each family names
the field of the settings snapshot that holds its values (``attribute``) and owns the prefixes
of its names. ROS-free.
"""
from __future__ import annotations

from dataclasses import fields, replace

from rnea_ros.contacts import Contact, KINDS
from rnea_ros.control.control_law import MAX_KD, MAX_KP
from rnea_ros.dynamics.actuation import BOUNDS
from rnea_ros.observer.collision import MAX_THRESHOLD, MIN_THRESHOLD, THRESHOLD_PARAMETER
from rnea_ros.params.parameter import DOUBLE, DOUBLE_ARRAY, Family, Parameter, STRING

__all__ = ['COLLISION', 'COLLISION_PROFILE', 'CONTACT', 'FAMILIES', 'GAINS', 'ACTUATION',
           'WRENCH_POINT']


def _within(term: str) -> dict:
    """Return the bounds of an actuation term, as the library checks them (``low``, ``high``)."""
    return dict(zip(('low', 'high'), BOUNDS[term]))


def _contact_default(field: str):
    default = {f.name: f.default for f in fields(Contact)}[field]
    return list(default) if isinstance(default, tuple) else default


CONTACT = Family(
    'link', (
        Parameter('contact.{link}.type', STRING, _contact_default('kind'),
                  '`point` (3-D force) or `surface` (6-D wrench of a sole)',
                  'point (a 3-D force at `position`) or surface (a 6-D wrench of a rectangular '
                  'sole whose normal is the link z axis).', choices=KINDS),
        Parameter('contact.{link}.friction', DOUBLE, _contact_default('friction'),
                  'Coulomb coefficient, > 0',
                  'Coulomb friction coefficient mu > 0, linearised as the inscribed 4-facet '
                  'pyramid.'),
        Parameter('contact.{link}.position', DOUBLE_ARRAY, _contact_default('position'),
                  'contact point / sole centre, link frame',
                  'Contact point or sole centre in the link frame.', unit='m', size=3),
        Parameter('contact.{link}.normal', DOUBLE_ARRAY, _contact_default('normal'),
                  'ground normal of a point contact, world frame',
                  'Ground normal of a point contact, world frame.', size=3),
        Parameter('contact.{link}.half_extents', DOUBLE_ARRAY, _contact_default('half_extents'),
                  'sole half-sizes `[X, Y]`, link x, y; surface only',
                  'Half-sizes [X, Y] of a sole along the link x and y axes (surface only, '
                  'required).', unit='m', size=2, shown_default='none'),
        Parameter('contact.{link}.weight', DOUBLE, _contact_default('weight'),
                  "this contact's weight in the solver cost, > 0",
                  'Weight > 0 of this contact in the solver cost.'),
    ),
    when='once `contacts` is read', checked_by='rnea_ros.contacts.Contact')  # into `contacts`

ACTUATION = Family(
    'joint', (
        Parameter('armature.{joint}', DOUBLE, 0.0,
                  'reflected rotor inertia: τ += armature·a',
                  'reflected rotor inertia: tau += armature * a (always applied).',
                  unit='kg m² or kg', note='3', **_within('armature')),
        Parameter('friction.{joint}.coulomb', DOUBLE, 0.0, 'Coulomb friction',
                  'Coulomb friction: coulomb * tanh(v / friction_velocity_threshold).',
                  unit='N m or N', note='3', **_within('coulomb')),
        Parameter('friction.{joint}.viscous', DOUBLE, 0.0, 'viscous friction',
                  'viscous friction: viscous * v.', unit='N m s/rad or N s/m', note='3',
                  **_within('viscous')),
        Parameter('friction.{joint}.offset', DOUBLE, 0.0, 'constant torque offset',
                  'constant torque offset.', unit='N m or N', note='3', **_within('offset')),
        Parameter('effort_bias.{joint}', DOUBLE, 0.0,
                  "effort sensor's bias: the observer takes it out of the measured effort",
                  'bias of the effort sensor: the observer integrates the measured effort '
                  'minus it (never applied as a torque).', unit='N m or N', note='3',
                  **_within('effort_bias')),
        Parameter('effort_gain.{joint}', DOUBLE, 1.0,
                  "effort sensor's gain: measured torque = effort_gain·effort − effort_bias",
                  'gain of the effort sensor (e.g. N m per A of a motor current): the observer '
                  'integrates effort_gain * effort - effort_bias (never applied as a torque).',
                  unit='N m or N per unit of effort', note='3', **_within('effort_gain')),
    ),
    when='for each one-DoF joint when a model loads',
    checked_by='rnea_ros.dynamics.actuation.Actuation', attribute='actuation')
COLLISION = Family(
    'joint', (
        Parameter(THRESHOLD_PARAMETER + '{joint}', DOUBLE, None,
                  'collision when the absolute external torque exceeds it; unset: not watched',
                  'Collision threshold on the absolute external torque (the residual) of the '
                  'joint; a joint without one is not watched. Unset live (ros2 param delete), '
                  'the joint is not watched until a threshold is set again.',
                  unit='N m or N', low=MIN_THRESHOLD, high=MAX_THRESHOLD, live=True,
                  shown_default='unset (not watched)',
                  expected=f'a number from {MIN_THRESHOLD:g} to {MAX_THRESHOLD:g} (N m or N; '
                  'unset: not watched)'),
    ),
    when='for each one-DoF joint when a model loads',
    checked_by='rnea_ros.control.declaration.check', attribute='collision_thresholds')
COLLISION_PROFILE = Family(
    'joint', (replace(COLLISION.members[0], name=THRESHOLD_PARAMETER + '{profile}.{joint}',
                      summary="in the threshold set `<profile>`; unset: the joint's default",
                      description='Collision threshold of the joint in the set <profile> (one '
                      "of collision_profiles); unset: the joint's collision_threshold.<joint>.",
                      shown_default='unset (the default set)'),),
    when='for each one-DoF joint and each of collision_profiles when a model loads',
    checked_by='rnea_ros.control.declaration.check',
    attribute='collision_profile_thresholds')
WRENCH_POINT = Family(
    'link', (
        Parameter('wrench_point.{link}', DOUBLE_ARRAY, None,
                  'estimate a pure force at this point (link frame); unset: a full wrench',
                  'Contact point, in the link frame, of a pure force: the estimated wrench of '
                  'this wrench_estimation_links entry is then a force at that point (its torque '
                  'about the link origin is c x f); unset: a full wrench.',
                  unit='m', size=3, expected='3 finite numbers (a point in the link frame, m)',
                  shown_default='unset (a wrench)'),
    ),
    when='once `wrench_estimation_links` is read', checked_by='rnea_ros.control.declaration.check',
    attribute='wrench_points')
GAINS = Family(
    'joint', (
        Parameter('kp.{joint}', DOUBLE, 0.0,
                  'position gain of `pd_feedforward` / `computed_torque`',
                  'Position gain of the feedback laws: N m/rad (N/m) under pd_feedforward, '
                  '1/s^2 under computed_torque.',
                  unit='N m/rad or 1/s²', low=0.0, high=MAX_KP, live=True, note='7'),
        Parameter('kd.{joint}', DOUBLE, 0.0,
                  'velocity gain, and the damping of the rest',
                  'Velocity gain of the feedback laws: N m s/rad (N s/m) under pd_feedforward, '
                  '1/s under computed_torque; also the damping D of the damped rest.',
                  unit='N m s/rad or 1/s', low=0.0, high=MAX_KD, live=True, note='7'),
    ),
    when='for each one-DoF joint when a model loads',
    checked_by='rnea_ros.control.declaration.check', attribute='gains')
FAMILIES = (CONTACT, ACTUATION, COLLISION, COLLISION_PROFILE, WRENCH_POINT, GAINS)
