"""
``BagOptions``: the command line of ``rnea_bag`` is built from it and parses back into it.

Each option's default is declared once, on the field: the parser gives the same values, and
``rnea_fleet`` takes the per-bag fields from it (no argparse internals).
"""
from dataclasses import asdict, fields, replace

from rnea_ros.bag.cli import parse
from rnea_ros.bag.options import BagOptions, FILE_OPTIONS, RUN_OPTIONS
from rnea_ros.fleet import cli as fleet_cli


def test_the_parser_gives_the_declared_defaults():
    assert parse(['some.mcap']) == BagOptions('some.mcap')


def test_the_parser_gives_each_option_to_its_field():
    options = parse(['b', '--urdf', 'r.urdf', '--xacro-arg', 'arm:=left', '--window', '0.1',
                     '--gravity', '0', '0', '-1.62', '--no-progress', '--lock-missing',
                     '--accelerations-from', 'positions', '--threads', '1'])
    assert options == replace(BagOptions('b'), urdf='r.urdf', xacro_arg=[('arm', 'left')],
                              window=0.1, gravity=[0.0, 0.0, -1.62], progress=False,
                              lock_missing=True, accelerations_from='positions', threads=1)


def test_file_options_are_declared_on_their_fields():
    assert FILE_OPTIONS == {'urdf', 'actuation', 'collision_thresholds'}


def test_the_options_that_never_change_the_numbers_are_declared_on_their_fields():
    assert RUN_OPTIONS == {'bag', 'output', 'progress', 'timings', 'threads', 'overwrite'}


def test_the_fleet_parses_every_per_bag_field_with_the_same_defaults():
    """But the accelerations' source: estimated by default (--use-desired-accelerations)."""
    parser, names = fleet_cli.build_parser()
    assert set(names) == {f.name for f in fields(BagOptions)} - RUN_OPTIONS \
        - {'estimate_accelerations'}
    assert fleet_cli.PER_FLEET == RUN_OPTIONS | {'estimate_accelerations'}
    args = parser.parse_args(['bags', '--output', 'out'])
    defaults = asdict(BagOptions('b'))
    assert {name: getattr(args, name) for name in names} == \
        {name: defaults[name] for name in names}


def test_run_from_python_writes_what_the_command_line_writes(tmp_path):
    """The docs' example: ``run(replace(BagOptions(bag), ...))`` is ``rnea_bag`` with flags."""
    from harness import bagdata
    from rnea_ros.bag.cli import main
    from rnea_ros.bag.pipeline import run
    bag = bagdata.panda_bag(tmp_path / 'bag', bagdata.sample_times(400))
    result = run(replace(BagOptions(str(bag)), urdf=str(bagdata.PANDA), window=0.1,
                         no_plots=True, output=str(tmp_path / 'api')))
    assert result.samples == 300  # 400 at 1 kHz, 50 left out at each end of the 0.1 s window
    assert main([str(bag), '--urdf', str(bagdata.PANDA), '--window', '0.1', '--no-plots',
                 '--output', str(tmp_path / 'cli')]) == 0
    for name in ('torques.csv', 'summary.md'):
        assert (tmp_path / 'api' / name).read_bytes() == (tmp_path / 'cli' / name).read_bytes()


def test_identify_options_are_declared_the_same_way_and_share_the_joint_states_fields():
    from rnea_ros.identify.cli import IdentifyOptions, parse as parse_identify
    assert parse_identify(['a', 'b', '--urdf', 'r.urdf']) == IdentifyOptions(['a', 'b'], 'r.urdf')
    assert parse_identify(['a', '--urdf', 'r.urdf', '--validate', 'c', '--lock-missing',
                           '--clock', 'receive']) == replace(
        IdentifyOptions(['a'], 'r.urdf'), validate='c', lock_missing=True, clock='receive')
    shared = ('clock', 'ignore_extra_joints', 'lock', 'lock_missing')
    bag = {f.name: f for f in fields(BagOptions)}
    for item in fields(IdentifyOptions):
        if item.name in shared:
            assert item.default == bag[item.name].default
            assert item.metadata['argparse'] == bag[item.name].metadata['argparse']


def test_fleet_options_are_declared_the_same_way():
    parser, names = fleet_cli.build_parser()
    args = parser.parse_args(['a', 'b', '--output', 'out', '--drift-floor', '0.5'])
    fleet = {f.name for f in fields(fleet_cli.FleetOptions)}
    assert set(vars(args)) == fleet | set(names)
    assert not fleet & set(names) - {'overwrite', 'progress'}
    assert {name: getattr(args, name) for name in fleet} == asdict(
        replace(fleet_cli.FleetOptions(['a', 'b'], 'out'), drift_floor=0.5))


def test_the_fleet_takes_the_desired_accelerations_only_when_asked(monkeypatch):
    """Estimated by default, passed to each bag's task; --use-desired-accelerations: rnea_bag's."""
    seen = {}

    def run(fleet, per_bag, dests):
        seen.update(per_bag=per_bag, dests=dests)
        return 0
    monkeypatch.setattr(fleet_cli, '_run', run)
    assert fleet_cli.main(['bags', '--output', 'out']) == 0
    assert seen['per_bag'].estimate_accelerations and 'estimate_accelerations' in seen['dests']
    assert fleet_cli.main(['bags', '--output', 'out', '--use-desired-accelerations']) == 0
    assert not seen['per_bag'].estimate_accelerations
