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

from numba import njit

from redmax.dynamics._packed import FAST, SIMPLE_MAX, generic_motion, offsets, revolute_frame, simple_motion
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
        else:
            if typ <= SIMPLE_MAX:
                simple_motion(Ii, Ff, i, typ, q, W, lr, lp, ls, lsd)
            else:
                generic_motion(Ii, Ff, i, typ, q, qd, jstate, W, lr, lp, ls, lsd)
            Lv = W[lr:lr + 12]
            L00 = Lv[0]
            L01 = Lv[1]
            L02 = Lv[2]
            L10 = Lv[3]
            L11 = Lv[4]
            L12 = Lv[5]
            L20 = Lv[6]
            L21 = Lv[7]
            L22 = Lv[8]
            l0 = Lv[9]
            l1 = Lv[10]
            l2 = Lv[11]
        par = Ii[o_par + i]
        if par >= 0:
            Av = W[wR + 9 * par:wR + 9 * par + 9]
            A00 = Av[0]
            A01 = Av[1]
            A02 = Av[2]
            A10 = Av[3]
            A11 = Av[4]
            A12 = Av[5]
            A20 = Av[6]
            A21 = Av[7]
            A22 = Av[8]
            Pv = W[wp + 3 * par:wp + 3 * par + 3]
            R00 = A00 * L00 + A01 * L10 + A02 * L20
            R01 = A00 * L01 + A01 * L11 + A02 * L21
            R02 = A00 * L02 + A01 * L12 + A02 * L22
            R10 = A10 * L00 + A11 * L10 + A12 * L20
            R11 = A10 * L01 + A11 * L11 + A12 * L21
            R12 = A10 * L02 + A11 * L12 + A12 * L22
            R20 = A20 * L00 + A21 * L10 + A22 * L20
            R21 = A20 * L01 + A21 * L11 + A22 * L21
            R22 = A20 * L02 + A21 * L12 + A22 * L22
            P0 = A00 * l0 + A01 * l1 + A02 * l2 + Pv[0]
            P1 = A10 * l0 + A11 * l1 + A12 * l2 + Pv[1]
            P2 = A20 * l0 + A21 * l1 + A22 * l2 + Pv[2]
        else:
            R00, R01, R02, R10, R11, R12, R20, R21, R22 = L00, L01, L02, L10, L11, L12, L20, L21, L22
            P0, P1, P2 = l0, l1, l2
        r = wR + 9 * i
        Rv = W[r:r + 9]
        Rv[0] = R00
        Rv[1] = R01
        Rv[2] = R02
        Rv[3] = R10
        Rv[4] = R11
        Rv[5] = R12
        Rv[6] = R20
        Rv[7] = R21
        Rv[8] = R22
        Pv = W[wp + 3 * i:wp + 3 * i + 3]
        Pv[0] = P0
        Pv[1] = P1
        Pv[2] = P2
        # S in world: [R s_w; p x (R s_w) + R s_v]
        if typ == REVOLUTE:
            Sv = W[wSw + 6 * a:wSw + 6 * a + 6]
            w0 = R00 * ax + R01 * ay + R02 * az
            w1 = R10 * ax + R11 * ay + R12 * az
            w2 = R20 * ax + R21 * ay + R22 * az
            Sv[0] = w0
            Sv[1] = w1
            Sv[2] = w2
            Sv[3] = P1 * w2 - P2 * w1
            Sv[4] = P2 * w0 - P0 * w2
            Sv[5] = P0 * w1 - P1 * w0
        else:
            for d in range(a, b):
                x = W[ls + 6 * (d - a):ls + 6 * (d - a) + 6]
                Sv = W[wSw + 6 * d:wSw + 6 * d + 6]
                x0 = x[0]
                x1 = x[1]
                x2 = x[2]
                y0 = x[3]
                y1 = x[4]
                y2 = x[5]
                w0 = R00 * x0 + R01 * x1 + R02 * x2
                w1 = R10 * x0 + R11 * x1 + R12 * x2
                w2 = R20 * x0 + R21 * x1 + R22 * x2
                Sv[0] = w0
                Sv[1] = w1
                Sv[2] = w2
                Sv[3] = R00 * y0 + R01 * y1 + R02 * y2 + P1 * w2 - P2 * w1
                Sv[4] = R10 * y0 + R11 * y1 + R12 * y2 + P2 * w0 - P0 * w2
                Sv[5] = R20 * y0 + R21 * y1 + R22 * y2 + P0 * w1 - P1 * w0
        if wSd >= 0:
            if typ <= SIMPLE_MAX:
                for k in range(6):
                    W[wSd + 6 * i + k] = 0.0
            else:
                to_world(W, r, P0, P1, P2, lsd, wSd + 6 * i)
        # compact inertia about the world origin: c_w = R c + p, I = R Ic R^T + m (|c|^2 1 - c c^T)
        m = Ff[f_m + i]
        cv = Ff[f_c + 3 * i:f_c + 3 * i + 3]
        k0 = cv[0]
        k1 = cv[1]
        k2 = cv[2]
        c0 = R00 * k0 + R01 * k1 + R02 * k2 + P0
        c1 = R10 * k0 + R11 * k1 + R12 * k2 + P1
        c2 = R20 * k0 + R21 * k1 + R22 * k2 + P2
        Jv = Ff[f_I + 9 * i:f_I + 9 * i + 9]
        J00 = Jv[0]
        J01 = Jv[1]
        J02 = Jv[2]
        J11 = Jv[4]
        J12 = Jv[5]
        J22 = Jv[8]
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


@njit(cache=True, fastmath=FAST)
def inertia_apply(W, I, src, dst):
    """W[dst] = M W[src] for the compact inertia W[I:I+10]: ``[I w + h x v; m v - h x w]``."""
    m = W[I]
    h0 = W[I + 1]
    h1 = W[I + 2]
    h2 = W[I + 3]
    w0 = W[src]
    w1 = W[src + 1]
    w2 = W[src + 2]
    v0 = W[src + 3]
    v1 = W[src + 4]
    v2 = W[src + 5]
    W[dst] = W[I + 4] * w0 + W[I + 5] * w1 + W[I + 6] * w2 + h1 * v2 - h2 * v1
    W[dst + 1] = W[I + 5] * w0 + W[I + 7] * w1 + W[I + 8] * w2 + h2 * v0 - h0 * v2
    W[dst + 2] = W[I + 6] * w0 + W[I + 8] * w1 + W[I + 9] * w2 + h0 * v1 - h1 * v0
    W[dst + 3] = m * v0 - (h1 * w2 - h2 * w1)
    W[dst + 4] = m * v1 - (h2 * w0 - h0 * w2)
    W[dst + 5] = m * v2 - (h0 * w1 - h1 * w0)


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
