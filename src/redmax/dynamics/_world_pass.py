"""Per-joint motion and the world-frame forward pass shared by RNEA, ABA, CRBA, M^-1 and the Euler step.

:func:`simple_motion` (fixed, revolute, prismatic: closed forms) and :func:`generic_motion` (every other family,
through :func:`redmax.joints.dispatch.joint_calc`) write a joint's ``E_pj = E_pj0 Q(q)`` as (R, p), its columns of
S and ``Sdot qd`` into a workspace.  They are separate functions, and the kernels branch on the type code
themselves, because a single function containing the generic call path is slower per joint even when it takes
the closed-form branch.

Expressing every motion and force in the world frame (spatial vectors at the world origin, angular
first) makes the propagation operators identities, so composite and articulated inertias are plain
sums (Featherstone 2008, §6.3 and §7.3; the world-frame form Pinocchio uses).

A body inertia about the world origin is stored compactly as 10 numbers
``[m, h0, h1, h2, I00, I01, I02, I11, I12, I22]`` with ``h = m c`` (c the centre of mass) and ``I`` the
rotational inertia about the origin; the 6x6 matrix is ``[[I, [h]], [[h]^T, m 1]]`` and
``M [w; v] = [I w + h x v; m v - h x w]``.
"""

from __future__ import annotations

import numpy as np

from redmax._jit import FAST, njit
from redmax._kernels.dispatch import lean_gate
from redmax._kernels.registers import cross, get3, get6, get9, put3, put6, put9, rot, rot_mul
from redmax.joints.dispatch import joint_calc
from redmax.joints.simple import PRISMATIC, REVOLUTE
from redmax.model.layout import SIMPLE_MAX, offsets


@njit(cache=True, fastmath=FAST)
def simple_motion(Ii, Ff, i, typ, q, W, r, pp, sb, sdq):
    """Closed-form joint motion for fixed, revolute and prismatic joints (``typ <= PRISMATIC``).

    Writes ``R`` -> W[r:r+9] (row-major), ``p`` -> W[pp:pp+3], the S column -> W[sb:sb+6] and
    ``Sdot qd = 0`` -> W[sdq:sdq+6]; ``E_pj = (R, p)`` is the joint in its parent joint's frame.
    Kept separate from :func:`generic_motion` so that this hot path stays small (see module docstring).
    """
    nb, n, o_par, o_typ, o_idx, o_jp, f_R, f_p, f_M, f_A, f_m, f_c, f_I, f_g, f_jp = offsets(Ii)
    R0 = f_R + 9 * i
    p0 = f_p + 3 * i
    for k in range(6):
        W[sdq + k] = 0.0
    if typ == REVOLUTE:
        (W[r], W[r + 1], W[r + 2], W[r + 3], W[r + 4], W[r + 5], W[r + 6], W[r + 7], W[r + 8],
         W[pp], W[pp + 1], W[pp + 2], W[sb], W[sb + 1], W[sb + 2]) = revolute_frame(Ii, Ff, i, q)
        W[sb + 3] = 0.0
        W[sb + 4] = 0.0
        W[sb + 5] = 0.0
        return
    for k in range(9):
        W[r + k] = Ff[R0 + k]
    for k in range(3):
        W[pp + k] = Ff[p0 + k]
    if typ == PRISMATIC:
        jo = f_jp + Ii[o_jp + i]
        a = Ii[o_idx + i]
        ax = Ff[jo]
        ay = Ff[jo + 1]
        az = Ff[jo + 2]
        d = q[a]
        for k in range(3):
            W[pp + k] += (Ff[R0 + 3 * k] * ax + Ff[R0 + 3 * k + 1] * ay + Ff[R0 + 3 * k + 2] * az) * d
        W[sb] = 0.0
        W[sb + 1] = 0.0
        W[sb + 2] = 0.0
        W[sb + 3] = ax
        W[sb + 4] = ay
        W[sb + 5] = az


@njit(cache=True, fastmath=FAST)
def revolute_frame(Ii, Ff, i, q):
    """Revolute joint i in closed form, as scalars: ``R = R0 Q(q)`` (9, row-major), ``p = p0`` (3) and
    the unit axis (3) = the angular part of S (the joint frame).  ``Q`` is Rodrigues' rotation
    ``c 1 + (1 - c) a a^T + s [a]`` (Sueda notes §2.4.1).  Returned as a tuple so that callers keep
    the values in registers (faster than a round trip through a workspace)."""
    nb, n, o_par, o_typ, o_idx, o_jp, f_R, f_p, f_M, f_A, f_m, f_c, f_I, f_g, f_jp = offsets(Ii)
    jo = f_jp + Ii[o_jp + i]
    av = Ff[jo:jo + 3]
    ax = av[0]
    ay = av[1]
    az = av[2]
    qa = q[Ii[o_idx + i]]
    c = np.cos(qa)
    s = np.sin(qa)
    t = 1.0 - c
    Q00 = c + ax * ax * t
    Q01 = ax * ay * t - az * s
    Q02 = ax * az * t + ay * s
    Q10 = ay * ax * t + az * s
    Q11 = c + ay * ay * t
    Q12 = ay * az * t - ax * s
    Q20 = az * ax * t - ay * s
    Q21 = az * ay * t + ax * s
    Q22 = c + az * az * t
    B = Ff[f_R + 9 * i:f_R + 9 * i + 9]
    L00 = B[0] * Q00 + B[1] * Q10 + B[2] * Q20
    L01 = B[0] * Q01 + B[1] * Q11 + B[2] * Q21
    L02 = B[0] * Q02 + B[1] * Q12 + B[2] * Q22
    L10 = B[3] * Q00 + B[4] * Q10 + B[5] * Q20
    L11 = B[3] * Q01 + B[4] * Q11 + B[5] * Q21
    L12 = B[3] * Q02 + B[4] * Q12 + B[5] * Q22
    L20 = B[6] * Q00 + B[7] * Q10 + B[8] * Q20
    L21 = B[6] * Q01 + B[7] * Q11 + B[8] * Q21
    L22 = B[6] * Q02 + B[7] * Q12 + B[8] * Q22
    p0 = Ff[f_p + 3 * i:f_p + 3 * i + 3]
    return L00, L01, L02, L10, L11, L12, L20, L21, L22, p0[0], p0[1], p0[2], ax, ay, az


@njit(cache=True, fastmath=FAST, inline="always")  # a thin layer over joint_calc
def generic_motion(Ii, Ff, i, typ, q, qd, jstate, W, r, pp, sb, sdq):
    """Joint motion of any other family through :func:`joint_calc`; same outputs as
    :func:`simple_motion` plus ``Sdot qd`` (S columns at W[sb + 6k] for the joint's k-th DOF)."""
    nb, n, o_par, o_typ, o_idx, o_jp, f_R, f_p, f_M, f_A, f_m, f_c, f_I, f_g, f_jp = offsets(Ii)
    a = Ii[o_idx + i]
    b = Ii[o_idx + i + 1]
    R0 = f_R + 9 * i
    p0 = f_p + 3 * i
    nj = b - a
    Q = np.zeros((4, 4), dtype=W.dtype)
    S = np.zeros((6, nj), dtype=W.dtype)
    Sd = np.zeros((6, nj), dtype=W.dtype)
    joint_calc(typ, Ff[f_jp + Ii[o_jp + i] : f_jp + Ii[o_jp + i + 1]], q[a:b], qd[a:b], jstate[i], Q, S, Sd)
    for k in range(3):
        for l in range(3):
            W[r + 3 * k + l] = Ff[R0 + 3 * k] * Q[0, l] + Ff[R0 + 3 * k + 1] * Q[1, l] + Ff[R0 + 3 * k + 2] * Q[2, l]
        W[pp + k] = Ff[R0 + 3 * k] * Q[0, 3] + Ff[R0 + 3 * k + 1] * Q[1, 3] + Ff[R0 + 3 * k + 2] * Q[2, 3] + Ff[p0 + k]
    for k in range(6):
        W[sdq + k] = 0.0
    for d in range(nj):
        for k in range(6):
            W[sb + 6 * d + k] = S[k, d]
            W[sdq + k] += Sd[k, d] * qd[a + d]


generic_motion_gated = lean_gate(generic_motion, "generic_motion_gated")  # lean models: not compiled


@njit(cache=True, fastmath=FAST)
def motion_to_child(W, r, pp, src, dst):
    """Twist in the parent frame (W[src:src+6]) -> child frame: ``[R^T w; R^T (v - p x w)]`` into W[dst]."""
    w0 = W[src]
    w1 = W[src + 1]
    w2 = W[src + 2]
    x0 = W[src + 3] - (W[pp + 1] * w2 - W[pp + 2] * w1)
    x1 = W[src + 4] - (W[pp + 2] * w0 - W[pp] * w2)
    x2 = W[src + 5] - (W[pp] * w1 - W[pp + 1] * w0)
    for k in range(3):
        W[dst + k] = W[r + k] * w0 + W[r + 3 + k] * w1 + W[r + 6 + k] * w2
        W[dst + 3 + k] = W[r + k] * x0 + W[r + 3 + k] * x1 + W[r + 6 + k] * x2


@njit(cache=True, fastmath=FAST)
def force_to_parent_add(W, r, pp, src, dst):
    """Wrench in the child frame (W[src]) -> parent frame, added to W[dst]: ``[R n + p x R f; R f]``."""
    n0 = W[src]
    n1 = W[src + 1]
    n2 = W[src + 2]
    f0 = W[src + 3]
    f1 = W[src + 4]
    f2 = W[src + 5]
    Rf0 = W[r] * f0 + W[r + 1] * f1 + W[r + 2] * f2
    Rf1 = W[r + 3] * f0 + W[r + 4] * f1 + W[r + 5] * f2
    Rf2 = W[r + 6] * f0 + W[r + 7] * f1 + W[r + 8] * f2
    W[dst] += W[r] * n0 + W[r + 1] * n1 + W[r + 2] * n2 + W[pp + 1] * Rf2 - W[pp + 2] * Rf1
    W[dst + 1] += W[r + 3] * n0 + W[r + 4] * n1 + W[r + 5] * n2 + W[pp + 2] * Rf0 - W[pp] * Rf2
    W[dst + 2] += W[r + 6] * n0 + W[r + 7] * n1 + W[r + 8] * n2 + W[pp] * Rf1 - W[pp + 1] * Rf0
    W[dst + 3] += Rf0
    W[dst + 4] += Rf1
    W[dst + 5] += Rf2


@njit(cache=True, fastmath=FAST)
def add_cross_motion(W, v, u, dst):
    """W[dst] += ad(W[v]) W[u] (spatial cross product of twists)."""
    V0, V1, V2, V3, V4, V5 = get6(W, v)
    s0, s1, s2, s3, s4, s5 = get6(W, u)
    W[dst] += V1 * s2 - V2 * s1
    W[dst + 1] += V2 * s0 - V0 * s2
    W[dst + 2] += V0 * s1 - V1 * s0
    W[dst + 3] += V4 * s2 - V5 * s1 + V1 * s5 - V2 * s4
    W[dst + 4] += V5 * s0 - V3 * s2 + V2 * s3 - V0 * s5
    W[dst + 5] += V3 * s1 - V4 * s0 + V0 * s4 - V1 * s3


@njit(cache=True, fastmath=FAST)
def sub_cross_force(W, v, f, dst):
    """W[dst] -= ad(W[v])^T W[f] (the velocity-product wrench ``-ad(V)^T h``)."""
    V0, V1, V2, V3, V4, V5 = get6(W, v)
    n0, n1, n2, g0, g1, g2 = get6(W, f)
    W[dst] += V1 * n2 - V2 * n1 + V4 * g2 - V5 * g1
    W[dst + 1] += V2 * n0 - V0 * n2 + V5 * g0 - V3 * g2
    W[dst + 2] += V0 * n1 - V1 * n0 + V3 * g1 - V4 * g0
    W[dst + 3] += V1 * g2 - V2 * g1
    W[dst + 4] += V2 * g0 - V0 * g2
    W[dst + 5] += V0 * g1 - V1 * g0


@njit(cache=True)
def small_inverse(W, src, dst, n):
    """Inverse of the symmetric positive definite n x n matrix W[src] (row-major) into W[dst] (Gauss-Jordan).
    Raises ValueError("singular joint inertia") for a pivot below 1e-12 of the largest diagonal entry (the
    joint's DOFs are dependent: the inverse would be meaningless)."""
    if n == 1:
        if not abs(W[src].real) > 0.0:
            raise ValueError("singular joint inertia")
        W[dst] = 1.0 / W[src]
        return
    A = np.empty((n, 2 * n), dtype=W.dtype)
    scale = 0.0
    for r in range(n):
        scale = max(scale, abs(W[src + n * r + r].real))
        for c in range(n):
            A[r, c] = W[src + n * r + c]
            A[r, n + c] = 1.0 if r == c else 0.0
    for c in range(n):
        piv = c
        for r in range(c + 1, n):
            if abs(A[r, c].real) > abs(A[piv, c].real):
                piv = r
        if piv != c:
            for k in range(2 * n):
                tmp = A[c, k]
                A[c, k] = A[piv, k]
                A[piv, k] = tmp
        d = A[c, c]
        if not abs(d.real) > 1e-12 * scale:
            raise ValueError("singular joint inertia")
        for k in range(2 * n):
            A[c, k] = A[c, k] / d
        for r in range(n):
            if r != c:
                f = A[r, c]
                for k in range(2 * n):
                    A[r, k] -= f * A[c, k]
    for r in range(n):
        for c in range(n):
            W[dst + n * r + c] = A[r, n + c]



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
                generic_motion_gated(Ii, Ff, i, typ, q, qd, jstate, W, lr, lp, ls, lsd)
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
