"""
The simulated robot: MuJoCo physics from the node's URDF, with a reality gap, driven over ROS.

An MJCF robot runs as it is, without a gap (``mjcf_robot``).

``plant`` (``Plant``: stepping, state in ``RobotModel``'s layout, sensors, pushes, contact
truth), ``gap`` (the reality gap file), ``true_urdf`` (the gap written into the URDF),
``mjmodel`` (URDF -> MuJoCo model), ``mjcf_robot`` (an MJCF file -> MuJoCo model and nominal
model), ``controller`` and ``trajectory`` (the torque each
command interface makes, and the references), ``loop`` (the closed loop in one process)
need no ROS; the rclpy node (``node``, ``main``, ``parameters``, ``messages``, ``record``)
builds on them; ``settings`` declares the parameters with the node's ``Parameter`` (ROS-free).
Imports mujoco and rclpy, ``rnea_ros.dynamics``, ``rnea_ros.params.parameter``; never
``rnea_ros.node``. Nothing else in the package imports mujoco: ``import rnea_ros`` does not
load it.
"""
