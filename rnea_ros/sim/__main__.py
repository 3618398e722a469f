"""``python -m rnea_ros.sim``: the simulated robot (see ``rnea_ros.sim.main``)."""
import sys

from rnea_ros.sim.main import main

sys.exit(main())
