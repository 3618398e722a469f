"""
One low-pass filter on both sides of tau = W beta: the measured torques and every column of W.

And the rows it leaves out: a joint's row where the joint is nearly at rest, |v_j| < ``REST``
x the friction's velocity threshold. There its friction is not the model's smooth sign
fc tanh(v / threshold) but whatever holds it (stiction, anything within +-fc), and that error
sits exactly at the velocity reversals, where |a| is largest: on a simulated UR5 with MuJoCo's
stiction it pulled the shoulder's armature 10 % (8 standard deviations) low. Leaving rows out
before filtering is one more linear operation applied to both sides. A joint keeps all its
rows when it is that slow in more than ``MAX_AT_REST`` of the training samples (most of its
rows: what is left would be too little), or when its faster rows move less than
``MIN_EACH_WAY`` of the time in either direction: then the slow rows are what tells its Coulomb
friction from its offset (without them the two columns become one, and a 2.3 s real log's
prediction went to 1000 N m). A joint slow a fifth of the time but moving both ways the rest
has no need of them: kept, its stiction biased the simulated panda's wrist (joint 6, slow 16 %
of 60 s: viscous friction 0.166 for 0.2, 8 standard deviations) and the closed loop with the
identified model tracked at 1.8 times the true model's error instead of 1.2 times.

A joint that is that slow in all but ``MIN_MOVING`` of the training samples (``still``) has
no row that tells its joint terms: every row is stiction, any torque within it, and its tiny
velocities and accelerations are what is left of the noise. Fitted there, the simulated
panda's fingers (never faster than 0.01 m/s) got an armature of -6.5 +- 0.5 for 0.2 and a
viscous friction of 280 +- 56 for 0.4, standard deviations that claimed them known, and
their stiction, correlated over seconds, set the correlation time of every parameter's
standard deviation. So all its rows are left out: the data do not determine its joint terms,
their standard deviation is infinite, they keep their prior (zero), and the pipeline names
them.

The regressor W(q, v, a) is built from estimated accelerations, whose error is large where
the motion has no content: twice-differentiated position noise (stamp jitter, encoder steps)
or once-differentiated velocity noise, rising with frequency. Least squares with noise in the
regressor is biased (errors in variables: each acceleration column's coefficient shrinks,
and the shrinkage spreads to every correlated parameter: on a 30 s UR5 log with 0.07 rad/s^2
of acceleration error, the shoulder's armature and upper arm's first moment came out 20
standard deviations off).

The relation is linear in beta, so any linear filter F applied along time to both sides keeps
it exact, F tau = (F W) beta, while a low-pass removes the regressor's high-frequency error
and the torque noise outside the motion's band (Gautier's parallel filtering). The filter:

- Butterworth of order ``ORDER``, run forward and backward (``scipy.signal.sosfiltfilt``: no
  lag, so torque and regressor stay aligned) over each chunk of samples, taking the samples as
  evenly spaced at the median interval (a hole or a dropped sample only makes F a slightly
  different linear filter, still the same on both sides);
- cutoff ``FACTOR`` x the motion's bandwidth: the frequency below which ``ENERGY`` of the
  energy of the joint velocities lies (the regressor holds products of the joint motions,
  hence harmonics up to a few times it). No filter when that cutoff is above
  ``HIGHEST`` x the Nyquist frequency.

The filtered residual is correlated over about 1 / (2 cutoff): the standard deviations come
from ``rnea_ros.identify.covariance``, which does not assume white residuals.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

ORDER = 4
REST = 5.0  # friction velocity thresholds: a joint's rows below it are left out
MAX_AT_REST = 0.5  # fraction of the samples
MIN_EACH_WAY = 0.2  # fraction of the faster samples
MIN_MOVING = 0.05  # fraction of the samples: a joint faster in fewer is still
FACTOR = 5.0
ENERGY = 0.995
HIGHEST = 0.5


@dataclass(frozen=True)
class LowPass:
    """
    The filter: ``cutoff`` [Hz] at ``rate`` [Hz] (None: no filter), its SOS sections.

    ``rest`` (nv,) [rad/s or m/s]: per joint, its rows with a slower velocity are left out
    (``leave_out``; 0: none; inf: every row, a ``still`` joint); ``moving_fraction`` (nv,):
    of the samples, faster than ``REST`` x the friction's velocity threshold.
    """

    cutoff: float | None
    rate: float
    sos: np.ndarray | None
    rest: np.ndarray | None = None
    moving_fraction: np.ndarray | None = None

    @property
    def still(self) -> np.ndarray | None:
        """Mask (nv,) of the still joints: every row left out (None: no row left out)."""
        return None if self.rest is None else np.isinf(self.rest)

    def leave_out(self, effort: np.ndarray, v: np.ndarray) -> np.ndarray:
        """Return ``effort`` with NaN (no row: ``fit.NormalEquations``) where |v| < ``rest``."""
        if self.rest is None or not np.any(self.rest > 0):
            return effort
        return np.where(np.abs(v) < self.rest, np.nan, effort)

    def __call__(self, x: np.ndarray) -> np.ndarray:
        """Filter x along its first axis (time); a copy, or x itself without a filter."""
        if self.sos is None or x.shape[0] < 2:
            return x
        from scipy.signal import sosfiltfilt
        pad = min(x.shape[0] - 1, 3 * (2 * self.sos.shape[0] + 1))
        return sosfiltfilt(self.sos, x, axis=0, padlen=pad)


def bandwidth(sets, rate: float) -> float:
    """Return the frequency [Hz] below which ``ENERGY`` of the joint velocities' energy lies."""
    total = None
    frequencies = None
    n = max((len(data) for data in sets), default=0)
    if n < 8:
        return float('nan')
    length = 1 << int(np.ceil(np.log2(n)))
    frequencies = np.fft.rfftfreq(length, 1.0 / rate)
    for data in sets:
        if len(data) < 8:
            continue
        # A Hann window: the ends' jump would spread the motion's energy over every frequency.
        v = np.nan_to_num(data.v - data.v.mean(axis=0)) * np.hanning(len(data))[:, None]
        power = (np.abs(np.fft.rfft(v, n=length, axis=0)) ** 2).sum(axis=1)
        total = power if total is None else total + power
    if total is None or total.sum() <= 0:
        return float('nan')
    cumulative = np.cumsum(total) / total.sum()
    return float(frequencies[min(np.searchsorted(cumulative, ENERGY), frequencies.size - 1)])


def design(sets, velocity_threshold: float = 0.0) -> LowPass:
    """
    Choose the filter of the module docstring from the training samples ``sets``.

    ``velocity_threshold``: the friction model's (0: no friction, no row left out).
    """
    rest = moving = None
    if velocity_threshold > 0 and any(len(data) for data in sets):
        v = np.concatenate([data.v for data in sets if len(data)])
        fast = np.abs(v) >= REST * velocity_threshold
        count = np.maximum(fast.sum(axis=0), 1)
        each_way = np.minimum(((v > 0) & fast).sum(axis=0), ((v < 0) & fast).sum(axis=0))
        moving = fast.mean(axis=0)
        keep_all = (1.0 - moving > MAX_AT_REST) | (each_way / count < MIN_EACH_WAY)
        rest = np.where(moving < MIN_MOVING, np.inf,
                        np.where(keep_all, 0.0, REST * velocity_threshold))
    from scipy.signal import butter
    intervals = np.concatenate([np.diff(data.seconds) for data in sets if len(data) > 1]
                               or [np.array([np.nan])])
    intervals = intervals[intervals > 0]
    rate = 1.0 / float(np.median(intervals)) if intervals.size else float('nan')
    if not np.isfinite(rate):
        return LowPass(None, rate, None, rest, moving)
    cutoff = FACTOR * bandwidth(sets, rate)
    if not np.isfinite(cutoff) or cutoff <= 0 or cutoff >= HIGHEST * 0.5 * rate:
        return LowPass(None, rate, None, rest, moving)
    return LowPass(cutoff, rate, butter(ORDER, cutoff, fs=rate, output='sos'), rest, moving)
