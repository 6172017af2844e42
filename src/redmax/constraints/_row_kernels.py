"""Building blocks of the compiled constraint rows (:mod:`redmax.constraints._compiled`): time profiles of
prescribed motion, the bias accelerations ``alpha_i`` (``J̇ q̇`` in world coordinates, gravity excluded), world points
and point velocities of bodies, and the accumulation of a world 6-vector into a row over the joint coordinates
(``G[d] = S_w[d] . w`` over a body's ancestors' DOFs)."""

from __future__ import annotations

import numpy as np

from redmax._jit import njit
from redmax._kernels.registers import cross, get3, get6, get9, rot
from redmax.model.layout import offsets

__all__ = ["EQ", "INEQ_ACTIVE", "INEQ_INACTIVE", "P_CONSTANT", "P_PIECEWISE", "P_SIGMOID", "P_SINUSOID", "alpha_pass",
           "profile_eval", "profile_len"]

EQ = 0


INEQ_ACTIVE = 1


INEQ_INACTIVE = 2


P_CONSTANT = 0


P_PIECEWISE = 1


P_SIGMOID = 2


P_SINUSOID = 3


@njit(cache=True)
def profile_eval(cf, o, t, j):
    """Component j of the profile encoded at ``cf[o:]`` (``[code, k, params]``; a 1-value profile broadcasts):
    returns (value, rate, acceleration)."""
    code = int(cf[o])
    k = int(cf[o + 1])
    p = o + 2
    if j >= k:
        j = k - 1
    if code == P_CONSTANT:
        return cf[p + j], 0.0, 0.0
    if code == P_PIECEWISE:
        nk = int(cf[p])
        T = p + 1
        V = T + nk
        if t <= cf[T]:
            return cf[V + j], 0.0, 0.0
        if t >= cf[T + nk - 1]:
            return cf[V + (nk - 1) * k + j], 0.0, 0.0
        s = 0
        while cf[T + s + 1] <= t:
            s += 1
        v0 = cf[V + s * k + j]
        v1 = cf[V + (s + 1) * k + j]
        sl = (v1 - v0) / (cf[T + s + 1] - cf[T + s])
        return v0 + sl * (t - cf[T + s]), sl, 0.0
    if code == P_SIGMOID:
        a = cf[p]
        b = cf[p + 1]
        t0 = cf[p + 2]
        t1 = cf[p + 3]
        if t >= t1 and cf[p + 4] != 0.0:  # hold b from t1 on (unless the profile says hold = false)
            return b, 0.0, 0.0
        ds = 2.0 / (t1 - t0)
        s = ds * (t - t0) - 1.0
        sg = 1.0 / (1.0 + np.exp(-a * s))
        d1 = a * sg * (1.0 - sg)
        d2 = a * a * sg * (1.0 - sg) * (1.0 - 2.0 * sg)
        return b * sg, b * d1 * ds, b * d2 * ds * ds
    # sinusoid: amplitude, frequency, phase, offset (k each)
    amp = cf[p + j]
    w = 2.0 * np.pi * cf[p + k + j]
    arg = w * t + cf[p + 2 * k + j]
    return cf[p + 3 * k + j] + amp * np.sin(arg), amp * w * np.cos(arg), -amp * w * w * np.sin(arg)


@njit(cache=True)
def profile_len(cf, o):
    """Number of floats of the profile encoded at ``cf[o:]``."""
    code = int(cf[o])
    k = int(cf[o + 1])
    if code == P_CONSTANT:
        return 2 + k
    if code == P_PIECEWISE:
        nk = int(cf[o + 2])
        return 3 + nk + nk * k
    if code == P_SIGMOID:
        return 7
    return 2 + 4 * k


@njit(cache=True)
def alpha_pass(Ii, W, wS, wV, wSd, qd, alpha):
    """``alpha_i`` (nb, 6): the world bias acceleration ``J̇ q̇`` of every body (no gravity)."""
    L = offsets(Ii)
    for i in range(L.nb):
        a = Ii[L.o_idx + i]
        b = Ii[L.o_idx + i + 1]
        par = Ii[L.o_par + i]
        s0 = s1 = s2 = s3 = s4 = s5 = 0.0
        for d in range(a, b):
            x = qd[d]
            s0 += W[wS + 6 * d] * x
            s1 += W[wS + 6 * d + 1] * x
            s2 += W[wS + 6 * d + 2] * x
            s3 += W[wS + 6 * d + 3] * x
            s4 += W[wS + 6 * d + 4] * x
            s5 += W[wS + 6 * d + 5] * x
        c0, c1, c2, c3, c4, c5 = get6(W, wSd + 6 * i)
        if par >= 0:
            p0, p1, p2, p3, p4, p5 = get6(W, wV + 6 * par)
            c0 += p1 * s2 - p2 * s1
            c1 += p2 * s0 - p0 * s2
            c2 += p0 * s1 - p1 * s0
            c3 += p1 * s5 - p2 * s4 + p4 * s2 - p5 * s1
            c4 += p2 * s3 - p0 * s5 + p5 * s0 - p3 * s2
            c5 += p0 * s4 - p1 * s3 + p3 * s1 - p4 * s0
            for k in range(6):
                alpha[i, k] = alpha[par, k]
        else:
            for k in range(6):
                alpha[i, k] = 0.0
        alpha[i, 0] += c0
        alpha[i, 1] += c1
        alpha[i, 2] += c2
        alpha[i, 3] += c3
        alpha[i, 4] += c4
        alpha[i, 5] += c5


@njit(cache=True)
def _frame(W, wR, wp, body):
    """(R (9-tuple), p) of body's joint frame; the identity for the world (-1)."""
    if body < 0:
        return (1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0), (0.0, 0.0, 0.0)
    return get9(W, wR + 9 * body), get3(W, wp + 3 * body)


@njit(cache=True)
def _point(W, wR, wp, body, x0, x1, x2):
    """World position of the point x (joint frame of body; a world point for the world)."""
    if body < 0:
        return x0, x1, x2
    R, p = _frame(W, wR, wp, body)
    a0, a1, a2 = rot(R, x0, x1, x2)
    return a0 + p[0], a1 + p[1], a2 + p[2]


@njit(cache=True)
def _twist(W, wV, body):
    if body < 0:
        return 0.0, 0.0, 0.0, 0.0, 0.0, 0.0
    return get6(W, wV + 6 * body)


@njit(cache=True)
def _pvel(W, wV, body, p0, p1, p2):
    """Velocity of the world point p moving with body: ``v + omega x p``."""
    w0, w1, w2, v0, v1, v2 = _twist(W, wV, body)
    c0, c1, c2 = cross(w0, w1, w2, p0, p1, p2)
    return v0 + c0, v1 + c1, v2 + c2


@njit(cache=True)
def _add_row(Ii, W, wS, G, row, body, w0, w1, w2, w3, w4, w5):
    """``G[row, d] += S_w[d] . w`` for every DOF d of body and its ancestors (nothing for the world)."""
    L = offsets(Ii)
    i = body
    while i >= 0:
        for d in range(Ii[L.o_idx + i], Ii[L.o_idx + i + 1]):
            s0, s1, s2, s3, s4, s5 = get6(W, wS + 6 * d)
            G[row, d] += s0 * w0 + s1 * w1 + s2 * w2 + s3 * w3 + s4 * w4 + s5 * w5
        i = Ii[L.o_par + i]


@njit(cache=True)
def _dot_alpha(alpha, body, w0, w1, w2, w3, w4, w5):
    if body < 0:
        return 0.0
    return (alpha[body, 0] * w0 + alpha[body, 1] * w1 + alpha[body, 2] * w2 + alpha[body, 3] * w3
            + alpha[body, 4] * w4 + alpha[body, 5] * w5)


@njit(cache=True)
def _body_vector(Ii, W, wS, G, row, body, sgn, w, mode, alpha, WA, report):
    """Add ``sgn * w`` of one body to a maximal row: G (modes 0, 1), ``w . alpha`` (returned, mode 1), and the
    reported body's vector to WA."""
    w0 = sgn * w[0]
    w1 = sgn * w[1]
    w2 = sgn * w[2]
    w3 = sgn * w[3]
    w4 = sgn * w[4]
    w5 = sgn * w[5]
    if mode == 3 and body >= 0:  # maximal rows: the body's own 6-vector
        G[row, 6 * body] += w0
        G[row, 6 * body + 1] += w1
        G[row, 6 * body + 2] += w2
        G[row, 6 * body + 3] += w3
        G[row, 6 * body + 4] += w4
        G[row, 6 * body + 5] += w5
    elif mode != 2 and body >= 0:
        _add_row(Ii, W, wS, G, row, body, w0, w1, w2, w3, w4, w5)
    if report:
        WA[row, 0] = w0
        WA[row, 1] = w1
        WA[row, 2] = w2
        WA[row, 3] = w3
        WA[row, 4] = w4
        WA[row, 5] = w5
    if mode == 1:
        return _dot_alpha(alpha, body, w0, w1, w2, w3, w4, w5)
    return 0.0


@njit(cache=True)
def _clear_row(G, g, gd, ga, rkind, WA, row, n, mode):
    if mode != 2:
        for d in range(G.shape[1]):  # (n, or 6 nb for maximal rows)
            G[row, d] = 0.0
    g[row] = 0.0
    gd[row] = 0.0
    ga[row] = 0.0
    rkind[row] = EQ
    for k in range(6):
        WA[row, k] = 0.0


@njit(cache=True)
def _point_rows(Ii, W, wo, G, g, gd, ga, WA, row, A, B, xa, xb, dirs, ndir, mode, alpha, repA):
    """Rows ``n . (p_A - p_B)`` for the directions ``dirs[3k:3k+3]`` (a 9-tuple, k < ndir); returns the next
    row."""
    wR, wp, wS, wV = wo[0], wo[1], wo[2], wo[3]
    pa0, pa1, pa2 = _point(W, wR, wp, A, xa[0], xa[1], xa[2])
    pb0, pb1, pb2 = _point(W, wR, wp, B, xb[0], xb[1], xb[2])
    va0, va1, va2 = _pvel(W, wV, A, pa0, pa1, pa2)
    vb0, vb1, vb2 = _pvel(W, wV, B, pb0, pb1, pb2)
    for k in range(ndir):
        n0, n1, n2 = dirs[3 * k], dirs[3 * k + 1], dirs[3 * k + 2]
        g[row] = n0 * (pa0 - pb0) + n1 * (pa1 - pb1) + n2 * (pa2 - pb2)
        c0, c1, c2 = cross(pa0, pa1, pa2, n0, n1, n2)
        wA = (c0, c1, c2, n0, n1, n2)
        acc = _body_vector(Ii, W, wS, G, row, A, 1.0, wA, mode, alpha, WA, repA)
        c0, c1, c2 = cross(pb0, pb1, pb2, n0, n1, n2)
        wA = (c0, c1, c2, n0, n1, n2)
        acc += _body_vector(Ii, W, wS, G, row, B, -1.0, wA, mode, alpha, WA, not repA)
        if mode == 1:  # w-dot . V = (pdot x n) . omega per body
            oa = _twist(W, wV, A)
            ob = _twist(W, wV, B)
            d0, d1, d2 = cross(va0, va1, va2, n0, n1, n2)
            e0, e1, e2 = cross(vb0, vb1, vb2, n0, n1, n2)
            acc += d0 * oa[0] + d1 * oa[1] + d2 * oa[2] - (e0 * ob[0] + e1 * ob[1] + e2 * ob[2])
            ga[row] = acc
        row += 1
    return row
