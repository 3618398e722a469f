"""``python -m rnea_ros.convert LOG ...``: the console script ``rnea_convert``."""
import sys

from rnea_ros.convert.cli import main

sys.exit(main())
