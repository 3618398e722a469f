"""
The loop watch on synthetic signals: an oscillation is found and named, a motion or a push is not.

``LoopWatch`` of three joints (limits +-10), fed one cycle at a time as the core feeds it: the
torque before its clip and the signal watched (the velocity error). Time is 1 ms a cycle.
"""
from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

from rnea_ros.control import gain_check, status
from rnea_ros.control.loop_margin import LoopMargin
from rnea_ros.control.loop_watch import (CLIP_SHARE, CLIP_WINDOW, FLIPS, likely_cause,
                                         LoopWatch, SWING, WINDOW)
from rnea_ros.control.safety import COLLISION, ERROR, FAULT_TEXT, OK

NAMES = ('shoulder', 'elbow', 'wrist')
DT = 1e-3
LIMIT = 10.0


def watch() -> LoopWatch:
    limit = np.full(len(NAMES), LIMIT)
    return LoopWatch(NAMES, 0, limit)


def feed(loop: LoopWatch, signals: np.ndarray, torques: np.ndarray | None = None,
         reaction: str = 'report', start: int = 0) -> list[int]:
    """Feed (cycles, joints) signals; return the cycles at which an oscillation was found."""
    found, zeros = [], np.zeros(len(NAMES))
    for k, signal in enumerate(signals):
        before = loop.oscillations
        loop.observe(zeros if torques is None else torques[k], signal, True, reaction,
                     (start + k) * DT)
        if loop.oscillations > before:
            found.append(k)
    return found


def on_joint(joint: int, values: np.ndarray) -> np.ndarray:
    """(cycles, joints): ``values`` on ``joint``, zero on the others."""
    signals = np.zeros((len(values), len(NAMES)))
    signals[:, joint] = values
    return signals


def test_an_oscillation_is_found_within_the_window_and_names_its_joint():
    # A delay instability's signature: the velocity error reversing every 3 cycles, growing.
    k = np.arange(400)
    growing = 0.05 * 1.02 ** k * np.sign(np.sin(np.pi * (k + 0.5) / 3))
    loop = watch()
    found = feed(loop, on_joint(1, growing))
    beyond = int(np.argmax(np.abs(growing) > SWING))  # the first cycle a swing counts
    # FLIPS sign changes, 3 cycles apart, counted from the first swing beyond +-SWING.
    assert found and found[0] - beyond <= 3 * FLIPS <= WINDOW, (found, beyond)
    assert list(loop.oscillating) == [False, True, False]
    message, values = loop.status('report', 1000.0)
    assert message.startswith('loop not holding: elbow oscillates, its velocity error '
                              'reversing every 3 cycles, 167 Hz, up to ')
    assert message.endswith("likely cause: gains too high for the loop's delay: see loop "
                            'margin'), message
    assert values['loop watch'] == message and values['loop oscillations found'] == '1'
    # The worst first, the others named after it.
    loop = watch()
    signals = on_joint(1, growing) + on_joint(2, 2.0 * growing)
    feed(loop, signals)
    assert loop.status('report', 0.0)[0].startswith(
        'loop not holding: wrist oscillates (also elbow), its velocity error reversing every '
        '3 cycles, up to ')  # rate 0: no period of its own, no Hz


def test_a_sustained_oscillation_at_its_effort_limits_is_found_and_said_to_be_held_by_them():
    k = np.arange(300)
    square = 2.0 * np.sign(np.sin(np.pi * (k + 0.5) / 2))  # reversing every 2 cycles
    torques = on_joint(0, LIMIT * np.sign(square))  # clipped every cycle
    loop = watch()
    assert feed(loop, on_joint(0, square), torques)
    message = loop.status('report', 1000.0)[0]
    assert message.startswith('loop not holding: shoulder oscillates, its velocity error '
                              'reversing every 2 cycles, 250 Hz, up to 2 rad/s')
    assert message.endswith('see loop margin; held only by its effort limits'), message


@pytest.mark.parametrize('case', ['tracked_motion', 'push', 'ringing', 'noise'])
def test_a_motion_a_push_a_dying_ringing_and_noise_are_not_oscillations(case):
    t = np.arange(3000) * DT
    if case == 'tracked_motion':  # reversing at 2 Hz: 4 times a second, 1 rad/s
        signal = np.sin(2 * np.pi * 2.0 * t)
    elif case == 'push':  # a step of the error, reversed once, decaying
        signal = np.where(t < 1.0, 0.0, 2.0 * np.exp(-(t - 1.0) / 0.05)
                          * np.cos(2 * np.pi * 5.0 * (t - 1.0)))
    elif case == 'ringing':  # a stable loop's lightly damped mode at 40 Hz, from 1 rad/s
        signal = np.exp(-t / 0.02) * np.cos(2 * np.pi * 40.0 * t)
    else:  # velocity noise below the swing, reversing every cycle
        signal = 0.9 * SWING * np.random.default_rng(0).standard_normal(t.size).clip(-1, 1)
    loop = watch()
    assert feed(loop, on_joint(2, signal)) == []
    message, values = loop.status('report', 1000.0)
    assert message is None and values['loop watch'] == 'holding'


def test_the_oscillation_ends_after_a_window_without_a_sign_change_and_is_reported_once():
    k = np.arange(200)
    loop = watch()
    assert feed(loop, on_joint(0, np.sign(np.sin(np.pi * (k + 0.5) / 3))))
    feed(loop, on_joint(0, np.ones(WINDOW + 1)))
    assert not loop.oscillating.any()
    assert loop.status('report', 0.0)[0].startswith('loop not holding: shoulder')  # since then
    assert loop.status('report', 0.0)[0] is None  # reported once


def test_clipping_for_half_of_the_window_is_reported_and_names_the_joint():
    cycles = CLIP_WINDOW + 50
    torques = np.zeros((cycles, len(NAMES)))
    share = int(CLIP_SHARE * CLIP_WINDOW)
    torques[cycles - share + 1:, 2] = -LIMIT  # one cycle short of the share
    loop = watch()
    feed(loop, np.zeros((cycles, len(NAMES))), torques)
    assert loop.status('report', 0.0)[0] is None and loop.clippings == 0
    feed(loop, np.zeros((1, len(NAMES))), -LIMIT * np.ones((1, len(NAMES))))
    assert loop.clippings == 1 and list(loop.clipping) == [False, False, True]
    message, values = loop.status('report', 0.0)
    assert message == ('effort limits reached: wrist clipped in 50 % of the last 500 cycles '
                       '(a payload, a reference faster than the joint can follow, or gains '
                       "too high): the published torque is not the law's")
    assert values['clipped share of the last 500 cycles [%]'] == 'shoulder 0, elbow 0, wrist 50'


def test_clipping_needs_a_full_window_and_a_torque_at_the_limit_counts():
    loop = watch()
    at_limit = np.full((CLIP_WINDOW - 1, len(NAMES)), LIMIT)
    feed(loop, np.zeros_like(at_limit), at_limit)
    assert loop.clippings == 0  # 499 cycles: no window yet
    feed(loop, np.zeros((1, len(NAMES))), np.full((1, len(NAMES)), LIMIT))
    assert loop.clippings == 3


def test_stop_latches_until_reset_then_holds_until_a_newer_desired_motion():
    class Motion:  # a desired motion as ``Desired`` numbers it

        def __init__(self, number):
            self.number = number

        def active(self, now, ros_time, timeout):
            return True
    k = np.arange(100)
    loop = watch()
    assert feed(loop, on_joint(0, np.sign(np.sin(np.pi * (k + 0.5) / 3))), reaction='stop')
    assert loop.latched and not loop.holding and loop.stop_latch == -1
    assert 'stop latched until reset_collision' in loop.status('stop', 0.0)[1][
        'unstable_reaction']
    assert loop.reset() and not loop.latched and loop.holding
    assert not loop.oscillating.any() and loop.flip_count.sum() == 0  # forgotten
    assert not loop.released(Motion(7), 7, 0.0, 0.0, 0.1)  # the one held back at the rest
    assert not loop.released(None, 7, 0.0, 0.0, 0.1)
    assert loop.holding and loop.released(Motion(8), 7, 0.0, 0.0, 0.1)
    assert not loop.holding and not loop.reset()  # nothing latched


def test_report_never_latches_and_clipping_never_stops():
    k = np.arange(100)
    loop = watch()
    feed(loop, on_joint(0, np.sign(np.sin(np.pi * (k + 0.5) / 3))))
    assert loop.oscillations == 1 and not loop.latched
    loop = watch()
    at_limit = np.full((CLIP_WINDOW, len(NAMES)), LIMIT)
    feed(loop, np.zeros_like(at_limit), at_limit, reaction='stop')
    assert loop.clippings == 3 and not loop.latched


def test_the_cause_names_the_model_when_the_prediction_error_is_as_large_as_the_swing():
    assert likely_cause(False, 2.0, 0.5) == "gains too high for the loop's delay: see loop margin"
    assert likely_cause(True, 2.0, 1.0).startswith(
        "the model (or the payload) is not the robot's: the one-step prediction error")
    k = np.arange(100)
    loop = watch()
    loop.model_error = np.array([3.0, 0.0, 0.0])  # the hook: per v entry
    feed(loop, on_joint(0, np.sign(np.sin(np.pi * (k + 0.5) / 3))))
    assert 'likely cause: the model (or the payload)' in loop.status('report', 0.0)[0]


def cycle_peak(n: int) -> int:
    """Return the memory peak of 1000 cycles of an oscillating, clipped watch of ``n`` joints."""
    import tracemalloc
    limit = np.full(n, LIMIT)
    loop = LoopWatch([f'joint{k}' for k in range(n)], 0, limit)
    tau, signal = np.full(n, LIMIT), np.ones(n)
    for k in range(CLIP_WINDOW):  # found: oscillating and clipped from here on
        signal *= -1.0
        loop.observe(tau, signal, True, 'report', k * DT)
    assert loop.oscillating.all() and loop.clipping.all()
    tracemalloc.start()
    start, _ = tracemalloc.get_traced_memory()
    for k in range(1000):
        signal *= -1.0
        loop.observe(tau, signal, True, 'report', k * DT)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return peak - start


def test_a_cycle_allocates_no_array():
    # What a cycle takes (the call's arguments, the Python ints it counts with) does not grow
    # with the joints: a temporary array of 500 joints would be 4000 bytes more than of 50.
    assert abs(cycle_peak(500) - cycle_peak(50)) < 256, (cycle_peak(500), cycle_peak(50))


def test_a_collision_during_an_oscillation_names_the_oscillation_first():
    # The collision's stop came after 3 sign changes of the elbow: the watch found nothing yet,
    # its cycles before the stop say the loop was shaking.
    k = np.arange(11)
    loop = watch()
    feed(loop, on_joint(1, np.sign(np.sin(np.pi * (k + 0.5) / 3))))  # 3 sign changes
    assert loop.oscillations == 0 and loop.shaking() == 'elbow'
    core = SimpleNamespace(watch=loop, fault=SimpleNamespace(code=COLLISION), observer=None,
                           settings=SimpleNamespace(unstable_reaction='stop', rate=1000.0))
    level, messages = status._watch_status(core, {}, ERROR, [FAULT_TEXT[COLLISION]])
    assert level == ERROR and messages == [
        'loop oscillating: elbow reversing its velocity error every few cycles when the '
        'collision was detected',
        FAULT_TEXT[COLLISION] + ' (while the loop oscillated: likely the oscillation, not a '
        'contact)']
    # A push: the velocity error out and back once, then quiet: a collision alone.
    loop = watch()
    feed(loop, on_joint(1, np.concatenate([np.full(20, 1.0), np.full(20, -0.5), np.zeros(60)])))
    assert loop.shaking() is None
    core.watch = loop
    assert status._watch_status(core, {}, ERROR, [FAULT_TEXT[COLLISION]]) == (
        ERROR, [FAULT_TEXT[COLLISION]])


def test_with_gains_accepted_unheld_the_finding_comes_before_the_loop_margin():
    margin = LoopMargin('pd_feedforward', 1.5, 1.4, 'elbow', 1e-3, 1, False, 'kd.elbow', 30.0,
                        10.0)
    values = {'loop watch': 'holding'}
    assert gain_check.report(margin, OK, 'ok', values) == (ERROR, margin.message() + '; ok')
    values['loop watch'] = 'loop not holding: elbow oscillates'
    assert gain_check.report(margin, ERROR, 'loop not holding: elbow oscillates', values) == (
        ERROR, 'loop not holding: elbow oscillates; ' + margin.message())
