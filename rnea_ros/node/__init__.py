"""
The ROS 2 node ``rnea`` (console script ``rnea_node``, or ``python -m rnea_ros.node``).

The ROS adapter around ``rnea_ros.control`` (the cycle, its parameters and settings, without ROS),
and the only package of the node that imports rclpy and message types. ``main`` starts and stops
it (the console script), ``node`` is the node class (a lifecycle node wiring the objects below),
``cycles`` the data path its threads share (the core under its lock, each cycle run and
published), ``inputs`` its subscriptions' callbacks, ``outputs`` its publishers and preallocated
messages, ``lifecycle`` its transitions' steps and threads, ``model_install`` robot_description
to an installed core, ``diagnostics`` its /diagnostics, ``collision_handling`` the collision
events it logs and publishes, ``parameters`` declares the parameters of
``rnea_ros.control.declaration`` to ROS and applies live sets, ``model_loading`` receives and
parses robot_description in a process of its own, ``messages`` and ``observer_messages`` build
and fill the ROS messages, ``take_loop`` takes the inputs on the control thread
(``rnea_ros.timing.realtime`` schedules it), ``launching`` is what the launch files share,
``interfaces`` declares the topics and the service (name, type, QoS, meaning).
Imports ``rnea_ros.control``, ``rnea_ros.dynamics``, ``rnea_ros.timing`` and
``rnea_ros.polling``; never ``rnea_ros.bag`` nor ``rnea_ros.sim``.
"""

__all__ = ['collision_handling', 'cycles', 'diagnostics', 'inputs', 'interfaces', 'launching',
           'lifecycle', 'main', 'messages', 'model_install', 'model_loading', 'node',
           'observer_messages', 'outputs', 'parameters', 'take_loop']
