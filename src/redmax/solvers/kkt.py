"""Equality-constrained linear systems ``[[A, G^T], [G, 0]] [x; lam] = [b; c]`` (notes Eq. 1.88)."""

from __future__ import annotations

import numpy as np

from redmax.errors import SimulationError


def solve_kkt(A: np.ndarray, G: np.ndarray, b: np.ndarray, c: np.ndarray):
    """Solve the KKT system of the equality-constrained quadratic program
    ``min 1/2 x^T A x - b^T x  s.t.  G x = c``.

    Args:
        A: (n, n) symmetric positive definite (on the null space of G).  G: (m, n).  b: (n,).  c: (m,).
    Returns:
        (x (n,), lam (m,)); the constraint force is ``-G^T lam``.
    """
    n, m = A.shape[0], G.shape[0]
    if m == 0:
        return np.linalg.solve(A, b), np.zeros(0)
    K = np.zeros((n + m, n + m), dtype=np.result_type(A, G))
    K[:n, :n] = A
    K[:n, n:] = G.T
    K[n:, :n] = G
    rhs = np.concatenate([b, c])
    try:
        sol = np.linalg.solve(K, rhs)
    except np.linalg.LinAlgError:
        raise SimulationError("singular KKT system (redundant or inconsistent constraints)") from None
    return sol[:n], sol[n:]
