"""
How the node and the simulated robot announce themselves on DDS: often, so clients find them.

A Fast DDS participant announces itself every 3 s by default. A process that joins (``rnea_ctl``
calling the node's service) is answered at once when its first announcement is heard, but when
that reply is missed it waits for the next periodic announcement: 0 to 3 s, measured as 1.4 to
2.7 s in half of the calls on a loaded machine (``bench/bench_ctl.py``); a client finding the
node and its service took a median 0.30 s with announcements every 0.25 s, 0.18 s every 0.1 s
and no less every 0.05 s (load 5, interleaved). ``announce_often()``, called before
``rclpy.init``, points Fast DDS at ``fastdds_discovery.xml`` (beside this module: an
announcement every 0.1 s, nothing else changed) unless the process was given a Fast DDS
profile of its own (``FASTDDS_DEFAULT_PROFILES_FILE``, the older ``FASTRTPS_...`` name or a
``DEFAULT_FASTDDS_PROFILES.xml`` in the working directory), uses a discovery server, or runs
another middleware. No rclpy here: only the environment of this process.
"""
from __future__ import annotations

import os
from pathlib import Path

__all__ = ['announce_often', 'PROFILE']

PROFILE = Path(__file__).with_name('fastdds_discovery.xml')
GIVEN = ('FASTDDS_DEFAULT_PROFILES_FILE', 'FASTRTPS_DEFAULT_PROFILES_FILE', 'ROS_DISCOVERY_SERVER')
CWD_PROFILES = ('DEFAULT_FASTDDS_PROFILES.xml', 'DEFAULT_FASTRTPS_PROFILES.xml')


def announce_often(environ=os.environ) -> bool:
    """Apply ``PROFILE`` to this process's DDS participant unless it has one; tell whether."""
    middleware = environ.get('RMW_IMPLEMENTATION', 'rmw_fastrtps_cpp')
    if not middleware.startswith('rmw_fastrtps') or any(environ.get(name) for name in GIVEN) \
            or any(Path(name).is_file() for name in CWD_PROFILES):
        return False
    environ['FASTDDS_DEFAULT_PROFILES_FILE'] = str(PROFILE)
    return True
