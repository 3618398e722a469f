"""
The node tests' DDS side: their status reading, message builders and streams.

``status``/``has_level`` read the node's diagnostics, ``Streams`` holds one node's publishers,
collectors and joint_states tick, ``standing_solo`` starts solo12 standing on its feet.
"""
from __future__ import annotations

from builtin_interfaces.msg import Time
from diagnostic_msgs.msg import DiagnosticArray
from geometry_msgs.msg import WrenchStamped
from harness.oracle import robot_path
from harness.ros_harness import BEST_EFFORT, RosHarness
from harness.standing import SOLO_FEET, standing
from nav_msgs.msg import Odometry
import numpy as np
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

from rnea_ros import RobotModel

STATUS = '/rnea: feed-forward torques'
OK, WARN, ERROR = 0, 1, 2
PANDA_ARM = tuple(f'panda_joint{k}' for k in range(1, 8))


def joint_state(names, q, v=None, stamp=(7, 123)) -> JointState:
    msg = JointState(name=list(names), position=[float(x) for x in q])
    if v is not None:
        msg.velocity = [float(x) for x in v]
    msg.header.stamp = Time(sec=stamp[0], nanosec=stamp[1])
    return msg


def accel_point(names, a, positions=(), velocities=()) -> JointTrajectory:
    point = JointTrajectoryPoint(accelerations=[float(x) for x in a],
                                 positions=[float(x) for x in positions],
                                 velocities=[float(x) for x in velocities])
    return JointTrajectory(joint_names=list(names), points=[point])


def status(msg: DiagnosticArray):
    """(level, message, values) of the node's status in a DiagnosticArray, or None."""
    for item in msg.status:
        if item.name == STATUS:
            return (item.level[0] if isinstance(item.level, bytes) else item.level,
                    item.message, {kv.key: kv.value for kv in item.values})
    return None


def has_level(level: int, key: str | None = None, value: str | None = None):
    def predicate(msg):
        found = status(msg)
        if found is None or found[0] != level:
            return False
        return key is None or (value in found[2].get(key, '') if value else key in found[2])
    return predicate


def stamped(stamp):
    return lambda msg: (msg.header.stamp.sec, msg.header.stamp.nanosec) == stamp


class Streams:
    """Standard set-up for one node: publishers, collectors, a periodic joint_states tick."""

    def __init__(self, ros: RosHarness, joint_names, q, v, floating: bool = False):
        self.ros = ros
        self.js_pub = ros.publisher(JointState, 'joint_states', BEST_EFFORT)
        self.desired_pub = ros.publisher(JointTrajectory, 'desired_accelerations')
        self.torques = ros.collect(JointState, 'joint_torques')
        self.command = ros.collect(Float64MultiArray, 'feedforward_effort')
        self.diagnostics = ros.collect(DiagnosticArray, '/diagnostics')
        self.names, self.q, self.v = list(joint_names), np.array(q), np.array(v)
        self.stamp = (7, 123)
        self.send_joint_states = True
        self.desired: JointTrajectory | None = None
        self.extra: list = []  # (publisher, message) pairs sent on every tick
        if floating:
            self.odom_pub = ros.publisher(Odometry, 'odometry', BEST_EFFORT)

    def tick(self) -> None:
        if self.send_joint_states:
            self.js_pub.publish(joint_state(self.names, self.q, self.v, self.stamp))
        if self.desired is not None:
            self.desired_pub.publish(self.desired)
        for publisher, msg in self.extra:
            publisher.publish(msg)

    def torque_for(self, stamp=None, timeout=15.0, predicate=lambda msg: True):
        """Return the next joint_torques message answering joint_states with ``stamp``."""
        self.stamp = stamp or self.stamp
        return self.ros.wait_for(self.torques, lambda m: stamped(self.stamp)(m) and predicate(m),
                                 timeout, self.tick)

    def diagnostic(self, predicate, timeout=10.0):
        return self.ros.wait_for(self.diagnostics, predicate, timeout, self.tick)

    @classmethod
    def on_panda(cls, ros: RosHarness, panda, seed: int, stamp, **params):
        """
        Start the node on the panda (200 Hz unless ``params`` say), stream a random state.

        Return once it answers ``stamp`` with the state's torques at zero acceleration
        (``expected``).
        """
        model, xml = panda
        ros.start_node({'robot_description': xml, 'rate': 200.0, **params})
        q, v, _ = random_arm_state(model, seed)
        streams = cls(ros, model.joint_names, q, v)
        streams.expected = model.rnea(q, v, np.zeros(model.nv))
        streams.torque_for(stamp, predicate=lambda m: np.allclose(m.effort, streams.expected))
        return streams


def random_arm_state(model: RobotModel, seed: int = 1):
    rng = np.random.default_rng(seed)
    q = rng.uniform(-1.0, 1.0, model.nq)
    v = rng.uniform(-1.0, 1.0, model.nv)
    a = rng.uniform(-2.0, 2.0, model.nv)
    return q, v, a


def odometry_at(pose) -> Odometry:
    """Odometry at rest at ``pose`` = q[:7] = [x y z qx qy qz qw]."""
    msg = Odometry()
    msg.header.frame_id, msg.child_frame_id = 'odom', 'base_link'
    p, o = msg.pose.pose.position, msg.pose.pose.orientation
    p.x, p.y, p.z = (float(x) for x in pose[:3])
    o.x, o.y, o.z, o.w = (float(x) for x in pose[3:7])
    return msg


def wrench_array(msg: WrenchStamped) -> np.ndarray:
    f, t = msg.wrench.force, msg.wrench.torque
    return np.array([f.x, f.y, f.z, t.x, t.y, t.z])


def standing_solo(ros, params: dict):
    """solo12 standing on its four feet (point contacts from the names only), at rest."""
    model, q = standing('solo12')
    ros.start_node({'robot_description': robot_path('solo12').read_text(),
                    'floating_base': True, 'rate': 200.0, 'contacts': list(SOLO_FEET),
                    **params})
    streams = Streams(ros, model.joint_names[1:], q[7:], np.zeros(12), floating=True)
    streams.extra = [(streams.odom_pub, odometry_at(q[:7]))]
    feet = {link: ros.collect(WrenchStamped, f'contact_wrenches/{link}') for link in SOLO_FEET}
    return model, q, streams, feet
