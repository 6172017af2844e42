"""Building blocks of IDSVA-SO (Singh, Russell & Wensing, Alg. 1; :mod:`.second_order_walk`): the 6x6 spatial
matrices of lines 15-24 (inertias, body Coriolis matrices ``B'``; rows of ``f xbar*`` and ``B'``), the twelve
vectors ``u`` of lines 29-36 (:func:`_u_all`) and the thirteen distinct dot products of lines 42-66
(:func:`_products`).  Scalar-generic.

The row and tuple helpers are inlined at Numba's IR level (their constant lengths then select one loop body per
call site, which LLVM turns into SIMD code); :func:`_u_all` and :func:`_products`, which hold 40 and 13 such
sites, are compiled functions of their own: inlining them too made the walk's compile copy and re-type every site
once per caller (124 s of compiling for the walk's chunk, 30 s now, at the same speed)."""

from __future__ import annotations

from redmax._jit import FAST, U64, njit

LANES = 4  # SIMD block of the product loops (4 doubles: the 256-bit vectors LLVM prefers also on AVX-512 CPUs)


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


@njit(inline="always")
def b_matrix(src, o, out):
    """out = [[X, 0], [-2 [l], 0]] (6x6), the matrix B' of the Coriolis data X (9, row major) = src[o:o+9] and
    l (3) = src[o+9:o+12] (the layout of :func:`.core_tree.body_coriolis`)."""
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
def _grp(c, na, a, PV, t):
    """c[:na] . PV[a:a + na, t] (na = 6, or 3 when the entries 3-5 of the coefficients c are zero)."""
    if na == 6:
        return (c[0] * PV[a, t] + c[1] * PV[a + 1, t] + c[2] * PV[a + 2, t] + c[3] * PV[a + 3, t]
                + c[4] * PV[a + 4, t] + c[5] * PV[a + 5, t])
    return c[0] * PV[a, t] + c[1] * PV[a + 1, t] + c[2] * PV[a + 2, t]


@njit(inline="always", fastmath=FAST)
def _row(Y, o, lo, hi, PV, a, ca, na, b, cb, nb, c, cc, nc):
    """Y[o, t] = ca . PV[a:a + na, t] + cb . PV[b:b + nb, t] + cc . PV[c:c + nc, t] for t = lo..hi-1 (a group
    with length 0 left out; the lengths are constants at every call, so each row is one loop with one store
    stream, which compiles to SIMD code): a component of a u vector (Y = UT, :func:`_u_all`) or a product
    (Y = E, :func:`_products`)."""
    for t in range(lo, hi):
        x = _grp(ca, na, a, PV, t)
        if nb:
            x += _grp(cb, nb, b, PV, t)
        if nc:
            x += _grp(cc, nc, c, PV, t)
        Y[o, t] = x


@njit(inline="always")
def _xrow(v0, v1, v2, k, z):
    """Row k < 3 of the matrix of x -> x_w x v (coefficients of x_w, then three zeros ``z``)."""
    if k == 0:
        return (z, v2, -v1, z, z, z)
    if k == 1:
        return (-v2, z, v0, z, z, z)
    return (v1, -v0, z, z, z, z)


@njit(inline="always")
def _barrow(F, k, r, sc):
    """Row r of the matrix sc (f xbar*), f = F[k] = [n; g]: (f xbar*) x = x x* f = [x_w x n + x_v x g; x_w x g].
    Rows 3-5 have zero entries 3-5."""
    n0, n1, n2, g0, g1, g2 = sc * F[k, 0], sc * F[k, 1], sc * F[k, 2], sc * F[k, 3], sc * F[k, 4], sc * F[k, 5]
    z = 0.0 * n0
    if r == 0:
        return (z, n2, -n1, z, g2, -g1)
    if r == 1:
        return (-n2, z, n0, -g2, z, g0)
    if r == 2:
        return (n1, -n0, z, g1, -g0, z)
    return _xrow(g0, g1, g2, r - 3, z)


@njit(inline="always")
def _brow(XL, r, sc):
    """Row r of sc B, B = [[X, 0], [-2 [l], 0]] (X row major, l: XL[0:9], XL[9:12]); its entries 3-5 are zero."""
    z = 0.0 * XL[0]
    if r < 3:
        return (sc * XL[3 * r], sc * XL[3 * r + 1], sc * XL[3 * r + 2], z, z, z)
    return _xrow(2.0 * sc * XL[9], 2.0 * sc * XL[10], 2.0 * sc * XL[11], r - 3, z)


@njit(inline="always")
def _btrow(XL, r, sc):
    """Row r < 3 of sc B^T (its rows 3-5 are zero): X^T x_w + 2 l x x_v."""
    L0, L1, L2 = 2.0 * sc * XL[9], 2.0 * sc * XL[10], 2.0 * sc * XL[11]
    z = 0.0 * L0
    m0, m1, m2 = sc * XL[r], sc * XL[3 + r], sc * XL[6 + r]
    if r == 0:
        return (m0, m1, m2, z, -L2, L1)
    if r == 1:
        return (m0, m1, m2, L2, z, -L0)
    return (m0, m1, m2, -L1, L0, z)


@njit(inline="always")
def _mrow(M, r):
    return M[r, 0], M[r, 1], M[r, 2], M[r, 3], M[r, 4], M[r, 5]


@njit(inline="always")
def _mcol(M, r):
    return M[0, r], M[1, r], M[2, r], M[3, r], M[4, r], M[5, r]


@njit(inline="always")
def _axpy(x, a, y):
    """The 6-tuple x + a y."""
    return x[0] + a * y[0], x[1] + a * y[1], x[2] + a * y[2], x[3] + a * y[3], x[4] + a * y[4], x[5] + a * y[5]


# rows of UT (the u vectors of every path position, :func:`_u_all`)
R_U1, R_U3, R_U4, R_U5, R_U6, R_U7, R_U8, R_U9, R_U10, R_U11, R_U12 = 0, 3, 9, 15, 21, 27, 33, 39, 45, 51, 54
UT_ROWS = 60


@njit(cache=True, fastmath=FAST)
def _u_all(A1, A3, G, XL, F, PV, P, UT):
    """u1..u12 of Alg. 1 (lines 29-36) of every path position t < P of DOF p at once, component-major into UT
    (rows ``R_U*``; u2 = u12: A1 is symmetric).

    Each u is a sum of 6x6 matrices of p times s, psi_dot, psi_ddot or theta of t (PV's rows 0, 6, 12, 18), used
    through their structure: A0, A4, A5, A7 = ``f xbar*`` with f = F[0..3] (:func:`_barrow`), B = B(I^C, s_p) =
    [[X, 0], [-2 [l], 0]] (X, l in XL: :func:`_brow`, :func:`_btrow`), A2 = 2 A0 - B, A6 = A0 + G^T (line 23: G
    the rows of s x* I^C); A1 dense; A3 with its columns 0-2 only (its columns 3-5 are zero:
    :func:`.second_order_walk.walk_joints`), so u1 = A3^T s and u11 = B^T s have zero entries 3-5, which
    are not stored.  Every component of every u is one loop (:func:`_row`) over t in whole blocks of ``LANES``
    (PV's spare columns) that sums its terms, which is faster than a loop per term (by about a tenth on
    talos_reduced, all joints on one thread).  The structural zeros of the coefficients are multiplied like
    the others (LLVM may not drop ``0 * x`` without assuming finite values).  UT's columns up to the block end
    are written."""
    lo = U64(0)
    hi = U64(((P + LANES - 1) // LANES) * LANES)
    Z = _mrow(A1, 0)  # (the coefficients of an absent group: never read)
    for r in range(3):
        _row(UT, R_U1 + r, lo, hi, PV, 0, _mcol(A3, r), 6, 0, Z, 0, 0, Z, 0)  # u1 = A3^T s
        _row(UT, R_U11 + r, lo, hi, PV, 0, _btrow(XL, r, 1.0), 6, 0, Z, 0, 0, Z, 0)  # u11 = B^T s
        _row(UT, R_U8 + r, lo, hi, PV, 0, _barrow(F, 1, r, 1.0), 6, 6, _btrow(XL, r, -1.0), 6, 0, Z,
             0)  # u8 = A4 s - B^T psi_dot
    for r in range(3, 6):
        _row(UT, R_U8 + r, lo, hi, PV, 0, _barrow(F, 1, r, 1.0), 3, 0, Z, 0, 0, Z, 0)
    for r in range(6):
        _row(UT, R_U4 + r, lo, hi, PV, 0, _axpy(_barrow(F, 0, r, 1.0), 1.0, _mcol(G, r)), 6, 0, Z, 0, 0, Z,
             0)  # u4 = A6 s
        _row(UT, R_U12 + r, lo, hi, PV, 0, _mrow(A1, r), 6, 0, Z, 0, 0, Z, 0)  # u12 = A1 s
        _row(UT, R_U7 + r, lo, hi, PV, 18, _mrow(A1, r), 6, 0, _mrow(A3, r), 3, 0, Z, 0)  # u7 = A1 theta + A3 s
        _row(UT, R_U10 + r, lo, hi, PV, 0, _brow(XL, r, 1.0), 3, 0, Z, 0, 0, Z, 0)  # u10 = B s
    for r in range(3):
        _row(UT, R_U3 + r, lo, hi, PV, 12, _mrow(A1, r), 6, 0, _barrow(F, 2, r, 1.0), 6, 6, _mrow(A3, r),
             3)  # u3 = A1 psi_ddot + A5 s + A3 psi_dot
        _row(UT, R_U5 + r, lo, hi, PV, 6, _axpy(_barrow(F, 0, r, 2.0), -1.0, _brow(XL, r, 1.0)), 6, 0,
             _barrow(F, 1, r, 1.0), 6, 0, Z, 0)  # u5 = A2 psi_dot + A4 s = (2 A0 - B) psi_dot + A4 s
        _row(UT, R_U6 + r, lo, hi, PV, 6, _brow(XL, r, 1.0), 3, 0, _barrow(F, 3, r, 1.0), 6, 0, Z,
             0)  # u6 = B psi_dot + A7 s
        _row(UT, R_U9 + r, lo, hi, PV, 0, _barrow(F, 0, r, 1.0), 6, 0, Z, 0, 0, Z, 0)  # u9 = A0 s
    for r in range(3, 6):  # (rows 3-5: the f xbar* and B rows read x_w only)
        _row(UT, R_U3 + r, lo, hi, PV, 12, _mrow(A1, r), 6, 0, _barrow(F, 2, r, 1.0), 3, 6, _mrow(A3, r), 3)
        _row(UT, R_U5 + r, lo, hi, PV, 6, _axpy(_barrow(F, 0, r, 2.0), -1.0, _brow(XL, r, 1.0)), 3, 0,
             _barrow(F, 1, r, 1.0), 3, 0, Z, 0)
        _row(UT, R_U6 + r, lo, hi, PV, 6, _brow(XL, r, 1.0), 3, 0, _barrow(F, 3, r, 1.0), 3, 0, Z, 0)
        _row(UT, R_U9 + r, lo, hi, PV, 0, _barrow(F, 0, r, 1.0), 3, 0, Z, 0, 0, Z, 0)


@njit(inline="always")
def _col6(UT, o, q):
    """UT[o:o + 6, q] as six scalars."""
    return UT[o, q], UT[o + 1, q], UT[o + 2, q], UT[o + 3, q], UT[o + 4, q], UT[o + 5, q]


@njit(cache=True, fastmath=FAST)
def _products(UT, pt, PV, E, js, je, jnei):
    """The 13 distinct dot products of Alg. 1 lines 42-66 of the u vectors of path position pt (column pt of UT,
    :func:`_u_all`) with the DOFs r at columns 0..je-1 of the path (root first: t's joint and its ancestors; rows of
    PV: s (0-5), psi_dot (6-11), psi_ddot (12-17), theta = psi_dot + s_dot (18-23)), each only over the r that
    :func:`.second_order_walk.walk_joints` reads it for: those above t's joint (r < js, k != j) for rows
    6-12 and, when t is in p's joint, row 4; rows 2, 3, 10, 11 only when t is not in p's joint (``jnei``), row 12
    only when it is (talos: 13 -> about 9 loops per pair (p, t), none of rows 6-12 for t in the free base).

    One loop per product (:func:`_row`) over whole blocks of ``LANES`` path positions (PV and E have ``LANES``
    spare columns; the extra entries are finite and never read): each loop has one store stream and a trip count
    that is a multiple of the vector width, so it compiles to SIMD code (one loop over all 13 does not; nor do
    loops of two to four products: measured slower).  The coefficients of an absent group are u11's (never read)."""
    q = U64(pt)  # (an unsigned index: no wraparound test per load)
    u1, u3, u4, u5 = _col6(UT, R_U1, q), _col6(UT, R_U3, q), _col6(UT, R_U4, q), _col6(UT, R_U5, q)
    u6, u7, u8, u9 = _col6(UT, R_U6, q), _col6(UT, R_U7, q), _col6(UT, R_U8, q), _col6(UT, R_U9, q)
    u10, u11, u12 = _col6(UT, R_U10, q), _col6(UT, R_U11, q), _col6(UT, R_U12, q)  # (u1, u11: entries 0-2)
    lo = U64(0)
    hi = U64(((je + LANES - 1) // LANES) * LANES)  # all r: t's joint and above
    hs = U64(((js + LANES - 1) // LANES) * LANES)  # r above t's joint
    _row(E, 0, lo, hi, PV, 6, u11, 3, 0, u11, 0, 0, u11, 0)  # p1 = u11 . psi_dot_r
    _row(E, 1, lo, hi, PV, 6, u8, 6, 12, u9, 6, 0, u11, 0)  # p2 = u8 . psi_dot_r + u9 . psi_ddot_r
    if jnei:
        _row(E, 2, lo, hi, PV, 6, u1, 3, 12, u12, 6, 0, u11, 0)  # u1 . psi_dot_r + u2 . psi_ddot_r
        _row(E, 3, lo, hi, PV, 0, u1, 3, 18, u12, 6, 0, u11, 0)  # u1 . s_r + u2 . theta_r
    _row(E, 4, lo, hi if jnei else hs, PV, 0, u11, 3, 0, u11, 0, 0, u11, 0)  # u11 . s_r
    _row(E, 5, lo, hi, PV, 0, u12, 6, 0, u11, 0, 0, u11, 0)  # u12 . s_r (= u2 . s_r)
    if js > 0:  # (t in the root joint: no r above it)
        _row(E, 6, lo, hs, PV, 0, u3, 6, 0, u11, 0, 0, u11, 0)  # u3 . s_r
        _row(E, 7, lo, hs, PV, 0, u5, 6, 18, u9, 6, 0, u11, 0)  # u5 . s_r + u9 . theta_r
        _row(E, 8, lo, hs, PV, 0, u6, 6, 0, u11, 0, 0, u11, 0)  # u6 . s_r
        _row(E, 9, lo, hs, PV, 0, u9, 6, 0, u11, 0, 0, u11, 0)  # u9 . s_r
        if jnei:
            _row(E, 10, lo, hs, PV, 0, u7, 6, 0, u11, 0, 0, u11, 0)  # u7 . s_r
            _row(E, 11, lo, hs, PV, 0, u10, 6, 0, u11, 0, 0, u11, 0)  # u10 . s_r
        else:
            _row(E, 12, lo, hs, PV, 0, u4, 6, 0, u11, 0, 0, u11, 0)  # u4 . s_r
