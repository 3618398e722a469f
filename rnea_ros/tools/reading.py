"""
The options of reading joint_states that every tool shares, each declared once.

``rnea_bag``'s ``BagOptions`` and ``rnea_identify``'s options declare them with these functions,
each in a group of its own command line: the same flag, default and help in both.
"""
from __future__ import annotations

from rnea_ros.recording import differentiate
from rnea_ros.recording.plausibility import UnitError
from rnea_ros.tools.options import option, SPAN

__all__ = ['clock', 'ignore_extra_joints', 'lock', 'lock_missing', 'reconvert', 'window']


def clock(group: str):
    """Declare the ``--clock`` option in ``group``."""
    return option('header', group, choices=('header', 'receive'),
                  help='sample times: message header stamps (default) or receive times')


def ignore_extra_joints(group: str):
    """Declare the ``--ignore-extra-joints`` option in ``group``."""
    return option(
        False, group, action='store_true',
        help='skip joint_states names that the URDF does not have')


def lock(group: str):
    """Declare the ``--lock`` option in ``group``."""
    return option(
        None, group, metavar='JOINT=VALUE[,...]', help='hold these URDF joints at a fixed '
        'position (rad, or m for prismatic joints; inside the joint limits), e.g. a gripper '
        'the bag does not publish; overrides the bag')


def lock_missing(group: str):
    """Declare the ``--lock-missing`` option in ``group``."""
    return option(
        False, group, action='store_true', help='hold every URDF joint the bag never '
        'publishes at 0 (or at the limit nearest to 0); listed in a warning and the summary')


def window(group: str):
    """Declare the ``--window`` option in ``group``."""
    return option(
        differentiate.AUTO, group, type=float, bounds=SPAN, words=(differentiate.AUTO,),
        metavar='S',
        help='fit window in seconds, or auto (default): per joint the candidate of the '
        'smallest predicted RMS acceleration error (noise + bias), reported in summary.json')


def reconvert(error: UnitError, prefix: str = '') -> UnitError:
    """
    Word a recording in a wrong unit for the tools that read bags: the log reconverted.

    ``rnea_convert --position-unit`` converts the positions of a log when it writes the bag;
    no tool that reads the bag rescales them. ``prefix``: a path the message begins with.
    """
    return error.worded(f'reconvert the log with rnea_convert --position-unit {error.unit}',
                        prefix)
