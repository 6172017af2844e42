"""Linearly implicit Euler, RedMax paper Eq. 2 (Sueda notes Eq. 2.86), as the reference does it.

Per step from t_k to t_{k+1} = t0 + (k+1) h:

1. re-parameterise joints (spherical exponential coordinates, Euler charts) at the start;
2. evaluate J, Jdot, forces (inputs at t_{k+1}) and their K, D at (q_k, qd_k);
3. solve ``(Mr + J^T (h Dm - h^2 Km) J + h Dr - h^2 Kr) qd_{k+1}
            = Mr qd_k + h (J^T (fm' - Mm Jdot qd_k) + fr')``,
   where ``f' = f + D qd_k`` is the Baraff-Witkin linearisation of each force (pure linear damping
   drops out: it is implicit only, notes Eq. 2.83); then ``q_{k+1} = q_k + h qd_{k+1}``.
"""

from __future__ import annotations

import numpy as np

from redmax.dynamics.redmax import redmax_system
from redmax.errors import SimulationError
from redmax.forces.builtin import model_forces
from redmax.integrators.common import Result, check_finite_state, record_energies, reparameterize, time_grid

__all__ = ["euler_step", "euler_system", "simulate_euler"]


def euler_system(model, q, qd, jstate, t_next: float, h: float, forces, symmetrize: bool = False):
    """The linear system of one linearly implicit Euler step (RedMax Eq. 2) at (q, qd) with inputs at
    ``t_next``: returns (A (n, n), rhs (n,)) with ``A qd_{k+1} = rhs``.  ``q``, ``qd`` and ``jstate``
    must already be re-parameterised (see :func:`euler_step`).

    ``symmetrize=True`` replaces the assembled stiffness matrices by ``(K + K^T)/2`` (Baraff & Witkin
    1998).  The exact K of a non-conservative or geometrically stiff force is not symmetric; the
    symmetric part keeps A symmetric (when the damping matrices are, as all built-in ones are), which
    Cholesky and CG need, at the price of a less exact linearisation: the step stays first-order
    accurate either way, and the two trajectories differ by O(h).
    """
    sys = redmax_system(model, q, qd, t_next, jstate, forces, want_K=True, want_D=True)
    J, terms = sys.J, sys.terms
    A = sys.Mr.copy()
    Mmax = None
    if terms.Dm is not None:
        Mmax = h * terms.Dm
    Km, Kr = terms.Km, terms.Kr
    if symmetrize:
        Km = None if Km is None else 0.5 * (Km + Km.T)
        Kr = None if Kr is None else 0.5 * (Kr + Kr.T)
    if Km is not None:
        Mmax = (-h * h) * Km if Mmax is None else Mmax - h * h * Km
    if Mmax is not None:
        A += J.T @ Mmax @ J
    if terms.Dr is not None:
        A += h * terms.Dr
    if Kr is not None:
        A -= h * h * Kr
    qvv = sys.Mm * (sys.Jdot @ qd)
    rhs = sys.Mr @ qd + h * (J.T @ (terms.fm_rhs.reshape(-1) - qvv) + terms.fr_rhs)
    return A, rhs


def euler_step(model, q, qd, jstate, t_next: float, h: float, forces, symmetrize: bool = False):
    """One linearly implicit Euler step from (q, qd) with inputs at ``t_next``; returns (q1, qd1, jstate1).
    Re-parameterises the joints, solves :func:`euler_system` and sets ``q1 = q + h qd1``."""
    q = np.array(q, dtype=float)
    qd = np.array(qd, dtype=float)
    js = np.array(jstate, dtype=np.int64)
    reparameterize(model, q, qd, js)
    A, rhs = euler_system(model, q, qd, js, t_next, h, forces, symmetrize)
    try:
        qd1 = np.linalg.solve(A, rhs)
    except np.linalg.LinAlgError:
        raise SimulationError(f"singular linearly implicit system at t = {t_next - h:.6g}") from None
    q1 = q + h * qd1
    check_finite_state(q1, qd1, t_next)
    return q1, qd1, js


def simulate_euler(model, state, h: float, duration: float, forces=None, symmetrize: bool = False,
                   progress=None) -> Result:
    """Integrate with linearly implicit Euler for ``round(duration / h)`` steps from ``state``."""
    forces = model_forces(model) if forces is None else forces
    n, t = time_grid(state.t, h, duration)
    qs = np.empty((n + 1, model.ndof))
    qds = np.empty((n + 1, model.ndof))
    jss = np.empty((n + 1, model.nb), dtype=np.int64)
    q, qd = np.array(state.q, dtype=float), np.array(state.qd, dtype=float)
    js = model.jstate0.copy() if state.jstate is None else np.array(state.jstate, dtype=np.int64)
    qs[0], qds[0], jss[0] = q, qd, js
    for k in range(n):
        q, qd, js = euler_step(model, q, qd, js, t[k + 1], h, forces, symmetrize)
        qs[k + 1], qds[k + 1], jss[k + 1] = q, qd, js
        if progress is not None:
            progress(t[k + 1], t[-1])
    energy = record_energies(model, forces, qs, qds, jss)
    return Result(t, qs, qds, jss, energy, {"integrator": "euler", "dt": h, "steps": n, "method": "redmax"})
