"""
The torque the model misses, estimated from the one-step prediction error; no ROS.

With ``prediction: model`` the node predicts, from each joint_states sample, the next one with
the commands the robot applied in between (``cycle_prediction``). What the prediction misses in
velocity over the gap dt is, to first order, the lumped torque d the model does not have (an
unknown payload's gravity, centres of mass and masses off, friction, torque biases), minus the
estimate d_hat the prediction already includes:

    v_measured - v_predicted = (M(q) + diag(armature))^-1 (d - d_hat) dt

``DisturbanceEstimate.update`` filters d towards d_hat as a first-order lag of time constant
``TIME_CONSTANT`` (the generalized-momentum observer's form: d_hat += (M + armature) e_v / tau,
e_v the velocity error, tau the time constant, dt / tau capped at 1), so that noise on the
measured velocity is averaged over about that time. Each entry is bounded by the joint's effort
limit; a sample that is not finite, or whose correction is not, is skipped (never NaN);
``reset`` forgets it (a clock step back, a new robot's controller).

``d_hat`` is what the robot adds to the commands as the model sees it: the prediction integrates
command + d_hat, and the blind carry-through of a stall (``cycle_torques``) commands its brake and
hold minus d_hat, so the arm holds the pose the model predicts. It is the torque at the motion of
the last samples: the friction of a moving joint and a tenth of an inertia error's M a are in
it too, and stay in it through a stall (the estimate is not updated without samples).
"""
from __future__ import annotations

import numpy as np

from rnea_ros.control.safety import all_finite, clip_in_place
from rnea_ros.errors import InputError

TIME_CONSTANT = 0.05  # s: the first-order lag of the estimate


class DisturbanceEstimate:
    """Per v entry, the filtered torque the model misses (module docstring); no allocation."""

    def __init__(self, model, armature):
        self.model = model
        self.armature = np.asarray(armature, dtype=np.float64)
        nv = model.nv
        # The bounds (the effort limits: the core binds its limiter's arrays, updated in place).
        self.lower, self.upper = np.full(nv, -np.inf), np.full(nv, np.inf)
        self.d_hat = np.zeros(nv)
        self._correction, self._gravity, self._zeros = np.zeros(nv), np.zeros(nv), np.zeros(nv)
        self.updates = 0

    def reset(self) -> None:
        """Forget the estimate (zero)."""
        self.d_hat.fill(0.0)
        self.updates = 0

    def update(self, q: np.ndarray, error_v: np.ndarray, dt: float) -> bool:
        """
        Take a one-step velocity error ``error_v`` (measured - predicted) over ``dt`` s at q.

        Return False (the estimate unchanged) if it cannot be taken: dt not positive, a value
        or the correction not finite.
        """
        if not dt > 0.0 or not all_finite(error_v):
            return False
        correction = self._correction
        try:  # (M(q) + armature) e_v = rnea(q, 0, e_v) - g(q) + armature e_v
            self.model.rnea(q, self._zeros, error_v, out=correction)
            self.model.rnea(q, self._zeros, self._zeros, out=self._gravity)
        except InputError:
            return False
        correction -= self._gravity
        np.multiply(self.armature, error_v, out=self._gravity)
        correction += self._gravity
        correction *= 1.0 / max(TIME_CONSTANT, dt)
        if not all_finite(correction):
            return False
        self.d_hat += correction
        clip_in_place(self.d_hat, self.lower, self.upper)
        self.updates += 1
        return True


__all__ = ['DisturbanceEstimate', 'TIME_CONSTANT']
