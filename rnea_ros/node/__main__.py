"""``python -m rnea_ros.node --ros-args ...``: the node, as the console script ``rnea_node``."""
import sys

from rnea_ros.node.main import main

sys.exit(main())
