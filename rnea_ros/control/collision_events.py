"""
The words of a collision event without ROS: the log line and the event message's key-values.

``ObserverOutput.take_events`` gives each detection (``kind`` 'detected') and each auto reset
(``kind`` 'auto_reset') once; the node logs ``describe`` (ERROR for a detection, INFO for an
auto reset) and publishes ``key_values`` as the key-values of a diagnostic_msgs/DiagnosticStatus on
``collision_events``.
"""
from __future__ import annotations


def describe(event: dict) -> str:
    """Return the one log line of ``event`` (joints, peak residual, forces, reaction)."""
    if event['kind'] == 'auto_reset':
        return (f'collision cleared by collision_auto_reset: at rest and under the thresholds '
                f'for {event["after"]:g} s (stamp {event["stamp"]:.6f} s)')
    forces = ''.join(f', estimated force at {link} {force:.3g} N'
                     for link, force in event['forces'].items())
    profile = event['profile'] or 'default'
    return (f'collision detected at joint(s) {", ".join(event["joints"])} (stamp '
            f'{event["stamp"]:.6f} s, beyond the threshold since {event["start"]:.6f} s): peak '
            f'|r| {event["peak"]:.4g} at {event["joint"]} (threshold {event["threshold"]:g}, '
            f'profile {profile}){forces}; reaction {event["reaction"]}')


def key_values(event: dict) -> dict[str, str]:
    """Return the key-values (strings) of the event message of ``event``."""
    if event['kind'] == 'auto_reset':
        return {'event': 'auto_reset', 'stamp [s]': f'{event["stamp"]:.9f}',
                'at rest and under the thresholds for [s]': f'{event["after"]:g}'}
    result = {'event': 'detected', 'stamp [s]': f'{event["stamp"]:.9f}',
              'start [s]': f'{event["start"]:.9f}', 'joints': ','.join(event['joints']),
              'joint': event['joint'], 'peak residual [N m or N]': f'{event["peak"]:.6g}',
              'threshold [N m or N]': f'{event["threshold"]:g}',
              'profile': event['profile'], 'reaction': event['reaction']}
    for link, force in event['forces'].items():
        result[f'estimated force at {link} [N]'] = f'{force:.6g}'
    return result
