"""
Offline replay of one rosbag2 through the dynamics (console script ``rnea_bag``).

``cli`` parses the command line, ``run`` is the pipeline, ``storage`` reads and writes bags
(rosbags; ``mcapwrite`` writes MCAP chunks in bulk), ``cdr`` decodes JointState fast,
``replay`` assembles the samples, ``differentiate`` estimates derivatives, ``decomposition``
splits the torques into terms, ``report``, ``plots``, ``htmlreport`` and ``progress`` write
what comes out (``downsample`` reduces long curves for the pictures), and ``outputs`` stages
them into the output directory all at once, never touching other files (``rnea_identify``
and ``rnea_fleet`` write through it too). Imports
``rnea_ros.dynamics`` and ``rnea_ros.contacts``, never rclpy or ``rnea_ros.node``.
"""
