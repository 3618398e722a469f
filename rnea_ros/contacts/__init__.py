"""
Contact inverse dynamics: the contact wrenches that balance a floating base, as a small QP.

``solver`` holds ``Contact``/``ContactSolver`` (DAQP), ``kernels`` the jitted placements and
checked RNEA they use, ``cones`` the linearised friction cones. Imports ``rnea_ros.dynamics``,
numpy, numba and daqp only: no ROS, no bag or plotting library.
"""
from rnea_ros.contacts.solver import (Contact, ContactSolution, ContactSolver, DEFAULT_FRICTION,
                                      ground_reaction_wrench, KINDS, POINT, RESIDUAL_WEIGHT,
                                      SURFACE)

__all__ = ['DEFAULT_FRICTION', 'KINDS', 'POINT', 'RESIDUAL_WEIGHT', 'SURFACE', 'Contact',
           'ContactSolution', 'ContactSolver', 'ground_reaction_wrench']
