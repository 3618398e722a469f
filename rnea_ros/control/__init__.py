"""
The node's core without ROS: what the ``rnea`` node computes each cycle, and its parameters.

``declaration`` declares every node parameter once (``rnea_ros.params.parameter`` says what one is
and checks a value; ``parameter_docs`` generates ``config/rnea.yaml`` and the docs' table from it:
``python -m rnea_ros.control.parameter_docs``), ``settings`` holds their checked values (its fields
generated into ``settings_fields``) and checks a model against them, ``core`` is the cycle's
wiring (state in, torques and wrenches out: ``cycle_state`` the inputs merged, ``reference`` the
desired motion followed, ``cycle_torques`` the torques), ``joint_input``/``trajectory``/
``wrenches`` its inputs and outputs, ``safety`` the fault table, ``status`` the cycle's account,
``cycle_kernels`` its jitted helpers, ``control_law`` the feedback laws and the damped rest,
``observer_outputs`` the momentum observer's torques, wrenches and collisions (``observer_queue``
every sample in stamp order, ``collision_reaction`` the stop, ``collision_events`` what each
detection says), ``payload`` the payload parameters, ``diagnostics`` the statistics the node
reports, ``loop_margin`` whether a feedback law's gains hold the loop they close one tick late
(``gain_check`` the node's use of it), ``prediction`` the state a command will meet (the model
integrated over the command delay; ``cycle_prediction`` the cycles' use of it), ``loop_watch``
whether the loop holds as the cycles run. Imports ``rnea_ros.dynamics``, ``rnea_ros.contacts``,
``rnea_ros.observer`` and ``rnea_ros.params``; never rclpy nor a message type: ``rnea_ros.node``
is the ROS adapter around it.
"""
# Submodules, imported by who needs them: the node's --help reads the declaration alone.
__all__ = ['collision_events', 'collision_reaction', 'control_law', 'core', 'cycle_kernels',
           'cycle_prediction', 'cycle_state', 'cycle_torques', 'declaration', 'desired',
           'diagnostics', 'gain_check', 'joint_input', 'loop_margin', 'loop_watch',
           'observer_outputs', 'observer_queue', 'parameter_docs', 'payload', 'prediction',
           'reference', 'safety', 'settings', 'settings_fields', 'status', 'trajectory',
           'trajectory_efforts', 'wrenches']
