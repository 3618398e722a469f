"""
rclpy subscriptions served outside the executor: a wait set on them alone, each message taken.

``PolledSubscriptions`` serves the node's control inputs (``rnea_ros.node.take_loop``) and the
simulated robot's command inputs (``rnea_ros.sim.polled``); ``discovery`` how often both
announce themselves on DDS (a Fast DDS profile they apply to themselves, before rclpy starts).
Imports rclpy only; the node and the sim both import it, never each other.
"""
from rnea_ros.polling.subscriptions import NotByExecutor, PolledSubscriptions

__all__ = ['NotByExecutor', 'PolledSubscriptions']
