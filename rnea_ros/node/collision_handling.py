"""
What the node does once at a collision: log it, publish its event, stop path a.

``CollisionHandling.take`` runs under the node's lock right after a joint_states sample was
observed: it takes the observer's new events and, when a collision has just latched (a
``collision_reaction`` other than none) while the node relays trajectories (path a:
``joint_trajectory`` -> ``joint_trajectory_with_effort``), builds the trajectory that makes the
joint_trajectory_controller hold the measured position (``observer_messages.stop_trajectory``).
``send`` then logs and publishes outside the lock. While the collision stays latched,
``blocks`` tells the node to drop the planner's trajectories (counted as rejected
``joint_trajectory (collision)``); after a reset they are relayed again (a new goal is needed:
the controller keeps holding). ``reset`` is ``<node>/reset_collision``: it clears a collision
and the loop watch's stop (``unstable_reaction``); ``CollisionHandling.on_reset`` serves it.
"""
from __future__ import annotations

import threading

from rnea_ros.control import collision_events
from rnea_ros.errors import InputError
from rnea_ros.node.cycles import Cycles
from rnea_ros.node.observer_messages import stop_trajectory
from rnea_ros.node.outputs import NodeOutputs


class CollisionHandling:
    """
    The node's once-per-collision actions (module docstring).

    ``logger``: the node's; ``outputs`` publishes the events and the stop; ``cycles`` holds
    the core whose observer ``reset`` clears.
    """

    def __init__(self, logger, outputs: NodeOutputs, cycles: Cycles):
        self._logger, self._outputs, self._cycles = logger, outputs, cycles
        self.relayed: tuple[str, ...] | None = None  # joints of the last relayed trajectory
        self._latches = 0  # the observer's latches already acted on
        # Orders the relayed trajectories and the stop trajectory on joint_trajectory_with_effort.
        self.trajectory_lock = threading.Lock()

    def take(self, core):
        """Return (events, stop trajectory or None) to ``send``; under the node's lock."""
        observer = core.observer
        if observer is None:
            return None
        events = observer.take_events() if observer.events else []
        stop = None
        if observer.latches != self._latches:
            self._latches = observer.latches
            if observer.latched and self.relayed is not None:
                stop = self._stop(core, self.relayed)
        return (events, stop) if events or stop is not None else None

    @staticmethod
    def _stop(core, joints):
        index = {name: core.model.joint(name).idx_v for name in joints
                 if name in core.joint_names}
        try:
            gravity = core.model.gravity_torques(core.state.q)
        except InputError:
            gravity = core.state.q * 0.0  # no finite hold torque: the controller's PID alone
        names = [name for name in joints if name in index]
        return stop_trajectory(names, [core.state.q[index[name]] for name in names],
                               [gravity[index[name]] for name in names])

    def send(self, taken) -> None:
        """Log and publish what ``take`` returned (outside the lock)."""
        if taken is None:
            return
        events, stop = taken
        logger = self._logger
        if stop is not None:
            with self.trajectory_lock:
                self._outputs.publish_trajectory(stop)
            logger.error(f'collision: joint_trajectory_with_effort told to hold '
                         f'{list(stop.joint_names)} at the measured position; joint_trajectory '
                         f'dropped until the collision is reset')
        for event in events:
            line = collision_events.describe(event)
            (logger.error if event['kind'] == 'detected' else logger.info)(line)
            self._outputs.publish_event(event)

    def blocks(self, core) -> bool:
        """Tell whether a latched collision holds the planner's trajectories back."""
        return core.observer is not None and core.observer.reacting

    def on_reset(self, request, response):
        """Serve ``~/reset_collision`` (std_srvs/Trigger): ``reset`` the core's state."""
        with self._cycles.lock:
            response.success, response.message, cleared = reset(self._cycles.core)
        if cleared:
            self._logger.info(f'{response.message} by ~/reset_collision')
        return response


def reset(core) -> tuple[bool, str, bool]:
    """Clear a collision and the loop watch's stop: (success, message, something cleared)."""
    observer = None if core is None else core.observer
    collision = observer is not None and observer.reset()
    stop = core is not None and core.watch.reset()
    message = '; '.join(text for text, done in (
        ('collision cleared', collision),
        ('loop stop cleared: holding the pose until a newer desired motion', stop)) if done)
    if not message:
        message = ('no observer (observer: false, or no model yet)' if observer is None
                   else 'no collision to clear')
    return observer is not None or stop, message, collision or stop
