"""Recursive Newton-Euler inverse dynamics (RNEA) in joint frames.

Forward pass (RedMax supplemental Alg. 6, lines 1-5, with the accelerations of lines 20-21):

    V_i = X_i V_p + S_i qd_i,   eta_i = ad(V_i) S_i qd_i + Sdot_i qd_i,
    A_i = X_i A_p + S_i qdd_i + eta_i,   F_i = M_i A_i - ad(V_i)^T M_i V_i - F_ext_i,

with the base acceleration ``A_0 = [0; -g]`` carrying gravity.  Backward pass:
``tau_i = S_i^T F_i``, ``F_p += X_i^T F_i``.  Scalar-generic (complex step works).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from redmax.dynamics._tree import base_acceleration, joint_pass, joint_wrenches
from redmax.spatial import adT, adv


@njit(cache=True)
def rnea_kernel(parent, jtype, idx, jp_off, jparam, E_pj0, M_joint, Ad_bj, gravity, q, qd, qdd, jstate, f_body):
    """Joint torques tau (ndof,) for (q, qd, qdd) and body-frame external wrenches f_body (nb, 6)."""
    nb = parent.shape[0]
    dt = q.dtype
    X, S, Sdot = joint_pass(jtype, idx, jp_off, jparam, E_pj0, q, qd, jstate)
    a0 = base_acceleration(gravity, dt)
    Fext = joint_wrenches(Ad_bj, f_body, dt)
    V = np.zeros((nb, 6), dtype=dt)
    A = np.zeros((nb, 6), dtype=dt)
    F = np.zeros((nb, 6), dtype=dt)
    for i in range(nb):
        a = idx[i]
        b = idx[i + 1]
        Si = np.ascontiguousarray(S[:, a:b])
        Sqd = Si @ qd[a:b]
        p = parent[i]
        if p >= 0:
            V[i] = X[i] @ V[p] + Sqd
            A[i] = X[i] @ A[p]
        else:
            V[i] = Sqd
            A[i] = X[i] @ a0
        eta = adv(V[i], Sqd)  # ad(V) S qd
        A[i] += Si @ qdd[a:b] + eta + np.ascontiguousarray(Sdot[:, a:b]) @ qd[a:b]
        Mi = M_joint[i].astype(dt)
        F[i] = Mi @ A[i] - adT(V[i], Mi @ V[i]) - Fext[i]
    tau = np.zeros(q.shape[0], dtype=dt)
    for i in range(nb - 1, -1, -1):
        a = idx[i]
        b = idx[i + 1]
        tau[a:b] = np.ascontiguousarray(S[:, a:b]).T @ F[i]
        p = parent[i]
        if p >= 0:
            F[p] += X[i].T @ F[i]
    return tau

