"""Constrained solvers of the Euler step, chosen by name (``simulate(..., constraint_solver=name)``).

A constrained solver takes the linearised step ``A x = b`` (:class:`redmax.integrators.step.LinearizedStep`,
joint coordinates), the constraint rows of the step in the DOFs of the model (``G x = r_G``, ``C x <= r_C``) and
the linear solver it wraps, and returns ``(x, lam_G, lam_C)`` with ``A x + G^T lam_G + C^T lam_C = b``:

* ``"kkt"`` -- equalities only (RedMax paper Eq. 4 / notes Eq. 1.88): Schur complement
  ``G A^-1 G^T lam = G A^-1 b - r``.  With the "dense" linear solver it runs on the compiled factorisation of A
  (:mod:`redmax.solvers._kkt`); any other linear solver is called ``m + 1`` times (the paper's PCG scheme).
* ``"qp"`` -- equalities and inequalities through DAQP (:mod:`redmax.solvers.qp`), warm-started; with a linear
  solver that never forms A (PCG) through the dual QP on ``m + 1`` solves.
* ``"auto"`` (default) -- ``"kkt"`` when no inequality row is active in the step, else ``"qp"``.

Hyper-reduced coordinates reach the solvers already mapped: ``T^T A T``, ``T^T b``, ``G T`` (dense).
"""

from __future__ import annotations

import dataclasses

import numpy as np

from redmax.errors import SimulationError
from redmax.registry import Registry
from redmax.solvers._kkt import REDUNDANT_TOL, kkt_stage, schur_solve

__all__ = ["CONSTRAINED_SOLVERS", "ConstrainedSolver", "KKTSolver", "QPSolver", "get_constrained_solver"]


LAPACK_MIN_DOFS = 128  # steps from Python with at least this many DOFs factorise with LAPACK (kkt_stage below)


class ConstrainedSolver:
    """Interface: ``solve(A, b, symmetric, G, rG, C, rC, linear=None, step=None) -> (x, lam_G, lam_C)``.

    ``A`` is the dense step matrix (or None with a non-dense ``linear`` solver and its ``step``)."""

    name = "constrained"
    inequalities = False

    def solve(self, A, b, symmetric, G, rG, C, rC, linear=None, step=None, warm=None):  # pragma: no cover
        raise NotImplementedError


class KKTSolver(ConstrainedSolver):
    """Equality rows by the Schur complement on the step's factorisation."""

    name = "kkt"

    def solve(self, A, b, symmetric, G, rG, C, rC, linear=None, step=None, warm=None):
        if C is not None and C.shape[0]:
            raise SimulationError("the 'kkt' solver takes equality rows only; active inequality rows need 'qp'")
        m = G.shape[0]
        if A is None:  # a non-dense linear solver: m + 1 solves (paper Eq. 4)
            return self._generic(b, G, rG, linear, step)
        n = A.shape[0]
        if symmetric and m and n >= LAPACK_MIN_DOFS:
            out = self._lapack(A, b, G, rG)
            if out is not None:
                return out
        x = np.zeros(n)
        lam = np.zeros(max(m, 1))
        Z = np.zeros((max(m, 1), n))
        S = np.zeros((max(m, 1), max(m, 1)))
        Gc = np.ascontiguousarray(G) if m else np.zeros((1, n))
        rc = np.ascontiguousarray(rG) if m else np.zeros(1)
        _, piv, _ = kkt_stage(np.array(A, dtype=float), np.array(b, dtype=float), x, bool(symmetric), Gc, rc, m, lam,
                              Z, S, np.zeros(n), np.zeros(n, np.int64), np.zeros(max(m, 1), np.int64),
                              np.zeros(max(m, 1), np.int64), np.zeros(max(m, 1)), np.zeros(max(m, 1)))
        if not piv > 0.0:
            raise SimulationError("singular linearly implicit system (the step matrix has no usable pivot)")
        return x, lam[:m], np.zeros(0)

    @staticmethod
    def _lapack(A, b, G, rG):
        """The same Schur complement as ``kkt_stage`` on LAPACK's Cholesky (large steps from Python: meshes with
        many attachment rows); None when A is not positive definite (the compiled LU path then decides)."""
        from scipy.linalg import LinAlgError, cho_solve, cholesky, solve_triangular

        try:
            L = cholesky(A, lower=True, check_finite=False)
        except LinAlgError:
            return None
        m = G.shape[0]
        x_u = cho_solve((L, True), b, check_finite=False)
        Z = solve_triangular(L, G.T, lower=True, check_finite=False)  # L^-1 G^T (n, m)
        S = np.ascontiguousarray(Z.T @ Z)
        rhs = np.ascontiguousarray(G @ x_u - rG, dtype=float)
        lam = None
        try:  # independent rows (the usual case): S is positive definite with pivots far above the redundancy tolerance
            Ls = cholesky(S, lower=True, check_finite=False)
            if np.min(np.diag(Ls)) ** 2 > REDUNDANT_TOL * np.max(np.diag(S)):
                lam = cho_solve((Ls, True), rhs, check_finite=False)
        except LinAlgError:
            pass
        if lam is None:  # redundant rows: complete pivoting, their multipliers 0
            lam = np.zeros(m)
            schur_solve(S, rhs, lam, m, np.zeros(m, np.int64), np.zeros(m, np.int64), np.zeros(m))
        x = x_u - solve_triangular(L, Z @ lam, lower=True, trans="T", check_finite=False)
        return x, lam, np.zeros(0)

    @staticmethod
    def _generic(b, G, rG, linear, step):
        def solve(rhs):
            return linear.solve(dataclasses.replace(step, b=np.asarray(rhs, dtype=float)))

        x_u = solve(b)
        m = G.shape[0]
        if m == 0:
            return x_u, np.zeros(0), np.zeros(0)
        Y = np.column_stack([solve(G[k]) for k in range(m)])
        S = G @ Y
        lam = np.linalg.lstsq(S, G @ x_u - rG, rcond=1e-11)[0]
        return x_u - Y @ lam, lam, np.zeros(0)


class QPSolver(ConstrainedSolver):
    """Equalities and inequalities as a QP (DAQP)."""

    name = "qp"
    inequalities = True

    def solve(self, A, b, symmetric, G, rG, C, rC, linear=None, step=None, warm=None):
        from redmax.solvers.qp import solve_qp

        if A is None:  # a solver without the step matrix (PCG): the dual QP on m + 1 solves
            return self._dual(b, G, rG, C, rC, linear, step, warm)
        return solve_qp(A, b, G, rG, C, rC, symmetric, warm)

    @staticmethod
    def _dual(b, G, rG, C, rC, linear, step, warm):
        """The QP through its dual, for a linear solver that only solves with A (symmetric positive definite):
        ``x = x_u - Y lam`` with ``x_u = A^-1 b``, ``Y = A^-1 H^T`` (H = [G; C], one solve per row), and lam the
        solution of ``min 1/2 lam^T (H Y) lam - lam^T (H x_u - r)`` with ``lam_C >= 0``
        (:func:`redmax.solvers.qp.solve_dual_qp`)."""
        from redmax.solvers.qp import solve_dual_qp

        def solve(rhs):
            return linear.solve(dataclasses.replace(step, b=np.asarray(rhs, dtype=float)))

        x_u = solve(b)
        H = np.vstack([G, C])
        r = np.concatenate([rG, rC])
        if H.shape[0] == 0:
            return x_u, np.zeros(0), np.zeros(0)
        Y = np.column_stack([solve(H[k]) for k in range(H.shape[0])])
        S = H @ Y
        lam = solve_dual_qp(0.5 * (S + S.T), H @ x_u - r, G.shape[0], warm)
        mg = G.shape[0]
        return x_u - Y @ lam, lam[:mg], lam[mg:]


class AutoSolver(ConstrainedSolver):
    """KKT when no inequality row is active, QP otherwise."""

    name = "auto"
    inequalities = True

    def __init__(self):
        self.kkt, self.qp = KKTSolver(), QPSolver()

    def solve(self, A, b, symmetric, G, rG, C, rC, linear=None, step=None, warm=None):
        if C is None or C.shape[0] == 0:
            return self.kkt.solve(A, b, symmetric, G, rG, C, rC, linear, step)
        return self.qp.solve(A, b, symmetric, G, rG, C, rC, linear, step, warm)


CONSTRAINED_SOLVERS = Registry("constraint solver", SimulationError)  # name -> ConstrainedSolver class
CONSTRAINED_SOLVERS.register("kkt", KKTSolver)
CONSTRAINED_SOLVERS.register("qp", QPSolver)
CONSTRAINED_SOLVERS.register("auto", AutoSolver)


def get_constrained_solver(name) -> ConstrainedSolver:
    """A constrained solver by name (or the instance itself)."""
    if isinstance(name, ConstrainedSolver):
        return name
    return CONSTRAINED_SOLVERS.lookup(name)()
