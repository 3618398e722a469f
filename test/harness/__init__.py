"""
The tests' shared helpers: oracles, generated bags and robots, the ROS and closed-loop harnesses.

A test module imports them as ``from harness.oracle import robot_path`` or ``from harness import
bagdata``: pytest puts ``test/`` on ``sys.path`` (``test/conftest.py`` is its rootdir conftest,
in a folder without ``__init__.py``), so ``harness`` is a package beside the tests. No test module
imports another (``test/test_layout.py`` checks it): what two test modules share lives here.
"""
