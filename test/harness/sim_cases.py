"""The sim tests' shared cases: a small MJCF arm, a URDF MuJoCo refuses, rnea_sim run to exit."""
from __future__ import annotations

import subprocess
import sys

BAD_INERTIA = """<robot name="bad">
  <link name="base"/>
  <link name="arm"><inertial><mass value="1"/>
    <inertia ixx="1" iyy="0.1" izz="0.1" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <joint name="j" type="revolute"><parent link="base"/><child link="arm"/>
    <axis xyz="0 0 1"/><limit lower="-1" upper="1" effort="10" velocity="1"/></joint>
</robot>"""


MUJOCO_REFUSES = ('MuJoCo cannot compile the URDF: Error: inertia must satisfy A + B >= C; use '
                  "'balanceinertia' to fix Element name 'arm', id 2")


ARM = """<mujoco>
  <worldbody><body name="a"><inertial pos="0 0 0" mass="1" diaginertia="1 1 1"/>
    {joint}</body></worldbody>{extra}
</mujoco>"""


def run_sim(*args: str, timeout: float = 120) -> subprocess.CompletedProcess:
    """Run the sim expecting it to exit by itself."""
    return subprocess.run([sys.executable, '-m', 'rnea_ros.sim', *args], capture_output=True,
                          text=True, timeout=timeout, stdin=subprocess.DEVNULL)
