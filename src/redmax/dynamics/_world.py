"""World-frame helpers for ABA, CRBA and M^-1: joint frames, S in world coordinates, body inertias.

Expressing every motion and force in the world frame (spatial vectors at the world origin, angular
first) makes the propagation operators identities, so composite and articulated inertias are plain
sums (Featherstone 2008, §6.3 and §7.3; the world-frame form Pinocchio uses).

A body inertia about the world origin is stored compactly as 10 numbers
``[m, h0, h1, h2, I00, I01, I02, I11, I12, I22]`` with ``h = m c`` (c the centre of mass) and ``I`` the
rotational inertia about the origin; the 6x6 matrix is ``[[I, [h]], [[h]^T, m 1]]`` and
``M [w; v] = [I w + h x v; m v - h x w]``.
"""

from __future__ import annotations

from redmax._jit import njit
from redmax.dynamics._packed import FAST, SIMPLE_MAX, generic_motion, offsets, revolute_frame, simple_motion
from redmax.dynamics._regs import cross, get3, get6, get9, put3, put6, put9, rot, rot_mul
from redmax.joints.simple import REVOLUTE


@njit(cache=True, fastmath=FAST)
def world_pass(Ii, Ff, q, qd, jstate, W, wR, wp, wSw, wI, wSd, scratch):
    """For every joint i: world frame (R_wj -> W[wR+9i], p_wj -> W[wp+3i]), world S columns
    (W[wSw+6d]), the body's compact inertia about the world origin (W[wI+10i]) and, if ``wSd >= 0``,
    ``Ad(E_wj) Sdot qd`` (W[wSd+6i], world).  ``scratch`` needs 18 + 36 entries.

    The per-joint arithmetic keeps rotations and positions in scalar locals (values read back from
    the shared workspace after a store could not stay in registers); revolute joints, the common
    case, come from :func:`revolute_frame` directly as scalars.  Stores and loads go through short
    views indexed by literals (no negative-index checks, see ``_sym``)."""
    nb, n, o_par, o_typ, o_idx, o_jp, f_R, f_p, f_M, f_A, f_m, f_c, f_I, f_g, f_jp = offsets(Ii)
    lr = scratch
    lp = scratch + 9
    lsd = scratch + 12
    ls = scratch + 18
    for i in range(nb):
        a = Ii[o_idx + i]
        b = Ii[o_idx + i + 1]
        typ = Ii[o_typ + i]
        if typ == REVOLUTE:
            L00, L01, L02, L10, L11, L12, L20, L21, L22, l0, l1, l2, ax, ay, az = revolute_frame(Ii, Ff, i, q)
            L = (L00, L01, L02, L10, L11, L12, L20, L21, L22)
        else:
            if typ <= SIMPLE_MAX:
                simple_motion(Ii, Ff, i, typ, q, W, lr, lp, ls, lsd)
            else:
                generic_motion(Ii, Ff, i, typ, q, qd, jstate, W, lr, lp, ls, lsd)
            L = get9(W, lr)
            l0, l1, l2 = get3(W, lp)
        par = Ii[o_par + i]
        if par >= 0:  # E_wj = E_wp E_pj
            A = get9(W, wR + 9 * par)
            R = rot_mul(A, L)
            u0, u1, u2 = rot(A, l0, l1, l2)
            q0, q1, q2 = get3(W, wp + 3 * par)
            P0, P1, P2 = u0 + q0, u1 + q1, u2 + q2
        else:
            R = L
            P0, P1, P2 = l0, l1, l2
        r = wR + 9 * i
        put9(W, r, R)
        put3(W, wp + 3 * i, P0, P1, P2)
        # S in world: [R s_w; p x (R s_w) + R s_v]
        if typ == REVOLUTE:
            w0, w1, w2 = rot(R, ax, ay, az)
            v0, v1, v2 = cross(P0, P1, P2, w0, w1, w2)
            put6(W, wSw + 6 * a, w0, w1, w2, v0, v1, v2)
        else:
            for d in range(a, b):
                x0, x1, x2, y0, y1, y2 = get6(W, ls + 6 * (d - a))
                w0, w1, w2 = rot(R, x0, x1, x2)
                v0, v1, v2 = rot(R, y0, y1, y2)
                c0, c1, c2 = cross(P0, P1, P2, w0, w1, w2)
                put6(W, wSw + 6 * d, w0, w1, w2, v0 + c0, v1 + c1, v2 + c2)
        if wSd >= 0:
            if typ <= SIMPLE_MAX:
                for k in range(6):
                    W[wSd + 6 * i + k] = 0.0
            else:
                to_world(W, r, P0, P1, P2, lsd, wSd + 6 * i)
        # compact inertia about the world origin: c_w = R c + p, I = R Ic R^T + m (|c|^2 1 - c c^T)
        m = Ff[f_m + i]
        k0, k1, k2 = get3(Ff, f_c + 3 * i)
        c0, c1, c2 = rot(R, k0, k1, k2)
        c0 += P0
        c1 += P1
        c2 += P2
        J00, J01, J02, _, J11, J12, _, _, J22 = get9(Ff, f_I + 9 * i)
        R00, R01, R02, R10, R11, R12, R20, R21, R22 = R
        # T = Ic R^T (column l of R^T = row l of R)
        t00 = J00 * R00 + J01 * R01 + J02 * R02
        t01 = J00 * R10 + J01 * R11 + J02 * R12
        t02 = J00 * R20 + J01 * R21 + J02 * R22
        t10 = J01 * R00 + J11 * R01 + J12 * R02
        t11 = J01 * R10 + J11 * R11 + J12 * R12
        t12 = J01 * R20 + J11 * R21 + J12 * R22
        t20 = J02 * R00 + J12 * R01 + J22 * R02
        t21 = J02 * R10 + J12 * R11 + J22 * R12
        t22 = J02 * R20 + J12 * R21 + J22 * R22
        cn = c0 * c0 + c1 * c1 + c2 * c2
        o = W[wI + 10 * i:wI + 10 * i + 10]
        o[0] = m
        o[1] = m * c0
        o[2] = m * c1
        o[3] = m * c2
        o[4] = R00 * t00 + R01 * t10 + R02 * t20 + m * (cn - c0 * c0)
        o[5] = R00 * t01 + R01 * t11 + R02 * t21 - m * c0 * c1
        o[6] = R00 * t02 + R01 * t12 + R02 * t22 - m * c0 * c2
        o[7] = R10 * t01 + R11 * t11 + R12 * t21 + m * (cn - c1 * c1)
        o[8] = R10 * t02 + R11 * t12 + R12 * t22 - m * c1 * c2
        o[9] = R20 * t02 + R21 * t12 + R22 * t22 + m * (cn - c2 * c2)


@njit(cache=True, fastmath=FAST)
def tangent_columns(Ii, W, wR, wp, wSw, wSd, tmode):
    """Body-twist ("tangent") rates for the joints marked in ``tmode`` (nb,), after :func:`world_pass`: a body
    with ``tmode[i] = 3`` (a spherical joint) or ``6`` (a free joint, angular first) gets the world S columns of
    the unit twists of its joint frame, ``[R e_k; p x R e_k]`` (angular) and ``[0; R e_k]`` (linear), and
    ``Ad(E_wj) Sdot qd = 0`` (those columns are constant in the joint frame).  Its rates are then
    ``nu = T qd`` with ``T`` the joint's own S (``redmax.dynamics.tangent``), so ABA run on ``(nu, T^-T tau)``
    gives ``nud = T qdd + Tdot qd`` directly.  Assumes a spherical joint's S has no linear rows (its frame's
    origin is its centre of rotation)."""
    nb, n, o_par, o_typ, o_idx, o_jp, f_R, f_p, f_M, f_A, f_m, f_c, f_I, f_g, f_jp = offsets(Ii)
    for i in range(nb):
        m = tmode[i]
        if m == 0:
            continue
        a = Ii[o_idx + i]
        R00, R01, R02, R10, R11, R12, R20, R21, R22 = get9(W, wR + 9 * i)
        P0, P1, P2 = get3(W, wp + 3 * i)
        z = 0.0 * R00
        cols = ((R00, R10, R20), (R01, R11, R21), (R02, R12, R22))
        for k in range(3):
            w0, w1, w2 = cols[k]
            c0, c1, c2 = cross(P0, P1, P2, w0, w1, w2)
            put6(W, wSw + 6 * (a + k), w0, w1, w2, c0, c1, c2)
            if m == 6:
                put6(W, wSw + 6 * (a + 3 + k), z, z, z, w0, w1, w2)
        if wSd >= 0:
            put6(W, wSd + 6 * i, z, z, z, z, z, z)


@njit(cache=True, fastmath=FAST)
def to_world(W, r, P0, P1, P2, src, dst):
    """Motion vector in a joint frame (R = W[r], p = (P0, P1, P2)) -> world: ``[R w; p x R w + R v]``."""
    w0 = W[r] * W[src] + W[r + 1] * W[src + 1] + W[r + 2] * W[src + 2]
    w1 = W[r + 3] * W[src] + W[r + 4] * W[src + 1] + W[r + 5] * W[src + 2]
    w2 = W[r + 6] * W[src] + W[r + 7] * W[src + 1] + W[r + 8] * W[src + 2]
    W[dst] = w0
    W[dst + 1] = w1
    W[dst + 2] = w2
    W[dst + 3] = W[r] * W[src + 3] + W[r + 1] * W[src + 4] + W[r + 2] * W[src + 5] + P1 * w2 - P2 * w1
    W[dst + 4] = W[r + 3] * W[src + 3] + W[r + 4] * W[src + 4] + W[r + 5] * W[src + 5] + P2 * w0 - P0 * w2
    W[dst + 5] = W[r + 6] * W[src + 3] + W[r + 7] * W[src + 4] + W[r + 8] * W[src + 5] + P0 * w1 - P1 * w0


@njit(inline="always")
def inertia_times(W, I, w0, w1, w2, v0, v1, v2):
    """M [w; v] for the compact inertia W[I:I+10] as a 6-tuple: ``[I w + h x v; m v - h x w]``."""
    c = W[I:I + 10]
    m, h0, h1, h2 = c[0], c[1], c[2], c[3]
    a0, a1, a2 = cross(h0, h1, h2, v0, v1, v2)
    b0, b1, b2 = cross(h0, h1, h2, w0, w1, w2)
    return (c[4] * w0 + c[5] * w1 + c[6] * w2 + a0, c[5] * w0 + c[7] * w1 + c[8] * w2 + a1,
            c[6] * w0 + c[8] * w1 + c[9] * w2 + a2, m * v0 - b0, m * v1 - b1, m * v2 - b2)


@njit(cache=True, fastmath=FAST)
def inertia_apply(W, I, src, dst):
    """W[dst] = M W[src] for the compact inertia W[I:I+10] (see :func:`inertia_times`)."""
    w0, w1, w2, v0, v1, v2 = get6(W, src)
    f0, f1, f2, f3, f4, f5 = inertia_times(W, I, w0, w1, w2, v0, v1, v2)
    put6(W, dst, f0, f1, f2, f3, f4, f5)


@njit(cache=True, fastmath=FAST)
def inertia_to_matrix(W, I, dst):
    """Expand the compact inertia W[I:I+10] into the 6x6 matrix W[dst:dst+36] (row-major)."""
    m = W[I]
    h0 = W[I + 1]
    h1 = W[I + 2]
    h2 = W[I + 3]
    W[dst] = W[I + 4]
    W[dst + 1] = W[I + 5]
    W[dst + 2] = W[I + 6]
    W[dst + 6] = W[I + 5]
    W[dst + 7] = W[I + 7]
    W[dst + 8] = W[I + 8]
    W[dst + 12] = W[I + 6]
    W[dst + 13] = W[I + 8]
    W[dst + 14] = W[I + 9]
    # upper right [h], lower left [h]^T = -[h], lower right m 1
    W[dst + 3] = 0.0
    W[dst + 4] = -h2
    W[dst + 5] = h1
    W[dst + 9] = h2
    W[dst + 10] = 0.0
    W[dst + 11] = -h0
    W[dst + 15] = -h1
    W[dst + 16] = h0
    W[dst + 17] = 0.0
    for k in range(3):
        for l in range(3):
            W[dst + 6 * (3 + k) + l] = -W[dst + 6 * k + 3 + l]
            W[dst + 6 * (3 + k) + 3 + l] = m if k == l else 0.0
