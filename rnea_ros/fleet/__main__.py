"""``python -m rnea_ros.fleet BAG_OR_DIR ... --output DIR``: the console script ``rnea_fleet``."""
import sys

from rnea_ros.fleet.cli import main

sys.exit(main())
