"""Building blocks of IDSVA-SO (:mod:`redmax.dynamics.rnea_second_order`): 6x6 spatial matrices of Alg. 1
(cross products ``v x``, ``f xbar*``, inertias, body Coriolis matrices ``B'``), the twelve vectors ``u`` of lines
29-36 and the thirteen distinct dot products of lines 42-66, inlined into the triple loop.  Scalar-generic."""

from __future__ import annotations

from redmax._jit import njit
from redmax.dynamics._core import body_coriolis
from redmax.dynamics._packed import FAST, U64

LANES = 4  # SIMD block of the product loops (4 doubles: the 256-bit vectors LLVM prefers also on AVX-512 CPUs)
@njit(cache=True, fastmath=FAST)
def _mat_crm(v, M):
    """M = v x (6x6 motion cross product matrix ad(v))."""
    for r in range(6):
        for c in range(6):
            M[r, c] = 0.0
    w0, w1, w2, u0, u1, u2 = v[0], v[1], v[2], v[3], v[4], v[5]
    for o in (0, 3):
        M[o + 0, o + 1] = -w2
        M[o + 0, o + 2] = w1
        M[o + 1, o + 0] = w2
        M[o + 1, o + 2] = -w0
        M[o + 2, o + 0] = -w1
        M[o + 2, o + 1] = w0
    M[3, 1] = -u2
    M[3, 2] = u1
    M[4, 0] = u2
    M[4, 2] = -u0
    M[5, 0] = -u1
    M[5, 1] = u0


@njit(cache=True, fastmath=FAST)
def _mat_bar(f, M):
    """M = f xbar* : M x = x x* f = [-[n] -[g]; -[g] 0] x for f = [n; g]."""
    n0, n1, n2, g0, g1, g2 = f[0], f[1], f[2], f[3], f[4], f[5]
    for r in range(6):
        for c in range(6):
            M[r, c] = 0.0
    # -[n]
    M[0, 1] = n2
    M[0, 2] = -n1
    M[1, 0] = -n2
    M[1, 2] = n0
    M[2, 0] = n1
    M[2, 1] = -n0
    for o, p in ((0, 3), (3, 0)):
        M[o + 0, p + 1] = g2
        M[o + 0, p + 2] = -g1
        M[o + 1, p + 0] = -g2
        M[o + 1, p + 2] = g0
        M[o + 2, p + 0] = g1
        M[o + 2, p + 1] = -g0


@njit(cache=True, fastmath=FAST)
def _inertia_matrix(c, M):
    """6x6 matrix of the compact inertia c: [[J, [h]], [[h]^T, m 1]]."""
    m, h0, h1, h2 = c[0], c[1], c[2], c[3]
    M[0, 0] = c[4]
    M[0, 1] = c[5]
    M[0, 2] = c[6]
    M[1, 0] = c[5]
    M[1, 1] = c[7]
    M[1, 2] = c[8]
    M[2, 0] = c[6]
    M[2, 1] = c[8]
    M[2, 2] = c[9]
    for r in range(3):
        for k in range(3):
            M[3 + r, 3 + k] = m if r == k else 0.0
    M[0, 3] = 0.0
    M[0, 4] = -h2
    M[0, 5] = h1
    M[1, 3] = h2
    M[1, 4] = 0.0
    M[1, 5] = -h0
    M[2, 3] = -h1
    M[2, 4] = h0
    M[2, 5] = 0.0
    for r in range(3):
        for k in range(3):
            M[3 + r, k] = M[k, 3 + r]


@njit(cache=True, fastmath=FAST)
def _coriolis_matrix(Ic, v, out, tmp):
    """out = B'(I, v) (6x6, no 1/2) from the compact inertia Ic; tmp: scratch (12,)."""
    body_coriolis(Ic, v[0], v[1], v[2], v[3], v[4], v[5], tmp, 0)
    b_matrix(tmp, 0, out)


@njit(inline="always")
def b_matrix(src, o, out):
    """out = [[X, 0], [-2 [l], 0]] (6x6), the matrix B' of the Coriolis data X (9, row major) = src[o:o+9] and
    l (3) = src[o+9:o+12] (the layout of :func:`redmax.dynamics._core.body_coriolis`)."""
    for r in range(6):
        for c in range(6):
            out[r, c] = 0.0
    for r in range(3):
        for c in range(3):
            out[r, c] = src[o + 3 * r + c]
    l0, l1, l2 = src[o + 9], src[o + 10], src[o + 11]
    out[3, 1] = 2.0 * l2
    out[3, 2] = -2.0 * l1
    out[4, 0] = -2.0 * l2
    out[4, 2] = 2.0 * l0
    out[5, 0] = 2.0 * l1
    out[5, 1] = -2.0 * l0


@njit(inline="always")
def _mv(M, x, out):
    for r in range(6):
        out[r] = (M[r, 0] * x[0] + M[r, 1] * x[1] + M[r, 2] * x[2] + M[r, 3] * x[3] + M[r, 4] * x[4]
                  + M[r, 5] * x[5])


@njit(inline="always")
def _mtv(M, x, out):
    for r in range(6):
        out[r] = (M[0, r] * x[0] + M[1, r] * x[1] + M[2, r] * x[2] + M[3, r] * x[3] + M[4, r] * x[4]
                  + M[5, r] * x[5])


@njit(inline="always")
def _dot(U, a, V, b):
    """U[a, :6] . V[b, off:off+6] style dot of two length-6 rows."""
    return (U[a, 0] * V[b, 0] + U[a, 1] * V[b, 1] + U[a, 2] * V[b, 2] + U[a, 3] * V[b, 3] + U[a, 4] * V[b, 4]
            + U[a, 5] * V[b, 5])


@njit(inline="always")
def _bar(x0, x1, x2, x3, x4, x5, F, k):
    """x x* f for f = F[k] (the product with the matrix f xbar*): [x_w x n + x_v x g; x_w x g]."""
    n0, n1, n2, g0, g1, g2 = F[k, 0], F[k, 1], F[k, 2], F[k, 3], F[k, 4], F[k, 5]
    return (x1 * n2 - x2 * n1 + x4 * g2 - x5 * g1, x2 * n0 - x0 * n2 + x5 * g0 - x3 * g2,
            x0 * n1 - x1 * n0 + x3 * g1 - x4 * g0, x1 * g2 - x2 * g1, x2 * g0 - x0 * g2, x0 * g1 - x1 * g0)


@njit(inline="always", fastmath=FAST)
def _u_vectors(A1, A3, A6, XL, F, PV, pt, U):
    """u1..u12 of Alg. 1 (lines 29-36) for the DOF at path position pt into U[1..12], using the structure of
    the matrices: A0, A4, A5, A7 are ``f xbar*`` (``x -> x x* f``, f = F[0], F[1], F[2], F[3]), B(I^C, s_p) =
    [[X, 0], [-2 [l], 0]] (X, l in XL) and A2 = 2 A0 - B(I^C, s_p); A1 and A6 are dense, A3 has zero columns
    3-5 (only its columns 0-2 are read), so that u1 = A3^T s has zero entries 3-5."""
    s = PV[0:6, pt]
    d = PV[6:12, pt]
    e = PV[12:18, pt]
    h = PV[18:24, pt]
    s0, s1, s2, s3, s4, s5 = s[0], s[1], s[2], s[3], s[4], s[5]
    d0, d1, d2, d3, d4, d5 = d[0], d[1], d[2], d[3], d[4], d[5]
    X00, X01, X02, X10, X11, X12, X20, X21, X22 = XL[0], XL[1], XL[2], XL[3], XL[4], XL[5], XL[6], XL[7], XL[8]
    L0, L1, L2 = 2.0 * XL[9], 2.0 * XL[10], 2.0 * XL[11]
    # B s, B^T s, B d, B^T d with B = B(I^C, s_p)
    bs0 = X00 * s0 + X01 * s1 + X02 * s2
    bs1 = X10 * s0 + X11 * s1 + X12 * s2
    bs2 = X20 * s0 + X21 * s1 + X22 * s2
    bs3, bs4, bs5 = s1 * L2 - s2 * L1, s2 * L0 - s0 * L2, s0 * L1 - s1 * L0
    ts0 = X00 * s0 + X10 * s1 + X20 * s2 + L1 * s5 - L2 * s4
    ts1 = X01 * s0 + X11 * s1 + X21 * s2 + L2 * s3 - L0 * s5
    ts2 = X02 * s0 + X12 * s1 + X22 * s2 + L0 * s4 - L1 * s3
    bd0 = X00 * d0 + X01 * d1 + X02 * d2
    bd1 = X10 * d0 + X11 * d1 + X12 * d2
    bd2 = X20 * d0 + X21 * d1 + X22 * d2
    bd3, bd4, bd5 = d1 * L2 - d2 * L1, d2 * L0 - d0 * L2, d0 * L1 - d1 * L0
    td0 = X00 * d0 + X10 * d1 + X20 * d2 + L1 * d5 - L2 * d4
    td1 = X01 * d0 + X11 * d1 + X21 * d2 + L2 * d3 - L0 * d5
    td2 = X02 * d0 + X12 * d1 + X22 * d2 + L0 * d4 - L1 * d3
    a0, a1, a2, a3, a4, a5 = _bar(s0, s1, s2, s3, s4, s5, F, 0)  # A0 s
    c0, c1, c2, c3, c4, c5 = _bar(s0, s1, s2, s3, s4, s5, F, 1)  # A4 s
    f0, f1, f2, f3, f4, f5 = _bar(s0, s1, s2, s3, s4, s5, F, 2)  # A5 s
    g0, g1, g2, g3, g4, g5 = _bar(s0, s1, s2, s3, s4, s5, F, 3)  # A7 s
    k0, k1, k2, k3, k4, k5 = _bar(d0, d1, d2, d3, d4, d5, F, 0)  # A0 d
    for r in range(3):  # u1 = A3^T s (A3's columns 3-5 are zero: _so_alg1._so_joints)
        U[1, r] = (A3[0, r] * s0 + A3[1, r] * s1 + A3[2, r] * s2 + A3[3, r] * s3 + A3[4, r] * s4
                   + A3[5, r] * s5)
        U[1, 3 + r] = 0.0 * s0
    for r in range(6):
        U[3, r] = (A3[r, 0] * d0 + A3[r, 1] * d1 + A3[r, 2] * d2
                   + A1[r, 0] * e[0] + A1[r, 1] * e[1] + A1[r, 2] * e[2] + A1[r, 3] * e[3] + A1[r, 4] * e[4]
                   + A1[r, 5] * e[5])  # u3 = A3 psi_dot + A1 psi_ddot + A5 s (below)
        U[4, r] = (A6[r, 0] * s0 + A6[r, 1] * s1 + A6[r, 2] * s2 + A6[r, 3] * s3 + A6[r, 4] * s4
                   + A6[r, 5] * s5)  # u4 = A6 s
        U[7, r] = (A3[r, 0] * s0 + A3[r, 1] * s1 + A3[r, 2] * s2
                   + A1[r, 0] * h[0] + A1[r, 1] * h[1] + A1[r, 2] * h[2] + A1[r, 3] * h[3] + A1[r, 4] * h[4]
                   + A1[r, 5] * h[5])  # u7 = A3 s + A1 theta
        U[12, r] = (A1[r, 0] * s0 + A1[r, 1] * s1 + A1[r, 2] * s2 + A1[r, 3] * s3 + A1[r, 4] * s4
                    + A1[r, 5] * s5)  # u12 = A1 s (= u2 = A1^T s: A1 is symmetric)
    U[3, 0] += f0
    U[3, 1] += f1
    U[3, 2] += f2
    U[3, 3] += f3
    U[3, 4] += f4
    U[3, 5] += f5
    # u5 = A2 psi_dot + A4 s = 2 A0 d - B d + A4 s
    U[5, 0], U[5, 1], U[5, 2] = 2.0 * k0 - bd0 + c0, 2.0 * k1 - bd1 + c1, 2.0 * k2 - bd2 + c2
    U[5, 3], U[5, 4], U[5, 5] = 2.0 * k3 - bd3 + c3, 2.0 * k4 - bd4 + c4, 2.0 * k5 - bd5 + c5
    # u6 = B d + A7 s
    U[6, 0], U[6, 1], U[6, 2] = bd0 + g0, bd1 + g1, bd2 + g2
    U[6, 3], U[6, 4], U[6, 5] = bd3 + g3, bd4 + g4, bd5 + g5
    # u8 = A4 s - B^T d
    U[8, 0], U[8, 1], U[8, 2] = c0 - td0, c1 - td1, c2 - td2
    U[8, 3], U[8, 4], U[8, 5] = c3, c4, c5
    # u9 = A0 s, u10 = B s, u11 = B^T s
    U[9, 0], U[9, 1], U[9, 2], U[9, 3], U[9, 4], U[9, 5] = a0, a1, a2, a3, a4, a5
    U[10, 0], U[10, 1], U[10, 2], U[10, 3], U[10, 4], U[10, 5] = bs0, bs1, bs2, bs3, bs4, bs5
    U[11, 0], U[11, 1], U[11, 2] = ts0, ts1, ts2
    U[11, 3] = U[11, 4] = U[11, 5] = 0.0 * s0


@njit(inline="always", fastmath=FAST)
def _products(U, PV, E, js, P):
    """The 13 distinct dot products of Alg. 1 lines 42-66 for the DOFs r = js..P-1 of the path (rows of PV: s (0-5),
    psi_dot (6-11), psi_ddot (12-17), theta = psi_dot + s_dot (18-23)); u_k in row k of U.

    One loop per product over whole blocks of ``LANES`` path positions (PV and E have ``LANES`` spare columns;
    the extra entries are finite and never read): each loop has one store stream and a trip count that is a
    multiple of the vector width, so it compiles to SIMD code (one loop over all 13 does not)."""
    a0, a1, a2, a3, a4, a5 = U[11, 0], U[11, 1], U[11, 2], U[11, 3], U[11, 4], U[11, 5]
    b0, b1, b2, b3, b4, b5 = U[8, 0], U[8, 1], U[8, 2], U[8, 3], U[8, 4], U[8, 5]
    c0, c1, c2, c3, c4, c5 = U[9, 0], U[9, 1], U[9, 2], U[9, 3], U[9, 4], U[9, 5]
    d0, d1, d2 = U[1, 0], U[1, 1], U[1, 2]  # u1 (its entries 3-5 are zero: _u_vectors)
    e0, e1, e2, e3, e4, e5 = U[12, 0], U[12, 1], U[12, 2], U[12, 3], U[12, 4], U[12, 5]  # u2 = u12
    g0, g1, g2, g3, g4, g5 = U[3, 0], U[3, 1], U[3, 2], U[3, 3], U[3, 4], U[3, 5]
    h0, h1, h2, h3, h4, h5 = U[5, 0], U[5, 1], U[5, 2], U[5, 3], U[5, 4], U[5, 5]
    k0, k1, k2, k3, k4, k5 = U[6, 0], U[6, 1], U[6, 2], U[6, 3], U[6, 4], U[6, 5]
    l0, l1, l2, l3, l4, l5 = U[7, 0], U[7, 1], U[7, 2], U[7, 3], U[7, 4], U[7, 5]
    m0, m1, m2, m3, m4, m5 = U[10, 0], U[10, 1], U[10, 2], U[10, 3], U[10, 4], U[10, 5]
    o0, o1, o2, o3, o4, o5 = U[4, 0], U[4, 1], U[4, 2], U[4, 3], U[4, 4], U[4, 5]
    lo = U64((js // LANES) * LANES)
    hi = U64(((P + LANES - 1) // LANES) * LANES)
    for r in range(lo, hi):  # p1 = u11 . psi_dot_r
        E[0, r] = (a0 * PV[6, r] + a1 * PV[7, r] + a2 * PV[8, r] + a3 * PV[9, r] + a4 * PV[10, r]
                   + a5 * PV[11, r])
    for r in range(lo, hi):  # p2 = u8 . psi_dot_r + u9 . psi_ddot_r
        E[1, r] = (b0 * PV[6, r] + b1 * PV[7, r] + b2 * PV[8, r] + b3 * PV[9, r] + b4 * PV[10, r]
                   + b5 * PV[11, r] + c0 * PV[12, r] + c1 * PV[13, r] + c2 * PV[14, r] + c3 * PV[15, r] + c4 * PV[16, r]
                   + c5 * PV[17, r])
    for r in range(lo, hi):  # u1 . psi_dot_r + u2 . psi_ddot_r
        E[2, r] = (d0 * PV[6, r] + d1 * PV[7, r] + d2 * PV[8, r]
                   + e0 * PV[12, r] + e1 * PV[13, r] + e2 * PV[14, r] + e3 * PV[15, r] + e4 * PV[16, r]
                   + e5 * PV[17, r])
    for r in range(lo, hi):  # u1 . s_r + u2 . theta_r
        E[3, r] = (d0 * PV[0, r] + d1 * PV[1, r] + d2 * PV[2, r]
                   + e0 * PV[18, r] + e1 * PV[19, r] + e2 * PV[20, r] + e3 * PV[21, r] + e4 * PV[22, r]
                   + e5 * PV[23, r])
    for r in range(lo, hi):  # u11 . s_r
        E[4, r] = (a0 * PV[0, r] + a1 * PV[1, r] + a2 * PV[2, r] + a3 * PV[3, r] + a4 * PV[4, r]
                   + a5 * PV[5, r])
    for r in range(lo, hi):  # u12 . s_r (= u2 . s_r)
        E[5, r] = (e0 * PV[0, r] + e1 * PV[1, r] + e2 * PV[2, r] + e3 * PV[3, r] + e4 * PV[4, r]
                   + e5 * PV[5, r])
    for r in range(lo, hi):  # u3 . s_r
        E[6, r] = (g0 * PV[0, r] + g1 * PV[1, r] + g2 * PV[2, r] + g3 * PV[3, r] + g4 * PV[4, r]
                   + g5 * PV[5, r])
    for r in range(lo, hi):  # u5 . s_r + u9 . theta_r
        E[7, r] = (h0 * PV[0, r] + h1 * PV[1, r] + h2 * PV[2, r] + h3 * PV[3, r] + h4 * PV[4, r]
                   + h5 * PV[5, r] + c0 * PV[18, r] + c1 * PV[19, r] + c2 * PV[20, r] + c3 * PV[21, r] + c4 * PV[22, r]
                   + c5 * PV[23, r])
    for r in range(lo, hi):  # u6 . s_r
        E[8, r] = (k0 * PV[0, r] + k1 * PV[1, r] + k2 * PV[2, r] + k3 * PV[3, r] + k4 * PV[4, r]
                   + k5 * PV[5, r])
    for r in range(lo, hi):  # u9 . s_r
        E[9, r] = (c0 * PV[0, r] + c1 * PV[1, r] + c2 * PV[2, r] + c3 * PV[3, r] + c4 * PV[4, r]
                   + c5 * PV[5, r])
    for r in range(lo, hi):  # u7 . s_r
        E[10, r] = (l0 * PV[0, r] + l1 * PV[1, r] + l2 * PV[2, r] + l3 * PV[3, r] + l4 * PV[4, r]
                   + l5 * PV[5, r])
    for r in range(lo, hi):  # u10 . s_r
        E[11, r] = (m0 * PV[0, r] + m1 * PV[1, r] + m2 * PV[2, r] + m3 * PV[3, r] + m4 * PV[4, r]
                   + m5 * PV[5, r])
    for r in range(lo, hi):  # u4 . s_r
        E[12, r] = (o0 * PV[0, r] + o1 * PV[1, r] + o2 * PV[2, r] + o3 * PV[3, r] + o4 * PV[4, r]
                   + o5 * PV[5, r])
