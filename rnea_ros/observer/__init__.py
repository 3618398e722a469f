"""
External torques, wrenches and collisions from the measured effort: on the dynamics library.

``momentum`` holds the generalized-momentum observer (``MomentumObserver``: the residual r, the
external joint torques), ``wrench`` the external wrench on a link that explains r
(``estimate_wrench``; ``WrenchEstimator`` for one link at every sample), ``collision`` the
detection on r (``CollisionDetector``) and its thresholds from collision-free data
(``calibrate_thresholds``). Imports the dynamics only: the node and ``rnea_bag --observer`` both
run it, so the same samples give the same answers.
"""
from rnea_ros.observer.collision import (calibrate_thresholds, CollisionDetector,
                                         detect_events)
from rnea_ros.observer.momentum import MomentumObserver
from rnea_ros.observer.wrench import estimate_wrench, WrenchEstimator

__all__ = ['calibrate_thresholds', 'CollisionDetector', 'detect_events', 'estimate_wrench',
           'MomentumObserver', 'WrenchEstimator']
