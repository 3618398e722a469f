"""
The node's observer in real time: its residual against the library's, and the detection delay.

Starts ``rnea_node`` (panda, ``rate: 0``, ``observer: true``, a collision threshold on every arm
joint) on a private ROS domain and publishes joint_states at ``--rate`` Hz on the wall clock
(stamped with the time each is sent): a slow motion, the effort its inverse dynamics plus
Gaussian noise, and from ``--push-at`` a ``--force`` N push on the flange (the effort less
J^T F, F straight down). Prints the load average, how many samples were sent and how many
``external_torques`` came back, the largest difference between the node's residual and
``MomentumObserver.run`` over every sample sent (at the stamps the node answered), and the
detection delay: from the first pushed sample's stamp to the stamp the node's detection started
at (its diagnostics' ``last collision``; ``collision`` follows after the detector's minimum
duration), beside the library observer's first crossing on the same samples.

    python bench/bench_observer_node.py [--duration 4] [--rate 1000] [--force 20]
"""
from __future__ import annotations

import argparse
import math
import os
from pathlib import Path
import re
import sys
import tempfile
import time

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / 'test'))  # the tests' harness package

from harness.oracle import robot_path  # noqa: E402, I100

from rnea_ros import RobotModel  # noqa: E402
from rnea_ros.observer import MomentumObserver  # noqa: E402
from rnea_ros.observer.collision import DEFAULT_MIN_DURATION as MIN_DURATION  # noqa: E402

THRESHOLD = 2.0  # N m on every arm joint


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[1])
    parser.add_argument('--duration', type=float, default=4.0, help='s of joint_states')
    parser.add_argument('--rate', type=float, default=1000.0, help='joint_states rate [Hz]')
    parser.add_argument('--force', type=float, default=20.0, help='push on the flange [N]')
    parser.add_argument('--push-at', type=float, default=None,
                        help='s from the start (default: 3/4 of the duration)')
    args = parser.parse_args(argv)
    from builtin_interfaces.msg import Time
    from diagnostic_msgs.msg import DiagnosticArray
    from harness.ros_harness import BEST_EFFORT, RosHarness
    from sensor_msgs.msg import JointState
    from harness.node_streams import status

    urdf = robot_path('panda')
    model = RobotModel.from_urdf_file(urdf)
    names = list(model.joint_names)
    flange = model.link_names[-1]
    push_at = 0.75 * args.duration if args.push_at is None else args.push_at
    rng = np.random.default_rng(0)
    with tempfile.TemporaryDirectory() as tmp:
        ros = RosHarness(Path(tmp))
        try:
            ros.start_node({'robot_description': urdf.read_text(), 'rate': 0.0,
                            'observer': True, 'collision_reaction': 'none',
                            **{f'collision_threshold.{name}': THRESHOLD
                               for name in names[:7]}})
            publisher = ros.publisher(JointState, 'joint_states', BEST_EFFORT)
            external = ros.collect(JointState, 'external_torques')
            diagnostics = ros.collect(DiagnosticArray, '/diagnostics')
            ros.wait_for(ros.collect(JointState, 'joint_torques'), timeout=60.0,
                         tick=lambda: publisher.publish(JointState(name=names,
                                                                   position=[0.0] * model.nq,
                                                                   velocity=[0.0] * model.nv,
                                                                   effort=[0.0] * model.nv)))
            external.messages.clear()
            stamps, keys, Q, V, E = [], [], [], [], []
            q0 = model.neutral_configuration()
            start = time.monotonic()
            wall0 = time.time()
            period = 1.0 / args.rate
            k = 0
            while True:
                deadline = start + k * period
                now = time.monotonic()
                if now - start > args.duration:
                    break
                if now < deadline:
                    ros.executor.spin_once(timeout_sec=min(deadline - now, 0.0005))
                    continue
                t = now - start
                q = q0 + 0.3 * np.sin(1.5 * t)
                v = np.full(model.nv, 0.45 * np.cos(1.5 * t))
                a = np.full(model.nv, -0.675 * np.sin(1.5 * t))
                effort = model.rnea(q, v, a) + rng.normal(0.0, 0.05, model.nv)
                if t >= push_at:
                    jacobian = model.link_jacobian(q, flange, frame='local_world_aligned')[:3]
                    effort -= jacobian.T @ np.array([0.0, 0.0, -args.force])
                ns = int((wall0 + t) * 1e9)
                msg = JointState(name=names, position=q.tolist(), velocity=v.tolist(),
                                 effort=effort.tolist())
                msg.header.stamp = Time(sec=ns // 10**9, nanosec=ns % 10**9)
                publisher.publish(msg)
                stamps.append(msg.header.stamp.sec + 1e-9 * msg.header.stamp.nanosec)
                keys.append(ns)
                Q.append(q)
                V.append(v)
                E.append(effort)
                k += 1
            report = None
            try:  # the node's own account: the stamp its detection started at
                report = ros.wait_for(diagnostics, lambda m: 'last collision' in (
                    (status(m) or (0, '', {}))[2]), 5.0)
            except AssertionError:
                pass  # not detected: said below
        finally:
            ros.close()
    reference = MomentumObserver(model, 50.0).run(np.array(stamps), np.array(Q), np.array(V),
                                                  np.array(E))
    index = {ns: j for j, ns in enumerate(keys)}
    differences = [np.max(np.abs(np.array(m.effort) - reference[index[ns]]))
                   for m in external.messages
                   if (ns := m.header.stamp.sec * 10**9 + m.header.stamp.nanosec) in index]
    pushed = np.array(stamps) >= stamps[0] + push_at
    over = np.flatnonzero(pushed & np.any(np.abs(reference[:, :7]) > THRESHOLD, axis=1))
    print(f'load average {os.getloadavg()[0]:.2f}; {len(stamps)} joint_states sent at '
          f'{args.rate:g} Hz, {len(external.messages)} external_torques received')
    print(f'node residual - library residual over every sample: max '
          f'{max(differences) if differences else float("nan"):.3g} N m over '
          f'{len(differences)} answered samples')
    first = stamps[int(np.argmax(pushed))] if pushed.any() else math.nan
    library = (f'{1e3 * (stamps[over[0]] - first):.1f} ms' if over.size else 'none')
    node = 'none'
    if report is not None:
        start = re.search(r'from stamp ([0-9.]+) s', status(report)[2]['last collision'])
        node = f'{1e3 * (float(start.group(1)) - first):.1f} ms'
    print(f'{args.force:g} N flange push: first crossing after {library} (library), '
          f'{node} (node: the start of its detection, then held {MIN_DURATION * 1e3:g} ms)')
    return 0


if __name__ == '__main__':
    sys.exit(main())
