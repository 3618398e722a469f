"""
The ROS 2 node ``rnea`` (console script ``rnea_node``, or ``python -m rnea_ros.node``).

The only package that imports rclpy and message types. ``main`` starts and stops it (the
console script), ``node`` is the node class (a lifecycle node; it wires ROS to the rest),
``lifecycle`` its transitions, ``messages`` builds and fills the ROS messages, ``parameters``
declares every parameter, ``settings`` checks them and loads the model, ``feedforward`` is the
ROS-free cycle logic, ``joint_input``/``trajectory``/``wrenches`` its inputs and outputs,
``safety`` the fault table, ``diagnostics``/``realtime``/``take_loop`` the threads and their
statistics, ``demo`` the node demo, ``closed_loop`` and ``closed_loop_demo`` the node driving
the simulated robot (``rnea_sim``, started as a process: never imported). Imports
``rnea_ros.dynamics`` and ``rnea_ros.contacts``, never ``rnea_ros.bag``. ``payload`` reads and
checks the payload parameters.
"""
