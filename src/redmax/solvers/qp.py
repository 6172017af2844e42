"""The QP of a constrained step (RedMax paper §4, Eq. 5) through DAQP, a maintained dual active-set
solver (Arnström, Bemporad and Axehill 2022; ``pip install daqp``).

    minimise   1/2 x^T H x - b^T x      subject to   G x = r_G,   C x <= r_C

with the Lagrangian convention ``H x - b + G^T lam_G + C^T lam_C = 0``, ``lam_C >= 0`` (the KKT sign of the
equality solve, so reactions are ``-G^T lam / h`` in both).  A non-symmetric H (``coriolis="implicit"``,
unsymmetric stiffness) makes these conditions an affine variational inequality, which DAQP solves as well
(``is_avi``).

Why DAQP (``benchmarks/qp_solvers.py`` on the QPs that simulations solve; results in docs/benchmarks.md): it is
an exact active-set method, so its solutions satisfy the KKT conditions to round-off (ProxQP, PIQP, Clarabel and
OSQP only to their tolerances, OSQP after polishing), it is the fastest or close to the fastest (quadprog) on every
size, it takes equality rows and warm starts (the previous step's active set), and it handles the non-symmetric
case.  Tolerances: ``primal_tol = 1e-10`` (rows are rates, so a slack of
1e-10 moves a position by 1e-10 h per step, far below the 1e-8 |H| energy budget of a QP-decided scene) and
``dual_tol = 1e-12``; the active set found, the solution is that of a linear system.
"""

from __future__ import annotations

from ctypes import c_int

import numpy as np

from redmax.errors import SimulationError

__all__ = ["DUAL_TOL", "PRIMAL_TOL", "solve_dual_qp", "solve_qp"]

PRIMAL_TOL = 1e-10
DUAL_TOL = 1e-12
_EQUALITY = 5  # DAQP sense flags
_ACTIVE = 1
_LOWER = 2  # (with _ACTIVE: a simple bound active at its lower value)
_EXIT = {-1: "infeasible", -2: "cycling", -3: "unbounded", -4: "iteration limit", -5: "non-convex problem",
         -6: "initial point infeasible"}


def solve_qp(H, b, G, rG, C, rC, symmetric: bool = True, warm=None):
    """Solve the QP of the module docstring.

    Args:
        H (n, n), b (n,).  G (mg, n), rG (mg,).  C (mc, n), rC (mc,).  symmetric: H is symmetric.
        warm: optional (mc,) booleans, the inequality rows to start from as active.
    Returns:
        (x, lam_G, lam_C).  Raises SimulationError("QP infeasible" ...) when DAQP fails.
    """
    try:
        import daqp
    except ImportError as e:  # pragma: no cover - daqp is a dependency
        raise SimulationError(f"inequality constraints need the QP solver DAQP ({e}); pip install daqp") from None
    n = H.shape[0]
    mg, mc = G.shape[0], C.shape[0]
    A = np.ascontiguousarray(np.vstack([G, C])) if mg + mc else np.zeros((0, n))
    bu = np.concatenate([rG, rC])
    bl = np.concatenate([rG, np.full(mc, -1e30)])
    sense = np.zeros(mg + mc, dtype=c_int)
    sense[:mg] = _EQUALITY
    if warm is not None and mc:
        sense[mg:][np.asarray(warm, dtype=bool)] = _ACTIVE
    Hs = np.ascontiguousarray(H, dtype=float)
    x, _, flag, info = daqp.solve(Hs, -np.asarray(b, dtype=float), A, bu, bl, sense, is_avi=not symmetric,
                                  primal_tol=PRIMAL_TOL, dual_tol=DUAL_TOL, eps_prox=0.0)
    if flag < 1:
        raise SimulationError(f"QP {_EXIT.get(flag, f'failed (DAQP exit flag {flag})')}")
    lam = np.asarray(info["lam"], dtype=float)
    return np.asarray(x, dtype=float), lam[:mg], lam[mg:]


def solve_dual_qp(S, c, mg: int, warm=None):
    """The dual of the QP of the module docstring for a symmetric positive definite H that is never formed:

        minimise   1/2 lam^T S lam - c^T lam      subject to   lam[mg:] >= 0,

    ``S = [G; C] H^-1 [G; C]^T`` (m, m), ``c = [G; C] H^-1 b - [r_G; r_C]``; then ``x = H^-1 (b - [G; C]^T lam)``.
    DAQP takes the bounds as simple bounds; ``warm`` (mc,) marks the rows active at the last step (their bound
    ``lam >= 0`` starts inactive).  A singular S (redundant rows) is regularised by DAQP's proximal iterations.
    Returns lam (m,).  Raises SimulationError when DAQP fails."""
    import daqp

    m = S.shape[0]
    mc = m - mg
    bu = np.full(m, 1e30)
    bl = np.concatenate([np.full(mg, -1e30), np.zeros(mc)])
    sense = np.zeros(m, dtype=c_int)
    if warm is not None and mc:
        sense[mg:][~np.asarray(warm, dtype=bool)] = _ACTIVE | _LOWER
    A = np.zeros((0, m))
    Ss = np.ascontiguousarray(S, dtype=float)
    f = -np.asarray(c, dtype=float)
    lam, _, flag, _ = daqp.solve(Ss, f, A, bu, bl, sense, primal_tol=PRIMAL_TOL, dual_tol=DUAL_TOL, eps_prox=0.0)
    if flag < 1:  # a singular S: DAQP's proximal-point iterations
        lam, _, flag, _ = daqp.solve(Ss, f, A, bu, bl, np.zeros(m, dtype=c_int), primal_tol=PRIMAL_TOL,
                                     dual_tol=DUAL_TOL, eps_prox=1e-8 * max(float(np.abs(np.diag(S)).max()), 1e-300))
    if flag < 1:
        raise SimulationError(f"QP {_EXIT.get(flag, f'failed (DAQP exit flag {flag})')} (dual, {m} rows)")
    return np.asarray(lam, dtype=float)
