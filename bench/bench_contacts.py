"""
Per-cycle cost of contact inverse dynamics beside plain ``model.rnea``, in the same process.

For solo12 on 4 point feet and talos_reduced on 2 soles (test/harness/standing.py), at random
states near standing, prints the best-of-repeats time per call of
- ``model.rnea(q, v, a)``: plain inverse dynamics, no contacts;
- ``ContactSolver.solve(q, v, a)``: the whole contact cycle - RNEA without contacts, contact
  placements and the base equations, the QP (DAQP), the contact wrenches and RNEA with them;
- the QP alone, by DAQP (the runtime solver) and, when installed, by quadprog and ProxQP on
  the very same matrices: how the solver was chosen.
Targets: the whole cycle under 50 us (solo12) and 100 us (talos_reduced). Needs the test
dependencies (example-robot-data; quadprog, proxsuite optional).

    python bench/bench_contacts.py [--repeats 7] [--calls 5000]
"""
from __future__ import annotations

import argparse
import os
from pathlib import Path
import sys

import daqp
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / 'test'))

from harness.standing import contacts, standing  # noqa: E402, I100
from timed import best_per_call  # noqa: E402

from rnea_ros.contacts import ContactSolver  # noqa: E402

TARGETS_US = {'solo12': 50.0, 'talos_reduced': 100.0}


def best(functions: dict, repeats: int, calls: int) -> dict:
    """Best time per call of each function, measured in turn repeat by repeat."""
    return best_per_call({name: (function, calls) for name, function in functions.items()},
                         repeats)


def qp_solvers(qp) -> dict:
    """Solve functions of each available library on the stage-1 QP of ``qp``."""
    n, n_in = len(qp.H), len(qp.C)
    con = np.vstack([qp.A, qp.C])
    upper = np.concatenate([qp.b, np.zeros(n_in)])
    lower = np.concatenate([qp.b, np.full(n_in, -1e30)])
    sense = np.array([5] * 6 + [0] * n_in, dtype=np.int32)
    model = daqp.Model()
    model.setup(qp.H, np.zeros(n), con, upper, lower, sense)

    def daqp_solve():
        model.update(A=con, bupper=upper, blower=lower)
        return model.solve()[0]

    solvers = {'daqp': daqp_solve}
    try:
        import quadprog
        constraints = np.hstack([qp.A.T, -qp.C.T])
        bounds = np.concatenate([qp.b, np.zeros(n_in)])
        solvers['quadprog'] = lambda: quadprog.solve_qp(qp.H, np.zeros(n), constraints,
                                                        bounds, meq=6)[0]
    except ImportError:
        pass
    try:
        from proxsuite import proxqp
        prox = proxqp.dense.QP(n, 6, n_in)
        prox.settings.eps_abs = 1e-9
        prox.settings.eps_rel = 0.0
        prox.settings.initial_guess = proxqp.InitialGuess.WARM_START_WITH_PREVIOUS_RESULT
        no_lower = np.full(n_in, -1e30)
        prox.init(qp.H, np.zeros(n), qp.A, qp.b, qp.C, no_lower, np.zeros(n_in))

        def prox_solve():
            prox.update(qp.H, np.zeros(n), qp.A, qp.b, qp.C, no_lower, np.zeros(n_in))
            prox.solve()
            return prox.results.x

        solvers['proxsuite'] = prox_solve
    except ImportError:
        pass
    reference = daqp_solve()
    for name, solve in solvers.items():
        assert np.allclose(solve(), reference, atol=1e-6), name
    return solvers


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--repeats', type=int, default=7)
    parser.add_argument('--calls', type=int, default=5000, help='calls per repeat')
    args = parser.parse_args(argv)
    print(f'numpy {np.__version__}, {os.cpu_count()} cpus; times in us per call, best of '
          f'{args.repeats} x {args.calls}')
    header = (f'{"robot":14s} {"contacts":>13s} {"QP n/eq/in":>11s} | {"rnea":>6s} '
              f'{"contacts+rnea":>13s} {"target":>6s} | {"QP: daqp":>8s} {"quadprog":>8s} '
              f'{"proxsuite":>9s}')
    print(header)
    print('-' * len(header))
    rng = np.random.default_rng(0)
    for name in ('solo12', 'talos_reduced'):
        model, q = standing(name)
        solver = ContactSolver(model, contacts(name))
        q[7:] += rng.uniform(-0.05, 0.05, model.nq - 7)
        v = 0.3 * rng.normal(size=model.nv)
        a = 0.3 * rng.normal(size=model.nv)
        solution = solver.solve(q, v, a)
        assert solution.feasible, 'the benchmark state must be feasible'
        times = best({'rnea': lambda: model.rnea(q, v, a),
                      'contacts': lambda: solver.solve(q, v, a)}, args.repeats, args.calls)
        qp_times = best(qp_solvers(solver.problem(q, v, a)), args.repeats, args.calls)
        kinds = solver.contacts[0].kind
        sizes = f'{solver.n_variables}/6/{solver.n_constraints}'
        cells = [f'{1e6 * qp_times[key]:8.1f}' if key in qp_times else f'{"-":>8s}'
                 for key in ('daqp', 'quadprog', 'proxsuite')]
        print(f'{name:14s} {len(solver.contacts)} x {kinds:9s} {sizes:>11s} | '
              f'{1e6 * times["rnea"]:6.1f} {1e6 * times["contacts"]:13.1f} '
              f'{TARGETS_US[name]:6.0f} | {cells[0]} {cells[1]} {cells[2]:>9s}')
    return 0


if __name__ == '__main__':
    sys.exit(main())
