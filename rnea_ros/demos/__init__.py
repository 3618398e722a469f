"""
The demos: what a user runs first to see the library and the node work.

``library`` (console script ``rnea_demo``) runs a smooth motion of a real robot through
``RobotModel.rnea`` and prints the torques; ``node_demo`` (``rnea_node_demo``) starts the node,
feeds it that motion over DDS and checks its torques; ``closed_loop`` starts the simulated robot
(``rnea_sim``) and the node as processes and drives the arm, and ``closed_loop_demo`` judges that
run (the tracking with and without the feed-forward, every checked torque against
``RobotModel.rnea``). ``motions`` holds the demos' motion and robot. The node and the simulated
robot run as processes: never imported here. ``process`` is the one launcher of those processes
(private domain, log, SIGINT then SIGKILL, exit code) and of this process's rclpy side, which
the demos, the benches and the tests share.
"""

__all__ = ['closed_loop', 'closed_loop_demo', 'library', 'motions', 'node_demo', 'process']
