"""Compiled point-force machinery: world forces on body points -> world wrenches and 6x6 stiffness/damping blocks.

A point force law gives, for points ``x_k`` (world) with velocities ``xd_k``, the world forces ``F_k`` and the
3x3 derivatives ``dF_k/dx_j``, ``dF_k/dxd_j``.  With every spatial vector in world coordinates at the world
origin (angular first), a point on a body moves as ``xd = Gamma(x) V`` with ``Gamma(x) = [-[x], 1]`` (3x6) and
``V`` the body's world twist, and a force F at x is the wrench ``Gamma(x)^T F = [x x F; F]``.

RedMax linearises a maximal force in the body frame (Sueda notes §1.9, Eqs. 1.32-1.35): ``K`` is the derivative
of the body wrench for the body-frame pose variation ``E <- E exp([delta])`` with the body twist ``phi`` held
fixed, ``D = -df/dphi``, and the implicit step uses ``J^T K J`` with the body Jacobian.  The blocks here are the
same matrices written in world coordinates, ``K_w = Ad(E_k)^-T K_body Ad(E_j)^-1`` (a congruence, so
``J_w^T K_w J_w = J_body^T K_body J_body`` exactly): for points k on body a and j on body b,

    K_w[a, b] += Gamma(x_k)^T (dF_k/dx_j Gamma(x_j) - dF_k/dxd_j [xd_j] [1 0]) + delta_kj Gamma(x_k)^T [F_k] [1 0]
    D_w[a, b] -= Gamma(x_k)^T dF_k/dxd_j Gamma(x_j)

(the moment-arm term ``Gamma^T [F] [1 0]`` is the world form of the notes' ``Gamma^T [[R^T F] 0]``).  The
linearly implicit right-hand side ``f + D V`` needs no 6x6 product: ``D V`` at point k is
``-Gamma(x_k)^T sum_j dF_k/dxd_j xd_j``.

Each 6x6 block is written as ``[[ [x_k] P, [x_k] G ], [P, G]]`` with ``G`` the 3x3 coefficient of the position
(and velocity) derivative and ``P = N - G [x_j]`` collecting the ``[1 0]`` terms, ``N`` 3x3.

Kernels take the combination weights (cK, cD) and write ``B = cK K + cD D`` (the Euler step uses
``cK = -h^2``, ``cD = h``; K alone is ``(1, 0)``).  ``mode`` is 0 = "full", 1 = "symmetric" (the stiffness part
replaced by ``(K + K^T)/2`` over the force's blocks, Baraff & Witkin), 2 = "none" (explicit stiffness).
"""

from __future__ import annotations

import numpy as np
from numba import njit

__all__ = ["MODE_FULL", "MODE_NONE", "MODE_SYMMETRIC", "STIFFNESS_MODES", "map_point_law", "point_xv"]

MODE_FULL = 0
MODE_SYMMETRIC = 1
MODE_NONE = 2
STIFFNESS_MODES = {"full": MODE_FULL, "symmetric": MODE_SYMMETRIC, "none": MODE_NONE}


@njit(cache=True, inline="always")
def point_xv(Rw, pw, Vw, b, r):
    """World position and velocity of point ``r`` given in the joint frame of body ``b`` (b < 0: ``r`` is a
    fixed world point).  Returns (x0, x1, x2, v0, v1, v2)."""
    if b < 0:
        return r[0], r[1], r[2], 0.0 * r[0], 0.0 * r[0], 0.0 * r[0]
    R = Rw[b]
    p = pw[b]
    x0 = R[0] * r[0] + R[1] * r[1] + R[2] * r[2] + p[0]
    x1 = R[3] * r[0] + R[4] * r[1] + R[5] * r[2] + p[1]
    x2 = R[6] * r[0] + R[7] * r[1] + R[8] * r[2] + p[2]
    V = Vw[b]
    # xd = v_o + w x x
    v0 = V[3] + V[1] * x2 - V[2] * x1
    v1 = V[4] + V[2] * x0 - V[0] * x2
    v2 = V[5] + V[0] * x1 - V[1] * x0
    return x0, x1, x2, v0, v1, v2


@njit(cache=True, inline="always")
def _skew_mul(x, M, out):
    """out = [x] M for 3x3 M (out must not alias M)."""
    for c in range(3):
        out[0, c] = x[1] * M[2, c] - x[2] * M[1, c]
        out[1, c] = x[2] * M[0, c] - x[0] * M[2, c]
        out[2, c] = x[0] * M[1, c] - x[1] * M[0, c]


@njit(cache=True)
def _block(xk, xj, G, N, out):
    """out (6,6) = [[ [x_k] P, [x_k] G ], [P, G]] with P = N - G [x_j]."""
    P = np.empty((3, 3), dtype=out.dtype)
    for r in range(3):
        # (G [x_j])[r, :] = G[r] x-row: (G [x])_rc = sum_m G_rm [x]_mc
        g0 = G[r, 0]
        g1 = G[r, 1]
        g2 = G[r, 2]
        P[r, 0] = N[r, 0] - (g1 * xj[2] - g2 * xj[1])
        P[r, 1] = N[r, 1] - (g2 * xj[0] - g0 * xj[2])
        P[r, 2] = N[r, 2] - (g0 * xj[1] - g1 * xj[0])
    T = np.empty((3, 3), dtype=out.dtype)
    _skew_mul(xk, P, T)
    for r in range(3):
        for c in range(3):
            out[r, c] = T[r, c]
            out[3 + r, c] = P[r, c]
            out[3 + r, 3 + c] = G[r, c]
    _skew_mul(xk, G, T)
    for r in range(3):
        for c in range(3):
            out[r, 3 + c] = T[r, c]


@njit(cache=True)
def map_point_law(bodies, x, xd, F, dFdx, dFdxd, diag_only, mode, cK, cD, fw, fw_rhs, want_blocks, bpair, bB, nblk):
    """Add the law's wrenches and blocks (see module docstring).

    Args:
        bodies: (np,) body of each point (-1: world).  x, xd, F: (np, 3) world.  dFdx, dFdxd: (np, np, 3, 3)
            (only ``[k, k]`` read when ``diag_only``).  mode: stiffness mode.  cK, cD: block weights.
        fw: (nb, 6) world wrenches, += f.  fw_rhs: (nb, 6) += f + D V (the linearly implicit right-hand side).
        want_blocks: write blocks.  bpair: (cap, 2) body pairs, bB: (cap, 6, 6) blocks, written from ``nblk``.
    Returns:
        The new block count.
    """
    npt = bodies.shape[0]
    dt = x.dtype
    for k in range(npt):
        b = bodies[k]
        if b < 0:
            continue
        f0, f1, f2 = F[k, 0], F[k, 1], F[k, 2]
        fw[b, 0] += x[k, 1] * f2 - x[k, 2] * f1
        fw[b, 1] += x[k, 2] * f0 - x[k, 0] * f2
        fw[b, 2] += x[k, 0] * f1 - x[k, 1] * f0
        fw[b, 3] += f0
        fw[b, 4] += f1
        fw[b, 5] += f2
        # f + D V: F'_k = F_k - sum_j dF_k/dxd_j xd_j
        for j in range(npt):
            if (diag_only and j != k) or bodies[j] < 0:
                continue
            for r in range(3):
                f_r = dFdxd[k, j, r, 0] * xd[j, 0] + dFdxd[k, j, r, 1] * xd[j, 1] + dFdxd[k, j, r, 2] * xd[j, 2]
                if r == 0:
                    f0 -= f_r
                elif r == 1:
                    f1 -= f_r
                else:
                    f2 -= f_r
        fw_rhs[b, 0] += x[k, 1] * f2 - x[k, 2] * f1
        fw_rhs[b, 1] += x[k, 2] * f0 - x[k, 0] * f2
        fw_rhs[b, 2] += x[k, 0] * f1 - x[k, 1] * f0
        fw_rhs[b, 3] += f0
        fw_rhs[b, 4] += f1
        fw_rhs[b, 5] += f2
    if not want_blocks:
        return nblk
    G = np.empty((3, 3), dtype=dt)
    N = np.empty((3, 3), dtype=dt)
    BK = np.empty((6, 6), dtype=dt)
    BD = np.empty((6, 6), dtype=dt)
    BT = np.empty((6, 6), dtype=dt)
    wK = cK if mode != 2 else 0.0 * cK
    for k in range(npt):
        bk = bodies[k]
        if bk < 0:
            continue
        for j in range(npt):
            bj = bodies[j]
            if bj < 0 or (diag_only and j != k):
                continue
            # stiffness part: G = dF/dx, N = -dF/dxd [xd_j] + delta_kj [F_k]
            for r in range(3):
                h0 = dFdxd[k, j, r, 0]
                h1 = dFdxd[k, j, r, 1]
                h2 = dFdxd[k, j, r, 2]
                for c in range(3):
                    G[r, c] = dFdx[k, j, r, c]
                # (H [xd])[r, c] = sum_m H_rm [xd]_mc
                N[r, 0] = -(h1 * xd[j, 2] - h2 * xd[j, 1])
                N[r, 1] = -(h2 * xd[j, 0] - h0 * xd[j, 2])
                N[r, 2] = -(h0 * xd[j, 1] - h1 * xd[j, 0])
            if j == k:
                N[0, 1] -= F[k, 2]
                N[0, 2] += F[k, 1]
                N[1, 0] += F[k, 2]
                N[1, 2] -= F[k, 0]
                N[2, 0] -= F[k, 1]
                N[2, 1] += F[k, 0]
            _block(x[k], x[j], G, N, BK)
            if mode == 1:  # symmetric: average with the transposed partner block (j, k)
                for r in range(3):
                    h0 = dFdxd[j, k, r, 0]
                    h1 = dFdxd[j, k, r, 1]
                    h2 = dFdxd[j, k, r, 2]
                    for c in range(3):
                        G[r, c] = dFdx[j, k, r, c]
                    N[r, 0] = -(h1 * xd[k, 2] - h2 * xd[k, 1])
                    N[r, 1] = -(h2 * xd[k, 0] - h0 * xd[k, 2])
                    N[r, 2] = -(h0 * xd[k, 1] - h1 * xd[k, 0])
                if j == k:
                    N[0, 1] -= F[k, 2]
                    N[0, 2] += F[k, 1]
                    N[1, 0] += F[k, 2]
                    N[1, 2] -= F[k, 0]
                    N[2, 0] -= F[k, 1]
                    N[2, 1] += F[k, 0]
                _block(x[j], x[k], G, N, BT)
                for r in range(6):
                    for c in range(6):
                        BK[r, c] = 0.5 * (BK[r, c] + BT[c, r])
            # damping part: G = -dF/dxd, N = 0
            for r in range(3):
                for c in range(3):
                    G[r, c] = -dFdxd[k, j, r, c]
                    N[r, c] = 0.0
            _block(x[k], x[j], G, N, BD)
            bpair[nblk, 0] = bk
            bpair[nblk, 1] = bj
            for r in range(6):
                for c in range(6):
                    bB[nblk, r, c] = wK * BK[r, c] + cD * BD[r, c]
            nblk += 1
    return nblk
