"""Sphinx configuration of the rnea_ros documentation (``sphinx-build -W -b html docs OUT``)."""
from pathlib import Path
import sys

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / 'docs')]  # this tree, and cli_parsers

project = 'rnea_ros'
author = 'rnea_ros developers'
copyright = 'rnea_ros developers'  # noqa: A001 (Sphinx's own name)
extensions = [
    'myst_parser',          # the pages are Markdown
    'sphinx.ext.autodoc',   # the API reference from the docstrings
    'sphinx.ext.napoleon',  # Args:/Returns: sections in docstrings
    'sphinxarg.ext',        # each console script's --help from its parser
]
source_suffix = {'.md': 'markdown', '.rst': 'restructuredtext'}
myst_enable_extensions = ['colon_fence', 'deflist']
myst_heading_anchors = 3
exclude_patterns = ['_build']
html_theme = 'alabaster'
html_theme_options = {'description': 'Inverse dynamics from a URDF, fast enough for a '
                                     'controller loop, and a ROS 2 node that publishes it.'}
autodoc_member_order = 'bysource'
autodoc_typehints = 'description'
nitpicky = False
