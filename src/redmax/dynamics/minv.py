"""Inverse joint-space inertia via recursive forward dynamics (Sueda notes §2.13, Algorithm 10).

The articulated inertias (``Mhat``, ``Psi``, ``Pi``) are computed once; the two right-hand-side loops
then run for all columns of the identity at once (each joint carries a 6 x ndof block), which forms
M^-1 in O(n^2).  Optionally adds the preconditioner terms ``P_r = h D_r - h^2 K_r`` (diagonal) and
``P_m = Ad_bj^T (h D_m - h^2 K_m)_ii Ad_bj`` (block diagonal), RedMax paper Algorithm 1.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from redmax.dynamics._tree import joint_pass


@njit(cache=True)
def minv_kernel(parent, jtype, idx, jp_off, jparam, E_pj0, M_joint, q, jstate, Pr, Pm, Xrhs):
    """Solve ``(M + P) Y = Xrhs`` for Y (ndof, k) with P from Pr (ndof,) and Pm (nb, 6, 6) (body blocks
    already moved to joint frames)."""
    nb = parent.shape[0]
    n = q.shape[0]
    k = Xrhs.shape[1]
    dt = q.dtype
    qd = np.zeros(n, dtype=dt)
    X, S, _ = joint_pass(jtype, idx, jp_off, jparam, E_pj0, q, qd, jstate)
    Mhat = np.zeros((nb, 6, 6), dtype=dt)
    for i in range(nb):
        Mhat[i] = M_joint[i].astype(dt) + Pm[i].astype(dt)
    Psi_all = np.zeros((nb, 6, 6), dtype=dt)
    for i in range(nb - 1, -1, -1):
        a = idx[i]
        b = idx[i + 1]
        ni = b - a
        Mh = Mhat[i]
        if ni == 0:
            Pi = Mh
        else:
            Si = np.ascontiguousarray(S[:, a:b])
            MS = Mh @ Si
            D = Si.T @ MS
            for r in range(ni):
                D[r, r] += Pr[a + r]
            Psi = np.linalg.inv(D)
            Psi_all[i, :ni, :ni] = Psi
            Pi = Mh - MS @ Psi @ MS.T
        p = parent[i]
        if p >= 0:
            Mhat[p] += X[i].T @ Pi @ X[i]
    Xr = Xrhs.astype(dt)
    Bhat = np.zeros((nb, 6, k), dtype=dt)
    for i in range(nb - 1, -1, -1):
        a = idx[i]
        b = idx[i + 1]
        ni = b - a
        if ni == 0:
            beta = Bhat[i].copy()
        else:
            Si = np.ascontiguousarray(S[:, a:b])
            Psi = np.ascontiguousarray(Psi_all[i, :ni, :ni])
            u = np.ascontiguousarray(Xr[a:b, :]) - Si.T @ Bhat[i]
            beta = Bhat[i] + Mhat[i] @ (Si @ (Psi @ u))
        p = parent[i]
        if p >= 0:
            Bhat[p] += X[i].T @ beta
    Y = np.zeros((n, k), dtype=dt)
    Vdot = np.zeros((nb, 6, k), dtype=dt)
    for i in range(nb):
        a = idx[i]
        b = idx[i + 1]
        ni = b - a
        p = parent[i]
        Ap = np.zeros((6, k), dtype=dt) if p < 0 else X[i] @ Vdot[p]
        if ni == 0:
            Vdot[i] = Ap
            continue
        Si = np.ascontiguousarray(S[:, a:b])
        Psi = np.ascontiguousarray(Psi_all[i, :ni, :ni])
        y = Psi @ (np.ascontiguousarray(Xr[a:b, :]) - Si.T @ (Mhat[i] @ Ap) - Si.T @ Bhat[i])
        Y[a:b, :] = y
        Vdot[i] = Ap + Si @ y
    return Y
