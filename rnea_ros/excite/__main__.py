"""``python -m rnea_ros.excite --urdf FILE --output DIR ...``: the script ``rnea_excite``."""
import sys

from rnea_ros.excite.cli import main

sys.exit(main())
