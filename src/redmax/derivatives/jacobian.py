"""Derivatives of the RedMax Jacobian, the reduced inertia and the quadratic velocity vector (Sueda notes §3.1-3.3).

Dense forms (O(n^3) memory; for small systems, tests and the notes' formulas), body frames, angular first:

* :func:`jacobian_derivatives` -- J, Jdot (6nb, n) and ``dJ[:, :, k] = dJ/dq_k``, ``dJdot[:, :, k] = dJdot/dq_k``
  (6nb, n, n) by notes Algorithm 11.  For body i with parent body p, ``A_ip = Ad(E_ip)`` maps p's twists into
  i's frame; with ``s_k = Ad_bj S_k`` (the diagonal block's columns) the joint derivatives give
  ``dA_ip/dq_k = -ad(s_k) A_ip``, ``Adot_ip = -ad(s qd_i) A_ip`` and
  ``dAdot_ip/dq_k = -ad(Ad_bj dS_k qd_i) A_ip + ad(s qd_i) ad(s_k) A_ip`` (notes Eqs. 3.7, 3.13, 3.14 with
  ``Q^-1 dQ/dq_k = [S_k]``); the fill is then line by line Algorithm 11.
* :func:`mass_matrix_derivative` -- ``dM/dq_k = dJ_k^T Mm J + J^T Mm dJ_k`` (notes Eq. 3.54).
* :func:`quadratic_velocity_derivatives` -- ``f_qvv = -J^T Mm Jdot qd``, ``K_qvv = d f_qvv/dq``,
  ``D_qvv = d f_qvv/dqd`` (notes Eq. 3.56; ``dJdot/dqd_j = dJ_j``).
* :func:`equations_derivatives_dense` -- the total reduced force ``f = f_r + tau + J^T f_m + f_qvv`` and
  ``K = df/dq``, ``D = df/dqd`` by notes Eq. 3.58, with ``f_m`` the body wrenches of gravity, the
  Coriolis term ``ad(phi)^T Mm phi`` and the applied maximal forces, ``K_m`` their derivative for the pose
  variation ``E <- E exp([J dq])`` at fixed body twists (gravity: ``[m R^T g]x`` in the linear rows, angular
  columns) and ``D_m = df_m/dphi`` (Coriolis: ``d(ad(phi)^T M phi)/dphi``; applied: minus their damping).

O(n^2) products that never form the (6nb, n, n) tensor:

* :func:`dJ_product` -- ``d(J x)/dq`` (6nb, n) for fixed x, and with ``x = qd`` the twist derivative
  ``dphi/dq = dJ/dq (x) qd`` of notes Eq. 3.57; :func:`dJdot_product` -- ``d(Jdot x)/dq``;
* :func:`dJT_product` -- ``d(J^T w)/dq`` (n, n) for body-fixed wrenches w (nb, 6);
* :func:`dM_product` -- ``d(M x)/dq = dJT_product(Mm J x) + J^T Mm dJ_product(x)`` (n, n).

Sign convention (notes §3.3): ``K = df/dq`` and ``D = df/dqd`` are plain derivatives (negative for springs
and dampers).  The force library's own ``D`` is the damping coefficient ``-df/dphi``; the conversion happens
here.  Everything is scalar-generic (complex step works).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from redmax.configuration import charts_for
from redmax.joints.derivatives import joint_derivatives
from redmax.kinematics import kinematics
from redmax.spatial import Ad, ad, compose, inv_se3

__all__ = [
    "JacobianDerivatives",
    "dJT_product",
    "dJ_product",
    "dJdot_product",
    "dM_product",
    "equations_derivatives_dense",
    "jacobian_derivatives",
    "joint_hessians",
    "mass_matrix_derivative",
    "quadratic_velocity_derivatives",
]


@dataclass
class JacobianDerivatives:
    """J, Jdot (6nb, n) and dJ, dJdot (6nb, n, n) (``[:, :, k] = d/dq_k``) at one state, body frames."""

    J: np.ndarray
    Jdot: np.ndarray
    dJ: np.ndarray
    dJdot: np.ndarray


def _dtype(*vs):
    return np.result_type(*[np.asarray(v) for v in vs], np.float64)


def joint_hessians(model, q, qd, jstate) -> tuple[np.ndarray, np.ndarray]:
    """Per-DOF joint Hessians in the joints' own frames: ``dS`` (6, n, n_max) and ``dSqd`` (6, n) with
    ``dSqd[:, k] = sum_a dS[:, a, k] qd_a`` (zero for joints with a constant S).  Returns (dS_blocks, dSqd) where
    ``dS_blocks[i]`` is joint i's (6, n_i, n_i) Hessian (None when constant)."""
    from redmax.joints.simple import PLANAR, PRISMATIC, REVOLUTE, TRANSLATIONAL

    constant = {0, REVOLUTE, PRISMATIC, PLANAR, TRANSLATIONAL}
    dt = _dtype(q, qd)
    n = model.ndof
    blocks = []
    dSqd = np.zeros((6, n), dtype=dt)
    for i in range(model.nb):
        a, b = int(model.idx[i]), int(model.idx[i + 1])
        code = int(model.jtype[i])
        if code in constant or b == a:
            blocks.append(None)
            continue
        m = b - a
        Q = np.zeros((4, 4), dt)
        S = np.zeros((6, m), dt)
        Sd = np.zeros((6, m), dt)
        dS = np.zeros((6, m, m), dt)
        dSd = np.zeros((6, m, m), dt)
        dQ = np.zeros((4, 4, m), dt)
        joint_derivatives(code, model.jparam[model.jp_off[i]:model.jp_off[i + 1]], np.ascontiguousarray(q[a:b], dt),
                          np.ascontiguousarray(qd[a:b], dt), int(jstate[i]), Q, S, Sd, dS, dSd, dQ)
        blocks.append((dS, dSd))
        dSqd[:, a:b] = np.einsum("rak,a->rk", dS, qd[a:b])
    return blocks, dSqd


def jacobian_derivatives(model, q, qd=None, jstate=None) -> JacobianDerivatives:
    """J, Jdot, dJ/dq and dJdot/dq at (q, qd) by notes Algorithm 11 (module docstring); O(n^3)."""
    q = np.asarray(q)
    qd = np.zeros_like(q) if qd is None else np.asarray(qd)
    js = charts_for(model, jstate)
    dt = _dtype(q, qd)
    q = q.astype(dt)
    qd = qd.astype(dt)
    kin = kinematics(model, q, qd, js)
    hess, _ = joint_hessians(model, q, qd, js)
    nb, n = model.nb, model.ndof
    J = np.zeros((6 * nb, n), dt)
    Jd = np.zeros((6 * nb, n), dt)
    dJ = np.zeros((6 * nb, n, n), dt)
    dJd = np.zeros((6 * nb, n, n), dt)
    for i in range(nb):
        a, b = int(model.idx[i]), int(model.idx[i + 1])
        r = slice(6 * i, 6 * i + 6)
        Abj = model.Ad_bj[i].astype(dt)
        s = Abj @ kin.S[:, a:b]
        J[r, a:b] = s
        Jd[r, a:b] = Abj @ kin.Sdot[:, a:b]
        if hess[i] is not None:
            dS, dSd = hess[i]
            dJ[r, a:b, a:b] = np.einsum("rc,cak->rak", Abj, dS)
            dJd[r, a:b, a:b] = np.einsum("rc,cak->rak", Abj, dSd)
        p = int(model.parent[i])
        if p < 0 or a == 0:
            continue
        rp = slice(6 * p, 6 * p + 6)
        Aip = Ad(compose(inv_se3(kin.E_wb[i]), kin.E_wb[p]))
        w = s @ qd[a:b]
        adw = ad(np.ascontiguousarray(w))
        Adot = -adw @ Aip
        Jp, Jdp = J[rp, :a], Jd[rp, :a]
        J[r, :a] = Aip @ Jp
        Jd[r, :a] = Aip @ Jdp + Adot @ Jp
        for k in range(b - a):
            adk = ad(np.ascontiguousarray(s[:, k]))
            dA = -adk @ Aip
            if hess[i] is not None:
                u = Abj @ (hess[i][0][:, :, k] @ qd[a:b])
                dAdot = -ad(np.ascontiguousarray(u)) @ Aip + adw @ adk @ Aip
            else:
                dAdot = adw @ adk @ Aip
            dJ[r, :a, a + k] = dA @ Jp
            dJd[r, :a, a + k] = dA @ Jdp + dAdot @ Jp
        dJ[r, :a, :a] = np.einsum("rc,cak->rak", Aip, dJ[rp, :a, :a])
        dJd[r, :a, :a] = np.einsum("rc,cak->rak", Aip, dJd[rp, :a, :a]) + np.einsum("rc,cak->rak", Adot,
                                                                                    dJ[rp, :a, :a])
    return JacobianDerivatives(J, Jd, dJ, dJd)


def _Mm(model, dt):
    return model.M_body.reshape(-1).astype(dt)


def mass_matrix_derivative(model, q, jstate=None, jd: JacobianDerivatives | None = None) -> np.ndarray:
    """``dM[:, :, k] = dM/dq_k`` (n, n, n) (notes Eq. 3.54)."""
    jd = jacobian_derivatives(model, q, None, jstate) if jd is None else jd
    Mm = _Mm(model, jd.J.dtype)
    T = np.einsum("ri,rjk->ijk", Mm[:, None] * jd.J, jd.dJ)
    return T + np.transpose(T, (1, 0, 2))


def quadratic_velocity_derivatives(model, q, qd, jstate=None, jd: JacobianDerivatives | None = None):
    """``(f_qvv, K_qvv, D_qvv)``: ``f_qvv = -J^T Mm Jdot qd`` (n,) and its derivatives (n, n) (notes Eq. 3.56)."""
    jd = jacobian_derivatives(model, q, qd, jstate) if jd is None else jd
    qd = np.asarray(qd, dtype=jd.J.dtype)
    Mm = _Mm(model, jd.J.dtype)
    MJ = Mm[:, None] * jd.J
    MJdq = Mm * (jd.Jdot @ qd)
    f = -jd.J.T @ MJdq
    K = -np.einsum("rak,r->ak", jd.dJ, MJdq) - MJ.T @ np.einsum("rak,a->rk", jd.dJdot, qd)
    D = -MJ.T @ jd.Jdot - MJ.T @ np.einsum("rak,a->rk", jd.dJ, qd)
    return f, K, D


# ---------------------------------------------------------------------------------------------------------------
# O(n^2) products
# ---------------------------------------------------------------------------------------------------------------


def _products(model, q, qd, x, jstate, want_dot: bool):
    """Recursions for ``y = J x``, ``z = Jdot x`` and their q-derivatives Y, Z (nb, 6, n) (no dJ tensor)."""
    q = np.asarray(q)
    qd = np.zeros_like(q) if qd is None else np.asarray(qd)
    dt = _dtype(q, qd, x)
    q, qd, x = q.astype(dt), qd.astype(dt), np.asarray(x).astype(dt)
    js = charts_for(model, jstate)
    kin = kinematics(model, q, qd, js)
    hess, _ = joint_hessians(model, q, qd, js)
    nb, n = model.nb, model.ndof
    y = np.zeros((nb, 6), dt)
    z = np.zeros((nb, 6), dt)
    Y = np.zeros((nb, 6, n), dt)
    Z = np.zeros((nb, 6, n), dt)
    for i in range(nb):
        a, b = int(model.idx[i]), int(model.idx[i + 1])
        Abj = model.Ad_bj[i].astype(dt)
        s = Abj @ kin.S[:, a:b]
        y[i] = s @ x[a:b]
        z[i] = Abj @ (kin.Sdot[:, a:b] @ x[a:b])
        if hess[i] is not None:
            dS, dSd = hess[i]
            Y[i, :, a:b] = Abj @ np.einsum("rak,a->rk", dS, x[a:b])
            Z[i, :, a:b] = Abj @ np.einsum("rak,a->rk", dSd, x[a:b])
        p = int(model.parent[i])
        if p < 0:
            continue
        Aip = Ad(compose(inv_se3(kin.E_wb[i]), kin.E_wb[p]))
        w = s @ qd[a:b]
        adw = ad(np.ascontiguousarray(w))
        Adot = -adw @ Aip
        y[i] += Aip @ y[p]
        z[i] += Aip @ z[p] + Adot @ y[p]
        Y[i] += Aip @ Y[p]
        if want_dot:
            Z[i] += Aip @ Z[p] + Adot @ Y[p]
        for k in range(b - a):
            adk = ad(np.ascontiguousarray(s[:, k]))
            dA = -adk @ Aip
            Y[i, :, a + k] += dA @ y[p]
            if want_dot:
                dAdot = adw @ adk @ Aip
                if hess[i] is not None:
                    dAdot = dAdot - ad(np.ascontiguousarray(Abj @ (hess[i][0][:, :, k] @ qd[a:b]))) @ Aip
                Z[i, :, a + k] += dA @ z[p] + dAdot @ y[p]
    return kin, y, z, Y, Z


def dJ_product(model, q, x, jstate=None) -> np.ndarray:
    """``d(J x)/dq`` (6nb, n) for a fixed rate vector x (n,), O(n^2) by differentiating notes Algorithm 5.
    With ``x = qd`` this is ``dphi/dq = dJ/dq (x) qd`` (notes Eq. 3.57)."""
    _, _, _, Y, _ = _products(model, q, None, x, jstate, False)
    return Y.reshape(6 * model.nb, model.ndof)


def dJdot_product(model, q, qd, x, jstate=None) -> np.ndarray:
    """``d(Jdot x)/dq`` (6nb, n) at rates qd for a fixed x (n,), O(n^2)."""
    _, _, _, _, Z = _products(model, q, qd, x, jstate, True)
    return Z.reshape(6 * model.nb, model.ndof)


def dJT_product(model, q, w, jstate=None) -> np.ndarray:
    """``d(J^T w)/dq`` (n, n) for body-frame wrenches w (nb, 6) held fixed in the bodies, O(n d).

    In world coordinates (``S_r`` the world twist of DOF r, ``W^C_k`` the world wrench of the subtree of DOF k's
    joint): the entry (r, k) is ``-(ad(S_k) S_r)^T W^C_k`` when DOF k's joint is a descendant of DOF r's,
    ``(Ad(E_j) dS_r/dq_k)^T W^C_j`` within one joint j, and zero otherwise (moving an ancestor moves the subtree
    rigidly)."""
    q = np.asarray(q)
    dt = _dtype(q, w)
    q = q.astype(dt)
    js = charts_for(model, jstate)
    kin = kinematics(model, q, None, js)
    hess, _ = joint_hessians(model, q, np.zeros_like(q), js)
    nb, n = model.nb, model.ndof
    w = np.asarray(w, dtype=dt).reshape(nb, 6)
    Sw = np.zeros((n, 6), dt)
    AdJ = [Ad(kin.E_wj[i]) for i in range(nb)]
    for i in range(nb):
        a, b = int(model.idx[i]), int(model.idx[i + 1])
        Sw[a:b] = (AdJ[i] @ kin.S[:, a:b]).T
    Wc = np.array([np.linalg.solve(Ad(kin.E_wb[i]).T, w[i]) for i in range(nb)], dtype=dt).reshape(nb, 6)
    for i in range(nb - 1, 0, -1):
        p = int(model.parent[i])
        if p >= 0:
            Wc[p] += Wc[i]
    G = np.zeros((n, n), dt)
    for i in range(nb):
        a, b = int(model.idx[i]), int(model.idx[i + 1])
        if hess[i] is not None:
            dS = hess[i][0]
            for k in range(b - a):
                G[a:b, a + k] = (AdJ[i] @ dS[:, :, k]).T @ Wc[i]
        j = int(model.parent[i])
        while j >= 0:
            for k in range(a, b):
                adk = ad(np.ascontiguousarray(Sw[k]))
                for r in range(int(model.idx[j]), int(model.idx[j + 1])):
                    G[r, k] = -(adk @ Sw[r]) @ Wc[i]
            j = int(model.parent[j])
    return G


def dM_product(model, q, x, jstate=None) -> np.ndarray:
    """``d(M x)/dq`` (n, n) for a fixed x (n,), O(n^2): ``dJ^T (Mm J x) + J^T Mm d(J x)/dq``."""
    from redmax.kinematics import JT_product

    q = np.asarray(q)
    dt = _dtype(q, x)
    kin, y, _, Y, _ = _products(model, q.astype(dt), None, np.asarray(x).astype(dt), jstate, False)
    Mb = model.M_body.astype(dt)
    out = dJT_product(model, q.astype(dt), Mb * y, jstate)
    MY = Mb[:, :, None] * Y
    for k in range(model.ndof):
        out[:, k] += JT_product(kin, model, MY[:, :, k])
    return out


# ---------------------------------------------------------------------------------------------------------------
# the total reduced force and its derivatives (notes Eq. 3.58)
# ---------------------------------------------------------------------------------------------------------------


def coriolis_damping(Mb, phi) -> np.ndarray:
    """``d(ad(phi)^T M phi)/dphi`` (6, 6) for a diagonal inertia Mb (6,) and twist phi (6,)."""
    dt = np.result_type(Mb, phi)
    M = np.diag(Mb).astype(dt)
    Mphi = M @ phi
    out = np.empty((6, 6), dt)
    E = np.eye(6, dtype=dt)
    adp = ad(np.ascontiguousarray(phi))
    for j in range(6):
        out[:, j] = ad(np.ascontiguousarray(E[j])).T @ Mphi + adp.T @ (M @ E[j])
    return out


def equations_derivatives_dense(model, q, qd, t: float = 0.0, jstate=None, forces=None, tau=None):
    """``(f, K, D)`` of the total reduced force by notes Eq. 3.58 with the dense dJ/dq (module docstring).

    Args:
        forces: applied forces (default the model's); their stiffness is taken exact (mode "full").
        tau: (n,) input torques (default the model's inputs at t).
    Returns:
        f (n,), ``K = df/dq`` and ``D = df/dqd`` (n, n).
    """
    from redmax.dynamics.redmax import applied_terms, gravity_wrenches
    from redmax.forces.builtin import coriolis_wrenches
    from redmax.forces.exact import exact_forces

    q = np.asarray(q)
    qd = np.asarray(qd)
    dt = _dtype(q, qd)
    q, qd = q.astype(dt), qd.astype(dt)
    js = charts_for(model, jstate)
    jd = jacobian_derivatives(model, q, qd, js)
    kin = kinematics(model, q, qd, js)
    nb = model.nb
    terms = applied_terms(model, kin, t, exact_forces(model, forces), True)
    dense = terms.dense(kin, "body")
    fm = (gravity_wrenches(model, kin) + coriolis_wrenches(model.M_body, kin.phi) + terms.fm_body(kin)).reshape(-1)
    Km = dense["Km"].astype(dt)
    Dm = -dense["Dm"].astype(dt)
    for i in range(nb):
        r = slice(6 * i, 6 * i + 6)
        g = model.mass[i] * (kin.E_wb[i, :3, :3].T @ model.gravity.astype(dt))
        Km[6 * i + 3:6 * i + 6, 6 * i:6 * i + 3] += np.array([[0, -g[2], g[1]], [g[2], 0, -g[0]], [-g[1], g[0], 0]])
        Dm[r, r] += coriolis_damping(model.M_body[i].astype(dt), kin.phi[i])
    tq = model.inputs.torque(t) if tau is None else np.asarray(tau)
    f_qvv, K_qvv, D_qvv = quadratic_velocity_derivatives(model, q, qd, js, jd)
    J = jd.J
    f = terms.fr + tq + J.T @ fm + f_qvv
    K = terms.Kr.dense() + J.T @ Km @ J + K_qvv
    K = K + np.einsum("rak,r->ak", jd.dJ, fm) + J.T @ Dm @ np.einsum("rak,a->rk", jd.dJ, qd)
    D = -terms.Dr.dense() + J.T @ Dm @ J + D_qvv
    return f, K, D
