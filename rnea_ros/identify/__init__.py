"""
Identification of a fixed-base robot from bags (console script ``rnea_identify``).

``samples`` reads bags into q, v, a and effort (through ``rnea_ros.recording``), ``parameters``
lays out the unknowns (inertial parameters per body, friction and armature per joint),
``base`` finds the identifiable combinations, ``fit`` solves weighted least squares from
normal equations accumulated in chunks (``filtering``: one low-pass on torques and regressor;
``covariance``: standard deviations for correlated residuals), ``physical`` finds consistent
link inertias near the URDF (an SDP, cvxpy), ``trust`` says when not to trust them,
``urdf_out``/``report``/``plots`` make what comes out, ``outputs``
writes it (all files or none, as ``rnea_bag`` does), ``pipeline`` runs the steps and ``cli``
is the command line. Imports ``rnea_ros.dynamics``, ``rnea_ros.recording`` and
``rnea_ros.bag`` (its output directory, report formatting, plot grouping and joint_states
options), never rclpy or ``rnea_ros.node``. ``payload`` identifies a payload alone
(``--payload``); ``current`` fits each joint's effort gain first (``--effort current``: an
effort proportional to the torque, anchored by a payload of known mass).
"""
