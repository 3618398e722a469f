"""
Whether a feedback law's gains can hold the loop they close through the robot, and by how much.

The node's ``pd_feedforward`` / ``computed_torque`` torque for the joint_states sample of tick k
reaches the robot ``delay`` ticks later (one tick: the node answers within the tick, the robot
applies the answer from its next one). Linearised at a configuration q, with a model equal to
the robot's (the feed-forward cancels the dynamics) the error e = q_d - q obeys

- ``pd_feedforward``: M(q) e'' = -Kp e(t - d T) - Kd e'(t - d T),
- ``computed_torque``: e'' = -Kp e(t - d T) - Kd e'(t - d T) (M(q) cancels),

where M(q) is the model's mass matrix with the actuation's armature on its diagonal (the
robot's reflected rotor inertia: what the torque accelerates). Discretised exactly over a tick T
(the robot holds each torque over its tick), the state is the errors and the d accelerations
under way; the loop is stable when every eigenvalue of its matrix is inside the unit circle.

With ``prediction`` the law acts on the state predicted at the moment the robot applies the
torque: for a model equal to the robot's the prediction is exact, so the loop is the
undelayed discrete one (d = 0), whatever the delay. That is the assumption: the robot applies
the last command until the next arrives and the model is the robot's.

A joint whose gains are both zero feeds nothing back (its error's eigenvalues are the open
loop's, 1), and the position error of a joint with Kp 0 is not fed back (an eigenvalue 1): both
are left out of the loop, which is the feedback the gains close.

The margin is on the gains, not on the radius: a stable loop of soft gains is slow, so its
radius is close to 1 at any rate (Kp 100 N m/rad, Kd 10 N m s/rad on a joint of 2.5 kg m^2:
0.998 at 1 kHz), and a margin below 1 would refuse every compliant set. A set is held when the
loop with its gains times ``1 + GAIN_MARGIN`` has a spectral radius below 1: a robot whose
reflected inertia is up to a fifth smaller than the model's (M^-1 a quarter larger), or gains
set a quarter larger, still holds it.

``CONFIGURATIONS``: the set is checked at the current configuration (when given) and at a
documented deterministic set: the neutral configuration clipped into the joint limits, the
middle of the limits, and ``RANDOM_CONFIGURATIONS`` drawn uniformly within the limits (wider than
±pi: ±pi) from ``numpy.random.default_rng(SEED)``. The worst is reported: its radius, the joint
that carries the most of its least damped mode, the gain of that joint which, lowered alone,
restores the margin (``kp.<joint>`` or ``kd.<joint>``, as the node declares it) and the largest
value of that gain that does (bisection, relative precision ``BISECTION_PRECISION``); where no
value of one gain does (other joints' gains count too), the largest factor on every gain that
does, and that gain's value so scaled. No ROS:
the node (``rnea_ros.node``) and ``bench/bench_control_margin.py`` call it.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
import math

import numpy as np

from rnea_ros.dynamics.model import RobotModel

LAWS = ('pd_feedforward', 'computed_torque')
# A set is held when its loop's spectral radius, with the gains times 1 + GAIN_MARGIN, is
# below 1 (module docstring).
GAIN_MARGIN = 0.25
RANDOM_CONFIGURATIONS = 16
SEED = 0
DEFAULT_PERIOD = 1e-3  # s: the tick assumed where the node has no rate of its own (rate 0)
BISECTION_PRECISION = 1e-3  # relative, of the largest value that holds
MAX_DELAY_TICKS = 100


@dataclass(frozen=True)
class LoopMargin:
    """
    The verdict on a set of gains (see the module docstring).

    ``radius``: the worst spectral radius with the gains times 1 + GAIN_MARGIN (the criterion;
    ``radius_as_set`` the same without the factor), ``held``: below 1.
    ``joint``: the joint that carries most of the worst mode; ``gain`` the parameter
    (``kd.<joint>`` or ``kp.<joint>``) whose value ``value`` lowered to ``largest`` holds the
    margin (``None`` when the set is held); where lowering it alone cannot (other joints' gains
    count too), ``scale`` < 1 is the largest factor on every gain that holds and ``largest``
    that gain's value so scaled. ``delay``: ticks of ``period`` seconds,
    ``prediction``: the law acts on the predicted state (the loop is the undelayed one).
    """

    law: str
    radius: float
    radius_as_set: float
    joint: str
    period: float
    delay: int
    prediction: bool
    gain: str | None = None
    value: float = 0.0
    largest: float = 0.0
    scale: float = 1.0

    @property
    def held(self) -> bool:
        """Whether the loop holds the set with the margin."""
        return self.radius < 1.0

    def describe(self) -> str:
        """One line: the loop, its spectral radius and its worst joint."""
        loop = ('with prediction (undelayed)' if self.prediction else
                f'{self.delay} tick{"" if self.delay == 1 else "s"} late')
        return (f'{self.law} {loop} at {self.period * 1e3:g} ms: spectral radius '
                f'{self.radius:.4f} with the gains x{1 + GAIN_MARGIN:g} ({self.radius_as_set:.4f} '
                f'as set), worst joint {self.joint}')

    def message(self) -> str:
        """One line for a refused set: the gain, its value, the largest that holds, the loop."""
        if self.held:
            return f'gains held: {self.describe()}'
        head = f'{self.gain} = {self.value:g} is more than the loop can hold on {self.joint}: '
        if self.scale < 1.0:
            head += ("lowering it alone does not hold the loop (other joints' gains count); "
                     f'every gain times {_floored(self.scale)} does, {self.gain} '
                     f'{_floored(self.largest)} ')
        else:
            head += f'the largest {self.gain} it holds is {_floored(self.largest)} '
        return head + f'({self.describe()}; held below 1)'


def _floored(value: float) -> str:
    """Return ``value`` to 4 significant digits, rounded down: a value that holds as printed."""
    if value <= 0.0:
        return '0'
    step = 10.0 ** (math.floor(math.log10(value)) - 3)
    return f'{math.floor(value / step) * step:.4g}'


def delay_ticks(delay: float, period: float) -> int:
    """Return a delay in seconds as whole ticks of ``period``, rounded up (the safe side)."""
    if not (math.isfinite(delay) and delay >= 0.0):
        raise ValueError(f'delay is {delay!r}: expected a finite number of seconds >= 0')
    ticks = math.ceil(delay / period - 1e-9)
    if ticks > MAX_DELAY_TICKS:
        raise ValueError(f'delay is {delay:g} s, {ticks} ticks of {period:g} s: expected at most '
                         f'{MAX_DELAY_TICKS} ticks')
    return ticks


def loop_matrix(acceleration: np.ndarray, kp: np.ndarray, kd: np.ndarray, period: float,
                delay: int) -> np.ndarray:
    """
    Return the matrix of the delayed loop over a tick, state [e, e', u_(k-d) ... u_(k-1)].

    ``acceleration``: the acceleration per unit torque (M^-1 under pd_feedforward; the identity
    under computed_torque, where M(q) cancels), of the joints fed back; u: the acceleration the
    law's torque gives, held over a tick. The position errors of joints with Kp 0 are left
    out (they feed nothing back).
    """
    n = len(kp)
    size = 2 * n + delay * n
    matrix = np.zeros((size, size))
    eye = np.eye(n)
    matrix[:n, :n], matrix[:n, n:2 * n] = eye, period * eye
    matrix[n:2 * n, n:2 * n] = eye
    law = -acceleration @ np.hstack([np.diag(kp), np.diag(kd)])  # u from [e, e']
    if delay == 0:
        matrix[:n, :2 * n] += 0.5 * period ** 2 * law
        matrix[n:2 * n, :2 * n] += period * law
    else:
        oldest = slice(2 * n, 3 * n)  # u_(k-d): applied over this tick
        matrix[:n, oldest] = 0.5 * period ** 2 * eye
        matrix[n:2 * n, oldest] = period * eye
        for slot in range(delay - 1):  # the queue moves up by one
            matrix[2 * n + slot * n:3 * n + slot * n, 3 * n + slot * n:4 * n + slot * n] = eye
        matrix[size - n:, :2 * n] = law  # u_k, from the state measured now
    keep = np.ones(size, dtype=bool)
    keep[:n] = kp > 0.0
    return matrix[np.ix_(keep, keep)]


def _mode(acceleration, kp, kd, period, delay) -> tuple[float, np.ndarray]:
    """Return the spectral radius and each joint's share of the least damped mode."""
    n = len(kp)
    fed = (kp > 0.0) | (kd > 0.0)
    share = np.zeros(n)
    if not fed.any():
        return 0.0, share
    sub = np.flatnonzero(fed)
    matrix = loop_matrix(acceleration[np.ix_(sub, sub)], kp[sub], kd[sub], period, delay)
    values, vectors = np.linalg.eig(matrix)
    worst = int(np.argmax(np.abs(values)))
    vector = np.abs(vectors[:, worst])
    positions = np.zeros(len(sub))
    held = kp[sub] > 0.0
    m = int(held.sum())
    positions[held] = vector[:m]
    share[sub] = positions + period * vector[m:m + len(sub)]
    return float(np.abs(values[worst])), share


def _radius(acceleration, kp, kd, period, delay) -> float:
    """Return the spectral radius alone (``_mode`` without the eigenvectors)."""
    fed = np.flatnonzero((kp > 0.0) | (kd > 0.0))
    if fed.size == 0:
        return 0.0
    matrix = loop_matrix(acceleration[np.ix_(fed, fed)], kp[fed], kd[fed], period, delay)
    return float(np.max(np.abs(np.linalg.eigvals(matrix))))


def configurations(model: RobotModel, q=None) -> list[np.ndarray]:
    """
    Return the configurations a set is checked at: ``q`` (when given) and the documented set.

    The neutral configuration clipped into the joint limits, the middle of the limits, and
    ``RANDOM_CONFIGURATIONS`` uniform within them (±pi where wider), seed ``SEED``.
    """
    lower, upper = np.full(model.nq, -np.pi), np.full(model.nq, np.pi)
    for joint in model.joints:
        if joint.nq == 1:
            lower[joint.idx_q] = max(joint.lower, -np.pi)
            upper[joint.idx_q] = min(joint.upper, np.pi)
    rng = np.random.default_rng(SEED)
    poses = [] if q is None else [np.asarray(q, dtype=float)]
    poses.append(np.clip(model.neutral_configuration(), lower, upper))
    poses.append(0.5 * (lower + upper))
    poses += [rng.uniform(lower, upper) for _ in range(RANDOM_CONFIGURATIONS)]
    return poses


def _accelerations(model: RobotModel, armature, law: str, poses) -> list[np.ndarray]:
    if law == 'computed_torque':
        return [np.eye(model.nv)]  # M(q) cancels: the same at every configuration
    extra = np.diag(np.zeros(model.nv) if armature is None else np.asarray(armature, float))
    return [np.linalg.inv(model.mass_matrix(q) + extra) for q in poses]


def loop_margin(model: RobotModel, kp: Sequence[float], kd: Sequence[float], period: float,
                delay: int = 1, prediction: bool = False, law: str = 'pd_feedforward',
                armature: Sequence[float] | None = None, q=None) -> LoopMargin:
    """
    Return the verdict on gains ``kp``, ``kd`` (one per entry of v) for a fixed-base ``model``.

    ``period``: the robot's tick (s); ``delay``: ticks from a sample to the application of its
    answer (``delay_ticks`` converts seconds); ``prediction``: the law acts on the state
    predicted at application (the loop is the undelayed one); ``armature``: per entry of v
    (kg m^2, kg), added to M's diagonal; ``q``: the current configuration, checked besides the
    documented set (``configurations``).
    """
    if law not in LAWS:
        raise ValueError(f'law is {law!r}: expected one of {", ".join(LAWS)}')
    if not (math.isfinite(period) and period > 0.0):
        raise ValueError(f'period is {period!r}: expected a finite number of seconds > 0')
    kp, kd = np.asarray(kp, dtype=float), np.asarray(kd, dtype=float)
    if kp.shape != (model.nv,) or kd.shape != (model.nv,):
        raise ValueError(f'kp, kd have {kp.size}, {kd.size} values: expected {model.nv} each '
                         f'(one per entry of v)')
    for name, gains in (('kp', kp), ('kd', kd)):
        if not np.all(np.isfinite(gains) & (gains >= 0.0)):
            k = int(np.argmin(np.isfinite(gains) & (gains >= 0.0)))
            raise ValueError(f'{name}[{k}] is {float(gains[k])!r}: expected a finite gain >= 0')
    if armature is not None and not np.all(np.isfinite(armature) & (np.asarray(armature) >= 0)):
        raise ValueError('armature: expected finite values >= 0 (kg m^2, kg)')
    if not (0 <= delay <= MAX_DELAY_TICKS):
        raise ValueError(f'delay is {delay}: expected 0 to {MAX_DELAY_TICKS} ticks')
    ticks = 0 if prediction else int(delay)
    inverses = _accelerations(model, armature, law, configurations(model, q))
    scale = 1.0 + GAIN_MARGIN

    def worst(kp_, kd_) -> tuple[float, np.ndarray]:
        found = (-1.0, np.zeros(model.nv))
        for inverse in inverses:
            rho, share = _mode(inverse, scale * kp_, scale * kd_, period, ticks)
            if rho > found[0]:
                found = (rho, share)
        return found

    radius, share = worst(kp, kd)
    as_set = max(_radius(inverse, kp, kd, period, ticks) for inverse in inverses)
    index = int(np.argmax(share))
    names = _joint_names(model)
    verdict = LoopMargin(law, radius, as_set, names[index], period, ticks, prediction)
    if verdict.held:
        return verdict

    order = list(range(len(inverses)))

    def holds(kp_, kd_) -> bool:
        # The configuration that failed last is tried first: most candidates fail there.
        for position, k in enumerate(order):
            if _radius(inverses[k], scale * kp_, scale * kd_, period, ticks) >= 1.0:
                order.insert(0, order.pop(position))
                return False
        return True

    best = None
    for kind, gains in (('kd', kd), ('kp', kp)):
        largest = _largest_holding(gains[index], lambda value, kind=kind: holds(
            *_with(kp, kd, kind, index, value)))
        if largest is not None and (best is None or largest / gains[index] > best[1] /
                                    (kd if best[0] == 'kd' else kp)[index]):
            best = (kind, largest)
    scale_all = 1.0
    if best is None:  # other joints' gains count too: every gain scaled, the classic margin
        scale_all = _largest_holding(1.0, lambda factor: holds(factor * kp, factor * kd)) or 0.0
        best = ('kd' if kd[index] > 0.0 else 'kp', scale_all * (kd if kd[index] > 0.0
                                                                else kp)[index])
    kind, largest = best
    value = (kd if kind == 'kd' else kp)[index]
    return LoopMargin(law, radius, as_set, names[index], period, ticks, prediction,
                      f'{kind}.{names[index]}', float(value), float(largest), scale_all)


def _with(kp, kd, kind: str, index: int, value: float) -> tuple[np.ndarray, np.ndarray]:
    kp, kd = kp.copy(), kd.copy()
    (kd if kind == 'kd' else kp)[index] = value
    return kp, kd


def _largest_holding(value: float, holds) -> float | None:
    """
    Return the largest gain below ``value`` at which ``holds``, or None if none does.

    Halves from ``value`` until one holds (down to 2^-30 of it, then 0), then bisects between
    that one and the next above it that does not.
    """
    if value <= 0.0:
        return None
    high = value
    for _ in range(30):
        low = 0.5 * high
        if holds(low):
            break
        high = low
    else:
        return 0.0 if holds(0.0) else None
    while high - low > BISECTION_PRECISION * low:
        middle = 0.5 * (low + high)
        if holds(middle):
            low = middle
        else:
            high = middle
    return low


def _joint_names(model: RobotModel) -> list[str]:
    """Return the joint name of each entry of v."""
    names = [''] * model.nv
    for joint in model.joints:
        for k in range(joint.nv):
            names[joint.idx_v + k] = joint.name
    return names


def gains_of(model: RobotModel, gains: Mapping[str, float]) -> tuple[np.ndarray, np.ndarray]:
    """Return ``kp``, ``kd`` per entry of v from the node's ``kp.<joint>``, ``kd.<joint>``."""
    kp, kd = np.zeros(model.nv), np.zeros(model.nv)
    for joint in model.joints:
        if joint.nv == 1:
            kp[joint.idx_v] = gains.get(f'kp.{joint.name}', 0.0)
            kd[joint.idx_v] = gains.get(f'kd.{joint.name}', 0.0)
    return kp, kd
