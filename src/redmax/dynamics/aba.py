"""Recursive hybrid dynamics of Kim & Pollard (2011), RedMax supplemental Algorithm 6.

Joints marked ``prescribed`` take their acceleration as input and return the torque that produces
it; the others take their torque and return their acceleration.  With no prescribed joint this is the
articulated-body algorithm (forward dynamics).  Joint frames throughout; gravity enters through the
base acceleration ``[0; -g]`` instead of a per-body external force (same physics, fewer products).

Backward pass (lines 6-17):  ``Mhat_j = M_j + sum_c X_c^T Pi_c X_c``,
``Bhat_j = -ad(V_j)^T M_j V_j - F_ext_j + sum_c X_c^T beta_c``, then either
``Pi = Mhat, beta = Bhat + Mhat (eta + S qdd)`` (prescribed) or
``Psi = (S^T Mhat S)^-1, Pi = Mhat - Mhat S Psi S^T Mhat,
beta = Bhat + Mhat (eta + S Psi (tau - S^T (Mhat eta + Bhat)))``.
Forward pass (lines 18-28) gives qdd (or tau) and the joint accelerations.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from redmax.dynamics._tree import base_acceleration, joint_pass, joint_wrenches
from redmax.spatial import adT, adv


@njit(cache=True)
def hybrid_kernel(parent, jtype, idx, jp_off, jparam, E_pj0, M_joint, Ad_bj, gravity, q, qd, tau_in, qdd_in,
                  prescribed, jstate, f_body):
    """Hybrid dynamics: returns (qdd (ndof,), tau (ndof,)).

    Args:
        tau_in: torques used by free joints.  qdd_in: accelerations used by prescribed joints.
        prescribed: (nb,) bool.  f_body: (nb, 6) external wrenches in body frames.
    """
    nb = parent.shape[0]
    n = q.shape[0]
    dt = q.dtype
    X, S, Sdot = joint_pass(jtype, idx, jp_off, jparam, E_pj0, q, qd, jstate)
    a0 = base_acceleration(gravity, dt)
    Fext = joint_wrenches(Ad_bj, f_body, dt)
    V = np.zeros((nb, 6), dtype=dt)
    eta = np.zeros((nb, 6), dtype=dt)
    for i in range(nb):
        a = idx[i]
        b = idx[i + 1]
        Sqd = np.ascontiguousarray(S[:, a:b]) @ qd[a:b]
        p = parent[i]
        V[i] = Sqd if p < 0 else X[i] @ V[p] + Sqd
        eta[i] = adv(V[i], Sqd) + np.ascontiguousarray(Sdot[:, a:b]) @ qd[a:b]
    Mhat = np.zeros((nb, 6, 6), dtype=dt)
    Bhat = np.zeros((nb, 6), dtype=dt)
    for i in range(nb):
        Mi = M_joint[i].astype(dt)
        Mhat[i] = Mi
        Bhat[i] = -adT(V[i], Mi @ V[i]) - Fext[i]
    qdd = np.zeros(n, dtype=dt)
    tau = np.zeros(n, dtype=dt)
    for i in range(n):
        qdd[i] = qdd_in[i]
        tau[i] = tau_in[i]
    Psi_all = np.zeros((nb, 6, 6), dtype=dt)  # Psi_i in the top-left (n_i x n_i) block
    for i in range(nb - 1, -1, -1):
        a = idx[i]
        b = idx[i + 1]
        ni = b - a
        Si = np.ascontiguousarray(S[:, a:b])
        Mh = Mhat[i]
        if prescribed[i] or ni == 0:
            Pi = Mh
            beta = Bhat[i] + Mh @ (eta[i] + Si @ qdd[a:b])
        else:
            MS = Mh @ Si
            Psi = np.linalg.inv(Si.T @ MS)
            Psi_all[i, :ni, :ni] = Psi
            Pi = Mh - MS @ Psi @ MS.T
            u = tau[a:b] - Si.T @ (Mh @ eta[i] + Bhat[i])
            beta = Bhat[i] + Mh @ (eta[i] + Si @ (Psi @ u))
        p = parent[i]
        if p >= 0:
            Mhat[p] += X[i].T @ Pi @ X[i]
            Bhat[p] += X[i].T @ beta
    Vdot = np.zeros((nb, 6), dtype=dt)
    for i in range(nb):
        a = idx[i]
        b = idx[i + 1]
        ni = b - a
        Si = np.ascontiguousarray(S[:, a:b])
        p = parent[i]
        Ap = X[i] @ (a0 if p < 0 else Vdot[p])
        if prescribed[i] or ni == 0:
            Vdot[i] = Ap + Si @ qdd[a:b] + eta[i]
            F = Mhat[i] @ Vdot[i] + Bhat[i]
            tau[a:b] = Si.T @ F
        else:
            Psi = np.ascontiguousarray(Psi_all[i, :ni, :ni])
            qdd[a:b] = Psi @ (tau[a:b] - Si.T @ (Mhat[i] @ (Ap + eta[i])) - Si.T @ Bhat[i])
            Vdot[i] = Ap + Si @ qdd[a:b] + eta[i]
    return qdd, tau
