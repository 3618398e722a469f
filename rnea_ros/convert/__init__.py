"""
A robot's time-series log as a rosbag2 bag (console script ``rnea_convert``).

``table`` reads the columns a mapping names, every value checked (the row and column of a bad
one named): from a CSV or Parquet file, or by ``arrays`` from a NumPy ``.npz`` archive and by
``matfile`` from a MATLAB ``.mat`` file (named arrays; a matrix's columns are ``NAME[k]``),
every reader naming a fault as ``log_faults`` says;
``mapping`` turns them into joint_states samples (time unit, per-joint position, velocity and
effort columns, unit scales); ``cli`` writes them as an MCAP bag with
``rnea_ros.recording.bagio``, which ``rnea_bag``, ``rnea_identify`` and ``rnea_fleet`` read.
Imports ``rnea_ros.recording`` only.
"""
from rnea_ros.convert.mapping import ColumnMapping, JointSamples
from rnea_ros.convert.table import read_columns

__all__ = ['ColumnMapping', 'JointSamples', 'read_columns']
