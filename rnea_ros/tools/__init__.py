"""
What every command-line tool shares: options, output directory, exit status, progress, text, plots.

``options`` declares a tool's options once (the fields of a dataclass: the command line is built
from them and parsed back), ``reading`` the joint_states options the bag and identification tools
share, ``staging`` the output directory (refuse, stage, commit; never half-write), ``run`` the exit
status of every tool (0 done, 2 bad input, 1 the machine, 130 Ctrl-C), ``progress`` the progress
bar, ``text`` the printed and Markdown text, ``plots`` the joints' plot groups and the terms'
colours, ``htmlpage`` the plotly building blocks of the HTML reports, ``downsample`` and
``column_stats`` the reduction of long recordings for them. ``rnea_bag``, ``rnea_identify``,
``rnea_excite`` and ``rnea_fleet`` import it; it imports none of them.
"""

__all__ = ['column_stats', 'downsample', 'htmlpage', 'options', 'plots', 'progress', 'reading',
           'run', 'staging', 'text']
