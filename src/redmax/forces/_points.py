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
integrator forms the linearly implicit right-hand side ``f + D V`` from these blocks
(:func:`redmax.integrators._linearize.linearize_forces`).

Each 6x6 block is written as ``[[ [x_k] P, [x_k] G ], [P, G]]`` with ``G`` the 3x3 coefficient of the position
(and velocity) derivative and ``P = N - G [x_j]`` collecting the ``[1 0]`` terms, ``N`` 3x3; the kernels work on
scalars (3x3 factors as 9-tuples), with no temporary arrays.

Kernels write K and D as separate blocks of the same body pair and know nothing of the step: the integrator
combines them (linearly implicit Euler: ``h D - h^2 K``).  ``mode`` is 0 = "full", 1 = "symmetric" (the stiffness part
replaced by ``(K + K^T)/2`` over the force's blocks, Baraff & Witkin), 2 = "none" (explicit stiffness).
"""

from __future__ import annotations

from redmax._jit import njit

__all__ = ["MAP_SCRATCH", "MODE_FULL", "MODE_NONE", "MODE_SYMMETRIC", "STIFFNESS_MODES", "map_point_law", "point_xv"]

MODE_FULL = 0
MODE_SYMMETRIC = 1
MODE_NONE = 2
STIFFNESS_MODES = {"full": MODE_FULL, "symmetric": MODE_SYMMETRIC, "none": MODE_NONE}


@njit(cache=True)
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


@njit(cache=True)
def _acc_block(B, t, s, transpose, xk0, xk1, xk2, xj0, xj1, xj2, G, N):
    """B[t] += s * [[ [x_k] P, [x_k] G ], [P, G]] (or its transpose) with P = N - G [x_j]; G, N 9-tuples
    (row-major 3x3).  Scalar arithmetic only: no views, no allocation."""
    g00, g01, g02, g10, g11, g12, g20, g21, g22 = G
    n00, n01, n02, n10, n11, n12, n20, n21, n22 = N
    p00 = n00 - (g01 * xj2 - g02 * xj1)
    p01 = n01 - (g02 * xj0 - g00 * xj2)
    p02 = n02 - (g00 * xj1 - g01 * xj0)
    p10 = n10 - (g11 * xj2 - g12 * xj1)
    p11 = n11 - (g12 * xj0 - g10 * xj2)
    p12 = n12 - (g10 * xj1 - g11 * xj0)
    p20 = n20 - (g21 * xj2 - g22 * xj1)
    p21 = n21 - (g22 * xj0 - g20 * xj2)
    p22 = n22 - (g20 * xj1 - g21 * xj0)
    a00 = xk1 * p20 - xk2 * p10
    a10 = xk2 * p00 - xk0 * p20
    a20 = xk0 * p10 - xk1 * p00
    a01 = xk1 * p21 - xk2 * p11
    a11 = xk2 * p01 - xk0 * p21
    a21 = xk0 * p11 - xk1 * p01
    a02 = xk1 * p22 - xk2 * p12
    a12 = xk2 * p02 - xk0 * p22
    a22 = xk0 * p12 - xk1 * p02
    b00 = xk1 * g20 - xk2 * g10
    b10 = xk2 * g00 - xk0 * g20
    b20 = xk0 * g10 - xk1 * g00
    b01 = xk1 * g21 - xk2 * g11
    b11 = xk2 * g01 - xk0 * g21
    b21 = xk0 * g11 - xk1 * g01
    b02 = xk1 * g22 - xk2 * g12
    b12 = xk2 * g02 - xk0 * g22
    b22 = xk0 * g12 - xk1 * g02

    if transpose:
        B[t, 0, 0] += s * a00
        B[t, 1, 0] += s * a01
        B[t, 2, 0] += s * a02
        B[t, 3, 0] += s * b00
        B[t, 4, 0] += s * b01
        B[t, 5, 0] += s * b02
        B[t, 0, 1] += s * a10
        B[t, 1, 1] += s * a11
        B[t, 2, 1] += s * a12
        B[t, 3, 1] += s * b10
        B[t, 4, 1] += s * b11
        B[t, 5, 1] += s * b12
        B[t, 0, 2] += s * a20
        B[t, 1, 2] += s * a21
        B[t, 2, 2] += s * a22
        B[t, 3, 2] += s * b20
        B[t, 4, 2] += s * b21
        B[t, 5, 2] += s * b22
        B[t, 0, 3] += s * p00
        B[t, 1, 3] += s * p01
        B[t, 2, 3] += s * p02
        B[t, 3, 3] += s * g00
        B[t, 4, 3] += s * g01
        B[t, 5, 3] += s * g02
        B[t, 0, 4] += s * p10
        B[t, 1, 4] += s * p11
        B[t, 2, 4] += s * p12
        B[t, 3, 4] += s * g10
        B[t, 4, 4] += s * g11
        B[t, 5, 4] += s * g12
        B[t, 0, 5] += s * p20
        B[t, 1, 5] += s * p21
        B[t, 2, 5] += s * p22
        B[t, 3, 5] += s * g20
        B[t, 4, 5] += s * g21
        B[t, 5, 5] += s * g22
    else:
        B[t, 0, 0] += s * a00
        B[t, 0, 1] += s * a01
        B[t, 0, 2] += s * a02
        B[t, 0, 3] += s * b00
        B[t, 0, 4] += s * b01
        B[t, 0, 5] += s * b02
        B[t, 1, 0] += s * a10
        B[t, 1, 1] += s * a11
        B[t, 1, 2] += s * a12
        B[t, 1, 3] += s * b10
        B[t, 1, 4] += s * b11
        B[t, 1, 5] += s * b12
        B[t, 2, 0] += s * a20
        B[t, 2, 1] += s * a21
        B[t, 2, 2] += s * a22
        B[t, 2, 3] += s * b20
        B[t, 2, 4] += s * b21
        B[t, 2, 5] += s * b22
        B[t, 3, 0] += s * p00
        B[t, 3, 1] += s * p01
        B[t, 3, 2] += s * p02
        B[t, 3, 3] += s * g00
        B[t, 3, 4] += s * g01
        B[t, 3, 5] += s * g02
        B[t, 4, 0] += s * p10
        B[t, 4, 1] += s * p11
        B[t, 4, 2] += s * p12
        B[t, 4, 3] += s * g10
        B[t, 4, 4] += s * g11
        B[t, 4, 5] += s * g12
        B[t, 5, 0] += s * p20
        B[t, 5, 1] += s * p21
        B[t, 5, 2] += s * p22
        B[t, 5, 3] += s * g20
        B[t, 5, 4] += s * g21
        B[t, 5, 5] += s * g22


@njit(cache=True)
def _h_cross(H, x0, x1, x2):
    """-(H [x]) as a 9-tuple for the 9-tuple H (row-major)."""
    h00, h01, h02, h10, h11, h12, h20, h21, h22 = H
    return (-(h01 * x2 - h02 * x1), -(h02 * x0 - h00 * x2), -(h00 * x1 - h01 * x0),
            -(h11 * x2 - h12 * x1), -(h12 * x0 - h10 * x2), -(h10 * x1 - h11 * x0),
            -(h21 * x2 - h22 * x1), -(h22 * x0 - h20 * x2), -(h20 * x1 - h21 * x0))


@njit(cache=True)
def _get9(D, k, j):
    """D[k, j] (3x3) as a row-major 9-tuple."""
    return (D[k, j, 0, 0], D[k, j, 0, 1], D[k, j, 0, 2], D[k, j, 1, 0], D[k, j, 1, 1], D[k, j, 1, 2],
            D[k, j, 2, 0], D[k, j, 2, 1], D[k, j, 2, 2])


MAP_SCRATCH = 1  # floats of map_point_law's scratch (none used; kept for the interface)


@njit(cache=True)
def map_point_law(bodies, x, xd, F, dFdx, dFdxd, diag_only, mode, fw, want_blocks, bpair, bK, bD, nblk, scratch):
    """Add the law's wrenches and its stiffness and damping blocks (see module docstring).

    Args:
        bodies: (np,) body of each point (-1: world).  x, xd, F: (np, 3) world.  dFdx, dFdxd: (np, np, 3, 3)
            (only ``[k, k]`` read when ``diag_only``).  mode: stiffness mode.
        fw: (nb, 6) world wrenches, += f.
        want_blocks: write blocks.  bpair: (cap, 2) body pairs; bK, bD: (cap, 6, 6) the blocks of K and D of each
            pair, written (not accumulated) from ``nblk``.
        scratch: at least ``MAP_SCRATCH`` floats of x's dtype (nothing is allocated).
    Returns:
        The new block count.
    """
    npt = bodies.shape[0]
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
    if not want_blocks:
        return nblk
    wK = 0.0 if mode == 2 else 1.0
    sym = mode == 1
    for k in range(npt):
        bk = bodies[k]
        if bk < 0:
            continue
        xk0, xk1, xk2 = x[k, 0], x[k, 1], x[k, 2]
        for j in range(npt):
            bj = bodies[j]
            if bj < 0 or (diag_only and j != k):
                continue
            xj0, xj1, xj2 = x[j, 0], x[j, 1], x[j, 2]
            t = nblk
            bpair[t, 0] = bk
            bpair[t, 1] = bj
            for r in range(6):
                for c in range(6):
                    bK[t, r, c] = 0.0
                    bD[t, r, c] = 0.0
            H = _get9(dFdxd, k, j)
            if wK != 0.0:
                # stiffness: G = dF/dx, N = -dF/dxd [xd_j] + delta_kj [F_k]
                n00, n01, n02, n10, n11, n12, n20, n21, n22 = _h_cross(H, xd[j, 0], xd[j, 1], xd[j, 2])
                if j == k:
                    n01 -= F[k, 2]
                    n02 += F[k, 1]
                    n10 += F[k, 2]
                    n12 -= F[k, 0]
                    n20 -= F[k, 1]
                    n21 += F[k, 0]
                N = (n00, n01, n02, n10, n11, n12, n20, n21, n22)
                _acc_block(bK, t, 0.5 if sym else 1.0, False, xk0, xk1, xk2, xj0, xj1, xj2, _get9(dFdx, k, j), N)
                if sym:  # + 1/2 K_jk^T (the partner block, transposed)
                    H2 = _get9(dFdxd, j, k)
                    m00, m01, m02, m10, m11, m12, m20, m21, m22 = _h_cross(H2, xd[k, 0], xd[k, 1], xd[k, 2])
                    if j == k:
                        m01 -= F[k, 2]
                        m02 += F[k, 1]
                        m10 += F[k, 2]
                        m12 -= F[k, 0]
                        m20 -= F[k, 1]
                        m21 += F[k, 0]
                    M = (m00, m01, m02, m10, m11, m12, m20, m21, m22)
                    _acc_block(bK, t, 0.5, True, xj0, xj1, xj2, xk0, xk1, xk2, _get9(dFdx, j, k), M)
            h00, h01, h02, h10, h11, h12, h20, h21, h22 = H
            if h00 != 0.0 or h01 != 0.0 or h02 != 0.0 or h10 != 0.0 or h11 != 0.0 or h12 != 0.0 or h20 != 0.0 \
                    or h21 != 0.0 or h22 != 0.0:
                z = 0.0 * xk0
                _acc_block(bD, t, 1.0, False, xk0, xk1, xk2, xj0, xj1, xj2,
                           (-h00, -h01, -h02, -h10, -h11, -h12, -h20, -h21, -h22), (z, z, z, z, z, z, z, z, z))
            nblk += 1
    return nblk
