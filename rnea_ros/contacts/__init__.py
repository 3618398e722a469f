"""
Contact inverse dynamics: the contact wrenches that balance a floating base, as a small QP.

``contact`` holds the records ``Contact`` and ``ContactSolution``, ``solver`` the
``ContactSolver`` (DAQP) and the model it solves, ``kernels`` the jitted placements and checked
RNEA they use, ``cones`` the linearised friction cones, ``measured`` measured ground reactions
as ``f_ext`` entries. Imports ``rnea_ros.dynamics``, numpy, numba and daqp only: no ROS, no bag
or plotting library.
"""
from rnea_ros.contacts.contact import (Contact, ContactSolution, DEFAULT_FRICTION, KINDS, POINT,
                                       SURFACE)
from rnea_ros.contacts.measured import ground_reaction_wrench
from rnea_ros.contacts.solver import ContactSolver, RESIDUAL_WEIGHT

__all__ = ['DEFAULT_FRICTION', 'KINDS', 'POINT', 'RESIDUAL_WEIGHT', 'SURFACE', 'Contact',
           'ContactSolution', 'ContactSolver', 'ground_reaction_wrench']
