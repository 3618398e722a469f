"""
Excitation design (console script ``rnea_excite``): the motion to record for identification.

``fourier`` writes periodic joint trajectories at rest at the start of every period as
Fourier series linear in their coefficients, ``limits`` gathers the URDF limits, the rest
configuration and the planes a link stays above, ``design`` optimises the coefficients for
the conditioning of the weighted base regressor (SLSQP) within the limits, ``outputs``
writes the trajectory (JointTrajectory YAML, CSV, plot) and the report, ``run`` runs the
steps and ``cli`` is the command line. Imports ``rnea_ros.dynamics``, ``rnea_ros.identify``
(the parameter layout and base parameters), ``rnea_ros.recording`` (the ``JOINT=VALUE``
parser) and ``rnea_ros.bag`` (options, staged output directory, plotly building blocks),
never rclpy.
"""
