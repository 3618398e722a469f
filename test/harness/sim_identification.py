"""
Identification judged against the simulated robot, whose true parameters are known.

1. **Record.** The panda (example-robot-data) as ``rnea_ros.sim.Plant`` with a reality gap
   (``default``: masses 5 %, centres of mass 5 mm and inertias 10 % off, a 0.5 kg payload,
   armature 0.1, Coulomb 0.5 and viscous 0.2 per joint, torque noise 0.05 N m and offsets),
   at 1 kHz with ``SUBSTEPS`` physics steps each (the plant near a continuous robot: with one
   its 1 ms semi-implicit Euler step biases the fit, measured in docs/identify.md), stepped
   in lockstep in this process (``rnea_ros.sim.loop.run_in_process``: the sim's
   controller, PD 100/10 plus the URDF's feed-forward as the node gives it) along a Fourier-series
   excitation (``bagdata.fourier_excitation``: every joint, the fingers too; or the
   ``trajectory.yaml`` that ``rnea_excite`` designed, played as the sim plays it); what
   ``rnea_sim --record`` keeps of it (``joint_states``: encoder positions, velocities, the
   torque sensor's reading) is written as a rosbag2 through ``rnea_ros.sim.record.Recorder``.
   A second recording of another seed is the validation data.
2. **Identify.** ``rnea_identify TRAIN --urdf URDF --validate VALIDATION --offset
   sensor-bias --effort-delay 0.0005`` (its ``main``) with the URDF the node is given, never
   the plant's true one. What the recording is, declared: the effort is a torque sensor's
   reading with a bias (``--offset sensor-bias``: actuation.yaml has the fitted offsets as
   ``effort_bias``, never a torque), and the effort stamped k is the torque held over the step
   from stamp k - 1, which balances the motion of the step's middle (``--effort-delay``: half
   a timestep).
3. **Judge.** The base parameters against the plant's (its true URDF, ``Plant.true_urdf``,
   and the gap's joint terms: armature, Coulomb and viscous friction, the sensor's offsets,
   through the base projection identification.json gives, each base parameter with the
   dependent ones it absorbs); the validation residual per joint against the sensor's noise
   and against the plant's own parameters'; and the closed loop (``inprocess_loop.run_in_process``,
   the demo trajectory of the closed-loop tests) with the identified model's feed-forward
   (identified.urdf + actuation.yaml: armature, friction) against the plant's own inverse
   dynamics (true rigid bodies, armature, viscous friction). In-process: the node over DDS in
   lockstep gives the in-process feed-forward's tracking within 5 %
   (``test/closedloop/test_closed_loop.py``).
"""
from __future__ import annotations

from dataclasses import dataclass
import json
from pathlib import Path

from harness.bagdata import fourier_excitation
from harness.inprocess_loop import run_in_process as run_demo_trajectory, true_feedforward
from harness.oracle import robot_path
import numpy as np

from rnea_ros import RobotModel
from rnea_ros.demos.closed_loop import KD, KP
from rnea_ros.dynamics.actuation import Actuation, DEFAULT_VELOCITY_THRESHOLD
from rnea_ros.identify import base as base_params
from rnea_ros.identify import inertial_layout
from rnea_ros.identify.cli import main as rnea_identify
from rnea_ros.params.actuation_file import read_actuation
from rnea_ros.recording.fitness import RunFitness
from rnea_ros.sim.controller import JointController
from rnea_ros.sim.gap import Gap, load_gap
from rnea_ros.sim.loop import rnea_feedforward, run_in_process, START_NS
from rnea_ros.sim.plant import Plant
from rnea_ros.sim.record import Recorder

ROBOT = 'panda'
GAP = 'default'
POINT_PERIOD = 0.01  # s between the trajectory's points (quintic in between)
BASE_FREQUENCY = 0.1  # Hz: one period of the excitation in 10 s
HARMONICS = 5
FILL = 0.5  # of each joint's range
TRAINING_SEED, VALIDATION_SEED = 11, 12
TOLERANCE = 0.05  # relative, or 3 standard deviations
SUBSTEPS = 16  # physics steps per 1 ms step: the plant near a continuous robot (module docstring)
EFFORT_DELAY = 0.0005  # s: half the plant's timestep (1 kHz); module docstring


@dataclass
class Judgement:
    """Identification against the plant's truth (see the module docstring)."""

    names: list[str]              # base parameters
    truth: np.ndarray
    least_squares: np.ndarray
    std: np.ndarray
    final: np.ndarray
    joints: list[str]
    noise: float                  # the gap's torque sensor noise [N m]
    residual: np.ndarray          # identified model, validation data, per joint [N m]
    residual_moving: np.ndarray   # on the validation rows the fit would use (no rows at rest)
    residual_urdf: np.ndarray
    residual_truth: np.ndarray    # the plant's own base parameters, validation data, every row
    warnings: list[str]           # identification.json's
    actuation: Actuation       # actuation.yaml's
    tracking_identified: float    # RMS tracking error, demo trajectory [rad]
    tracking_true: float          # the plant's inverse dynamics (no dry friction)
    tracking_urdf: float
    tracking_true_friction: float  # and its dry friction compensated as the node does

    def misses(self, values: np.ndarray) -> np.ndarray:
        """Mask of the determined base parameters off the truth by more than 5 % and 3 sigma."""
        error = np.abs(values - self.truth)
        return (error > TOLERANCE * np.abs(self.truth)) & (error > 3.0 * self.std) \
            & ~self.undetermined

    @property
    def undetermined(self) -> np.ndarray:
        """Mask of the base parameters the data do not determine (no finite std)."""
        return ~np.isfinite(self.std)

    @property
    def tracking_ratio(self) -> float:
        """Return the identified model's RMS tracking error over the true model's."""
        return self.tracking_identified / self.tracking_true

    @property
    def tracking_ratio_friction(self) -> float:
        """Return it over the true model's with its dry friction compensated."""
        return self.tracking_identified / self.tracking_true_friction


def read_trajectory(path: Path):
    """(joint names, times, Q, V, A) of a JointTrajectory YAML (``rnea_excite``'s output)."""
    import yaml
    message = yaml.safe_load(Path(path).read_text())
    points = message['points']
    times = np.array([p['time_from_start']['sec'] + 1e-9 * p['time_from_start']['nanosec']
                      for p in points])
    Q, V, A = (np.array([p[field] for p in points], float)
               for field in ('positions', 'velocities', 'accelerations'))
    return list(message['joint_names']), times, Q, V, A


def record(path: Path, duration: float, seed: int, urdf: str | None = None,
           gap: str | Gap = GAP, trajectory: Path | None = None, *, substeps: int = SUBSTEPS,
           phase: float = 0.0, base_frequency: float = BASE_FREQUENCY, fill: float = FILL,
           desired: bool = False, start_ns: int = START_NS) -> Path:
    """
    Record ``duration`` s of the seed's excitation on the plant (see the module docstring).

    ``trajectory``: play this JointTrajectory YAML instead, for its whole length. ``gap``: a
    gap's name or file, or a ``Gap``; ``phase``: start the excitation ``phase`` s into it, of
    ``base_frequency`` (Hz) spanning ``fill`` of each joint's range;
    ``desired``: record ``desired_accelerations`` too; ``start_ns``: the stamp of its start.
    """
    urdf = robot_path(ROBOT).read_text() if urdf is None else urdf
    plant = Plant(urdf, gap=gap if isinstance(gap, Gap) else load_gap(gap), substeps=substeps)
    model = plant.nominal
    names = plant.joint_names
    lower = np.array([model.joint(n).lower for n in names])
    upper = np.array([model.joint(n).upper for n in names])
    if trajectory is None:
        points = list(names)
        times = np.arange(int(round(duration / POINT_PERIOD)) + 1) * POINT_PERIOD
        Q, V, A = fourier_excitation(lower, upper, times + phase, base_frequency=base_frequency,
                                     harmonics=HARMONICS, seed=seed, fill=fill)
    else:
        points, times, Q, V, A = read_trajectory(trajectory)
        duration = float(times[-1])
    columns = [points.index(name) for name in names]
    controller = JointController(names, KP, KD, lower, upper, Q[0, columns])
    controller.set_trajectory(points, times, Q, V, A, start=0.0)
    q, v = model.neutral_configuration(), np.zeros(model.nv)
    q[[model.joint(n).idx_q for n in points]] = Q[0]
    v[[model.joint(n).idx_v for n in points]] = V[0]
    plant.reset(q, v)  # on the trajectory from the first step: no transient
    recorder, fitness = Recorder(), RunFitness.of_plant(plant)
    run_in_process(plant, controller, duration, rnea_feedforward(model, plant), recorder,
                   start_ns=start_ns, desired=desired, fitness=fitness)
    recorder.write(path, fitness.entry('lockstep'))  # as rnea_sim --record writes it
    return path


def true_parameters(urdf: str, gap: str = GAP) -> dict[str, float]:
    """Every standard parameter of the plant by name: its true URDF, the gap's joint terms."""
    plant = Plant(urdf, gap=load_gap(gap))
    model = plant.nominal
    lay = inertial_layout.layout(model, inertial_layout.DEFAULT_FRICTION)
    true_model = RobotModel.from_urdf_string(plant.true_urdf)
    theta = inertial_layout.prior(true_model, lay)[0]
    terms = plant_joint_terms(plant)
    for j, joint in enumerate(lay.joint_names):
        row = model.joint(joint).idx_v
        for term, values in terms.items():
            theta[lay.joint_index(j, term)] = values[row]
        theta[lay.joint_index(j, 'offset')] = plant.torque_offset[plant.joint_names.index(joint)]
    return dict(zip(lay.names, theta))


def project(rows: list[dict], theta: dict[str, float]) -> np.ndarray:
    """Return the base parameters of identification.json's ``rows`` (with their dependents)."""
    return np.array([theta[row['name']] + sum(d['coefficient'] * theta[d['name']]
                                              for d in row['absorbs']) for row in rows])


def plant_joint_terms(plant: Plant) -> dict[str, np.ndarray]:
    """Armature, viscous and Coulomb (dry) friction per row of v, as the plant has them."""
    # The MuJoCo joints' terms seen from v: a mimic joint's add to its master's (mult^2, |mult|).
    coupling, mj = plant.coupling, plant.model
    return {'armature': np.einsum('ij,i,ij->j', coupling, mj.dof_armature, coupling),
            'viscous': np.einsum('ij,i,ij->j', coupling, mj.dof_damping, coupling),
            'coulomb': np.abs(coupling).T @ mj.dof_frictionloss}


def true_friction_feedforward(plant: Plant, q, v, a) -> np.ndarray:
    """
    Return the plant's inverse dynamics + its dry friction as the node compensates friction.

    The true model's feed-forward with the friction the node would add from a perfect
    actuation.yaml: coulomb tanh(v / 0.01) at the measured velocity.
    """
    coulomb = plant_joint_terms(plant)['coulomb']
    tau = plant.inverse_dynamics(q, v, a) + coulomb * np.tanh(v / DEFAULT_VELOCITY_THRESHOLD)
    return tau[plant.actuated_v]


def identified_feedforward(folder: Path):
    """Return the node's feed-forward with identified.urdf and actuation.yaml (friction on)."""
    model = RobotModel.from_urdf_file(folder / 'identified.urdf')
    joints = read_actuation(folder / 'actuation.yaml', model)

    def feedforward(plant: Plant, q, v, a) -> np.ndarray:
        tau = model.rnea(q, v, a) + joints.armature_torques(a) + joints.friction_torques(v)
        return tau[plant.actuated_v]
    return feedforward


def judge(folder: Path, training: float, validation: float, tracking: float = 5.0,
          gap: str = GAP, trajectory: Path | None = None) -> Judgement:
    """
    Record, identify, compare (module docstring); bags and outputs go in ``folder``.

    ``trajectory``: the training motion (a JointTrajectory YAML) instead of a Fourier series.
    """
    urdf_path = robot_path(ROBOT)
    urdf = urdf_path.read_text()
    train = record(folder / 'training', training, TRAINING_SEED, urdf, gap, trajectory)
    check = record(folder / 'validation', validation, VALIDATION_SEED, urdf, gap)
    out = folder / 'identified'
    code = rnea_identify([str(train), '--urdf', str(urdf_path), '--validate', str(check),
                          '--output', str(out), '--no-plots', '--offset', 'sensor-bias',
                          '--effort-delay', str(EFFORT_DELAY)])
    assert code == 0, f'rnea_identify exit status {code}'
    data = json.loads((out / 'identification.json').read_text())
    rows = data['excitation']['base_parameters']
    theta = true_parameters(urdf, gap)
    names, truth = [row['name'] for row in rows], project(rows, theta)
    joints = list(data['rms']['identified']['validation'])
    residual, residual_moving = (
        np.array([data['rms']['identified'][subset][j] for j in joints], float)
        for subset in ('validation', 'validation_moving'))
    residual_urdf = np.array([data['rms']['urdf']['validation'][j] for j in joints], float)
    residual_truth = truth_residual(urdf, check, theta, joints)
    model = RobotModel.from_urdf_string(urdf)
    runs = {name: run_demo_trajectory(urdf, gap, feedforward, tracking).rms
            for name, feedforward in (('identified', identified_feedforward(out)),
                                      ('true', true_feedforward),
                                      ('true+friction', true_friction_feedforward),
                                      ('urdf', _urdf_feedforward(model)))}
    column = {name: np.array([row[name] if row[name] is not None else np.nan for row in rows])
              for name in ('least_squares', 'std', 'final')}
    return Judgement(names, truth, column['least_squares'], column['std'], column['final'],
                     joints, load_gap(gap).torque_noise, residual, residual_moving,
                     residual_urdf, residual_truth, data['warnings'],
                     read_actuation(out / 'actuation.yaml', model),
                     runs['identified'], runs['true'], runs['urdf'], runs['true+friction'])


def truth_residual(urdf: str, bag: Path, theta: dict[str, float],
                   joints: list[str]) -> np.ndarray:
    """Return the RMS residual per joint of the plant's parameters ``theta`` on every row."""
    from rnea_ros.identify import pipeline, samples
    model = RobotModel.from_urdf_string(urdf)
    lay = inertial_layout.layout(model, inertial_layout.DEFAULT_FRICTION)
    base = base_params.base_parameters(model, lay)
    truth = base.E @ np.array([theta[name] for name in lay.names])
    data = samples.load(bag, model, urdf, effort_delay=EFFORT_DELAY)
    predicted = pipeline.predict(model, lay, base, {'truth': truth}, data)['truth']
    rms = np.sqrt(np.nanmean((data.effort - predicted) ** 2, axis=0))
    return np.array([rms[model.joint(name).idx_v] for name in joints])


def _urdf_feedforward(model: RobotModel):
    def feedforward(plant: Plant, q, v, a) -> np.ndarray:
        return model.rnea(q, v, a)[plant.actuated_v]
    return feedforward


def table(result: Judgement, worst: int = 6) -> str:
    """Markdown: the worst base parameters, the residual per joint, the tracking."""
    error = np.abs(result.least_squares - result.truth)
    z = np.where(result.undetermined, -np.inf,
                 np.where(result.std > 0, error / np.where(result.std > 0, result.std, 1), np.inf))
    order = np.argsort(-z, kind='stable')[:worst]
    lines = ['| base parameter | truth | least squares ± std | off by [std] | final |',
             '|---|---|---|---|---|']
    for k in order:
        lines.append(f'| {result.names[k]} | {result.truth[k]:.4g} | '
                     f'{result.least_squares[k]:.4g} ± {result.std[k]:.2g} | '
                     f'{error[k] / result.std[k]:.1f} | {result.final[k]:.4g} |')
    missed = result.misses(result.least_squares)
    undetermined = [result.names[k] for k in np.flatnonzero(result.undetermined)]
    lines += ['', f'{int(missed.sum())} of {len(result.names)} base parameters off the truth '
              f'by more than 5 % and 3 std (least squares); '
              f'{int(result.misses(result.final).sum())} (final); not determined by the data '
              f'(kept at the prior): {", ".join(undetermined) or "none"}', '',
              '| validation RMS residual [N m] | ' + ' | '.join(result.joints) + ' |',
              '|---|' + '---|' * len(result.joints),
              '| URDF | ' + ' | '.join(f'{x:.3g}' for x in result.residual_urdf) + ' |',
              '| identified | ' + ' | '.join(f'{x:.3g}' for x in result.residual) + ' |',
              "| the plant's own parameters | "
              + ' | '.join(f'{x:.3g}' for x in result.residual_truth) + ' |',
              f'| ÷ sensor noise ({result.noise:g}) | '
              + ' | '.join(f'{x / result.noise:.2f}' for x in result.residual) + ' |',
              "| the plant's ÷ sensor noise | "
              + ' | '.join(f'{x / result.noise:.2f}' for x in result.residual_truth) + ' |',
              '| identified ÷ noise, rows the fit uses | '
              + ' | '.join(f'{x / result.noise:.2f}' for x in result.residual_moving) + ' |',
              '',
              '| closed loop, feed-forward of | RMS tracking error [rad] | ÷ true model |',
              '|---|---|---|']
    for name, value in (('the URDF', result.tracking_urdf),
                        ('the identified model', result.tracking_identified),
                        ('the true model', result.tracking_true),
                        ('the true model and its dry friction',
                         result.tracking_true_friction)):
        lines.append(f'| {name} | {value:.4g} | {value / result.tracking_true:.2f} |')
    return '\n'.join(lines)
