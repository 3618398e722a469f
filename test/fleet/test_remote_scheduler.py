"""
``rnea_fleet --scheduler``: plain ``tcp://`` off the loopback is refused, TLS is not.

Regression test of ``--scheduler tcp://<another machine>`` being used as given: the work and
the results travelled unencrypted and unauthenticated to whoever answered at that address.
192.0.2.0/24 is TEST-NET-1 (RFC 5737): no machine answers there.
"""
from __future__ import annotations

from harness import bagdata
from harness.fleet_runs import fleet
import pytest

from rnea_ros.fleet import cli
from rnea_ros.fleet.cluster import unprotected

pytestmark = pytest.mark.timeout(60)


@pytest.fixture(scope='module')
def bag(tmp_path_factory):
    return bagdata.panda_bag(tmp_path_factory.mktemp('bag') / 'run', bagdata.sample_times(10))


@pytest.mark.parametrize('address', ['tcp://192.0.2.1:8786', 'tcp://scheduler.example:8786',
                                     'ws://192.0.2.1:8786', 'tcp://[2001:db8::1]:8786'])
def test_a_plain_address_off_the_loopback_is_refused_in_one_line(tmp_path, bag, address):
    status, out, err = fleet(bag, '--output', tmp_path / 'out', '--scheduler', address)
    scheme = address.split('://')[0]
    assert (status, out) == (2, '')
    assert err == (f'rnea_fleet: error: --scheduler {address!r} is not a loopback address and '
                   f'{scheme}:// is neither encrypted nor authenticated: anyone who reaches it '
                   'can run code on its workers and read the results; use tls:// '
                   '(docs/fleet.md, "Across machines") or, on a network you trust, '
                   '--allow-remote-scheduler\n')
    assert not (tmp_path / 'out').exists()


@pytest.mark.parametrize('address', ['tcp://127.0.0.1:8786', 'tcp://127.0.0.2:8786',
                                     'tcp://localhost:8786', 'tcp://LOCALHOST:8786',
                                     'tcp://[::1]:8786', 'tls://192.0.2.1:8786',
                                     'wss://192.0.2.1:8786', 'inproc://192.0.2.1/1/2'])
def test_loopback_tls_and_in_process_addresses_are_safe(address):
    assert unprotected(address) is None


@pytest.mark.parametrize('extra, warning', [
    (['--scheduler', 'tls://192.0.2.1:8786'], ''),
    (['--scheduler', 'tcp://192.0.2.1:8786', '--allow-remote-scheduler'],
     "rnea_fleet: warning: --scheduler 'tcp://192.0.2.1:8786' is reached without TLS "
     '(--allow-remote-scheduler): the work and the results travel unencrypted and '
     'unauthenticated\n'),
])
def test_tls_or_the_flag_goes_on_to_connect(tmp_path, bag, extra, warning):
    status, out, err = fleet(bag, '--output', tmp_path / 'out', '--connect-timeout', '1',
                             *extra)
    assert status == 1 and out == ''
    assert err.startswith(f'{warning}rnea_fleet: error: cannot connect to the Dask scheduler '
                          f"'{extra[1]}': ")
    assert err.count('\n') == 1 + bool(warning)


def test_the_flag_without_a_scheduler_is_bad_usage(tmp_path, bag, capsys):
    with pytest.raises(SystemExit) as exit_:
        cli.main([str(bag), '--output', str(tmp_path / 'out'), '--allow-remote-scheduler'])
    assert exit_.value.code == 2
    assert capsys.readouterr().err.endswith(
        'rnea_fleet: error: --allow-remote-scheduler is for a --scheduler address; without '
        '--scheduler the cluster is local\n')
