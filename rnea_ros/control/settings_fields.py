"""
The fields of ``Settings``: one per declared parameter the core reads, one mapping per family.

Generated from rnea_ros/control/declaration.py by
python -m rnea_ros.control.parameter_docs --settings: edit the declaration, not this file.
``settings.Settings`` holds them with its behaviour (``updated``, ``validate``); its mappings
are frozen when a snapshot is made.
"""
from collections.abc import Mapping
from dataclasses import dataclass, field


@dataclass(frozen=True)
class SettingsFields:
    """The snapshot's fields, with the declared defaults (arrays: tuples, unset: ())."""

    rate: float = 500.0
    cycle_trigger: str = 'joint_states'
    floating_base: bool = False
    gravity: tuple = (0.0, 0.0, -9.81)
    command_joints: tuple = ()
    state_source: str = 'measured'
    input_timeout: float = 0.1
    max_input_timeout: float = 1.0
    acceleration_timeout: float = 0.1
    base_acceleration_time_constant: float = 0.005
    fault_output: str = 'hold_gravity'
    effort_limit_scale: float = 1.0
    unstable_reaction: str = 'stop'
    torque_terms: str = 'full'
    control_law: str = 'feedforward'
    gain_check: str = 'refuse'
    prediction: str = 'none'
    command_delay: float = 0.0
    prediction_horizon: float = 0.5
    stall_payload_estimate: str = ''
    gravity_compensated_by_robot: bool = False
    thread_priority: int = 50
    inertia_check: str = 'error'
    contacts: tuple = ()
    wrench_topics: tuple = ()
    publish_joint_reaction_wrenches: bool = False
    locked_joints: tuple = ()
    locked_positions: tuple = ()
    max_trajectory_points: int = 1000
    friction_velocity_threshold: float = 0.01
    friction_model: str = 'coulomb-viscous-offset'
    friction_compensation: bool = False
    observer: bool = False
    observer_gain: float = 50.0
    observer_queue: int = 256
    measured_effort: str = 'link_side'
    wrench_estimation_links: tuple = ()
    collision_reaction: str = 'none'
    collision_stop_time: float = 0.1
    collision_debounce: float = 0.01
    collision_auto_reset: float = 0.0
    collision_profiles: tuple = ()
    collision_profile: str = ''
    actuation: Mapping = field(default_factory=dict)
    collision_thresholds: Mapping = field(default_factory=dict)
    collision_profile_thresholds: Mapping = field(default_factory=dict)
    wrench_points: Mapping = field(default_factory=dict)
    gains: Mapping = field(default_factory=dict)
