"""
``rnea_bag``: the command line of the bag replay (``rnea_ros.bag.pipeline`` runs it).

The options are the fields of ``rnea_ros.bag.options.BagOptions``, parsed into one.

Usage::

    rnea_bag BAG [--urdf FILE [--xacro-arg NAME:=VALUE]] [--floating-base]
                 [--joint-states TOPIC] [--output DIR] [--write-bag] [--start S] [--end S]
                 [--joints J1,J2] [--window S]
                 [--lock JOINT=VALUE[,...]] [--lock-missing]
                 [--contacts LINK,LINK [--friction MU]] ...

``rnea_bag --help`` lists every option; ``rnea_ros.bag.pipeline`` says what it does and what
comes out. Errors are printed as one ``rnea_bag: error: ...`` line; the exit status is then 2
for bad input (bag, URDF, options, an output directory that holds files without
``--overwrite``: the errors of ``rnea_ros.errors``), 1 when the machine fails (a full disk).
"""
from __future__ import annotations

import argparse
import sys

from rnea_ros.bag.options import add_arguments, BagOptions
from rnea_ros.bag.pipeline import run
from rnea_ros.errors import UsageParser
from rnea_ros.tools.options import from_namespace
from rnea_ros.tools.run import run_tool
from rnea_ros.tools.text import print_timings


def build_parser() -> argparse.ArgumentParser:
    """Return the parser of ``rnea_bag``: the fields of ``BagOptions`` in their groups."""
    parser = UsageParser(
        prog='rnea_bag', description='Replay a rosbag2 through inverse dynamics (RNEA): '
        'predicted joint torques, their decomposition, residual against measured effort, plots.')
    add_arguments(parser)
    return parser


def parse(argv: list[str] | None = None) -> BagOptions:
    """Parse the command line (default: ``sys.argv``) into ``BagOptions``."""
    return from_namespace(build_parser().parse_args(argv), BagOptions)


def main(argv: list[str] | None = None) -> int:
    """Run ``rnea_bag``; return the exit status (``rnea_ros.tools.run``)."""
    options = parse(argv)
    return run_tool('rnea_bag', lambda: _analyse(options))


def _analyse(options: BagOptions) -> int:
    result = run(options)
    for warning in result.warnings:
        print(f'rnea_bag: warning: {warning}', file=sys.stderr)
    print(f'rnea_bag: {result.samples} samples -> {result.output}')
    if options.timings:
        print_timings(result.timings)
    return 0


if __name__ == '__main__':
    sys.exit(main())
