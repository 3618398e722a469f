"""
Offline replay of one rosbag2 through the dynamics (console script ``rnea_bag``).

``cli`` parses the command line, ``pipeline.run`` is the run in stages (``reading`` its
inputs and samples, ``outputs`` the files it writes); ``rnea_ros.recording`` reads the
bag (joint series, derivatives), ``inputs`` the rest of what a run reads, ``decomposition``
splits the torques into terms, ``report``, ``plots``, ``htmlreport`` and ``progress`` write
what comes out (``downsample`` reduces long curves for the pictures, ``column_stats`` the
compiled passes over the columns), and ``staging`` stages them into the output directory
all at once, never touching other files (``rnea_identify`` and ``rnea_fleet`` write through
it too). Imports ``rnea_ros.dynamics``,
``rnea_ros.recording`` and ``rnea_ros.contacts``, never rclpy or ``rnea_ros.node``.
"""
