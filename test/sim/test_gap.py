"""Gap files: the format, the shipped default, and one clear line for each bad input."""
from __future__ import annotations

from pathlib import Path

from harness.oracle import robot_path
from harness.sim_cases import BAD_INERTIA, MUJOCO_REFUSES
import pytest

from rnea_ros.errors import InputError, URDFError
from rnea_ros.sim.gap import (ContactSphere, Gap, LIMITS, LinkChange, load_gap, parse_gap,
                              Payload)
from rnea_ros.sim.plant import Plant
from rnea_ros.sim.true_urdf import parse, tip_link

GAP = """
seed: 4
inertia_errors: {mass: 0.05, com: 0.002, inertia: 0.1}
links:
  panda_link4: {mass_scale: 1.1, com_shift: [0, 0.01, 0]}
payload: {link: tip, mass: 0.6, com: [0, 0, 0.05], inertia: [0.001, 0.001, 0.002]}
joints:
  armature: 0.1
  coulomb: 0.5
  panda_joint7: {armature: 0.02, viscous: 0.05}
torque_sensor: {noise: 0.05, offset: 0.2}
encoder_resolution: 1.0e-5
joint_states: {jitter: 1.0e-4, drop: 0.001, outage: {start: 4.5, duration: 0.5}}
contact_spheres:
  panda_hand: {radius: 0.03}
"""


def test_a_gap_file_parses_into_its_fields():
    gap = parse_gap(GAP, "'gap.yaml'")
    assert gap.seed == 4 and (gap.mass_error, gap.com_error, gap.inertia_error) == (
        0.05, 0.002, 0.1)
    assert gap.links == {'panda_link4': LinkChange(1.1, (0.0, 0.01, 0.0), 1.0)}
    assert gap.payload == Payload('tip', 0.6, (0.0, 0.0, 0.05), (0.001, 0.001, 0.002))
    assert gap.joint_terms('panda_joint1') == {'armature': 0.1, 'coulomb': 0.5, 'viscous': 0.0}
    assert gap.joint_terms('panda_joint7') == {'armature': 0.02, 'coulomb': 0.5,
                                               'viscous': 0.05}
    assert (gap.torque_noise, gap.torque_offset, gap.encoder_resolution) == (0.05, 0.2, 1e-5)
    assert (gap.jitter, gap.drop, gap.outage) == (1e-4, 0.001, (4.5, 0.5))
    assert [gap.withheld(t) for t in (4.499, 4.5, 4.999, 5.0)] == [False, True, True, False]
    assert not Gap.none().withheld(0.0)
    assert gap.contact_spheres == {'panda_hand': ContactSphere(0.03)}
    # As the node's actuation parameters: a joint's own armature over the default.
    assert gap.armature_parameters(['panda_joint1', 'panda_joint7']) == {
        'armature.panda_joint1': 0.1, 'armature.panda_joint7': 0.02}
    assert Gap.none().armature_parameters(['panda_joint1']) == {}  # none: the node's default


def test_the_default_gap_ships_with_the_package_and_none_is_no_gap():
    default = load_gap('default')
    assert default.payload is not None and default.joint_defaults['armature'] > 0
    assert default.torque_noise > 0 and 0 < default.drop < 0.01
    assert load_gap('none') == Gap.none()
    assert parse_gap('') == Gap(source='text')


def test_the_payload_tip_is_the_flange_not_a_finger():
    assert tip_link(parse(robot_path('panda').read_text())) == 'panda_hand_tcp'
    assert tip_link(parse(robot_path('ur5').read_text())) in ('ee_link', 'tool0')  # a tie


# About 300 bytes that expand to 9**9 strings (a billion laughs): the repr of the seed in its
# error took them (hours, gigabytes).
BOMB = 'seed: [&a [x, x, x, x, x, x, x, x, x], ' + ', '.join(
    f'&{chr(98 + k)} [{", ".join([f"*{chr(97 + k)}"] * 9)}]' for k in range(8)) + ']\n'


@pytest.mark.parametrize('text, line', [
    ('inertia_errors: {mass: 0.1, masss: 0.2}',
     "gap 'g.yaml': unknown key 'masss' in inertia_errors; expected one of mass, com, inertia"),
    ('payloads: {}',
     "gap 'g.yaml': unknown key 'payloads' in the file; expected one of seed, inertia_errors, "
     'links, payload, joints, torque_sensor, encoder_resolution, joint_states, '
     'contact_spheres'),
    ('payload: {link: tip, mass: -0.5}',
     "gap 'g.yaml': payload.mass is -0.5: expected a number > 0"),
    ('links: {panda_link4: {mass_scale: -1}}',
     "gap 'g.yaml': links.panda_link4.mass_scale is -1: expected a number > 0"),
    ('joints: {coulomb: .nan}',
     "gap 'g.yaml': joints.coulomb is nan: expected a finite number"),
    ('joint_states: {drop: 1.0}',
     "gap 'g.yaml': joint_states.drop is 1.0: expected a probability from 0 to below 1"),
    ('payload: {link: tip, mass: 1, com: [0, 0]}',
     "gap 'g.yaml': payload.com is [0, 0]: expected 3 numbers"),
    ('seed: -3', "gap 'g.yaml': seed is -3: expected an integer from 0 to 4294967295"),
    # Bounded by what a real robot's data can be: a 10 s jitter held each step for seconds.
    ('joint_states: {jitter: 10}',
     "gap 'g.yaml': joint_states.jitter is 10: expected a number >= 0 and <= 0.01 [s]"),
    ('joints: {panda_joint7: {coulomb: 1.0e+6}}',
     "gap 'g.yaml': joints.panda_joint7.coulomb is 1000000.0: expected a number >= 0 and "
     '<= 1000 [N m or N]'),
    ('links: {panda_link4: {com_shift: [0, -5, 0]}}',
     "gap 'g.yaml': links.panda_link4.com_shift[1] is -5: expected a number from -1 to 1 [m]"),
    ('inertia_errors: {mass: 2}',
     "gap 'g.yaml': inertia_errors.mass is 2: expected a number >= 0 and <= 0.3"),
    ('contact_spheres: {foot: {radius: 0.02, friction: 1.0e+9}}',
     "gap 'g.yaml': contact_spheres.foot.friction is 1000000000.0: expected a number > 0 and "
     '<= 10'),
    ('seed: 1.0e+30', "gap 'g.yaml': seed is 1e+30: expected an integer from 0 to 4294967295"),
    ('joint_states: {outage: {start: 1, duration: 61}}',
     "gap 'g.yaml': joint_states.outage.duration is 61: expected a number >= 0 and <= 60 [s]"),
    ('joint_states: {outage: {start: -1}}',
     "gap 'g.yaml': joint_states.outage.start is -1: expected a number >= 0"),
    ('joint_states: {outage: {begin: 1}}',
     "gap 'g.yaml': unknown key 'begin' in joint_states.outage; expected one of start, duration"),
    ('joint_states: {drop: .nan}',
     "gap 'g.yaml': joint_states.drop is nan: expected a probability from 0 to below 1"),
    ('[1, 2]', "gap 'g.yaml': the file is [1, 2]: expected a mapping"),
    ('a: [', "gap 'g.yaml': malformed YAML: expected the node content, but found "
     "'<stream end>' at line 1, column 5"),
    (BOMB, "gap 'g.yaml': YAML aliases repeat more than 100000 nodes (expected a document "
     'without alias bombs)'),
    ('seed: ' + '9' * 400, "gap 'g.yaml': seed is 999999999999999999...9999999999999999999: "
     'expected an integer from 0 to 4294967295'),
    ('seed: ' + '9' * 5000, "gap 'g.yaml': a value that cannot be built (Exceeds the limit "
     '(4300 digits) for integer string conversion)'),
    ('inertia_errors: {mass: ' + '9' * 400 + '}', "gap 'g.yaml': inertia_errors.mass is "
     '999999999999999999...9999999999999999999: expected a finite number'),
    ('joints: {armature: 9223372036854775808}', "gap 'g.yaml': joints.armature is "
     '9223372036854775808: expected a number >= 0 and <= 100 [kg m^2 or kg]'),
    ('[' * 100_000, "gap 'g.yaml': nested too deeply for the parser"),
])
def test_a_bad_gap_file_is_one_line_naming_the_key(text, line):
    with pytest.raises(InputError) as error:
        parse_gap(text, "'g.yaml'")
    assert str(error.value) == line


def test_every_bound_is_stated_in_the_docs():
    """docs/sim.md gives each field's bound as ``LIMITS`` has it (one table row a field)."""
    text = (Path(__file__).resolve().parents[2] / 'docs' / 'sim.md').read_text()
    for field, (high, unit) in LIMITS.items():
        assert f'| `{field}` | {high:g}{" " + unit if unit else ""} |' in text, field


@pytest.mark.parametrize('text, line', [
    ('payload: {link: panda_lnk8, mass: 1}',
     "gap 'g.yaml': payload.link: no link 'panda_lnk8' in the URDF; links: "),
    ('contact_spheres: {foot: {radius: 0.02}}',
     "gap 'g.yaml': contact_spheres: no link 'foot' in the URDF; links: "),
    ('joints: {panda_finger_joint2: {coulomb: 1}}',
     "gap 'g.yaml': joints: no actuated joint 'panda_finger_joint2'; joints: "),
])
def test_a_gap_naming_what_the_robot_lacks_is_refused(text, line):
    with pytest.raises(InputError) as error:
        Plant(robot_path('panda').read_text(), gap=parse_gap(text, "'g.yaml'"))
    assert str(error.value).startswith(line)
    assert '\n' not in str(error.value)


def test_a_missing_gap_file_is_one_line():
    with pytest.raises(InputError) as error:
        load_gap('/nonexistent/gap.yaml')
    assert str(error.value) == ("gap '/nonexistent/gap.yaml': cannot read it (No such file or "
                                'directory); expected a YAML file, none or one of default, go2, '
                                'solo12')


def test_a_urdf_mujoco_cannot_compile_is_one_line():
    with pytest.raises(URDFError) as error:
        Plant(BAD_INERTIA)
    assert str(error.value) == MUJOCO_REFUSES


@pytest.mark.parametrize('name, path, legs, gains', [
    ('go2', 'go2_description/urdf/go2.urdf', [0, 0.8, -1.5] * 4, (40.0, 1.0)),
    ('solo12', 'solo_description/robots/solo12.urdf', [0, 0.8, -1.6] * 2 + [0, -0.8, 1.6] * 2,
     (5.0, 0.1)),
])
def test_a_shipped_quadruped_gap_stands_the_robot_on_its_feet(name, path, legs, gains):
    """Dropped on the floor in a standing pose, the robot rests on its four feet spheres."""
    from harness.oracle import ROBOTS_DIR
    from rnea_ros.sim.plant import pd_effort
    gap = load_gap(name)
    plant = Plant((ROBOTS_DIR / path).read_text(), floating_base=True, gap=gap)
    q = plant.nominal.neutral_configuration()
    q[2], q[7:] = 0.45, legs
    plant.reset(q)
    for _ in range(2000):
        position, velocity = plant.q(), plant.v()
        plant.step(pd_effort(*gains, q[7:], 0.0, position[7:], velocity[6:]))
    contacts = plant.contact_wrenches()
    assert set(contacts) == set(gap.contact_spheres)
    lift = sum(plant.data.xmat[plant.model.body(foot).id].reshape(3, 3)[2] @ wrench[:3]
               for foot, wrench in contacts.items())
    weight = 9.81 * plant.model.body_subtreemass[0]
    assert lift == pytest.approx(weight, rel=0.1)  # nearly at rest: the feet carry it
