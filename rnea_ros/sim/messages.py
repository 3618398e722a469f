"""The simulated robot's message helpers: stamps (integer nanoseconds) and wrench messages."""
from __future__ import annotations

from builtin_interfaces.msg import Time
from geometry_msgs.msg import WrenchStamped
import numpy as np


def stamp_of(nanoseconds: int) -> Time:
    """Return the stamp of a time in integer nanoseconds."""
    return Time(sec=nanoseconds // 1_000_000_000, nanosec=nanoseconds % 1_000_000_000)


def nanoseconds(stamp) -> int:
    """Return a stamp (``builtin_interfaces/Time``) in integer nanoseconds."""
    return stamp.sec * 1_000_000_000 + stamp.nanosec


def wrench_msg(link: str, wrench: np.ndarray, time_msg: Time) -> WrenchStamped:
    """Return the WrenchStamped of ``wrench`` [force; torque] on ``link``, in its frame."""
    msg = WrenchStamped()
    msg.header.stamp = time_msg
    msg.header.frame_id = link
    f, t = msg.wrench.force, msg.wrench.torque
    f.x, f.y, f.z, t.x, t.y, t.z = (float(x) for x in wrench)
    return msg
