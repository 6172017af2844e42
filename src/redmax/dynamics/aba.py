"""Recursive hybrid dynamics of Kim & Pollard (2011), RedMax supplemental Algorithm 6, on the packed model.

Joints marked ``prescribed`` take their acceleration as input and return the torque that produces
it; the others take their torque and return their acceleration.  With no prescribed joint this is the
articulated-body algorithm (forward dynamics).

Written in the world frame (spatial vectors at the world origin, see ``_world``), where the
propagation operators are identities: the articulated inertias and biases of the children are simply
added to the parent's (no congruence transforms).  With ``c_i = (v_i x S_i + Ad Sdot_i) qd_i`` the
velocity-product acceleration (the notes' eta), ``Ia`` the articulated inertia and ``pA`` its bias:

backward  ``Pi = Ia, beta = pA + Ia (c + S qdd)`` (prescribed) or, with ``U = Ia S``,
``D = S^T U``, ``Pi = Ia - U D^-1 U^T``, ``beta = pA + Ia c + U D^-1 (tau - U^T c - S^T pA)``;
``Ia_p += Pi``, ``pA_p += beta``;
forward   ``qdd = D^-1 (tau - U^T (a_p + c) - S^T pA)``, ``a_i = a_p + S qdd + c`` (or, prescribed,
``tau = S^T (Ia a_i + pA)``), from the base acceleration ``a_0 = [0; -g]``.
"""

from __future__ import annotations

import numpy as np

from redmax._jit import FAST, njit
from redmax._kernels.registers import get6, put6
from redmax._kernels.sym6 import sym_add, sym_add_articulated, sym_from_compact, sym_matvec
from redmax.dynamics._world_pass import force_to_parent_add, inertia_times, small_inverse, tangent_columns, world_pass
from redmax.dynamics.minv import minv_from_articulated
from redmax.dynamics.rnea import check_inputs, check_result
from redmax.model.layout import NO_FEXT, armature_offset, initial_jstate, offsets


def hybrid_work_size(nb: int, n: int) -> int:
    """Length of the workspace :func:`hybrid_into` needs."""
    return 124 * nb + 12 * n + 110


@njit(cache=True, fastmath=FAST)
def hybrid_kernel(Ii, Ff, q, qd, tau_in, qdd_in, prescribed, jstate, f_body, gscale):
    """Hybrid dynamics: returns (qdd (n,), tau (n,)).  ``prescribed`` (nb,) bool; ``f_body`` (nb, 6) or (0, 6)."""
    check_inputs(Ii, q, qd, tau_in, jstate, f_body)
    nb = Ii[0]
    n = Ii[1]
    if qdd_in.shape[0] != n or prescribed.shape[0] != nb:
        raise ValueError("size")
    W = np.empty(124 * nb + 12 * n + 110, dtype=q.dtype)
    qdd = np.empty(n, dtype=q.dtype)
    tau = np.empty(n, dtype=q.dtype)
    for k in range(n):
        qdd[k] = qdd_in[k]
        tau[k] = tau_in[k]
    hybrid_into(Ii, Ff, q, qd, prescribed, jstate, f_body, gscale, W, qdd, tau, NO_TANGENT)
    check_result(qdd)
    check_result(tau)
    return qdd, tau


@njit(cache=True, fastmath=FAST)
def hybrid_into(Ii, Ff, q, qd, prescribed, jstate, f_body, gscale, W, qdd, tau, tmode):
    """:func:`hybrid_kernel` on a caller's workspace ``W`` (>= :func:`hybrid_work_size`), in place (``prescribed``
    (nb,), or empty for none): ``tau`` holds the torques of free joints and ``qdd`` the accelerations of
    prescribed ones on entry, both complete on exit.  Inputs already checked.  The armature enters
    ``D = S^T Ia S + diag(armature)`` of free joints and the torque ``armature * qdd`` of prescribed ones (a
    joint-space inertia local to the joint).  ``tmode`` (nb,) from
    :func:`redmax.dynamics.tangent.body_tangent_modes` runs it in the body-twist rates of the marked joints
    (``qd``, ``tau``, ``qdd`` all in those rates), or empty (:data:`NO_TANGENT`) in the model's rates."""
    nb, n, o_par, o_typ, o_idx, o_jp, f_R, f_p, f_M, f_A, f_m, f_c, f_I, f_g, f_jp = offsets(Ii)
    fa = armature_offset(Ii)
    has_pres = prescribed.shape[0] != 0  # an empty mask: no joint prescribed
    wR = 0
    wp = 9 * nb
    wI = 12 * nb  # compact inertias (10)
    wV = 22 * nb  # velocities
    wC = 28 * nb  # c (velocity-product accelerations)
    wB = 34 * nb  # pA
    wA = 40 * nb  # accelerations
    wM = 46 * nb  # Ia (36)
    wP = 82 * nb  # D^-1 (36)
    wSd = 118 * nb  # Ad Sdot qd (6)
    wS = 124 * nb  # S world (6 per dof)
    wU = wS + 6 * n  # U (6 per dof)
    wT = wU + 6 * n  # scratch
    world_pass(Ii, Ff, q, qd, jstate, W, wR, wp, wS, wI, wSd, wT)
    if tmode.shape[0] != 0:
        tangent_columns(Ii, W, wR, wp, wS, wSd, tmode)
    W[wT] = 0.0
    zero = W[wT]  # 0 in the workspace's scalar type (real or complex)
    for i in range(nb):
        a = Ii[o_idx + i]
        b = Ii[o_idx + i + 1]
        par = Ii[o_par + i]
        h0 = h1 = h2 = h3 = h4 = h5 = zero  # S qd
        for d in range(a, b):
            s0, s1, s2, s3, s4, s5 = get6(W, wS + 6 * d)
            x = qd[d]
            h0 += s0 * x
            h1 += s1 * x
            h2 += s2 * x
            h3 += s3 * x
            h4 += s4 * x
            h5 += s5 * x
        if par >= 0:
            p0, p1, p2, p3, p4, p5 = get6(W, wV + 6 * par)
            v0, v1, v2, v3, v4, v5 = p0 + h0, p1 + h1, p2 + h2, p3 + h3, p4 + h4, p5 + h5
        else:
            v0, v1, v2, v3, v4, v5 = h0, h1, h2, h3, h4, h5
        put6(W, wV + 6 * i, v0, v1, v2, v3, v4, v5)
        e0, e1, e2, e3, e4, e5 = get6(W, wSd + 6 * i)  # c = Ad Sdot qd + v x (S qd)
        put6(W, wC + 6 * i, e0 + v1 * h2 - v2 * h1, e1 + v2 * h0 - v0 * h2, e2 + v0 * h1 - v1 * h0,
             e3 + v4 * h2 - v5 * h1 + v1 * h5 - v2 * h4, e4 + v5 * h0 - v3 * h2 + v2 * h3 - v0 * h5,
             e5 + v3 * h1 - v4 * h0 + v0 * h4 - v1 * h3)
        # Ia = I, pA = -ad(v)^T I v - f_ext = [w x k + u x l; w x l] - f_ext with I v = [k; l]
        I = wI + 10 * i
        sym_from_compact(W, I, wM + 21 * i)
        k0, k1, k2, l0, l1, l2 = inertia_times(W, I, v0, v1, v2, v3, v4, v5)
        put6(W, wB + 6 * i, v1 * k2 - v2 * k1 + v4 * l2 - v5 * l1, v2 * k0 - v0 * k2 + v5 * l0 - v3 * l2,
             v0 * k1 - v1 * k0 + v3 * l1 - v4 * l0, v1 * l2 - v2 * l1, v2 * l0 - v0 * l2, v0 * l1 - v1 * l0)
        if f_body.shape[0] != 0:
            bb = wB + 6 * i
            A = f_A + 36 * i
            fj = wT + 6
            for k in range(6):
                s1 = 0.0
                for l in range(6):
                    s1 += Ff[A + 6 * l + k] * f_body[i, l]
                W[fj + 12 + k] = -s1  # joint-frame wrench, negated
            for k in range(6):
                W[fj + k] = 0.0
            force_to_parent_add(W, wR + 9 * i, wp + 3 * i, fj + 12, fj)  # to world
            for k in range(6):
                W[bb + k] += W[fj + k]
    for i in range(nb - 1, -1, -1):
        a = Ii[o_idx + i]
        b = Ii[o_idx + i + 1]
        nj = b - a
        ia = wM + 21 * i
        bb = wB + 6 * i
        c = wC + 6 * i
        beta = wT  # 6
        t6 = wT + 100  # 6 scratch
        par = Ii[o_par + i]
        if nj == 1 and not (has_pres and prescribed[i]):
            articulated_one(W, ia, wS + 6 * a, c, bb, wU + 6 * a, wP + 36 * i, tau[a] + 0.0, Ff[fa + a],
                            wM + 21 * par if par >= 0 else -1, wB + 6 * par if par >= 0 else -1)
            continue
        if nj == 0 or (has_pres and prescribed[i]):
            for k in range(6):  # beta = pA + Ia (c + S qdd)
                W[t6 + k] = W[c + k]
            for d in range(a, b):
                for k in range(6):
                    W[t6 + k] += W[wS + 6 * d + k] * qdd[d]
            sym_matvec(W, ia, t6, beta)
            for k in range(6):
                W[beta + k] += W[bb + k]
            if par >= 0:
                sym_add(W, wM + 21 * par, ia)
        else:
            sym_matvec(W, ia, c, beta)
            for k in range(6):
                W[beta + k] += W[bb + k]  # pA + Ia c
            for d in range(a, b):  # U = Ia S
                sym_matvec(W, ia, wS + 6 * d, wU + 6 * d)
            Dm = wT + 6
            for r1 in range(nj):
                for c1 in range(nj):
                    s1 = 0.0
                    for k in range(6):
                        s1 += W[wS + 6 * (a + r1) + k] * W[wU + 6 * (a + c1) + k]
                    W[Dm + nj * r1 + c1] = s1
                W[Dm + nj * r1 + r1] += Ff[fa + a + r1]
            di = wP + 36 * i
            small_inverse(W, Dm, di, nj)
            u = wT + 42
            for r1 in range(nj):  # u = tau - U^T c - S^T pA
                s1 = tau[a + r1]
                for k in range(6):
                    s1 -= W[wU + 6 * (a + r1) + k] * W[c + k] + W[wS + 6 * (a + r1) + k] * W[bb + k]
                W[u + r1] = s1
            for r1 in range(nj):
                pu = 0.0
                for c1 in range(nj):
                    pu += W[di + nj * r1 + c1] * W[u + c1]
                for k in range(6):
                    W[beta + k] += W[wU + 6 * (a + r1) + k] * pu
            if par >= 0:
                sym_add_articulated(W, wM + 21 * par, ia, wU + 6 * a, di, nj)
        if par >= 0:
            for k in range(6):
                W[wB + 6 * par + k] += W[beta + k]
    for i in range(nb):
        a = Ii[o_idx + i]
        b = Ii[o_idx + i + 1]
        nj = b - a
        acc = wA + 6 * i
        c = wC + 6 * i
        par = Ii[o_par + i]
        if par >= 0:
            for k in range(6):
                W[acc + k] = W[wA + 6 * par + k]
        else:
            for k in range(3):
                W[acc + k] = 0.0
                W[acc + 3 + k] = -gscale * Ff[f_g + k]
        ia = wM + 21 * i
        bb = wB + 6 * i
        if nj == 1 and not (has_pres and prescribed[i]):  # qdd = D^-1 (u - U^T a_p), u kept by articulated_one
            g0, g1, g2, g3, g4, g5 = get6(W, acc)
            u0, u1, u2, u3, u4, u5 = get6(W, wU + 6 * a)
            di = wP + 36 * i
            x = W[di] * (W[di + 1] - (u0 * g0 + u1 * g1 + u2 * g2 + u3 * g3 + u4 * g4 + u5 * g5))
            qdd[a] = x
            s0, s1, s2, s3, s4, s5 = get6(W, wS + 6 * a)
            e0, e1, e2, e3, e4, e5 = get6(W, c)
            put6(W, acc, g0 + e0 + s0 * x, g1 + e1 + s1 * x, g2 + e2 + s2 * x, g3 + e3 + s3 * x, g4 + e4 + s4 * x,
                 g5 + e5 + s5 * x)
            continue
        if nj == 0 or (has_pres and prescribed[i]):
            for k in range(6):
                W[acc + k] += W[c + k]
            for d in range(a, b):
                for k in range(6):
                    W[acc + k] += W[wS + 6 * d + k] * qdd[d]
            if nj > 0:
                t6 = wT + 100
                sym_matvec(W, ia, acc, t6)  # tau = S^T (Ia a + pA)
                for d in range(a, b):
                    s1 = Ff[fa + d] * qdd[d]
                    for k in range(6):
                        s1 += W[wS + 6 * d + k] * (W[t6 + k] + W[bb + k])
                    tau[d] = s1
        else:
            di = wP + 36 * i
            u = wT + 42
            for r1 in range(nj):  # u = tau - U^T (a_p + c) - S^T pA
                s1 = tau[a + r1]
                for k in range(6):
                    s1 -= W[wU + 6 * (a + r1) + k] * (W[acc + k] + W[c + k]) + W[wS + 6 * (a + r1) + k] * W[bb + k]
                W[u + r1] = s1
            for r1 in range(nj):
                s1 = 0.0
                for c1 in range(nj):
                    s1 += W[di + nj * r1 + c1] * W[u + c1]
                qdd[a + r1] = s1
            for k in range(6):
                W[acc + k] += W[c + k]
            for d in range(a, b):
                for k in range(6):
                    W[acc + k] += W[wS + 6 * d + k] * qdd[d]


@njit(cache=True, fastmath=FAST)
def articulated_one(W, ia, sc, c, bb, uo, do, tau, arm, pia, pbb):
    """Backward step of a free one-DOF joint in registers: ``U = Ia S`` (6, to W[uo]), ``D = S^T U + arm``,
    ``W[do] = D^-1``, ``W[do + 1] = u = tau - U^T c - S^T pA``; adds ``Ia - U D^-1 U^T`` to the parent's packed
    inertia W[pia] and ``pA + Ia c + U D^-1 u`` to its bias W[pbb] (``pia < 0``: no parent).  Raises
    ValueError("singular joint inertia") for D = 0 (the joint moves no mass)."""
    p = W[ia:ia + 21]
    s0, s1, s2, s3, s4, s5 = get6(W, sc)
    c0, c1, c2, c3, c4, c5 = get6(W, c)
    P0, P1, P2, P3, P4, P5 = p[0], p[1], p[2], p[3], p[4], p[5]
    P6, P7, P8, P9, P10 = p[6], p[7], p[8], p[9], p[10]
    P11, P12, P13, P14 = p[11], p[12], p[13], p[14]
    P15, P16, P17, P18, P19, P20 = p[15], p[16], p[17], p[18], p[19], p[20]
    U0 = P0 * s0 + P1 * s1 + P2 * s2 + P3 * s3 + P4 * s4 + P5 * s5
    U1 = P1 * s0 + P6 * s1 + P7 * s2 + P8 * s3 + P9 * s4 + P10 * s5
    U2 = P2 * s0 + P7 * s1 + P11 * s2 + P12 * s3 + P13 * s4 + P14 * s5
    U3 = P3 * s0 + P8 * s1 + P12 * s2 + P15 * s3 + P16 * s4 + P17 * s5
    U4 = P4 * s0 + P9 * s1 + P13 * s2 + P16 * s3 + P18 * s4 + P19 * s5
    U5 = P5 * s0 + P10 * s1 + P14 * s2 + P17 * s3 + P19 * s4 + P20 * s5
    put6(W, uo, U0, U1, U2, U3, U4, U5)
    D = s0 * U0 + s1 * U1 + s2 * U2 + s3 * U3 + s4 * U4 + s5 * U5 + arm
    if not abs(D.real) > 0.0:
        raise ValueError("singular joint inertia")
    Di = 1.0 / D
    b0, b1, b2, b3, b4, b5 = get6(W, bb)
    u = tau - (U0 * c0 + U1 * c1 + U2 * c2 + U3 * c3 + U4 * c4 + U5 * c5) - (
        s0 * b0 + s1 * b1 + s2 * b2 + s3 * b3 + s4 * b4 + s5 * b5)
    W[do] = Di
    W[do + 1] = u
    if pia < 0:
        return
    w = Di * u
    o = W[pbb:pbb + 6]  # pA_p += pA + Ia c + U D^-1 u
    o[0] += b0 + P0 * c0 + P1 * c1 + P2 * c2 + P3 * c3 + P4 * c4 + P5 * c5 + U0 * w
    o[1] += b1 + P1 * c0 + P6 * c1 + P7 * c2 + P8 * c3 + P9 * c4 + P10 * c5 + U1 * w
    o[2] += b2 + P2 * c0 + P7 * c1 + P11 * c2 + P12 * c3 + P13 * c4 + P14 * c5 + U2 * w
    o[3] += b3 + P3 * c0 + P8 * c1 + P12 * c2 + P15 * c3 + P16 * c4 + P17 * c5 + U3 * w
    o[4] += b4 + P4 * c0 + P9 * c1 + P13 * c2 + P16 * c3 + P18 * c4 + P19 * c5 + U4 * w
    o[5] += b5 + P5 * c0 + P10 * c1 + P14 * c2 + P17 * c3 + P19 * c4 + P20 * c5 + U5 * w
    V0, V1, V2, V3, V4, V5 = Di * U0, Di * U1, Di * U2, Di * U3, Di * U4, Di * U5
    q = W[pia:pia + 21]  # Ia_p += Ia - U D^-1 U^T
    q[0] += P0 - V0 * U0
    q[1] += P1 - V0 * U1
    q[2] += P2 - V0 * U2
    q[3] += P3 - V0 * U3
    q[4] += P4 - V0 * U4
    q[5] += P5 - V0 * U5
    q[6] += P6 - V1 * U1
    q[7] += P7 - V1 * U2
    q[8] += P8 - V1 * U3
    q[9] += P9 - V1 * U4
    q[10] += P10 - V1 * U5
    q[11] += P11 - V2 * U2
    q[12] += P12 - V2 * U3
    q[13] += P13 - V2 * U4
    q[14] += P14 - V2 * U5
    q[15] += P15 - V3 * U3
    q[16] += P16 - V3 * U4
    q[17] += P17 - V3 * U5
    q[18] += P18 - V4 * U4
    q[19] += P19 - V4 * U5
    q[20] += P20 - V5 * U5


def aba_work_size(nb: int, n: int) -> int:
    """Length of the workspace :func:`aba_into` needs."""
    return 124 * nb + 13 * n + 110


@njit(cache=True, fastmath=FAST, inline="always")  # a thin wrapper: no compile level of its own
def aba_kernel(Ii, Ff, q, qd, tau, jstate, f_body, gscale):
    """Forward dynamics: accelerations only (no prescribed joints)."""
    check_inputs(Ii, q, qd, tau, jstate, f_body)
    W = np.empty(124 * Ii[0] + 13 * Ii[1] + 110, dtype=q.dtype)
    qdd = np.empty(Ii[1], dtype=q.dtype)
    aba_into(Ii, Ff, q, qd, tau, jstate, f_body, gscale, W, qdd, NO_TANGENT)
    check_result(qdd)
    return qdd


@njit(cache=True, fastmath=FAST, inline="always")  # a thin wrapper: no compile level of its own
def aba_into(Ii, Ff, q, qd, tau, jstate, f_body, gscale, W, qdd, tmode):
    """Forward dynamics into ``qdd`` (n,) on a workspace ``W`` (>= :func:`aba_work_size`; the torques are copied
    into its tail); inputs already checked; ``tmode`` as :func:`hybrid_into`."""
    nb = Ii[0]
    n = Ii[1]
    base = 124 * nb + 12 * n + 110
    t = W[base:base + n]
    for k in range(n):
        t[k] = tau[k]
        qdd[k] = 0.0
    hybrid_into(Ii, Ff, q, qd, NONE_PRESCRIBED, jstate, f_body, gscale, W, qdd, t, tmode)


@njit(cache=True, fastmath=FAST)
def aba_minv_kernel(Ii, Ff, q, qd, tau, jstate, f_body, gscale, tmode):
    """Forward dynamics and M^-1 in one articulated-body pass: ``(qdd (n,), Minv (n, n))``.  The backward pass of
    ABA leaves S, U = Ia S and D^-1 of every joint in its workspace (layout of :func:`hybrid_into`), which is all
    the right-hand-side loops of M^-1 (notes Alg. 10, :func:`redmax.dynamics.minv.minv_from_articulated`)
    need, so the articulated inertias are formed once, not twice as in ``aba_kernel`` + ``minv_kernel``.  With a
    non-empty ``tmode`` (:func:`hybrid_into`) the rates, forces and M^-1 are those of the body twists."""
    check_inputs(Ii, q, qd, tau, jstate, f_body)
    nb = Ii[0]
    n = Ii[1]
    W = np.empty(124 * nb + 13 * n + 110, dtype=q.dtype)
    qdd = np.empty(n, dtype=q.dtype)
    aba_into(Ii, Ff, q, qd, tau, jstate, f_body, gscale, W, qdd, tmode)
    check_result(qdd)
    wS = 124 * nb  # S world, U, D^-1 and scratch where hybrid_into keeps them
    wU = wS + 6 * n
    return qdd, minv_from_articulated(Ii, W, wS, wU, 82 * nb, wU + 6 * n)


NONE_PRESCRIBED = np.zeros(0, dtype=np.bool_)  # "no joint prescribed" for hybrid_into (no allocation)
NO_TANGENT = np.zeros(0, dtype=np.int64)  # "the model's own rates" for hybrid_into's tmode


@njit(cache=True, fastmath=FAST, inline="always")  # a thin wrapper: no compile level of its own
def aba_out(Ii, Ff, q, qd, tau, qdd):
    """:func:`aba_plain` into a caller's ``qdd`` (n,) (``out=``: no result allocation, nothing returned)."""
    js = initial_jstate(Ii)
    check_inputs(Ii, q, qd, tau, js, NO_FEXT)
    if qdd.shape[0] != Ii[1]:
        raise ValueError("size")
    W = np.empty(124 * Ii[0] + 13 * Ii[1] + 110)
    aba_into(Ii, Ff, q, qd, tau, js, NO_FEXT, 1.0, W, qdd, NO_TANGENT)
    check_result(qdd)


@njit(cache=True, fastmath=FAST)
def aba_plain(Ii, Ff, q, qd, tau):
    """:func:`aba_kernel` with gravity, no external wrenches and the initial charts (the fast path)."""
    return aba_kernel(Ii, Ff, q, qd, tau, initial_jstate(Ii), NO_FEXT, 1.0)
