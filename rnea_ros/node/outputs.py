"""
The node's outputs: its publishers of a configured node and each model's preallocated messages.

``NodeOutputs`` creates, from their declarations in ``interfaces``, the publishers that live from
configure to cleanup: joint_torques, feedforward_effort, joint_trajectory_with_effort, one
``contact_wrenches/<link>`` per contact link, the observer's (``ObserverPublishers``) and, as
each model comes, one ``joint_reaction_wrenches/<joint>`` per reaction joint (kept over models).
``messages_of`` preallocates a model's messages and pairs them with their publishers, in the
order a cycle publishes them (``cycles.Cycles.install`` takes them); ``release`` destroys the
publishers. It also publishes what is not a cycle's: a relayed or stop trajectory and the
collision events (named by the node's status name and the model's robot name).
"""
from __future__ import annotations

from rnea_ros.node import interfaces as io
from rnea_ros.node.messages import create_publisher, OutputMessages
from rnea_ros.node.observer_messages import event_message, ObserverMessages, ObserverPublishers

__all__ = ['NodeOutputs']


class NodeOutputs:
    """
    The publishers of ``node`` between configure and cleanup (module docstring).

    ``status_name``: the name the collision events carry (that of the node's diagnostics).
    """

    def __init__(self, node, status_name: str):
        self._node = node
        self.status_name = status_name
        self.robot_name = ''  # the installed model's name ('' without one)
        self._publishers: list = []
        self.torques = self.command = self.trajectory = None
        self.contacts: list = []
        self.reactions: dict[str, object] = {}
        self.observer: ObserverPublishers | None = None

    def create(self, settings) -> None:
        """Create the publishers of a node configured with ``settings`` (configure)."""
        self.torques = self.publisher(io.JOINT_TORQUES)
        self.command = self.publisher(io.FEEDFORWARD_EFFORT)
        self.trajectory = self.publisher(io.TRAJECTORY_WITH_EFFORT)
        # Wrench outputs: contact links are parameters, the joints come with each model.
        self.contacts = [self.wrench_publisher(io.CONTACT_WRENCHES, contact.link)
                         for contact in settings.contacts]
        self.observer = (ObserverPublishers(self, settings.wrench_estimation_links)
                         if settings.observer else None)

    def publisher(self, interface: io.Interface, name: str | None = None):
        """Create the publisher of a declared interface, destroyed by ``release``."""
        publisher = create_publisher(self._node, interface, name)
        self._publishers.append(publisher)
        return publisher

    def wrench_publisher(self, family: io.Interface, name: str):
        """
        Create the publisher of one topic of a family (``contact_wrenches/<link>``, ...).

        The link or joint ``name`` replaces the family name's ``<...>`` (checked by
        ``parameters.check_topic_names``).
        """
        return self.publisher(family, family.name.split('<')[0] + name)

    def messages_of(self, core) -> tuple:
        """
        Return the preallocated messages of ``core`` and a cycle's (publisher, message) pairs.

        (``OutputMessages``, pairs in publishing order, ``ObserverMessages`` or None): what
        ``Cycles.install`` takes; the reaction joints new to this model get their publishers.
        """
        messages = OutputMessages(core)
        publications = [(self.torques, messages.torques), (self.command, messages.command)]
        publications += zip(self.contacts, messages.contacts)
        reactions = core.torques.reactions
        if reactions is not None:
            for joint in reactions.joints:
                if joint not in self.reactions:
                    self.reactions[joint] = self.wrench_publisher(io.JOINT_REACTION_WRENCHES,
                                                                  joint)
            publications += zip((self.reactions[j] for j in reactions.joints),
                                messages.reactions)
        observer = (None if core.observer is None else
                    ObserverMessages(core.observer, self.observer))
        self.robot_name = core.model.name
        return messages, publications, observer

    def publish_trajectory(self, msg) -> None:
        """Publish a relayed trajectory (or a collision's stop) on joint_trajectory_with_effort."""
        self.trajectory.publish(msg)

    def publish_event(self, event: dict) -> None:
        """Publish a collision event (``ObserverOutput.take_events``) on collision_events."""
        self.observer.events.publish(event_message(event, self.status_name, self.robot_name))

    def release(self) -> None:
        """Destroy the publishers (cleanup); the cycles must no longer hold them."""
        for publisher in self._publishers:
            self._node.destroy_publisher(publisher)
        self._publishers = []
        self.torques = self.command = self.trajectory = self.observer = None
        self.contacts, self.reactions, self.robot_name = [], {}, ''
