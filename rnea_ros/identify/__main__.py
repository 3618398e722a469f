"""``python -m rnea_ros.identify BAG ...``: the console script ``rnea_identify``."""
import sys

from rnea_ros.identify.cli import main

sys.exit(main())
