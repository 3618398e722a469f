"""
``rnea_ctl`` against a node that is already up: the time per call, and where it goes.

Two ``rnea_node`` processes (example-robot-data's panda, autostarted active), each on a private
domain: one as it starts by default (its participant announcing itself every 0.25 s:
``rnea_ros.polling.discovery``), one given a Fast DDS profile file without settings (Fast DDS's
defaults: every 3 s), the baseline. Once ``rnea_ctl wait`` finds each, ``--calls`` rounds call
both in a random order, as a user does (a new process each): ``rnea_ctl lifecycle get`` (wall
time, and the CPU time of the process), then a probe doing the same steps in one process with
a clock read after each phase (the interpreter's start, importing the command line, importing
rclpy and the message types, the session: the DDS participant, the node's service discovered,
the answer). Printed per node: the medians, and the ratio of the wall times. The machine's
load (``uptime``) is printed before and after: the CPU time is what load does not change, the
wall time is that CPU time spread over a shared machine plus the discovery wait.

Usage: ``python bench/bench_ctl.py [--calls N]``
"""
from __future__ import annotations

import argparse
import json
import os
from pathlib import Path
import random
import resource
import statistics
import subprocess
import sys
import tempfile
import time

from rnea_ros.demos.motions import PANDA_URDF
from rnea_ros.demos.process import ros_environment, RosProcess

PROBE = r"""
import json, sys, time
marks = {'start': float(sys.argv[1])}
marks['interpreter'] = time.time()
from rnea_ros.ctl import cli
marks['command line'] = time.time()
from rnea_ros.ctl import commands, session
import rclpy
from lifecycle_msgs.srv import GetState
marks['rclpy'] = time.time()
s = session.Session(10.0)
marks['session'] = time.time()
client = s._client(GetState, '/rnea/get_state')
s.spin_until(client.service_is_ready, 'service')
marks['discovered'] = time.time()
future = client.call_async(GetState.Request())
s.spin_until(future.done, 'answer')
marks['answered'] = time.time()
s.close()
print(json.dumps(marks))
"""
EMPTY_PROFILE = ('<?xml version="1.0" encoding="UTF-8"?>\n'
                 '<dds xmlns="http://www.eprosima.com"><profiles/></dds>\n')
CTL = [sys.executable, '-m', 'rnea_ros.ctl']


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def call(env: dict) -> tuple[float, float]:
    """Run ``rnea_ctl lifecycle get``; return its wall and CPU time [s]."""
    cpu, begin = children_cpu(), time.perf_counter()
    subprocess.run([*CTL, 'lifecycle', 'get'], env=env, check=True, capture_output=True,
                   stdin=subprocess.DEVNULL)
    return time.perf_counter() - begin, children_cpu() - cpu


def probe(env: dict) -> dict[str, float]:
    """Return the probe's phases [s]."""
    done = subprocess.run([sys.executable, '-c', PROBE, repr(time.time())], env=env,
                          check=True, capture_output=True, text=True)
    marks = json.loads(done.stdout)
    names = list(marks)
    return {after: marks[after] - marks[before] for before, after in zip(names, names[1:])}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[1])
    parser.add_argument('--calls', type=int, default=8, help='rounds (default: %(default)s)')
    args = parser.parse_args()
    base = 150 + os.getpid() % 40
    with tempfile.TemporaryDirectory() as folder:
        empty = Path(folder) / 'fastdds_defaults.xml'
        empty.write_text(EMPTY_PROFILE)
        targets = {'default (0.25 s)': ros_environment(base),
                   'Fast DDS defaults (3 s)': ros_environment(
                       base + 1, {'FASTDDS_DEFAULT_PROFILES_FILE': str(empty)})}
        nodes = [RosProcess([sys.executable, '-m', 'rnea_ros.node', '--urdf', str(PANDA_URDF)],
                            int(env['ROS_DOMAIN_ID']), Path(folder) / f'node{k}.log',
                            'rnea_node', env=env) for k, env in enumerate(targets.values())]
        try:
            for env in targets.values():  # the client's side as a user's: no profile given
                env.pop('FASTDDS_DEFAULT_PROFILES_FILE', None)
                subprocess.run([*CTL, '--timeout', '300', 'wait'], env=env, check=True,
                               capture_output=True)
            print(f'load before: {os.getloadavg()}', flush=True)
            results = {name: {'wall': [], 'cpu': [], 'phases': []} for name in targets}
            for _ in range(args.calls):
                for name in random.sample(list(targets), len(targets)):
                    wall, cpu = call(targets[name])
                    results[name]['wall'].append(wall)
                    results[name]['cpu'].append(cpu)
                    results[name]['phases'].append(probe(targets[name]))
            print(f'load after: {os.getloadavg()}')
        finally:
            for node in nodes:
                node.stop()
    for name, result in results.items():
        walls = ' '.join(f'{t:.2f}' for t in result['wall'])
        phases = ', '.join(f'{phase} {statistics.median(p[phase] for p in result["phases"]):.3f}'
                           for phase in result['phases'][0])
        found = ' '.join(f'{p["discovered"]:.2f}' for p in result['phases'])
        print(f'{name}: rnea_ctl lifecycle get wall {walls} s (median '
              f'{statistics.median(result["wall"]):.2f}), CPU median '
              f'{statistics.median(result["cpu"]):.2f} s; probe medians: {phases}; '
              f'discovered, each: {found}')
    walls = [statistics.median(result['wall']) for result in results.values()]
    print(f'wall median, default / Fast DDS defaults: {walls[0] / walls[1]:.2f}')
    return 0


if __name__ == '__main__':
    sys.exit(main())
