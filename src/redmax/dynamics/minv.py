"""Inverse joint-space inertia via recursive forward dynamics (Sueda notes §2.13, Algorithm 10).

``minv_kernel`` forms the whole M^-1 in world coordinates (see ``_world``), where articulated inertias
are plain sums: backward pass ``U = Mhat S``, ``D = S^T U``, ``Pi = Mhat - U D^-1 U^T``,
``Mhat_p += Pi``.  The right-hand-side loops of Algorithm 10 then run for all unit vectors: in the
backward loop, unit column k only lives on the path from its joint to the root, so it is carried up
that path with one 6-vector (``G_j = D^-1 (e - S^T B)``, ``B += U G_j``); the forward pass
``y_i = G_i - D^-1 U^T A_p``, ``A_i = A_p + S y_i`` fills the upper triangle (columns of later joints)
and symmetry the rest.  Cost O(n d + n^2).

``minv_product_kernel`` solves ``(M + P) Y = X`` for a few right-hand sides in O(n) each, optionally
with the preconditioner terms ``P_r = h D_r - h^2 K_r`` (diagonal) and ``P_m`` (body blocks) of the
RedMax paper's Algorithm 1.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from redmax.dynamics._packed import offsets, small_inverse
from redmax.dynamics._tree import joint_pass
from redmax.dynamics._world import world_pass


@njit(cache=True)
def minv_kernel(Ii, Ff, q, jstate):
    """M(q)^-1 (n, n)."""
    nb, n, o_par, o_typ, o_idx, o_jp, f_R, f_p, f_M, f_A, f_m, f_c, f_I, f_g, f_jp = offsets(Ii)
    if q.shape[0] != n or jstate.shape[0] != nb:
        raise ValueError("size")
    for k in range(n):
        if not np.isfinite(q[k]):
            raise ValueError("nonfinite")
    wR = 0
    wp = 9 * nb
    wI = 12 * nb  # Mhat (world) 36 per body
    wD = 48 * nb  # D^-1, 36 per body
    wS = 84 * nb  # S world, 6 per dof
    wU = wS + 6 * n  # U, 6 per dof
    scr = wU + 6 * n
    W = np.empty(scr + 100, dtype=q.dtype)
    world_pass(Ii, Ff, q, jstate, W, wR, wp, wS, wI, scr)
    Minv = np.zeros((n, n), dtype=q.dtype)
    # 1. articulated inertias: U = Mhat S, D^-1, Mhat_p += Mhat - U D^-1 U^T
    for i in range(nb - 1, -1, -1):
        a = Ii[o_idx + i]
        b = Ii[o_idx + i + 1]
        nj = b - a
        mh = wI + 36 * i
        di = wD + 36 * i
        if nj > 0:
            for d in range(a, b):
                for k in range(6):
                    s = 0.0
                    for l in range(6):
                        s += W[mh + 6 * k + l] * W[wS + 6 * d + l]
                    W[wU + 6 * d + k] = s
            Dm = scr
            for r1 in range(nj):
                for c1 in range(nj):
                    s = 0.0
                    for k in range(6):
                        s += W[wS + 6 * (a + r1) + k] * W[wU + 6 * (a + c1) + k]
                    W[Dm + nj * r1 + c1] = s
            small_inverse(W, Dm, di, nj)
        par = Ii[o_par + i]
        if par >= 0:
            pm = wI + 36 * par
            for k in range(36):
                W[pm + k] += W[mh + k]
            for r1 in range(nj):
                for c1 in range(nj):
                    ps = W[di + nj * r1 + c1]
                    for k in range(6):
                        uk = W[wU + 6 * (a + r1) + k] * ps
                        for l in range(6):
                            W[pm + 6 * k + l] -= uk * W[wU + 6 * (a + c1) + l]
    # 2. each unit column kk travels up the path from its joint: G_j = D_j^-1 (e - S_j^T B), B += U_j G_j
    Bv = scr
    g = scr + 6
    for kk in range(n):
        for k in range(6):
            W[Bv + k] = 0.0
        j = _joint_of(Ii, kk)
        while j >= 0:
            a = Ii[o_idx + j]
            b = Ii[o_idx + j + 1]
            nj = b - a
            di = wD + 36 * j
            for r1 in range(nj):
                s = 1.0 if kk == a + r1 else 0.0
                for k in range(6):
                    s -= W[wS + 6 * (a + r1) + k] * W[Bv + k]
                W[g + r1] = s
            for r1 in range(nj):
                t = 0.0
                for c1 in range(nj):
                    t += W[di + nj * r1 + c1] * W[g + c1]
                Minv[a + r1, kk] = t
            for r1 in range(nj):
                t = Minv[a + r1, kk]
                for k in range(6):
                    W[Bv + k] += W[wU + 6 * (a + r1) + k] * t
            j = Ii[o_par + j]
    # forward pass: A_i (6 x (n - a_i)) stored per body from column a_i on
    offA = np.empty(nb + 1, dtype=np.int64)
    offA[0] = 0
    for i in range(nb):
        offA[i + 1] = offA[i] + 6 * (n - Ii[o_idx + i])
    A = np.empty(offA[nb], dtype=q.dtype)
    for i in range(nb):
        a = Ii[o_idx + i]
        b = Ii[o_idx + i + 1]
        nj = b - a
        par = Ii[o_par + i]
        ai = offA[i]
        di = wD + 36 * i
        if par >= 0:
            ap = offA[par]
            a_par = Ii[o_idx + par]
            for kk in range(a, n):
                src = ap + 6 * (kk - a_par)
                dst = ai + 6 * (kk - a)
                for k in range(6):
                    A[dst + k] = A[src + k]
        else:
            for k in range(6 * (n - a)):
                A[ai + k] = 0.0
        if nj == 0:
            continue
        for kk in range(a, n):
            dst = ai + 6 * (kk - a)
            if par >= 0:
                for r1 in range(nj):  # t = U^T A_p
                    s = 0.0
                    for k in range(6):
                        s += W[wU + 6 * (a + r1) + k] * A[dst + k]
                    W[scr + 40 + r1] = s
                for r1 in range(nj):
                    s = 0.0
                    for c1 in range(nj):
                        s += W[di + nj * r1 + c1] * W[scr + 40 + c1]
                    Minv[a + r1, kk] -= s
            for r1 in range(nj):
                y = Minv[a + r1, kk]
                for k in range(6):
                    A[dst + k] += W[wS + 6 * (a + r1) + k] * y
    for r1 in range(n):
        for c1 in range(r1):
            Minv[r1, c1] = Minv[c1, r1]
    return Minv


@njit(cache=True)
def _joint_of(Ii, dof):
    """Index of the joint owning DOF ``dof`` (binary search in idx)."""
    nb = Ii[0]
    o_idx = 2 + 2 * nb
    lo = 0
    hi = nb - 1
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if Ii[o_idx + mid] <= dof:
            lo = mid
        else:
            hi = mid - 1
    while Ii[o_idx + lo + 1] <= dof:
        lo += 1
    return lo


@njit(cache=True)
def minv_product_kernel(parent, jtype, idx, jp_off, jparam, E_pj0, M_joint, q, jstate, Pr, Pm, Xrhs):
    """Solve ``(M + P) Y = X`` for Y (ndof, k) with P from Pr (ndof,) and Pm (nb, 6, 6) (body blocks
    already moved to joint frames); O(n) per right-hand side."""
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
