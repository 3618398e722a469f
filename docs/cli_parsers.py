"""The argparse parsers of the console scripts, for sphinx-argparse (``docs/cli.md``)."""
from rnea_ros.fleet.cli import build_parser as fleet_parser


def rnea_fleet():
    """Return the parser of ``rnea_fleet`` (its ``build_parser`` also returns option names)."""
    return fleet_parser()[0]
