"""``python -m rnea_ros.ctl``: the same as ``rnea_ctl``."""
import sys

from rnea_ros.ctl.cli import main

sys.exit(main())
