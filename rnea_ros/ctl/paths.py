"""
Where the files of an installed rnea_ros are: ``rnea_ctl paths``.

``setup.py`` installs ``config/`` and ``launch/`` as ``data_files`` under
``<prefix>/share/rnea_ros`` (a pip install: the environment's prefix; colcon: the install space,
found through the ament index); an editable install (``pip install -e``) or a checkout has them
beside the package. The sim's gap files are package data, beside ``rnea_ros/sim/gap.py``; the
example robots are those of ``example-robot-data`` (a test dependency), when installed.
"""
from __future__ import annotations

from pathlib import Path
import sys

PACKAGE = 'rnea_ros'


def share_candidates() -> list[Path]:
    """Return the folders that may hold ``config/`` and ``launch/``, most specific first."""
    candidates = [Path(sys.prefix) / 'share' / PACKAGE]
    try:
        from ament_index_python.packages import get_package_share_directory
        candidates.insert(0, Path(get_package_share_directory(PACKAGE)))
    except (ImportError, LookupError, ValueError, OSError):  # no ament index, or not in it
        pass
    candidates.append(Path(__file__).resolve().parents[2])  # a checkout / editable install
    return candidates


def share_folder(name: str) -> Path | None:
    """Return the first existing ``<share>/<name>`` folder, or None."""
    return next((folder / name for folder in share_candidates() if (folder / name).is_dir()),
                None)


def paths() -> dict[str, list[Path] | Path | None]:
    """Return each kind of installed file and where it is (None: not installed)."""
    from rnea_ros.demos.motions import PANDA_URDF
    from rnea_ros.sim.gap import GAPS_DIR
    config, launch = share_folder('config'), share_folder('launch')
    robots = PANDA_URDF.parents[2]  # example-robot-data's robots/ folder
    return {
        'config': config / 'rnea.yaml' if config and (config / 'rnea.yaml').is_file() else None,
        'fastdds profile': (config / 'fastdds_realtime.xml'
                            if config and (config / 'fastdds_realtime.xml').is_file() else None),
        'launch files': sorted(launch.glob('*.launch.py')) if launch else None,
        'sim gap files': sorted(GAPS_DIR.glob('*.yaml')) or None,
        'example robots': robots if robots.is_dir() else None,
        'example urdf (panda)': PANDA_URDF if PANDA_URDF.is_file() else None,
    }


def print_paths() -> int:
    """Print each kind of file with its paths; 1 when the package's own files are missing."""
    missing = False
    for kind, found in paths().items():
        if found is None:
            print(f'{kind}: not installed')
            missing = missing or kind in ('config', 'launch files', 'sim gap files')
        elif isinstance(found, list):
            print(f'{kind}:')
            for path in found:
                print(f'  {path}')
        else:
            print(f'{kind}: {found}')
    return 1 if missing else 0
