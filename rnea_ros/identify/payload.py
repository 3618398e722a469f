"""
``rnea_identify --payload LINK``: the 10 inertial parameters of a payload on a known robot.

The robot's model (``--urdf``: the URDF, or an ``identified.urdf``) is taken as right; what it
misses in the measured torques of a bag recorded with the payload is the payload's, and linear in
its 10 parameters phi_p (``dynamics.payload.link_parameters`` order: mass, first moment and
rotational inertia about the link origin, in the link frame)::

    tau_measured - rnea(q, v, a) = Y_b(q, v, a) T phi_p + joint terms

with Y_b the regressor columns of the body the link is fixed to and T the placement of the link
in that body (``dynamics.payload.body_transform``). The joint terms of ``--friction`` (Coulomb,
viscous, offset) and the armature of each joint are fitted alongside as nuisance parameters: a
URDF carries no friction, and the fitted terms are not written.

Fit: the weighted least squares of ``identify.fit`` (each joint's rows weighted by its noise,
estimated from a first unweighted fit), then the physically consistent estimate: the point of
the convex set {pseudo-inertia of phi_p positive semi-definite (Wensing, Kim and Slotine 2017),
Coulomb, viscous friction and armature >= 0} nearest to the least-squares one in the data's own
metric (theta - beta)^T H (theta - beta), one small SDP solved by cvxpy (Clarabel, else SCS) as
``identify.physical`` does for a whole robot. Without a prior: a payload has no URDF to stay
near; the data alone decide.

Standard deviations: the covariance of the least-squares estimate for residuals correlated from
sample to sample (the Newey-West sandwich H^-1 S H^-1 of ``identify.covariance``, as for a whole
robot; H^-1 alone assumes white torque noise and claimed 0.0016 kg where the sim's mass was
0.03 kg off), its payload block propagated to mass, centre of mass and inertia about the
centre of mass to first order (the delta method, with the Jacobian of that map at the
estimate). They describe the least-squares estimate; the
physically consistent one differs from it only where the data allow. ``inf``: a direction the
data do not excite (e.g. a payload rotational inertia about an axis no joint turns).

Writes into DIR: ``payload.yaml`` (node parameters file: ``payload.link``, ``.mass``, ``.com``,
``.inertia``, keyed ``/**`` as ``actuation.yaml``), and ``payload.json`` (values, standard
deviations, the fit's RMS residual per joint without and with the payload, sample counts).
"""
from __future__ import annotations

from dataclasses import dataclass, field
import json
from pathlib import Path
import re
import sys

import numpy as np

from rnea_ros.dynamics.payload import (check_payload, from_link_parameters, moving_mass, Payload,
                                       payload_block)
from rnea_ros.errors import InputError
from rnea_ros.identify import covariance, fit, inertial_layout, samples
from rnea_ros.identify import physical
from rnea_ros.identify.pipeline import read_robot
from rnea_ros.params import params_file
from rnea_ros.recording.differentiate import AUTO, DEFAULT_WINDOW
from rnea_ros.tools.staging import Staging, Tool

TOOL = Tool('rnea_identify', 'payload.json', re.compile(r'payload\.(yaml|json)'))
CHUNK = 20_000
MIN_SAMPLES = 200
FIELDS = ('mass', 'com', 'inertia')


@dataclass
class PayloadFit:
    """The identified payload, its standard deviations and the fit's figures."""

    payload: Payload
    std: dict[str, object]
    least_squares: np.ndarray  # phi_p of the unconstrained fit
    phi: np.ndarray  # phi_p, physically consistent
    solver: str
    rms_without: np.ndarray  # per joint: the residual of the robot model alone
    rms_with: np.ndarray  # with the payload and the joint terms
    sigma: np.ndarray
    joint_names: tuple[str, ...]
    samples: int
    warnings: list[str] = field(default_factory=list)


def _chunks(model, lay, block, transform, sets, threads):
    """Yield ([Y_b T], joint features, tau - rnea) of ``sets``, ``CHUNK`` samples at a time."""
    columns = slice(10 * block, 10 * block + 10)
    for data in sets:
        for start in range(0, len(data), CHUNK):
            stop = min(start + CHUNK, len(data))
            q, v, a = (x[start:stop] for x in (data.q, data.v, data.a))
            Y = model.regressor_batch(q, v, a, threads=threads)
            payload_columns = np.ascontiguousarray(Y[:, :, columns] @ transform)
            residual = data.effort[start:stop] - model.rnea_batch(q, v, a, threads=threads)
            yield payload_columns, lay.joint_features(v, a), residual


def _equations(model, lay, block, transform, sets, threads):
    """Accumulate the normal equations of [Y_b T, joint terms] on tau - rnea over ``sets``."""
    nv = model.nv
    positions = np.tile(np.arange(10), (nv, 1))
    equations = fit.NormalEquations(nv, 10 + nv * len(lay.joint_terms), positions, positions,
                                    np.full(nv, 10))
    energy = np.zeros(nv)
    count = np.zeros(nv, dtype=np.int64)
    with fit.one_blas_thread():
        for regressor, joint, residual in _chunks(model, lay, block, transform, sets, threads):
            equations.add(regressor, joint, residual)
            measured = np.isfinite(residual)
            energy += (np.where(measured, residual, 0.0) ** 2).sum(axis=0)
            count += measured.sum(axis=0)
    rms_without = np.sqrt(energy / np.maximum(count, 1))
    return equations, rms_without


def _correlated_covariance(equations, least, model, lay, block, transform, sets, threads,
                           samples_count: int) -> np.ndarray:
    """Cov(beta) for correlated residuals: the Newey-West sandwich (``identify.covariance``)."""
    scores = covariance.Scores(equations, least.beta, least.sigma, samples_count)
    with fit.one_blas_thread():
        for regressor, joint, residual in _chunks(model, lay, block, transform, sets, threads):
            scores.add(regressor, joint, residual)
    return scores.result(least.H).covariance


def _physical(lay, H: np.ndarray, beta: np.ndarray) -> tuple[np.ndarray, str]:
    """Return the consistent theta nearest to beta in the metric H (module docstring)."""
    import cvxpy as cp
    d = np.sqrt(np.diag(H))
    d[d == 0.0] = 1.0
    scaled = H / np.outer(d, d)  # unit diagonal: the solver sees a well-scaled problem
    values, vectors = np.linalg.eigh(scaled)
    keep = values > 1e-12 * max(values.max(), 0.0)
    root = np.sqrt(values[keep])[:, None] * vectors[:, keep].T
    theta = cp.Variable(beta.size)
    objective = cp.sum_squares(root @ cp.multiply(d, theta - beta))
    constraints = [physical.pseudo_inertia_expression(theta[:10]) >> 0]
    for term in ('coulomb', 'viscous', 'armature'):
        if term in lay.joint_terms:
            index = [10 + j * len(lay.joint_terms) + lay.joint_terms.index(term)
                     for j in range(len(lay.joint_names))]
            constraints.append(theta[index] >= 0)
    problem = cp.Problem(cp.Minimize(objective), constraints)
    return physical.solve_sdp(problem, theta, 'the payload SDP')


def _derived(phi: np.ndarray) -> np.ndarray:
    """[mass, com (3), inertia about the com (6, ixx ixy ixz iyy iyz izz)] of phi_p."""
    payload = from_link_parameters('', phi)
    return np.array([payload.mass, *payload.com, *payload.inertia])


def _standard_deviations(phi: np.ndarray, covariance: np.ndarray) -> np.ndarray:
    """First-order standard deviations of ``_derived`` (central differences for its Jacobian)."""
    finite = np.isfinite(np.diag(covariance))
    step = 1e-6 * np.maximum(np.abs(phi), 1e-3)
    jacobian = np.empty((10, 10))
    for k in range(10):
        e = np.zeros(10)
        e[k] = step[k]
        jacobian[:, k] = (_derived(phi + e) - _derived(phi - e)) / (2 * step[k])
    safe = np.where(np.outer(finite, finite), covariance, 0.0)
    variance = np.einsum('ik,kl,il->i', jacobian, safe, jacobian)
    depends_on_blind = (np.abs(jacobian[:, ~finite]) > 0).any(axis=1)
    return np.where(depends_on_blind, np.inf, np.sqrt(np.maximum(variance, 0.0)))


def _one_window(reading: dict | None) -> dict:
    """
    Return ``reading`` with one differentiation window for every joint (``auto``: 0.05 s).

    The payload's few parameters are fitted through the coupling of all joints, and windows
    chosen per joint smooth their accelerations differently (docs: A payload).
    """
    reading = dict(reading or {})
    if reading.get('window', AUTO) == AUTO:
        reading['window'] = DEFAULT_WINDOW
    return reading


def identify_payload(bags, urdf: str | Path, link: str, *, joint_states: str = 'joint_states',
                     friction: str = inertial_layout.DEFAULT_FRICTION, threads: int | None = None,
                     reading: dict | None = None) -> PayloadFit:
    """Fit the payload on ``link`` from ``bags`` (module docstring); ``RneaError`` on bad input."""
    urdf_xml, model = read_robot(urdf, friction)
    try:
        block, transform = payload_block(model.tree, link)
    except InputError as exc:
        raise InputError(str(exc).replace('payload.link', '--payload', 1)) from None
    lay = inertial_layout.layout(model, friction)
    loaded = [samples.load(bag, model, urdf_xml, joint_states, **_one_window(reading))
              for bag in bags]
    warnings = [f'{data.bag}: {w}' for data in loaded for w in data.warnings]
    n = sum(len(data) for data in loaded)
    if n < MIN_SAMPLES:
        raise InputError(f'too few samples: {n} (at least {MIN_SAMPLES} needed for a payload)')
    equations, rms_without = _equations(model, lay, block, transform, loaded, threads)
    least = fit.weighted_fit(equations)
    theta, solver = _physical(lay, least.H, least.beta)
    phi = theta[:10]
    try:  # what the node accepts (its bounds too), or no payload.yaml
        payload = check_payload(from_link_parameters(link, phi), model.link_names,
                                moving_mass(model.tree))
    except InputError as exc:
        raise InputError(f'the identified payload is not one the node accepts: {exc}') from None
    correlated = _correlated_covariance(equations, least, model, lay, block, transform, loaded,
                                        threads, n)
    std = _standard_deviations(least.beta[:10], correlated[:10, :10])
    blind = [name for name, s in zip(_NAMES, std) if not np.isfinite(s)]
    if blind:
        warnings.append(f'the data do not determine {", ".join(blind)} of the payload (no '
                        'joint motion excites them): their values are not identified')
    return PayloadFit(payload, {'mass': std[0], 'com': std[1:4], 'inertia': std[4:]},
                      least.beta[:10], phi, solver, rms_without, equations.rms(theta),
                      least.sigma, tuple(model.joint_names), n, warnings)


_NAMES = ('mass', 'com.x', 'com.y', 'com.z', 'ixx', 'ixy', 'ixz', 'iyy', 'iyz', 'izz')


def _floats(values) -> list:
    return [float(x) if np.isfinite(x) else None for x in np.atleast_1d(values)]


def payload_yaml(result: PayloadFit) -> str:
    """payload.yaml: the node's payload parameters, with the standard deviations as comments."""
    p, s = result.payload, result.std

    def shown(values):
        return '[' + ', '.join('inf' if not np.isfinite(x) else f'{x:.3g}'
                               for x in np.atleast_1d(values)) + ']'
    header = (
        '# Payload identified by rnea_identify --payload (rnea_ros/identify/payload.py): mass\n'
        '# [kg], centre of mass [m] in the link frame, inertia [kg m^2] about the centre of\n'
        '# mass in the link frame (ixx ixy ixz iyy iyz izz). Standard deviations (first order,\n'
        "# from the fit's covariance; inf: not determined by the data):\n"
        f'#   mass {shown(s["mass"])}, com {shown(s["com"])}, inertia {shown(s["inertia"])}\n'
        '# Give it at start (--params-file payload.yaml), or set the four parameters of a\n'
        '# running node together with its set_parameters_atomically service\n'
        '# (docs/node/parameters.md).\n')
    # The link double-quoted, whatever its characters; numbers as every parameters file has them.
    return params_file.write({'payload.link': p.link, 'payload.mass': p.mass,
                              'payload.com': list(p.com), 'payload.inertia': list(p.inertia)},
                             header, quoted_strings=True)


def summary(result: PayloadFit, settings: dict) -> dict:
    """payload.json: values, standard deviations, residuals, counts, settings."""
    p = result.payload
    return {
        'payload': {'link': p.link, 'mass': p.mass, 'com': list(p.com),
                    'inertia': list(p.inertia)},
        'std': {'mass': _floats(result.std['mass'])[0], 'com': _floats(result.std['com']),
                'inertia': _floats(result.std['inertia'])},
        'parameters_link_frame': {'physical': result.phi.tolist(),
                                  'least_squares': result.least_squares.tolist()},
        'solver': result.solver,
        'rms': {joint: {'robot_model': float(a), 'with_payload': float(b)}
                for joint, a, b in zip(result.joint_names, result.rms_without,
                                       result.rms_with)},
        'noise': dict(zip(result.joint_names, map(float, result.sigma))),
        'samples': result.samples,
        'warnings': list(result.warnings),
        'settings': settings,
        'outputs': ['payload.yaml', 'payload.json'],
    }


def write(result: PayloadFit, output: Path, settings: dict, overwrite: bool = False
          ) -> list[Path]:
    """Write payload.yaml and payload.json into ``output`` (staged: all or nothing)."""
    with Staging(output, overwrite, TOOL) as staging:
        staging.write_text('payload.yaml', payload_yaml(result))
        staging.write_text('payload.json', json.dumps(summary(result, settings), indent=2)
                           + '\n')
        return staging.commit(['payload.yaml', 'payload.json'])


def run(args, output: Path, reading: dict) -> int:
    """Run ``rnea_identify --payload`` for the parsed ``IdentifyOptions``; print the result."""
    from rnea_ros.tools.staging import check as check_output
    check_output(output, args.overwrite, TOOL)  # before any work
    result = identify_payload(args.bags, args.urdf, args.payload,
                              joint_states=args.joint_states, friction=args.friction,
                              threads=args.threads, reading=reading)
    settings = {'bags': args.bags, 'urdf': args.urdf, 'payload': args.payload,
                'joint_states': args.joint_states, 'friction': args.friction,
                **_one_window(reading)}
    write(result, output, settings, args.overwrite)
    for warning in result.warnings:
        print(f'rnea_identify: warning: {warning}', file=sys.stderr)
    p, s = result.payload, result.std
    print(f'rnea_identify: payload on {p.link!r} from {result.samples} samples -> {output}')
    print(f'  mass     {p.mass:.4g} kg (std {s["mass"]:.2g})')
    print('  com      [' + ', '.join(f'{x:.4g}' for x in p.com) + '] m (std ['
          + ', '.join(f'{x:.2g}' for x in s['com']) + '])')
    print('  inertia  [' + ', '.join(f'{x:.4g}' for x in p.inertia) + '] kg m^2 (std ['
          + ', '.join(f'{x:.2g}' for x in s['inertia']) + '])')
    print('  RMS residual per joint: ' + ', '.join(result.joint_names))
    print('  robot model  ' + ' '.join(f'{x:8.4g}' for x in result.rms_without))
    print('  with payload ' + ' '.join(f'{x:8.4g}' for x in result.rms_with))
    return 0
