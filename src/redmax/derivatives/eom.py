"""K = df/dq and D = df/dqd of the reduced equations of motion in O(n d + force blocks) (Sueda notes Eq. 3.58).

The total reduced force of the RedMax equations ``M qdd = f`` is

    f(q, qd) = tau + f_r + J^T f_m + f_qvv = tau + f_r - ID(q, qd, 0; f_app),

where ``ID(q, qd, qdd; f_ext) = M qdd + c(q, qd) - J^T f_ext`` is inverse dynamics (gravity and the quadratic
velocity terms in c) with the applied maximal wrenches ``f_app`` as body-fixed external wrenches.  Hence, without
ever forming dJ/dq:

    K = K_r - dID/dq + J^T K_app J + J^T Dn_app Psi,     D = Dn_r - dID/dqd + J^T Dn_app J,

* ``dID/dq``, ``dID/dqd`` (wrenches held fixed in the bodies: this is the ``dJ^T/dq f_m`` term of Eq. 3.58 and the
  derivatives of gravity, Coriolis and ``f_qvv``) by IDSVA (:mod:`.rnea_first_order`, O(n d));
* ``K_app``, ``Dn_app = -D_app`` the applied forces' exact stiffness and damping (world blocks; ``D`` of the force
  library is the damping coefficient ``-df/dphi``);
* ``Psi`` (n columns, world) the derivative of the bodies' twists at fixed rates, ``Ad(E_b) dphi_b/dq_k`` for
  every body b below DOF k: ``Psi_k = ad(V_p) S_k + Ad(E_j) (dS_k qd_j)`` with ``V_p`` the world twist of the
  joint's parent body, ``S_k`` DOF k's world twist and ``dS_k qd_j = sum_a dS_a/dq_k qd_a`` (notes Eq. 3.57, the
  ``J^T D_m (dJ/dq (x) qd)`` term);
* ``J^T B X`` for body-pair blocks B (world) and columns X = S or Psi by composites (diagonal blocks, as in CRBA)
  plus a double walk for off-diagonal pairs (:func:`jt_b_x`).

The same pieces give the Newton tangent of the implicit integrators (:mod:`redmax.integrators.implicit`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from redmax._jit import njit
from redmax.configuration import charts_for
from redmax.derivatives.jacobian import joint_hessians
from redmax.kinematics import kinematics
from redmax.spatial import Ad, ad

__all__ = ["EquationsDerivatives", "equations_derivatives", "jt_b_x", "psi_columns", "total_force", "world_columns"]


@njit(cache=True)
def jt_b_x(parent, idx, Sw, X, pairs, blocks, out):
    """``out += J^T B X`` (n, n): J the world Jacobian (columns ``Sw`` (n, 6)), B the body-pair blocks
    ``blocks`` (m, 6, 6) at ``pairs`` (m, 2) (world), X (n, 6) one 6-vector per DOF acting on the bodies below it.

    Diagonal blocks are summed into subtree composites Q (entry (r, k) of two DOFs on one path is
    ``S_r^T Q_c X_k`` with c the deeper joint); off-diagonal pairs walk both paths."""
    nb = parent.shape[0]
    dt = out.dtype
    Q = np.zeros((nb, 6, 6), dtype=dt)
    for t in range(pairs.shape[0]):
        a = pairs[t, 0]
        b = pairs[t, 1]
        if a < 0 or b < 0:
            continue
        if a == b:
            for r in range(6):
                for c in range(6):
                    Q[a, r, c] += blocks[t, r, c]
            continue
        i = a
        while i >= 0:
            for r in range(idx[i], idx[i + 1]):
                u = np.zeros(6, dtype=dt)
                for c in range(6):
                    s = 0.0 * u[0]
                    for l in range(6):
                        s += Sw[r, l] * blocks[t, l, c]
                    u[c] = s
                j = b
                while j >= 0:
                    for k in range(idx[j], idx[j + 1]):
                        s = 0.0 * u[0]
                        for c in range(6):
                            s += u[c] * X[k, c]
                        out[r, k] += s
                    j = parent[j]
            i = parent[i]
    for i in range(nb - 1, -1, -1):
        p = parent[i]
        if p >= 0:
            for r in range(6):
                for c in range(6):
                    Q[p, r, c] += Q[i, r, c]
    F = np.zeros(6, dtype=dt)
    G = np.zeros(6, dtype=dt)
    for i in range(nb):
        for d in range(idx[i], idx[i + 1]):
            for c in range(6):
                s = 0.0 * F[0]
                g = 0.0 * F[0]
                for l in range(6):
                    s += Sw[d, l] * Q[i, l, c]
                    g += Q[i, c, l] * X[d, l]
                F[c] = s
                G[c] = g
            for e in range(idx[i], idx[i + 1]):
                s = 0.0 * F[0]
                for c in range(6):
                    s += F[c] * X[e, c]
                out[d, e] += s
            j = parent[i]
            while j >= 0:
                for e in range(idx[j], idx[j + 1]):
                    s = 0.0 * F[0]
                    g = 0.0 * F[0]
                    for c in range(6):
                        s += F[c] * X[e, c]
                        g += Sw[e, c] * G[c]
                    out[d, e] += s
                    out[e, d] += g
                j = parent[j]


def world_columns(model, kin):
    """World twists of the DOFs ``Sw`` (n, 6), world twists of the bodies ``Vw`` (nb, 6) and the world adjoints
    of the joint frames ``AdJ`` (nb, 6, 6) of a Kinematics."""
    nb, n = model.nb, model.ndof
    dt = kin.S.dtype
    AdJ = np.empty((nb, 6, 6), dt)
    Sw = np.empty((n, 6), dt)
    Vw = np.empty((nb, 6), dt)
    for i in range(nb):
        AdJ[i] = Ad(kin.E_wj[i])
        a, b = int(model.idx[i]), int(model.idx[i + 1])
        Sw[a:b] = (AdJ[i] @ kin.S[:, a:b]).T
        Vw[i] = AdJ[i] @ kin.V[i]
    return Sw, Vw, AdJ


def psi_columns(model, Sw, Vw, AdJ, dSqd) -> np.ndarray:
    """``Psi`` (n, 6): ``Psi_k = ad(V_p) S_k + Ad(E_j) dSqd_k`` (module docstring)."""
    out = np.zeros_like(Sw)
    for i in range(model.nb):
        a, b = int(model.idx[i]), int(model.idx[i + 1])
        if a == b:
            continue
        p = int(model.parent[i])
        if p >= 0:
            out[a:b] = (ad(np.ascontiguousarray(Vw[p])) @ Sw[a:b].T).T
        if np.any(dSqd[:, a:b] != 0):
            out[a:b] += (AdJ[i] @ dSqd[:, a:b]).T
    return out


@dataclass
class EquationsDerivatives:
    """The total reduced force and its derivatives at one state.

    Attributes:
        f: (n,) ``tau + f_r + J^T f_m + f_qvv``.  K: (n, n) ``df/dq``.  D: (n, n) ``df/dqd`` (plain derivatives,
        negative for springs and dampers).  M: (n, n) reduced inertia (when requested, else None).
    """

    f: np.ndarray
    K: np.ndarray
    D: np.ndarray
    M: np.ndarray | None = None


def _blocks(bs, dt):
    if bs is None or bs.pairs.shape[0] == 0:
        return np.zeros((0, 2), np.int64), np.zeros((0, 6, 6), dt)
    return np.ascontiguousarray(bs.pairs, dtype=np.int64), np.ascontiguousarray(bs.blocks, dtype=dt)


def total_force(model, q, qd, t: float = 0.0, jstate=None, forces=None, tau=None) -> np.ndarray:
    """The total reduced force ``f = tau + f_r + J^T f_m + f_qvv`` (n,) of ``M qdd = f`` by one RNEA pass
    (``f = tau + f_r - ID(q, qd, 0; f_app)``); real or complex q, qd."""
    from redmax.dynamics import rnea
    from redmax.dynamics.redmax import applied_terms
    from redmax.forces.exact import exact_forces

    q = np.asarray(q)
    qd = np.asarray(qd)
    dt = np.result_type(q, qd, np.float64)
    q, qd = np.ascontiguousarray(q, dt), np.ascontiguousarray(qd, dt)
    js = charts_for(model, jstate)
    kin = kinematics(model, q, qd, js)
    terms = applied_terms(model, kin, t, exact_forces(model, forces), False)
    tq = model.inputs.torque(t) if tau is None else np.asarray(tau)
    return tq + terms.fr - rnea(model, q, qd, np.zeros_like(q), f_ext=terms.fm_body(kin).astype(dt), jstate=js)


def equations_derivatives(model, q, qd, t: float = 0.0, jstate=None, forces=None, tau=None, *,
                          method: str = "recursive", want_M: bool = False) -> EquationsDerivatives:
    """``f``, ``K = df/dq`` and ``D = df/dqd`` of the reduced equations ``M qdd = f`` at (q, qd, t).

    Args:
        q, qd: (n,) real or complex.  jstate: chart words (required for Euler-angle joints).
        forces: applied forces (default: the model's), taken with exact stiffness; gravity and the Coriolis
            terms are always included.  tau: (n,) input torques (default: the model's inputs at t).
        method: "recursive" (O(n d + blocks), module docstring) or "dense" (notes Eq. 3.58 with the dense dJ/dq,
            :func:`.jacobian.equations_derivatives_dense`).
        want_M: also return the reduced inertia M.
    """
    from redmax.derivatives.first_order import rnea_derivatives
    from redmax.dynamics import crba, rnea
    from redmax.dynamics.redmax import applied_terms
    from redmax.errors import ModelError
    from redmax.forces.exact import exact_forces

    q = np.asarray(q)
    qd = np.asarray(qd)
    dt = np.result_type(q, qd, np.float64)
    q, qd = np.ascontiguousarray(q, dt), np.ascontiguousarray(qd, dt)
    js = charts_for(model, jstate)
    if method == "dense":
        from redmax.derivatives.jacobian import equations_derivatives_dense

        f, K, D = equations_derivatives_dense(model, q, qd, t, js, forces, tau)
        return EquationsDerivatives(f, K, D, crba(model, q, js) if want_M else None)
    if method != "recursive":
        raise ModelError(f"method must be 'recursive' or 'dense', got {method!r}")
    kin = kinematics(model, q, qd, js)
    terms = applied_terms(model, kin, t, exact_forces(model, forces), True)
    fb = terms.fm_body(kin).astype(dt)
    tq = model.inputs.torque(t) if tau is None else np.asarray(tau)
    zero = np.zeros_like(q)
    f = tq + terms.fr - rnea(model, q, qd, zero, f_ext=fb, jstate=js)
    Tq, Tv = rnea_derivatives(model, q, qd, zero, f_ext=fb, jstate=js)
    K = terms.Kr.dense().astype(dt) - Tq
    D = -terms.Dr.dense().astype(dt) - Tv
    Sw, Vw, AdJ = world_columns(model, kin)
    _, dSqd = joint_hessians(model, q, qd, js)
    Psi = psi_columns(model, Sw, Vw, AdJ, dSqd)
    kp, kb = _blocks(terms.Km, dt)
    dp, db = _blocks(terms.Dm, dt)
    jt_b_x(model.parent, model.idx, Sw, Sw, kp, kb, K)
    jt_b_x(model.parent, model.idx, Sw, Psi, dp, -db, K)
    jt_b_x(model.parent, model.idx, Sw, Sw, dp, -db, D)
    return EquationsDerivatives(f, K, D, crba(model, q, js) if want_M else None)
