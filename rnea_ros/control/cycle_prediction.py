"""
The state a cycle's command will meet (``prediction: model``), its stall carry-through, no ROS.

``CyclePrediction`` is owned by ``core.ControlCore``; ``cycle_torques.CycleTorques.acted_on``
returns its state when it holds one. Each joint_states sample (``sampled``) anchors the
prediction: its (q, v) at its stamp. Each cycle (``advance``) integrates the model
(``prediction.StatePredictor``) from the anchor to the time the robot applies the cycle's answer,
with the commands the robot holds meanwhile; each published command is recorded with that time
(``commanded``), so the next predictions integrate it.

**Clocks.** Every time the predictor sees is on the sample stamps' clock (ROS time of the robot's
driver; a sample without a stamp takes the steady ``now`` of its arrival, and then every sample
should be unstamped). A cycle at steady time ``now`` answers at stamp-clock time
``stamp + (now - arrival) + command_delay``: the latest sample's stamp, the steady time since it
arrived (0 when the cycle answers it at once), the delay from a stamp to the robot applying the
answer. A stamp earlier than the previous one (a clock step back) drops the recorded commands.

**Incremental.** A cycle with no new sample goes on from the state it predicted last, so a cycle
integrates only the time since the previous one (the rollout from the anchor would give the
same state: the commands are held zero-order).

**Stall.** Past the latest sample by more than ``prediction_horizon`` the prediction stops:
``held`` is True, the state stays at the last prediction and its velocity is unknown (the
fault output then holds g(q) at that pose, ERROR). Within it, when joint_states go stale, the
fault output brakes the predicted motion to rest (``braking.Brake``, from ``cycle_torques``).

**The reference at the application.** The law compares the predicted state with the desired
motion at the same time: a trajectory is sampled ``ahead`` (the delay) past the cycle's ROS
time (``core``), a one-point desired motion is moved there (``extrapolate``).

**Faults.** A prediction that is not finite (or fails) gives no state: the cycle acts on the
measured one, and ``reason`` says why (``fallbacks`` counts such cycles).

**Diagnostics** (``status``): the age (steady time since arrival) of the sample each command
answered, and the one-step prediction error: on each sample, the state predicted from the
previous sample to its stamp (with the commands the robot applied meanwhile) against the one
measured, the largest joint error in q and in v; last, RMS and largest since the start. A growing
error says the model (a payload, the armature, friction) is not the robot's. The rollout is not
run when the sample is merged (``sampled`` keeps the sample before it) but after a cycle has
published (``measure_pending``, from ``Cycles.publish``) or at the status: neither the cycle
nor the merge waits for it, and of several samples between two cycles the last is measured.
"""
from __future__ import annotations

import math

import numpy as np

from rnea_ros.control.loop_margin import DEFAULT_PERIOD
from rnea_ros.control.prediction import StatePredictor
from rnea_ros.control.settings import ParameterRejected
from rnea_ros.control.stall_estimate import StallEstimate
from rnea_ros.errors import InputError

# Longest gap [s] between two samples over which the one-step prediction error is measured (a
# longer one follows a stall: it would cost a long rollout and says nothing of the model).
MAX_ERROR_GAP = 0.02
# ``stall_payload_estimate`` records a pair of samples only when the command the robot held over
# it is known: the node's answers reached the robot on time. A pair is not recorded when it, or
# the pair before it, arrived spaced unlike its stamps by more than ON_TIME of the stamps' gap
# (the node or the network late: the robot held an older command than the one the node pushed
# for the pair), nor within input_timeout and two periods (steady) after a cycle
# that published a fault output (the stall brake of inputs late past input_timeout: its torques,
# tens of N m from the law's, held by the robot a step earlier or later than pushed). Recorded
# all the same, a few such pairs among the window's 500 made the real-time fit say 0.5 kg with
# its centre of mass 0.34 m off the flange, or a negative mass.
ON_TIME = 0.5
CAPACITY = 256  # commands kept: at least command_delay / period (100 at MAX_COMMAND_DELAY)


class CyclePrediction:
    """The predicted state of one model's cycles (module docstring)."""

    def __init__(self, model, actuation, settings, state):
        self.model, self.actuation, self.state = model, actuation, state
        self._compensated = settings.gravity_compensated_by_robot
        self.predictor: StatePredictor | None = None
        self.q, self.v = state.q.copy(), np.zeros(model.nv)  # the predicted state
        self._q_step, self._v_step = state.q.copy(), np.zeros(model.nv)  # one-step prediction
        self._q_previous, self._v_previous = state.q.copy(), np.zeros(model.nv)
        # The earlier sample of the pair whose one-step error is to be measured
        # (``measure_pending``); the later one is the latest (``_q_previous``, ``sample_time``).
        self._q_from, self._v_from = state.q.copy(), np.zeros(model.nv)
        self._from = 0.0
        self.pending = False
        self._scratch = np.zeros(model.nv)
        self.on = self.requested = False
        self.valid = False  # q, v hold this cycle's prediction (acted on)
        self.held = False  # past the horizon: q is the last prediction, v unknown
        self.reason: str | None = None
        self.fallbacks = 0
        self.sample_time = -math.inf  # stamps' clock of the latest sample
        self.arrival = 0.0  # its steady arrival time
        self.target = -math.inf  # stamps' clock of q, v
        self._fresh = False  # a sample came since the last cycle
        self._previous = False  # _q_previous, _v_previous hold the sample before
        self._pushed = -math.inf
        # Diagnostics: the sample age a command answered, the one-step prediction error.
        self.age = self.max_age = 0.0
        self.errors = 0
        self.error_q = self.error_v = 0.0
        self.max_error_q = self.max_error_v = 0.0
        self._sum_q = self._sum_v = 0.0
        # ``stall_payload_estimate``: the samples recorded for it, the stall's model swapped in
        # while joint_states stall (``stall_model``; the nominal one back at the next sample).
        self.estimate: StallEstimate | None = None
        self.stall_arrays = self._nominal = None
        self._held = np.zeros(model.nv)
        self._on_time = False  # the latest pair of samples arrived spaced as stamped
        self._quiet = 0.0  # s (steady) after a fault output without pairs recorded
        self._quiet_until = -math.inf  # steady time: no pair recorded before
        self.use(settings)

    def use(self, settings) -> None:
        """Take a settings snapshot: on or off, the delay, the horizon (built on first use)."""
        self.requested = settings.prediction == 'model'  # a live set may ask under feedforward
        self.on = self.requested and settings.control_law != 'feedforward'
        period = 1.0 / settings.rate if settings.rate > 0.0 else DEFAULT_PERIOD
        self.delay = settings.command_delay if settings.command_delay > 0.0 else period
        self.horizon = settings.prediction_horizon
        self._quiet = settings.input_timeout + 2.0 * period
        if self.on and self.predictor is None:  # compiled (or loaded) here, not in a cycle
            self.predictor = StatePredictor(self.model, actuation=self.actuation,
                                            gravity_compensated_by_robot=self._compensated,
                                            capacity=CAPACITY)
        link = settings.stall_payload_estimate if self.on else ''
        if link != (self.estimate.link if self.estimate is not None else ''):
            try:
                self.estimate = (StallEstimate(self.model, self.actuation.armature, link)
                                 if link else None)
            except InputError as error:
                raise ParameterRejected(str(error).replace(
                    'payload.link:', "parameter 'stall_payload_estimate':", 1)) from None
            self.stall_arrays = None
        if not self.on:
            self.valid = self.held = False

    # ------------------------------------------------------------------ inputs
    def sampled(self, stamp: float, now: float) -> None:
        """Take a joint_states sample merged into the state: ``stamp`` (s), steady ``now``."""
        if not self.on:
            return
        state = self.state
        if stamp < self.sample_time:  # the clock stepped back: what was recorded is moot
            self.predictor.clear()
            self._pushed, self._previous, self.pending = -math.inf, False, False
            self._on_time = False
        else:  # a pair whose gap is too long to say anything of the model is not measured
            gap = stamp - self.sample_time
            self.pending = self._previous and gap <= MAX_ERROR_GAP
            on_time = self._previous and abs(now - self.arrival - gap) <= ON_TIME * gap
            if self.pending:
                np.copyto(self._q_from, self._q_previous)
                np.copyto(self._v_from, self._v_previous)
                self._from = self.sample_time
                if (self.estimate is not None and on_time and self._on_time
                        and now >= self._quiet_until and self.predictor.command_at(
                            0.5 * (self.sample_time + stamp), self._held)):  # the command held
                    self.estimate.record(self._q_previous, self._v_previous, self.sample_time,
                                         state.q, state.v, stamp, self._held)
            self._on_time = on_time
        if self._nominal is not None:  # back from a stall: the nominal model
            self.predictor.use_model(self._nominal)
            self._nominal = None
        self._q_previous[:] = state.q
        self._v_previous[:] = state.v
        self._previous = True
        self.sample_time, self.arrival, self._fresh = stamp, now, True

    def measure_pending(self) -> None:
        """
        Measure the one-step prediction error of the latest sample, if pending.

        The rollout from the sample before it to its stamp, with the commands the robot
        applied meanwhile, against it. Called after a cycle has published (the node:
        ``Cycles.publish``), so that neither the cycle nor the sample's merge waits for it; of
        several samples between two cycles, the last pair is measured.
        """
        if not self.pending:
            return
        self.pending = False
        try:
            self.predictor.predict(self._q_from, self._v_from, self._from, self.sample_time,
                                   self._q_step, self._v_step)
        except InputError:
            return
        error_q = _largest_difference(self._q_step, self._q_previous)
        error_v = _largest_difference(self._v_step, self._v_previous)
        self.error_q, self.error_v = error_q, error_v
        self.errors += 1
        self._sum_q += error_q * error_q
        self._sum_v += error_v * error_v
        self.max_error_q = max(self.max_error_q, error_q)
        self.max_error_v = max(self.max_error_v, error_v)

    # ------------------------------------------------------------------ the cycle
    def advance(self, now: float) -> None:
        """Predict the state the cycle at steady ``now`` answers for (``valid``, ``held``)."""
        self.valid = False
        if not self.on or self.sample_time == -math.inf:
            return
        since = max(now - self.arrival, 0.0)
        self.age = since
        self.max_age = max(self.max_age, since)
        target = max(self.sample_time + since + self.delay, self.target if not self._fresh
                     else -math.inf)
        if target - self.sample_time > self.horizon + self.delay:
            self.held = self.valid = not self._fresh and self.target > -math.inf
            return
        if self._fresh:
            q, v, start = self.state.q, self.state.v, self.sample_time
        else:
            q, v, start = self.q, self.v, self.target
        try:
            self.predictor.predict(q, v, start, target, self.q, self.v)
        except InputError as error:
            self.reason = f'prediction failed, acting on the measured state: {error}'
            self.fallbacks += 1
            self.target, self._fresh = -math.inf, True  # start again from the next sample
            return
        self.target, self._fresh, self.valid, self.held = target, False, True, False

    def stall_model(self) -> None:
        """Predict with the stall's model (``stall_arrays``, if any) until the next sample."""
        if self.stall_arrays is not None and self._nominal is None:
            self._nominal = self.predictor.use_model(self.stall_arrays)

    @property
    def ahead(self) -> float:
        """Return how far (s) past the cycle's time the state acted on is: the delay, or 0."""
        return self.delay if self.valid and not self.held else 0.0

    def extrapolate(self, law, desired, q: np.ndarray, v: np.ndarray) -> None:
        """
        Move a one-point desired motion's targets to the application: the law's errors there.

        q_d + v_d d + a_d d^2 / 2 and v_d + a_d d (d: the delay), the errors at the predicted
        (q, v): the point describes the motion at its arrival, the command acts a delay later.
        A trajectory is sampled at the application time instead (``ControlCore.cycle``).
        """
        if not (self.valid and not self.held) or desired.a_full is None:
            return
        d, scratch, a = self.delay, self._scratch, desired.a_full
        np.multiply(law.v_desired, d, out=scratch)
        law.q_desired += scratch
        np.multiply(a, 0.5 * d * d, out=scratch)
        law.q_desired += scratch
        np.multiply(a, d, out=scratch)
        law.v_desired += scratch
        np.subtract(law.q_desired, q, out=law.error)
        np.subtract(law.v_desired, v, out=law.error_rate)

    def commanded(self, tau: np.ndarray, fault: float | None = None) -> None:
        """
        Record the cycle's published command, applied from the time predicted for.

        ``fault``: the steady time of a cycle publishing a fault output: no pair is recorded
        for the payload estimate until ``input_timeout`` and two periods after it (``ON_TIME``'s
        comment).
        """
        if fault is not None:
            self._quiet_until = fault + self._quiet
        if self.valid and not self.held:
            time = max(self.target, self._pushed)
            try:
                self.predictor.push_command(time, tau)
            except InputError:
                return
            self._pushed = time

    # ------------------------------------------------------------------ diagnostics
    def status(self) -> dict[str, str]:
        """Return the prediction's diagnostics keys (none when it is off)."""
        if not self.on:
            return {'prediction': 'model set, unused under feedforward'} if self.requested else {}
        self.measure_pending()
        values = {'prediction': (
            'held: past prediction_horizon, g(q) at the last predicted pose' if self.held
            else f'model, {self.delay * 1e3:g} ms ahead of the sample'),
            'sample age answered [s] (last, max)': f'{self.age:.4f}, {self.max_age:.4f}'}
        if self.errors:
            values['one-step prediction error q [rad] (last, RMS, max)'] = (
                f'{self.error_q:.3g}, {math.sqrt(self._sum_q / self.errors):.3g}, '
                f'{self.max_error_q:.3g}')
            values['one-step prediction error v [rad/s] (last, RMS, max)'] = (
                f'{self.error_v:.3g}, {math.sqrt(self._sum_v / self.errors):.3g}, '
                f'{self.max_error_v:.3g}')
        if self.estimate is not None:
            values['stall payload estimate'] = self.estimate.describe()
        if self.fallbacks:
            values['prediction fallbacks (measured state used)'] = (
                f'{self.fallbacks}: {self.reason}')
        return values

    def take_state_from(self, other: CyclePrediction) -> None:
        """Go on from another model's prediction (its anchor; the commands are not carried)."""
        self.sample_time, self.arrival = other.sample_time, other.arrival
        self._fresh, self._previous, self.pending = True, False, False


def _largest_difference(a: np.ndarray, b: np.ndarray) -> float:
    """Return max |a - b| over the entries (no temporary array)."""
    largest = 0.0
    for k in range(a.shape[0]):
        difference = abs(a[k] - b[k])
        if difference > largest:
            largest = difference
    return largest
