"""
The reality gap: how the simulated robot differs from the URDF the node is given.

A gap file is YAML; every key is optional and an absent key means no difference::

    seed: 7                       # the random draws below (link errors, sensor offsets, noise)
    inertia_errors:               # drawn once per start, per moving link, from the seed
      mass: 0.05                  # relative std of the link's mass (clipped to +-3 std)
      com: 0.005                  # std of the centre of mass shift per axis [m]
      inertia: 0.05               # relative std of the rotational inertia
    links:                        # exact changes of named links, after the random ones
      panda_link4: {mass_scale: 1.1, com_shift: [0, 0.01, 0], inertia_scale: 1.0}
    payload:                      # an unmodelled rigid body fixed to a link
      link: tip                   # a link name, or tip: the last link of the longest chain
      mass: 0.6                   # [kg]
      com: [0, 0, 0.05]           # in the link frame [m]
      inertia: [1e-3, 1e-3, 1e-3] # principal moments about the com, link axes [kg m^2]
    joints:                       # every actuated joint; per joint under its name
      armature: 0.1               # reflected rotor inertia [kg m^2 or kg]
      coulomb: 0.5                # dry friction [N m or N] (MuJoCo frictionloss: real stiction)
      viscous: 0.3                # viscous friction [N m s/rad or N s/m]
      panda_joint7: {armature: 0.02, coulomb: 0.2, viscous: 0.05}
    torque_sensor:
      noise: 0.05                 # std of white noise on each effort reading [N m]
      offset: 0.2                 # std of a constant per-joint bias, drawn from the seed [N m]
      gain: {panda_joint1: 0.8}   # torque per unit of the reading: a reading of motor current
                                  # is (torque + bias + noise) / gain; a number: every joint
    encoder_resolution: 1.0e-5    # position quantum [rad or m]; 0: exact
    joint_states:
      jitter: 1.0e-4              # std of the publishing delay [s] (never reorders messages)
      drop: 0.001                 # probability that a joint_states message is not published
      outage: {start: 4.5, duration: 0.5}  # the network down: no joint_states from start
                                  # [s of sim time] for duration [s]
    contact_spheres:              # feet on the floor plane (floating base)
      FL_FOOT: {radius: 0.02, position: [0, 0, 0], friction: 0.8}

``Gap.none()`` (``--gap none``) is the URDF's own rigid-body dynamics: no errors, no friction,
exact sensors. A name without a path (``load_gap('default')``) reads a gap shipped with the
package in ``gaps/``: ``default`` (an arm), ``go2`` and ``solo12`` (the quadrupeds' feet).
Every number is bounded by what a real robot's data can be (``LIMITS``, stated in docs/sim.md):
a value past its bound (a 10 s joint_states jitter, which holds each step seconds) is refused.
Errors (``InputError``) name the file and the key and say what was expected.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from rnea_ros.errors import InputError
from rnea_ros.files import brief, FileError, finite_number, load_yaml, read_text, YamlError

GAPS_DIR = Path(__file__).resolve().parent / 'gaps'
JOINT_FIELDS = ('armature', 'coulomb', 'viscous')
TOP_KEYS = ('seed', 'inertia_errors', 'links', 'payload', 'joints', 'torque_sensor',
            'encoder_resolution', 'joint_states', 'contact_spheres')
TIP = 'tip'
SEED_MAX = 2**32 - 1
# The largest value of each field (any link's, joint's or sphere's; vectors: each component's
# magnitude) and its unit: what a real robot and its data can be. The lower bounds are the
# format's: 0, or above 0 for the scales, masses and radii.
LIMITS = {
    'inertia_errors.mass': (0.3, ''),  # the draws clip at 3 std: masses stay above 10 %
    'inertia_errors.com': (0.1, 'm'),
    'inertia_errors.inertia': (0.3, ''),
    'links.mass_scale': (10.0, ''),
    'links.com_shift': (1.0, 'm'),
    'links.inertia_scale': (10.0, ''),
    'payload.mass': (1000.0, 'kg'),
    'payload.com': (2.0, 'm'),
    'payload.inertia': (1000.0, 'kg m^2'),
    'joints.armature': (100.0, 'kg m^2 or kg'),
    'joints.coulomb': (1000.0, 'N m or N'),
    'joints.viscous': (1000.0, 'N m s/rad or N s/m'),
    'torque_sensor.noise': (100.0, 'N m'),
    'torque_sensor.offset': (100.0, 'N m'),
    'torque_sensor.gain': (1000.0, 'N m or N per unit of the reading'),
    'encoder_resolution': (0.1, 'rad or m'),
    'joint_states.jitter': (0.01, 's'),
    'joint_states.outage.start': (1e6, 's'),
    'joint_states.outage.duration': (60.0, 's'),
    'contact_spheres.radius': (1.0, 'm'),
    'contact_spheres.position': (2.0, 'm'),
    'contact_spheres.friction': (10.0, ''),
}


@dataclass(frozen=True)
class LinkChange:
    """Exact change of one link's inertia: mass and rotational inertia scaled, com shifted."""

    mass_scale: float = 1.0
    com_shift: tuple[float, float, float] = (0.0, 0.0, 0.0)
    inertia_scale: float = 1.0


@dataclass(frozen=True)
class Payload:
    """A rigid body fixed to ``link`` (``'tip'``: the last link of the longest chain)."""

    link: str
    mass: float
    com: tuple[float, float, float] = (0.0, 0.0, 0.0)
    inertia: tuple[float, float, float] = (0.0, 0.0, 0.0)


@dataclass(frozen=True)
class ContactSphere:
    """A sphere on ``link`` (centre ``position`` in the link frame) that touches the floor."""

    radius: float
    position: tuple[float, float, float] = (0.0, 0.0, 0.0)
    friction: float = 0.8


@dataclass(frozen=True)
class Gap:
    """A parsed gap file (see the module docstring); ``source`` names it in error messages."""

    source: str = 'none'
    seed: int = 0
    mass_error: float = 0.0
    com_error: float = 0.0
    inertia_error: float = 0.0
    links: dict = field(default_factory=dict)           # link -> LinkChange
    payload: Payload | None = None
    joint_defaults: dict = field(default_factory=dict)  # field -> value, every actuated joint
    joints: dict = field(default_factory=dict)          # joint -> {field: value}
    torque_noise: float = 0.0
    torque_offset: float = 0.0
    torque_gain: float = 1.0                            # every actuated joint
    torque_gains: dict = field(default_factory=dict)    # joint -> its own gain
    encoder_resolution: float = 0.0
    jitter: float = 0.0
    drop: float = 0.0
    outage: tuple[float, float] = (0.0, 0.0)            # (start, duration) [s of sim time]
    contact_spheres: dict = field(default_factory=dict)  # link -> ContactSphere

    @classmethod
    def none(cls) -> Gap:
        """Return the URDF's own dynamics: no errors, no friction, exact sensors."""
        return cls()

    def withheld(self, time: float) -> bool:
        """Tell whether the joint_states of sim time ``time`` fall in the outage."""
        start, duration = self.outage
        return start <= time < start + duration

    def joint_terms(self, joint: str) -> dict:
        """Armature, coulomb and viscous of ``joint`` (its own values over the defaults)."""
        terms = {name: self.joint_defaults.get(name, 0.0) for name in JOINT_FIELDS}
        terms.update(self.joints.get(joint, {}))
        return terms

    def armature_parameters(self, joints) -> dict[str, float]:
        """
        Return the node's ``armature.<joint>`` of ``joints`` as an actuation file gives them.

        The reflected rotor inertia the gap gives each joint (``joints.armature``, its own value
        over the default), none where it gives 0: the node's model of the robot's drives.
        """
        terms = {joint: self.joint_terms(joint)['armature'] for joint in joints}
        return {f'armature.{joint}': value for joint, value in terms.items() if value}

    def check_names(self, links, joints) -> None:
        """Raise ``InputError`` naming a link or joint of the gap that the robot does not have."""
        links, joints = set(links), set(joints)
        named = [('links', name) for name in self.links]
        named += [('contact_spheres', name) for name in self.contact_spheres]
        if self.payload is not None and self.payload.link != TIP:
            named.append(('payload.link', self.payload.link))
        for key, name in named:
            if name not in links:
                raise InputError(f'gap {self.source}: {key}: no link {name!r} in the URDF; '
                                 f'links: {", ".join(sorted(links))}')
        for key, names in (('joints', self.joints), ('torque_sensor.gain', self.torque_gains)):
            for name in names:
                if name not in joints:
                    raise InputError(f'gap {self.source}: {key}: no actuated joint {name!r}; '
                                     f'joints: {", ".join(sorted(joints))}')


def load_gap(spec: str) -> Gap:
    """``'none'``, the name of a shipped gap (``shipped_gaps()``) or a YAML file -> ``Gap``."""
    if spec == 'none':
        return Gap.none()
    path = GAPS_DIR / f'{spec}.yaml' if spec in shipped_gaps() else Path(spec)
    try:
        text = read_text(path, 'gap')
    except FileError as error:
        raise InputError(f'gap {spec!r}: cannot read it ({error.why}); expected a YAML '
                         f'file, none or one of {", ".join(shipped_gaps())}') from None
    return parse_gap(text, repr(spec))


def shipped_gaps() -> list[str]:
    """Return the names of the gaps shipped in ``gaps/`` (``default`` first)."""
    names = sorted(path.stem for path in GAPS_DIR.glob('*.yaml'))
    return sorted(names, key=lambda name: name != 'default')


def parse_gap(text: str, source: str = 'text') -> Gap:
    """Parse gap YAML; ``InputError`` names ``source``, the key and what was expected."""
    try:
        data = load_yaml(text)
    except YamlError as error:
        raise InputError(f'gap {source}: {error}') from None
    data = {} if data is None else data
    reader = _Reader(source)
    reader.mapping(data, 'the file', TOP_KEYS)
    errors = reader.mapping(data.get('inertia_errors', {}), 'inertia_errors',
                            ('mass', 'com', 'inertia'))
    sensor = reader.mapping(data.get('torque_sensor', {}), 'torque_sensor',
                            ('noise', 'offset', 'gain'))
    gain = sensor.get('gain', 1.0)
    gains = reader.mapping(gain, 'torque_sensor.gain') if isinstance(gain, dict) else {}
    states = reader.mapping(data.get('joint_states', {}), 'joint_states',
                            ('jitter', 'drop', 'outage'))
    outage = reader.mapping(states.get('outage', {}), 'joint_states.outage',
                            ('start', 'duration'))
    drop = states.get('drop', 0.0)
    if isinstance(drop, bool) or not isinstance(drop, (int, float)) or not 0 <= drop < 1:
        raise InputError(f'gap {source}: joint_states.drop is {brief(drop)}: expected a '
                         'probability from 0 to below 1')
    seed = data.get('seed', 0)
    if not isinstance(seed, int) or isinstance(seed, bool) or not 0 <= seed <= SEED_MAX:
        raise InputError(f'gap {source}: seed is {brief(seed)}: expected an integer from 0 to '
                         f'{SEED_MAX}')
    return Gap(
        source=source, seed=seed,
        mass_error=reader.number(errors.get('mass', 0.0), 'inertia_errors.mass'),
        com_error=reader.number(errors.get('com', 0.0), 'inertia_errors.com'),
        inertia_error=reader.number(errors.get('inertia', 0.0), 'inertia_errors.inertia'),
        links=reader.links(data.get('links', {})),
        payload=reader.payload(data.get('payload')),
        joint_defaults=reader.joint_defaults(data.get('joints', {})),
        joints=reader.joint_overrides(data.get('joints', {})),
        torque_noise=reader.number(sensor.get('noise', 0.0), 'torque_sensor.noise'),
        torque_offset=reader.number(sensor.get('offset', 0.0), 'torque_sensor.offset'),
        torque_gain=1.0 if gains else reader.number(gain, 'torque_sensor.gain', positive=True),
        torque_gains={reader.name(joint, 'torque_sensor.gain'): reader.number(
            value, f'torque_sensor.gain.{joint}', positive=True, field='torque_sensor.gain')
            for joint, value in gains.items()},
        encoder_resolution=reader.number(data.get('encoder_resolution', 0.0),
                                         'encoder_resolution'),
        jitter=reader.number(states.get('jitter', 0.0), 'joint_states.jitter'),
        drop=float(drop),
        outage=tuple(reader.number(outage.get(key, 0.0), f'joint_states.outage.{key}')
                     for key in ('start', 'duration')),
        contact_spheres=reader.spheres(data.get('contact_spheres', {})))


class _Reader:
    """Typed reads of the YAML tree, each error naming the gap and the dotted key."""

    def __init__(self, source: str):
        self.source = source

    def fail(self, message: str):
        raise InputError(f'gap {self.source}: {message}')

    def mapping(self, value, key: str, allowed=None) -> dict:
        if not isinstance(value, dict):
            self.fail(f'{key} is {brief(value)}: expected a mapping')
        if allowed is not None:
            for name in value:
                if name not in allowed:
                    self.fail(f'unknown key {brief(name)} in {key}; expected one of '
                              f'{", ".join(allowed)}')
        return value

    def number(self, value, key: str, positive: bool = False, field: str | None = None) -> float:
        """Read the number of ``key``, within its ``LIMITS`` (of ``field``, default ``key``)."""
        if not finite_number(value):
            self.fail(f'{key} is {brief(value)}: expected a finite number')
        if value < 0 or (positive and value == 0):
            self.fail(f'{key} is {brief(value)}: expected a number {">" if positive else ">="} 0')
        high, unit = LIMITS[field or key]
        if value > high:
            low = '> 0' if positive else '>= 0'
            self.fail(f'{key} is {brief(value)}: expected a number {low} and <= {high:g}'
                      + (f' [{unit}]' if unit else ''))
        return float(value)

    def vector(self, value, key: str, field: str | None = None) -> tuple[float, float, float]:
        """Read three numbers of ``key``, each within +-``LIMITS`` (``field``, default ``key``)."""
        if not isinstance(value, (list, tuple)) or len(value) != 3:
            self.fail(f'{key} is {brief(value)}: expected 3 numbers')
        high, unit = LIMITS[field or key]
        out = []
        for k, item in enumerate(value):
            if not finite_number(item):
                self.fail(f'{key}[{k}] is {brief(item)}: expected a finite number')
            if abs(item) > high:
                self.fail(f'{key}[{k}] is {brief(item)}: expected a number from {-high:g} to '
                          f'{high:g} [{unit}]')
            out.append(float(item))
        return tuple(out)

    def name(self, value, key: str) -> str:
        if not isinstance(value, str) or not value:
            self.fail(f'{key} is {brief(value)}: expected a name')
        return value

    def links(self, value) -> dict:
        changes = {}
        for link, fields in self.mapping(value, 'links').items():
            key = f'links.{link}'
            fields = self.mapping(fields, key, ('mass_scale', 'com_shift', 'inertia_scale'))
            changes[self.name(link, 'links')] = LinkChange(
                mass_scale=self.number(fields.get('mass_scale', 1.0), f'{key}.mass_scale',
                                       positive=True, field='links.mass_scale'),
                com_shift=self.vector(fields.get('com_shift', (0, 0, 0)), f'{key}.com_shift',
                                      'links.com_shift'),
                inertia_scale=self.number(fields.get('inertia_scale', 1.0),
                                          f'{key}.inertia_scale', positive=True,
                                          field='links.inertia_scale'))
        return changes

    def payload(self, value) -> Payload | None:
        if value is None:
            return None
        fields = self.mapping(value, 'payload', ('link', 'mass', 'com', 'inertia'))
        if 'link' not in fields or 'mass' not in fields:
            self.fail('payload needs link and mass')
        inertia = self.vector(fields.get('inertia', (0, 0, 0)), 'payload.inertia')  # >= 0 below
        for k, moment in enumerate(inertia):
            if moment < 0:
                self.fail(f'payload.inertia[{k}] is {brief(moment)}: expected a number >= 0')
        return Payload(link=self.name(fields['link'], 'payload.link'),
                       mass=self.number(fields['mass'], 'payload.mass', positive=True),
                       com=self.vector(fields.get('com', (0, 0, 0)), 'payload.com'),
                       inertia=inertia)

    def joint_defaults(self, value) -> dict:
        fields = self.mapping(value, 'joints')
        return {name: self.number(fields[name], f'joints.{name}')
                for name in JOINT_FIELDS if name in fields}

    def joint_overrides(self, value) -> dict:
        overrides = {}
        for joint, fields in value.items():
            if joint in JOINT_FIELDS:
                continue
            key = f'joints.{joint}'
            if not isinstance(fields, dict):  # a misspelt field rather than a joint
                self.fail(f'unknown key {brief(joint)} in joints; expected one of '
                          f'{", ".join(JOINT_FIELDS)}, or a joint name with a mapping of them')
            fields = self.mapping(fields, key, JOINT_FIELDS)
            overrides[self.name(joint, 'joints')] = {
                name: self.number(fields[name], f'{key}.{name}', field=f'joints.{name}')
                for name in fields}
        return overrides

    def spheres(self, value) -> dict:
        spheres = {}
        for link, fields in self.mapping(value, 'contact_spheres').items():
            key = f'contact_spheres.{link}'
            fields = self.mapping(fields, key, ('radius', 'position', 'friction'))
            if 'radius' not in fields:
                self.fail(f'{key} needs radius')
            spheres[self.name(link, 'contact_spheres')] = ContactSphere(
                radius=self.number(fields['radius'], f'{key}.radius', positive=True,
                                   field='contact_spheres.radius'),
                position=self.vector(fields.get('position', (0, 0, 0)), f'{key}.position',
                                     'contact_spheres.position'),
                friction=self.number(fields.get('friction', 0.8), f'{key}.friction',
                                     positive=True, field='contact_spheres.friction'))
        return spheres
