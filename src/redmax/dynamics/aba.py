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

from redmax._jit import njit
from redmax.dynamics._packed import (
    FAST,
    NO_FEXT,
    add_cross_motion,
    armature_offset,
    force_to_parent_add,
    initial_jstate,
    offsets,
    small_inverse,
    sub_cross_force,
)
from redmax.dynamics._sym import sym_add, sym_add_articulated, sym_from_compact, sym_matvec
from redmax.dynamics._world import inertia_apply, world_pass
from redmax.dynamics.rnea import check_inputs, check_result


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
    hybrid_into(Ii, Ff, q, qd, prescribed, jstate, f_body, gscale, W, qdd, tau)
    check_result(qdd)
    check_result(tau)
    return qdd, tau


@njit(cache=True, fastmath=FAST)
def hybrid_into(Ii, Ff, q, qd, prescribed, jstate, f_body, gscale, W, qdd, tau):
    """:func:`hybrid_kernel` on a caller's workspace ``W`` (>= :func:`hybrid_work_size`), in place (``prescribed``
    (nb,), or empty for none): ``tau`` holds the torques of free joints and ``qdd`` the accelerations of
    prescribed ones on entry, both complete on exit.  Inputs already checked.  The armature enters
    ``D = S^T Ia S + diag(armature)`` of free joints and the torque ``armature * qdd`` of prescribed ones (a
    joint-space inertia local to the joint)."""
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
    h = wT  # S qd scratch
    for i in range(nb):
        a = Ii[o_idx + i]
        b = Ii[o_idx + i + 1]
        v = wV + 6 * i
        c = wC + 6 * i
        par = Ii[o_par + i]
        for k in range(6):
            W[h + k] = 0.0
        for d in range(a, b):
            for k in range(6):
                W[h + k] += W[wS + 6 * d + k] * qd[d]
        for k in range(6):
            W[v + k] = W[h + k] + (W[wV + 6 * par + k] if par >= 0 else 0.0)
            W[c + k] = W[wSd + 6 * i + k]
        add_cross_motion(W, v, h, c)  # c = v x (S qd) + Ad Sdot qd
        # Ia = I, pA = v x* I v - f_ext
        I = wI + 10 * i
        sym_from_compact(W, I, wM + 21 * i)
        bb = wB + 6 * i
        inertia_apply(W, I, v, h)
        for k in range(6):
            W[bb + k] = 0.0
        sub_cross_force(W, v, h, bb)
        if f_body.shape[0] != 0:
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


def aba_work_size(nb: int, n: int) -> int:
    """Length of the workspace :func:`aba_into` needs."""
    return 124 * nb + 13 * n + 110


@njit(cache=True, fastmath=FAST)
def aba_kernel(Ii, Ff, q, qd, tau, jstate, f_body, gscale):
    """Forward dynamics: accelerations only (no prescribed joints)."""
    check_inputs(Ii, q, qd, tau, jstate, f_body)
    W = np.empty(124 * Ii[0] + 13 * Ii[1] + 110, dtype=q.dtype)
    qdd = np.empty(Ii[1], dtype=q.dtype)
    aba_into(Ii, Ff, q, qd, tau, jstate, f_body, gscale, W, qdd)
    check_result(qdd)
    return qdd


@njit(cache=True, fastmath=FAST)
def aba_into(Ii, Ff, q, qd, tau, jstate, f_body, gscale, W, qdd):
    """Forward dynamics into ``qdd`` (n,) on a workspace ``W`` (>= :func:`aba_work_size`; the torques are copied
    into its tail); inputs already checked."""
    nb = Ii[0]
    n = Ii[1]
    base = 124 * nb + 12 * n + 110
    t = W[base:base + n]
    for k in range(n):
        t[k] = tau[k]
        qdd[k] = 0.0
    hybrid_into(Ii, Ff, q, qd, NONE_PRESCRIBED, jstate, f_body, gscale, W, qdd, t)


NONE_PRESCRIBED = np.zeros(0, dtype=np.bool_)  # "no joint prescribed" for hybrid_into (no allocation)


@njit(cache=True, fastmath=FAST)
def aba_out(Ii, Ff, q, qd, tau, qdd):
    """:func:`aba_plain` into a caller's ``qdd`` (n,) (``out=``: no result allocation, nothing returned)."""
    js = initial_jstate(Ii)
    check_inputs(Ii, q, qd, tau, js, NO_FEXT)
    if qdd.shape[0] != Ii[1]:
        raise ValueError("size")
    W = np.empty(124 * Ii[0] + 13 * Ii[1] + 110)
    aba_into(Ii, Ff, q, qd, tau, js, NO_FEXT, 1.0, W, qdd)
    check_result(qdd)


@njit(cache=True, fastmath=FAST)
def aba_plain(Ii, Ff, q, qd, tau):
    """:func:`aba_kernel` with gravity, no external wrenches and the initial charts (the fast path)."""
    return aba_kernel(Ii, Ff, q, qd, tau, initial_jstate(Ii), NO_FEXT, 1.0)
