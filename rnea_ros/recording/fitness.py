"""
What a simulated run says about its own recording: late steps, joint-limit contacts, saturation.

Written by ``rnea_sim --record`` (and ``rnea_ros.sim.loop`` with a recorder), read by
``rnea_identify``. ``RunFitness`` is told every step (the exact positions after it, the torque
asked and the torque applied) and gives, at the end, the entry ``KEY`` of the bag's
``custom_data`` in ``metadata.yaml`` (rosbag2's map of strings: one JSON text)::

    {"clock": "realtime", "steps": 48000, "late_steps": 20262, "late_share": 0.4221,
     "max_lateness": 1.026,                                         # s
     "limit_contacts": {"panda_joint2": {"steps": 812, "beyond": 0.030}},  # rad or m
     "saturation": {"panda_joint2": {"steps": 35}}}

A step is late when it started a period or more after its wall-clock deadline (the realtime
clock's ``StepSchedule``; never in lockstep); a joint is in limit contact in a step after which
its position is beyond a URDF limit by more than ``LIMIT_MARGIN`` (MuJoCo's limit constraint
pushed it back, a torque the measured effort does not hold; a joint merely resting on its limit
sinks into the soft constraint by less: a closed gripper by micrometres, the panda's joint 4
held by its PD at its limit under gravity by 0.7 mrad); a joint is saturated in a step
whose asked torque was clipped to its effort limit. ``unfit_for_identification`` says what in
such an entry makes the recording unfit to identify from: more than ``LATE_SHARE`` of the steps
late, or any limit contact.
"""
from __future__ import annotations

import json

import numpy as np

KEY = 'rnea_sim'
LATE_SHARE = 0.01  # of the steps: late more often, the run was not the sim's own timing
LIMIT_MARGIN = 1e-3  # rad or m beyond a limit: a contact (resting on it sinks less)


class RunFitness:
    """Per joint counts of limit contacts and saturated steps of one run (module docstring)."""

    def __init__(self, joint_names, lower, upper, effort_limits):
        self.joint_names = list(joint_names)
        self.lower, self.upper = np.asarray(lower, float), np.asarray(upper, float)
        self.effort_limits = np.asarray(effort_limits, float)
        n = len(self.joint_names)
        self.steps = 0
        self.contact_steps = np.zeros(n, dtype=np.int64)
        self.beyond = np.zeros(n)
        self.saturated_steps = np.zeros(n, dtype=np.int64)

    @classmethod
    def of_plant(cls, plant) -> RunFitness:
        """Return the fitness of a run of ``plant`` (its actuated joints' limits)."""
        joints = [plant.nominal.joint(name) for name in plant.joint_names]
        return cls(plant.joint_names, [j.lower for j in joints], [j.upper for j in joints],
                   plant.effort_limits)

    def step(self, position, asked, applied) -> None:
        """Count one step: actuated joints' exact positions after it, torques asked, applied."""
        self.steps += 1
        beyond = np.maximum(self.lower - position, position - self.upper)
        touching = beyond > LIMIT_MARGIN
        self.contact_steps += touching
        np.maximum(self.beyond, np.where(touching, beyond, 0.0), out=self.beyond)
        self.saturated_steps += np.asarray(asked) != np.asarray(applied)

    def entry(self, clock: str, late_steps: int = 0, max_lateness_ns: int = 0) -> dict:
        """Return the run's ``custom_data`` entry: ``{KEY: JSON text}`` (module docstring)."""
        share = late_steps / self.steps if self.steps else 0.0
        report = {
            'clock': clock, 'steps': self.steps, 'late_steps': int(late_steps),
            'late_share': round(share, 6), 'max_lateness': max_lateness_ns * 1e-9,
            'limit_contacts': {name: {'steps': int(self.contact_steps[k]),
                                      'beyond': float(self.beyond[k])}
                               for k, name in enumerate(self.joint_names)
                               if self.contact_steps[k]},
            'saturation': {name: {'steps': int(self.saturated_steps[k])}
                           for k, name in enumerate(self.joint_names)
                           if self.saturated_steps[k]}}
        return {KEY: json.dumps(report)}


def read(reader) -> dict | None:
    """Return the ``KEY`` entry of an open bag's ``custom_data`` (None: none, or malformed)."""
    # rosbags' Reader keeps a directory's metadata.yaml on its storage (a file bag has none)
    metadata = getattr(getattr(reader, 'storage', None), 'metadata', None)
    return parse(getattr(metadata, 'custom', None))


def parse(custom_data) -> dict | None:
    """Return the ``KEY`` entry of ``custom_data`` (None: none, or malformed)."""
    if not isinstance(custom_data, dict) or not isinstance(custom_data.get(KEY), str):
        return None
    try:
        report = json.loads(custom_data[KEY])
    except ValueError:
        return None
    return report if isinstance(report, dict) else None


def problems(report: dict) -> list[str]:
    """Return what the entry says went wrong in the run, one phrase each (none: a clean run)."""
    found = []
    steps, late = report.get('steps', 0), report.get('late_steps', 0)
    if late:
        found.append(f'{late} of {steps} steps late ({100 * report.get("late_share", 0):.3g} %, '
                     f'the worst by {1e3 * report.get("max_lateness", 0):.4g} ms)')
    for name, contact in report.get('limit_contacts', {}).items():
        found.append(f'{name} beyond its joint limit by up to {contact["beyond"]:.4g} in '
                     f'{contact["steps"]} steps')
    for name, saturated in report.get('saturation', {}).items():
        found.append(f'{name} torque saturated (clipped to its effort limit) in '
                     f'{saturated["steps"]} steps')
    return found


def unfit_for_identification(report: dict) -> list[str]:
    """Return why the run's recording is unfit to identify from (module docstring)."""
    found = []
    if report.get('late_share', 0) > LATE_SHARE:
        found.append(f'{report["late_steps"]} of {report["steps"]} steps late '
                     f'({100 * report["late_share"]:.3g} %, more than {100 * LATE_SHARE:g} %; '
                     f'the worst by {1e3 * report.get("max_lateness", 0):.4g} ms)')
    for name, contact in report.get('limit_contacts', {}).items():
        found.append(f'{name} hit its joint limit (up to {contact["beyond"]:.4g} beyond it, '
                     f'{contact["steps"]} steps)')
    return found
