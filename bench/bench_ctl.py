"""
``rnea_ctl`` against a node that is already up: the time per call, and where it goes.

``rnea_node`` processes (example-robot-data's panda, autostarted active), each on a private
domain: each client's own (this checkout's and, given ``--baseline``, that checkout's) as it
starts by default (this one's participant announcing itself every 0.1 s:
``rnea_ros.polling.discovery``), and one given a Fast DDS profile file without settings (Fast
DDS's defaults: every 3 s), which both clients call. Once ``rnea_ctl wait`` finds each,
``--calls`` rounds call them in a random order, as a user does (a new process each, from an
environment the ros wheels' bootstrapper has not seen, as a shell's: it re-executes Python
once): ``rnea_ctl lifecycle get``, ``rnea_ctl param get /rnea rate``, ``rnea_ctl param set
/rnea input_timeout:=0.1`` (its default) and ``rnea_ctl status`` (wall time, and the CPU time
of the process), then a probe doing a ``lifecycle get``'s steps in one process with a clock
read after each phase (the interpreter's start, importing the command line, importing rclpy
and the message types, the session: the DDS participant, the node's service discovered, the
answer, the session closed, the process's end as its parent sees it). ``--baseline DIR`` (a
checkout of rnea_ros, e.g. ``git archive`` of an older commit) runs that checkout's
``rnea_ctl`` and node in the same rounds beside this one's: the two side by side under the
same load. Printed per node and client: the median, p90 and max wall time per call, the
median CPU time, the ratios; the machine's load (``uptime``) before and after, and its floor
(``rnea_ros.timing.floor``) after. The CPU time is what load does not change; the wall time is
that CPU time spread over a shared machine plus the discovery wait.

Usage: ``python bench/bench_ctl.py [--calls N] [--baseline DIR]``
"""
from __future__ import annotations

import argparse
import json
import math
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
from rnea_ros.timing.floor import wake_up_lateness

ROOT = Path(__file__).resolve().parents[1]
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
s.spin_until(client.service_is_ready, 'service', tick=session.DISCOVERY_TICK)
marks['discovered'] = time.time()
future = client.call_async(GetState.Request())
s.spin_until(future.done, 'answer')
marks['answered'] = time.time()
s.close()
marks['closed'] = time.time()
print(json.dumps(marks))
getattr(cli, 'end', sys.exit)(0)
"""
EMPTY_PROFILE = ('<?xml version="1.0" encoding="UTF-8"?>\n'
                 '<dds xmlns="http://www.eprosima.com"><profiles/></dds>\n')
CTL = [sys.executable, '-m', 'rnea_ros.ctl']
COMMANDS = {'lifecycle get': ['lifecycle', 'get'], 'param get': ['param', 'get', '/rnea', 'rate'],
            'param set': ['param', 'set', '/rnea', 'input_timeout:=0.1'],  # its default
            'status': ['status']}
# Set by the ros wheels' bootstrapper (a .pth file) when it re-executes Python with the ROS
# libraries on LD_LIBRARY_PATH: without it, as in a user's shell, every call starts Python twice.
BOOTSTRAPPED = '_ROS_WHEELS_BOOTSTRAP_COMPLETE'


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def call(arguments: list[str], env: dict) -> tuple[float, float, int]:
    """Run ``rnea_ctl ARGUMENTS``; return its wall and CPU time [s] and its exit status."""
    cpu, begin = children_cpu(), time.perf_counter()
    # cwd: not a checkout, which ``python -m`` would put before PYTHONPATH on sys.path
    done = subprocess.run([*CTL, *arguments], env=env, capture_output=True,
                          stdin=subprocess.DEVNULL, cwd=tempfile.gettempdir())
    return time.perf_counter() - begin, children_cpu() - cpu, done.returncode


def probe(env: dict) -> dict[str, float] | int:
    """Return the probe's phases [s] (the last: closed to ended), or its exit status if failed."""
    done = subprocess.run([sys.executable, '-c', PROBE, repr(time.time())], env=env,
                          capture_output=True, text=True, cwd=tempfile.gettempdir())
    ended = time.time()
    if done.returncode:
        return done.returncode
    marks = json.loads(done.stdout)
    marks['exit'] = ended
    names = list(marks)
    return {after: marks[after] - marks[before] for before, after in zip(names, names[1:])}


def p90(values: list[float]) -> float:
    """Return the 90th percentile, nearest rank (of ten values the ninth lowest)."""
    ranked = sorted(values)
    return ranked[math.ceil(0.9 * len(ranked)) - 1]


DEFAULT, FAST_DDS = "default (each client's own node)", 'Fast DDS defaults (3 s)'


def start_nodes(folder: Path, clients: dict[str, str]) -> tuple[dict, list[RosProcess]]:
    """
    Start the nodes; return each one's environment per client (a client's: no profile) and them.

    ``DEFAULT``: each client's checkout's node as it starts (this one's announcing every 0.1 s),
    called by that client; ``FAST_DDS``: this checkout's node given a profile without settings,
    called by every client.
    """
    empty = folder / 'fastdds_defaults.xml'
    empty.write_text(EMPTY_PROFILE)
    base = 150 + os.getpid() % 40
    started = {(DEFAULT, client): ros_environment(base + k, {'PYTHONPATH': path})
               for k, (client, path) in enumerate(clients.items())}
    started[FAST_DDS, None] = ros_environment(base + len(clients), {
        'FASTDDS_DEFAULT_PROFILES_FILE': str(empty), 'PYTHONPATH': clients['this']})
    # cwd: not a checkout, which ``python -m`` would put before PYTHONPATH on sys.path
    nodes = [RosProcess([sys.executable, '-m', 'rnea_ros.node', '--urdf', str(PANDA_URDF)],
                        int(env['ROS_DOMAIN_ID']), folder / f'node{k}.log', 'rnea_node',
                        env=env, cwd=folder) for k, env in enumerate(started.values())]
    targets: dict[str, dict[str, dict]] = {DEFAULT: {}, FAST_DDS: {}}
    for (label, owner), env in started.items():
        # the client's side as a user's: no profile, not bootstrapped
        env = {k: v for k, v in env.items()
               if k not in ('FASTDDS_DEFAULT_PROFILES_FILE', BOOTSTRAPPED)}
        for client in clients if owner is None else [owner]:
            targets[label][client] = dict(env, PYTHONPATH=clients[client])
    return targets, nodes


def rounds(targets: dict[str, dict[str, dict]], calls: int) -> dict:
    """Call each node with its clients and each command, ``calls`` rounds in a random order."""
    runs = [(node, client, command) for node in targets for client in targets[node]
            for command in COMMANDS]
    results = {run: {'wall': [], 'cpu': [], 'failed': []} for run in runs}
    phases = {node: [] for node in targets}
    for _ in range(calls):
        for node, client, command in random.sample(runs, len(runs)):
            wall, cpu, status = call(COMMANDS[command], targets[node][client])
            result = results[node, client, command]
            if status:  # counted and shown, not timed
                result['failed'].append(status)
            else:
                result['wall'].append(wall)
                result['cpu'].append(cpu)
        for node in random.sample(list(targets), len(targets)):
            phases[node].append(probe(targets[node]['this']))
    return {'calls': results, 'phases': phases}


def report(results: dict, clients: dict[str, str]) -> None:
    """Print each node's and client's figures, side by side, and the ratios."""
    medians, cpus, p90s = {}, {}, {}
    for (node, client, command), times in results['calls'].items():
        wall = times['wall']
        medians[node, client, command] = statistics.median(wall)
        cpus[node, client, command] = statistics.median(times['cpu'])
        p90s[node, client, command] = p90(wall)
        print(f'{node}, {client} ({clients[client]}): rnea_ctl {command}: wall median '
              f'{statistics.median(wall):.2f} s, p90 {p90(wall):.2f}, max {max(wall):.2f} '
              f'(each: {" ".join(f"{t:.2f}" for t in wall)}); CPU median '
              f'{statistics.median(times["cpu"]):.2f} s; failed: '
              f'{", ".join(f"exit {code}" for code in times["failed"]) or "none"}')
    for node, probes in results['phases'].items():
        each = [p for p in probes if isinstance(p, dict)]
        failed = [p for p in probes if not isinstance(p, dict)]
        if failed:
            print(f'{node}, this: probes failed: {", ".join(f"exit {p}" for p in failed)}')
        phases = ', '.join(f'{phase} {statistics.median(p[phase] for p in each):.3f}'
                           for phase in each[0])
        found = ' '.join(f'{p["discovered"]:.2f}' for p in each)
        print(f'{node}, this: probe medians [s]: {phases}; discovered, each: {found}')
    nodes = list(results['phases'])
    for command in COMMANDS:
        if 'baseline' in clients:
            for node in nodes:
                ratios = [f'{name} {of[node, "this", command] / of[node, "baseline", command]:.2f}'
                          for name, of in (('wall median', medians), ('p90', p90s),
                                           ('CPU median', cpus))]
                print(f'{node}: rnea_ctl {command}, this / baseline: {", ".join(ratios)}')
        print(f'rnea_ctl {command} wall median, default / Fast DDS defaults (this): '
              f'{medians[nodes[0], "this", command] / medians[nodes[1], "this", command]:.2f}')


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[1])
    parser.add_argument('--calls', type=int, default=8, help='rounds (default: %(default)s)')
    parser.add_argument('--baseline', type=Path,
                        help="a checkout of rnea_ros whose rnea_ctl runs beside this one's")
    args = parser.parse_args()
    clients = {'this': str(ROOT)}
    if args.baseline:
        clients['baseline'] = str(args.baseline.resolve())
    with tempfile.TemporaryDirectory() as folder:
        targets, nodes = start_nodes(Path(folder), clients)
        try:
            for env in (env for node in targets.values() for env in node.values()):
                subprocess.run([*CTL, '--timeout', '300', 'wait'], env=env, check=True,
                               capture_output=True, cwd=folder)
            print(f'load before: {os.getloadavg()}', flush=True)
            results = rounds(targets, args.calls)
            print(f'load after: {os.getloadavg()}')
        finally:
            for node in nodes:
                node.stop()
    report(results, clients)
    print(wake_up_lateness().describe())
    return 0


if __name__ == '__main__':
    sys.exit(main())
