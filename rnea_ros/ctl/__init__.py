"""
``rnea_ctl``: drive the node and the simulated robot without a ROS install (rclpy only).

A client like any other: it talks to the nodes over DDS (lifecycle_msgs and rcl_interfaces
services, the node's topics and its ``reset_collision`` service), never imports
``rnea_ros.node``. ``names`` holds the interface names it uses, ``trajectory_spec`` and
``values`` turn its input into message fields (no ROS), ``session`` the rclpy side,
``commands`` the subcommands, ``paths`` where the installed files are, ``cli`` the parser and
the exit codes. May import ``rnea_ros.demos`` (the example robots) and ``rnea_ros.sim.gap``
(the shipped gap files' folder) for ``rnea_ctl paths``.
"""

__all__ = ['cli', 'commands', 'names', 'paths', 'session', 'trajectory_spec', 'values']
