"""
What ``rnea_identify`` writes into ``--output DIR``: every file, or none.

``identified.urdf``, ``actuation.yaml`` (a node parameters file), ``identified.xml`` (MJCF,
with ``--mjcf``: ``rnea_ros.identify.mjcf_out``), ``identification.json``,
``identification.md`` and ``validation_<group>.png`` (``rnea_ros.identify.report`` lists what
each holds) are staged and committed as ``rnea_bag`` commits its outputs
(``rnea_ros.tools.staging``): a directory that holds files is refused without ``--overwrite``;
with it, only these names are replaced, and the outputs the previous ``identification.json``
listed that this run does not write again (the plots, after a run with ``--no-plots``) are
removed; ``identification.json`` is written last. A failure or a Ctrl-C before the renames
leaves the directory as it was (a Ctrl-C during them is held until they are done); nothing is
written through a symlink planted in it.
"""
from __future__ import annotations

import dataclasses
import json
from pathlib import Path
import re

import numpy as np

from rnea_ros.errors import MJCFError
from rnea_ros.identify import mjcf_out, pipeline, report, urdf_out
from rnea_ros.params import actuation_file
from rnea_ros.tools.staging import Staging, Tool

TOOL = Tool('rnea_identify', 'identification.json', re.compile(
    r'identified\.(urdf|xml)|actuation\.yaml|identification\.(json|md)|validation_[\w.-]+\.png'))
PLOT_SAMPLES = 200_000
# What the fitted constant per joint is (``--offset``): a torque the actuator gives (an
# unmodelled spring, a gravity compensator's error), which the node must add to its commands;
# or the bias of the effort sensor (a torque sensor's or current sensor's zero error), which
# the measured effort carries and the joint does not feel: the node must not apply it, its
# observer takes it out of the measured effort (Actuation.effort_bias).
OFFSETS = ('torque', 'sensor-bias')
SENSOR_BIAS = ('# The fitted offsets are the bias of the effort sensor (rnea_identify --offset '
               'sensor-bias):\n# effort_bias.<joint>, taken out of the measured effort, never '
               'applied; friction.<joint>.offset 0.\n')


def actuation_yaml(result: pipeline.Identification, offset: str = OFFSETS[0]) -> str:
    """
    actuation.yaml: the node's actuation parameters (``Actuation``).

    ``offset`` 'sensor-bias': the fitted offsets are the sensor's (``OFFSETS``): written as
    ``effort_bias.<joint>``, with 0 as ``friction.<joint>.offset``.
    """
    lay = result.layout
    actuation = identified_actuation(result)
    if offset == 'sensor-bias' and 'offset' in lay.joint_terms:
        actuation = dataclasses.replace(actuation, offset=np.zeros(len(lay.joint_names)),
                                        effort_bias=actuation.offset)
        return SENSOR_BIAS + actuation_file.actuation_yaml(actuation)
    return actuation_file.actuation_yaml(actuation)


def identified_actuation(result: pipeline.Identification):
    """Return the identified ``Actuation`` (friction, offsets, armature; effort gains)."""
    lay = result.layout
    actuation = lay.actuation(
        result.theta[lay.n_inertial:].reshape(len(lay.joint_names), -1))
    if result.gains is not None:  # --effort current: measured torque = gain x effort
        actuation = dataclasses.replace(actuation, effort_gain=result.gains.gains)
    return actuation


def write(result: pipeline.Identification, output: Path, settings: dict, plots: bool = True,
          overwrite: bool = False, mjcf: bool = False) -> list[Path]:
    """
    Write every output file of the module docstring into ``output``; return their paths.

    ``mjcf``: write ``identified.xml`` too; a model MJCF cannot carry (``mjcf_out``) raises
    ``MJCFError`` ('--mjcf: ...') before anything is written.
    """
    lay = result.layout
    nb = len(lay.body_links)
    phi_new = result.theta[:lay.n_inertial].reshape(nb, 10)
    mjcf_text = None
    if mjcf:
        try:
            mjcf_text = mjcf_out.mjcf_text(result.model.with_inertial_parameters(phi_new),
                                           identified_actuation(result))
        except MJCFError as exc:
            raise MJCFError(f'--mjcf: {exc}') from None
    phi_old = result.theta_urdf[:lay.n_inertial].reshape(nb, 10)
    terms = report.actuation(result)
    friction = {joint: (t.get('coulomb', 0.0), t.get('viscous', 0.0))
                for joint, t in terms.items()} if lay.friction_terms else {}
    text, notes = urdf_out.write(result.urdf_xml, result.model, lay.body_links, phi_new,
                                 phi_old, result.scale[:lay.n_inertial].reshape(nb, 10),
                                 friction)
    result.warnings.extend(notes)
    with Staging(output, overwrite, TOOL) as staging:
        joints = actuation_yaml(result, settings.get('offset', OFFSETS[0]))
        files = [staging.write_text('identified.urdf', text),
                 staging.write_text('actuation.yaml', joints)]
        if mjcf_text is not None:
            files.append(staging.write_text(mjcf_out.FILE_NAME, mjcf_text))
        if plots and result.validation is not None:
            files += _plot_validation(result, staging)
        names = [f.name for f in files] + ['identification.json', 'identification.md']
        data = report.summary(result, settings, names)
        staging.write_text('identification.md', report.markdown(data))
        staging.write_text('identification.json', json.dumps(data, indent=2) + '\n')
        return staging.commit(names)


def _plot_validation(result: pipeline.Identification, staging: Staging) -> list[Path]:
    """Draw the validation plots: measured effort, the URDF's and the identified predictions."""
    from rnea_ros.identify import plots as plotting
    lay = result.layout
    data = result.validation
    if len(data) > PLOT_SAMPLES:  # a plot shows 2000 bins: every k-th sample is enough
        keep = np.zeros(len(data), dtype=bool)
        keep[::-(-len(data) // PLOT_SAMPLES)] = True
        data = data.select(keep)
    curves = {'measured': data.effort}
    curves.update(pipeline.predict(result.model, lay, result.base,
                                   {name: result.betas[name]
                                    for name in ('urdf', 'identified')}, data))
    units = ['N' if j.kind == 'prismatic' else 'N m' for j in result.model.joints]
    files = []
    for name, figure in plotting.validation_figures(data.seconds, lay.joint_names, units,
                                                    curves, title=result.model.name):
        with staging.writing(name) as path:
            figure.savefig(path, dpi=plotting.DPI)
        files.append(path)
    return files
