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
def _mv6(UT, o, nr, M, a, tr, w, lo, hi, PV):
    """UT[o + r, t] = w UT[o + r, t] + M[r, :] . PV[a:a + 6, t] (``tr``: M[:, r]) for r < nr, t = lo..hi-1."""
    for r in range(nr):
        if tr:
            m0, m1, m2, m3, m4, m5 = M[0, r], M[1, r], M[2, r], M[3, r], M[4, r], M[5, r]
        else:
            m0, m1, m2, m3, m4, m5 = M[r, 0], M[r, 1], M[r, 2], M[r, 3], M[r, 4], M[r, 5]
        for t in range(lo, hi):
            UT[o + r, t] = (w * UT[o + r, t] + m0 * PV[a, t] + m1 * PV[a + 1, t] + m2 * PV[a + 2, t]
                            + m3 * PV[a + 3, t] + m4 * PV[a + 4, t] + m5 * PV[a + 5, t])


@njit(inline="always", fastmath=FAST)
def _mv3(UT, o, M, a, lo, hi, PV):
    """UT[o + r, t] += M[r, :3] . PV[a:a + 3, t] for r < 6 (A3: its columns 0-2)."""
    for r in range(6):
        m0, m1, m2 = M[r, 0], M[r, 1], M[r, 2]
        for t in range(lo, hi):
            UT[o + r, t] += m0 * PV[a, t] + m1 * PV[a + 1, t] + m2 * PV[a + 2, t]


@njit(inline="always", fastmath=FAST)
def _cross3(UT, o, a, v0, v1, v2, w, lo, hi, PV):
    """UT[o:o + 3, t] = w UT[o:o + 3, t] + x x v with x = PV[a:a + 3, t] (a cross product, one loop per row)."""
    for t in range(lo, hi):
        UT[o, t] = w * UT[o, t] + PV[a + 1, t] * v2 - PV[a + 2, t] * v1
    for t in range(lo, hi):
        UT[o + 1, t] = w * UT[o + 1, t] + PV[a + 2, t] * v0 - PV[a, t] * v2
    for t in range(lo, hi):
        UT[o + 2, t] = w * UT[o + 2, t] + PV[a, t] * v1 - PV[a + 1, t] * v0


@njit(inline="always", fastmath=FAST)
def _bar6(UT, o, F, k, a, sc, w, lo, hi, PV):
    """UT[o:o + 6, t] = w UT[o:o + 6, t] + sc (x x* f) with x = PV[a:a + 6, t] and f = F[k] = [n; g]:
    [x_w x n + x_v x g; x_w x g] (the matrix ``f xbar*`` times x)."""
    n0, n1, n2, g0, g1, g2 = sc * F[k, 0], sc * F[k, 1], sc * F[k, 2], sc * F[k, 3], sc * F[k, 4], sc * F[k, 5]
    for t in range(lo, hi):
        UT[o, t] = w * UT[o, t] + PV[a + 1, t] * n2 - PV[a + 2, t] * n1 + PV[a + 4, t] * g2 - PV[a + 5, t] * g1
    for t in range(lo, hi):
        UT[o + 1, t] = w * UT[o + 1, t] + PV[a + 2, t] * n0 - PV[a, t] * n2 + PV[a + 5, t] * g0 - PV[a + 3, t] * g2
    for t in range(lo, hi):
        UT[o + 2, t] = w * UT[o + 2, t] + PV[a, t] * n1 - PV[a + 1, t] * n0 + PV[a + 3, t] * g1 - PV[a + 4, t] * g0
    _cross3(UT, o + 3, a, g0, g1, g2, w, lo, hi, PV)


@njit(inline="always", fastmath=FAST)
def _b6(UT, o, XL, a, sc, w, lo, hi, PV):
    """UT[o:o + 6, t] = w UT[o:o + 6, t] + sc B x, x = PV[a:a + 6, t], B = [[X, 0], [-2 [l], 0]] (X row major,
    l: XL[0:9], XL[9:12]): [X x_w; 2 x_w x l]."""
    for r in range(3):
        m0, m1, m2 = sc * XL[3 * r], sc * XL[3 * r + 1], sc * XL[3 * r + 2]
        for t in range(lo, hi):
            UT[o + r, t] = w * UT[o + r, t] + m0 * PV[a, t] + m1 * PV[a + 1, t] + m2 * PV[a + 2, t]
    _cross3(UT, o + 3, a, 2.0 * sc * XL[9], 2.0 * sc * XL[10], 2.0 * sc * XL[11], w, lo, hi, PV)


@njit(inline="always", fastmath=FAST)
def _bt3(UT, o, XL, a, sc, w, lo, hi, PV):
    """UT[o:o + 3, t] = w UT[o:o + 3, t] + sc (B^T x)[0:3] (its entries 3-5 are zero), x = PV[a:a + 6, t]:
    X^T x_w + 2 l x x_v."""
    L0, L1, L2 = 2.0 * sc * XL[9], 2.0 * sc * XL[10], 2.0 * sc * XL[11]
    for r in range(3):
        m0, m1, m2 = sc * XL[r], sc * XL[3 + r], sc * XL[6 + r]
        if r == 0:
            q4, q5 = -L2, L1
            b4, b5 = a + 4, a + 5
        elif r == 1:
            q4, q5 = L2, -L0
            b4, b5 = a + 3, a + 5
        else:
            q4, q5 = -L1, L0
            b4, b5 = a + 3, a + 4
        for t in range(lo, hi):
            UT[o + r, t] = (w * UT[o + r, t] + m0 * PV[a, t] + m1 * PV[a + 1, t] + m2 * PV[a + 2, t]
                            + q4 * PV[b4, t] + q5 * PV[b5, t])


# rows of UT (the u vectors of every path position, :func:`_u_all`)
R_U1, R_U3, R_U4, R_U5, R_U6, R_U7, R_U8, R_U9, R_U10, R_U11, R_U12 = 0, 3, 9, 15, 21, 27, 33, 39, 45, 51, 54
UT_ROWS = 60


@njit(inline="always", fastmath=FAST)
def _u_all(A1, A3, A6, XL, F, PV, P, UT):
    """u1..u12 of Alg. 1 (lines 29-36) of every path position t < P of DOF p at once, component-major into UT
    (rows ``R_U*``; u2 = u12: A1 is symmetric).

    Each u is a sum of 6x6 matrices of p times s, psi_dot, psi_ddot or theta of t (PV's rows), used through
    their structure: A0, A4, A5, A7 = ``f xbar*`` with f = F[0..3], B = B(I^C, s_p) = [[X, 0], [-2 [l], 0]]
    (X, l in XL), A2 = 2 A0 - B; A1, A6 dense; A3 with its columns 0-2 only (its columns 3-5 are zero:
    :func:`redmax.dynamics._so_alg1._so_joints`), so u1 = A3^T s and u11 = B^T s have zero entries 3-5, which
    are not stored.  Every loop runs over t in whole blocks of ``LANES`` (PV's spare columns) with one store
    stream, so it compiles to SIMD code.  UT must hold finite values (the first term of each u scales the row by
    0)."""
    lo = U64(0)
    hi = U64(((P + LANES - 1) // LANES) * LANES)
    _mv6(UT, R_U1, 3, A3, 0, True, 0.0, lo, hi, PV)  # u1 = A3^T s
    _mv6(UT, R_U3, 6, A1, 12, False, 0.0, lo, hi, PV)  # u3 = A1 psi_ddot + A5 s + A3 psi_dot
    _bar6(UT, R_U3, F, 2, 0, 1.0, 1.0, lo, hi, PV)
    _mv3(UT, R_U3, A3, 6, lo, hi, PV)
    _mv6(UT, R_U4, 6, A6, 0, False, 0.0, lo, hi, PV)  # u4 = A6 s
    _bar6(UT, R_U5, F, 0, 6, 2.0, 0.0, lo, hi, PV)  # u5 = A2 psi_dot + A4 s = 2 A0 psi_dot - B psi_dot + A4 s
    _b6(UT, R_U5, XL, 6, -1.0, 1.0, lo, hi, PV)
    _bar6(UT, R_U5, F, 1, 0, 1.0, 1.0, lo, hi, PV)
    _b6(UT, R_U6, XL, 6, 1.0, 0.0, lo, hi, PV)  # u6 = B psi_dot + A7 s
    _bar6(UT, R_U6, F, 3, 0, 1.0, 1.0, lo, hi, PV)
    _mv6(UT, R_U7, 6, A1, 18, False, 0.0, lo, hi, PV)  # u7 = A1 theta + A3 s
    _mv3(UT, R_U7, A3, 0, lo, hi, PV)
    _bar6(UT, R_U8, F, 1, 0, 1.0, 0.0, lo, hi, PV)  # u8 = A4 s - B^T psi_dot
    _bt3(UT, R_U8, XL, 6, -1.0, 1.0, lo, hi, PV)
    _bar6(UT, R_U9, F, 0, 0, 1.0, 0.0, lo, hi, PV)  # u9 = A0 s
    _b6(UT, R_U10, XL, 0, 1.0, 0.0, lo, hi, PV)  # u10 = B s
    _bt3(UT, R_U11, XL, 0, 1.0, 0.0, lo, hi, PV)  # u11 = B^T s
    _mv6(UT, R_U12, 6, A1, 0, False, 0.0, lo, hi, PV)  # u12 = A1 s


@njit(inline="always")
def _col6(UT, o, q):
    """UT[o:o + 6, q] as six scalars."""
    return UT[o, q], UT[o + 1, q], UT[o + 2, q], UT[o + 3, q], UT[o + 4, q], UT[o + 5, q]


@njit(inline="always", fastmath=FAST)
def _products(UT, pt, PV, E, js, P):
    """The 13 distinct dot products of Alg. 1 lines 42-66 of the u vectors of path position pt (column pt of UT,
    :func:`_u_all`) with the DOFs r = js..P-1 of the path (rows of PV: s (0-5), psi_dot (6-11), psi_ddot (12-17),
    theta = psi_dot + s_dot (18-23)).

    One loop per product over whole blocks of ``LANES`` path positions (PV and E have ``LANES`` spare columns;
    the extra entries are finite and never read): each loop has one store stream and a trip count that is a
    multiple of the vector width, so it compiles to SIMD code (one loop over all 13 does not)."""
    q = U64(pt)  # (an unsigned index: no wraparound test per load)
    a0, a1, a2 = UT[R_U11, q], UT[R_U11 + 1, q], UT[R_U11 + 2, q]
    b0, b1, b2, b3, b4, b5 = _col6(UT, R_U8, q)
    c0, c1, c2, c3, c4, c5 = _col6(UT, R_U9, q)
    d0, d1, d2 = UT[R_U1, q], UT[R_U1 + 1, q], UT[R_U1 + 2, q]
    e0, e1, e2, e3, e4, e5 = _col6(UT, R_U12, q)
    g0, g1, g2, g3, g4, g5 = _col6(UT, R_U3, q)
    h0, h1, h2, h3, h4, h5 = _col6(UT, R_U5, q)
    k0, k1, k2, k3, k4, k5 = _col6(UT, R_U6, q)
    l0, l1, l2, l3, l4, l5 = _col6(UT, R_U7, q)
    m0, m1, m2, m3, m4, m5 = _col6(UT, R_U10, q)
    o0, o1, o2, o3, o4, o5 = _col6(UT, R_U4, q)
    lo = U64((js // LANES) * LANES)
    hi = U64(((P + LANES - 1) // LANES) * LANES)
    for r in range(lo, hi):  # p1 = u11 . psi_dot_r
        E[0, r] = a0 * PV[6, r] + a1 * PV[7, r] + a2 * PV[8, r]
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
        E[4, r] = a0 * PV[0, r] + a1 * PV[1, r] + a2 * PV[2, r]
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
