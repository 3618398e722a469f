"""Model loading for the node: parsing off the node's process, the model sent back pickled."""
from __future__ import annotations

import pickle

from harness.oracle import robot_path
import numpy as np

from rnea_ros.control.settings import Settings
from rnea_ros.node.model_loading import parse_description


def test_the_parsed_model_survives_the_pipe_and_computes_the_same_torques():
    """
    Send the RobotModel pickled, as the worker does: it comes back whole.

    It computes alike on both kernels (the plain RNEA and the one with f_ext).
    """
    settings = Settings(floating_base=True, gravity=(0.0, 0.0, -9.7)).validate()
    model, reason, notes = parse_description(robot_path('talos_reduced').read_text(), settings)
    assert model is not None and reason == '' and model.floating_base
    copy = pickle.loads(pickle.dumps(model))
    rng = np.random.default_rng(5)
    q = model.neutral_configuration()
    q[7:] = rng.uniform(-1, 1, model.nq - 7)
    v, a = rng.uniform(-1, 1, (2, model.nv))
    f_ext = {model.link_names[5]: rng.uniform(-1, 1, 6)}
    for kwargs in ({}, {'f_ext': f_ext}):
        np.testing.assert_allclose(copy.rnea(q, v, a, **kwargs), model.rnea(q, v, a, **kwargs),
                                   rtol=0, atol=1e-12)
    np.testing.assert_allclose(copy.gravity, [0.0, 0.0, -9.7], rtol=0, atol=0)
    assert len(pickle.dumps(model)) < 200_000  # arrays, not the URDF text


def test_refused_descriptions_say_why():
    settings = Settings().validate()
    assert parse_description('  ', settings)[:2] == (None, 'robot_description is empty')
    model, reason, _ = parse_description('<robot name="x"><link name="a"/><link name="a"/>'
                                         '</robot>', settings)
    assert model is None and reason.startswith('invalid URDF: ')
