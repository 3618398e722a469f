"""
Start the simulated robot: ``rnea_sim`` and ``python -m rnea_ros.sim``.

``rnea_sim [--urdf FILE] [--xacro-arg NAME:=VALUE ...] [--gap default|none|FILE]
[--record BAG] [--ros-args ...]``: the options set the parameters of the same names (they win
over ``--ros-args``). ``rnea_sim --mjcf FILE`` runs an MJCF robot as it is instead
(``rnea_ros.sim.mjcf_robot``): no gap (``gap`` none; an explicit other one, by ``--gap`` or the
parameter, is refused), a fixed base, ``robot_description`` unused; with ``--urdf`` or
``--xacro-arg`` it is refused. Bad input (a URDF or MJCF MuJoCo cannot compile or the plant
cannot take, a gap file with an unknown key, a negative mass or a link the robot lacks, a
parameter out of range) stops it at start with one line and exit code 2; so does a
``--record`` bag that exists or cannot be created and written (checked before the first
step). SIGINT/SIGTERM, or ``duration`` of sim time, end the run: the last split of
``--record`` is written and the exit code is 0; physics that diverge (gains too
high for the timestep), or a split that cannot be written (a full disk), end it with one line
and exit code 1, the bag readable with what was written up to there. A fatal signal (a
crash in MuJoCo or the middleware) first prints every thread's Python stack (``faulthandler``).

Clocks: ``realtime`` steps at wall-clock deadlines (``rnea_ros.timing.StepSchedule``: absolute
sleeps to start + k / rate; a step that starts a period or more late is counted, and the
following ones catch up without sleeping); ``lockstep`` waits after publishing each state for
the node's ``joint_torques`` stamped with it (at most ``lockstep_timeout``; a missed answer is
counted and the previous command used) and, when something publishes ``effort_commands``, takes
that answer's effort as the step's command (the node's feedforward_effort carries the same
torques; the stamp ties them to the state without a race between two topics).
"""
from __future__ import annotations

import argparse
import faulthandler
import signal
import sys
import threading

from rnea_ros.errors import InputError, RneaError, URDFError, UsageParser

SHUTDOWN_WAIT = 10.0  # s for the executor's thread to end at shutdown, each of two waits

DESCRIPTION = """\
The simulated robot (node name 'rnea_sim'): MuJoCo physics of a URDF with a reality gap, or
of an MJCF robot as it is (--mjcf, e.g. rnea_identify's identified.xml, no gap), joint_states
out, joint_trajectory and effort_commands in (see the README, "The simulated robot"). Exit
status: 0 at SIGINT/SIGTERM or after duration, 2 for bad input (one line), 1 when the physics
diverge or the recording cannot be written (one line)."""


def build_parser() -> argparse.ArgumentParser:
    from rnea_ros.sim.settings import PARAMETERS
    parser = UsageParser(
        prog='rnea_sim', description=DESCRIPTION,
        epilog='parameters (--ros-args -p name:=value):\n' + '\n'.join(
            f'  {p.name} (default {p.default!r}): {p.description}'
            for p in PARAMETERS if p.name != 'robot_description'),
        formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('--urdf', help='URDF or xacro file (instead of robot_description)')
    parser.add_argument('--xacro-arg', action='append', default=[], metavar='NAME:=VALUE',
                        help='xacro argument for --urdf (repeatable)')
    parser.add_argument('--mjcf', metavar='FILE',
                        help='MJCF file: the robot as it is, fixed base, no gap (instead of '
                             '--urdf and robot_description)')
    parser.add_argument('--gap', help='reality gap: default, none, or a YAML file (none only '
                                      'with --mjcf)')
    parser.add_argument('--record', metavar='BAG',
                        help='write a rosbag2 here as the run goes (see record_split)')
    return parser


def _split(argv: list[str]) -> tuple[list[str], list[str]]:
    """(our arguments, the ROS arguments) of ``argv[1:]``."""
    ours, ros, in_ros = [], [], False
    for argument in argv[1:]:
        if argument == '--ros-args':
            in_ros = True
        elif in_ros and argument == '--':
            in_ros = False
            continue
        (ros if in_ros else ours).append(argument)
    return ours, ros


def _mjcf_option_error(options) -> str | None:
    """Return the one line refusing options that do not go with ``--mjcf``, or None."""
    if options.mjcf is None:
        return None
    if options.urdf is not None:
        return '--urdf and --mjcf: give one robot, not both'
    if options.xacro_arg:
        return '--xacro-arg: applies to --urdf, not to --mjcf'
    if options.gap not in (None, 'none'):
        return (f'--gap {options.gap}: with --mjcf the file is the robot as it is: only --gap '
                'none applies (a gap edits URDF text)')
    return None


def mjcf_plant(mjcf_file: str, settings):
    """Return the ``Plant`` of ``--mjcf`` (``gap``: its default means none; others refused)."""
    from rnea_ros.sim.plant import Plant
    if settings.gap not in ('default', 'none'):
        raise ValueError(f"parameter 'gap' is {settings.gap!r}: expected none with --mjcf (the "
                         'file is the robot as it is; a gap edits URDF text)')
    if settings.floating_base:
        raise ValueError("parameter 'floating_base' is True: expected false with --mjcf (a "
                         'fixed-base robot, its joints all in the file)')
    return Plant.from_mjcf(mjcf_file, rate=settings.rate, gravity=settings.gravity,
                           substeps=settings.substeps)


def plant_factory(urdf_file: str | None, xacro_args: dict, mjcf_file: str | None = None):
    """Return the function that builds the ``Plant`` from the checked settings."""
    def build(settings):
        if mjcf_file is not None:
            plant = mjcf_plant(mjcf_file, settings)
            if plant.actuated_q.size == 0:
                raise InputError(f'MJCF {mjcf_file!r}: the robot has no actuated joint: nothing '
                                 'to simulate')
            return plant
        if not urdf_file and not settings.robot_description:
            raise ValueError("parameter 'robot_description' is empty: give the URDF text or "
                             '--urdf FILE')
        from rnea_ros.sim.gap import load_gap
        gap = load_gap(settings.gap)  # before the physics' imports, as the parameters
        from rnea_ros.description.robot_file import read_robot_description
        from rnea_ros.description.loading import read_file_option
        from rnea_ros.sim.plant import Plant
        if urdf_file:
            urdf = read_file_option('--urdf', urdf_file,
                                    lambda path: read_robot_description(path, xacro_args))
            source = f'--urdf {urdf_file!r}'
        else:
            urdf, source = settings.robot_description, "parameter 'robot_description'"
        try:
            plant = Plant(urdf, floating_base=settings.floating_base, gap=gap,
                          rate=settings.rate, gravity=settings.gravity,
                          substeps=settings.substeps)
        except URDFError as error:
            raise URDFError(f'{source}: {error}') from None
        if plant.actuated_q.size == 0:
            raise InputError(f'{source}: the robot has no actuated joint: nothing to simulate')
        return plant
    return build


def main(args: list[str] | None = None) -> int:
    """Run the simulated robot; the exit status (see the module docstring)."""
    faulthandler.enable(all_threads=True)
    argv = list(sys.argv if args is None else args)
    ours, _ = _split(argv)
    options = build_parser().parse_args(ours)
    refused = _mjcf_option_error(options)
    if refused is not None:
        print(f'rnea_sim: {refused}', file=sys.stderr)
        return 2
    stop = threading.Event()
    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, lambda *_: stop.set())
    # The physics (MuJoCo, numba, scipy: seconds) load once the parameters passed: a bad
    # parameter is refused in a second.
    import rclpy
    from rclpy.executors import SingleThreadedExecutor
    from rnea_ros.sim.node import SimNode
    from rnea_ros.sim.record import Recorder
    from rnea_ros.timing import set_fifo_priority
    from rnea_ros.timing.scheduling import SWITCH_INTERVAL
    if options.xacro_arg:
        from rnea_ros.description.robot_file import parse_xacro_arg
    try:
        xacro_args = dict(parse_xacro_arg(text) for text in options.xacro_arg)
    except argparse.ArgumentTypeError as error:
        print(f'rnea_sim: --xacro-arg: {error}', file=sys.stderr)
        return 2
    overrides = {name: getattr(options, name) for name in ('gap', 'record')
                 if getattr(options, name) is not None}
    from rnea_ros.polling.discovery import announce_often  # after rclpy: polling needs it
    announce_often()  # before the participant: clients find it at once (discovery.py)
    try:
        rclpy.init(args=argv, signal_handler_options=rclpy.signals.SignalHandlerOptions.NO)
    except RuntimeError as error:
        print(f'rnea_sim: invalid ROS arguments: {str(error).splitlines()[0]}',
              file=sys.stderr)
        return 2
    try:
        node = SimNode(plant_factory(options.urdf, xacro_args, options.mjcf), overrides)
    except (ValueError, RneaError, OSError) as error:
        print(f'rnea_sim: {error}', file=sys.stderr)
        rclpy.try_shutdown()
        return 2
    if node.settings.record:  # the bag made last: a bad input above leaves none behind
        try:  # a failed write stops the run as a signal does
            node.recorder = Recorder(node.settings.record, node.settings.record_split,
                                     on_failure=stop.set, resolve=node.resolve_topic_name)
        except RneaError as error:
            print(f'rnea_sim: {error}', file=sys.stderr)
            node.destroy_node()
            rclpy.try_shutdown()
            return 2
    from rnea_ros.recording import fitness  # loaded with the node's plant by now
    from rnea_ros.sim.plant import UnstableError
    executor = SingleThreadedExecutor()
    executor.add_node(node)
    # The stepping thread takes the GIL after this long, not Python's 5 ms: a step is 1 ms.
    sys.setswitchinterval(SWITCH_INTERVAL)

    def spin():
        # Its Python holds the GIL the stepping thread needs: with a real-time stepping thread,
        # SCHED_FIFO 1 (the lowest) so that no normal process preempts it holding the GIL.
        if node.settings.clock == 'realtime' and node.settings.thread_priority > 0:
            set_fifo_priority(1)
        executor.spin()
    spinner = threading.Thread(target=spin, daemon=True, name='rnea_sim executor')
    spinner.start()
    exit_code = 0
    try:
        node.run(stop)
    except UnstableError as error:
        print(f'rnea_sim: {error}', file=sys.stderr)
        exit_code = 1
    finally:
        counters = node.status()
        node.get_logger().info('done: ' + ', '.join(f'{k} {v}' for k, v in counters.items()))
        if node.recorder is not None:
            entry = node.fitness_entry()
            count = node.recorder.close(entry)
            node.get_logger().info(f'recorded {count} messages in {node.settings.record}')
            problems = fitness.problems(fitness.parse(entry))
            if problems and node.recorder.error is None:  # its metadata.yaml says so too
                print(f'rnea_sim: warning: the recording {node.settings.record!r}: '
                      f'{"; ".join(problems)} (see its metadata.yaml; to identify from, record '
                      'in lockstep or on a quiet machine, away from the joint limits)',
                      file=sys.stderr)
            if node.recorder.error is not None:  # a full disk: the run stopped there
                print(f'rnea_sim: {node.recorder.error}', file=sys.stderr)
                exit_code = 1
        # No callback may run into a destroyed node: the node goes only once the executor's
        # thread has ended (a loaded machine can take seconds to let it finish its callback).
        executor.shutdown(timeout_sec=SHUTDOWN_WAIT)
        spinner.join(timeout=SHUTDOWN_WAIT)
        node.inbox.close()
        if spinner.is_alive():
            node.get_logger().warning(f'the executor did not stop within {SHUTDOWN_WAIT:g} s: '
                                      'the process exits without destroying its node')
        else:
            node.destroy_node()
        rclpy.try_shutdown()
    return exit_code
