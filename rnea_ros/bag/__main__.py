"""``python -m rnea_ros.bag BAG ...``: the bag tool, as the console script ``rnea_bag``."""
import sys

from rnea_ros.bag.cli import main

sys.exit(main())
